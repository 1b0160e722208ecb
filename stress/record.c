/*
 * "fleetsim-stress record": one NETCONF session (TCP, SSH or detected, as
 * for every other mode: conn.h) that reads a server in a fixed order, one
 * request at a time except get-schema, which is pipelined:
 *
 *   hello -> get yang-library -> get netconf-state/schemas -> get-schema of
 *   every module and submodule -> get-config running (startup, candidate)
 *   -> get-data operational (NMDA) or get -> optional SNMP walk (v2c, or
 *   SNMPv3 with the USM client of snmp_walk.h)
 *
 * Each reply's <data> element is written as is (the namespaces it inherits
 * from <rpc-reply> declared on it), each schema text byte for byte. What
 * fails is listed in the manifest's problems; a connection lost after the
 * hello is opened again once and the record goes on from the request that
 * was not answered. Finally rules.json proposes the identity rules
 * (docs/RECORDED_TYPES.md): host name, address, MAC addresses, serials.
 */
#include "record.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "reply_scan.h"
#include "run.h"
#include "snmp_walk.h"
#include "snmprec_line.h"
#include "stats.h"
#include "xmlscan.h"

#define NC_BASE_NS  "urn:ietf:params:xml:ns:netconf:base:1.0"
#define NCM_NS      "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"
#define YLIB_NS     "urn:ietf:params:xml:ns:yang:ietf-yang-library"
#define NMDA_NS     "urn:ietf:params:xml:ns:yang:ietf-netconf-nmda"
#define DS_NS       "urn:ietf:params:xml:ns:yang:ietf-datastores"
#define SYS_NS      "urn:ietf:params:xml:ns:yang:ietf-system"
#define OC_SYS_NS   "http://openconfig.net/yang/system"
#define CAP_STARTUP "urn:ietf:params:netconf:capability:startup:1.0"
#define CAP_CAND    "urn:ietf:params:netconf:capability:candidate:1.0"

/* netconfd's thin-client magic (yuma123's ncx-connect message, as its netconf-subsystem sends it). */
#define NCX_MAGIC "x56o8937ab17eg922z34rwhobskdbyswfehkpsqq3i55a0an960ccw24a4ek864aOpal1t2p"

/* get-schema requests in flight at once. */
#define RECORD_SCHEMA_WINDOW 16
/* Message-ids of get-schema requests: this plus the module's index. */
#define RECORD_SCHEMA_ID_BASE 1000
/* Deepest element nesting read. */
#define RECORD_XML_DEPTH_MAX 256
/* netconfd does not answer a request read together with the client's hello: with a preamble the first
 * request waits this long after the hello. */
#define RECORD_PREAMBLE_PAUSE_US 200000u
/* Pause before the one reconnection. */
#define RECORD_RECONNECT_PAUSE_US 100000u
/* Most MAC and serial rules proposed. */
#define RECORD_RULES_MAX 64
/* Most variables of one SNMP walk. */
#define RECORD_SNMP_MAX_OIDS 1000000u

enum record_step {
    REC_YLIB,       /* get <yang-library> and <modules-state> */
    REC_SCHEMAS,    /* get netconf-state/schemas */
    REC_GET_SCHEMA, /* get-schema of every module and submodule */
    REC_RUNNING,    /* get-config running */
    REC_STARTUP,    /* get-config startup (when advertised) */
    REC_CANDIDATE,  /* get-config candidate (when advertised) */
    REC_STATE,      /* get-data operational or get */
    REC_DONE,       /* every request answered */
};

/* One module or submodule to fetch. */
struct record_module {
    char *name;     /* identifier, owned */
    char *revision; /* revision, owned, NULL when none */
    int done;       /* 1 once its get-schema was answered (either way) */
    int sent;       /* 1 while its get-schema is in flight on the current connection */
};

struct record {
    const struct stress_options *o; /* parameters */
    struct loop *loop;              /* the one loop */
    struct ly_ctx *xml_ctx;         /* hello parsing */
    struct conn conn;               /* the session */
    char *preamble;                 /* bytes sent before the hello, or NULL */
    size_t preamble_len;            /* its length */
    struct loop_timer timer;        /* the pause before a request, or before reconnecting */
    enum record_step step;          /* the request being made */
    int ready_once;                 /* 1 once a hello was exchanged */
    int reconnected;                /* 1 after the one reconnection */
    int stopped;                    /* 1: the record stopped before REC_DONE (stop_why says why) */
    char stop_why[512];             /* what failed, for stderr */
    struct hello_info hello;        /* the first server hello, copied */
    int have_hello;                 /* 1 when hello.xml was written */
    int nmda;                       /* 1: state through get-data of operational */
    struct record_module *mods;     /* what get-schema fetches */
    size_t mod_count;               /* entries in mods */
    size_t mod_cap;                 /* allocated entries */
    size_t in_flight;               /* get-schema requests unanswered on this connection */
    uint64_t modules;               /* schemas fetched that are modules */
    uint64_t submodules;            /* schemas fetched that are submodules */
    uint64_t schemas_fetched;       /* schema files written */
    uint64_t running_bytes;         /* size of running.xml */
    uint64_t state_bytes;           /* size of state.xml */
    uint64_t snmp_oids;             /* lines of snmp.snmprec */
    char *ylib;                     /* yang-library.xml content, or NULL */
    char *running;                  /* running.xml content (for the rules), or NULL */
    char *state;                    /* state.xml content (for the rules), or NULL */
    char *sys_name;                 /* sysName.0 from the walk, or NULL */
    int running_ok;                 /* 1 when running.xml was written */
    int state_ok;                   /* 1 when state.xml was written */
    struct sbuf problems;           /* JSON objects of the manifest's problems, comma-separated */
    uint32_t problem_count;         /* entries in problems */
    char recorded_at[32];           /* UTC start time, RFC 3339 */
    monotime_us start_us;           /* start */
};

/* ------------------------------------------------------------------------------------------------ */
/* Problems and files */

static void problem(struct record *r, const char *what, const char *item, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
problem(struct record *r, const char *what, const char *item, const char *fmt, ...)
{
    char why[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    sbuf_adds(&r->problems, r->problem_count++ ? ",\n    {\"what\":" : "\n    {\"what\":");
    sbuf_add_json(&r->problems, what);
    if (item) {
        sbuf_adds(&r->problems, ",\"item\":");
        sbuf_add_json(&r->problems, item);
    }
    sbuf_adds(&r->problems, ",\"why\":");
    sbuf_add_json(&r->problems, why);
    sbuf_adds(&r->problems, "}");
    fprintf(stderr, "fleetsim-stress: record: %s%s%s: %s\n", what, item ? " " : "", item ? item : "", why);
}

/* Write @p len bytes to DIR/@p name. @return 0, or -1 (a problem is listed). */
static int
write_out(struct record *r, const char *name, const char *buf, size_t len)
{
    char path[4096];
    FILE *f;
    int ok;

    snprintf(path, sizeof path, "%s/%s", r->o->out_dir, name);
    if (!(f = fopen(path, "wb"))) {
        problem(r, "write", name, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    ok = fwrite(buf, 1, len, f) == len;
    ok &= fclose(f) == 0;
    if (!ok) {
        problem(r, "write", name, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Reading XML (with wire/xmlscan.h) */

/* One leaf element (an element holding text only) met by xml_walk(). */
struct xml_leaf {
    const char *ns;     /* its namespace, NULL when unbound or not known */
    size_t ns_len;      /* its length */
    const char *local;  /* local name */
    size_t local_len;   /* its length */
    const char *parent; /* the parent's local name, NULL at the top */
    size_t parent_len;  /* its length */
    const char *text;   /* decoded text, NUL-terminated */
};

struct xml_visitor {
    void (*leaf)(void *ctx, const struct xml_leaf *leaf);          /* a leaf, or NULL */
    void (*close)(void *ctx, const char *local, size_t local_len); /* an element ended, or NULL */
    void *ctx;                                                     /* theirs */
};

/*
 * Walk the one element starting at @p p (its '<'), checking that it is well-formed as far as
 * xmlscan.h reads (tags, end tags matching, references in leaf texts), and call @p v for its leaves.
 * @param[out] end After its end tag.
 * @return 0, or -1 with @p why (static, or in @p why_buf) set.
 */
static int
xml_walk(const char *p, const struct xml_visitor *v, const char **end, char *why_buf, size_t why_len)
{
    struct xmlscan_tag stack[RECORD_XML_DEPTH_MAX];
    size_t ns_count[RECORD_XML_DEPTH_MAX];
    struct xmlscan_scope scope = {.count = 0};
    struct sbuf text = {0};
    size_t depth = 0;
    int overflow = 0; /* namespace scope full: namespaces unknown below */
    int rc = -1;

    do {
        struct xmlscan_tag t;
        if (xmlscan_next_tag(p, &t)) {
            snprintf(why_buf, why_len, "%s",
                     depth ? "not well-formed XML: unclosed element or bad tag" : "no element");
            goto out;
        }
        if (depth == 0 && t.end) {
            snprintf(why_buf, why_len, "not well-formed XML: end tag without start");
            goto out;
        }
        if (t.end) {
            if (!xmlscan_same_qname(&t, &stack[depth - 1])) {
                snprintf(why_buf, why_len, "not well-formed XML: </%.*s> closes <%.*s>", (int)t.local_len,
                         t.local, (int)stack[depth - 1].local_len, stack[depth - 1].local);
                goto out;
            }
            depth--;
            scope.count = ns_count[depth];
            if (v && v->close) {
                v->close(v->ctx, t.local, t.local_len);
            }
            p = t.next;
            continue;
        }
        if (depth == RECORD_XML_DEPTH_MAX) {
            snprintf(why_buf, why_len, "elements nested deeper than %d", RECORD_XML_DEPTH_MAX);
            goto out;
        }
        ns_count[depth] = scope.count;
        if (!overflow && xmlscan_push_decls(&scope, &t)) {
            overflow = 1;
        }
        stack[depth++] = t;
        {
            const char *stop = NULL, *twhy = NULL;
            struct xmlscan_tag e;
            int leaf = 0;
            text.len = 0;
            if (t.empty) {
                sbuf_adds(&text, "");
                leaf = 1;
                p = t.next;
            } else if (!xmlscan_read_text(t.next, &text, &stop, &twhy)) {
                if (xmlscan_read_tag(stop, &e) || !e.end || !xmlscan_same_qname(&e, &t)) {
                    snprintf(why_buf, why_len, "not well-formed XML: <%.*s> is not closed", (int)t.local_len,
                             t.local);
                    goto out;
                }
                leaf = 1;
                p = e.next;
            } else {
                p = t.next;
            }
            if (leaf) {
                if (v && v->leaf) {
                    const struct xmlscan_ns *ns =
                        overflow ? NULL : xmlscan_resolve(&scope, t.prefix, t.prefix_len);
                    struct xml_leaf l = {ns ? ns->uri : NULL,
                                         ns ? ns->uri_len : 0,
                                         t.local,
                                         t.local_len,
                                         depth > 1 ? stack[depth - 2].local : NULL,
                                         depth > 1 ? stack[depth - 2].local_len : 0,
                                         text.buf ? text.buf : ""};
                    v->leaf(v->ctx, &l);
                }
                depth--;
                scope.count = ns_count[depth];
                if (v && v->close) {
                    v->close(v->ctx, t.local, t.local_len);
                }
            }
        }
    } while (depth);
    *end = p;
    rc = 0;
out:
    sbuf_free(&text);
    return rc;
}

/*
 * Find the <data> child of an <rpc-reply>.
 * @param[out] scope The namespaces declared on <rpc-reply>.
 * @param[out] data Its start tag.
 * @return 0 found; 1 the reply has none (rpc-error, ok); -1 not an rpc-reply (@p why).
 */
static int
find_data(const char *msg, struct xmlscan_scope *scope, struct xmlscan_tag *data, const char **why)
{
    struct xmlscan_tag root, t;
    const char *p = xmlscan_skip_misc(msg);
    size_t depth = 0;

    scope->count = 0;
    if (!p || *p != '<' || xmlscan_read_tag(p, &root) || root.end ||
        !xmlscan_eq(root.local, root.local_len, "rpc-reply")) {
        *why = "not an <rpc-reply>";
        return -1;
    }
    if (xmlscan_push_decls(scope, &root)) {
        *why = "unreadable namespace declarations on <rpc-reply>";
        return -1;
    }
    if (root.empty) {
        return 1;
    }
    for (p = root.next;; p = t.next) {
        if (xmlscan_next_tag(p, &t)) {
            *why = "not well-formed XML";
            return -1;
        }
        if (depth == 0 && t.end) {
            return 1;
        }
        if (depth == 0 && xmlscan_eq(t.local, t.local_len, "data")) {
            *data = t;
            return 0;
        }
        if (t.end) {
            depth--;
        } else if (!t.empty) {
            depth++;
        }
    }
}

/* "rpc-error TAG: MESSAGE" of a reply into @p out. */
static void
rpc_error_text(const char *msg, size_t len, char *out, size_t out_len)
{
    struct reply_info ri;
    struct xmlscan_tag t;
    struct sbuf text = {0};
    const char *p = msg;

    reply_scan(msg, len, &ri);
    while (!xmlscan_next_tag(p, &t)) {
        const char *stop, *why;
        if (!t.end && !t.empty && xmlscan_eq(t.local, t.local_len, "error-message")) {
            xmlscan_read_text(t.next, &text, &stop, &why);
            break;
        }
        p = t.next;
    }
    snprintf(out, out_len, "rpc-error %s%s%s", ri.error_tag[0] ? ri.error_tag : "(no error-tag)",
             text.buf && text.buf[0] ? ": " : "", text.buf && text.buf[0] ? text.buf : "");
    sbuf_free(&text);
}

/*
 * The reply's <data> element as a document of its own: the namespaces it inherits from <rpc-reply>
 * declared on its start tag, the rest as received. @return 0 (@p out filled), 1 no <data> (@p why has
 * the rpc-error), -1 malformed (@p why).
 */
static int
reply_data(const char *msg, size_t len, struct sbuf *out, char *why, size_t why_len)
{
    struct xmlscan_scope scope;
    struct xmlscan_tag data;
    const char *swhy = NULL, *end = NULL;
    int rc = find_data(msg, &scope, &data, &swhy);

    if (rc < 0) {
        snprintf(why, why_len, "malformed reply: %s", swhy);
        return -1;
    }
    if (rc > 0) {
        rpc_error_text(msg, len, why, why_len);
        return 1;
    }
    if (xml_walk(data.start, NULL, &end, why, why_len)) {
        return -1;
    }
    sbuf_add(out, data.start, (size_t)(data.local + data.local_len - data.start));
    for (size_t i = 0; i < scope.count; i++) {
        const struct xmlscan_ns *ns = &scope.ns[i];
        const char *cursor = data.attrs;
        struct xmlscan_attr a;
        int shadowed = 0;
        while (xmlscan_next_attr(&cursor, data.attrs + data.attrs_len, &a) == 1) {
            if (xmlscan_is_xmlns(&a) && (ns->prefix ? a.prefix && a.local_len == ns->prefix_len &&
                                                          !memcmp(a.local, ns->prefix, a.local_len)
                                                    : !a.prefix)) {
                shadowed = 1;
            }
        }
        if (shadowed) {
            continue;
        }
        if (ns->prefix) {
            sbuf_printf(out, " xmlns:%.*s=\"%.*s\"", (int)ns->prefix_len, ns->prefix, (int)ns->uri_len,
                        ns->uri);
        } else {
            sbuf_printf(out, " xmlns=\"%.*s\"", (int)ns->uri_len, ns->uri);
        }
    }
    sbuf_add(out, data.attrs, (size_t)(end - data.attrs));
    sbuf_adds(out, "\n");
    return out->failed ? -1 : 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* What to fetch */

static void
add_module(struct record *r, const char *name, size_t name_len, const char *rev, size_t rev_len)
{
    if (!name_len) {
        return;
    }
    for (size_t i = 0; i < r->mod_count; i++) {
        const struct record_module *m = &r->mods[i];
        if (strlen(m->name) == name_len && !memcmp(m->name, name, name_len) &&
            (m->revision ? strlen(m->revision) : 0) == rev_len &&
            (!rev_len || !memcmp(m->revision, rev, rev_len))) {
            return;
        }
    }
    if (r->mod_count == r->mod_cap) {
        size_t cap = r->mod_cap ? r->mod_cap * 2 : 64;
        struct record_module *m = realloc(r->mods, cap * sizeof *m);
        if (!m) {
            return;
        }
        r->mods = m;
        r->mod_cap = cap;
    }
    r->mods[r->mod_count].name = strndup(name, name_len);
    r->mods[r->mod_count].revision = rev_len ? strndup(rev, rev_len) : NULL;
    r->mods[r->mod_count].done = 0;
    r->mods[r->mod_count].sent = 0;
    r->mod_count++;
}

/* An entry of netconf-state/schemas or of the yang library being read. */
struct entry_reader {
    struct record *r;    /* where entries go */
    int from_schemas;    /* 1: netconf-state/schemas; 0: yang-library */
    struct sbuf name[2]; /* identifier/name; [0] of the module entry, [1] of a submodule entry */
    struct sbuf rev[2];  /* version/revision, likewise */
    int yang[2];         /* schemas: 0 when the format is not yang */
};

static int
is_name(const char *s, size_t len, const char *want)
{
    return s && xmlscan_eq(s, len, want);
}

static void
entry_leaf(void *ctx, const struct xml_leaf *l)
{
    struct entry_reader *e = ctx;
    int k;

    if (e->from_schemas) {
        if (!is_name(l->parent, l->parent_len, "schema")) {
            return;
        }
        if (is_name(l->local, l->local_len, "identifier")) {
            sbuf_adds(&e->name[0], l->text);
        } else if (is_name(l->local, l->local_len, "version")) {
            sbuf_adds(&e->rev[0], l->text);
        } else if (is_name(l->local, l->local_len, "format")) {
            const char *colon = strrchr(l->text, ':');
            e->yang[0] = !strcmp(colon ? colon + 1 : l->text, "yang");
        }
        return;
    }
    if (is_name(l->parent, l->parent_len, "module") ||
        is_name(l->parent, l->parent_len, "import-only-module")) {
        k = 0;
    } else if (is_name(l->parent, l->parent_len, "submodule")) {
        k = 1;
    } else {
        return;
    }
    if (is_name(l->local, l->local_len, "name")) {
        sbuf_adds(&e->name[k], l->text);
    } else if (is_name(l->local, l->local_len, "revision")) {
        sbuf_adds(&e->rev[k], l->text);
    }
}

static void
entry_close(void *ctx, const char *local, size_t len)
{
    struct entry_reader *e = ctx;
    int k = -1;

    if (e->from_schemas
            ? xmlscan_eq(local, len, "schema")
            : (xmlscan_eq(local, len, "module") || xmlscan_eq(local, len, "import-only-module"))) {
        k = 0;
    } else if (!e->from_schemas && xmlscan_eq(local, len, "submodule")) {
        k = 1;
    }
    if (k < 0) {
        return;
    }
    if (e->yang[k] && e->name[k].len) {
        add_module(e->r, e->name[k].buf, e->name[k].len, e->rev[k].buf, e->rev[k].len);
    }
    e->name[k].len = 0;
    e->rev[k].len = 0;
    e->yang[k] = 1;
}

/* Modules and submodules listed by a saved <data> document. */
static void
modules_from(struct record *r, const char *doc, int from_schemas)
{
    struct entry_reader e = {.r = r, .from_schemas = from_schemas, .yang = {1, 1}};
    struct xml_visitor v = {entry_leaf, entry_close, &e};
    const char *end;
    char why[256];

    xml_walk(doc, &v, &end, why, sizeof why);
    for (int k = 0; k < 2; k++) {
        sbuf_free(&e.name[k]);
        sbuf_free(&e.rev[k]);
    }
}

/* The hello's module capabilities (module=NAME&revision=REV). */
static void
modules_from_hello(struct record *r)
{
    for (size_t i = 0; i < r->hello.cap_count; i++) {
        const char *q = strchr(r->hello.caps[i], '?');
        const char *mod = NULL, *rev = NULL;
        for (const char *p = q; p && *p; p = strchr(p + 1, '&')) {
            if (!strncmp(p + 1, "module=", 7)) {
                mod = p + 8;
            } else if (!strncmp(p + 1, "revision=", 9)) {
                rev = p + 10;
            }
        }
        if (mod) {
            add_module(r, mod, strcspn(mod, "&"), rev, rev ? strcspn(rev, "&") : 0);
        }
    }
}

static int
has_module(const struct record *r, const char *name)
{
    for (size_t i = 0; i < r->mod_count; i++) {
        if (!strcmp(r->mods[i].name, name)) {
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Requests and replies */

static void send_step(struct record *r);

static void
send_rpc(struct record *r, uint64_t id, const char *body)
{
    struct sbuf xml = {0}, framed = {0};

    sbuf_printf(&xml, "<rpc message-id=\"%" PRIu64 "\" xmlns=\"" NC_BASE_NS "\">%s</rpc>", id, body);
    conn_frame(&r->conn, &framed, xml.buf, xml.len);
    if (!framed.failed) {
        conn_expect(&r->conn);
        conn_send(&r->conn, framed.buf, framed.len);
    }
    sbuf_free(&xml);
    sbuf_free(&framed);
}

/* Send get-schema requests until the window is full. */
static void
send_schemas(struct record *r)
{
    for (size_t i = 0; i < r->mod_count && r->in_flight < RECORD_SCHEMA_WINDOW; i++) {
        struct record_module *m = &r->mods[i];
        struct sbuf body = {0};
        if (m->done || m->sent) {
            continue;
        }
        sbuf_adds(&body, "<get-schema xmlns=\"" NCM_NS "\"><identifier>");
        sbuf_add_xml(&body, m->name);
        sbuf_adds(&body, "</identifier>");
        if (m->revision) {
            sbuf_adds(&body, "<version>");
            sbuf_add_xml(&body, m->revision);
            sbuf_adds(&body, "</version>");
        }
        sbuf_adds(&body, "<format>yang</format></get-schema>");
        m->sent = 1;
        r->in_flight++;
        send_rpc(r, RECORD_SCHEMA_ID_BASE + i, body.buf);
        sbuf_free(&body);
        if (r->conn.state != CONN_READY) {
            return;
        }
    }
}

static int
next_step_applies(const struct record *r, enum record_step s)
{
    if (s == REC_STARTUP) {
        return hello_has_cap(&r->hello, CAP_STARTUP);
    }
    if (s == REC_CANDIDATE) {
        return hello_has_cap(&r->hello, CAP_CAND);
    }
    return 1;
}

static void
advance(struct record *r)
{
    do {
        r->step++;
    } while (r->step < REC_DONE && !next_step_applies(r, r->step));
    if (r->step == REC_GET_SCHEMA) {
        if (!r->mod_count && r->ylib) { /* netconf-state/schemas listed none: the yang library's */
            modules_from(r, r->ylib, 0);
        }
        if (!r->mod_count) { /* neither listed any: the hello's module capabilities */
            modules_from_hello(r);
        }
        r->nmda = has_module(r, "ietf-netconf-nmda");
        for (size_t i = 0; i < r->hello.cap_count && !r->nmda; i++) {
            r->nmda = strstr(r->hello.caps[i], "module=ietf-netconf-nmda") != NULL;
        }
    }
    if (r->step == REC_DONE) {
        conn_idle(&r->conn);
        loop_stop(r->loop);
        return;
    }
    send_step(r);
}

static void
send_step(struct record *r)
{
    static const char *const gc[] = {"running", "startup", "candidate"};

    switch (r->step) {
    case REC_YLIB:
        send_rpc(r, REC_YLIB + 1,
                 "<get><filter type=\"subtree\"><yang-library xmlns=\"" YLIB_NS
                 "\"/><modules-state xmlns=\"" YLIB_NS "\"/></filter></get>");
        break;
    case REC_SCHEMAS:
        send_rpc(r, REC_SCHEMAS + 1,
                 "<get><filter type=\"subtree\"><netconf-state xmlns=\"" NCM_NS
                 "\"><schemas/></netconf-state></filter></get>");
        break;
    case REC_GET_SCHEMA:
        send_schemas(r);
        if (!r->in_flight && r->conn.state == CONN_READY) {
            advance(r);
        }
        break;
    case REC_RUNNING:
    case REC_STARTUP:
    case REC_CANDIDATE: {
        char body[128];
        snprintf(body, sizeof body, "<get-config><source><%s/></source></get-config>",
                 gc[r->step - REC_RUNNING]);
        send_rpc(r, r->step + 1, body);
        break;
    }
    case REC_STATE:
        if (r->nmda) {
            send_rpc(
                r, REC_STATE + 1,
                "<get-data xmlns=\"" NMDA_NS "\" xmlns:ds=\"" DS_NS
                "\"><datastore>ds:operational</datastore><config-filter>false</config-filter></get-data>");
        } else {
            send_rpc(r, REC_STATE + 1, "<get/>");
        }
        break;
    case REC_DONE:
        break;
    }
}

/* 1 when the YANG text starts with the keyword "submodule" (after comments). */
static int
is_submodule(const char *s)
{
    for (;;) {
        while (xmlscan_is_space(*s)) {
            s++;
        }
        if (s[0] == '/' && s[1] == '/') {
            s += strcspn(s, "\n");
        } else if (s[0] == '/' && s[1] == '*') {
            const char *e = strstr(s + 2, "*/");
            if (!e) {
                return 0;
            }
            s = e + 2;
        } else {
            return !strncmp(s, "submodule", 9) && (xmlscan_is_space(s[9]) || s[9] == '"' || s[9] == '\'');
        }
    }
}

static void
on_schema(struct record *r, struct record_module *m, const char *msg, size_t len)
{
    char item[512], why[1024], file[600];
    struct xmlscan_scope scope;
    struct xmlscan_tag data, e;
    struct sbuf text = {0};
    const char *swhy = NULL, *stop = NULL;
    int rc;

    snprintf(item, sizeof item, "%s%s%s", m->name, m->revision ? "@" : "", m->revision ? m->revision : "");
    rc = find_data(msg, &scope, &data, &swhy);
    if (rc < 0) {
        problem(r, "get-schema", item, "malformed reply: %s", swhy);
    } else if (rc > 0) {
        rpc_error_text(msg, len, why, sizeof why);
        problem(r, "get-schema", item, "%s", why);
    } else if (data.empty || xmlscan_read_text(data.next, &text, &stop, &swhy) ||
               xmlscan_read_tag(stop, &e) || !e.end || !xmlscan_same_qname(&e, &data)) {
        problem(r, "get-schema", item, "malformed reply: <data> does not hold the schema text (%s)",
                swhy ? swhy : "empty");
    } else if (!text.len) {
        problem(r, "get-schema", item, "the schema text is empty");
    } else {
        snprintf(file, sizeof file, "yang/%s.yang", item);
        if (strchr(item, '/')) {
            problem(r, "get-schema", item, "the name cannot be a file name");
        } else if (!write_out(r, file, text.buf, text.len)) {
            r->schemas_fetched++;
            if (is_submodule(text.buf)) {
                r->submodules++;
            } else {
                r->modules++;
            }
        }
    }
    sbuf_free(&text);
}

/* A <data> reply of a step: written to @p file; @return the content (malloc'd) or NULL. */
static char *
on_data(struct record *r, const char *what, const char *file, const char *msg, size_t len, uint64_t *bytes)
{
    struct sbuf out = {0};
    char why[1024];
    int rc = reply_data(msg, len, &out, why, sizeof why);

    if (rc) {
        problem(r, what, NULL, "%s", why);
        sbuf_free(&out);
        return NULL;
    }
    if (write_out(r, file, out.buf, out.len)) {
        sbuf_free(&out);
        return NULL;
    }
    if (bytes) {
        *bytes = out.len;
    }
    return sbuf_take(&out, NULL);
}

static void
on_message(struct conn *c, const char *msg, size_t len)
{
    struct record *r = c->user;
    struct reply_info ri;
    char *doc;

    if (reply_scan(msg, len, &ri) != REPLY_RPC_REPLY || !ri.has_message_id) {
        if (ri.kind != REPLY_NOTIFICATION) {
            problem(r, "reply", NULL, "a message that is not an rpc-reply with a message-id: ignored");
        }
        return;
    }
    if (r->step == REC_GET_SCHEMA) {
        uint64_t i = ri.message_id - RECORD_SCHEMA_ID_BASE;
        if (ri.message_id < RECORD_SCHEMA_ID_BASE || i >= r->mod_count || !r->mods[i].sent ||
            r->mods[i].done) {
            problem(r, "reply", NULL, "a reply with message-id %" PRIu64 " that no request had: ignored",
                    ri.message_id);
            return;
        }
        r->mods[i].done = 1;
        r->mods[i].sent = 0;
        r->in_flight--;
        on_schema(r, &r->mods[i], msg, len);
        send_step(r);
        return;
    }
    if (ri.message_id != (uint64_t)r->step + 1) {
        problem(r, "reply", NULL, "a reply with message-id %" PRIu64 " that no request had: ignored",
                ri.message_id);
        return;
    }
    conn_idle(c);
    switch (r->step) {
    case REC_YLIB:
        r->ylib = on_data(r, "yang-library", "yang-library.xml", msg, len, NULL);
        break;
    case REC_SCHEMAS:
        if ((doc = on_data(r, "schemas", "schemas.xml", msg, len, NULL))) {
            modules_from(r, doc, 1);
            free(doc);
        }
        break;
    case REC_RUNNING:
        r->running = on_data(r, "running", "running.xml", msg, len, &r->running_bytes);
        r->running_ok = r->running != NULL;
        break;
    case REC_STARTUP:
        free(on_data(r, "startup", "startup.xml", msg, len, NULL));
        break;
    case REC_CANDIDATE:
        free(on_data(r, "candidate", "candidate.xml", msg, len, NULL));
        break;
    case REC_STATE:
        r->state = on_data(r, "state", "state.xml", msg, len, &r->state_bytes);
        r->state_ok = r->state != NULL;
        break;
    default:
        break;
    }
    advance(r);
}

static void
on_request_timer(struct loop *loop, struct loop_timer *timer)
{
    struct record *r = (struct record *)((char *)timer - offsetof(struct record, timer));

    (void)loop;
    if (r->conn.state == CONN_READY) {
        send_step(r);
    }
}

static void
on_ready(struct conn *c)
{
    struct record *r = c->user;

    if (!r->ready_once) {
        r->ready_once = 1;
        r->hello = c->server_hello; /* moved: the connection's copy is emptied */
        memset(&c->server_hello, 0, sizeof c->server_hello);
    }
    for (size_t i = 0; i < r->mod_count; i++) {
        r->mods[i].sent = 0;
    }
    r->in_flight = 0;
    if (r->preamble) {
        loop_timer_start(r->loop, &r->timer, loop_clock_monotonic() + RECORD_PREAMBLE_PAUSE_US,
                         on_request_timer);
    } else {
        send_step(r);
    }
}

static void
on_hello(struct conn *c, const char *msg, size_t len)
{
    struct record *r = c->user;

    if (!r->have_hello && !write_out(r, "hello.xml", msg, len)) {
        r->have_hello = 1;
    }
}

static const struct conn_callbacks callbacks;

static int
connect_now(struct record *r)
{
    conn_close(&r->conn);
    memset(&r->conn, 0, sizeof r->conn);
    r->conn.fd = -1;
    r->conn.timeout_ms = r->o->msg_timeout_s * 1000u;
    r->conn.legacy_framing = r->o->legacy_framing;
    r->conn.preamble = r->preamble;
    r->conn.preamble_len = r->preamble_len;
    r->conn.hello_seen = on_hello;
    return conn_start(&r->conn, r->loop, r->xml_ctx, &r->o->ip_fam, r->o->ip, (uint16_t)r->o->port,
                      &callbacks, r);
}

static void stop(struct record *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
stop(struct record *r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(r->stop_why, sizeof r->stop_why, fmt, ap);
    va_end(ap);
    r->stopped = 1;
    loop_stop(r->loop);
}

static const char *const step_names[] = {"yang-library", "schemas",   "get-schema", "running",
                                         "startup",      "candidate", "state",      "done"};

static void
on_reconnect_timer(struct loop *loop, struct loop_timer *timer)
{
    struct record *r = (struct record *)((char *)timer - offsetof(struct record, timer));

    (void)loop;
    if (connect_now(r)) {
        problem(r, "connection", NULL, "cannot create a socket to reconnect");
        stop(r, "cannot create a socket to reconnect");
    }
}

static void
on_failed(struct conn *c, enum conn_failure why, const char *detail)
{
    struct record *r = c->user;

    loop_timer_stop(r->loop, &r->timer);
    if (r->ready_once && !r->reconnected) {
        r->reconnected = 1;
        problem(r, "connection", step_names[r->step], "%s (%s) during %s: connecting again",
                conn_failure_name(why), detail, step_names[r->step]);
        loop_timer_start(r->loop, &r->timer, loop_clock_monotonic() + RECORD_RECONNECT_PAUSE_US,
                         on_reconnect_timer);
        return;
    }
    problem(r, "connection", r->ready_once ? step_names[r->step] : "hello", "%s (%s)%s",
            conn_failure_name(why), detail, r->reconnected ? " after the one reconnection" : "");
    stop(r, "%s: connection %s (%s)", r->ready_once ? step_names[r->step] : "hello", conn_failure_name(why),
         detail);
}

static const struct conn_callbacks callbacks = {on_ready, on_message, on_failed, NULL};

/* ------------------------------------------------------------------------------------------------ */
/* SNMP walk (v2c or SNMPv3 GETBULK, with stress/snmp_walk.h and wire/susm.h) */

#define RECORD_SNMP_MSG_MAX_BYTES 65507 /* msgMaxSize of v3 requests: the largest UDP datagram */

/* One blocking walk: the socket, the buffers and, with --v3-user, the USM state of the one engine. */
struct rec_snmp {
    struct record *r;             /* the record the walk belongs to */
    int fd;                       /* UDP socket connected to the agent */
    int v3;                       /* 1 with --v3-user: the fields below are used */
    struct walk_v3_user user;     /* the user, its keys derived from the passwords */
    struct walk_v3_engine engine; /* the agent's engine once discovered */
    struct susm_user keys;        /* the user's keys localized for that engine */
    uint64_t salt;                /* AES salt of the next request */
    int discovering;              /* 1 while the request is the engine discovery */
    int32_t request_id;           /* request-id (and v3 msgID) of the request in flight */
    uint8_t pdu_buf[2048];        /* the request's PDU (v3) or whole message (v2c) */
    uint8_t tx[2048];             /* the v3 request message */
    uint8_t rx[65536];            /* the datagram received */
    struct spdu_message m;        /* v2c: the response */
    struct susm_msg msg;          /* v3: the response or Report */
    enum walk_v3_verdict verdict; /* v3: what msg means */
    enum susm_report_kind kind;   /* v3: the Report's usmStats counter with WALK_V3_REPORT/RESYNC */
    const char *why;              /* v3: why msg is unusable, with WALK_V3_UNUSABLE */
};

/* Encode the next request (discovery, or a GETBULK of @p n names) under s->request_id. @return 0, -1. */
static int
encode_request(struct rec_snmp *s, const struct oid *const *names, uint32_t n, uint8_t **msg, size_t *msg_len)
{
    const struct stress_options *o = s->r->o;
    struct spdu_value null_value = {.tag = BER_NULL};
    struct spdu_encoder e;
    struct susm_out v3;
    uint8_t *pdu;
    size_t pdu_len;

    if (!s->v3) {
        size_t community_len = strlen(o->community);
        spdu_enc_init(&e, s->pdu_buf, sizeof s->pdu_buf, SPDU_HEADROOM(community_len),
                      spdu_bindings_budget(1472, community_len, s->request_id));
        for (uint32_t i = 0; i < n; i++) {
            spdu_enc_binding(&e, names[i], &null_value);
        }
        spdu_enc_finish_message(&e, SPDU_V2C, (const uint8_t *)o->community, community_len, SPDU_GETBULK,
                                s->request_id, 0, (int32_t)o->max_repetitions, msg, msg_len);
        return 0;
    }
    *msg = s->tx;
    if (s->discovering) {
        return susm_client_discovery(s->request_id, s->request_id, RECORD_SNMP_MSG_MAX_BYTES, s->tx,
                                     sizeof s->tx, msg_len) != FLEET_OK
                   ? -1
                   : 0;
    }
    walk_v3_request_out(&s->engine, &s->user, &s->keys, s->request_id, RECORD_SNMP_MSG_MAX_BYTES, s->salt++,
                        loop_clock_monotonic(), &v3);
    spdu_enc_init(&e, s->pdu_buf, sizeof s->pdu_buf, SPDU_HEADROOM(0),
                  susm_bindings_budget(1472, &v3, s->request_id));
    for (uint32_t i = 0; i < n; i++) {
        spdu_enc_binding(&e, names[i], &null_value);
    }
    spdu_enc_finish_pdu(&e, SPDU_GETBULK, s->request_id, 0, (int32_t)o->max_repetitions, &pdu, &pdu_len);
    return susm_encode(&v3, pdu, pdu_len, s->tx, sizeof s->tx, msg_len) != FLEET_OK ? -1 : 0;
}

/* @return 1 when the @p got bytes in s->rx answer the request in flight (decoded into s->m or s->msg). */
static int
take_datagram(struct rec_snmp *s, size_t got)
{
    enum susm_report_kind failure;
    int32_t msg_id;

    if (!s->v3) {
        return spdu_message_decode(s->rx, got, &s->m) == FLEET_OK && s->m.pdu.type == SPDU_RESPONSE &&
               s->m.pdu.request_id == s->request_id;
    }
    if (walk_v3_peek_msg_id(s->rx, got, &msg_id) != FLEET_OK || msg_id != s->request_id ||
        susm_client_receive(s->rx, got, s->discovering ? NULL : &s->keys, &s->msg, &failure) != FLEET_OK) {
        return 0;
    }
    s->verdict =
        walk_v3_classify(&s->engine, s->discovering, s->discovering ? SUSM_FLAG_REPORTABLE : s->user.flags,
                         &s->msg, failure, loop_clock_monotonic(), &s->kind, &s->why);
    if (s->verdict == WALK_V3_UNVERIFIED) {
        return 0; /* a datagram we cannot trust: keep waiting, as snmp mode does */
    }
    return s->verdict != WALK_V3_RESPONSE || s->msg.pdu.request_id == s->request_id;
}

/* Send a request (a new request-id) and wait for its answer, with the retries of --retries.
 * @return 0 with the answer taken in; -1 with a problem listed. */
static int
exchange(struct rec_snmp *s, const struct oid *const *names, uint32_t n)
{
    const struct stress_options *o = s->r->o;
    uint8_t *msg;
    size_t msg_len;
    ssize_t got = -1;

    s->request_id++;
    if (encode_request(s, names, n, &msg, &msg_len)) {
        problem(s->r, "snmp", NULL, "the request cannot be encoded%s", s->v3 ? " or signed (libcrypto)" : "");
        return -1;
    }
    /* A signal cuts poll() short (EINTR, whatever SA_RESTART says): no retry follows it. */
    for (uint32_t attempt = 0; attempt <= o->retries && got < 0 && !run_interrupted(); attempt++) {
        struct pollfd pfd = {.fd = s->fd, .events = POLLIN};
        if (send(s->fd, msg, msg_len, 0) < 0) {
            problem(s->r, "snmp", NULL, "send: %s", strerror(errno));
            return -1;
        }
        while (!run_interrupted() && poll(&pfd, 1, (int)o->timeout_ms) == 1) {
            got = recv(s->fd, s->rx, sizeof s->rx, 0);
            if (got < 0) {
                break; /* ICMP unreachable: retry, then report */
            }
            if (take_datagram(s, (size_t)got)) {
                break;
            }
            got = -1; /* a stray: keep waiting */
        }
    }
    if (got < 0 && run_interrupted()) {
        return -1; /* snmp_walk_run() lists the interruption */
    }
    if (got < 0) {
        char who[64];
        if (s->v3) {
            snprintf(who, sizeof who, "SNMPv3 user \"%.*s\"", (int)o->v3.name_len, o->v3.name);
        } else {
            snprintf(who, sizeof who, "community \"%s\"", o->community);
        }
        char host[NETADDR_TEXT_BYTES];
        problem(s->r, "snmp", NULL, "no response from %s:%u after %u tries of %u ms (%s%s)",
                netaddr_host(&o->ip_fam, o->ip, host, sizeof host),
                (unsigned)(o->snmp_port ? o->snmp_port : 161), (unsigned)o->retries + 1,
                (unsigned)o->timeout_ms, who, s->discovering ? ", engine discovery" : "");
        return -1;
    }
    return 0;
}

/* v3: send, then act on what came back: resynchronize once on notInTimeWindow, list a Report or an
 * unusable message as a problem. @return 0 with a Response (or the discovery) in s->msg, or -1. */
static int
exchange_v3(struct rec_snmp *s, const struct oid *const *names, uint32_t n)
{
    for (int resynced = 0;; resynced = 1) {
        if (exchange(s, names, n)) {
            return -1;
        }
        if (s->verdict == WALK_V3_RESYNC && !resynced) {
            continue;
        }
        if (s->verdict == WALK_V3_REPORT || s->verdict == WALK_V3_RESYNC) {
            problem(s->r, "snmp", NULL, "SNMPv3 user \"%.*s\" (%s): Report %s%s", (int)s->r->o->v3.name_len,
                    s->r->o->v3.name, walk_v3_level_name(s->user.flags), walk_v3_report_name(s->kind),
                    s->kind == SUSM_REPORT_WRONG_DIGESTS ? ": is the authentication password right?" : "");
            return -1;
        }
        if (s->verdict == WALK_V3_UNUSABLE) {
            problem(s->r, "snmp", NULL, "unusable SNMPv3 message: %s", s->why);
            return -1;
        }
        return 0;
    }
}

/* v3: the user's keys, the engine's discovery and the keys localized for it. @return 0, or -1. */
static int
setup_v3(struct rec_snmp *s)
{
    const struct stress_v3_user *u = &s->r->o->v3;

    s->v3 = 1;
    if (walk_v3_user_init(&s->user, u->name, u->name_len, u->auth, u->auth_password, u->auth_password_len,
                          u->priv, u->priv_password, u->priv_password_len) != FLEET_OK) {
        problem(s->r, "snmp", NULL, "cannot derive the keys of SNMPv3 user \"%.*s\"", (int)u->name_len,
                u->name);
        return -1;
    }
    /* RFC 3826 section 3.1.2.1: the salt is a counter; a random start keeps runs from repeating one. */
    if (getrandom(&s->salt, sizeof s->salt, 0) != (ssize_t)sizeof s->salt) {
        s->salt = loop_clock_monotonic() ^ ((uint64_t)getpid() << 32);
    }
    s->discovering = 1;
    if (exchange_v3(s, NULL, 0)) {
        return -1;
    }
    s->discovering = 0;
    if (walk_v3_localize(&s->user, &s->engine, &s->keys) != FLEET_OK) {
        problem(s->r, "snmp", NULL, "the user's keys cannot be localized (libcrypto failed)");
        return -1;
    }
    return 0;
}

/* Write the varbinds of @p pdu inside the walk into @p out, in order; note sysName. */
static void
take_bindings(struct record *r, FILE *out, const struct oid *root, const struct spdu_pdu *pdu,
              struct oid *last)
{
    struct spdu_binding_iter it;
    struct spdu_binding b;

    spdu_binding_iter_init(&it, pdu);
    while (spdu_binding_next(&it, &b) == FLEET_OK) {
        struct oid value_oid;
        if (!walk_in_subtree(root, &b.name) || b.value.tag >= BER_NO_SUCH_OBJECT) {
            break;
        }
        if (last->len && oid_cmp(&b.name, last) <= 0) {
            break; /* walk_response() reports it */
        }
        if (b.value.tag == BER_OID) {
            if (ber_oid_decode(b.value.v.bytes.ptr, b.value.v.bytes.len, &value_oid) != FLEET_OK) {
                continue;
            }
            b.value.v.oid = &value_oid;
        }
        snmprec_print_line(out, &b.name, &b.value);
        *last = b.name;
        r->snmp_oids++;
        if (b.name.len == 9 &&
            !memcmp(b.name.sub, (uint32_t[]){1, 3, 6, 1, 2, 1, 1, 5, 0}, 9 * sizeof(uint32_t)) &&
            b.value.tag == BER_OCTET_STRING && b.value.v.bytes.len && !r->sys_name) {
            r->sys_name = strndup((const char *)b.value.v.bytes.ptr, b.value.v.bytes.len);
        }
    }
}

static int
snmp_walk_run(struct record *r)
{
    const struct stress_options *o = r->o;
    struct oid root;
    struct walk_plan plan = {0};
    struct walk_column col;
    struct walk w;
    struct sockaddr_storage to;
    socklen_t to_len;
    char path[4096];
    FILE *out = NULL;
    int rc = -1;
    const struct oid *names[1];
    struct oid last = {0};
    struct rec_snmp *s = calloc(1, sizeof *s);

    oid_parse("1.3.6.1", &root);
    snprintf(path, sizeof path, "%s/" RECORD_SNMPREC, o->out_dir);
    to_len = netaddr_sockaddr(&o->ip_fam, o->ip, (uint16_t)(o->snmp_port ? o->snmp_port : 161), &to);
    if (s) {
        s->r = r;
        s->fd = -1;
    }
    if (!s || walk_plan_init(&plan, &root, 1, 1) != FLEET_OK ||
        (s->fd = socket(to.ss_family, SOCK_DGRAM, 0)) < 0 || connect(s->fd, (struct sockaddr *)&to, to_len)) {
        problem(r, "snmp", NULL, "cannot set up the walk: %s", strerror(errno));
        goto out;
    }
    if (o->v3_user && setup_v3(s)) {
        goto out;
    }
    if (!(out = fopen(path, "w"))) {
        problem(r, "snmp", NULL, "cannot write %s: %s", path, strerror(errno));
        goto out;
    }
    walk_start(&w, &plan, &col);
    while (!walk_finished(&w)) {
        uint32_t n = walk_request(&w, names);
        const struct spdu_pdu *pdu = s->v3 ? &s->msg.pdu : &s->m.pdu;
        const char *why = NULL;

        if (run_interrupted() || (s->v3 ? exchange_v3(s, names, n) : exchange(s, names, n))) {
            if (run_interrupted()) {
                /* As during the NETCONF steps: the folder keeps what was walked, the manifest says why. */
                problem(r, "interrupted", NULL, "%s during the SNMP walk", run_interrupted_name());
                r->stopped = 1;
                snprintf(r->stop_why, sizeof r->stop_why, "interrupted by %s", run_interrupted_name());
            }
            goto out;
        }
        if (pdu->error_status) {
            problem(r, "snmp", NULL, "error-status %d", (int)pdu->error_status);
            goto out;
        }
        take_bindings(r, out, &root, pdu, &last);
        if (walk_response(&w, pdu, &why) != FLEET_OK) {
            problem(r, "snmp", NULL, "unusable response: %s", why);
            goto out;
        }
        if (r->snmp_oids >= RECORD_SNMP_MAX_OIDS) {
            problem(r, "snmp", NULL, "the walk stopped after %u variables", RECORD_SNMP_MAX_OIDS);
            goto out;
        }
    }
    rc = 0;
out:
    if (out && fclose(out)) {
        rc = -1;
    }
    if (out && !r->snmp_oids) {
        unlink(path); /* nothing recorded: no snmp.snmprec rather than an empty one */
    }
    if (s && s->fd >= 0) {
        close(s->fd);
    }
    free(s);
    walk_plan_close(&plan);
    return rc;
}

/* ------------------------------------------------------------------------------------------------ */
/* Identity rules */

struct rule_finder {
    char *hostname;                  /* first ietf-system or openconfig-system hostname, owned */
    char *macs[RECORD_RULES_MAX];    /* distinct MAC-looking values, owned */
    size_t mac_count;                /* entries in macs */
    char *serials[RECORD_RULES_MAX]; /* distinct serial-number values, owned */
    size_t serial_count;             /* entries in serials */
};

static int
looks_like_mac(const char *s)
{
    if (strlen(s) != 17 || !strcmp(s, "00:00:00:00:00:00") || !strcasecmp(s, "ff:ff:ff:ff:ff:ff")) {
        return 0;
    }
    for (int i = 0; i < 17; i++) {
        int hex =
            (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F');
        if (i % 3 == 2 ? s[i] != ':' : !hex) {
            return 0;
        }
    }
    return 1;
}

static void
add_distinct(char **list, size_t *count, const char *s)
{
    for (size_t i = 0; i < *count; i++) {
        if (!strcmp(list[i], s)) {
            return;
        }
    }
    if (*count < RECORD_RULES_MAX) {
        list[(*count)++] = strdup(s);
    }
}

static void
rule_leaf(void *ctx, const struct xml_leaf *l)
{
    struct rule_finder *f = ctx;

    if (!l->text[0]) {
        return;
    }
    if (!f->hostname && is_name(l->local, l->local_len, "hostname") && l->ns &&
        (xmlscan_eq(l->ns, l->ns_len, SYS_NS) || xmlscan_eq(l->ns, l->ns_len, OC_SYS_NS))) {
        f->hostname = strdup(l->text);
    }
    if (is_name(l->local, l->local_len, "serial-no") || is_name(l->local, l->local_len, "serial-num") ||
        is_name(l->local, l->local_len, "serial-number") || is_name(l->local, l->local_len, "serial")) {
        add_distinct(f->serials, &f->serial_count, l->text);
    }
    if (looks_like_mac(l->text)) {
        add_distinct(f->macs, &f->mac_count, l->text);
    }
}

static void
add_rule(struct sbuf *b, int *first, const char *name, const char *match, const char *replace)
{
    sbuf_adds(b, *first ? "\n    {\"name\": " : ",\n    {\"name\": ");
    *first = 0;
    sbuf_add_json(b, name);
    sbuf_adds(b, ", \"match\": ");
    sbuf_add_json(b, match);
    sbuf_adds(b, ", \"replace\": ");
    sbuf_add_json(b, replace);
    sbuf_adds(b, "}");
}

static void
write_rules(struct record *r)
{
    struct rule_finder f = {0};
    struct xml_visitor v = {rule_leaf, NULL, &f};
    struct sbuf b = {0};
    const char *end;
    char why[256], addr[NETADDR_TEXT_BYTES], name[48], repl[512];
    const char *docs[2] = {r->running, r->state};
    int first = 1;

    for (int i = 0; i < 2; i++) {
        if (docs[i]) {
            xml_walk(docs[i], &v, &end, why, sizeof why);
        }
    }
    if (!f.hostname && r->sys_name) {
        f.hostname = strdup(r->sys_name);
    }
    sbuf_adds(&b, "{\n  \"rules\": [");
    if (f.hostname && strlen(f.hostname) < 256) {
        size_t n = strlen(f.hostname), digits = 0;
        while (digits < n && f.hostname[n - 1 - digits] >= '0' && f.hostname[n - 1 - digits] <= '9') {
            digits++;
        }
        snprintf(repl, sizeof repl, "%.*s%s{INDEX}", (int)(n - digits), f.hostname, digits ? "" : "-");
        add_rule(&b, &first, "hostname", f.hostname, repl);
    }
    netaddr_text(&r->o->ip_fam, r->o->ip, addr, sizeof addr);
    add_rule(&b, &first, "mgmt-address", addr, "{ADDR}");
    for (size_t i = 0; i < f.mac_count; i++) {
        char replace[32]; /* "{MAC+" and a size_t: gcc -fsanitize builds check it */
        snprintf(name, sizeof name, i ? "mac-%zu" : "base-mac", i + 1);
        if (i) {
            snprintf(replace, sizeof replace, "{MAC+%zu}", i);
        } else {
            snprintf(replace, sizeof replace, "{MAC}");
        }
        add_rule(&b, &first, name, f.macs[i], replace);
        free(f.macs[i]);
    }
    for (size_t i = 0; i < f.serial_count; i++) {
        snprintf(name, sizeof name, i ? "serial-%zu" : "serial", i + 1);
        add_rule(&b, &first, name, f.serials[i], "{SERIAL}");
        free(f.serials[i]);
    }
    sbuf_adds(&b, "\n  ]\n}\n");
    if (!b.failed) {
        write_out(r, "rules.json", b.buf, b.len);
    }
    free(f.hostname);
    sbuf_free(&b);
}

/* ------------------------------------------------------------------------------------------------ */
/* Manifest and the run */

static int
complete(const struct record *r)
{
    return !r->stopped && r->have_hello && r->running_ok && r->state_ok && r->schemas_fetched > 0;
}

static void
write_manifest(struct record *r)
{
    char ip_text[NETADDR_TEXT_BYTES];
    const struct stress_options *o = r->o;
    const char *transport = conn_transport_used();
    int ssh = !strcmp(transport, "ssh");
    struct sbuf b = {0};

    sbuf_adds(&b, "{\n  \"tool\": \"fleetsim-stress\", \"version\": ");
    sbuf_add_json(&b, FLEETSIM_VERSION);
    sbuf_printf(&b, ",\n  \"format\": 1,\n  \"source\": {\"host\": \"%s\", \"port\": %u, \"transport\": ",
                netaddr_text(&o->ip_fam, o->ip, ip_text, sizeof ip_text), (unsigned)o->port);
    sbuf_add_json(&b, strcmp(transport, "none") ? transport : (o->ssh > 0 ? "ssh" : "tcp"));
    sbuf_adds(&b, ", \"username\": ");
    json_string_or_null(&b, ssh || o->ncx_connect ? o->username : NULL);
    sbuf_printf(&b, "},\n  \"recorded_at\": \"%s\",\n  \"duration_s\": %.3f,\n", r->recorded_at,
                (double)(loop_clock_monotonic() - r->start_us) / 1e6);
    sbuf_printf(&b,
                "  \"counts\": {\"capabilities\": %zu, \"modules\": %" PRIu64 ", \"submodules\": %" PRIu64
                ", \"schemas_fetched\": %" PRIu64 ",\n             \"running_bytes\": %" PRIu64
                ", \"state_bytes\": %" PRIu64 ", \"snmp_oids\": %" PRIu64 "},\n",
                r->hello.cap_count, r->modules, r->submodules, r->schemas_fetched, r->running_bytes,
                r->state_bytes, r->snmp_oids);
    sbuf_printf(&b, "  \"nmda\": %s,\n  \"problems\": [", r->nmda ? "true" : "false");
    if (r->problems.len) {
        sbuf_add(&b, r->problems.buf, r->problems.len);
        sbuf_adds(&b, "\n  ");
    }
    sbuf_printf(&b, "],\n  \"complete\": %s\n}\n", complete(r) ? "true" : "false");
    if (b.failed || write_out(r, RECORD_MANIFEST, b.buf, b.len)) {
        fprintf(stderr, "fleetsim-stress: record: cannot write the manifest\n");
    }
    sbuf_free(&b);
}

static char *
ncx_connect_message(const struct stress_options *o, size_t *len)
{
    char ip_text[NETADDR_TEXT_BYTES];
    struct sbuf b = {0};

    sbuf_adds(&b, "<ncx-connect xmlns=\"http://netconfcentral.org/ns/yuma-ncx\" version=\"1\" user=\"");
    sbuf_add_xml(&b, o->username);
    sbuf_printf(&b, "\" address=\"%s\" magic=\"" NCX_MAGIC "\" transport=\"ssh\" port=\"%u\" />\n]]>]]>",
                netaddr_text(&o->ip_fam, o->ip, ip_text, sizeof ip_text),
                (unsigned)(o->ncx_ssh_port ? o->ncx_ssh_port : o->port));
    return sbuf_take(&b, len);
}

int
record_run(const struct stress_options *o)
{
    struct record r = {0};
    char ip_text[NETADDR_TEXT_BYTES];
    char path[4096];
    time_t now = time(NULL);
    struct tm tm;
    int rc = 1;

    r.o = o;
    r.conn.fd = -1;
    loop_timer_init(&r.timer);
    snprintf(path, sizeof path, "%s/yang", o->out_dir);
    if ((mkdir(o->out_dir, 0777) && errno != EEXIST) || (mkdir(path, 0777) && errno != EEXIST)) {
        fprintf(stderr, "fleetsim-stress: record: cannot create %s: %s\n", path, strerror(errno));
        return 2;
    }
    gmtime_r(&now, &tm);
    strftime(r.recorded_at, sizeof r.recorded_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    r.start_us = loop_clock_monotonic();
    r.loop = loop_new(64);
    if (!r.loop || ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &r.xml_ctx)) {
        fprintf(stderr, "fleetsim-stress: record: out of memory\n");
        rc = 2;
        goto cleanup;
    }
    if (run_preamble(o, &r.preamble, &r.preamble_len)) {
        rc = 2;
        goto cleanup;
    }
    if (o->ncx_connect && !(r.preamble = ncx_connect_message(o, &r.preamble_len))) {
        rc = 2;
        goto cleanup;
    }
    run_signals_catch(r.loop);
    if (connect_now(&r)) {
        problem(&r, "connection", NULL, "cannot create a socket: %s", strerror(errno));
        stop(&r, "cannot create a socket");
    } else {
        loop_run(r.loop);
    }
    conn_close(&r.conn);
    loop_timer_stop(r.loop, &r.timer);
    if (run_interrupted() && !r.stopped && r.step != REC_DONE) {
        problem(&r, "interrupted", NULL, "%s during %s", run_interrupted_name(), step_names[r.step]);
        r.stopped = 1;
        snprintf(r.stop_why, sizeof r.stop_why, "interrupted by %s", run_interrupted_name());
    }
    if (o->snmp_walk && !r.stopped) {
        snmp_walk_run(&r);
    }
    write_rules(&r);
    write_manifest(&r);
    printf("record: %s:%u into %s: %zu capabilities, %" PRIu64 " modules and %" PRIu64
           " submodules of %zu listed, running %" PRIu64 " bytes, state %" PRIu64 " bytes, snmp %" PRIu64
           " OIDs, %u problems, %s in %.3f s\n",
           netaddr_host(&o->ip_fam, o->ip, ip_text, sizeof ip_text), (unsigned)o->port, o->out_dir,
           r.hello.cap_count, r.modules, r.submodules, r.mod_count, r.running_bytes, r.state_bytes,
           r.snmp_oids, (unsigned)r.problem_count, complete(&r) ? "complete" : "NOT complete",
           (double)(loop_clock_monotonic() - r.start_us) / 1e6);
    printf("client CPU: %.3f s\n", stats_cpu_seconds());
    fflush(stdout);
    if (r.stopped) {
        fprintf(stderr, "fleetsim-stress: FAILED: record stopped: %s\n", r.stop_why);
    } else if (!complete(&r)) {
        fprintf(stderr,
                "fleetsim-stress: FAILED: the folder is not complete (see problems in %s/" RECORD_MANIFEST
                ")\n",
                o->out_dir);
    }
    rc = complete(&r) ? 0 : 1;
cleanup:
    rc = run_signals_release(rc);
    conn_close(&r.conn);
    hello_info_free(&r.hello);
    for (size_t i = 0; i < r.mod_count; i++) {
        free(r.mods[i].name);
        free(r.mods[i].revision);
    }
    free(r.mods);
    free(r.ylib);
    free(r.running);
    free(r.state);
    free(r.sys_name);
    free(r.preamble);
    sbuf_free(&r.problems);
    loop_free(r.loop);
    ly_ctx_destroy(r.xml_ctx);
    return rc;
}
