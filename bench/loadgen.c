/* bench/loadgen.c: a small HTTP/1.1 load generator for server-against-server comparisons, built by
 * the bench scripts with `cc -O2` (decision 041, round 10). One thread, one epoll set, N keep-alive
 * connections, each with one request in flight: the same GET again as soon as its answer is in.
 * An answer is framed by its Content-Length alone (no chunked bodies: an answer without the field
 * is an error and its connection is closed); its head is read for the status and that one field
 * only, so the client's cost per answer hardly depends on how many other fields the server sends.
 * At the end of the run no new request is sent and the answers in flight are waited for (at most
 * a second), so `answers` is exactly what the server answered and logged.
 *
 * Usage: loadgen -c CONNECTIONS -d SECONDS http://HOST:PORT/PATH
 * Prints, in the lines bench/rounds.sh reads from wrk's report:
 *     Latency percentiles: p50 ..., p90 ..., 99% <p99>ms ...
 *     <answers> requests in <seconds>s, <bytes> read
 *     Non-2xx or 3xx responses: <n>   (only when any: every non-2xx answer is an error)
 *     Socket errors: connect <n>, read <n>, write <n>, framing <n>
 *     Requests/sec: <answers per second>
 * Exit status 1 when any answer was not 2xx or any error happened. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { HEAD_MAX = 16384, SCRATCH = 262144, SUB = 64, MAGNITUDES = 40 };

struct conn {
    int fd;
    int connected;       /* the connect finished */
    int busy;            /* a request is in flight (written, or being written) */
    size_t sent;         /* bytes of the request written (a short write waits for EPOLLOUT) */
    size_t head_len;     /* bytes of an unfinished head kept in head[] */
    int64_t body_left;   /* -1: reading the head; else body bytes still to come */
    int status;
    uint64_t started_ns; /* when the request was written */
    char head[HEAD_MAX];
};

static struct sockaddr_storage address;
static socklen_t address_len;
static char request[4096];
static size_t request_len;
static int epoll_fd;
/* Latency histogram: log-linear, SUB buckets per power of two of nanoseconds (1.6 % wide). */
static uint64_t histogram[MAGNITUDES * SUB];
static uint64_t answers, bytes_read, non_2xx, connect_errors, read_errors, write_errors, framing_errors;
static int stopping;
static long in_flight;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void record(uint64_t ns) {
    if (ns < SUB) {
        histogram[ns]++;
        return;
    }
    int magnitude = 63 - __builtin_clzll(ns); /* ns in [2^m, 2^(m+1)) */
    int shift = magnitude - 6;                /* SUB = 2^6 sub-buckets */
    int index = (magnitude - 5) * SUB + (int)((ns >> shift) - SUB);
    if (index >= MAGNITUDES * SUB) index = MAGNITUDES * SUB - 1;
    histogram[index]++;
}

/* The upper bound of a bucket, in nanoseconds (the inverse of record). */
static double bucket_ns(int index) {
    if (index < SUB) return index + 1;
    int magnitude = index / SUB + 5, sub = index % SUB;
    return (double)((uint64_t)(SUB + sub + 1) << (magnitude - 6));
}

static double percentile_ms(double p) {
    uint64_t total = 0, seen = 0;
    for (int i = 0; i < MAGNITUDES * SUB; i++) total += histogram[i];
    if (total == 0) return 0;
    uint64_t rank = (uint64_t)(p / 100.0 * (double)total + 0.5);
    if (rank < 1) rank = 1;
    for (int i = 0; i < MAGNITUDES * SUB; i++) {
        seen += histogram[i];
        if (seen >= rank) return bucket_ns(i) / 1e6;
    }
    return 0;
}

static void open_connection(struct conn *c);

static void close_connection(struct conn *c) {
    if (c->fd >= 0) close(c->fd); /* closing removes it from the epoll set */
    c->fd = -1;
    if (c->busy) in_flight--;
    c->busy = 0;
    c->connected = 0;
    c->sent = 0;
}

/* A failed connection: counted, closed, and (before the end) opened again. */
static void fail(struct conn *c, uint64_t *counter) {
    (*counter)++;
    close_connection(c);
    if (!stopping) open_connection(c);
}

static void send_request(struct conn *c) {
    if (!c->busy) {
        c->busy = 1;
        c->sent = 0;
        c->started_ns = now_ns();
        c->head_len = 0;
        c->body_left = -1;
        in_flight++;
    }
    while (c->sent < request_len) {
        ssize_t n = send(c->fd, request + c->sent, request_len - c->sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct epoll_event e = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
                epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &e);
                return;
            }
            if (errno == EINTR) continue;
            fail(c, &write_errors);
            return;
        }
        c->sent += (size_t)n;
    }
}

static void open_connection(struct conn *c) {
    c->fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        perror("loadgen: socket");
        exit(2);
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->connected = 0;
    c->busy = 0;
    c->sent = 0;
    if (connect(c->fd, (struct sockaddr *)&address, address_len) < 0 && errno != EINPROGRESS) {
        connect_errors++;
        close(c->fd);
        c->fd = -1;
        return;
    }
    struct epoll_event e = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c->fd, &e);
}

/* One pass over a head's lines (memchr from line to line, so the cost is per field, hardly per
 * byte): the head's length once its blank line is in (0 while it is not, -1 when it is not an
 * HTTP/1.x answer with a Content-Length), its status and its Content-Length. */
static ssize_t scan_head(const char *head, size_t len, int *status, int64_t *length) {
    if (len < 12) return memchr(head, '\n', len) ? -1 : 0;
    if (memcmp(head, "HTTP/1.", 7) != 0 || head[8] != ' ') return -1;
    *status = (head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0');
    *length = -1;
    const char *end = head + len, *line = memchr(head, '\n', len);
    while (line && ++line < end) { /* line: the first byte of the next line */
        if (line[0] == '\r' || line[0] == '\n') {
            const char *last = line[0] == '\r' ? line + 1 : line;
            if (last >= end) return 0;
            if (*last != '\n' || *length < 0) return -1;
            return last + 1 - head;
        }
        if ((line[0] | 0x20) == 'c' && end - line > 15 && strncasecmp(line, "content-length:", 15) == 0) {
            const char *p = line + 15;
            while (p < end && (*p == ' ' || *p == '\t')) p++;
            if (p < end && (*p < '0' || *p > '9')) return -1;
            int64_t value = 0;
            while (p < end && *p >= '0' && *p <= '9' && value < ((int64_t)1 << 50)) value = value * 10 + (*p++ - '0');
            *length = value;
        }
        line = memchr(line, '\n', (size_t)(end - line));
    }
    return 0;
}

/* One answer complete: counted, and the next request sent (or, at the end, the connection closed). */
static void answered(struct conn *c) {
    record(now_ns() - c->started_ns);
    answers++;
    if (c->status < 200 || c->status > 299) non_2xx++;
    c->busy = 0;
    c->sent = 0;
    in_flight--;
    if (stopping) {
        close(c->fd);
        c->fd = -1;
        c->connected = 0;
    } else {
        send_request(c);
    }
}

/* Bytes read on a connection with a request in flight: the head (kept across reads until its blank
 * line), then the body counted down. A byte after the answer (none was asked for) is an error. */
static void consume(struct conn *c, const char *data, size_t n) {
    while (n > 0) {
        if (c->body_left < 0) {
            size_t take = n;
            const char *start = data;
            if (c->head_len > 0) {
                /* A head split across reads: gather it. */
                if (c->head_len + n > HEAD_MAX) take = HEAD_MAX - c->head_len;
                memcpy(c->head + c->head_len, data, take);
                start = c->head;
                take += c->head_len;
            }
            int64_t length;
            ssize_t head_bytes = scan_head(start, take, &c->status, &length);
            if (head_bytes < 0) { fail(c, &framing_errors); return; }
            if (head_bytes == 0) {
                if (c->head_len == 0) {
                    if (n > HEAD_MAX) { fail(c, &framing_errors); return; }
                    memcpy(c->head, data, n);
                }
                c->head_len = take;
                if (c->head_len >= HEAD_MAX) { fail(c, &framing_errors); return; }
                return;
            }
            size_t used = (size_t)head_bytes - c->head_len; /* of this read's bytes */
            c->head_len = 0;
            data += used;
            n -= used;
            c->body_left = length;
        }
        size_t take = (int64_t)n < c->body_left ? n : (size_t)c->body_left;
        c->body_left -= (int64_t)take;
        data += take;
        n -= take;
        if (c->body_left == 0) {
            if (n > 0) { fail(c, &framing_errors); return; }
            answered(c);
            return;
        }
    }
}

static void usage(void) {
    fprintf(stderr, "usage: loadgen -c CONNECTIONS -d SECONDS http://HOST:PORT/PATH\n");
    exit(2);
}

int main(int argc, char **argv) {
    int connections = 64;
    double seconds = 4;
    int opt;
    while ((opt = getopt(argc, argv, "c:d:")) != -1) {
        if (opt == 'c') connections = atoi(optarg);
        else if (opt == 'd') seconds = atof(optarg);
        else usage();
    }
    if (optind != argc - 1 || connections < 1 || seconds <= 0) usage();
    const char *url = argv[optind];
    if (strncmp(url, "http://", 7) != 0) usage();
    const char *host_start = url + 7, *path = strchr(host_start, '/');
    size_t authority = path ? (size_t)(path - host_start) : strlen(host_start);
    if (!path) path = "/";
    char host[256], port[16] = "80";
    if (authority == 0 || authority >= sizeof host) usage();
    memcpy(host, host_start, authority);
    host[authority] = 0;
    char authority_text[256];
    memcpy(authority_text, host, authority + 1);
    char *colon = strrchr(host, ':');
    if (colon) {
        snprintf(port, sizeof port, "%s", colon + 1);
        *colon = 0;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *found;
    if (getaddrinfo(host, port, &hints, &found) != 0) {
        fprintf(stderr, "loadgen: cannot resolve %s\n", host);
        return 2;
    }
    memcpy(&address, found->ai_addr, found->ai_addrlen);
    address_len = found->ai_addrlen;
    freeaddrinfo(found);
    int written = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, authority_text);
    if (written <= 0 || (size_t)written >= sizeof request) usage();
    request_len = (size_t)written;

    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    struct conn *conns = calloc((size_t)connections, sizeof *conns);
    static char scratch[SCRATCH];
    struct epoll_event events[512];
    uint64_t start = now_ns(), deadline = start + (uint64_t)(seconds * 1e9), drain_end = 0, end = start;
    for (int i = 0; i < connections; i++) open_connection(&conns[i]);
    for (;;) {
        uint64_t now = now_ns();
        if (!stopping && now >= deadline) {
            stopping = 1; /* no new request; the ones in flight are waited for, up to a second */
            drain_end = now + 1000000000u;
            for (int i = 0; i < connections; i++)
                if (conns[i].fd >= 0 && !conns[i].busy) close_connection(&conns[i]);
        }
        if (stopping && (in_flight <= 0 || now >= drain_end)) break;
        uint64_t until = stopping ? drain_end : deadline;
        int timeout = (int)((until - now) / 1000000u) + 1;
        int ready = epoll_wait(epoll_fd, events, 512, timeout);
        if (ready < 0 && errno != EINTR) {
            perror("loadgen: epoll_wait");
            return 2;
        }
        for (int i = 0; i < ready; i++) {
            struct conn *c = events[i].data.ptr;
            if (c->fd < 0) continue;
            if (!c->connected) {
                int error = 0;
                socklen_t size = sizeof error;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &size);
                if (error != 0 || (events[i].events & (EPOLLERR | EPOLLHUP))) {
                    close_connection(c);
                    connect_errors++;
                    if (!stopping) open_connection(c);
                    continue;
                }
                c->connected = 1;
                struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
                epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &e);
                if (!stopping) send_request(c);
                continue;
            }
            if ((events[i].events & EPOLLOUT) && c->busy && c->sent < request_len) {
                send_request(c);
                if (c->fd >= 0 && c->sent == request_len) {
                    struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
                    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &e);
                }
                if (c->fd < 0) continue;
            }
            if (!(events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) continue;
            ssize_t n = recv(c->fd, scratch, sizeof scratch, 0);
            if (n > 0) {
                bytes_read += (uint64_t)n;
                if (!c->busy) fail(c, &framing_errors); /* bytes nobody asked for */
                else consume(c, scratch, (size_t)n);
            } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                fail(c, &read_errors); /* closed by the server or reset */
            }
        }
        end = now_ns();
    }
    for (int i = 0; i < connections; i++) close_connection(&conns[i]);
    double elapsed = (double)(end - start) / 1e9;
    printf("  Latency percentiles: p50 %.3fms, p90 %.3fms, p99 %.3fms, max<= %.3fms\n", percentile_ms(50),
           percentile_ms(90), percentile_ms(99), percentile_ms(100));
    printf("     99%%    %.3fms\n", percentile_ms(99));
    printf("  %llu requests in %.2fs, %.2fMB read\n", (unsigned long long)answers, elapsed, bytes_read / 1048576.0);
    if (non_2xx) printf("  Non-2xx or 3xx responses: %llu\n", (unsigned long long)non_2xx);
    if (connect_errors + read_errors + write_errors + framing_errors || in_flight > 0)
        printf("  Socket errors: connect %llu, read %llu, write %llu, framing %llu, unanswered %ld\n",
               (unsigned long long)connect_errors, (unsigned long long)read_errors, (unsigned long long)write_errors,
               (unsigned long long)framing_errors, in_flight > 0 ? in_flight : 0);
    printf("Requests/sec: %.2f\n", elapsed > 0 ? answers / elapsed : 0);
    return (non_2xx || connect_errors || read_errors || write_errors || framing_errors || in_flight > 0) ? 1 : 0;
}
