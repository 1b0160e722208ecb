/*
 * A YANG-Push subscriber with libnetconf2's client (issue 31), for the tests: it
 * connects to one device (SSH with a password, or NETCONF over a plain TCP
 * socket handed to nc_connect_inout), establishes a subscription with
 * libnetconf2's own builders (nc_rpc_establishpush_periodic,
 * nc_rpc_establishpush_onchange, nc_rpc_establishsub), then runs the steps
 * given with --then, and prints what it sees, one line per fact on stdout:
 *   session SID
 *   established ID
 *   notification NAME id=ID|- eventTime=T bytes=N   (N: the notification printed as XML)
 *   reply RPC ok
 *   rpc-error RPC tag=TAG app-tag=APP-TAG|- message=TEXT
 *   done notifications=N
 * libnetconf2's own messages go to stderr. Exit 0 when every RPC succeeded, 1 on an rpc-error (or a
 * step that was not met), 2 on bad usage, 3 when the session could not be opened.
 *
 * Usage: yp_nc2_client [options]
 *   --host H --port P            the device (default 127.0.0.1 830)
 *   --tcp                        NETCONF over plain TCP (fleetsim --ssh false); default SSH
 *   --user U --password W        SSH login (default admin/admin)
 *   --datastore DS               subscribe to DS (ietf-datastores:running|operational)
 *   --stream NAME                or to an event stream (NETCONF)
 *   --periodic CS [--anchor-time T]           periodic, period in centiseconds
 *   --on-change [--dampening CS] [--no-sync-on-start] [--exclude create,delete,...]
 *   --xpath X | --subtree FILE   the filter (datastore or stream)
 *   --replay-start T --stop-time T
 *   --count N --duration S       stop after N notifications or S seconds (default: 10 s)
 *   --then STEP (repeatable, in order, after the establish):
 *       wait:N            receive until N notifications in all
 *       sleep:S           receive for S seconds
 *       modify-period:CS  modify-subscription with a new period (datastore, periodic)
 *       modify-dampening:CS   the same for on-change
 *       modify-xpath:X    modify-subscription with a new XPath filter
 *       resync            resync-subscription
 *       delete            delete-subscription
 *       kill:ID           kill-subscription of ID ("self": the one established here)
 *       create-subscription:STREAM   RFC 5277's create-subscription (RFC 8640: a session uses one kind)
 *       establish         the establish-subscription of the options, here rather than first
 *   With neither --datastore nor --stream nothing is established (for kill:ID from a second session).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netdb.h>

/* Debian builds libnetconf2 with SSH; its headers show the SSH client API only when told. */
#define NC_ENABLED_SSH
#include <libnetconf2/log.h>
#include <libnetconf2/messages_client.h>
#include <libnetconf2/netconf.h>
#include <libnetconf2/session_client.h>
#include <libssh/libssh.h>
#include <libyang/libyang.h>

#define RPC_TIMEOUT_MS 10000
#define MAX_STEPS      32

struct options {
    const char *host;             /* device address */
    const char *port;             /* device port */
    int tcp;                      /* 1: plain TCP, 0: SSH */
    const char *user;             /* SSH user name */
    const char *password;         /* SSH password */
    const char *datastore;        /* datastore identity with module prefix, or NULL */
    const char *stream;           /* event stream, or NULL */
    uint32_t period_cs;           /* periodic: period in centiseconds; 0 with on_change */
    const char *anchor_time;      /* periodic: anchor-time, or NULL */
    int on_change;                /* 1: on-change */
    uint32_t dampening_cs;        /* on-change: dampening-period in centiseconds */
    int sync_on_start;            /* on-change: sync-on-start */
    char *excluded[8];            /* on-change: excluded-change values, NULL-terminated */
    char *filter;                 /* "/..." XPath or "<..." subtree, or NULL; owned */
    const char *replay_start;     /* stream: replay-start-time, or NULL */
    const char *stop_time;        /* stop-time, or NULL */
    long count;                   /* stop after this many notifications (0: no limit) */
    double duration_s;            /* stop after this long (0: the steps' own) */
    const char *steps[MAX_STEPS]; /* --then steps in order */
    int step_count;               /* entries in steps */
};

struct run {
    struct nc_session *s; /* the session */
    uint32_t id;          /* the established subscription's id; 0 before */
    long notifications;   /* notifications printed */
    int failed;           /* 1 once an RPC failed or a step was not met */
};

static const char *password;

static char *
give_password(const char *username, const char *hostname, void *priv)
{
    (void)username;
    (void)hostname;
    (void)priv;
    return strdup(password);
}

static int
accept_any_host_key(const char *hostname, ssh_session session, void *priv)
{
    (void)hostname;
    (void)session;
    (void)priv;
    return 0; /* a simulated device's fresh key, on loopback */
}

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The text of the first element named @p name in @p xml (malloc'd), or NULL. */
static char *
element_text(const char *xml, const char *name)
{
    char open[64];
    const char *p = xml, *start, *end;

    snprintf(open, sizeof open, "<%s", name);
    while ((p = strstr(p, open))) {
        p += strlen(open);
        if (*p == '>' || *p == ' ') {
            break;
        }
    }
    if (!p || !(start = strchr(p, '>')) || !(end = strchr(++start, '<'))) {
        return NULL;
    }
    return strndup(start, (size_t)(end - start));
}

/* One line for an rpc-error reply (its envelope printed as XML). */
static void
print_rpc_error(const char *what, const char *env_xml)
{
    char *tag = element_text(env_xml, "error-tag");
    char *app = element_text(env_xml, "error-app-tag");
    char *msg = element_text(env_xml, "error-message");

    printf("rpc-error %s tag=%s app-tag=%s message=%s\n", what, tag ? tag : "?", app ? app : "-",
           msg ? msg : "");
    free(tag);
    free(app);
    free(msg);
}

/* Prints a notification; returns 1 when it was printed. */
static int
print_notification(struct lyd_node *envp, struct lyd_node *op)
{
    struct lyd_node *id = NULL, *time = NULL, *n;
    char *xml = NULL;
    size_t bytes;

    if (!op) {
        return 0;
    }
    /* The node a notification is about: op, or the notification inside an augment's container. */
    for (n = op; n && !(n->schema && n->schema->nodetype == LYS_NOTIF); n = lyd_child(n)) {
    }
    n = n ? n : op;
    if (n->schema && lys_find_child(n->schema, n->schema->module, "id", 0, LYS_LEAF, 0)) {
        lyd_find_path(n, "id", 0,
                      &id); /* RFC 8639's notifications and YANG-Push's carry the subscription id */
    }
    LY_LIST_FOR(lyd_child(envp), time)
    {
        if (!strcmp(LYD_NAME(time), "eventTime")) {
            break;
        }
    }
    lyd_print_mem(&xml, op, LYD_XML, LYD_PRINT_WITHSIBLINGS | LYD_PRINT_SHRINK);
    bytes = xml ? strlen(xml) : 0;
    printf("notification %s:%s id=%s eventTime=%s bytes=%zu\n", n->schema ? n->schema->module->name : "?",
           LYD_NAME(n), id ? lyd_get_value(id) : "-", time ? lyd_get_value(time) : "-", bytes);
    fflush(stdout);
    free(xml);
    return 1;
}

/* Sends @p rpc (taken) and waits for its reply; prints "reply WHAT ok" or the rpc-error. With @p id_out,
 * the reply's output id. Returns 0 on an ok or data reply. */
static int
call(struct run *r, const char *what, struct nc_rpc *rpc, uint32_t *id_out)
{
    struct lyd_node *envp = NULL, *op = NULL, *id = NULL;
    uint64_t msgid = 0;
    NC_MSG_TYPE t;
    char *env_xml = NULL;
    int rc = -1;

    if (!rpc) {
        fprintf(stderr, "cannot build %s (is the module in the session's context?)\n", what);
        r->failed = 1;
        return -1;
    }
    if (nc_send_rpc(r->s, rpc, RPC_TIMEOUT_MS, &msgid) != NC_MSG_RPC) {
        fprintf(stderr, "cannot send %s\n", what);
        goto cleanup;
    }
    do {
        /* A notification read meanwhile is queued by libnetconf2 for nc_recv_notif(). */
        t = nc_recv_reply(r->s, rpc, msgid, RPC_TIMEOUT_MS, &envp, &op);
    } while (t == NC_MSG_NOTIF);
    if (t != NC_MSG_REPLY) {
        fprintf(stderr, "no reply to %s (nc_recv_reply: %d)\n", what, (int)t);
        goto cleanup;
    }
    lyd_print_mem(&env_xml, envp, LYD_XML, LYD_PRINT_WITHSIBLINGS | LYD_PRINT_SHRINK);
    if (env_xml && strstr(env_xml, "rpc-error")) {
        print_rpc_error(what, env_xml);
        goto cleanup;
    }
    if (id_out) {
        if (!op || lyd_find_path(op, "id", 1, &id) || !id) {
            fprintf(stderr, "%s: the reply has no id\n", what);
            goto cleanup;
        }
        *id_out = (uint32_t)strtoul(lyd_get_value(id), NULL, 10);
    }
    printf("reply %s ok\n", what);
    rc = 0;

cleanup:
    fflush(stdout);
    free(env_xml);
    lyd_free_all(envp);
    lyd_free_all(op);
    nc_rpc_free(rpc);
    r->failed |= rc != 0;
    return rc;
}

/* Receives notifications until @p until_count in all (0: no count) or @p until_s (monotonic) passes. */
static void
receive(struct run *r, long until_count, double until_s)
{
    while ((!until_count || r->notifications < until_count) && now_s() < until_s) {
        struct lyd_node *envp = NULL, *op = NULL;
        NC_MSG_TYPE t = nc_recv_notif(r->s, 100, &envp, &op);
        if (t == NC_MSG_NOTIF) {
            r->notifications += print_notification(envp, op);
        } else if (t == NC_MSG_ERROR) {
            fprintf(stderr, "the session broke while receiving\n");
            r->failed = 1;
            lyd_free_all(envp);
            lyd_free_all(op);
            return;
        }
        lyd_free_all(envp);
        lyd_free_all(op);
    }
}

static struct nc_rpc *
establish_rpc(const struct options *o)
{
    if (o->stream) {
        return nc_rpc_establishsub(o->filter, o->stream, o->replay_start, o->stop_time, NULL,
                                   NC_PARAMTYPE_CONST);
    }
    if (o->on_change) {
        return nc_rpc_establishpush_onchange(
            o->datastore, o->filter, o->stop_time, NULL, o->dampening_cs, o->sync_on_start,
            o->excluded[0] ? (const char **)o->excluded : NULL, NC_PARAMTYPE_CONST);
    }
    return nc_rpc_establishpush_periodic(o->datastore, o->filter, o->stop_time, NULL, o->period_cs,
                                         o->anchor_time, NC_PARAMTYPE_CONST);
}

/* Sends the establish-subscription of @p o; returns 0 when it succeeded (the id is in r->id). */
static int
establish(struct run *r, const struct options *o)
{
    return call(r, "establish-subscription", establish_rpc(o), &r->id);
}

/* One --then step; returns 0 when it was understood. */
static int
run_step(struct run *r, const struct options *o, const char *step, double deadline_s)
{
    const char *arg = strchr(step, ':');

    arg = arg ? arg + 1 : "";
    if (!strncmp(step, "wait:", 5)) {
        receive(r, atol(arg), deadline_s);
        if (r->notifications < atol(arg)) {
            printf("step %s not met: %ld notifications\n", step, r->notifications);
            r->failed = 1;
        }
    } else if (!strncmp(step, "sleep:", 6)) {
        double until = now_s() + atof(arg);
        receive(r, 0, until < deadline_s ? until : deadline_s);
    } else if (!strncmp(step, "modify-period:", 14)) {
        call(r, "modify-subscription",
             nc_rpc_modifypush_periodic(r->id, o->datastore, o->filter, o->stop_time, (uint32_t)atol(arg),
                                        o->anchor_time, NC_PARAMTYPE_CONST),
             NULL);
    } else if (!strncmp(step, "modify-dampening:", 17)) {
        call(r, "modify-subscription",
             nc_rpc_modifypush_onchange(r->id, o->datastore, o->filter, o->stop_time, (uint32_t)atol(arg),
                                        NC_PARAMTYPE_CONST),
             NULL);
    } else if (!strncmp(step, "modify-xpath:", 13)) {
        call(r, "modify-subscription",
             o->datastore ? nc_rpc_modifypush_periodic(r->id, o->datastore, arg, o->stop_time, o->period_cs,
                                                       o->anchor_time, NC_PARAMTYPE_CONST)
                          : nc_rpc_modifysub(r->id, arg, o->stop_time, NC_PARAMTYPE_CONST),
             NULL);
    } else if (!strcmp(step, "resync")) {
        call(r, "resync-subscription", nc_rpc_resyncsub(r->id), NULL);
    } else if (!strcmp(step, "delete")) {
        call(r, "delete-subscription", nc_rpc_deletesub(r->id), NULL);
    } else if (!strcmp(step, "establish")) {
        if (!establish(r, o)) {
            printf("established %u\n", r->id);
            fflush(stdout);
        }
    } else if (!strncmp(step, "create-subscription:", 20)) {
        call(r, "create-subscription", nc_rpc_subscribe(arg, NULL, NULL, NULL, NC_PARAMTYPE_CONST), NULL);
    } else if (!strncmp(step, "kill:", 5)) {
        call(r, "kill-subscription", nc_rpc_killsub(!strcmp(arg, "self") ? r->id : (uint32_t)atol(arg)),
             NULL);
    } else {
        return -1;
    }
    return 0;
}

/* The file's text, malloc'd, or NULL. */
static char *
read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long n;

    if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
        (text = malloc((size_t)n + 1))) {
        if (fread(text, 1, (size_t)n, f) != (size_t)n) {
            free(text);
            text = NULL;
        } else {
            text[n] = '\0';
        }
    }
    if (f) {
        fclose(f);
    }
    return text;
}

static int
has_step(const struct options *o, const char *step)
{
    for (int i = 0; i < o->step_count; i++) {
        if (!strcmp(o->steps[i], step)) {
            return 1;
        }
    }
    return 0;
}

static int
usage(void)
{
    fprintf(stderr,
            "usage: yp_nc2_client [--host H] [--port P] [--tcp] [--user U] [--password W]\n"
            "  (--datastore DS (--periodic CS [--anchor-time T] | --on-change [--dampening CS]\n"
            "   [--no-sync-on-start] [--exclude C,C]) | --stream NAME [--replay-start T])\n"
            "  [--xpath X | --subtree FILE] [--stop-time T] [--count N] [--duration S] [--then STEP]...\n");
    return 2;
}

static int
parse_args(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--tcp")) {
            o->tcp = 1;
            takes = 0;
        } else if (!strcmp(a, "--on-change")) {
            o->on_change = 1;
            takes = 0;
        } else if (!strcmp(a, "--no-sync-on-start")) {
            o->sync_on_start = 0;
            takes = 0;
        } else if (!v) {
            return -1;
        } else if (!strcmp(a, "--host")) {
            o->host = v;
        } else if (!strcmp(a, "--port")) {
            o->port = v;
        } else if (!strcmp(a, "--user")) {
            o->user = v;
        } else if (!strcmp(a, "--password")) {
            o->password = v;
        } else if (!strcmp(a, "--datastore")) {
            o->datastore = v;
        } else if (!strcmp(a, "--stream")) {
            o->stream = v;
        } else if (!strcmp(a, "--periodic")) {
            o->period_cs = (uint32_t)strtoul(v, NULL, 10);
        } else if (!strcmp(a, "--anchor-time")) {
            o->anchor_time = v;
        } else if (!strcmp(a, "--dampening")) {
            o->dampening_cs = (uint32_t)strtoul(v, NULL, 10);
        } else if (!strcmp(a, "--exclude")) {
            char *copy = strdup(v);
            int n = 0;
            for (char *tok = strtok(copy, ","); tok && n < 7; tok = strtok(NULL, ",")) {
                o->excluded[n++] = strdup(tok);
            }
            free(copy);
        } else if (!strcmp(a, "--xpath")) {
            free(o->filter);
            o->filter = strdup(v);
        } else if (!strcmp(a, "--subtree")) {
            free(o->filter);
            if (!(o->filter = read_file(v))) {
                fprintf(stderr, "cannot read %s\n", v);
                return -1;
            }
        } else if (!strcmp(a, "--replay-start")) {
            o->replay_start = v;
        } else if (!strcmp(a, "--stop-time")) {
            o->stop_time = v;
        } else if (!strcmp(a, "--count")) {
            o->count = atol(v);
        } else if (!strcmp(a, "--duration")) {
            o->duration_s = atof(v);
        } else if (!strcmp(a, "--then") && o->step_count < MAX_STEPS) {
            o->steps[o->step_count++] = v;
        } else {
            return -1;
        }
        i += takes;
    }
    if (o->datastore && o->stream) {
        return -1;
    }
    if (o->datastore && !o->on_change && !o->period_cs) {
        return -1;
    }
    return 0;
}

/* A session over a TCP connection of our own (libnetconf2's client has no TCP transport). */
static struct nc_session *
connect_tcp(const char *host, const char *port)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
    struct nc_session *s;
    int fd = -1;

    if (getaddrinfo(host, port, &hints, &res)) {
        return NULL;
    }
    for (ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        return NULL;
    }
    if (!(s = nc_connect_inout(fd, fd, NULL))) {
        close(fd);
    }
    return s;
}

int
main(int argc, char **argv)
{
    struct options o = {
        .host = "127.0.0.1", .port = "830", .user = "admin", .password = "admin", .sync_on_start = 1};
    struct run r = {0};
    double deadline;
    int rc = 3;

    if (parse_args(argc, argv, &o)) {
        return usage();
    }
    deadline = now_s() + (o.duration_s > 0 ? o.duration_s : 10.0);
    nc_client_init();
    nc_verbosity(NC_VERB_ERROR);
    if (o.tcp) {
        r.s = connect_tcp(o.host, o.port);
    } else {
        password = o.password;
        nc_client_ssh_set_username(o.user);
        nc_client_ssh_set_auth_hostkey_check_clb(accept_any_host_key, NULL);
        nc_client_ssh_set_auth_password_clb(give_password, NULL);
        nc_client_ssh_set_auth_pref(NC_SSH_AUTH_PUBLICKEY, -1);
        nc_client_ssh_set_auth_pref(NC_SSH_AUTH_INTERACTIVE, -1);
        nc_client_ssh_set_auth_pref(NC_SSH_AUTH_PASSWORD, 1);
        r.s = nc_connect_ssh(o.host, (uint16_t)atoi(o.port), NULL);
    }
    if (!r.s) {
        fprintf(stderr, "cannot open a NETCONF session to %s port %s\n", o.host, o.port);
        goto cleanup;
    }
    printf("session %u\n", nc_session_get_id(r.s));
    fflush(stdout);
    if ((o.datastore || o.stream) && !has_step(&o, "establish")) {
        if (establish(&r, &o)) {
            rc = 1;
            goto cleanup;
        }
        printf("established %u\n", r.id);
        fflush(stdout);
    }
    for (int i = 0; i < o.step_count; i++) {
        if (run_step(&r, &o, o.steps[i], deadline)) {
            fprintf(stderr, "unknown step \"%s\"\n", o.steps[i]);
            r.failed = 1;
        }
    }
    if (!o.step_count && (o.datastore || o.stream)) { /* no steps: receive until --count or --duration */
        receive(&r, o.count, deadline);
    }
    printf("done notifications=%ld\n", r.notifications);
    rc = r.failed ? 1 : 0;

cleanup:
    fflush(stdout);
    nc_session_free(r.s, NULL);
    nc_client_destroy();
    free(o.filter);
    for (int i = 0; o.excluded[i]; i++) {
        free(o.excluded[i]);
    }
    return rc;
}
