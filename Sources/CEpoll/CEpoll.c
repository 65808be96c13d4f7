// Nothing to compile: the target exists to export <sys/epoll.h> to Swift (see include/CEpoll.h).
#include "CEpoll.h"
