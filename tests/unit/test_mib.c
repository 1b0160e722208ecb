/*
 * GET and GETNEXT over a device's live MIB objects (one-device fleet,
 * devfix.h): scalar and table instances, the exceptions (noSuchInstance,
 * noSuchObject, endOfMibView), the column-order walk of ifTable and
 * SNMPv1's view without Counter64.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "devfix.h"
#include "mib.h"

#define IF_ENTRY  1, 3, 6, 1, 2, 1, 2, 2, 1
#define IFX_ENTRY 1, 3, 6, 1, 2, 1, 31, 1, 1, 1

/* @p o with @p arc appended. */
static struct oid
oid_plus(struct oid o, uint32_t arc)
{
    o.sub[o.len++] = arc;
    return o;
}

static void
assert_string_value(const struct spdu_value *v, const char *want)
{
    assert_int_equal(v->tag, BER_OCTET_STRING);
    assert_int_equal(v->v.bytes.len, strlen(want));
    assert_memory_equal(v->v.bytes.ptr, want, strlen(want));
}

static void
test_get_scalars(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    struct mib_req rq;
    struct spdu_value v;
    struct oid o;
    uint64_t now = DEVFIX_NOW_MS + 12345;

    assert_int_equal(mib_req_init(&rq, &f->dev, now, 0), FLEET_OK);
    o = OID(1, 3, 6, 1, 2, 1, 1, 3, 0); /* sysUpTime.0 */
    mib_get(&rq, &o, &v);
    assert_int_equal(v.tag, BER_TIMETICKS);
    assert_int_equal(v.v.u, (now - devview_boot_ms(&f->dev)) / 10);
    o = OID(1, 3, 6, 1, 2, 1, 2, 1, 0); /* ifNumber.0 */
    mib_get(&rq, &o, &v);
    assert_int_equal(v.tag, BER_INTEGER);
    assert_int_equal(v.v.i, f->type.profile->if_count);
    o = OID(1, 3, 6, 1, 2, 1, 1, 1, 0); /* sysDescr.0 */
    mib_get(&rq, &o, &v);
    assert_string_value(&v, f->type.profile->sys_descr);
    o = OID(1, 3, 6, 1, 2, 1, 1, 5, 0); /* sysName.0 */
    mib_get(&rq, &o, &v);
    assert_string_value(&v, "device-3");
    /* A scalar without .0, or with another instance: the object exists, the instance does not. */
    o = OID(1, 3, 6, 1, 2, 1, 1, 3);
    mib_get(&rq, &o, &v);
    assert_int_equal(v.tag, BER_NO_SUCH_INSTANCE);
    o = OID(1, 3, 6, 1, 2, 1, 1, 3, 1);
    mib_get(&rq, &o, &v);
    assert_int_equal(v.tag, BER_NO_SUCH_INSTANCE);
    devfix_free(f);
}

static void
check_if_descr(const char *profile)
{
    struct devfix *f = devfix_new(profile);
    const struct profile *p = f->type.profile;
    struct mib_req rq;
    struct spdu_value v;
    struct oid col = OID(IF_ENTRY, 2), o;

    assert_int_equal(mib_req_init(&rq, &f->dev, DEVFIX_NOW_MS, 0), FLEET_OK);
    for (uint32_t n = 1; n <= p->if_count; n++) {
        o = oid_plus(col, n);
        mib_get(&rq, &o, &v);
        assert_string_value(&v, p->ifs[n - 1].name);
        o = oid_plus(OID(IF_ENTRY, 1), n); /* ifIndex.n */
        mib_get(&rq, &o, &v);
        assert_int_equal(v.tag, BER_INTEGER);
        assert_int_equal(v.v.i, n);
    }
    o = oid_plus(col, p->if_count + 1);
    mib_get(&rq, &o, &v);
    assert_int_equal(v.tag, BER_NO_SUCH_INSTANCE);
    o = oid_plus(col, 0);
    mib_get(&rq, &o, &v);
    assert_int_equal(v.tag, BER_NO_SUCH_INSTANCE);
    o = oid_plus(oid_plus(col, 1), 1); /* ifDescr.1.1: too long an index */
    mib_get(&rq, &o, &v);
    assert_int_equal(v.tag, BER_NO_SUCH_INSTANCE);
    devfix_free(f);
}

static void
test_get_if_descr_minimal(void **state)
{
    (void)state;
    check_if_descr("minimal");
}

static void
test_get_if_descr_crs_x(void **state)
{
    (void)state;
    check_if_descr("crs-x");
}

static void
test_get_unknown_object(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    struct mib_req rq;
    struct spdu_value v;
    struct oid o;

    assert_int_equal(mib_req_init(&rq, &f->dev, DEVFIX_NOW_MS, 0), FLEET_OK);
    o = OID(1, 3, 6, 1, 4, 1, 99999, 1, 0);
    mib_get(&rq, &o, &v);
    assert_int_equal(v.tag, BER_NO_SUCH_OBJECT);
    o = OID(1, 3, 6, 1, 2, 1, 2, 2, 1, 99, 1); /* no column 99 in ifEntry */
    mib_get(&rq, &o, &v);
    assert_int_equal(v.tag, BER_NO_SUCH_OBJECT);
    o = OID(1, 3, 6, 1, 2, 1, 1); /* the system group itself is no object */
    mib_get(&rq, &o, &v);
    assert_int_equal(v.tag, BER_NO_SUCH_OBJECT);
    devfix_free(f);
}

static void
test_next_walks_if_table_in_column_order(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    uint32_t n = f->type.profile->if_count;
    struct mib_req rq;
    struct spdu_value v;
    struct oid name = OID(IF_ENTRY), next, want;

    assert_int_equal(mib_req_init(&rq, &f->dev, DEVFIX_NOW_MS, 0), FLEET_OK);
    /* ifEntry -> ifIndex.1 .. ifIndex.N -> ifDescr.1 .. ifDescr.N -> ifType.1 */
    for (uint32_t col = 1; col <= 2; col++) {
        for (uint32_t row = 1; row <= n; row++) {
            mib_next(&rq, &name, &next, &v);
            want = oid_plus(OID(IF_ENTRY, col), row);
            assert_oid_equal(&next, &want);
            if (col == 1) {
                assert_int_equal(v.tag, BER_INTEGER);
                assert_int_equal(v.v.i, row);
            } else {
                assert_string_value(&v, f->type.profile->ifs[row - 1].name);
            }
            name = next;
        }
    }
    mib_next(&rq, &name, &next, &v);
    want = OID(IF_ENTRY, 3, 1);
    assert_oid_equal(&next, &want);
    assert_int_equal(v.tag, BER_INTEGER);
    /* A name between rows, or past the last row of the last column, moves on. */
    name = OID(IF_ENTRY, 2, 1, 7);
    mib_next(&rq, &name, &next, &v);
    want = OID(IF_ENTRY, 2, 2);
    assert_oid_equal(&next, &want);
    name = OID(IF_ENTRY, 22, 99);
    mib_next(&rq, &name, &next, &v);
    /* Whatever follows the last column's last row is after the ifTable, not inside it. */
    assert_true(oid_cmp(&next, &name) > 0);
    want = OID(IF_ENTRY);
    assert_false(next.len > want.len && !memcmp(next.sub, want.sub, want.len * sizeof *want.sub));
    /* sysUpTime -> sysUpTime.0 */
    name = OID(1, 3, 6, 1, 2, 1, 1, 3);
    mib_next(&rq, &name, &next, &v);
    want = OID(1, 3, 6, 1, 2, 1, 1, 3, 0);
    assert_oid_equal(&next, &want);
    assert_int_equal(v.tag, BER_TIMETICKS);
    devfix_free(f);
}

static void
test_next_end_of_mib_view(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    const struct mib_view *view = &f->type.mib;
    const struct mib_object *last = &view->objects[view->count - 1];
    struct mib_req rq;
    struct spdu_value v;
    struct oid name, next;
    uint32_t steps = 0;

    assert_int_equal(mib_req_init(&rq, &f->dev, DEVFIX_NOW_MS, 0), FLEET_OK);
    name = OID(2, 0);
    mib_next(&rq, &name, &next, &v);
    assert_int_equal(v.tag, BER_END_OF_MIB_VIEW);
    assert_oid_equal(&next, &name);
    /* Past the last object's instances there is nothing. */
    name = oid_plus(last->oid, UINT32_MAX);
    mib_next(&rq, &name, &next, &v);
    assert_int_equal(v.tag, BER_END_OF_MIB_VIEW);
    /* A whole walk from the root ends, strictly increasing, at endOfMibView. */
    name = OID(0, 0);
    for (;;) {
        mib_next(&rq, &name, &next, &v);
        if (v.tag == BER_END_OF_MIB_VIEW) {
            break;
        }
        assert_true(oid_cmp(&next, &name) > 0);
        name = next;
        assert_true(++steps < 100000);
    }
    assert_true(steps > 22 * f->type.profile->if_count);
    devfix_free(f);
}

static void
test_v1_hides_counter64(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    uint32_t n = f->type.profile->if_count;
    struct mib_req v1, v2;
    struct spdu_value v;
    struct oid o = OID(IFX_ENTRY, 6, 1), next, want; /* ifHCInOctets.1 */

    assert_int_equal(mib_req_init(&v2, &f->dev, DEVFIX_NOW_MS, 0), FLEET_OK);
    assert_int_equal(mib_req_init(&v1, &f->dev, DEVFIX_NOW_MS, 1), FLEET_OK);
    mib_get(&v2, &o, &v);
    assert_int_equal(v.tag, BER_COUNTER64);
    mib_get(&v1, &o, &v);
    assert_int_equal(v.tag, BER_NO_SUCH_OBJECT);
    /* GETNEXT from ifOutBroadcastPkts.N: v2 enters ifHCInOctets, v1 skips every HC column. */
    o = oid_plus(OID(IFX_ENTRY, 5), n);
    mib_next(&v2, &o, &next, &v);
    want = OID(IFX_ENTRY, 6, 1);
    assert_oid_equal(&next, &want);
    assert_int_equal(v.tag, BER_COUNTER64);
    mib_next(&v1, &o, &next, &v);
    want = OID(IFX_ENTRY, 14, 1); /* ifLinkUpDownTrapEnable.1 */
    assert_oid_equal(&next, &want);
    assert_int_equal(v.tag, BER_INTEGER);
    /* Counter32 stays visible to v1, and agrees with the low half of Counter64. */
    o = OID(IF_ENTRY, 10, 1);
    mib_get(&v1, &o, &v);
    assert_int_equal(v.tag, BER_COUNTER32);
    {
        uint64_t c32 = v.v.u;
        o = OID(IFX_ENTRY, 6, 1);
        mib_get(&v2, &o, &v);
        assert_int_equal(c32, v.v.u & 0xffffffffu);
        assert_true(v.v.u > 0);
    }
    devfix_free(f);
}

static void
test_oper_status_follows_running(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    char path[256];
    struct mib_req rq;
    struct spdu_value v;
    struct oid o;
    uint64_t t1 = DEVFIX_NOW_MS + 7000;

    devfix_set_now(f, t1);
    snprintf(path, sizeof path, "/ietf-interfaces:interfaces/interface[name='%s']/enabled",
             f->type.profile->ifs[1].name);
    devfix_write_running(f, path, "false");
    assert_int_equal(mib_req_init(&rq, &f->dev, t1 + 1000, 0), FLEET_OK);
    o = OID(IF_ENTRY, 7, 2); /* ifAdminStatus.2 */
    mib_get(&rq, &o, &v);
    assert_int_equal(v.v.i, 2);
    o = OID(IF_ENTRY, 8, 2); /* ifOperStatus.2 */
    mib_get(&rq, &o, &v);
    assert_int_equal(v.v.i, 2);
    o = OID(IF_ENTRY, 8, 1);
    mib_get(&rq, &o, &v);
    assert_int_equal(v.v.i, 1);
    o = OID(IF_ENTRY, 9, 2); /* ifLastChange.2 */
    mib_get(&rq, &o, &v);
    assert_int_equal(v.tag, BER_TIMETICKS);
    assert_int_equal(v.v.u, (t1 - devview_boot_ms(&f->dev)) / 10);
    devfix_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_scalars),
        cmocka_unit_test(test_get_if_descr_minimal),
        cmocka_unit_test(test_get_if_descr_crs_x),
        cmocka_unit_test(test_get_unknown_object),
        cmocka_unit_test(test_next_walks_if_table_in_column_order),
        cmocka_unit_test(test_next_end_of_mib_view),
        cmocka_unit_test(test_v1_hides_counter64),
        cmocka_unit_test(test_oper_status_follows_running),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
