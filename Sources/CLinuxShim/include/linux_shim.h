#ifndef GALLERYD_LINUX_SHIM_H
#define GALLERYD_LINUX_SHIM_H
/* epoll(7), eventfd(2) and accept4(2), which Swift's Glibc module does not export. Only plain
   prototypes here (no _GNU_SOURCE, so the header agrees with Glibc's module); the definitions,
   which keep struct epoll_event's packed x86-64 layout in C, are in linux_shim.c. */
#include <stdint.h>
#include <sys/socket.h>

int galleryd_epoll_create(void);
int galleryd_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token);
int galleryd_epoll_wait(int epfd, void *events, int capacity, int timeout_ms);
unsigned long galleryd_epoll_event_size(void);
uint32_t galleryd_epoll_event_mask(const void *events, int i);
uint64_t galleryd_epoll_event_token(const void *events, int i);
int galleryd_eventfd(void);
int galleryd_accept4(int fd, struct sockaddr *address, socklen_t *length);

extern const int galleryd_epoll_ctl_add;
extern const int galleryd_epoll_ctl_del;
extern const uint32_t galleryd_epollin;
extern const uint32_t galleryd_epollout;
extern const uint32_t galleryd_epollerr;
extern const uint32_t galleryd_epollhup;
extern const uint32_t galleryd_epollrdhup;
extern const uint32_t galleryd_epollexclusive;
extern const uint32_t galleryd_epollet;
#endif
