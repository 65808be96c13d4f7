// epoll(7) and eventfd(2), which the Swift toolchain's Glibc module does not export, and a thread's name.
#ifndef TOKEN_BROKER_CEPOLL_H
#define TOKEN_BROKER_CEPOLL_H

#include <sys/epoll.h>
#include <sys/eventfd.h>

/// Names the calling thread (at most 15 bytes are kept), as perf, top -H and /proc/PID/task/TID/comm show it:
/// pthread_setname_np needs _GNU_SOURCE, which Swift's Glibc module is not built with.
int cepoll_name_thread(const char *name);

#endif
