// epoll(7) and eventfd(2), which the Swift toolchain's Glibc module does not export.
#ifndef TOKEN_BROKER_CEPOLL_H
#define TOKEN_BROKER_CEPOLL_H

#include <sys/epoll.h>
#include <sys/eventfd.h>

#endif
