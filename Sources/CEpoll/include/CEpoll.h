// epoll(7), which the Swift toolchain's Glibc module does not export.
#ifndef TOKEN_BROKER_CEPOLL_H
#define TOKEN_BROKER_CEPOLL_H

#include <sys/epoll.h>

#endif
