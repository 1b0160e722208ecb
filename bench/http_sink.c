/*
 * bench_http_sink: an HTTP/1.1 server that answers every request at once
 * with "204 No Content", for bench/restconf_cost.py. One thread, epoll,
 * keep-alive; it reads headers and a Content-Length body and writes the
 * answers of everything one read delivered in one write, so that the
 * client under test, not this server, is what runs out of CPU. It prints
 * "listening PORT" once bound, and at SIGTERM or SIGINT "requests N" and
 * exits. Not a test and not a real server: no chunked bodies, no limits.
 *
 *   bench_http_sink PORT   (0: any free port)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define SINK_BUF_BYTES  (256u * 1024u) /* per connection: the unparsed rest of what arrived */
#define SINK_MAX_EVENTS 256            /* epoll_wait batch */

static const char answer[] = "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n";

struct sink_conn {
    int fd;           /* the connection */
    size_t len;       /* bytes in buf */
    char *buf;        /* what arrived and was not answered yet, SINK_BUF_BYTES */
    size_t need_body; /* body bytes of the current request still to skip */
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* Answer every complete request in @p c; @return how many. */
static unsigned long
serve(struct sink_conn *c, char *out, size_t out_cap, size_t *out_len)
{
    unsigned long n = 0;
    size_t at = 0;

    for (;;) {
        char *end;
        char *cl;
        if (c->need_body) {
            size_t take = c->len - at < c->need_body ? c->len - at : c->need_body;
            at += take;
            c->need_body -= take;
            if (c->need_body) {
                break;
            }
            if (*out_len + sizeof answer - 1 <= out_cap) {
                memcpy(out + *out_len, answer, sizeof answer - 1);
                *out_len += sizeof answer - 1;
            }
            n++;
            continue;
        }
        c->buf[c->len] = '\0';
        end = strstr(c->buf + at, "\r\n\r\n");
        if (!end) {
            break;
        }
        *end = '\0';
        cl = strcasestr(c->buf + at, "\r\ncontent-length:");
        c->need_body = cl ? strtoul(cl + 17, NULL, 10) : 0;
        at = (size_t)(end - c->buf) + 4;
        if (!c->need_body) {
            if (*out_len + sizeof answer - 1 <= out_cap) {
                memcpy(out + *out_len, answer, sizeof answer - 1);
                *out_len += sizeof answer - 1;
            }
            n++;
        }
    }
    memmove(c->buf, c->buf + at, c->len - at);
    c->len -= at;
    return n;
}

int
main(int argc, char **argv)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    struct epoll_event evs[SINK_MAX_EVENTS];
    static char out[SINK_BUF_BYTES];
    unsigned long requests = 0;
    int one = 1;
    int lfd;
    int ep;

    if (argc != 2) {
        fprintf(stderr, "usage: bench_http_sink PORT\n");
        return 2;
    }
    sa.sin_port = htons((unsigned short)atoi(argv[1]));
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) || listen(lfd, 4096) ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl)) {
        perror("bench_http_sink: listen");
        return 1;
    }
    printf("listening %u\n", (unsigned)ntohs(sa.sin_port));
    fflush(stdout);
    ep = epoll_create1(0);
    {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    }
    while (!stop) {
        int n = epoll_wait(ep, evs, SINK_MAX_EVENTS, 200);
        for (int i = 0; i < n; i++) {
            struct sink_conn *c = evs[i].data.ptr;
            if (!c) {
                int fd;
                while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    struct epoll_event ev = {.events = EPOLLIN};
                    c = calloc(1, sizeof *c);
                    c->fd = fd;
                    c->buf = malloc(SINK_BUF_BYTES + 1);
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    ev.data.ptr = c;
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
                }
                continue;
            }
            for (;;) {
                ssize_t r = read(c->fd, c->buf + c->len, SINK_BUF_BYTES - c->len);
                size_t out_len = 0;
                if (r <= 0) {
                    if (r < 0 && errno == EAGAIN) {
                        break;
                    }
                    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                    close(c->fd);
                    free(c->buf);
                    free(c);
                    break;
                }
                c->len += (size_t)r;
                requests += serve(c, out, sizeof out, &out_len);
                if (out_len && write(c->fd, out, out_len) < 0) {
                    /* the peer went away: its read sees it */
                }
                if (c->len == SINK_BUF_BYTES) {
                    c->len = 0; /* a header larger than the buffer: dropped */
                }
            }
        }
    }
    printf("requests %lu\n", requests);
    return 0;
}
