/*
 * Syslog over UDP (RFC 5426): one message per datagram. Messages handed
 * over in one loop iteration wait in a batch and go out together with
 * sendmmsg at the start of the next (a timer armed for "now"), or as soon
 * as the batch is full; each leaves from its device's own address
 * (IP_PKTINFO / IPV6_PKTINFO) when the sink is of the devices' family, so
 * a collector that keys on the source address sees the device. UDP has no
 * failure signal beyond the local kernel's: a datagram the kernel took is
 * sent, whether or not the collector reads it.
 */
#include "syslog_sink_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loop.h"

/* Datagrams per sendmmsg (and the batch's size). */
#define SU_BATCH 64
/* Send buffer asked for: a worker's devices can hand over thousands of lines in one pass (capped by
 * net.core.wmem_max). */
#define SU_SNDBUF_BYTES (4 * 1024 * 1024)

struct sink_udp {
    struct syslog_sink base;           /* first: the generic part */
    int fd;                            /* non-blocking UDP socket of the sink's family, on its wildcard */
    int own_family;                    /* 1: the sink is of the devices' family: sources are theirs */
    union netaddr_sa peer;             /* the collector */
    struct loop_timer flush_timer;     /* armed for "now" while count > 0 */
    uint32_t count;                    /* messages in the batch */
    char *bufs;                        /* SU_BATCH buffers of SYSLOG_MAX_MSG_BYTES */
    uint32_t lens[SU_BATCH];           /* bytes of each message */
    uint32_t srcs[SU_BATCH];           /* each message's source (low 32 bits of cfg.fam) */
    struct ledger_row *rows[SU_BATCH]; /* each message's ledger row */
};

static void
su_flush(struct syslog_sink *base)
{
    struct sink_udp *s = (struct sink_udp *)base;
    struct mmsghdr msgs[SU_BATCH];
    struct iovec iov[SU_BATCH];
    union {
        char buf[NETADDR_PKTINFO_BYTES];
        struct cmsghdr align;
    } ctl[SU_BATCH];
    uint32_t n = s->count, done = 0;

    loop_timer_stop(base->loop, &s->flush_timer);
    for (uint32_t i = 0; i < n; i++) {
        struct msghdr *mh = &msgs[i].msg_hdr;
        iov[i].iov_base = s->bufs + (size_t)i * SYSLOG_MAX_MSG_BYTES;
        iov[i].iov_len = s->lens[i];
        memset(mh, 0, sizeof *mh);
        mh->msg_name = &s->peer;
        mh->msg_namelen = netaddr_sa_len(&s->peer.sa);
        mh->msg_iov = &iov[i];
        mh->msg_iovlen = 1;
        if (s->own_family) {
            netaddr_msg_source(mh, ctl[i].buf, &base->cfg.fam, s->srcs[i]);
        }
        msgs[i].msg_len = 0;
    }
    /* After a refusal sendmmsg stops: that datagram fails alone and the rest go on. */
    while (done < n) {
        int r = sendmmsg(s->fd, msgs + done, n - done, MSG_DONTWAIT);
        if (r > 0) {
            for (int k = 0; k < r; k++) {
                ledger_note_sent(s->rows[done + (uint32_t)k]);
            }
            done += (uint32_t)r;
            base->stats.batches++;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else {
            ledger_note_failed(s->rows[done]);
            done++;
        }
    }
    s->count = 0;
    base->stats.queued = 0;
}

static void
su_on_flush(struct loop *loop, struct loop_timer *timer)
{
    struct sink_udp *s = (struct sink_udp *)((char *)timer - offsetof(struct sink_udp, flush_timer));

    (void)loop;
    su_flush(&s->base);
}

static void
su_send(struct syslog_sink *base, uint32_t src_low, const char *msg, size_t len, struct ledger_row *row)
{
    struct sink_udp *s = (struct sink_udp *)base;

    if (s->count == SU_BATCH) {
        su_flush(base);
    }
    if (len > SYSLOG_MAX_MSG_BYTES) {
        len = SYSLOG_MAX_MSG_BYTES; /* the renderer never makes more; a bound all the same */
    }
    memcpy(s->bufs + (size_t)s->count * SYSLOG_MAX_MSG_BYTES, msg, len);
    s->lens[s->count] = (uint32_t)len;
    s->srcs[s->count] = src_low;
    s->rows[s->count] = row;
    s->count++;
    base->stats.queued = s->count;
    ledger_queue(row);
    if (!loop_timer_armed(&s->flush_timer)) {
        loop_timer_start(base->loop, &s->flush_timer, loop_now_us(base->loop), su_on_flush);
    }
}

static void
su_close(struct syslog_sink *base)
{
    struct sink_udp *s = (struct sink_udp *)base;

    if (s->fd >= 0) {
        su_flush(base);
        close(s->fd);
    }
    loop_timer_stop(base->loop, &s->flush_timer);
    free(s->bufs);
    free(s);
}

static enum fleet_err
su_open(struct loop *loop, const struct syslog_sink_config *cfg, struct syslog_sink **out, char *err,
        size_t err_len)
{
    struct sink_udp *s = calloc(1, sizeof *s);
    int af = cfg->spec.ep.sa.ss_family, bytes = SU_SNDBUF_BYTES;
    struct net_family any = {.v6 = af == AF_INET6};
    struct sockaddr_storage local;
    socklen_t local_len;
    enum fleet_err rc = FLEET_OK;

    if (!s || !(s->bufs = malloc((size_t)SU_BATCH * SYSLOG_MAX_MSG_BYTES))) {
        snprintf(err, err_len, "out of memory for a syslog sink");
        rc = FLEET_ERR_NOMEM;
        goto cleanup;
    }
    s->base.ops = &syslog_sink_udp_ops;
    s->base.loop = loop;
    s->base.cfg = *cfg;
    s->base.stats.up = 1;
    loop_timer_init(&s->flush_timer);
    memcpy(&s->peer, &cfg->spec.ep.sa, netaddr_sa_len((const struct sockaddr *)&cfg->spec.ep.sa));
    s->own_family = af == netaddr_af(&cfg->fam);
    s->fd = socket(af, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        snprintf(err, err_len, "cannot create a syslog socket: %m");
        rc = FLEET_ERR_SYS;
        goto cleanup;
    }
    /* Best effort: the kernel caps it at net.core.wmem_max; a smaller buffer only means more failures. */
    (void)setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
    netaddr_socket_prepare(s->fd, &any, 0);
    local_len = netaddr_sockaddr(&any, 0, 0, &local);
    if (bind(s->fd, (struct sockaddr *)&local, local_len) < 0) {
        snprintf(err, err_len, "cannot bind a syslog socket: %m");
        rc = FLEET_ERR_SYS;
        goto cleanup;
    }
    *out = &s->base;
    s = NULL;
cleanup:
    if (s) {
        if (s->fd > 0) {
            close(s->fd);
        }
        free(s->bufs);
        free(s);
    }
    return rc;
}

const struct syslog_sink_ops syslog_sink_udp_ops = {
    .scheme = "udp",
    .open = su_open,
    .send = su_send,
    .flush = su_flush,
    .close = su_close,
};
