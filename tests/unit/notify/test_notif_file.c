/*
 * Unit tests of notification files (testtool/notify/notif_file.c). Every
 * file in notifications/ must load and validate against a context built like
 * the fleet's: the standard modules, ietf-netconf-notifications, and every
 * schemas/fleetsim-*.yang. Exact behaviour (fields, placeholders, CDATA and
 * escaped content, refusals) is checked on small files written to a
 * temporary folder, each refusal by the words of its message. The ASan build
 * checks that nothing leaks, also on the refusal paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "notif_file.h"
#include "test_util.h"

/* Longest folder path a test keeps, and longest path it builds from one. */
#define TN_DIR_BYTES  2048
#define TN_PATH_BYTES 4096
/* Where Debian's libyuma-base keeps its modules. */
#define TN_YUMA_DIR "/usr/share/yuma/modules"
/* Room for a loader message. */
#define TN_ERR_BYTES 2048

/* The NETCONF notification envelope around a payload, as files write it. */
#define TN_NOTIF(payload)                                                                                    \
    "<notification "                                                                                         \
    "xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\"><eventTime>XXXX</eventTime>" payload          \
    "</notification>"
/* A valid interface event payload of schemas/fleetsim-if-events.yang. */
#define TN_IF_EVENT(status)                                                                                  \
    "<if-state-change xmlns=\"urn:fleetsim:if-events\"><if-name>{IFNAME}</if-name>"                          \
    "<if-index>{IFINDEX}</if-index><oper-status>" status "</oper-status></if-state-change>"

#define TN_ASSERT_HAS(msg, sub)                                                                              \
    do {                                                                                                     \
        if (!strstr((msg), (sub))) {                                                                         \
            fail_msg("message \"%s\" lacks \"%s\"", (msg), (sub));                                           \
        }                                                                                                    \
    } while (0)

struct tn_state {
    char source[TN_DIR_BYTES]; /* the source tree */
    char tmp[TN_DIR_BYTES];    /* a fresh folder for generated files */
    char file[TN_PATH_BYTES];  /* the generated file of the running test */
    char err[TN_ERR_BYTES];    /* the loader's message */
    struct ly_ctx *ctx;        /* like the fleet's context */
};

static int
tn_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s);
    size_t m = strlen(suffix);

    return n >= m && !strcmp(s + n - m, suffix);
}

/* The fleet's modules: standard ones, the notification modules, every schemas/fleetsim-*.yang. */
static struct ly_ctx *
tn_fleet_ctx(const char *source)
{
    struct ly_ctx *ctx = tu_ctx_new(NULL);
    uint32_t quiet = LY_LOSTORE;
    char dir[TN_PATH_BYTES];
    char path[TN_PATH_BYTES + 256];
    struct dirent *e;
    DIR *d;

    /* yuma's ietf-netconf-notifications@2012-02-06 compiles with an XPath warning (RFC 6470 erratum). */
    ly_temp_log_options(&quiet);
    assert_non_null(ly_ctx_load_module(ctx, "ietf-netconf-notifications", NULL, NULL));
    /* RFC 5277's modules too, as the fleet loads them: they must not disturb the envelope's parsing. */
    assert_int_equal(ly_ctx_set_searchdir(ctx, TN_YUMA_DIR "/ietf-derived"), LY_SUCCESS);
    assert_int_equal(ly_ctx_set_searchdir(ctx, TN_YUMA_DIR "/netconfcentral"), LY_SUCCESS);
    assert_non_null(ly_ctx_load_module(ctx, "notifications", NULL, NULL));
    assert_non_null(ly_ctx_load_module(ctx, "nc-notifications", NULL, NULL));
    ly_temp_log_options(NULL);
    snprintf(dir, sizeof dir, "%s/schemas", source);
    assert_int_equal(ly_ctx_set_searchdir(ctx, dir), LY_SUCCESS);
    d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "fleetsim-", 9) || !tn_has_suffix(e->d_name, ".yang")) {
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lys_parse_path(ctx, path, LYS_IN_YANG, NULL)) {
            fail_msg("cannot load %s: %s", path, ly_errmsg(ctx));
        }
    }
    closedir(d);
    return ctx;
}

static int
tn_setup(void **state)
{
    struct tn_state *st = calloc(1, sizeof *st);
    const char *src = getenv("FLEETSIM_SOURCE_DIR");

    assert_non_null(st);
    assert_non_null(src);
    snprintf(st->source, sizeof st->source, "%s", src);
    snprintf(st->tmp, sizeof st->tmp, "/tmp/fleetsim-test-notif-XXXXXX");
    assert_non_null(mkdtemp(st->tmp));
    st->ctx = tn_fleet_ctx(st->source);
    *state = st;
    return 0;
}

static int
tn_teardown(void **state)
{
    struct tn_state *st = *state;

    unlink(st->file);
    rmdir(st->tmp);
    ly_ctx_destroy(st->ctx);
    free(st);
    return 0;
}

/* Write @p text as the running test's file. */
static const char *
tn_write(struct tn_state *st, const char *text)
{
    FILE *f;

    snprintf(st->file, sizeof st->file, "%s/notifications.xml", st->tmp);
    f = fopen(st->file, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    fclose(f);
    return st->file;
}

/* Load @p text; fails the test unless it loads. */
static struct notif_plan *
tn_load_ok(struct tn_state *st, const char *text)
{
    struct notif_plan *plan = NULL;

    if (notif_plan_load(tn_write(st, text), st->ctx, &plan, st->err, sizeof st->err)) {
        fail_msg("refused: %s", st->err);
    }
    assert_non_null(plan);
    return plan;
}

/* Load @p text; it must be refused with @p want, and the message must name the file. */
static void
tn_load_refused(struct tn_state *st, const char *text, enum fleet_err want)
{
    struct notif_plan *plan = NULL;
    enum fleet_err rc = notif_plan_load(tn_write(st, text), st->ctx, &plan, st->err, sizeof st->err);

    if (rc != want) {
        fail_msg("loaded with %d, wanted %d; message: \"%s\"", rc, want, st->err);
    }
    assert_null(plan);
    TN_ASSERT_HAS(st->err, st->file);
    if (getenv("TN_VERBOSE")) {
        print_message("%s\n", st->err);
    }
}

/* Expand @p t with fixed values. */
static char *
tn_expand(const struct notif_template *t, uint64_t seq)
{
    struct notif_vars v = {
        .device = 42, .seq = seq, .time_ms = 1700000000123ull, .ifindex = 7, .ifname = "ge-0/0/7"};
    struct sbuf b = {0};

    notif_expand(t, &v, &b);
    assert_false(b.failed);
    return sbuf_take(&b, NULL);
}

static void
test_example_files_load_and_validate(void **state)
{
    struct tn_state *st = *state;
    char dir[TN_PATH_BYTES];
    char path[TN_PATH_BYTES + 256];
    struct dirent *e;
    DIR *d;
    int files = 0;

    snprintf(dir, sizeof dir, "%s/notifications", st->source);
    d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d))) {
        struct notif_plan *plan = NULL;
        if (e->d_name[0] == '.' || !tn_has_suffix(e->d_name, ".xml")) {
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (notif_plan_load(path, st->ctx, &plan, st->err, sizeof st->err)) {
            fail_msg("example refused: %s", st->err);
        }
        assert_true(plan->item_count >= 1);
        for (uint32_t i = 0; i < plan->item_count; i++) {
            assert_true(plan->items[i].seg_count >= 2); /* at least the eventTime and some text */
            assert_true(plan->items[i].weight >= 1);
            assert_true(plan->kind == NOTIF_PLAN_RATE || plan->items[i].times >= 1);
        }
        notif_plan_free(plan);
        files++;
    }
    closedir(d);
    assert_true(files >= 5);
}

static void
test_odl_fields_in_file_order(void **state)
{
    struct tn_state *st = *state;
    struct notif_plan *plan =
        tn_load_ok(st, "<?xml version=\"1.0\"?>\n<!-- two entries -->\n<notifications>\n"
                       "  <notification><delay>3</delay><times>2</times><content><![CDATA[" TN_NOTIF(
                           TN_IF_EVENT("down")) "]]>"
                                                "</content></notification>\n"
                                                "  <notification><times>5</times><content><![CDATA[" TN_NOTIF(
                                                    TN_IF_EVENT("up")) "]]></content>"
                                                                       "</notification>\n</notifications>\n");

    assert_int_equal(plan->kind, NOTIF_PLAN_ODL);
    assert_int_equal(plan->item_count, 2);
    assert_int_equal(plan->items[0].delay_ms, 3000);
    assert_int_equal(plan->items[0].times, 2);
    assert_int_equal(plan->items[1].delay_ms, 0);
    assert_int_equal(plan->items[1].times, 5);
    assert_int_equal(plan->items[0].weight, 1);
    assert_non_null(strstr(plan->items[0].text, "down"));
    assert_non_null(strstr(plan->items[1].text, "<oper-status>up"));
    TN_ASSERT_HAS(plan->items[1].label, "notification 2 of ");
    notif_plan_free(plan);
}

static void
test_odl_cdata_and_escaped_content_expand_alike(void **state)
{
    struct tn_state *st = *state;
    struct notif_plan *plan = tn_load_ok(
        st,
        "<notifications>"
        "<notification><times>1</times><content><![CDATA[" TN_NOTIF(TN_IF_EVENT(
            "down")) "]]></content>"
                     "</notification>"
                     "<notification><times>1</times><content>\n  "
                     "&lt;notification "
                     "xmlns=&quot;urn:ietf:params:xml:ns:netconf:notification:1.0&quot;&gt;&lt;eventTime&gt;"
                     "XXXX&lt;/eventTime&gt;&lt;if-state-change "
                     "xmlns=\"urn:fleetsim:if-events\"&gt;&lt;if-name&gt;{IFNAME}"
                     "&lt;/if-name&gt;&lt;if-index&gt;{IFINDEX}&lt;/"
                     "if-index&gt;&lt;oper-status&gt;&#100;own&lt;/oper-status&gt;"
                     "&lt;/if-state-change&gt;&lt;/notification&gt;\n</content></notification>"
                     "</notifications>");
    char *a = tn_expand(&plan->items[0], 1);
    char *b = tn_expand(&plan->items[1], 1);

    assert_string_equal(a, b);
    free(a);
    free(b);
    notif_plan_free(plan);
}

static void
test_rate_fields(void **state)
{
    struct tn_state *st = *state;
    struct notif_plan *plan =
        tn_load_ok(st, "<notification-stream xmlns=\"urn:fleetsim:notifications\">"
                       "<rate-total>2500.5</rate-total><count>300</count><burst>10</burst>"
                       "<notification><name>down</name><weight>3</weight><content>" TN_NOTIF(
                           TN_IF_EVENT("down")) "</content>"
                                                "</notification>"
                                                "<notification><name>up</name><content>" TN_NOTIF(
                                                    TN_IF_EVENT("up")) "</content></notification>"
                                                                       "</notification-stream>");

    assert_int_equal(plan->kind, NOTIF_PLAN_RATE);
    assert_true(plan->rate_per_device == 0.0);
    assert_true(plan->rate_total == 2500.5);
    assert_int_equal(plan->count, 300);
    assert_int_equal(plan->duration_ms, 0);
    assert_int_equal(plan->burst, 10);
    assert_int_equal(plan->item_count, 2);
    assert_int_equal(plan->items[0].weight, 3);
    assert_int_equal(plan->items[1].weight, 1); /* the default */
    TN_ASSERT_HAS(plan->items[1].label, "notification 2 (\"up\") of ");
    notif_plan_free(plan);

    plan = tn_load_ok(st, "<notification-stream xmlns=\"urn:fleetsim:notifications\">"
                          "<rate-per-device>0.25</rate-per-device><duration>1.5</duration>"
                          "<notification><name>n</name><content>" TN_NOTIF(
                              TN_IF_EVENT("up")) "</content>"
                                                 "</notification></notification-stream>");
    assert_true(plan->rate_per_device == 0.25);
    assert_true(plan->rate_total == 0.0);
    assert_int_equal(plan->duration_ms, 1500);
    assert_int_equal(plan->count, 0);
    assert_int_equal(plan->burst, 1);
    notif_plan_free(plan);
}

static void
test_placeholders_expand(void **state)
{
    struct tn_state *st = *state;
    struct notif_plan *plan = tn_load_ok(
        st, "<notification-stream xmlns=\"urn:fleetsim:notifications\"><rate-per-device>1</rate-per-device>"
            "<notification><name>all</name><content>" TN_NOTIF(
                "<route-update xmlns=\"urn:fleetsim:route-events\"><table>dev{DEVICE}-t{TIME}</table>"
                "<sequence>{SEQ}</sequence><prefix><address>10.0.0.0/8</address><metric>{IFINDEX}</metric>"
                "</prefix></route-update>") "</content></notification></notification-stream>");
    const struct notif_template *t = &plan->items[0];
    char *a = tn_expand(t, 99);

    assert_int_equal(t->has_seq, 1);
    assert_null(strstr(a, "XXXX"));
    assert_null(strchr(a, '{'));
    TN_ASSERT_HAS(a, "<eventTime>2023-11-14T22:13:20.123Z</eventTime>");
    TN_ASSERT_HAS(a, "<table>dev42-t2023-11-14T22:13:20.123Z</table>");
    TN_ASSERT_HAS(a, "<sequence>99</sequence>");
    TN_ASSERT_HAS(a, "<metric>7</metric>");
    free(a);
    notif_plan_free(plan);

    /* {IFNAME} is escaped for XML; a template without {SEQ} says so. */
    plan = tn_load_ok(st, "<notifications><notification><times>1</times><content><![CDATA[" TN_NOTIF(
                              TN_IF_EVENT("up")) "]]></content></notification></notifications>");
    t = &plan->items[0];
    assert_int_equal(t->has_seq, 0);
    {
        struct notif_vars v = {.time_ms = 0, .ifindex = 3, .ifname = "a<b&c"};
        struct sbuf b = {0};
        notif_expand(t, &v, &b);
        assert_false(b.failed);
        assert_string_equal(
            b.buf, "<notification xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\">"
                   "<eventTime>1970-01-01T00:00:00.000Z</eventTime>"
                   "<if-state-change xmlns=\"urn:fleetsim:if-events\"><if-name>a&lt;b&amp;c</if-name>"
                   "<if-index>3</if-index><oper-status>up</oper-status></if-state-change>"
                   "</notification>");
        sbuf_free(&b);
    }
    notif_plan_free(plan);
}

static void
test_format_time(void **state)
{
    char buf[32];

    (void)state;
    notif_format_time(0, buf, sizeof buf);
    assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
    notif_format_time(1700000000123ull, buf, sizeof buf);
    assert_string_equal(buf, "2023-11-14T22:13:20.123Z");
}

static void
test_refuses_payload_not_in_schemas(void **state)
{
    struct tn_state *st = *state;

    tn_load_refused(
        st,
        "<notifications>"
        "<notification><times>1</times><content><![CDATA[" TN_NOTIF(TN_IF_EVENT(
            "up")) "]]></content>"
                   "</notification>"
                   "<notification><times>1</times><content><![CDATA[" TN_NOTIF(
                       "<link-flap xmlns=\"urn:example:unknown\"/>") "]]></content></notification>"
                                                                     "</notifications>",
        FLEET_ERR_INVAL);
    TN_ASSERT_HAS(st->err, "notification 2 of ");
    TN_ASSERT_HAS(st->err, "urn:example:unknown");
    TN_ASSERT_HAS(st->err, "no loaded module has namespace \"urn:example:unknown\" (add the module that "
                           "defines it with --schemas-dir DIR)");

    /* Known namespace, unknown notification. */
    tn_load_refused(
        st,
        "<notification-stream xmlns=\"urn:fleetsim:notifications\"><rate-per-device>1</rate-per-device>"
        "<notification><name>bad</name><content>" TN_NOTIF(
            "<link-flap xmlns=\"urn:fleetsim:if-events\"/>") "</content></notification>"
                                                             "</notification-stream>",
        FLEET_ERR_INVAL);
    TN_ASSERT_HAS(st->err, "notification 1 (\"bad\") of ");
    TN_ASSERT_HAS(st->err, "link-flap");
    /* The namespace is loaded: no hint to add a module. */
    assert_null(strstr(st->err, "--schemas-dir"));
}

static void
test_refuses_invalid_value(void **state)
{
    struct tn_state *st = *state;

    tn_load_refused(
        st,
        "<notification-stream xmlns=\"urn:fleetsim:notifications\"><rate-per-device>1</rate-per-device>"
        "<notification><name>ok</name><content>" TN_NOTIF(
            TN_IF_EVENT("up")) "</content></notification>"
                               "<notification><name>odd</name><content>" TN_NOTIF(
                                   TN_IF_EVENT("sideways")) "</content>"
                                                            "</notification></notification-stream>",
        FLEET_ERR_INVAL);
    TN_ASSERT_HAS(st->err, "notification 2 (\"odd\") of ");
    TN_ASSERT_HAS(st->err, "sideways");

    /* A missing mandatory leaf is caught too. */
    tn_load_refused(st,
                    "<notifications><notification><times>1</times><content><![CDATA[" TN_NOTIF(
                        "<if-state-change "
                        "xmlns=\"urn:fleetsim:if-events\"><if-name>x</if-name></if-state-change>") "]]>"
                                                                                                   "</"
                                                                                                   "content><"
                                                                                                   "/notifica"
                                                                                                   "tion></"
                                                                                                   "notificat"
                                                                                                   "ions>",
                    FLEET_ERR_INVAL);
    TN_ASSERT_HAS(st->err, "notification 1 of ");
    TN_ASSERT_HAS(st->err, "oper-status");
}

static void
test_refuses_missing_file(void **state)
{
    struct tn_state *st = *state;
    struct notif_plan *plan = NULL;

    snprintf(st->file, sizeof st->file, "%s/absent.xml", st->tmp);
    assert_int_equal(notif_plan_load(st->file, st->ctx, &plan, st->err, sizeof st->err), FLEET_ERR_NOTFOUND);
    assert_null(plan);
    TN_ASSERT_HAS(st->err, st->file);
    TN_ASSERT_HAS(st->err, "No such file");
}

static void
test_refuses_bad_rates(void **state)
{
    struct tn_state *st = *state;
    static const char *const bad[] = {
        "<rate-per-device>0</rate-per-device>",                           /* below the range */
        "<rate-per-device>-5</rate-per-device>",                          /* negative */
        "<rate-per-device>fast</rate-per-device>",                        /* not a number */
        "<rate-total>1</rate-total><rate-per-device>1</rate-per-device>", /* both */
        "<burst>1</burst>",                                               /* none */
        "<rate-per-device>1</rate-per-device><burst>0</burst>",
        "<rate-per-device>1</rate-per-device><duration>0</duration>",
        "<rate-per-device>1</rate-per-device><count>0</count>",
    };
    static const char *const want[] = {"rate-per-device",
                                       "rate-per-device",
                                       "rate-per-device",
                                       "rate",
                                       "rate",
                                       "burst",
                                       "duration",
                                       "count"};
    char text[4096];

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text,
                 "<notification-stream xmlns=\"urn:fleetsim:notifications\">%s<notification><name>n</name>"
                 "<content>" TN_NOTIF(TN_IF_EVENT("up")) "</content></notification></notification-stream>",
                 bad[i]);
        tn_load_refused(st, text, FLEET_ERR_INVAL);
        TN_ASSERT_HAS(st->err, want[i]);
    }

    /* A weight of 0 names its notification. */
    tn_load_refused(
        st,
        "<notification-stream xmlns=\"urn:fleetsim:notifications\"><rate-per-device>1</rate-per-device>"
        "<notification><name>zero</name><weight>0</weight><content>" TN_NOTIF(
            TN_IF_EVENT("up")) "</content>"
                               "</notification></notification-stream>",
        FLEET_ERR_INVAL);
    TN_ASSERT_HAS(st->err, "zero");
    TN_ASSERT_HAS(st->err, "weight");
}

/* OpenDaylight's Notification reads a missing <delay> or <times> as 0 and sends an entry times + 1 times. */
static void
test_odl_defaults_for_missing_times_and_delay_and_times_zero(void **state)
{
    struct tn_state *st = *state;
    struct notif_plan *plan = tn_load_ok(
        st,
        "<notifications>"
        "<notification><content><![CDATA[" TN_NOTIF(TN_IF_EVENT(
            "down")) "]]></content></notification>"
                     "<notification><times>0</times><delay>2</delay><content><![CDATA[" TN_NOTIF(TN_IF_EVENT(
                         "up")) "]]></content></notification>"
                                "<notification><delay>0</delay><times>3</times><content><![CDATA[" TN_NOTIF(
                                    TN_IF_EVENT("up")) "]]></content></notification>"
                                                       "</notifications>");

    assert_int_equal(plan->kind, NOTIF_PLAN_ODL);
    assert_int_equal(plan->item_count, 3);
    assert_int_equal(plan->items[0].times, 1);
    assert_int_equal(plan->items[0].delay_ms, 0);
    assert_int_equal(plan->items[1].times, 1);
    assert_int_equal(plan->items[1].delay_ms, 2000);
    /* N >= 1 stays our exact count (OpenDaylight would send 4). */
    assert_int_equal(plan->items[2].times, 3);
    notif_plan_free(plan);
}

static void
test_refuses_odl_defects(void **state)
{
    struct tn_state *st = *state;
    static const char *const entry2[] = {
        "<times>x</times><content><![CDATA[" TN_NOTIF(TN_IF_EVENT("up")) "]]></content>",
        "<times>1</times><delay>-1</delay><content><![CDATA[" TN_NOTIF(TN_IF_EVENT("up")) "]]></content>",
        "<times>1</times>",
        "<times>1</times><repeat>2</repeat><content><![CDATA[" TN_NOTIF(TN_IF_EVENT("up")) "]]></content>",
        "<times>1</times><content><![CDATA[<notification "
        "xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\">"
        "<if-state-change xmlns=\"urn:fleetsim:if-events\"/></notification>]]></content>",
        "<times>1</times><content><![CDATA[<hello xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\">"
        "<eventTime>XXXX</eventTime></hello>]]></content>",
        "<times>1</times><content><![CDATA[" TN_NOTIF(TN_IF_EVENT("up")) "</content>",
        /* An empty text once printed unterminated bytes into the message (found by fuzz_notif_file). */
        "<delay></delay><times>1</times><content><![CDATA[" TN_NOTIF(TN_IF_EVENT("up")) "]]></content>",
    };
    static const char *const want[] = {
        "<times> \"x\"", "<delay> \"-1\"",       "no <content>", "<repeat>",
        "eventTime",     "NETCONF notification", "CDATA",        "<delay> \"\": not a whole number"};
    char text[4096];

    for (size_t i = 0; i < sizeof entry2 / sizeof entry2[0]; i++) {
        snprintf(text, sizeof text,
                 "<notifications><notification><times>1</times><content><![CDATA[" TN_NOTIF(TN_IF_EVENT(
                     "up")) "]]></content></notification><notification>%s</notification></notifications>",
                 entry2[i]);
        tn_load_refused(st, text, FLEET_ERR_INVAL);
        TN_ASSERT_HAS(st->err, "notification 2 of ");
        TN_ASSERT_HAS(st->err, want[i]);
    }

    tn_load_refused(st, "<notifications></notifications>", FLEET_ERR_INVAL);
    TN_ASSERT_HAS(st->err, "no <notification>");
    tn_load_refused(st, "<events/>", FLEET_ERR_INVAL);
    TN_ASSERT_HAS(st->err, "<events>");
    tn_load_refused(st, "not xml", FLEET_ERR_INVAL);
}

/* An empty <eventTime></eventTime> ends where it starts: it once made the template split loop forever. */
static void
test_empty_event_time_is_filled_in(void **state)
{
    struct tn_state *st = *state;
    struct notif_plan *plan = tn_load_ok(
        st, "<notifications><notification><times>1</times><content><![CDATA[<notification "
            "xmlns=\"urn:ietf:params:xml:ns:netconf:notification:1.0\"><eventTime></eventTime>" TN_IF_EVENT(
                "up") "</notification>]]></content></notification></notifications>");
    char *out = tn_expand(&plan->items[0], 1);

    TN_ASSERT_HAS(out, "<eventTime>2023-11-14T");
    TN_ASSERT_HAS(out, "Z</eventTime><if-state-change");
    free(out);
    notif_plan_free(plan);
}

/* A NUL byte (in a comment, before the entries) once made the entry count too small for the entries. */
static void
test_refuses_nul_byte(void **state)
{
    struct tn_state *st = *state;
    static const char head[] = "<notifications><!-- a comment with a NUL";
    static const char tail[] = " byte --><notification><times>1</times><content><![CDATA[" TN_NOTIF(
        TN_IF_EVENT("up")) "]]></content></notification></notifications>";
    struct notif_plan *plan = NULL;
    FILE *f;

    snprintf(st->file, sizeof st->file, "%s/notifications.xml", st->tmp);
    assert_non_null(f = fopen(st->file, "w"));
    assert_int_equal(fwrite(head, 1, sizeof head, f), sizeof head); /* its terminating NUL too */
    assert_int_equal(fwrite(tail, 1, sizeof tail - 1, f), sizeof tail - 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(notif_plan_load(st->file, st->ctx, &plan, st->err, sizeof st->err), FLEET_ERR_INVAL);
    assert_null(plan);
    TN_ASSERT_HAS(st->err, "a NUL byte at offset 40");
    TN_ASSERT_HAS(st->err, st->file);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_example_files_load_and_validate, tn_setup, tn_teardown),
        cmocka_unit_test_setup_teardown(test_odl_fields_in_file_order, tn_setup, tn_teardown),
        cmocka_unit_test_setup_teardown(test_odl_cdata_and_escaped_content_expand_alike, tn_setup,
                                        tn_teardown),
        cmocka_unit_test_setup_teardown(test_rate_fields, tn_setup, tn_teardown),
        cmocka_unit_test_setup_teardown(test_placeholders_expand, tn_setup, tn_teardown),
        cmocka_unit_test(test_format_time),
        cmocka_unit_test_setup_teardown(test_refuses_payload_not_in_schemas, tn_setup, tn_teardown),
        cmocka_unit_test_setup_teardown(test_refuses_invalid_value, tn_setup, tn_teardown),
        cmocka_unit_test_setup_teardown(test_refuses_missing_file, tn_setup, tn_teardown),
        cmocka_unit_test_setup_teardown(test_refuses_bad_rates, tn_setup, tn_teardown),
        cmocka_unit_test_setup_teardown(test_odl_defaults_for_missing_times_and_delay_and_times_zero,
                                        tn_setup, tn_teardown),
        cmocka_unit_test_setup_teardown(test_refuses_odl_defects, tn_setup, tn_teardown),
        cmocka_unit_test_setup_teardown(test_refuses_nul_byte, tn_setup, tn_teardown),
        cmocka_unit_test_setup_teardown(test_empty_event_time_is_filled_in, tn_setup, tn_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
