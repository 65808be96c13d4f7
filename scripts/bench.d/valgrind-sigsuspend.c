/* LD_PRELOAD for running token-broker under valgrind 3.19 (Debian 12): libdispatch's main thread waits in
 * sigsuspend() with a mask in read-only memory, and valgrind's wrapper edits the mask in place, so valgrind dies
 * with an internal SIGSEGV at start. This sigsuspend passes a writable copy; the mask is the same. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
