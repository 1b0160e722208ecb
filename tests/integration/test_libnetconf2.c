/*
 * fleetsim against an independent NETCONF client: libnetconf2's client API
 * over TCP sockets we open ourselves (nc_connect_inout). One server with 4
 * devices serves the whole suite; each test works on its own device or on
 * its own interface names so that the tests do not see each other's data:
 *   device 0: hello, schemas, edit semantics, filters, isolation (writer)
 *   device 1: isolation (reader), candidate and commit
 *   device 2: locks
 *   device 3: kill-session, monitoring
 * libnetconf2 builds its YANG context from the server (get-schema), storing
 * what it fetched in an empty temporary search path, which the tests check.
 * Replies are turned into XML text and every assertion prints that text when
 * it fails.
 *
 * Usage: test_libnetconf2 <path to fleetsim>
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
/* Debian builds libnetconf2 with SSH; its headers show the SSH client API only when told. */
#define NC_ENABLED_SSH
#include <libnetconf2/log.h>
#include <libnetconf2/messages_client.h>
#include <libnetconf2/netconf.h>
#include <libnetconf2/session_client.h>
#include <libssh/libssh.h>
#include <libyang/libyang.h>

#include "itest_server.h"

#define DEVICES 4
#define NC_NS   "urn:ietf:params:xml:ns:netconf:base:1.0"
#define IF_NS   "urn:ietf:params:xml:ns:yang:ietf-interfaces"
#define IANA_NS "urn:ietf:params:xml:ns:yang:iana-if-type"
#define NCM_NS  "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"
/* Base time limit of one RPC round trip (scaled by the multiplier). */
#define RPC_TIMEOUT_MS 5000
/* The project's own module, read from schemas/ like the server reads it. */
#define PROJECT_MODULE_FILE "schemas/fleetsim-netconf-transport.yang"

/* A libnetconf2 client session and the socket under it. */
struct client {
    struct nc_session *s; /* NULL once closed */
    int fd;               /* TCP connection; -1 once closed */
    uint32_t dev;         /* device index */
};

static struct itest_server server;  /* the one server of the suite */
static const char *fleetsim_binary; /* argv[1], for tests that start a server of their own */
static char schema_dir[64];         /* libnetconf2's search path: starts empty, filled by get-schema */

static int
rpc_timeout(void)
{
    return itest_timeout_ms(RPC_TIMEOUT_MS);
}

/* ---------------------------------------------------------------- scratch memory */

/*
 * Strings made during a test (replies, requests, fragments) are kept here and
 * freed after the test, also when an assertion ended it early: a sanitizer
 * run then reports only real leaks. The cost is a test's strings living until
 * its end, a few kilobytes.
 */
static void **scratch;     /* pointers to free after the current test */
static size_t scratch_len; /* used entries */
static size_t scratch_cap; /* allocated entries */

/* Take ownership of @p p (may be NULL) until scratch_release(); returns @p p. */
static void *
keep(void *p)
{
    if (p && scratch_len == scratch_cap) {
        size_t cap = scratch_cap ? scratch_cap * 2 : 256;
        void **grown = realloc(scratch, cap * sizeof *grown);
        if (!grown) {
            free(p);
            fail_msg("out of memory");
        }
        scratch = grown;
        scratch_cap = cap;
    }
    if (p) {
        scratch[scratch_len++] = p;
    }
    return p;
}

static void
scratch_release(void)
{
    for (size_t i = 0; i < scratch_len; i++) {
        free(scratch[i]);
    }
    free(scratch);
    scratch = NULL;
    scratch_len = scratch_cap = 0;
}

/* ---------------------------------------------------------------- text helpers */

/* printf into scratch memory; never NULL (fails the test). */
static char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));

static char *
fmt(const char *format, ...)
{
    va_list ap;
    char *out = NULL;
    int n;

    va_start(ap, format);
    n = vasprintf(&out, format, ap);
    va_end(ap);
    if (n < 0) {
        fail_msg("out of memory");
    }
    return keep(out);
}

/*
 * The text of the first element named @p name (any prefix, any attributes)
 * at or after @p from (in scratch memory), or NULL. An empty element gives "".
 */
static char *
xml_text(const char *from, const char *name)
{
    size_t nlen = strlen(name);

    for (const char *p = from ? strchr(from, '<') : NULL; p; p = strchr(p + 1, '<')) {
        const char *tag = p + 1;
        const char *colon;
        const char *end;
        const char *close;

        if (*tag == '/' || *tag == '?' || *tag == '!') {
            continue;
        }
        end = tag + strcspn(tag, " />");
        colon = memchr(tag, ':', (size_t)(end - tag));
        if (colon) {
            tag = colon + 1;
        }
        if ((size_t)(end - tag) != nlen || strncmp(tag, name, nlen)) {
            continue;
        }
        end = strchr(end, '>');
        if (!end) {
            return NULL;
        }
        if (end[-1] == '/') {
            return keep(strdup(""));
        }
        close = strchr(end + 1, '<');
        return close ? keep(strndup(end + 1, (size_t)(close - end - 1))) : NULL;
    }
    return NULL;
}

/* ---------------------------------------------------------------- sessions */

/*
 * Sessions a test opened and has not closed yet, closed after the test, also
 * when it failed. The registry holds copies, not the tests' struct client:
 * those live on a stack that a failed assertion has already left.
 */
#define MAX_OPEN_SESSIONS 8
static struct {
    struct nc_session *s; /* NULL when the slot is free */
    int fd;               /* its socket */
} open_sessions[MAX_OPEN_SESSIONS];

static void
forget_session(const struct nc_session *s)
{
    for (int i = 0; i < MAX_OPEN_SESSIONS; i++) {
        if (s && open_sessions[i].s == s) {
            open_sessions[i].s = NULL;
            open_sessions[i].fd = -1;
        }
    }
}

/* Rude end of a session: the connection goes away without close-session. */
static void
drop_session(struct nc_session *s, int fd)
{
    forget_session(s);
    /* Shut down first: libnetconf2 then sees EOF instead of writing into a reused descriptor. */
    shutdown(fd, SHUT_RDWR);
    nc_session_free(s, NULL);
    close(fd);
}

static void
client_open(struct client *c, uint32_t dev)
{
    int slot = 0;

    while (slot < MAX_OPEN_SESSIONS && open_sessions[slot].s) {
        slot++;
    }
    if (slot == MAX_OPEN_SESSIONS) {
        fail_msg("a test may hold at most %d sessions", MAX_OPEN_SESSIONS);
    }
    c->dev = dev;
    c->s = NULL;
    c->fd = itest_connect((uint16_t)(server.base_port + dev), rpc_timeout());
    if (c->fd < 0) {
        fail_msg("cannot connect to device %u", (unsigned)dev);
    }
    c->s = nc_connect_inout(c->fd, c->fd, NULL);
    if (!c->s) {
        close(c->fd);
        c->fd = -1;
        itest_server_print_log(&server);
        fail_msg("nc_connect_inout to device %u failed (libnetconf2's messages are above)", (unsigned)dev);
    }
    open_sessions[slot].s = c->s;
    open_sessions[slot].fd = c->fd;
}

/* Polite end: libnetconf2 sends close-session and waits for its reply. */
static void
client_close(struct client *c)
{
    forget_session(c->s);
    nc_session_free(c->s, NULL);
    close(c->fd);
    c->s = NULL;
    c->fd = -1;
}

/* Rude end: the connection goes away without close-session. */
static void
client_drop(struct client *c)
{
    drop_session(c->s, c->fd);
    c->s = NULL;
    c->fd = -1;
}

/*
 * Send @p rpc (freed here) and return its reply as XML text in scratch memory:
 * the <rpc-reply> envelope (ok or rpc-errors) followed by the output (data).
 */
static char *
call(struct client *c, struct nc_rpc *rpc)
{
    struct lyd_node *envp = NULL;
    struct lyd_node *op = NULL;
    char *env_xml = NULL;
    char *op_xml = NULL;
    char *out;
    uint64_t msgid = 0;
    NC_MSG_TYPE t;

    if (!rpc) {
        fail_msg("cannot build the RPC");
    }
    t = nc_send_rpc(c->s, rpc, rpc_timeout(), &msgid);
    if (t != NC_MSG_RPC) {
        nc_rpc_free(rpc);
        fail_msg("nc_send_rpc to device %u returned %d", (unsigned)c->dev, (int)t);
    }
    do {
        t = nc_recv_reply(c->s, rpc, msgid, rpc_timeout(), &envp, &op);
    } while (t == NC_MSG_NOTIF);
    nc_rpc_free(rpc);
    if (t != NC_MSG_REPLY) {
        lyd_free_all(envp);
        lyd_free_all(op);
        fail_msg(
            "no valid reply from device %u (nc_recv_reply returned %d; libnetconf2's messages are above)",
            (unsigned)c->dev, (int)t);
    }
    lyd_print_mem(&env_xml, envp, LYD_XML, LYD_PRINT_WITHSIBLINGS | LYD_PRINT_SHRINK);
    if (op) {
        lyd_print_mem(&op_xml, op, LYD_XML, LYD_PRINT_WITHSIBLINGS | LYD_PRINT_SHRINK);
    }
    out = fmt("%s%s", env_xml ? env_xml : "", op_xml ? op_xml : "");
    free(env_xml);
    free(op_xml);
    lyd_free_all(envp);
    lyd_free_all(op);
    return out;
}

static void
check_ok(const char *reply, const char *what)
{
    if (!strstr(reply, "<ok") || strstr(reply, "rpc-error")) {
        fail_msg("%s: expected <ok/>, got:\n%s", what, reply);
    }
}

/* The reply carries exactly the expected error (first rpc-error); @p type may be NULL for "either". */
static void
check_error(const char *reply, const char *type, const char *tag, const char *what)
{
    char *got_tag = xml_text(reply, "error-tag");
    char *got_type = xml_text(reply, "error-type");
    int good = got_tag && !strcmp(got_tag, tag) && (!type || (got_type && !strcmp(got_type, type)));

    if (!good) {
        fail_msg("%s: expected rpc-error %s/%s, got:\n%s", what, type ? type : "*", tag, reply);
    }
}

static char *
iface_xml(const char *name, const char *op, const char *inner)
{
    return fmt("<interfaces xmlns=\"" IF_NS "\" xmlns:nc=\"" NC_NS "\" xmlns:ianaift=\"" IANA_NS "\">"
               "<interface%s%s%s><name>%s</name>%s</interface></interfaces>",
               op ? " nc:operation=\"" : "", op ? op : "", op ? "\"" : "", name, inner ? inner : "");
}

#define TYPE_ETH "<type>ianaift:ethernetCsmacd</type>"

static char *
edit(struct client *c, NC_DATASTORE ds, NC_RPC_EDIT_DFLTOP dflt, NC_RPC_EDIT_TESTOPT test,
     NC_RPC_EDIT_ERROPT err, char *content)
{
    return call(c, nc_rpc_edit(ds, dflt, test, err, content, NC_PARAMTYPE_CONST));
}

/* Plain merge into @p ds that must succeed. */
static void
edit_ok(struct client *c, NC_DATASTORE ds, char *content)
{
    check_ok(edit(c, ds, NC_RPC_EDIT_DFLTOP_UNKNOWN, NC_RPC_EDIT_TESTOPT_UNKNOWN, NC_RPC_EDIT_ERROPT_UNKNOWN,
                  content),
             "edit-config");
}

static char *
get_config(struct client *c, NC_DATASTORE ds, const char *filter)
{
    return call(c, nc_rpc_getconfig(ds, filter, NC_WD_UNKNOWN, NC_PARAMTYPE_CONST));
}

/* Whether the datastore holds an interface named @p name. */
static int
has_iface(struct client *c, NC_DATASTORE ds, const char *name)
{
    char *reply = get_config(c, ds, NULL);
    char *needle = fmt("<name>%s</name>", name);

    if (strstr(reply, "rpc-error")) {
        fail_msg("get-config failed:\n%s", reply);
    }
    return strstr(reply, needle) != NULL;
}

/* The interface element named @p name in a get-config reply, as text, or NULL. */
static char *
iface_in(struct client *c, NC_DATASTORE ds, const char *name)
{
    char *reply = get_config(c, ds, NULL);
    char *needle = fmt("<name>%s</name>", name);
    const char *at = strstr(reply, needle);
    const char *end = at ? strstr(at, "</interface>") : NULL;

    return end ? keep(strndup(at, (size_t)(end - at))) : NULL;
}

/* ---------------------------------------------------------------- hello and schemas */

/* A module the hello must advertise; revision NULL means "some YYYY-MM-DD". */
struct expected_module {
    const char *name;
    const char *revision;
};

static const struct expected_module expected_modules[] = {
    {"ietf-interfaces", "2018-02-20"},
    {"iana-if-type", NULL},
    {"ietf-netconf", "2011-06-01"},
    {"ietf-netconf-with-defaults", "2011-06-01"},
    {"ietf-netconf-monitoring", "2010-10-04"},
    {"ietf-yang-library", "2019-01-04"},
    {"ietf-inet-types", "2013-07-15"},
    {"ietf-yang-types", "2013-07-15"},
    {"ietf-datastores", "2018-02-14"},
    {"ietf-yang-metadata", "2016-08-05"},
    {"ietf-yang-schema-mount", "2019-01-14"},
    {"ietf-yang-structure-ext", "2020-06-17"},
};

/* Name, namespace and newest revision of the project's module, read from its file in schemas/. */
struct module_file {
    char name[128];
    char ns[256];
    char revision[16];
};

static void
read_project_module(struct module_file *m)
{
    const char *src = getenv("FLEETSIM_SOURCE_DIR");
    char *path = fmt("%s/%s", src ? src : ".", PROJECT_MODULE_FILE);
    FILE *f = fopen(path, "r");
    char line[512];

    memset(m, 0, sizeof *m);
    if (!f) {
        fail_msg("cannot read %s: %s (is FLEETSIM_SOURCE_DIR set?)", path, strerror(errno));
    }
    while (fgets(line, sizeof line, f)) {
        const char *p = line + strspn(line, " \t");
        if (!m->name[0] && sscanf(p, "module %127[^ {]", m->name) == 1) {
            continue;
        }
        if (!m->ns[0] && sscanf(p, "namespace \"%255[^\"]\"", m->ns) == 1) {
            continue;
        }
        if (!m->revision[0] && sscanf(p, "revision %15[0-9-]", m->revision) == 1) {
            continue;
        }
    }
    fclose(f);
    if (!m->name[0] || !m->ns[0] || !m->revision[0]) {
        fail_msg("%s: cannot find module name, namespace and revision", path);
    }
}

/* The capability advertising module @p name, or NULL. */
static const char *
module_cap(const char *const *caps, const char *name)
{
    char *key = fmt("module=%s", name);
    size_t klen = strlen(key);
    const char *found = NULL;

    for (size_t i = 0; caps[i] && !found; i++) {
        const char *at = strstr(caps[i], key);
        if (at && at > caps[i] && (at[-1] == '?' || at[-1] == '&') && (at[klen] == '&' || at[klen] == '\0')) {
            found = caps[i];
        }
    }
    return found;
}

/* Value of parameter @p param of capability @p cap (scratch memory), or NULL. */
static char *
cap_param(const char *cap, const char *param)
{
    const char *q = strchr(cap, '?');
    size_t plen = strlen(param);

    for (const char *p = q; p; p = strchr(p + 1, '&')) {
        if (!strncmp(p + 1, param, plen) && p[1 + plen] == '=') {
            const char *v = p + 2 + plen;
            return keep(strndup(v, strcspn(v, "&")));
        }
    }
    return NULL;
}

static int
is_date(const char *s)
{
    int y;
    int m;
    int d;
    char tail;

    return s && strlen(s) == 10 && sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &tail) == 3 && m >= 1 && m <= 12 &&
           d >= 1 && d <= 31;
}

static int
has_cap(const char *const *caps, const char *cap, int prefix_only)
{
    for (size_t i = 0; caps[i]; i++) {
        if (prefix_only ? !strncmp(caps[i], cap, strlen(cap)) : !strcmp(caps[i], cap)) {
            return 1;
        }
    }
    return 0;
}

static char *
caps_text(const char *const *caps)
{
    size_t len = 1;
    char *out;

    for (size_t i = 0; caps[i]; i++) {
        len += strlen(caps[i]) + 3;
    }
    out = keep(calloc(1, len));
    for (size_t i = 0; out && caps[i]; i++) {
        strcat(out, "  ");
        strcat(out, caps[i]);
        strcat(out, "\n");
    }
    return out;
}

static void
test_hello_advertises_every_capability(void **state)
{
    static const char *const exact[] = {
        "urn:ietf:params:netconf:base:1.0",
        "urn:ietf:params:netconf:base:1.1",
        "urn:ietf:params:netconf:capability:writable-running:1.0",
        "urn:ietf:params:netconf:capability:candidate:1.0",
        "urn:ietf:params:netconf:capability:rollback-on-error:1.0",
        "urn:ietf:params:netconf:capability:validate:1.0",
        "urn:ietf:params:netconf:capability:validate:1.1",
        "urn:ietf:params:netconf:capability:startup:1.0",
        "urn:ietf:params:netconf:capability:xpath:1.0",
    };
    static const char *const prefixed[] = {
        "urn:ietf:params:netconf:capability:with-defaults:1.0?basic-mode=",
        "urn:ietf:params:netconf:capability:yang-library:1.0?revision=2019-01-04&module-set-id=",
        "urn:ietf:params:netconf:capability:yang-library:1.1?revision=2019-01-04&content-id=",
    };
    static const char *const netconf_features[] = {"writable-running", "candidate", "rollback-on-error",
                                                   "validate",         "startup",   "xpath"};
    struct client c;
    const char *const *caps;
    struct module_file project;
    char *all;

    (void)state;
    read_project_module(&project);
    client_open(&c, 0);
    caps = nc_session_get_cpblts(c.s);
    assert_non_null(caps);
    all = caps_text(caps);

    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        if (!has_cap(caps, exact[i], 0)) {
            fail_msg("capability %s is missing from the hello:\n%s", exact[i], all);
        }
    }
    for (size_t i = 0; i < sizeof prefixed / sizeof prefixed[0]; i++) {
        if (!has_cap(caps, prefixed[i], 1)) {
            fail_msg("no capability starting with %s in the hello:\n%s", prefixed[i], all);
        }
    }

    /* Each expected module, with the namespace libnetconf2 loaded for it and its revision. */
    for (size_t i = 0; i < sizeof expected_modules / sizeof expected_modules[0] + 1; i++) {
        const char *name = i < sizeof expected_modules / sizeof expected_modules[0] ? expected_modules[i].name
                                                                                    : project.name;
        const char *want_rev = i < sizeof expected_modules / sizeof expected_modules[0]
                                   ? expected_modules[i].revision
                                   : project.revision;
        const char *cap = module_cap(caps, name);
        char *rev = cap ? cap_param(cap, "revision") : NULL;
        const struct lys_module *mod;

        if (!cap) {
            fail_msg("no module capability for %s in the hello:\n%s", name, all);
        }
        if (!is_date(rev) || (want_rev && strcmp(rev, want_rev))) {
            fail_msg("module capability of %s has revision \"%s\", expected %s:\n  %s", name,
                     rev ? rev : "(none)", want_rev ? want_rev : "a date", cap);
        }
        mod = ly_ctx_get_module(nc_session_get_ctx(c.s), name, rev);
        if (!mod) {
            fail_msg("libnetconf2 did not load %s@%s from the server", name, rev);
        }
        if (strncmp(cap, mod->ns, strlen(mod->ns)) || cap[strlen(mod->ns)] != '?') {
            fail_msg("capability of %s does not start with its namespace %s:\n  %s", name, mod->ns, cap);
        }
        if (i == sizeof expected_modules / sizeof expected_modules[0] && strcmp(mod->ns, project.ns)) {
            fail_msg("%s has namespace %s on the wire but %s in %s", name, mod->ns, project.ns,
                     PROJECT_MODULE_FILE);
        }
    }

    /* Every ietf-netconf feature behind an advertised capability is listed. */
    {
        char *features = cap_param(module_cap(caps, "ietf-netconf"), "features");
        for (size_t i = 0; i < sizeof netconf_features / sizeof netconf_features[0]; i++) {
            char *padded = fmt(",%s,", features ? features : "");
            char *want = fmt(",%s,", netconf_features[i]);
            if (!strstr(padded, want)) {
                fail_msg("ietf-netconf capability lacks feature %s:\n  %s", netconf_features[i],
                         module_cap(caps, "ietf-netconf"));
            }
        }
    }

    /* Every module capability carries a revision. */
    for (size_t i = 0; caps[i]; i++) {
        if (strstr(caps[i], "module=")) {
            char *rev = cap_param(caps[i], "revision");
            if (!is_date(rev)) {
                fail_msg("module capability without a revision: %s", caps[i]);
            }
        }
    }
    client_close(&c);
}

/* libnetconf2 fetched the server's own modules with get-schema into its (initially empty) search path. */
static void
test_client_loads_schemas_with_get_schema(void **state)
{
    static const char *const fetched[] = {"ietf-interfaces@2018-02-20.yang", "ietf-netconf@2011-06-01.yang",
                                          "ietf-netconf-with-defaults@2011-06-01.yang"};
    struct module_file project;
    struct client c;
    char *path;
    struct stat st;

    (void)state;
    read_project_module(&project);
    client_open(&c, 0);
    for (size_t i = 0; i < sizeof fetched / sizeof fetched[0] + 1; i++) {
        path = i < sizeof fetched / sizeof fetched[0]
                   ? fmt("%s/%s", schema_dir, fetched[i])
                   : fmt("%s/%s@%s.yang", schema_dir, project.name, project.revision);
        if (stat(path, &st) || st.st_size == 0) {
            fail_msg("libnetconf2 did not store %s from get-schema", path);
        }
    }
    /* The identityref of our transport only parses in a context holding our module. */
    assert_non_null(ly_ctx_get_module_implemented(nc_session_get_ctx(c.s), project.name));
    assert_non_null(ly_ctx_get_module_implemented(nc_session_get_ctx(c.s), "ietf-interfaces"));
    client_close(&c);
}

static void
test_get_schema_returns_every_advertised_module(void **state)
{
    struct client c;
    const char *const *caps;
    int count = 0;

    (void)state;
    client_open(&c, 0);
    caps = nc_session_get_cpblts(c.s);
    for (size_t i = 0; caps[i]; i++) {
        char *name = strstr(caps[i], "module=") ? cap_param(caps[i], "module") : NULL;
        char *rev = name ? cap_param(caps[i], "revision") : NULL;
        char *reply;
        char *text;
        char *want;

        if (!name) {
            continue;
        }
        reply = call(&c, nc_rpc_getschema(name, rev, "yang", NC_PARAMTYPE_CONST));
        text = xml_text(reply, "data");
        want = fmt("module %s", name);
        if (!text || strncmp(text, want, strlen(want))) {
            fail_msg("get-schema of %s@%s: expected text starting with \"%s\", got:\n%s", name, rev, want,
                     reply);
        }
        count++;
    }
    assert_true(count >= (int)(sizeof expected_modules / sizeof expected_modules[0]) + 1);
    client_close(&c);
}

static void
test_get_schema_of_unknown_module_is_invalid_value(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    /* RFC 6022 section 3.1: an unknown identifier is invalid-value. */
    check_error(call(&c, nc_rpc_getschema("no-such-module", NULL, "yang", NC_PARAMTYPE_CONST)), NULL,
                "invalid-value", "get-schema of an unknown module");
    client_close(&c);
}

/* ---------------------------------------------------------------- datastores */

static void
test_edit_on_one_device_is_invisible_on_another(void **state)
{
    struct client d0;
    struct client d1;

    (void)state;
    client_open(&d0, 0);
    client_open(&d1, 1);
    edit_ok(&d0, NC_DATASTORE_RUNNING, iface_xml("iso0", "create", TYPE_ETH));
    assert_true(has_iface(&d0, NC_DATASTORE_RUNNING, "iso0"));
    if (has_iface(&d1, NC_DATASTORE_RUNNING, "iso0")) {
        fail_msg("interface created on device 0 shows up on device 1");
    }
    /* And the other way round. */
    edit_ok(&d1, NC_DATASTORE_RUNNING, iface_xml("iso1", "create", TYPE_ETH));
    assert_false(has_iface(&d0, NC_DATASTORE_RUNNING, "iso1"));
    edit_ok(&d1, NC_DATASTORE_RUNNING, iface_xml("iso1", "delete", NULL));
    client_close(&d0);
    client_close(&d1);
}

static void
test_candidate_commit_and_discard(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 1);
    edit_ok(&c, NC_DATASTORE_CANDIDATE, iface_xml("cand0", NULL, TYPE_ETH));
    assert_true(has_iface(&c, NC_DATASTORE_CANDIDATE, "cand0"));
    if (has_iface(&c, NC_DATASTORE_RUNNING, "cand0")) {
        fail_msg("an edit of the candidate changed running before commit");
    }
    check_ok(call(&c, nc_rpc_commit(0, 0, NULL, NULL, NC_PARAMTYPE_CONST)), "commit");
    assert_true(has_iface(&c, NC_DATASTORE_RUNNING, "cand0"));

    /* Discard: the candidate goes back to running. */
    edit_ok(&c, NC_DATASTORE_CANDIDATE, iface_xml("cand1", NULL, TYPE_ETH));
    edit_ok(&c, NC_DATASTORE_CANDIDATE, iface_xml("cand0", "delete", NULL));
    check_ok(call(&c, nc_rpc_discard()), "discard-changes");
    assert_false(has_iface(&c, NC_DATASTORE_CANDIDATE, "cand1"));
    assert_true(has_iface(&c, NC_DATASTORE_CANDIDATE, "cand0"));
    assert_false(has_iface(&c, NC_DATASTORE_RUNNING, "cand1"));
    assert_true(has_iface(&c, NC_DATASTORE_RUNNING, "cand0"));
    client_close(&c);
}

static void
test_copy_config_validate_and_delete_startup(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 1);
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("copy0", NULL, TYPE_ETH));
    check_ok(call(&c, nc_rpc_validate(NC_DATASTORE_RUNNING, NULL, NC_PARAMTYPE_CONST)), "validate running");
    check_ok(call(&c, nc_rpc_copy(NC_DATASTORE_STARTUP, NULL, NC_DATASTORE_RUNNING, NULL, NC_WD_UNKNOWN,
                                  NC_PARAMTYPE_CONST)),
             "copy-config running to startup");
    assert_true(has_iface(&c, NC_DATASTORE_STARTUP, "copy0"));
    check_ok(call(&c, nc_rpc_delete(NC_DATASTORE_STARTUP, NULL, NC_PARAMTYPE_CONST)),
             "delete-config startup");
    assert_false(has_iface(&c, NC_DATASTORE_STARTUP, "copy0"));
    assert_true(has_iface(&c, NC_DATASTORE_RUNNING, "copy0"));

    /* An inline configuration replaces the whole candidate; discard-changes brings running back. */
    check_ok(call(&c, nc_rpc_copy(NC_DATASTORE_CANDIDATE, NULL, NC_DATASTORE_CONFIG,
                                  iface_xml("copy1", NULL, TYPE_ETH), NC_WD_UNKNOWN, NC_PARAMTYPE_CONST)),
             "copy-config of an inline configuration to candidate");
    assert_true(has_iface(&c, NC_DATASTORE_CANDIDATE, "copy1"));
    assert_false(has_iface(&c, NC_DATASTORE_CANDIDATE, "copy0"));
    /* validate:1.1 takes an inline configuration too, and reports what is wrong with it. */
    check_error(
        call(&c, nc_rpc_validate(NC_DATASTORE_CONFIG, iface_xml("copy2", NULL, "<enabled>maybe</enabled>"),
                                 NC_PARAMTYPE_CONST)),
        NULL, "invalid-value", "validate of an inline configuration with a bad value");
    check_ok(call(&c, nc_rpc_discard()), "discard-changes");
    assert_true(has_iface(&c, NC_DATASTORE_CANDIDATE, "copy0"));
    client_close(&c);
}

/* ---------------------------------------------------------------- locks and sessions */

static void
test_lock_denied_names_holder_and_blocks_edits(void **state)
{
    struct client a;
    struct client b;
    char *reply;
    char *info;
    char *sid;
    char *want;

    (void)state;
    client_open(&a, 2);
    client_open(&b, 2);
    check_ok(call(&a, nc_rpc_lock(NC_DATASTORE_RUNNING)), "lock running by A");

    /* RFC 6241 7.5: lock-denied, error-info session-id of the holder. */
    reply = call(&b, nc_rpc_lock(NC_DATASTORE_RUNNING));
    info = strstr(reply, "error-info");
    sid = xml_text(info, "session-id");
    want = fmt("%u", (unsigned)nc_session_get_id(a.s));
    if (!sid || strcmp(sid, want)) {
        fail_msg("second lock: expected error-info session-id %s (the holder), got:\n%s", want, reply);
    }
    check_error(reply, "protocol", "lock-denied", "second lock of running");

    /* RFC 6241 7.5: the holder's lock makes the datastore in use for everyone else. */
    check_error(edit(&b, NC_DATASTORE_RUNNING, NC_RPC_EDIT_DFLTOP_UNKNOWN, NC_RPC_EDIT_TESTOPT_UNKNOWN,
                     NC_RPC_EDIT_ERROPT_UNKNOWN, iface_xml("lock-b", NULL, TYPE_ETH)),
                NULL, "in-use", "edit-config of running locked by another session");
    assert_false(has_iface(&a, NC_DATASTORE_RUNNING, "lock-b"));
    edit_ok(&a, NC_DATASTORE_RUNNING, iface_xml("lock-a", NULL, TYPE_ETH));

    /* RFC 6241 7.6: unlocking someone else's lock fails. */
    check_error(call(&b, nc_rpc_unlock(NC_DATASTORE_RUNNING)), NULL, "operation-failed",
                "unlock of another session's lock");

    /* Candidate lock: the same rules. */
    check_ok(call(&a, nc_rpc_lock(NC_DATASTORE_CANDIDATE)), "lock candidate by A");
    check_error(edit(&b, NC_DATASTORE_CANDIDATE, NC_RPC_EDIT_DFLTOP_UNKNOWN, NC_RPC_EDIT_TESTOPT_UNKNOWN,
                     NC_RPC_EDIT_ERROPT_UNKNOWN, iface_xml("lock-b", NULL, TYPE_ETH)),
                NULL, "in-use", "edit-config of candidate locked by another session");
    check_ok(call(&a, nc_rpc_unlock(NC_DATASTORE_CANDIDATE)), "unlock candidate");
    check_ok(call(&a, nc_rpc_unlock(NC_DATASTORE_RUNNING)), "unlock running");
    check_ok(call(&b, nc_rpc_lock(NC_DATASTORE_RUNNING)), "lock running by B after A unlocked");
    check_ok(call(&b, nc_rpc_unlock(NC_DATASTORE_RUNNING)), "unlock running by B");
    client_close(&a);
    client_close(&b);
}

/* Lock @p ds from @p c, retrying until @p timeout_ms passes; returns the last reply. */
static char *
lock_eventually(struct client *c, NC_DATASTORE ds, int timeout_ms)
{
    char *reply = NULL;

    for (int waited = 0;; waited += 20) {
        reply = call(c, nc_rpc_lock(ds));
        if (!strstr(reply, "rpc-error") || waited >= timeout_ms) {
            return reply;
        }
        usleep(20 * 1000);
    }
}

static void
test_lock_released_when_holder_disconnects(void **state)
{
    struct client a;
    struct client b;

    (void)state;
    client_open(&a, 2);
    client_open(&b, 2);
    check_ok(call(&a, nc_rpc_lock(NC_DATASTORE_RUNNING)), "lock running by A");
    check_error(call(&b, nc_rpc_lock(NC_DATASTORE_RUNNING)), "protocol", "lock-denied",
                "lock while A holds it");
    /* A goes away without close-session; the server notices the EOF and drops A's lock. */
    client_drop(&a);
    check_ok(lock_eventually(&b, NC_DATASTORE_RUNNING, rpc_timeout()), "lock after the holder disconnected");
    check_ok(call(&b, nc_rpc_unlock(NC_DATASTORE_RUNNING)), "unlock");

    /* The same after a polite close-session. */
    client_open(&a, 2);
    check_ok(call(&a, nc_rpc_lock(NC_DATASTORE_CANDIDATE)), "lock candidate by A");
    client_close(&a);
    check_ok(lock_eventually(&b, NC_DATASTORE_CANDIDATE, rpc_timeout()), "lock after the holder closed");
    check_ok(call(&b, nc_rpc_unlock(NC_DATASTORE_CANDIDATE)), "unlock candidate");
    client_close(&b);
}

/* Wait until the peer closes @p fd (EOF or reset), discarding anything sent before. Returns 1 when closed. */
static int
wait_closed(int fd, int timeout_ms)
{
    char buf[4096];

    for (int waited = 0; waited <= timeout_ms; waited += 50) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 50) == 1) {
            ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                return 1;
            }
        }
    }
    return 0;
}

static void
test_kill_session_closes_victim(void **state)
{
    struct client victim;
    struct client killer;

    (void)state;
    client_open(&victim, 3);
    client_open(&killer, 3);
    check_ok(call(&victim, nc_rpc_lock(NC_DATASTORE_RUNNING)), "lock by the victim");
    check_ok(call(&killer, nc_rpc_kill(nc_session_get_id(victim.s))), "kill-session");
    if (!wait_closed(victim.fd, rpc_timeout())) {
        fail_msg("the killed session's connection is still open after %d ms", rpc_timeout());
    }
    /* RFC 6241 7.9: the victim's locks are released. */
    check_ok(call(&killer, nc_rpc_lock(NC_DATASTORE_RUNNING)), "lock after the holder was killed");
    check_ok(call(&killer, nc_rpc_unlock(NC_DATASTORE_RUNNING)), "unlock");
    client_drop(&victim);
    client_close(&killer);
}

static void
test_kill_own_session_is_invalid_value(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 3);
    /* RFC 6241 7.9: killing the current session is invalid-value. */
    check_error(call(&c, nc_rpc_kill(nc_session_get_id(c.s))), NULL, "invalid-value",
                "kill-session of itself");
    check_ok(call(&c, nc_rpc_discard()), "the session still works");
    client_close(&c);
}

/* ---------------------------------------------------------------- edit-config semantics */

static char *
edit_plain(struct client *c, char *content)
{
    return edit(c, NC_DATASTORE_RUNNING, NC_RPC_EDIT_DFLTOP_UNKNOWN, NC_RPC_EDIT_TESTOPT_UNKNOWN,
                NC_RPC_EDIT_ERROPT_UNKNOWN, content);
}

static void
test_edit_create_existing_is_data_exists(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("sem-create", "create", TYPE_ETH));
    check_error(edit_plain(&c, iface_xml("sem-create", "create", TYPE_ETH)), "application", "data-exists",
                "create of an existing interface");
    client_close(&c);
}

static void
test_edit_delete_missing_is_data_missing(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    check_error(edit_plain(&c, iface_xml("sem-never", "delete", NULL)), "application", "data-missing",
                "delete of a missing interface");
    client_close(&c);
}

static void
test_edit_remove_missing_is_ok(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    check_ok(edit_plain(&c, iface_xml("sem-never", "remove", NULL)), "remove of a missing interface");
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("sem-remove", NULL, TYPE_ETH));
    check_ok(edit_plain(&c, iface_xml("sem-remove", "remove", NULL)), "remove of an existing interface");
    assert_false(has_iface(&c, NC_DATASTORE_RUNNING, "sem-remove"));
    client_close(&c);
}

static void
test_edit_replace_drops_unlisted_leaves(void **state)
{
    struct client c;
    char *got;

    (void)state;
    client_open(&c, 0);
    edit_ok(
        &c, NC_DATASTORE_RUNNING,
        iface_xml("sem-replace", NULL, TYPE_ETH "<description>old</description><enabled>false</enabled>"));
    edit_ok(&c, NC_DATASTORE_RUNNING,
            iface_xml("sem-replace", "replace", TYPE_ETH "<description>new</description>"));
    got = iface_in(&c, NC_DATASTORE_RUNNING, "sem-replace");
    if (!got || !strstr(got, "<description>new</description>") || strstr(got, "<enabled>false</enabled>")) {
        fail_msg("after replace expected description \"new\" and no enabled=false, got:\n%s",
                 got ? got : "(none)");
    }

    /* default-operation replace on the whole interfaces container replaces the list. */
    check_ok(edit(&c, NC_DATASTORE_CANDIDATE, NC_RPC_EDIT_DFLTOP_REPLACE, NC_RPC_EDIT_TESTOPT_UNKNOWN,
                  NC_RPC_EDIT_ERROPT_UNKNOWN, iface_xml("sem-only", NULL, TYPE_ETH)),
             "edit-config default-operation replace");
    assert_true(has_iface(&c, NC_DATASTORE_CANDIDATE, "sem-only"));
    assert_false(has_iface(&c, NC_DATASTORE_CANDIDATE, "sem-replace"));
    check_ok(call(&c, nc_rpc_discard()), "discard-changes");
    client_close(&c);
}

static void
test_edit_merge_keeps_other_leaves(void **state)
{
    struct client c;
    char *got;

    (void)state;
    client_open(&c, 0);
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("sem-merge", NULL, TYPE_ETH "<enabled>false</enabled>"));
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("sem-merge", "merge", "<description>merged</description>"));
    got = iface_in(&c, NC_DATASTORE_RUNNING, "sem-merge");
    if (!got || !strstr(got, "<description>merged</description>") ||
        !strstr(got, "<enabled>false</enabled>") || !strstr(got, "ethernetCsmacd")) {
        fail_msg("after merge expected description, enabled=false and type, got:\n%s", got ? got : "(none)");
    }
    client_close(&c);
}

static void
test_edit_default_none_missing_parent_is_data_missing(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    /*
     * RFC 6241 7.2 "none": data without a corresponding level in the target is data-missing. The
     * children are complete (type included), so only the missing parent can make this fail.
     */
    check_error(
        edit(&c, NC_DATASTORE_RUNNING, NC_RPC_EDIT_DFLTOP_NONE, NC_RPC_EDIT_TESTOPT_UNKNOWN,
             NC_RPC_EDIT_ERROPT_UNKNOWN,
             fmt("<interfaces xmlns=\"" IF_NS "\" xmlns:nc=\"" NC_NS "\" xmlns:ianaift=\"" IANA_NS "\">"
                 "<interface><name>sem-absent</name>"
                 "<type nc:operation=\"merge\">ianaift:ethernetCsmacd</type>"
                 "<description nc:operation=\"merge\">x</description></interface></interfaces>")),
        "application", "data-missing", "default-operation none with a missing parent");
    if (has_iface(&c, NC_DATASTORE_RUNNING, "sem-absent")) {
        fail_msg("default-operation none created the missing parent interface");
    }

    /* "none" also keeps delete from creating the parent it deletes from. */
    check_error(
        edit(&c, NC_DATASTORE_RUNNING, NC_RPC_EDIT_DFLTOP_NONE, NC_RPC_EDIT_TESTOPT_UNKNOWN,
             NC_RPC_EDIT_ERROPT_UNKNOWN,
             fmt("<interfaces xmlns=\"" IF_NS "\" xmlns:nc=\"" NC_NS "\"><interface><name>sem-absent2</name>"
                 "<description nc:operation=\"delete\"/></interface></interfaces>")),
        "application", "data-missing", "default-operation none, delete under a missing parent");
    assert_false(has_iface(&c, NC_DATASTORE_RUNNING, "sem-absent2"));

    /* With the parent present, the same kind of edit works and leaves the rest of the parent alone. */
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("sem-present", NULL, TYPE_ETH "<enabled>false</enabled>"));
    check_ok(
        edit(&c, NC_DATASTORE_RUNNING, NC_RPC_EDIT_DFLTOP_NONE, NC_RPC_EDIT_TESTOPT_UNKNOWN,
             NC_RPC_EDIT_ERROPT_UNKNOWN,
             fmt("<interfaces xmlns=\"" IF_NS "\" xmlns:nc=\"" NC_NS "\"><interface><name>sem-present</name>"
                 "<description nc:operation=\"merge\">x</description></interface></interfaces>")),
        "default-operation none with the parent present");
    {
        char *got = iface_in(&c, NC_DATASTORE_RUNNING, "sem-present");
        if (!got || !strstr(got, "<description>x</description>") ||
            !strstr(got, "<enabled>false</enabled>")) {
            fail_msg("default-operation none with a merged description: got:\n%s", got ? got : "(none)");
        }
    }
    client_close(&c);
}

static void
test_edit_test_only_leaves_running(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    check_ok(edit(&c, NC_DATASTORE_RUNNING, NC_RPC_EDIT_DFLTOP_UNKNOWN, NC_RPC_EDIT_TESTOPT_TEST,
                  NC_RPC_EDIT_ERROPT_UNKNOWN, iface_xml("sem-test-only", NULL, TYPE_ETH)),
             "edit-config test-only of a valid edit");
    if (has_iface(&c, NC_DATASTORE_RUNNING, "sem-test-only")) {
        fail_msg("test-option test-only changed running");
    }
    /* test-only still reports what is wrong. */
    check_error(edit(&c, NC_DATASTORE_RUNNING, NC_RPC_EDIT_DFLTOP_UNKNOWN, NC_RPC_EDIT_TESTOPT_TEST,
                     NC_RPC_EDIT_ERROPT_UNKNOWN, iface_xml("sem-test-only", "delete", NULL)),
                "application", "data-missing", "test-only delete of a missing interface");
    client_close(&c);
}

/* Two interfaces: a new valid one and a create of @p existing, which must fail. */
static char *
half_bad_edit(const char *fresh, const char *existing)
{
    return fmt("<interfaces xmlns=\"" IF_NS "\" xmlns:nc=\"" NC_NS "\" xmlns:ianaift=\"" IANA_NS "\">"
               "<interface><name>%s</name>" TYPE_ETH "</interface>"
               "<interface nc:operation=\"create\"><name>%s</name>" TYPE_ETH "</interface></interfaces>",
               fresh, existing);
}

static void
test_edit_rollback_on_error_leaves_nothing(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("sem-rb-old", NULL, TYPE_ETH));
    check_error(edit(&c, NC_DATASTORE_RUNNING, NC_RPC_EDIT_DFLTOP_UNKNOWN, NC_RPC_EDIT_TESTOPT_UNKNOWN,
                     NC_RPC_EDIT_ERROPT_ROLLBACK, half_bad_edit("sem-rb-new", "sem-rb-old")),
                "application", "data-exists", "rollback-on-error edit with a failing part");
    if (has_iface(&c, NC_DATASTORE_RUNNING, "sem-rb-new")) {
        fail_msg("rollback-on-error kept the valid part of a failed edit");
    }
    client_close(&c);
}

static void
test_edit_continue_on_error_keeps_valid_part(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("sem-co-old", NULL, TYPE_ETH));
    check_error(edit(&c, NC_DATASTORE_RUNNING, NC_RPC_EDIT_DFLTOP_UNKNOWN, NC_RPC_EDIT_TESTOPT_UNKNOWN,
                     NC_RPC_EDIT_ERROPT_CONTINUE, half_bad_edit("sem-co-new", "sem-co-old")),
                "application", "data-exists", "continue-on-error edit with a failing part");
    if (!has_iface(&c, NC_DATASTORE_RUNNING, "sem-co-new")) {
        fail_msg("continue-on-error dropped the valid part of the edit");
    }
    client_close(&c);
}

static void
test_edit_missing_mandatory_type_is_data_missing(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    check_error(edit_plain(&c, iface_xml("sem-no-type", NULL, "<description>no type</description>")), NULL,
                "data-missing", "interface without its mandatory type");
    assert_false(has_iface(&c, NC_DATASTORE_RUNNING, "sem-no-type"));
    client_close(&c);
}

static void
test_edit_invalid_boolean_is_invalid_value(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    check_error(edit_plain(&c, iface_xml("sem-bad-bool", NULL, TYPE_ETH "<enabled>maybe</enabled>")), NULL,
                "invalid-value", "enabled=maybe");
    assert_false(has_iface(&c, NC_DATASTORE_RUNNING, "sem-bad-bool"));
    client_close(&c);
}

static void
test_edit_unknown_element_is_unknown_element(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    check_error(edit_plain(&c, iface_xml("sem-unknown", NULL, TYPE_ETH "<no-such-leaf>1</no-such-leaf>")),
                NULL, "unknown-element", "an element the schema does not have");
    assert_false(has_iface(&c, NC_DATASTORE_RUNNING, "sem-unknown"));
    client_close(&c);
}

static void
test_edit_unknown_namespace_is_unknown_namespace(void **state)
{
    struct client c;

    (void)state;
    client_open(&c, 0);
    check_error(
        edit_plain(&c, fmt("<widgets xmlns=\"urn:example:no-such-module\"><widget>1</widget></widgets>")),
        NULL, "unknown-namespace", "top-level element in an unknown namespace");
    client_close(&c);
}

/* ---------------------------------------------------------------- filters */

static void
test_get_config_subtree_filter(void **state)
{
    struct client c;
    char *reply;

    (void)state;
    client_open(&c, 0);
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("flt-a", NULL, TYPE_ETH "<description>A</description>"));
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("flt-b", NULL, TYPE_ETH "<description>B</description>"));
    reply =
        get_config(&c, NC_DATASTORE_RUNNING,
                   "<interfaces xmlns=\"" IF_NS "\"><interface><name>flt-a</name></interface></interfaces>");
    if (!strstr(reply, "<name>flt-a</name>") || !strstr(reply, "<description>A</description>") ||
        strstr(reply, "flt-b") || strstr(reply, "iso0")) {
        fail_msg("subtree filter for flt-a: expected only flt-a with its leaves, got:\n%s", reply);
    }

    /* A selection node: only that leaf of every interface (plus the keys). */
    reply =
        get_config(&c, NC_DATASTORE_RUNNING,
                   "<interfaces xmlns=\"" IF_NS "\"><interface><name>flt-b</name><description/></interface>"
                   "</interfaces>");
    if (!strstr(reply, "<description>B</description>") || strstr(reply, "ethernetCsmacd")) {
        fail_msg("subtree filter selecting flt-b's description: got:\n%s", reply);
    }

    /* A filter matching nothing gives empty data, not an error. */
    reply = get_config(&c, NC_DATASTORE_RUNNING,
                       "<interfaces xmlns=\"" IF_NS
                       "\"><interface><name>flt-none</name></interface></interfaces>");
    if (strstr(reply, "rpc-error") || strstr(reply, "<interface>")) {
        fail_msg("subtree filter matching nothing: got:\n%s", reply);
    }
    client_close(&c);
}

static void
test_get_config_xpath_filter(void **state)
{
    struct client c;
    char *reply;

    (void)state;
    client_open(&c, 0);
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("flx-a", NULL, TYPE_ETH "<description>XA</description>"));
    edit_ok(&c, NC_DATASTORE_RUNNING, iface_xml("flx-b", NULL, TYPE_ETH "<description>XB</description>"));
    reply = get_config(&c, NC_DATASTORE_RUNNING, "/ietf-interfaces:interfaces/interface[name='flx-b']");
    if (!strstr(reply, "<name>flx-b</name>") || !strstr(reply, "<description>XB</description>") ||
        strstr(reply, "flx-a")) {
        fail_msg("xpath filter for flx-b: expected only flx-b, got:\n%s", reply);
    }
    reply = get_config(&c, NC_DATASTORE_RUNNING,
                       "/ietf-interfaces:interfaces/interface[name='flx-a']/description");
    if (!strstr(reply, "<description>XA</description>") || strstr(reply, "XB")) {
        fail_msg("xpath filter for flx-a's description: got:\n%s", reply);
    }
    client_close(&c);
}

/* ---------------------------------------------------------------- monitoring */

#define STATS_FILTER "<netconf-state xmlns=\"" NCM_NS "\"><statistics/></netconf-state>"

static unsigned long
stat_of(const char *reply, const char *leaf)
{
    const char *stats = strstr(reply, "statistics");
    char *text = stats ? xml_text(stats, leaf) : NULL;
    unsigned long v;

    if (!text) {
        fail_msg("no statistics/%s in:\n%s", leaf, reply);
    }
    v = strtoul(text, NULL, 10);
    return v;
}

static void
test_monitoring_statistics_count_up(void **state)
{
    struct client c;
    struct client other;
    char *before;
    char *after;

    (void)state;
    client_open(&c, 3);
    before = call(&c, nc_rpc_get(STATS_FILTER, NC_WD_UNKNOWN, NC_PARAMTYPE_CONST));
    /* One good RPC, one that fails, then a new session. */
    check_ok(call(&c, nc_rpc_discard()), "discard-changes");
    check_error(edit_plain(&c, iface_xml("mon-x", "delete", NULL)), "application", "data-missing",
                "delete of a missing interface");
    client_open(&other, 3);
    after = call(&c, nc_rpc_get(STATS_FILTER, NC_WD_UNKNOWN, NC_PARAMTYPE_CONST));

    if (stat_of(after, "in-rpcs") < stat_of(before, "in-rpcs") + 3) {
        fail_msg("in-rpcs did not count our 3 RPCs:\nbefore: %s\nafter: %s", before, after);
    }
    if (stat_of(after, "out-rpc-errors") < stat_of(before, "out-rpc-errors") + 1) {
        fail_msg("out-rpc-errors did not count our failed edit:\nbefore: %s\nafter: %s", before, after);
    }
    if (stat_of(after, "in-sessions") < stat_of(before, "in-sessions") + 1) {
        fail_msg("in-sessions did not count the new session:\nbefore: %s\nafter: %s", before, after);
    }
    if (!strstr(after, "netconf-start-time")) {
        fail_msg("statistics lack netconf-start-time:\n%s", after);
    }
    client_close(&other);
    client_close(&c);
}

static void
test_get_sessions_filter_lists_our_session(void **state)
{
    struct client c;
    struct client other;
    char *reply;
    char *want;
    char *want_other;

    (void)state;
    client_open(&c, 3);
    client_open(&other, 3);
    reply = call(&c, nc_rpc_get("<netconf-state xmlns=\"" NCM_NS "\"><sessions/></netconf-state>",
                                NC_WD_UNKNOWN, NC_PARAMTYPE_CONST));
    want = fmt("<session-id>%u</session-id>", (unsigned)nc_session_get_id(c.s));
    want_other = fmt("<session-id>%u</session-id>", (unsigned)nc_session_get_id(other.s));
    if (!strstr(reply, want) || !strstr(reply, want_other)) {
        fail_msg("sessions should list ours (%s) and the other one (%s), got:\n%s", want, want_other, reply);
    }
    if (!strstr(reply, "<source-host>127.0.0.1</source-host>") || !strstr(reply, "netconf-tcp") ||
        !strstr(reply, "<username>")) {
        fail_msg("session entries lack source-host 127.0.0.1, transport netconf-tcp or username:\n%s", reply);
    }
    /* The filter selected sessions only. */
    if (strstr(reply, "<statistics>") || strstr(reply, "<schemas>") || strstr(reply, "<interfaces")) {
        fail_msg("the sessions filter let other data through:\n%s", reply);
    }
    client_close(&other);
    client_close(&c);
}

/* ---------------------------------------------------------------- main */

/* After each test: drop the sessions it left open (it failed) and free its strings. */
static int
test_teardown(void **state)
{
    (void)state;
    for (int i = 0; i < MAX_OPEN_SESSIONS; i++) {
        if (open_sessions[i].s) {
            drop_session(open_sessions[i].s, open_sessions[i].fd);
        }
    }
    scratch_release();
    return 0;
}

/* libnetconf2's messages, with a word on the one every connection prints. */
static void
print_libnetconf2(const struct nc_session *session, NC_VERB_LEVEL level, const char *msg)
{
    static const char *const names[] = {"ERR", "WRN", "VRB", "DBG", "DBL"};
    const char *note = "";

    if (!strcmp(msg, "Failed to receive a reply to <get-schema>.")) {
        /* Each connect probes for ietf-netconf-nmda, which fleetsim rightly does not have. */
        note = " (expected once per connection: libnetconf2 probes for ietf-netconf-nmda)";
    }
    fprintf(stderr, "libnetconf2 session %u [%s]: %s%s\n", session ? (unsigned)nc_session_get_id(session) : 0,
            (unsigned)level < sizeof names / sizeof names[0] ? names[level] : "?", msg, note);
}

static void
remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    while (d && (e = readdir(d))) {
        if (e->d_name[0] != '.') {
            char *path = fmt("%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    if (d) {
        closedir(d);
    }
    rmdir(dir);
}

/*
 * A fleet of a vendor-style folder (tests/integration/data/vendor_yang): libnetconf2 builds its context from
 * that server's hello and get-schema replies alone, in a search path of its own that starts empty. The
 * module, its two submodules (fetched through the include), the deviation (applied: contact is gone) and
 * the feature (on) must all be in the client's context, and the vendor module's data must validate there.
 */
static void
test_client_builds_a_vendor_folder_context(void **state)
{
    const char *src = getenv("FLEETSIM_SOURCE_DIR");
    char *folder = fmt("%s/tests/integration/data/vendor_yang", src ? src : ".");
    const char *args[] = {"--threads", "1", "--schemas-dir", folder, NULL};
    char own_dir[] = "/tmp/fleetsim-lnc2-vendor-XXXXXX";
    struct itest_server vendor;
    struct nc_session *s;
    const struct lys_module *mod;
    const struct ly_ctx *ctx;
    struct lysp_include *inc;
    char *reply;
    int fd;
    LY_ARRAY_COUNT_TYPE i;
    int has_ntp = 0, has_dns = 0;

    (void)state;
    if (!mkdtemp(own_dir) || itest_server_start(&vendor, fleetsim_binary, 1, args)) {
        fail_msg("cannot start a fleet of the vendor folder %s", folder);
    }
    nc_client_set_schema_searchpath(own_dir);
    fd = itest_connect(vendor.base_port, rpc_timeout());
    s = fd >= 0 ? nc_connect_inout(fd, fd, NULL) : NULL;
    nc_client_set_schema_searchpath(schema_dir);
    if (!s) {
        itest_server_print_log(&vendor);
        fail_msg("nc_connect_inout to the vendor fleet failed (libnetconf2's messages are above)");
    }
    ctx = nc_session_get_ctx(s);
    mod = ly_ctx_get_module_implemented(ctx, "vnd-system");
    assert_non_null(mod);
    assert_string_equal(mod->revision, "2024-03-01");
    LY_ARRAY_FOR(mod->parsed->includes, i)
    {
        inc = &mod->parsed->includes[i];
        has_ntp |= !strcmp(inc->name, "vnd-system-ntp") && inc->submodule;
        has_dns |= !strcmp(inc->name, "vnd-system-dns") && inc->submodule;
    }
    assert_true(has_ntp && has_dns);
    assert_int_equal(lys_feature_value(mod, "dns-over-tls"), LY_SUCCESS);
    assert_non_null(lys_find_path(ctx, NULL, "/vnd-system:system/hostname", 0));
    assert_null(lys_find_path(ctx, NULL, "/vnd-system:system/contact", 0)); /* deviated away */
    assert_non_null(ly_ctx_get_module(ctx, "vnd-types", "2024-06-01"));
    {
        struct client c = {.s = s, .fd = fd, .dev = 0};
        reply = call(
            &c, nc_rpc_edit(NC_DATASTORE_RUNNING, NC_RPC_EDIT_DFLTOP_MERGE, NC_RPC_EDIT_TESTOPT_TESTSET,
                            NC_RPC_EDIT_ERROPT_ROLLBACK,
                            "<system xmlns=\"urn:example:vnd:system\"><hostname>lnc2</hostname></system>",
                            NC_PARAMTYPE_CONST));
        check_ok(reply, "edit-config of the vendor module");
        reply = call(&c, nc_rpc_getconfig(NC_DATASTORE_RUNNING, NULL, NC_WD_UNKNOWN, NC_PARAMTYPE_CONST));
        assert_non_null(strstr(reply, "<hostname>lnc2</hostname>"));
    }
    nc_session_free(s, NULL);
    close(fd);
    remove_dir(own_dir);
    if (itest_server_stop(&vendor)) {
        fail_msg("the vendor fleet did not stop cleanly");
    }
}

/*
 * libnetconf2 mounting 100 devices of a recorded type (tests/integration/data/recorded_device): each
 * session's context, built from that device's hello and get-schema replies in a search path of its own
 * that starts empty, holds the recorded vendor module, and each device answers get-config.
 */
static void
test_client_mounts_100_recorded_devices(void **state)
{
    const char *src = getenv("FLEETSIM_SOURCE_DIR");
    char *folder = fmt("%s/tests/integration/data/recorded_device", src ? src : ".");
    const char *args[] = {"--threads", "2", "--device-type", folder, "--snmp", "false", NULL};
    char own_dir[] = "/tmp/fleetsim-lnc2-recorded-XXXXXX";
    struct itest_server rec;

    (void)state;
    if (!mkdtemp(own_dir) || itest_server_start(&rec, fleetsim_binary, 100, args)) {
        fail_msg("cannot start 100 devices of the recorded type %s", folder);
    }
    nc_client_set_schema_searchpath(own_dir);
    for (uint32_t i = 0; i < 100; i++) {
        int fd = itest_connect((uint16_t)(rec.base_port + i), rpc_timeout());
        struct nc_session *s = fd >= 0 ? nc_connect_inout(fd, fd, NULL) : NULL;
        struct client c = {.s = s, .fd = fd, .dev = i};
        char *reply;

        if (!s) {
            nc_client_set_schema_searchpath(schema_dir);
            itest_server_print_log(&rec);
            fail_msg("libnetconf2 could not mount recorded device %u", (unsigned)i);
        }
        if (!ly_ctx_get_module_implemented(nc_session_get_ctx(s), "acme-system")) {
            fail_msg("device %u: acme-system is not in the context libnetconf2 built", (unsigned)i);
        }
        reply = call(&c, nc_rpc_getconfig(NC_DATASTORE_RUNNING, NULL, NC_WD_UNKNOWN, NC_PARAMTYPE_CONST));
        if (!strstr(reply, "<data")) {
            fail_msg("device %u: get-config gave no data: %s", (unsigned)i, reply);
        }
        nc_session_free(s, NULL);
        close(fd);
    }
    nc_client_set_schema_searchpath(schema_dir);
    remove_dir(own_dir);
    if (itest_server_stop(&rec)) {
        fail_msg("the recorded fleet did not stop cleanly");
    }
}

#define TEST(f) cmocka_unit_test_teardown(f, test_teardown)

static int
accept_any_host_key(const char *hostname, ssh_session session, void *priv)
{
    (void)hostname;
    (void)session;
    (void)priv;
    return 0; /* a test server with a fresh key: nothing to verify it against */
}

static char *
password_admin(const char *username, const char *hostname, void *priv)
{
    (void)username;
    (void)hostname;
    (void)priv;
    return strdup("admin");
}

/* Starts a one-device fleet over SSH with its host keys in a fresh state folder (and extra arguments). */
static void
start_ssh_fleet(struct itest_server *srv, char *state_dir, const char *authorized_keys)
{
    const char *args[] = {"--ssh", "true", "--state-dir", state_dir, "--threads", "1", NULL, NULL, NULL};

    if (authorized_keys) {
        args[6] = "--authorized-keys";
        args[7] = authorized_keys;
    }
    if (!mkdtemp(state_dir) || itest_server_start(srv, fleetsim_binary, 1, args)) {
        fail_msg("cannot start a fleet over SSH");
    }
    nc_client_ssh_set_username("admin");
    nc_client_ssh_set_auth_hostkey_check_clb(accept_any_host_key, NULL);
    nc_client_ssh_set_auth_pref(NC_SSH_AUTH_INTERACTIVE, -1);
}

/* An edit and a read through an established SSH session, then the session's end. */
static void
edit_and_read_over_ssh(struct client *c, const char *name)
{
    char *reply =
        call(c, nc_rpc_edit(NC_DATASTORE_RUNNING, NC_RPC_EDIT_DFLTOP_MERGE, NC_RPC_EDIT_TESTOPT_TESTSET,
                            NC_RPC_EDIT_ERROPT_ROLLBACK,
                            fmt("<interfaces xmlns=\"%s\" xmlns:ianaift=\"%s\"><interface><name>%s</name>"
                                "<type>ianaift:ethernetCsmacd</type></interface></interfaces>",
                                IF_NS, IANA_NS, name),
                            NC_PARAMTYPE_CONST));
    check_ok(reply, "edit-config over SSH");
    reply = call(c, nc_rpc_getconfig(NC_DATASTORE_RUNNING, NULL, NC_WD_UNKNOWN, NC_PARAMTYPE_CONST));
    assert_non_null(strstr(reply, name));
    nc_session_free(c->s, NULL);
    c->s = NULL;
}

/* libnetconf2's SSH client (nc_connect_ssh) against a fleet started with --ssh true, by password. */
static void
test_ssh_client_reads_and_edits_over_ssh(void **state)
{
    struct itest_server ssh_server;
    char state_dir[] = "/tmp/fleetsim-lnc2-ssh-XXXXXX";
    struct client c = {.fd = -1, .dev = 0};

    (void)state;
    start_ssh_fleet(&ssh_server, state_dir, NULL);
    nc_client_ssh_set_auth_password_clb(password_admin, NULL);
    nc_client_ssh_set_auth_pref(NC_SSH_AUTH_PUBLICKEY, -1);
    nc_client_ssh_set_auth_pref(NC_SSH_AUTH_PASSWORD, 1);
    c.s = nc_connect_ssh("127.0.0.1", ssh_server.base_port, NULL);
    if (!c.s) {
        itest_server_print_log(&ssh_server);
        itest_server_stop(&ssh_server);
        remove_dir(state_dir);
        fail_msg("nc_connect_ssh failed (libnetconf2's messages are above)");
    }
    edit_and_read_over_ssh(&c, "lnc2-ssh");
    assert_int_equal(itest_server_stop(&ssh_server), 0);
    remove_dir(state_dir);
}

/* Writes a fresh ed25519 key pair as DIR/NAME and DIR/NAME.pub (OpenSSH formats); returns the public line. */
static char *
write_keypair(const char *dir, const char *name)
{
    ssh_key key = NULL;
    char *b64 = NULL, *line;

    if (ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, &key) != SSH_OK ||
        ssh_pki_export_privkey_file(key, NULL, NULL, NULL, fmt("%s/%s", dir, name)) != SSH_OK ||
        ssh_pki_export_pubkey_file(key, fmt("%s/%s.pub", dir, name)) != SSH_OK ||
        ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK) {
        fail_msg("cannot write a key pair in %s", dir);
    }
    line = fmt("ssh-ed25519 %s %s\n", b64, name);
    ssh_string_free_char(b64);
    ssh_key_free(key);
    return line;
}

/* libnetconf2's SSH client logs in with a key listed in --authorized-keys; a key not listed is refused. */
static void
test_ssh_client_logs_in_with_an_authorized_key_only(void **state)
{
    struct itest_server ssh_server;
    char state_dir[] = "/tmp/fleetsim-lnc2-keys-XXXXXX";
    char keys_dir[] = "/tmp/fleetsim-lnc2-clientkeys-XXXXXX";
    struct client c = {.fd = -1, .dev = 0};
    const char *authorized;
    FILE *f;

    (void)state;
    if (!mkdtemp(keys_dir)) {
        fail_msg("cannot create a folder for the client's keys");
    }
    authorized = fmt("%s/authorized_keys", keys_dir);
    f = fopen(authorized, "w");
    assert_non_null(f);
    fputs(write_keypair(keys_dir, "good"), f);
    fclose(f);
    write_keypair(keys_dir, "unknown");
    start_ssh_fleet(&ssh_server, state_dir, authorized);
    nc_client_ssh_set_auth_pref(NC_SSH_AUTH_PASSWORD, -1);
    nc_client_ssh_set_auth_pref(NC_SSH_AUTH_PUBLICKEY, 1);

    assert_int_equal(nc_client_ssh_add_keypair(fmt("%s/unknown.pub", keys_dir), fmt("%s/unknown", keys_dir)),
                     0);
    c.s = nc_connect_ssh("127.0.0.1", ssh_server.base_port, NULL);
    assert_null(c.s); /* the unknown key is refused */
    assert_int_equal(nc_client_ssh_del_keypair(0), 0);

    assert_int_equal(nc_client_ssh_add_keypair(fmt("%s/good.pub", keys_dir), fmt("%s/good", keys_dir)), 0);
    c.s = nc_connect_ssh("127.0.0.1", ssh_server.base_port, NULL);
    assert_int_equal(nc_client_ssh_del_keypair(0), 0);
    if (!c.s) {
        itest_server_print_log(&ssh_server);
        fail_msg("nc_connect_ssh with the authorized key failed (libnetconf2's messages are above)");
    }
    edit_and_read_over_ssh(&c, "lnc2-key");
    nc_client_ssh_set_auth_pref(NC_SSH_AUTH_PASSWORD, 1);
    assert_int_equal(itest_server_stop(&ssh_server), 0);
    remove_dir(state_dir);
    remove_dir(keys_dir);
}

/* Notifications of the device's stream arrive through nc_recv_notif, parsed against the fetched schemas. */
static void
test_notifications_reach_the_client_in_order(void **state)
{
    struct client c;
    long last = 0;

    (void)state;
    client_open(&c, 3);
    check_ok(call(&c, nc_rpc_subscribe(NULL, NULL, NULL, NULL, NC_PARAMTYPE_CONST)), "create-subscription");
    for (int i = 0; i < 10; i++) {
        struct lyd_node *envp = NULL, *op = NULL, *seq = NULL;
        NC_MSG_TYPE t = nc_recv_notif(c.s, rpc_timeout(), &envp, &op);
        long v;
        if (t != NC_MSG_NOTIF || !op) {
            lyd_free_all(envp);
            fail_msg("notification %d: nc_recv_notif returned %d", i + 1, (int)t);
        }
        if (lyd_find_path(op, "sequence", 0, &seq) || !seq) {
            lyd_free_all(envp);
            lyd_free_all(op);
            fail_msg("notification %d has no sequence", i + 1);
        }
        v = strtol(lyd_get_value(seq), NULL, 10);
        lyd_free_all(envp);
        lyd_free_all(op);
        assert_int_equal(v, last + 1);
        last = v;
    }
    client_close(&c);
}

int
main(int argc, char **argv)
{
    static char notification_file[512];
    static const char *extra[] = {
        "--threads", "2", "--notification-file", notification_file, "--notification-rate", "100", NULL};
    const struct CMUnitTest tests[] = {
        /* First: the search path is still empty, so libnetconf2 must use get-schema. */
        TEST(test_client_loads_schemas_with_get_schema),
        TEST(test_hello_advertises_every_capability),
        TEST(test_get_schema_returns_every_advertised_module),
        TEST(test_get_schema_of_unknown_module_is_invalid_value),
        TEST(test_client_builds_a_vendor_folder_context),
        TEST(test_client_mounts_100_recorded_devices),
        TEST(test_edit_on_one_device_is_invisible_on_another),
        TEST(test_notifications_reach_the_client_in_order),
        TEST(test_ssh_client_reads_and_edits_over_ssh),
        TEST(test_ssh_client_logs_in_with_an_authorized_key_only),
        TEST(test_candidate_commit_and_discard),
        TEST(test_copy_config_validate_and_delete_startup),
        TEST(test_lock_denied_names_holder_and_blocks_edits),
        TEST(test_lock_released_when_holder_disconnects),
        TEST(test_kill_session_closes_victim),
        TEST(test_kill_own_session_is_invalid_value),
        TEST(test_edit_create_existing_is_data_exists),
        TEST(test_edit_delete_missing_is_data_missing),
        TEST(test_edit_remove_missing_is_ok),
        TEST(test_edit_replace_drops_unlisted_leaves),
        TEST(test_edit_merge_keeps_other_leaves),
        TEST(test_edit_default_none_missing_parent_is_data_missing),
        TEST(test_edit_test_only_leaves_running),
        TEST(test_edit_rollback_on_error_leaves_nothing),
        TEST(test_edit_continue_on_error_keeps_valid_part),
        TEST(test_edit_missing_mandatory_type_is_data_missing),
        TEST(test_edit_invalid_boolean_is_invalid_value),
        TEST(test_edit_unknown_element_is_unknown_element),
        TEST(test_edit_unknown_namespace_is_unknown_namespace),
        TEST(test_get_config_subtree_filter),
        TEST(test_get_config_xpath_filter),
        TEST(test_monitoring_statistics_count_up),
        TEST(test_get_sessions_filter_lists_our_session),
    };
    int failed;

    if (argc != 2) {
        fprintf(stderr, "usage: %s <path to fleetsim>\n", argv[0]);
        return 2;
    }
    /* A killed session's socket must give EPIPE, not kill the test. */
    signal(SIGPIPE, SIG_IGN);

    fleetsim_binary = argv[1];
    snprintf(notification_file, sizeof notification_file, "%s/notifications/routes-1.xml",
             getenv("FLEETSIM_SOURCE_DIR") ? getenv("FLEETSIM_SOURCE_DIR") : ".");
    snprintf(schema_dir, sizeof schema_dir, "/tmp/fleetsim-lnc2-schemas-XXXXXX");
    if (!mkdtemp(schema_dir)) {
        perror("mkdtemp");
        return 1;
    }
    nc_client_init();
    nc_verbosity(NC_VERB_WARNING);
    nc_set_print_clb_session(print_libnetconf2);
    nc_client_set_schema_searchpath(schema_dir);

    if (itest_server_start(&server, argv[1], DEVICES, extra)) {
        nc_client_destroy();
        remove_dir(schema_dir);
        scratch_release();
        return 1;
    }
    failed = cmocka_run_group_tests(tests, NULL, NULL);
    /* The server must survive the whole suite and then exit cleanly on SIGTERM. */
    if (itest_server_stop(&server)) {
        fprintf(stderr, "[  FAILED  ] fleetsim did not exit cleanly after the suite\n");
        failed++;
    }
    nc_client_destroy();
    remove_dir(schema_dir);
    scratch_release();
    return failed ? 1 : 0;
}
