/*
 * Unit tests of the <rpc> attributes an <rpc-reply> repeats (RFC 6241 4.2),
 * through rpc_process() on a session of a one-device fleet: every value is
 * written as XML text is ('>' as &gt;, '&', '<' and '"' as references), so
 * no reply carries the base:1.0 end-of-message marker "]]>]]>" whatever the
 * request held (issue 28: the rpc fuzz harness found an error reply that
 * repeated select="...]]>]]>..." as it came). Each path that repeats
 * attributes is covered: a message libyang refuses (the attributes scanned
 * from the text), a well-formed one (read by libyang), the edit-config and
 * get-schema fast paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devfix.h"
#include "loop.h"
#include "rpc.h"
#include "rpc_fast.h"
#include "session.h"

#define TRA_NC_NS "urn:ietf:params:xml:ns:netconf:base:1.0"
#define TRA_EOM   "]]>]]>"

/* A base:1.0 client hello: replies are then end-of-message framed. */
static const char tra_hello[] = "<hello xmlns=\"" TRA_NC_NS "\"><capabilities>"
                                "<capability>urn:ietf:params:netconf:base:1.0</capability>"
                                "</capabilities></hello>" TRA_EOM;

/* The start tag every test sends: the marker in one value, every character XML escapes in another. */
#define TRA_RPC_START                                                                                        \
    "<rpc message-id=\"1\" xmlns=\"" TRA_NC_NS "\" select=\"/if:in]]>]]>x\" note='a&amp;b\"c&lt;d>e'>"
/* What the reply's start tag must repeat of it. */
#define TRA_REPLY_START                                                                                      \
    "<rpc-reply xmlns=\"" TRA_NC_NS "\" message-id=\"1\" select=\"/if:in]]&gt;]]&gt;x\" "                    \
    "note=\"a&amp;b&quot;c&lt;d&gt;e\">"

/* The fast paths take plain values only (no '&', '<' or '"'): '>' is plain, and still escaped. */
#define TRA_PLAIN_RPC_START "<rpc message-id=\"1\" xmlns=\"" TRA_NC_NS "\" select=\"/if:in]]>]]>x\">"
#define TRA_PLAIN_REPLY_START                                                                                \
    "<rpc-reply xmlns=\"" TRA_NC_NS "\" message-id=\"1\" select=\"/if:in]]&gt;]]&gt;x\">"

/* A device with a worker loop, so a session can start on one end of a socketpair. */
struct tra_state {
    struct devfix *f; /* the device */
    int fds[2];       /* the session's end, and the end nobody reads */
};

static int
tra_setup(void **state)
{
    struct tra_state *st = calloc(1, sizeof *st);

    assert_non_null(st);
    st->f = devfix_new("minimal");
    assert_non_null(st->f->worker.loop = loop_new(64));
    /* NETCONF over plain TCP: the session takes the hello as it comes (the defaults say SSH). */
    st->f->group.cfg.ssh = st->f->fleet.cfg.ssh = 0;
    /* The hello is read without schemas, as fleet_init() sets it up. */
    assert_int_equal(ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY, &st->f->fleet.bare_ctx), LY_SUCCESS);
    st->fds[0] = st->fds[1] = -1;
    *state = st;
    return 0;
}

static int
tra_teardown(void **state)
{
    struct tra_state *st = *state;

    ly_ctx_destroy(st->f->fleet.bare_ctx);
    loop_free(st->f->worker.loop);
    st->f->worker.loop = NULL;
    devfix_free(st->f);
    free(st);
    return 0;
}

/* Close the test's session (and its socketpair) even after a failed assertion. */
static int
tra_case_teardown(void **state)
{
    struct tra_state *st = *state;

    /* sess_close_all() walks the fleet's device array, which the fixture does not have. */
    while (st->f->dev.sessions) {
        sess_close(st->f->dev.sessions, 0);
        sess_worker_before_sleep(st->f->worker.loop, &st->f->worker);
    }
    if (st->fds[1] >= 0) {
        close(st->fds[1]);
    }
    st->fds[0] = st->fds[1] = -1;
    return 0;
}

/*
 * Send msg on a new session after the hellos and check the one message queued in answer: it starts with
 * start, holds the marker only as its framing (once, at its end) and, when want is given, holds want.
 */
static void
tra_check_reply(struct tra_state *st, const char *msg, const char *start, const char *want)
{
    struct session *s;
    struct sbuf all = {0};
    const char *out;
    size_t len, hello_len;
    const char *reply, *eom;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, st->fds), 0);
    assert_non_null(s = sess_start(&st->f->dev, st->fds[0]));
    assert_int_equal(sess_consume(s, tra_hello, sizeof tra_hello - 1), 0);
    assert_int_equal(s->state, SESS_ACTIVE);
    hello_len = outq_pending(&s->out);
    rpc_process(s, msg, strlen(msg));
    while ((len = outq_peek(&s->out, &out)) > 0) {
        sbuf_add(&all, out, len);
        outq_consume(&s->out, len);
    }
    assert_false(all.failed);
    assert_true(all.len > hello_len);
    reply = all.buf + hello_len;
    eom = strstr(reply, TRA_EOM);
    if (strncmp(reply, start, strlen(start)) || !eom || eom + strlen(TRA_EOM) != all.buf + all.len ||
        (want && !strstr(reply, want))) {
        fail_msg("for %s\nwanted a reply starting with %s%s%s, framed once; got:\n%s", msg, start,
                 want ? " and holding " : "", want ? want : "", reply);
    }
    sbuf_free(&all);
}

/* issue 28: the fuzz input, a body libyang refuses: the attributes come from scanning the text. */
static void
test_reply_attrs_escaped_when_body_refused_issue28(void **state)
{
    tra_check_reply(*state, TRA_RPC_START "<get><a></b></get></rpc>", TRA_REPLY_START, "<rpc-error>");
}

/* The same attributes on a message libyang reads: the attributes come from its tree. */
static void
test_reply_attrs_escaped_on_wellformed_rpc(void **state)
{
    tra_check_reply(*state, TRA_RPC_START "<get/></rpc>", TRA_REPLY_START, "<data");
}

/* An error after a good parse (operation unknown) repeats them the same way. */
static void
test_reply_attrs_escaped_on_error_after_parse(void **state)
{
    tra_check_reply(*state, TRA_RPC_START "<get-config><source><nowhere/></source></get-config></rpc>",
                    TRA_REPLY_START, "<rpc-error>");
}

/* The edit-config fast path copies plain values: '>' is plain XML, and is written as &gt; all the same. */
static void
test_reply_attrs_escaped_on_fast_edit_config(void **state)
{
    static const char msg[] = TRA_PLAIN_RPC_START
        "<edit-config><target><running/></target><config>"
        "<interfaces xmlns=\"urn:ietf:params:xml:ns:yang:ietf-interfaces\"/></config></edit-config></rpc>";
    struct rpc_fast_edit fe;

    assert_int_equal(rpc_fast_edit_scan(msg, &fe), 0); /* the message does take the fast path */
    rpc_fast_edit_free(&fe);
    tra_check_reply(*state, msg, TRA_PLAIN_REPLY_START, "<ok/>");
}

/* The get-schema fast path repeats them the same way. */
static void
test_reply_attrs_escaped_on_fast_get_schema(void **state)
{
    static const char msg[] =
        TRA_PLAIN_RPC_START "<get-schema xmlns=\"urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring\">"
                            "<identifier>ietf-interfaces</identifier></get-schema></rpc>";
    struct rpc_fast_get_schema gs;

    assert_int_equal(rpc_fast_get_schema_scan(msg, &gs), 0);
    rpc_fast_get_schema_free(&gs);
    tra_check_reply(*state, msg, TRA_PLAIN_REPLY_START, "module ietf-interfaces");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_reply_attrs_escaped_when_body_refused_issue28, tra_case_teardown),
        cmocka_unit_test_teardown(test_reply_attrs_escaped_on_wellformed_rpc, tra_case_teardown),
        cmocka_unit_test_teardown(test_reply_attrs_escaped_on_error_after_parse, tra_case_teardown),
        cmocka_unit_test_teardown(test_reply_attrs_escaped_on_fast_edit_config, tra_case_teardown),
        cmocka_unit_test_teardown(test_reply_attrs_escaped_on_fast_get_schema, tra_case_teardown),
    };

    return cmocka_run_group_tests(tests, tra_setup, tra_teardown);
}
