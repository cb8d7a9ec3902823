#define _GNU_SOURCE
#include "linux_shim.h"
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>

int galleryd_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int galleryd_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &event);
}

int galleryd_epoll_wait(int epfd, void *events, int capacity, int timeout_ms) {
    return epoll_wait(epfd, (struct epoll_event *)events, capacity, timeout_ms);
}

unsigned long galleryd_epoll_event_size(void) { return sizeof(struct epoll_event); }

uint32_t galleryd_epoll_event_mask(const void *events, int i) {
    return ((const struct epoll_event *)events)[i].events;
}

uint64_t galleryd_epoll_event_token(const void *events, int i) {
    return ((const struct epoll_event *)events)[i].data.u64;
}

int galleryd_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int galleryd_accept4(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

const int galleryd_epoll_ctl_add = EPOLL_CTL_ADD;
const int galleryd_epoll_ctl_del = EPOLL_CTL_DEL;
const uint32_t galleryd_epollin = EPOLLIN;
const uint32_t galleryd_epollout = EPOLLOUT;
const uint32_t galleryd_epollerr = EPOLLERR;
const uint32_t galleryd_epollhup = EPOLLHUP;
const uint32_t galleryd_epollrdhup = EPOLLRDHUP;
const uint32_t galleryd_epollexclusive = EPOLLEXCLUSIVE;
const uint32_t galleryd_epollet = EPOLLET;
#endif
