/*
 * Unit tests of fleetsim-stress snmp's pure parts: the walk state machine
 * (stress/snmp_walk.c: which OIDs the next GETBULK asks for, where a column
 * ends, what counts as a sample), the T = P x R + c fit, and the snmp
 * command line (stress/options.c). Responses are real encoded messages,
 * decoded by wire/spdu.c as the client decodes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "options.h"
#include "snmp_walk.h"

#define RESPONSE_BYTES 8192

/* One varbind of a hand-made response. */
struct vb {
    const char *oid; /* dotted name */
    uint8_t tag;     /* value type or exception */
    int64_t value;   /* numeric value, or ignored */
};

/* A response message and its decoding (which points into buf). */
struct response {
    uint8_t buf[RESPONSE_BYTES];
    struct spdu_message msg;
};

static struct oid
oid(const char *text)
{
    struct oid o;

    assert_int_equal(oid_parse(text, &o), FLEET_OK);
    return o;
}

static void
assert_oid(const struct oid *got, const char *want)
{
    char text[512];

    oid_format(got, text, sizeof text);
    assert_string_equal(text, want);
}

static struct response *
response(const struct vb *vbs, size_t count)
{
    struct response *r = calloc(1, sizeof *r);
    struct spdu_encoder e;
    uint8_t *out;
    size_t out_len;

    assert_non_null(r);
    spdu_enc_init(&e, r->buf, sizeof r->buf, SPDU_HEADROOM(6), spdu_bindings_budget(4000, 6, 7));
    for (size_t i = 0; i < count; i++) {
        struct oid name = oid(vbs[i].oid);
        struct spdu_value v = {.tag = vbs[i].tag};
        if (vbs[i].tag == BER_INTEGER) {
            v.v.i = vbs[i].value;
        } else if (walk_is_numeric(vbs[i].tag)) {
            v.v.u = (uint64_t)vbs[i].value;
        } else if (vbs[i].tag == BER_OCTET_STRING) {
            v.v.bytes.ptr = (const uint8_t *)"eth0";
            v.v.bytes.len = 4;
        }
        assert_int_equal(spdu_enc_binding(&e, &name, &v), FLEET_OK);
    }
    spdu_enc_finish_message(&e, SPDU_V2C, (const uint8_t *)"public", 6, SPDU_RESPONSE, 7, 0, 0, &out,
                            &out_len);
    assert_int_equal(spdu_message_decode(out, out_len, &r->msg), FLEET_OK);
    return r;
}

/* Feed a response to the walk; @return what walk_response() returned. */
static enum fleet_err
feed(struct walk *w, const struct vb *vbs, size_t count, const char **why)
{
    struct response *r = response(vbs, count);
    enum fleet_err err = walk_response(w, &r->msg.pdu, why);

    free(r);
    return err;
}

#define FEED(w, why, ...)                                                                                    \
    feed((w), (const struct vb[]){__VA_ARGS__},                                                              \
         sizeof((const struct vb[]){__VA_ARGS__}) / sizeof(struct vb), (why))

struct fixture {
    struct walk_plan plan;
    struct walk_column cols[16];
    struct walk w;
    const struct oid *names[16];
};

static struct fixture *
start(const char *const *roots, uint32_t count, uint32_t max_vars)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct oid oids[16];

    assert_non_null(f);
    assert_true(count <= 16 && max_vars <= 16);
    for (uint32_t i = 0; i < count; i++) {
        oids[i] = oid(roots[i]);
    }
    assert_int_equal(walk_plan_init(&f->plan, oids, count, max_vars), FLEET_OK);
    walk_start(&f->w, &f->plan, f->cols);
    return f;
}

static void
stop(struct fixture *f)
{
    walk_plan_close(&f->plan);
    free(f);
}

static void
test_scalar_root_is_walked_from_its_parent(void **state)
{
    const char *roots[] = {"1.3.6.1.2.1.1.3.0", "1.3.6.1.2.1.2.2.1.10"};
    struct fixture *f = start(roots, 2, 10);

    (void)state;
    assert_int_equal(walk_request(&f->w, f->names), 2);
    assert_oid(f->names[0], "1.3.6.1.2.1.1.3");
    assert_oid(f->names[1], "1.3.6.1.2.1.2.2.1.10");
    assert_oid(&f->plan.roots[0], "1.3.6.1.2.1.1.3.0");
    stop(f);
}

static void
test_scalar_walk_returns_the_scalar_and_ends(void **state)
{
    const char *roots[] = {"1.3.6.1.2.1.1.3.0"};
    struct fixture *f = start(roots, 1, 10);
    const char *why;

    (void)state;
    assert_int_equal(FEED(&f->w, &why, {"1.3.6.1.2.1.1.3.0", BER_TIMETICKS, 4242},
                          {"1.3.6.1.2.1.1.4.0", BER_OCTET_STRING, 0}),
                     FLEET_OK);
    assert_int_equal(f->w.samples, 1);
    assert_int_equal(f->w.values, 1);
    assert_true(walk_finished(&f->w));
    stop(f);
}

static void
test_column_ends_when_an_oid_leaves_its_subtree(void **state)
{
    const char *roots[] = {"1.3.6.1.2.1.2.2.1.10"};
    struct fixture *f = start(roots, 1, 10);
    const char *why;

    (void)state;
    assert_int_equal(FEED(&f->w, &why, {"1.3.6.1.2.1.2.2.1.10.1", BER_COUNTER32, 1},
                          {"1.3.6.1.2.1.2.2.1.10.2", BER_COUNTER32, 2}),
                     FLEET_OK);
    assert_false(walk_finished(&f->w));
    assert_int_equal(walk_request(&f->w, f->names), 1);
    assert_oid(f->names[0], "1.3.6.1.2.1.2.2.1.10.2");
    assert_int_equal(FEED(&f->w, &why, {"1.3.6.1.2.1.2.2.1.10.3", BER_COUNTER32, 3},
                          {"1.3.6.1.2.1.2.2.1.11.1", BER_COUNTER32, 4}),
                     FLEET_OK);
    assert_true(walk_finished(&f->w));
    assert_int_equal(f->w.samples, 3);
    assert_int_equal(f->w.values, 3);
    stop(f);
}

static void
test_end_of_mib_view_ends_a_column_and_later_padding_is_ignored(void **state)
{
    const char *roots[] = {"1.3.6.1.6.3.1", "1.3.6.1.9"};
    struct fixture *f = start(roots, 2, 10);
    const char *why;

    (void)state;
    /* Repetition 0: a.1, b ends; repetition 1: a ends, b's varbind is padding after its end. */
    assert_int_equal(FEED(&f->w, &why, {"1.3.6.1.6.3.1.1", BER_INTEGER, -5},
                          {"1.3.6.1.9", BER_END_OF_MIB_VIEW, 0}, {"1.3.6.1.6.3.1.2", BER_END_OF_MIB_VIEW, 0},
                          {"1.3.6.1.9.1", BER_INTEGER, 9}),
                     FLEET_OK);
    assert_true(walk_finished(&f->w));
    assert_int_equal(f->w.samples, 1);
    assert_int_equal(f->w.varbinds, 4); /* what the agent encoded, padding included */
    stop(f);
}

static void
test_interleaved_repetitions_map_to_their_columns(void **state)
{
    const char *roots[] = {"1.3.6.1.2.1.2.2.1.2", "1.3.6.1.2.1.2.2.1.10"};
    struct fixture *f = start(roots, 2, 10);
    const char *why;

    (void)state;
    /* Row-major: (descr.1, inOctets.1), (descr.2, inOctets.2), (descr leaves, inOctets.3). */
    assert_int_equal(
        FEED(&f->w, &why, {"1.3.6.1.2.1.2.2.1.2.1", BER_OCTET_STRING, 0},
             {"1.3.6.1.2.1.2.2.1.10.1", BER_COUNTER32, 1}, {"1.3.6.1.2.1.2.2.1.2.2", BER_OCTET_STRING, 0},
             {"1.3.6.1.2.1.2.2.1.10.2", BER_COUNTER32, 2}, {"1.3.6.1.2.1.2.2.1.3.1", BER_INTEGER, 6},
             {"1.3.6.1.2.1.2.2.1.10.3", BER_COUNTER32, 3}),
        FLEET_OK);
    assert_int_equal(f->w.values, 5);
    assert_int_equal(f->w.samples, 3);
    assert_int_equal(walk_request(&f->w, f->names), 1);
    assert_oid(f->names[0], "1.3.6.1.2.1.2.2.1.10.3");
    stop(f);
}

static void
test_window_takes_max_vars_roots_and_refills_in_order(void **state)
{
    const char *roots[] = {"1.3.6.1.2.1.2.2.1.10", "1.3.6.1.2.1.2.2.1.16", "1.3.6.1.2.1.31.1.1.1.6"};
    struct fixture *f = start(roots, 3, 2);
    const char *why;

    (void)state;
    assert_int_equal(walk_request(&f->w, f->names), 2);
    assert_oid(f->names[0], "1.3.6.1.2.1.2.2.1.10");
    assert_oid(f->names[1], "1.3.6.1.2.1.2.2.1.16");
    /* The first column ends, the second goes on: the third root joins behind it. */
    assert_int_equal(FEED(&f->w, &why, {"1.3.6.1.2.1.2.2.1.11.1", BER_COUNTER32, 1},
                          {"1.3.6.1.2.1.2.2.1.16.1", BER_COUNTER32, 2}),
                     FLEET_OK);
    assert_int_equal(walk_request(&f->w, f->names), 2);
    assert_oid(f->names[0], "1.3.6.1.2.1.2.2.1.16.1");
    assert_oid(f->names[1], "1.3.6.1.2.1.31.1.1.1.6");
    assert_int_equal(FEED(&f->w, &why, {"1.3.6.1.2.1.2.2.1.17.1", BER_COUNTER32, 1},
                          {"1.3.6.1.2.1.31.1.1.1.6.1", BER_COUNTER64, 1ll << 40}),
                     FLEET_OK);
    assert_int_equal(walk_request(&f->w, f->names), 1);
    assert_oid(f->names[0], "1.3.6.1.2.1.31.1.1.1.6.1");
    assert_int_equal(FEED(&f->w, &why, {"1.3.6.1.2.1.31.1.1.1.7.1", BER_COUNTER64, 1}), FLEET_OK);
    assert_true(walk_finished(&f->w));
    assert_int_equal(f->w.samples, 2);
    stop(f);
}

static void
test_oid_not_increasing_is_refused(void **state)
{
    const char *roots[] = {"1.3.6.1.2.1.2.2.1.10"};
    struct fixture *f = start(roots, 1, 10);
    const char *why;

    (void)state;
    assert_int_equal(FEED(&f->w, &why, {"1.3.6.1.2.1.2.2.1.10.5", BER_COUNTER32, 1}), FLEET_OK);
    assert_int_equal(FEED(&f->w, &why, {"1.3.6.1.2.1.2.2.1.10.4", BER_COUNTER32, 1}), FLEET_ERR_PROTO);
    assert_string_equal(why, "OID not increasing");
    stop(f);
}

static void
test_response_without_varbinds_is_refused(void **state)
{
    const char *roots[] = {"1.3.6.1.2.1.2.2.1.10"};
    struct fixture *f = start(roots, 1, 10);
    struct response *r = response(NULL, 0);
    const char *why;

    (void)state;
    assert_int_equal(walk_response(&f->w, &r->msg.pdu, &why), FLEET_ERR_PROTO);
    assert_string_equal(why, "response neither advances nor ends any column");
    free(r);
    stop(f);
}

static void
test_only_numeric_types_are_samples(void **state)
{
    (void)state;
    assert_true(walk_is_numeric(BER_INTEGER));
    assert_true(walk_is_numeric(BER_COUNTER32));
    assert_true(walk_is_numeric(BER_GAUGE32));
    assert_true(walk_is_numeric(BER_TIMETICKS));
    assert_true(walk_is_numeric(BER_COUNTER64));
    assert_false(walk_is_numeric(BER_OCTET_STRING));
    assert_false(walk_is_numeric(BER_IPADDRESS));
    assert_false(walk_is_numeric(BER_OID));
    assert_false(walk_is_numeric(BER_OPAQUE));
}

static void
test_plan_refuses_short_oids_and_zero_sizes(void **state)
{
    struct walk_plan plan;
    struct oid ok = oid("1.3.6.1");
    struct oid one = {.len = 1, .sub = {1}};

    (void)state;
    assert_int_equal(walk_plan_init(&plan, &one, 1, 10), FLEET_ERR_INVAL);
    assert_int_equal(walk_plan_init(&plan, &ok, 0, 10), FLEET_ERR_INVAL);
    assert_int_equal(walk_plan_init(&plan, &ok, 1, 0), FLEET_ERR_INVAL);
    walk_plan_close(&plan);
}

static void
test_fit_of_exact_line_has_r_squared_one(void **state)
{
    /* T = P x 100 us + 50 us */
    double t[] = {150, 250, 350, 450, 550};
    uint32_t p[] = {1, 2, 3, 4, 5};
    struct walk_fit fit;

    (void)state;
    walk_fit_compute(t, p, 5, 100.0, &fit);
    assert_int_equal(fit.n, 5);
    assert_float_equal(fit.c_us, 50.0, 1e-9);
    assert_true(fit.r_squared_valid);
    assert_float_equal(fit.r_squared, 1.0, 1e-12);
    assert_float_equal(fit.mean_rel_error, 0.0, 1e-12);
    assert_true(fit.line_valid);
    assert_float_equal(fit.slope, 1.0, 1e-12);
    assert_float_equal(fit.intercept_us, 50.0, 1e-9);
}

static void
test_fit_with_noise_reports_residuals(void **state)
{
    /* x = P x R = 100, 200; residuals around c = 20: -10, +10. */
    double t[] = {110, 230};
    uint32_t p[] = {1, 2};
    struct walk_fit fit;

    (void)state;
    walk_fit_compute(t, p, 2, 100.0, &fit);
    assert_float_equal(fit.c_us, 20.0, 1e-9);
    /* SS_res = 200, SS_tot = 2 x 60^2 = 7200 */
    assert_float_equal(fit.r_squared, 1.0 - 200.0 / 7200.0, 1e-12);
    assert_float_equal(fit.mean_rel_error, (10.0 / 110 + 10.0 / 230) / 2, 1e-12);
    assert_float_equal(fit.slope, 1.2, 1e-12);
    assert_float_equal(fit.intercept_us, -10.0, 1e-9);
}

static void
test_fit_with_equal_requests_has_no_line(void **state)
{
    double t[] = {300, 320, 340};
    uint32_t p[] = {3, 3, 3};
    double one[] = {300};
    struct walk_fit fit;

    (void)state;
    walk_fit_compute(t, p, 3, 100.0, &fit);
    assert_float_equal(fit.c_us, 20.0, 1e-9);
    assert_true(fit.r_squared_valid);
    assert_float_equal(fit.r_squared, 0.0, 1e-12);
    assert_false(fit.line_valid);
    walk_fit_compute(one, p, 1, 100.0, &fit);
    assert_false(fit.r_squared_valid);
    assert_false(fit.line_valid);
    assert_float_equal(fit.c_us, 0.0, 1e-9);
    walk_fit_compute(NULL, NULL, 0, 100.0, &fit);
    assert_int_equal(fit.n, 0);
}

static enum stress_parse
parse(struct stress_options *o, char *err, size_t len, int argc, const char **argv)
{
    return stress_options_parse(argc, (char **)argv, o, err, len);
}

static void
test_snmp_defaults_follow_the_issue(void **state)
{
    const char *argv[] = {"fleetsim-stress", "snmp"};
    struct stress_options o;
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, err, sizeof err, 2, argv), STRESS_PARSE_RUN);
    assert_int_equal(o.mode, STRESS_SNMP);
    assert_int_equal(o.port, 16100);
    assert_int_equal(o.ip, 0x7f000001u);
    assert_int_equal(o.device_count, 1);
    assert_string_equal(o.community, "public");
    assert_string_equal(o.profile, "minimal");
    assert_null(o.oids);
    assert_int_equal(o.concurrency, 100);
    assert_int_equal(o.max_repetitions, 25);
    assert_int_equal(o.max_vars, 10);
    assert_int_equal(o.timeout_ms, 1500);
    assert_int_equal(o.retries, 2);
    assert_int_equal(o.rounds, 1);
    assert_int_equal(o.duration_s, 0);
}

static void
test_snmp_options_are_understood(void **state)
{
    const char *argv[] = {"fleetsim-stress",
                          "snmp",
                          "--port",
                          "2161",
                          "--device-count",
                          "5",
                          "--ip-per-device",
                          "--community",
                          "private",
                          "--oids",
                          "1.3.6.1.2.1.2.2.1.10,.1.3.6.1.2.1.1.3.0",
                          "--max-repetitions",
                          "50",
                          "--max-vars-per-pdu",
                          "3",
                          "--timeout",
                          "200",
                          "--retries",
                          "0",
                          "--duration",
                          "7",
                          "--concurrency",
                          "2"};
    struct stress_options o;
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, err, sizeof err, sizeof argv / sizeof argv[0], argv), STRESS_PARSE_RUN);
    assert_int_equal(o.port, 2161);
    assert_int_equal(o.ip_per_device, 1);
    assert_string_equal(o.community, "private");
    assert_string_equal(o.oids, "1.3.6.1.2.1.2.2.1.10,.1.3.6.1.2.1.1.3.0");
    assert_null(o.profile);
    assert_int_equal(o.max_repetitions, 50);
    assert_int_equal(o.max_vars, 3);
    assert_int_equal(o.timeout_ms, 200);
    assert_int_equal(o.retries, 0);
    assert_int_equal(o.duration_s, 7);
    assert_int_equal(o.concurrency, 2);
}

static void
test_v3_user_is_split_for_every_auth_protocol(void **state)
{
    static const char *const auths[] = {"none", "md5", "sha", "sha224", "sha256", "sha384", "sha512"};
    const char *argv[] = {"fleetsim-stress", "snmp", "--v3-user", NULL};
    struct stress_options o;
    char text[128];
    char err[256];

    (void)state;
    for (int i = 0; i < 7; i++) {
        snprintf(text, sizeof text, "ops:%s:authpass1:%s:priv:pass:1", auths[i], i ? "aes" : "none");
        argv[3] = text;
        assert_int_equal(parse(&o, err, sizeof err, 4, argv), STRESS_PARSE_RUN);
        assert_string_equal(o.v3_user, text);
        assert_int_equal(o.v3.name_len, 3);
        assert_memory_equal(o.v3.name, "ops", 3);
        assert_int_equal(o.v3.auth, (enum susm_auth)i);
        assert_string_equal(o.v3.auth_name, auths[i]);
        assert_int_equal(o.v3.auth_password_len, 9);
        assert_memory_equal(o.v3.auth_password, "authpass1", 9);
        assert_int_equal(o.v3.priv, i ? SUSM_PRIV_AES128 : SUSM_PRIV_NONE);
        /* Only the last field may hold a colon. */
        assert_string_equal(o.v3.priv_password, "priv:pass:1");
        assert_int_equal(o.v3.priv_password_len, 11);
    }
}

static void
test_v3_user_takes_names_as_netsnmp_writes_them(void **state)
{
    /* As snmpwalk -a/-x take them, in any case; printed back (manifest, summary) in lower case. */
    static const struct {
        const char *text;    /* the --v3-user value */
        enum susm_auth auth; /* its AUTH */
        const char *name;    /* o.v3.auth_name */
        enum susm_priv priv; /* its PRIV */
    } cases[] = {
        {"ops:SHA:authpass1:AES:privpass1", SUSM_AUTH_SHA1, "sha", SUSM_PRIV_AES128},
        {"ops:SHA1:authpass1:AES-128:privpass1", SUSM_AUTH_SHA1, "sha", SUSM_PRIV_AES128},
        {"ops:MD5:authpass1:NONE:", SUSM_AUTH_MD5, "md5", SUSM_PRIV_NONE},
        {"ops:SHA-224:authpass1:aes128:privpass1", SUSM_AUTH_SHA224, "sha224", SUSM_PRIV_AES128},
        {"ops:SHA-256:authpass1:AES128:privpass1", SUSM_AUTH_SHA256, "sha256", SUSM_PRIV_AES128},
        {"ops:sha-384:authpass1:Aes:privpass1", SUSM_AUTH_SHA384, "sha384", SUSM_PRIV_AES128},
        {"ops:Sha-512:authpass1:None:", SUSM_AUTH_SHA512, "sha512", SUSM_PRIV_NONE},
        {"ops:NONE::NONE:", SUSM_AUTH_NONE, "none", SUSM_PRIV_NONE},
    };
    const char *argv[] = {"fleetsim-stress", "snmp", "--v3-user", NULL};
    struct stress_options o;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        argv[3] = cases[i].text;
        assert_int_equal(parse(&o, err, sizeof err, 4, argv), STRESS_PARSE_RUN);
        assert_int_equal(o.v3.auth, cases[i].auth);
        assert_string_equal(o.v3.auth_name, cases[i].name);
        assert_int_equal(o.v3.priv, cases[i].priv);
        assert_int_equal(o.v3.name_len, 3);
        assert_int_equal(o.v3.auth_password_len, cases[i].auth == SUSM_AUTH_NONE ? 0 : 9);
    }
}

static void
test_snmp_bad_usage_is_refused_with_a_message(void **state)
{
    const char *v3_bad[] = {"fleetsim-stress", "snmp", "--v3-user", "u:SHA-1024:authpass1:none:"};
    const char *v3_dash[] = {"fleetsim-stress", "snmp", "--v3-user", "u:SHA-:authpass1:none:"};
    const char *v3_aes256[] = {"fleetsim-stress", "snmp", "--v3-user",
                               "u:SHA-256:authpass1:AES-256:privpass1"};
    const char *v3_priv[] = {"fleetsim-stress", "snmp", "--v3-user", "u:none::aes:privpass1"};
    const char *v3_short[] = {"fleetsim-stress", "snmp", "--v3-user", "u:sha384:short:none:"};
    const char *v3_fields[] = {"fleetsim-stress", "snmp", "--v3-user", "u:sha:authpass1"};
    const char *oids[] = {"fleetsim-stress", "snmp", "--oids", "1.3.6.1,ifTable"};
    const char *both[] = {"fleetsim-stress", "snmp", "--rounds", "2", "--duration", "3"};
    const char *choose[] = {"fleetsim-stress", "snmp", "--oids", "1.3.6", "--profile", "minimal"};
    const char *reps[] = {"fleetsim-stress", "snmp", "--max-repetitions", "0"};
    struct stress_options o;
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, err, sizeof err, 4, v3_bad), STRESS_PARSE_ERROR);
    assert_string_equal(err,
                        "--v3-user NAME:AUTH:AUTHKEY:PRIV:PRIVKEY: AUTH must be none, md5, sha (sha1, "
                        "SHA-1), sha224 (SHA-224), sha256 (SHA-256), sha384 (SHA-384) or sha512 (SHA-512) "
                        "(in any case)");
    assert_int_equal(parse(&o, err, sizeof err, 4, v3_dash), STRESS_PARSE_ERROR);
    assert_non_null(strstr(err, "AUTH must be none, md5"));
    assert_int_equal(parse(&o, err, sizeof err, 4, v3_aes256), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--v3-user NAME:AUTH:AUTHKEY:PRIV:PRIVKEY: PRIV must be none or aes (AES-128, "
                             "aes128) (in any case)");
    assert_int_equal(parse(&o, err, sizeof err, 4, v3_priv), STRESS_PARSE_ERROR);
    assert_string_equal(err,
                        "--v3-user NAME:AUTH:AUTHKEY:PRIV:PRIVKEY: privacy (PRIV aes) needs authentication "
                        "(an AUTH other than none)");
    assert_int_equal(parse(&o, err, sizeof err, 4, v3_short), STRESS_PARSE_ERROR);
    assert_string_equal(err,
                        "--v3-user NAME:AUTH:AUTHKEY:PRIV:PRIVKEY: AUTHKEY must have at least 8 characters "
                        "(RFC 3414)");
    assert_int_equal(parse(&o, err, sizeof err, 4, v3_fields), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--v3-user NAME:AUTH:AUTHKEY:PRIV:PRIVKEY: it needs five fields "
                             "NAME:AUTH:AUTHKEY:PRIV:PRIVKEY");
    assert_int_equal(parse(&o, err, sizeof err, 4, oids), STRESS_PARSE_ERROR);
    assert_string_equal(
        err, "--oids takes dotted OIDs (at most 10000) separated by commas; \"ifTable\" is not one");
    assert_int_equal(parse(&o, err, sizeof err, 6, both), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--rounds and --duration exclude each other");
    assert_int_equal(parse(&o, err, sizeof err, 6, choose), STRESS_PARSE_ERROR);
    assert_string_equal(
        err, "--oids and --profile exclude each other: --oids walks those OIDs instead of a profile's");
    assert_int_equal(parse(&o, err, sizeof err, 4, reps), STRESS_PARSE_ERROR);
    assert_string_equal(err, "--max-repetitions must be a number from 1 to 10000, not \"0\"");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_root_is_walked_from_its_parent),
        cmocka_unit_test(test_scalar_walk_returns_the_scalar_and_ends),
        cmocka_unit_test(test_column_ends_when_an_oid_leaves_its_subtree),
        cmocka_unit_test(test_end_of_mib_view_ends_a_column_and_later_padding_is_ignored),
        cmocka_unit_test(test_interleaved_repetitions_map_to_their_columns),
        cmocka_unit_test(test_window_takes_max_vars_roots_and_refills_in_order),
        cmocka_unit_test(test_oid_not_increasing_is_refused),
        cmocka_unit_test(test_response_without_varbinds_is_refused),
        cmocka_unit_test(test_only_numeric_types_are_samples),
        cmocka_unit_test(test_plan_refuses_short_oids_and_zero_sizes),
        cmocka_unit_test(test_fit_of_exact_line_has_r_squared_one),
        cmocka_unit_test(test_fit_with_noise_reports_residuals),
        cmocka_unit_test(test_fit_with_equal_requests_has_no_line),
        cmocka_unit_test(test_snmp_defaults_follow_the_issue),
        cmocka_unit_test(test_snmp_options_are_understood),
        cmocka_unit_test(test_v3_user_is_split_for_every_auth_protocol),
        cmocka_unit_test(test_v3_user_takes_names_as_netsnmp_writes_them),
        cmocka_unit_test(test_snmp_bad_usage_is_refused_with_a_message),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
