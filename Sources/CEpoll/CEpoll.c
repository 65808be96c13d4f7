// Nothing to compile: the target exists to export <sys/epoll.h> and <sys/eventfd.h> to Swift (see include/CEpoll.h).
#include "CEpoll.h"
