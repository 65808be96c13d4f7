// The target exports <sys/epoll.h> and <sys/eventfd.h> to Swift (see include/CEpoll.h), and names threads.
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>

#include "CEpoll.h"

int cepoll_name_thread(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
}
