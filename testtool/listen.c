/*
 * Accepting connections for the devices; see listen.h for the two modes.
 * Accepted sockets are non-blocking and close-on-exec from accept4().
 * Out of descriptors, a worker frees the one it holds in reserve, accepts
 * the waiting connection with it and closes it at once (taking the reserve
 * back in the same step), so the client learns
 * right away that it was refused instead of waiting for a hello that cannot
 * come; without the reserve (another worker took it) the listener pauses
 * briefly instead of spinning on a level-triggered EMFILE.
 */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "device_ctl.h"
#include "group.h"
#include "log.h"
#include "session.h"

struct handoff {
    struct device *dev; /* target device, owned by the receiving worker */
    int fd;             /* accepted connection */
    uint16_t peer_port; /* client port, host order */
};

/* A client's address as text, for logs. */
static char *
peer_text(const struct sockaddr_storage *peer, socklen_t len, char *buf, size_t buf_len)
{
    struct net_endpoint e;

    netaddr_endpoint_set(&e, (const struct sockaddr *)peer, len);
    return netaddr_endpoint_text(&e, 0, buf, buf_len);
}

static void
adopt(struct loop *loop, void *arg)
{
    struct handoff *h = arg;

    (void)loop;
    if (!devact_on_accept(h->dev, h->fd, h->peer_port)) {
        sess_start(h->dev, h->fd);
    }
    free(h);
}

/* Hold a descriptor back for refusing connections at the limit: a copy of the fleet's /dev/null. */
static void
take_spare(struct worker *w)
{
    if (w->spare_fd < 0 && w->fleet->null_fd >= 0) {
        w->spare_fd = fcntl(w->fleet->null_fd, F_DUPFD_CLOEXEC, 0);
    }
}

/* Watch (@p events LOOP_READ) or ignore (0) every listening socket of worker @p w. */
static void
set_accepting(struct fleet *fleet, struct worker *w, uint32_t events)
{
    for (uint32_t k = 0; k < fleet->shared_port_count; k++) {
        loop_set_events(w->loop, w->listen_fds[k], events);
    }
    for (uint32_t i = w->index; i < fleet->cfg.device_count; i += fleet->cfg.threads) {
        if (fleet->devices[i].listen_fd >= 0) {
            loop_set_events(w->loop, fleet->devices[i].listen_fd, events);
        }
    }
}

static void
resume_accepting(struct loop *loop, struct loop_timer *timer)
{
    struct worker *w = (struct worker *)((char *)timer - offsetof(struct worker, accept_pause));
    struct fleet *fleet = w->fleet;

    take_spare(w);
    set_accepting(fleet, w, LOOP_READ);
}

static void
pause_accepting(struct worker *w)
{
    struct fleet *fleet = w->fleet;

    if (loop_timer_armed(&w->accept_pause)) {
        return;
    }
    log_warn("worker %u: out of file descriptors (limit %d); new connections wait %d ms", w->index,
             fleet->max_fds, LISTEN_EMFILE_PAUSE_MS);
    set_accepting(fleet, w, 0);
    loop_timer_start(w->loop, &w->accept_pause, loop_now_us(w->loop) + LISTEN_EMFILE_PAUSE_MS * 1000ull,
                     resume_accepting);
}

/*
 * Out of descriptors: accept one waiting connection with the spare
 * descriptor and close it. Logged at most once a second per worker.
 * @return 1 when a connection was refused (there may be more), 0 when none was waiting (accept4 reports
 *         EMFILE before it looks at the queue), -1 without a spare.
 */
static int
refuse_at_limit(struct worker *w, int lfd)
{
    struct sockaddr_storage peer;
    socklen_t len = sizeof peer;
    struct pollfd waiting = {.fd = lfd, .events = POLLIN};
    monotime_us now;
    int fd;

    if (w->spare_fd < 0) {
        return -1;
    }
    /* accept4 says EMFILE before it looks at the queue; freeing the spare with nothing to refuse would
     * only hand the slot to whichever thread opens a descriptor next. */
    if (poll(&waiting, 1, 0) <= 0 || !(waiting.revents & POLLIN)) {
        return 0;
    }
    close(w->spare_fd);
    w->spare_fd = -1;
    fd = accept4(lfd, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
    if (fd < 0) {
        int none_waiting = errno == EAGAIN || errno == EWOULDBLOCK;
        take_spare(w);
        return none_waiting && w->spare_fd >= 0 ? 0 : -1;
    }
    /* Closing the connection and taking the spare back in one step: a plain close would leave the slot
     * free for a moment, and a connection accepted by another thread could take it for good. */
    if (dup3(w->fleet->null_fd, fd, O_CLOEXEC) < 0) {
        close(fd);
        take_spare(w);
    } else {
        w->spare_fd = fd;
    }
    w->refused[LISTEN_REFUSED_NO_FD]++;
    now = loop_now_us(w->loop);
    if (!w->refused_logged_us || now - w->refused_logged_us >= 1000000) {
        char text[NETADDR_TEXT_BYTES];
        peer_text(&peer, len, text, sizeof text);
        log_warn("worker %u: out of file descriptors (limit %d); connection from %s refused (%llu refused "
                 "so far)",
                 w->index, w->fleet->max_fds, text, (unsigned long long)w->refused[LISTEN_REFUSED_NO_FD]);
        w->refused_logged_us = now;
    }
    return 1;
}

/* With an address per device, the local address and port of the connection name the device. */
static struct device *
device_by_local_addr(struct fleet *fleet, int fd)
{
    struct sockaddr_storage local;
    socklen_t len = sizeof local;
    uint32_t low;
    uint16_t port;

    if (getsockname(fd, (struct sockaddr *)&local, &len) < 0 ||
        netaddr_from_sockaddr(&fleet->cfg.ip_fam, (struct sockaddr *)&local, &low, &port)) {
        return NULL;
    }
    return group_device_at(fleet, low, port, 0);
}

/* Accept what is waiting on @p lfd; @p port_dev is the listener's device, NULL for a shared-port listener. */
static void
accept_ready(struct worker *w, int lfd, struct device *port_dev)
{
    struct fleet *fleet = w->fleet;

    for (int i = 0; i < LISTEN_MAX_ACCEPTS_PER_EVENT; i++) {
        struct sockaddr_storage peer;
        socklen_t len = sizeof peer;
        struct device *dev;
        int one = 1;
        int fd = accept4(lfd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) {
                continue;
            }
            int err = errno;
            if (err == EMFILE || err == ENFILE) {
                int refused = refuse_at_limit(w, lfd);
                if (refused > 0) {
                    continue;
                }
                if (refused == 0) {
                    return; /* the queue is empty; the next connection wakes the loop */
                }
            }
            /* Level-triggered: a resource error would fire again at once, so wait a little instead. */
            if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
                pause_accepting(w);
            }
            return;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        dev = port_dev ? port_dev : device_by_local_addr(fleet, fd);
        if (!dev) {
            char text[NETADDR_TEXT_BYTES];
            peer_text(&peer, len, text, sizeof text);
            log_warn("connection from %s to an address outside the fleet, refused", text);
            w->refused[LISTEN_REFUSED_NOT_FLEET]++;
            close(fd);
            continue;
        }
        struct net_endpoint from;
        netaddr_endpoint_set(&from, (const struct sockaddr *)&peer, len);
        if (dev->worker == w) {
            if (devact_on_accept(dev, fd, netaddr_endpoint_port(&from))) {
                continue;
            }
            sess_start(dev, fd);
            continue;
        }
        {
            struct handoff *h = malloc(sizeof *h);
            if (h) {
                /* Filled before posting: the other worker may run it at once. */
                *h = (struct handoff){.dev = dev, .fd = fd, .peer_port = netaddr_endpoint_port(&from)};
            }
            if (!h || loop_post(dev->worker->loop, adopt, h)) {
                free(h);
                close(fd);
            }
        }
    }
}

static void
on_accept_device(struct loop *loop, int lfd, uint32_t events, void *data)
{
    struct device *dev = data;

    (void)loop;
    (void)events;
    accept_ready(dev->worker, lfd, dev);
}

static void
on_accept_shared(struct loop *loop, int lfd, uint32_t events, void *data)
{
    (void)loop;
    (void)events;
    accept_ready(data, lfd, NULL);
}

/* A listening socket on address @p low of @p fam (the family's wildcard: a family without prefix and low 0).
 */
static int
open_listener(const struct net_family *fam, uint32_t low, uint16_t port, int reuseport, char *err,
              size_t err_len)
{
    struct sockaddr_storage sa;
    socklen_t sa_len = netaddr_sockaddr(fam, low, port, &sa);
    char text[NETADDR_TEXT_BYTES];
    int one = 1;
    int fd = socket(netaddr_af(fam), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        snprintf(err, err_len, "cannot create a socket: %m");
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuseport) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    }
    netaddr_socket_prepare(fd, fam, low);
    if (bind(fd, (struct sockaddr *)&sa, sa_len) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
        netaddr_text(fam, low, text, sizeof text);
        snprintf(err, err_len, "cannot listen on %s port %u: %m", text, (unsigned)port);
        close(fd);
        return -1;
    }
    return fd;
}

/*
 * One socket per worker for the whole address range of the groups on @p port: bound to the wildcard
 * address and, when every such range is in 127.0.0.0/8, to the loopback interface, so that nothing
 * outside the host can reach it; connections to addresses outside the ranges are refused in accept_ready().
 */
static int
open_shared_listener(struct fleet *fleet, uint16_t port, char *err, size_t err_len)
{
    const struct net_family any = {.v6 = fleet->cfg.ip_fam.v6};
    int fd = open_listener(&any, 0, port, 1, err, err_len);
    int loopback = !any.v6; /* an IPv6 prefix made local on lo is reached from elsewhere too */

    for (uint32_t i = 0; i < fleet->group_count; i++) {
        const struct fleet_config *c = &fleet->groups[i].cfg;
        if (c->ip_per_device && c->starting_port == port && (c->ip >> 24) != 127) {
            loopback = 0;
        }
    }
    if (fd >= 0 && loopback) {
        if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3) < 0) {
            log_warn("cannot restrict the shared listener to the loopback interface (%m); connections to "
                     "addresses outside the fleet are refused after accept");
        }
    }
    return fd;
}

/*
 * An IPv6 fleet's addresses must be this host's before anything listens: a client dialling one would
 * otherwise leave for the network. The first and last address of each group stand for its range.
 */
static enum fleet_err
check_local_addresses(const struct fleet *fleet, char *err, size_t err_len)
{
    for (uint32_t i = 0; i < fleet->group_count; i++) {
        const struct fleet_config *c = &fleet->groups[i].cfg;
        uint32_t last = c->ip_per_device ? c->ip + (c->device_count - 1) : c->ip;

        for (int k = 0; k < 2; k++) {
            uint32_t low = k ? last : c->ip;
            struct sockaddr_storage ss;
            char text[NETADDR_TEXT_BYTES], prefix[INET6_ADDRSTRLEN];

            if (netaddr_is_local(&c->ip_fam, low) != 0) {
                continue;
            }
            netaddr_sockaddr(&c->ip_fam, low, 0, &ss);
            memset(((struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr + 8, 0, 8);
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, prefix, sizeof prefix);
            snprintf(err, err_len,
                     "%s is not an address of this host, so clients dialling it would not reach the fleet: "
                     "make the prefix local with `ip -6 route add local %s/64 dev lo` (as root)",
                     netaddr_text(&c->ip_fam, low, text, sizeof text), prefix);
            return FLEET_ERR_INVAL;
        }
    }
    return FLEET_OK;
}

enum fleet_err
listen_open_all(struct fleet *fleet, char *err, size_t err_len)
{
    enum fleet_err rc = check_local_addresses(fleet, err, err_len);

    if (rc) {
        return rc;
    }
    fleet->null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    for (uint32_t i = 0; i < fleet->cfg.threads; i++) {
        take_spare(&fleet->workers[i]);
        if (fleet->workers[i].spare_fd < 0) {
            snprintf(err, err_len, "cannot open /dev/null: %m");
            return FLEET_ERR_SYS;
        }
    }
    for (uint32_t k = 0; k < fleet->shared_port_count; k++) {
        for (uint32_t i = 0; i < fleet->cfg.threads; i++) {
            struct worker *w = &fleet->workers[i];
            w->listen_fds[k] = open_shared_listener(fleet, fleet->shared_ports[k], err, err_len);
            if (w->listen_fds[k] < 0) {
                return FLEET_ERR_SYS;
            }
            if (loop_watch(w->loop, w->listen_fds[k], LOOP_READ, on_accept_shared, w)) {
                snprintf(err, err_len, "cannot watch a listening socket: %m");
                return FLEET_ERR_SYS;
            }
        }
    }
    for (uint32_t i = 0; i < fleet->cfg.device_count; i++) {
        struct device *dev = &fleet->devices[i];
        if (dev->group->cfg.ip_per_device || dev->group->cfg.call_home_port) {
            continue; /* a shared listener, or none: the device dials out (callhome.c) */
        }
        dev->listen_fd = open_listener(&dev->group->cfg.ip_fam, dev->addr, dev->port, 0, err, err_len);
        if (dev->listen_fd < 0) {
            return FLEET_ERR_SYS;
        }
        if (loop_watch(dev->worker->loop, dev->listen_fd, LOOP_READ, on_accept_device, dev)) {
            snprintf(err, err_len, "cannot watch the listening socket of device %u: %m", (unsigned)i);
            return FLEET_ERR_SYS;
        }
    }
    return FLEET_OK;
}

void
listen_close_all(struct fleet *fleet)
{
    if (fleet->null_fd >= 0) {
        close(fleet->null_fd);
        fleet->null_fd = -1;
    }
    for (uint32_t i = 0; fleet->workers && i < fleet->cfg.threads; i++) {
        struct worker *w = &fleet->workers[i];
        if (w->spare_fd >= 0) {
            close(w->spare_fd);
            w->spare_fd = -1;
        }
        for (uint32_t k = 0; k < FLEET_MAX_SHARED_PORTS; k++) {
            if (w->listen_fds[k] >= 0) {
                if (w->loop) {
                    loop_unwatch(w->loop, w->listen_fds[k]);
                }
                close(w->listen_fds[k]);
                w->listen_fds[k] = -1;
            }
        }
    }
    for (uint32_t i = 0; fleet->devices && i < fleet->cfg.device_count; i++) {
        struct device *dev = &fleet->devices[i];
        if (dev->listen_fd >= 0) {
            if (dev->worker && dev->worker->loop) {
                loop_unwatch(dev->worker->loop, dev->listen_fd);
            }
            close(dev->listen_fd);
            dev->listen_fd = -1;
        }
    }
}
