/*
 * Call home: each calling device is in one of four states. QUEUED, it
 * waits in its worker's ready queue for a token; CONNECTING, its
 * non-blocking connect() is in flight and the loop watches the socket for
 * writability; CONNECTED, the socket became a session (sess_start(), the
 * same start as an accepted connection) and the device waits for that
 * session to close; WAITING, its retry timer runs. A device so holds one
 * call-home connection at a time. The token bucket of a worker holds at
 * most one token and fills at rate / workers per second, so a storm of N
 * devices takes N / rate seconds, evenly spread.
 */
#include "callhome.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "device_ctl.h"
#include "log.h"
#include "session.h"

#define CH_NONE UINT32_MAX

enum ch_state {
    CH_OFF,        /* the device listens (its group does not call home) */
    CH_QUEUED,     /* in its worker's ready queue */
    CH_CONNECTING, /* connect() in flight on fd */
    CH_CONNECTED,  /* a session runs on the connection */
    CH_WAITING,    /* retry timer armed */
    CH_PARKED,     /* the device is down (control API): no dial until callhome_device_up() */
};

/* One calling device. */
struct ch_dev {
    struct loop_timer retry; /* the next dial; armed in CH_WAITING */
    struct device *dev;      /* the device */
    int fd;                  /* the connecting socket in CH_CONNECTING, else -1 */
    uint32_t failures;       /* failed dials and lost connections since the last connect: backoff exponent */
    uint32_t queue_next;     /* next device index in the ready queue (CH_QUEUED), CH_NONE at the tail */
    uint8_t state;           /* enum ch_state */
};

/* One worker's ready queue and token bucket. */
struct ch_worker {
    struct loop_timer pump; /* armed while devices wait in the queue */
    struct worker *w;       /* the worker */
    double rate;            /* tokens per second; 0: unbounded */
    double tokens;          /* in the bucket, at most 1 (valid with a rate) */
    monotime_us filled_us;  /* when tokens was brought up to date */
    uint32_t head;          /* first queued device index, CH_NONE when empty */
    uint32_t tail;          /* last queued device index; valid when head is not CH_NONE */
};

struct callhome {
    struct fleet *fleet;       /* back pointer */
    struct ch_dev *devs;       /* per fleet device (CH_OFF for listening ones) */
    struct ch_worker *workers; /* per worker */
};

static void dial(struct ch_dev *d);

int
callhome_parse(const char *text, struct net_endpoint *addr, uint32_t *port, char *err, size_t err_len)
{
    static const struct in6_addr any6 = IN6ADDR_ANY_INIT;
    char why[160];

    if (netaddr_endpoint_parse(text, CALLHOME_DEFAULT_PORT, addr, why, sizeof why) ||
        (addr->sa.ss_family == AF_INET
             ? !((struct sockaddr_in *)&addr->sa)->sin_addr.s_addr
             : !memcmp(&((struct sockaddr_in6 *)&addr->sa)->sin6_addr, &any6, sizeof any6))) {
        snprintf(err, err_len,
                 "--call-home must be ADDRESS[:PORT] or [IPV6-ADDRESS]:PORT with a numeric host (not the "
                 "wildcard) and a port from 1 to 65535, not \"%s\"",
                 text);
        return -1;
    }
    *port = netaddr_endpoint_port(addr);
    return 0;
}

uint32_t
callhome_backoff_ms(uint32_t failures, uint64_t draw)
{
    uint64_t d = CALLHOME_BACKOFF_START_MS;

    for (uint32_t i = 1; i < failures && d < CALLHOME_BACKOFF_MAX_MS; i++) {
        d *= 2;
    }
    if (d > CALLHOME_BACKOFF_MAX_MS) {
        d = CALLHOME_BACKOFF_MAX_MS;
    }
    return (uint32_t)(d / 2 + draw % (d / 2 + 1));
}

/* splitmix64's finaliser: spreads a seed and a count over 64 bits. */
static uint64_t
mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static struct callhome *
state_of(const struct device *dev)
{
    return dev->worker->fleet->call_home;
}

/* Refill the bucket of @p cw to @p now. */
static void
refill(struct ch_worker *cw, monotime_us now)
{
    if (now > cw->filled_us) {
        cw->tokens += (double)(now - cw->filled_us) * cw->rate / 1e6;
        if (cw->tokens > 1.0) {
            cw->tokens = 1.0;
        }
    }
    cw->filled_us = now;
}

/* Dial the queued devices of a worker as far as its tokens go; re-arm for the rest. */
static void
pump(struct loop *loop, struct loop_timer *timer)
{
    struct ch_worker *cw = (struct ch_worker *)((char *)timer - offsetof(struct ch_worker, pump));
    struct callhome *ch = cw->w->fleet->call_home;
    monotime_us now = loop_now_us(loop);
    uint32_t started = 0;

    if (cw->rate > 0) {
        refill(cw, now);
    }
    while (cw->head != CH_NONE && started < CALLHOME_DIALS_PER_PASS) {
        struct ch_dev *d = &ch->devs[cw->head];
        if (cw->rate > 0) {
            if (cw->tokens < 1.0) {
                break;
            }
            cw->tokens -= 1.0;
        }
        cw->head = d->queue_next;
        d->queue_next = CH_NONE;
        started++;
        dial(d);
    }
    if (cw->head == CH_NONE || loop_timer_armed(&cw->pump)) {
        return;
    }
    if (cw->rate > 0 && cw->tokens < 1.0) {
        now += (monotime_us)((1.0 - cw->tokens) * 1e6 / cw->rate) + 1;
    }
    loop_timer_start(loop, &cw->pump, now, pump);
}

/* Put @p d at the end of its worker's ready queue and make sure the pump runs. */
static void
enqueue(struct ch_dev *d)
{
    struct callhome *ch = state_of(d->dev);
    struct ch_worker *cw = &ch->workers[d->dev->worker->index];
    struct loop *loop = d->dev->worker->loop;

    d->state = CH_QUEUED;
    d->queue_next = CH_NONE;
    if (cw->head == CH_NONE) {
        cw->head = device_slot(d->dev);
    } else {
        ch->devs[cw->tail].queue_next = device_slot(d->dev);
    }
    cw->tail = device_slot(d->dev);
    if (!loop_timer_armed(&cw->pump)) {
        loop_timer_start(loop, &cw->pump, loop_now_us(loop), pump);
    }
}

static void
on_retry(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    enqueue((struct ch_dev *)((char *)timer - offsetof(struct ch_dev, retry)));
}

/* The dial failed or the connection ended: wait the backoff, then queue again. */
static void
retry_later(struct ch_dev *d, const char *why)
{
    struct loop *loop = d->dev->worker->loop;
    uint32_t delay_ms;

    d->failures++;
    delay_ms = callhome_backoff_ms(d->failures, mix(d->dev->seed ^ ((uint64_t)d->failures << 40)));
    d->state = CH_WAITING;
    log_debug("device %u: call home %s; dialling again in %u ms", d->dev->index, why, (unsigned)delay_ms);
    loop_timer_start(loop, &d->retry, loop_now_us(loop) + (monotime_us)delay_ms * 1000, on_retry);
}

/* The call-home session of a device ended (the manager left, or either side closed it). */
static void
on_session_closed(struct session *s)
{
    struct callhome *ch = state_of(s->dev);
    struct ch_dev *d;

    if (!ch) {
        return; /* shutting down */
    }
    d = &ch->devs[device_slot(s->dev)];
    if (d->state == CH_CONNECTED) {
        retry_later(d, "connection closed");
    }
}

static void
connected(struct ch_dev *d, int fd)
{
    struct session *s;
    int one = 1;

    d->fd = -1;
    d->failures = 0;
    d->state = CH_CONNECTED;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    log_debug("device %u: called home", d->dev->index);
    if (!(s = sess_start(d->dev, fd))) {
        retry_later(d, "session could not start");
        return;
    }
    s->on_closed = on_session_closed;
}

static void
on_connect_done(struct loop *loop, int fd, uint32_t events, void *data)
{
    struct ch_dev *d = data;
    int so_err = 0;
    socklen_t len = sizeof so_err;

    (void)events;
    loop_unwatch(loop, fd);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_err, &len) < 0) {
        so_err = errno;
    }
    if (so_err) {
        close(fd);
        d->fd = -1;
        retry_later(d, strerror(so_err));
        return;
    }
    connected(d, fd);
}

/* Open a socket from the device's own address and connect it to the manager. */
static void
dial(struct ch_dev *d)
{
    if (d->dev->ctl && d->dev->ctl->down) {
        d->state = CH_PARKED; /* a device that is down, rebooting or absent dials nobody */
        return;
    }

    const struct fleet_config *cfg = &d->dev->group->cfg;
    const struct net_endpoint *mgr = &cfg->call_home_addr;
    struct sockaddr_storage local;
    socklen_t local_len = netaddr_sockaddr(&cfg->ip_fam, d->dev->addr, 0, &local);
    /* From the device's address; a manager of the other family is dialled from that family's wildcard. */
    int from_dev = mgr->sa.ss_family == netaddr_af(&cfg->ip_fam) &&
                   (cfg->ip_fam.v6 ? !IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&local)->sin6_addr)
                                   : d->dev->addr != 0);
    int one = 1;
    int fd = socket(mgr->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        retry_later(d, strerror(errno));
        return;
    }
#ifdef IP_BIND_ADDRESS_NO_PORT
    /* The port is chosen at connect(), per destination: thousands of devices' sockets do not exhaust it. */
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
#endif
    if (from_dev) {
        netaddr_socket_prepare(fd, &cfg->ip_fam, d->dev->addr);
    }
    if (from_dev && bind(fd, (struct sockaddr *)&local, local_len) < 0) {
        char text[NETADDR_TEXT_BYTES];
        int e = errno;
        netaddr_text(&cfg->ip_fam, d->dev->addr, text, sizeof text);
        log_warn("device %u: cannot call home from %s: %s", d->dev->index, text, strerror(e));
        close(fd);
        retry_later(d, strerror(e));
        return;
    }
    if (connect(fd, (const struct sockaddr *)&mgr->sa, mgr->len) == 0) {
        connected(d, fd);
        return;
    }
    if (errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        retry_later(d, strerror(e));
        return;
    }
    if (loop_watch(d->dev->worker->loop, fd, LOOP_WRITE, on_connect_done, d)) {
        close(fd);
        retry_later(d, "cannot watch the socket");
        return;
    }
    d->fd = fd;
    d->state = CH_CONNECTING;
}

enum fleet_err
callhome_init(struct fleet *fleet, char *err, size_t err_len)
{
    struct callhome *ch;
    int any = 0;

    for (uint32_t i = 0; i < fleet->group_count; i++) {
        any |= fleet->groups[i].cfg.call_home_port != 0;
    }
    if (!any) {
        return FLEET_OK;
    }
    if (!(ch = calloc(1, sizeof *ch)) || !(ch->devs = calloc(fleet->cfg.device_count, sizeof *ch->devs)) ||
        !(ch->workers = calloc(fleet->cfg.threads, sizeof *ch->workers))) {
        if (ch) {
            free(ch->devs);
        }
        free(ch);
        snprintf(err, err_len, "out of memory for call home");
        return FLEET_ERR_NOMEM;
    }
    ch->fleet = fleet;
    for (uint32_t i = 0; i < fleet->cfg.threads; i++) {
        struct ch_worker *cw = &ch->workers[i];
        cw->w = &fleet->workers[i];
        cw->head = cw->tail = CH_NONE;
        cw->rate = fleet->cfg.call_home_rate / fleet->cfg.threads;
        cw->tokens = 1.0;
        loop_timer_init(&cw->pump);
    }
    for (uint32_t i = 0; i < fleet->cfg.device_count; i++) {
        struct ch_dev *d = &ch->devs[i];
        d->dev = &fleet->devices[i];
        d->fd = -1;
        d->queue_next = CH_NONE;
        d->state = d->dev->group->cfg.call_home_port ? CH_WAITING : CH_OFF;
        loop_timer_init(&d->retry);
    }
    fleet->call_home = ch;
    return FLEET_OK;
}

void
callhome_start_all(struct fleet *fleet)
{
    struct callhome *ch = fleet->call_home;

    if (!ch) {
        return;
    }
    for (uint32_t i = 0; i < fleet->cfg.threads; i++) {
        ch->workers[i].filled_us = loop_now_us(fleet->workers[i].loop);
    }
    for (uint32_t i = 0; i < fleet->cfg.device_count; i++) {
        const struct device_group *grp = fleet->devices[i].group;
        if (ch->devs[i].state != CH_WAITING) {
            continue;
        }
        if (i - grp->first >= grp->start_present) {
            ch->devs[i].state = CH_PARKED; /* not in the fleet until a scenario or the API grows it */
            continue;
        }
        enqueue(&ch->devs[i]);
    }
}

void
callhome_device_up(struct device *dev)
{
    struct callhome *ch = dev->worker ? dev->worker->fleet->call_home : NULL;
    struct ch_dev *d;

    if (!ch || (d = &ch->devs[device_slot(dev)])->state != CH_PARKED) {
        return;
    }
    d->failures = 0; /* a device that boots dials at once, not after its backoff */
    enqueue(d);
}

void
callhome_close_all(struct fleet *fleet)
{
    struct callhome *ch = fleet->call_home;

    if (!ch) {
        return;
    }
    fleet->call_home = NULL; /* sessions closing from now on are not dialled again */
    for (uint32_t i = 0; i < fleet->cfg.device_count; i++) {
        struct ch_dev *d = &ch->devs[i];
        struct loop *loop = d->dev->worker->loop;
        if (!loop) {
            continue;
        }
        if (d->fd >= 0) {
            loop_unwatch(loop, d->fd);
            close(d->fd);
        }
        loop_timer_stop(loop, &d->retry);
    }
    for (uint32_t i = 0; i < fleet->cfg.threads; i++) {
        if (fleet->workers[i].loop) {
            loop_timer_stop(fleet->workers[i].loop, &ch->workers[i].pump);
        }
    }
    free(ch->devs);
    free(ch->workers);
    free(ch);
}
