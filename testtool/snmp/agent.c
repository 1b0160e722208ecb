/*
 * SNMP sockets and the path of a datagram: read in a batch, find the
 * device, maybe drop or delay it (fault and latency injection, drawn from
 * the device's seed so runs repeat), answer it (respond.c), send the
 * batch's answers together.
 */
#include "agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "device.h"
#include "device_ctl.h"
#include "devview.h"
#include "group.h"
#include "log.h"
#include "respond.h"
#include "spdu.h"
#include "textarg.h"
#include "trap.h"

/* An answer held back by injected latency. */
struct agent_delayed {
    struct loop_timer timer;           /* fires when the answer is due */
    struct agent_delayed *prev, *next; /* the worker's list, so close can free what never fired */
    struct worker *worker;             /* owner */
    int fd;                            /* socket to answer from */
    union netaddr_sa peer;             /* who asked */
    uint32_t src_low;                  /* address to answer from (low 32 bits, the fleet's family) */
    uint8_t has_src;                   /* 0: the socket's address, src_low unused */
    size_t len;                        /* bytes in data */
    uint8_t data[];                    /* the answer */
};

/* A datagram that reached another worker's socket, handed to its device's worker. */
struct agent_handoff {
    struct device *dev;    /* the device asked */
    int slot;              /* which shared port it came in on (fleet->snmp_shared_ports) */
    union netaddr_sa peer; /* who asked */
    uint32_t dst_low;      /* address it was sent to (low 32 bits, the fleet's family) */
    size_t len;            /* bytes in data */
    uint8_t data[];        /* the request */
};

/* An answer ready to go out in this batch. */
struct agent_out {
    int fd;                /* the socket it leaves from */
    union netaddr_sa peer; /* to whom */
    uint32_t src_low;      /* from which address (low 32 bits), when has_src */
    uint8_t has_src;       /* 0: the socket's address */
    uint8_t *data;         /* the answer, in the worker's out_bufs */
    size_t len;            /* bytes at data */
};

struct agent_batch {
    struct agent_out out[AGENT_BATCH];
    uint32_t count;
    const struct net_family *fam; /* the fleet's addresses: what src_low completes */
};

static void agent_adopt(struct loop *loop, void *arg);

static double
unit_draw(uint64_t h)
{
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

/* The fault a device has, or NULL. */
static const struct agent_fault *
device_fault(const struct device *dev)
{
    const struct fleet_config *cfg = &dev->group->cfg;
    double u = unit_draw(dyn_hash(devview_seed(dev), 0xfa17, 0)), cum = 0;

    for (uint32_t i = 0; i < cfg->snmp_fault_count; i++) {
        cum += cfg->snmp_faults[i].share;
        if (u < cum) {
            return &cfg->snmp_faults[i];
        }
    }
    return NULL;
}

static void
send_one(int fd, const struct net_family *fam, const struct agent_delayed *d)
{
    struct iovec iov = {.iov_base = (void *)d->data, .iov_len = d->len};
    union {
        char buf[NETADDR_PKTINFO_BYTES];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = {.msg_name = (void *)&d->peer,
                        .msg_namelen = netaddr_sa_len(&d->peer.sa),
                        .msg_iov = &iov,
                        .msg_iovlen = 1};

    if (d->has_src) {
        netaddr_msg_source(&mh, ctl.buf, fam, d->src_low);
    }
    /* UDP: a full socket buffer drops the answer, as a busy agent would; the client retries. */
    (void)sendmsg(fd, &mh, MSG_DONTWAIT);
}

static void
flush_batch(struct agent_batch *b)
{
    struct mmsghdr msgs[AGENT_BATCH];
    struct iovec iov[AGENT_BATCH];
    union {
        char buf[NETADDR_PKTINFO_BYTES];
        struct cmsghdr align;
    } ctl[AGENT_BATCH];
    uint32_t i = 0;

    while (i < b->count) {
        /* One sendmmsg per run of answers from the same socket. */
        uint32_t n = 0;
        int fd = b->out[i].fd;
        memset(msgs, 0, sizeof msgs);
        for (; i < b->count && b->out[i].fd == fd; i++, n++) {
            struct agent_out *o = &b->out[i];
            iov[n] = (struct iovec){.iov_base = o->data, .iov_len = o->len};
            msgs[n].msg_hdr.msg_name = &o->peer;
            msgs[n].msg_hdr.msg_namelen = netaddr_sa_len(&o->peer.sa);
            msgs[n].msg_hdr.msg_iov = &iov[n];
            msgs[n].msg_hdr.msg_iovlen = 1;
            if (o->has_src) {
                netaddr_msg_source(&msgs[n].msg_hdr, ctl[n].buf, b->fam, o->src_low);
            }
        }
        for (uint32_t sent = 0; sent < n;) {
            int r = sendmmsg(fd, msgs + sent, n - sent, MSG_DONTWAIT);
            if (r <= 0) {
                break; /* full socket buffer: the rest are dropped, as a busy agent's would be */
            }
            sent += (uint32_t)r;
        }
    }
    b->count = 0;
}

static void
on_delayed(struct loop *loop, struct loop_timer *timer)
{
    struct agent_delayed *d = (struct agent_delayed *)((char *)timer - offsetof(struct agent_delayed, timer));
    struct agent_worker *aw = &d->worker->snmp;

    (void)loop;
    send_one(d->fd, &d->worker->fleet->cfg.ip_fam, d);
    if (d->prev) {
        d->prev->next = d->next;
    } else {
        aw->delayed = d->next;
    }
    if (d->next) {
        d->next->prev = d->prev;
    }
    free(d);
}

/* Hold an answer for @p delay_ms; when memory runs out it goes now instead. */
static int
delay_answer(struct worker *w, int fd, const union netaddr_sa *peer, const uint32_t *src_low,
             const uint8_t *data, size_t len, uint32_t delay_ms)
{
    struct agent_delayed *d = malloc(sizeof *d + len);

    if (!d) {
        return -1;
    }
    loop_timer_init(&d->timer);
    d->worker = w;
    d->fd = fd;
    d->peer = *peer;
    d->has_src = src_low != NULL;
    d->src_low = src_low ? *src_low : 0;
    d->len = len;
    memcpy(d->data, data, len);
    d->prev = NULL;
    d->next = w->snmp.delayed;
    if (d->next) {
        d->next->prev = d;
    }
    w->snmp.delayed = d;
    loop_timer_start(w->loop, &d->timer, loop_now_us(w->loop) + (monotime_us)delay_ms * 1000, on_delayed);
    return 0;
}

/* Answer one request for @p dev; the answer joins @p batch or waits on a timer. */
static void
handle_request(struct worker *w, struct device *dev, int fd, const union netaddr_sa *peer,
               const uint32_t *dst_low, uint8_t *req, size_t len, struct agent_batch *batch)
{
    const struct fleet_config *cfg = &dev->group->cfg;
    struct agent_worker *aw = &w->snmp;
    const struct agent_fault *fault = cfg->snmp_fault_count ? device_fault(dev) : NULL;
    uint64_t draw = dyn_hash(devview_seed(dev), ++aw->reply_seq, 0x1a7e);
    uint32_t delay_ms = 0;
    uint8_t *reply = NULL;
    size_t reply_len;

    if (fault && fault->kind == AGENT_FAULT_TIMEOUT) {
        dev->snmp_stats.in_pkts++;
        dev->snmp_stats.injected_drops++;
        return;
    }
    if (devact_snmp_silent(dev)) {
        dev->snmp_stats.in_pkts++;
        dev->snmp_stats.injected_drops++; /* down or rebooting (control API) */
        return;
    }
    if (dev->ctl && dev->ctl->has_drop_rate
            ? unit_draw(draw) < dev->ctl->drop_rate
            : cfg->snmp_drop_rate > 0 && unit_draw(draw) < cfg->snmp_drop_rate) {
        dev->snmp_stats.in_pkts++;
        dev->snmp_stats.injected_drops++;
        return;
    }
    if (batch->count == AGENT_BATCH) {
        flush_batch(batch);
    }
    reply_len =
        respond(dev, aw->scratch, req, len, peer, aw->out_bufs + (size_t)batch->count * aw->out_cap,
                aw->out_cap, fault && fault->kind == AGENT_FAULT_ERROR ? fault->error_status : 0, &reply);
    if (!reply_len) {
        return;
    }
    if (dev->ctl && dev->ctl->has_snmp_latency) {
        uint32_t span = dev->ctl->snmp_max_ms - dev->ctl->snmp_min_ms + 1;
        delay_ms = dev->ctl->snmp_min_ms + (uint32_t)((draw >> 7) % span);
    } else if (cfg->snmp_latency_max_ms) {
        uint32_t span = cfg->snmp_latency_max_ms - cfg->snmp_latency_min_ms + 1;
        delay_ms = cfg->snmp_latency_min_ms + (uint32_t)((draw >> 7) % span);
    }
    if (fault && fault->kind == AGENT_FAULT_DELAY) {
        delay_ms += fault->delay_ms;
    }
    if (delay_ms && !delay_answer(w, fd, peer, dst_low, reply, reply_len, delay_ms)) {
        return;
    }
    batch->out[batch->count++] = (struct agent_out){.fd = fd,
                                                    .peer = *peer,
                                                    .src_low = dst_low ? *dst_low : 0,
                                                    .has_src = dst_low != NULL,
                                                    .data = reply,
                                                    .len = reply_len};
}

/* Read up to a batch from @p fd; with @p shared, learn each datagram's destination address. */
static void
read_batch(struct worker *w, int fd, int slot, struct device *own_dev)
{
    struct agent_worker *aw = &w->snmp;
    struct fleet *fleet = w->fleet;
    struct mmsghdr msgs[AGENT_BATCH];
    struct iovec iov[AGENT_BATCH];
    union netaddr_sa peers[AGENT_BATCH];
    union {
        char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
        struct cmsghdr align;
    } ctl[AGENT_BATCH];
    struct agent_batch batch;
    int n;

    batch.count = 0;
    batch.fam = &fleet->cfg.ip_fam;
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < AGENT_BATCH; i++) {
        iov[i] = (struct iovec){.iov_base = aw->in_bufs + (size_t)i * AGENT_MAX_REQUEST_BYTES,
                                .iov_len = AGENT_MAX_REQUEST_BYTES};
        msgs[i].msg_hdr.msg_name = &peers[i];
        msgs[i].msg_hdr.msg_namelen = sizeof peers[i];
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        if (!own_dev) {
            msgs[i].msg_hdr.msg_control = ctl[i].buf;
            msgs[i].msg_hdr.msg_controllen = sizeof ctl[i].buf;
        }
    }
    n = recvmmsg(fd, msgs, AGENT_BATCH, MSG_DONTWAIT, NULL);
    for (int i = 0; i < n; i++) {
        struct device *dev = own_dev;
        uint32_t dst = 0;
        uint8_t *data = iov[i].iov_base;
        size_t len = msgs[i].msg_len;
        if (!own_dev) {
            dev = !netaddr_msg_destination(&msgs[i].msg_hdr, &fleet->cfg.ip_fam, &dst)
                      ? group_device_at(fleet, dst, fleet->snmp_shared_ports[slot], 1)
                      : NULL;
            if (!dev) {
                continue; /* not one of ours (the socket is bound to the wildcard address) */
            }
            if (dev->worker != w) {
                /* The steering program was not attached or was bypassed: hand it over. */
                struct agent_handoff *h = malloc(sizeof *h + len);
                if (h) {
                    h->dev = dev;
                    h->slot = slot;
                    h->peer = peers[i];
                    h->dst_low = dst;
                    h->len = len;
                    memcpy(h->data, data, len);
                    if (loop_post(dev->worker->loop, agent_adopt, h)) {
                        free(h);
                    }
                }
                continue;
            }
        }
        if (own_dev && w->traps && trap_sender_take_response(w->traps, data, len, &peers[i].sa)) {
            continue; /* a collector's Response to an inform this device sent from its agent socket */
        }
        if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
            dev->snmp_stats.in_pkts++;
            dev->snmp_stats.in_asn_parse_errs++;
            continue;
        }
        handle_request(w, dev, fd, &peers[i], own_dev ? NULL : &dst, data, len, &batch);
    }
    flush_batch(&batch);
}

static void
agent_adopt(struct loop *loop, void *arg)
{
    struct agent_handoff *h = arg;
    struct worker *w = h->dev->worker;
    struct agent_batch batch = {.count = 0, .fam = &w->fleet->cfg.ip_fam};

    (void)loop;
    if (w->snmp.fds[h->slot] >= 0) {
        handle_request(w, h->dev, w->snmp.fds[h->slot], &h->peer, &h->dst_low, h->data, h->len, &batch);
        flush_batch(&batch);
    }
    free(h);
}

static void
on_device_readable(struct loop *loop, int fd, uint32_t events, void *data)
{
    struct device *dev = data;
    (void)loop;
    (void)events;
    read_batch(dev->worker, fd, 0, dev);
}

static void
on_shared_readable(struct loop *loop, int fd, uint32_t events, void *data)
{
    struct worker *w = data;

    (void)loop;
    (void)events;
    for (int slot = 0; slot < FLEET_MAX_SHARED_PORTS; slot++) {
        if (w->snmp.fds[slot] == fd) {
            read_batch(w, fd, slot, NULL);
            return;
        }
    }
}

/*
 * @p shared: one of the workers' sockets on the shared port (SO_REUSEPORT, IP_PKTINFO); @p loopback_only
 * restricts it to the lo interface. SO_BINDTODEVICE must come before bind: set on a bound socket it
 * rehashes the socket out of its SO_REUSEPORT group, and the steering program is then refused (EINVAL).
 */
static int
open_udp(const struct net_family *fam, uint32_t low, uint16_t port, int shared, int loopback_only, char *err,
         size_t err_len)
{
    struct sockaddr_storage sa;
    socklen_t sa_len = netaddr_sockaddr(fam, low, port, &sa);
    int one = 1;
    int fd = socket(netaddr_af(fam), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        snprintf(err, err_len, "cannot create a UDP socket: %m");
        return -1;
    }
    netaddr_socket_prepare(fd, fam, low);
    if (shared) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
        netaddr_socket_pktinfo(fd, fam);
    }
    if (loopback_only && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3) < 0) {
        log_warn("cannot restrict SNMP to the loopback interface (%m); datagrams to addresses outside "
                 "the fleet are ignored");
    }
    /*
     * A poller's burst must not overflow the queue while the worker is busy (the kernel's default,
     * about 208 KiB, dropped requests in a 10,000-device collection). The kernel caps the value at
     * net.core.rmem_max; memory is used only while datagrams wait.
     */
    {
        int bytes = shared ? AGENT_SHARED_RCVBUF_BYTES : AGENT_DEVICE_RCVBUF_BYTES;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    }
    if (bind(fd, (struct sockaddr *)&sa, sa_len) < 0) {
        char text[NETADDR_TEXT_BYTES];
        netaddr_text(fam, low, text, sizeof text);
        snprintf(err, err_len, "cannot bind SNMP to %s port %u (UDP): %m", text, (unsigned)port);
        close(fd);
        return -1;
    }
    return fd;
}

/* Room for the steering program: 6 instructions per group sharing a port, and the last return. */
#define AGENT_STEER_MAX_INSNS 4096

/*
 * Steer each datagram to the socket of the worker that owns the address it was sent to. For each group
 * on this port: when the destination is in its range, socket index = (group's first device + destination -
 * its first address) mod workers; anything else goes to socket 0. Sockets join the group in worker order.
 */
static void
attach_steering(const struct fleet *fleet, uint16_t port, int fd)
{
    struct sock_filter code[AGENT_STEER_MAX_INSNS];
    struct sock_fprog prog = {.len = 0, .filter = code};
    uint32_t n = 0;

    for (uint32_t i = 0; i < fleet->group_count; i++) {
        const struct device_group *g = &fleet->groups[i];
        const struct fleet_config *c = &g->cfg;
        if (!c->ip_per_device || !c->snmp || c->snmp_starting_port != port || n + 7 > AGENT_STEER_MAX_INSNS) {
            continue;
        }
        /* the destination's last 32 bits: IPv4 header offset 16, IPv6 24 + 12 */
        code[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                 (uint32_t)SKF_NET_OFF + (c->ip_fam.v6 ? 36u : 16u));
        code[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, c->ip, 0, 4);
        code[n++] =
            (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, c->ip + c->device_count - 1, 3, 0);
        /* 32-bit arithmetic: A = destination - ip + first */
        code[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, c->ip - g->first);
        code[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, fleet->cfg.threads);
        code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_A, 0);
    }
    code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
    prog.len = (unsigned short)n;
    if (fleet->cfg.threads > 1 &&
        setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) < 0) {
        /* Nothing is lost: the kernel spreads the datagrams over the workers' sockets by its own hash, and
         * a worker copies each one meant for another worker's device to that worker (read_batch). */
        log_warn(
            "cannot steer SNMP datagrams to the worker of the device they are for (SO_ATTACH_REUSEPORT_CBPF: "
            "%m): every device still answers, from its own address, but a datagram that reaches another "
            "worker costs a copy and a hand-over between threads; with --threads 1 nothing is handed "
            "over (see docs/LIMITS.md)");
    }
}

static enum fleet_err
worker_buffers(struct worker *w, uint32_t max_msg_bytes)
{
    struct agent_worker *aw = &w->snmp;

    aw->out_cap = max_msg_bytes + SPDU_HEADROOM(255);
    aw->in_bufs = malloc((size_t)AGENT_BATCH * AGENT_MAX_REQUEST_BYTES);
    aw->out_bufs = malloc((size_t)AGENT_BATCH * aw->out_cap);
    aw->scratch = malloc(sizeof *aw->scratch);
    return aw->in_bufs && aw->out_bufs && aw->scratch ? FLEET_OK : FLEET_ERR_NOMEM;
}

/* One socket per worker on shared port @p port; loopback-only when every group on it is in 127/8. */
static enum fleet_err
open_shared(struct fleet *fleet, uint32_t slot, uint16_t port, char *err, size_t err_len)
{
    const struct net_family any = {.v6 = fleet->cfg.ip_fam.v6};
    int loopback = !any.v6; /* an IPv6 prefix made local on lo is reached from elsewhere too */

    for (uint32_t i = 0; i < fleet->group_count; i++) {
        const struct fleet_config *c = &fleet->groups[i].cfg;
        if (c->ip_per_device && c->snmp && c->snmp_starting_port == port && (c->ip >> 24) != 127) {
            loopback = 0;
        }
    }
    for (uint32_t i = 0; i < fleet->cfg.threads; i++) {
        struct worker *w = &fleet->workers[i];
        if ((w->snmp.fds[slot] = open_udp(&any, 0, port, 1, loopback, err, err_len)) < 0) {
            return FLEET_ERR_SYS;
        }
        if (loop_watch(w->loop, w->snmp.fds[slot], LOOP_READ, on_shared_readable, w)) {
            snprintf(err, err_len, "cannot watch an SNMP socket: %m");
            return FLEET_ERR_SYS;
        }
    }
    attach_steering(fleet, port, fleet->workers[0].snmp.fds[slot]);
    return FLEET_OK;
}

enum fleet_err
agent_open_all(struct fleet *fleet, char *err, size_t err_len)
{
    uint32_t max_msg = 0;
    enum fleet_err rc;

    for (uint32_t i = 0; i < fleet->group_count; i++) {
        const struct fleet_config *c = &fleet->groups[i].cfg;
        if (c->snmp && c->snmp_max_msg_bytes > max_msg) {
            max_msg = c->snmp_max_msg_bytes;
        }
    }
    if (!max_msg) {
        return FLEET_OK; /* no group is an SNMP agent */
    }
    for (uint32_t i = 0; i < fleet->cfg.threads; i++) {
        if (worker_buffers(&fleet->workers[i], max_msg)) {
            snprintf(err, err_len, "out of memory for SNMP buffers");
            return FLEET_ERR_NOMEM;
        }
    }
    for (uint32_t gi = 0; gi < fleet->group_count; gi++) {
        const struct device_group *g = &fleet->groups[gi];
        const struct fleet_config *c = &g->cfg;
        if (!c->snmp) {
            continue;
        }
        if (c->ip_per_device) {
            uint16_t port = (uint16_t)c->snmp_starting_port;
            if (group_port_slot(fleet->snmp_shared_ports, fleet->snmp_shared_port_count, port) >= 0) {
                continue; /* an earlier group opened it */
            }
            if (fleet->snmp_shared_port_count == FLEET_MAX_SHARED_PORTS) {
                snprintf(err, err_len, "more than %d SNMP ports shared by address-per-device groups",
                         FLEET_MAX_SHARED_PORTS);
                return FLEET_ERR_INVAL;
            }
            fleet->snmp_shared_ports[fleet->snmp_shared_port_count] = port;
            if ((rc = open_shared(fleet, fleet->snmp_shared_port_count++, port, err, err_len))) {
                return rc;
            }
            continue;
        }
        for (uint32_t k = 0; k < c->device_count; k++) {
            struct device *dev = &fleet->devices[g->first + k];
            if ((dev->snmp_fd = open_udp(&c->ip_fam, dev->addr, (uint16_t)(c->snmp_starting_port + k), 0, 0,
                                         err, err_len)) < 0) {
                return FLEET_ERR_SYS;
            }
            if (loop_watch(dev->worker->loop, dev->snmp_fd, LOOP_READ, on_device_readable, dev)) {
                snprintf(err, err_len, "cannot watch the SNMP socket of device %u: %m", (unsigned)dev->index);
                return FLEET_ERR_SYS;
            }
        }
    }
    return FLEET_OK;
}

void
agent_close_all(struct fleet *fleet)
{
    for (uint32_t i = 0; fleet->devices && i < fleet->cfg.device_count; i++) {
        struct device *dev = &fleet->devices[i];
        if (dev->snmp_fd >= 0) {
            if (dev->worker && dev->worker->loop) {
                loop_unwatch(dev->worker->loop, dev->snmp_fd);
            }
            close(dev->snmp_fd);
            dev->snmp_fd = -1;
        }
    }
    for (uint32_t i = 0; fleet->workers && i < fleet->cfg.threads; i++) {
        struct worker *w = &fleet->workers[i];
        struct agent_worker *aw = &w->snmp;
        while (aw->delayed) {
            struct agent_delayed *d = aw->delayed;
            aw->delayed = d->next;
            if (w->loop) {
                loop_timer_stop(w->loop, &d->timer);
            }
            free(d);
        }
        for (uint32_t k = 0; k < FLEET_MAX_SHARED_PORTS; k++) {
            if (aw->fds[k] >= 0) {
                if (w->loop) {
                    loop_unwatch(w->loop, aw->fds[k]);
                }
                close(aw->fds[k]);
                aw->fds[k] = -1;
            }
        }
        free(aw->in_bufs);
        free(aw->out_bufs);
        free(aw->scratch);
        aw->in_bufs = aw->out_bufs = NULL;
        aw->scratch = NULL;
    }
}

enum fleet_err
agent_fault_parse(const char *text, struct agent_fault *fault, char *err, size_t err_len)
{
    char buf[128], *kind, *arg, *end;
    double share;

    snprintf(buf, sizeof buf, "%s", text);
    kind = strchr(buf, ':');
    if (!kind) {
        goto bad;
    }
    *kind++ = '\0';
    arg = strchr(kind, ':');
    if (arg) {
        *arg++ = '\0';
    }
    share = strtod(buf, &end);
    if (end == buf || *end || !(share > 0 && share <= 1)) {
        snprintf(err, err_len, "--snmp-fault \"%s\": the share of devices must be in (0, 1]", text);
        return FLEET_ERR_INVAL;
    }
    memset(fault, 0, sizeof *fault);
    fault->share = share;
    if (!strcmp(kind, "timeout") && !arg) {
        fault->kind = AGENT_FAULT_TIMEOUT;
        return FLEET_OK;
    }
    if (!strcmp(kind, "delay") && arg) {
        uint32_t lo, hi;
        if (agent_latency_parse(arg, &lo, &hi) || lo != hi) {
            snprintf(err, err_len, "--snmp-fault \"%s\": the delay must be one duration such as 5s or 1500ms",
                     text);
            return FLEET_ERR_INVAL;
        }
        fault->kind = AGENT_FAULT_DELAY;
        fault->delay_ms = lo;
        return FLEET_OK;
    }
    if (!strcmp(kind, "error") && arg) {
        fault->kind = AGENT_FAULT_ERROR;
        for (int i = 1; spdu_error_status_name(i); i++) {
            if (!strcasecmp(arg, spdu_error_status_name(i))) {
                fault->error_status = i;
                return FLEET_OK;
            }
        }
        long v = strtol(arg, &end, 10);
        if (end != arg && !*end && v >= 1 && v <= 18) {
            fault->error_status = (int)v;
            return FLEET_OK;
        }
        snprintf(err, err_len,
                 "--snmp-fault \"%s\": unknown error-status \"%s\" (use a name such as genErr or "
                 "a number 1-18)",
                 text, arg);
        return FLEET_ERR_INVAL;
    }
bad:
    snprintf(err, err_len,
             "--snmp-fault \"%s\": expected SHARE:timeout, SHARE:delay:DURATION or SHARE:error:STATUS", text);
    return FLEET_ERR_INVAL;
}

/* One duration: a number with unit ms or s. */
static int
parse_duration_ms(const char *s, size_t len, const char *unit, double *ms)
{
    char buf[64], *end;
    double v;

    if (len == 0 || len >= sizeof buf) {
        return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    v = strtod(buf, &end);
    if (end == buf || v < 0 || v > 3600e3) {
        return -1;
    }
    if (*end) {
        unit = end;
    }
    if (!strcmp(unit, "ms")) {
        *ms = v;
    } else if (!strcmp(unit, "s")) {
        *ms = v * 1000;
    } else {
        return -1;
    }
    return 0;
}

enum fleet_err
agent_latency_parse(const char *text, uint32_t *min_ms, uint32_t *max_ms)
{
    const char *dash = strchr(text, '-');
    const char *unit = text + strlen(text);
    double lo, hi;

    /* The unit written once at the end applies to both ends: "50-100ms". */
    while (unit > text && (unit[-1] == 'm' || unit[-1] == 's')) {
        unit--;
    }
    if (!*unit) {
        return FLEET_ERR_INVAL;
    }
    if (dash) {
        if (parse_duration_ms(text, (size_t)(dash - text), unit, &lo) ||
            parse_duration_ms(dash + 1, strlen(dash + 1), unit, &hi) || hi < lo) {
            return FLEET_ERR_INVAL;
        }
    } else {
        if (parse_duration_ms(text, strlen(text), unit, &lo)) {
            return FLEET_ERR_INVAL;
        }
        hi = lo;
    }
    *min_ms = (uint32_t)(lo + 0.5);
    *max_ms = (uint32_t)(hi + 0.5);
    return FLEET_OK;
}
