/*
 * Unit tests of profile loading (common/profile.c). The built-in profiles
 * are loaded from schemas/profiles/ exactly as the simulator loads them:
 * crs-x must have 144 interfaces and a collection worth 1,738 samples per
 * device, minimal must load. Broken profiles are written to a temporary
 * folder, each with one defect, and must be refused with a message that
 * names the file and the problem. The ASan build checks that nothing leaks,
 * also on the refusal paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"

/* Longest folder path a test keeps, and longest path it builds from one. */
#define TP_DIR_BYTES  2048
#define TP_PATH_BYTES 4096
/* Room for a loader message. */
#define TP_ERR_BYTES 1024

/* A valid sysObjectID for the generated profiles. */
#define TP_OID "1.3.6.1.4.1.8072.3.2.10"
/* Two Ethernet interfaces, eth0 and eth1. */
#define TP_GROUP                                                                                             \
    "<interface-group><name-format>eth{N}</name-format><count>2</count><type>ethernetCsmacd</type>"          \
    "<speed>1000000000</speed></interface-group>\n"

/* Column OIDs (entry prefixes) and what they are indexed by, to count samples. */
static const uint32_t tp_if_entry[] = {1, 3, 6, 1, 2, 1, 2, 2, 1};          /* IF-MIB ifEntry */
static const uint32_t tp_ifx_entry[] = {1, 3, 6, 1, 2, 1, 31, 1, 1, 1};     /* IF-MIB ifXEntry */
static const uint32_t tp_cpu_entry[] = {1, 3, 6, 1, 2, 1, 25, 3, 3, 1};     /* hrProcessorEntry */
static const uint32_t tp_storage_entry[] = {1, 3, 6, 1, 2, 1, 25, 2, 3, 1}; /* hrStorageEntry */

/* The OpenNMS-style collection of crs-x, in order. */
static const char *const tp_crs_collection[] = {
    "1.3.6.1.2.1.1.3.0",       "1.3.6.1.2.1.31.1.1.1.6",  "1.3.6.1.2.1.31.1.1.1.7",
    "1.3.6.1.2.1.31.1.1.1.8",  "1.3.6.1.2.1.31.1.1.1.9",  "1.3.6.1.2.1.31.1.1.1.10",
    "1.3.6.1.2.1.31.1.1.1.11", "1.3.6.1.2.1.31.1.1.1.12", "1.3.6.1.2.1.31.1.1.1.13",
    "1.3.6.1.2.1.2.2.1.13",    "1.3.6.1.2.1.2.2.1.14",    "1.3.6.1.2.1.2.2.1.19",
    "1.3.6.1.2.1.2.2.1.20",    "1.3.6.1.2.1.25.3.3.1.2",  "1.3.6.1.2.1.25.2.3.1.5",
    "1.3.6.1.2.1.25.2.3.1.6",
};

struct tp_state {
    char schemas[TP_DIR_BYTES];   /* the project's schemas folder */
    char profiles[TP_PATH_BYTES]; /* its built-in profiles */
    char tmp[TP_DIR_BYTES];       /* a fresh folder for generated profiles */
    char file[TP_PATH_BYTES];     /* the generated profile of the running test */
    char err[TP_ERR_BYTES];       /* the loader's message */
};

static int
tp_setup(void **state)
{
    struct tp_state *st = calloc(1, sizeof *st);
    const char *src = getenv("FLEETSIM_SOURCE_DIR");

    assert_non_null(st);
    if (src) {
        snprintf(st->schemas, sizeof st->schemas, "%s/schemas", src);
    } else {
        snprintf(st->schemas, sizeof st->schemas, "%s", FLEETSIM_SCHEMA_DIR);
    }
    snprintf(st->profiles, sizeof st->profiles, "%s/profiles", st->schemas);
    snprintf(st->tmp, sizeof st->tmp, "/tmp/fleetsim-test-profile-XXXXXX");
    assert_non_null(mkdtemp(st->tmp));
    *state = st;
    return 0;
}

static int
tp_teardown(void **state)
{
    struct tp_state *st = *state;
    char path[TP_PATH_BYTES + 32];

    snprintf(path, sizeof path, "%s/p.xml", st->tmp);
    unlink(path);
    snprintf(path, sizeof path, "%s/init.xml", st->tmp);
    unlink(path);
    assert_int_equal(rmdir(st->tmp), 0);
    free(st);
    return 0;
}

/* Write the generated profile: identity with @p oid, then @p groups, then @p extra. */
static const char *
tp_write(struct tp_state *st, const char *oid, const char *groups, const char *extra)
{
    FILE *f;

    snprintf(st->file, sizeof st->file, "%s/p.xml", st->tmp);
    f = fopen(st->file, "w");
    assert_non_null(f);
    fprintf(f,
            "<profile xmlns=\"urn:fleetsim:profile\">\n  <name>t</name>\n"
            "  <identity><sys-descr>test</sys-descr><sys-object-id>%s</sys-object-id></identity>\n"
            "%s%s</profile>\n",
            oid, groups, extra);
    assert_int_equal(fclose(f), 0);
    return st->file;
}

/* Load @p path; it must fail with @p want_rc and a message holding the file name and @p want_msg. */
static void
tp_expect_refused(struct tp_state *st, const char *path, enum fleet_err want_rc, const char *want_msg)
{
    struct profile *p = NULL;
    enum fleet_err rc = profile_load(path, st->profiles, st->schemas, &p, st->err, sizeof st->err);

    if (rc != want_rc || !strstr(st->err, want_msg) || !strstr(st->err, path)) {
        fail_msg("load of %s: rc %d (want %d), message \"%s\" (want \"%s\")", path, rc, want_rc, st->err,
                 want_msg);
    }
    assert_null(p);
}

static struct profile *
tp_expect_loaded(struct tp_state *st, const char *name_or_path)
{
    struct profile *p = NULL;
    enum fleet_err rc = profile_load(name_or_path, st->profiles, st->schemas, &p, st->err, sizeof st->err);

    if (rc != FLEET_OK) {
        fail_msg("load of %s: rc %d, message \"%s\"", name_or_path, rc, st->err);
    }
    assert_non_null(p);
    return p;
}

static int
tp_oid_under(const struct oid *oid, const uint32_t *prefix, size_t len)
{
    return oid->len == len + 1 && !memcmp(oid->sub, prefix, len * sizeof *prefix);
}

static const struct profile_interface *
tp_find_if(const struct profile *p, const char *name, uint32_t *if_index)
{
    for (uint32_t i = 0; i < p->if_count; i++) {
        if (!strcmp(p->ifs[i].name, name)) {
            *if_index = i + 1;
            return &p->ifs[i];
        }
    }
    fail_msg("no interface %s", name);
    return NULL;
}

/* What one OpenNMS-style collection of a device yields: scalars once, columns once per row. */
static uint32_t
tp_samples(const struct profile *p)
{
    uint32_t samples = 0;

    for (uint32_t i = 0; i < p->collection_count; i++) {
        const struct oid *o = &p->collection[i];
        if (tp_oid_under(o, tp_if_entry, 9) || tp_oid_under(o, tp_ifx_entry, 10)) {
            samples += p->if_count;
        } else if (tp_oid_under(o, tp_cpu_entry, 10)) {
            samples += p->cpu_count;
        } else if (tp_oid_under(o, tp_storage_entry, 10)) {
            samples += p->storage_count;
        } else {
            assert_int_equal(o->sub[o->len - 1], 0); /* anything else must be a scalar instance */
            samples += 1;
        }
    }
    return samples;
}

static void
test_crs_x_has_144_interfaces_and_1738_samples(void **state)
{
    struct tp_state *st = *state;
    struct profile *p = tp_expect_loaded(st, "crs-x");
    const struct profile_interface *ifc;
    char buf[256];
    uint32_t if_index = 0;

    assert_string_equal(p->name, "crs-x");
    assert_int_equal(p->if_count, 144);
    assert_int_equal(p->cpu_count, 3);
    assert_int_equal(p->storage_count, 3);
    assert_int_equal(p->collection_count, sizeof tp_crs_collection / sizeof tp_crs_collection[0]);
    for (uint32_t i = 0; i < p->collection_count; i++) {
        assert_string_equal(oid_format(&p->collection[i], buf, sizeof buf), tp_crs_collection[i]);
    }
    assert_int_equal(tp_samples(p), 1738);

    assert_string_equal(oid_format(&p->sys_object_id, buf, sizeof buf), "1.3.6.1.4.1.9.1.613");
    assert_non_null(strstr(p->sys_descr, "IOS XR"));
    assert_string_equal(p->hostname_format, "crs-x-{DEVICE}");
    assert_int_equal(p->sys_services, 6);

    /* Groups expand in order; ifIndex is position + 1. */
    assert_string_equal(p->ifs[0].name, "MgmtEth0/RP0/CPU0/0");
    ifc = tp_find_if(p, "Bundle-Ether1", &if_index);
    assert_int_equal(ifc->iftype, 161);
    assert_string_equal(ifc->type, "ieee8023adLag");
    assert_string_equal(ifc->description, "core bundle 1");
    ifc = tp_find_if(p, "Loopback1", &if_index);
    assert_int_equal(ifc->iftype, 24);
    assert_int_equal(ifc->speed_bps, 0);
    assert_null(ifc->description);
    ifc = tp_find_if(p, "HundredGigE0/3/0/3", &if_index);
    assert_int_equal(ifc->speed_bps, UINT64_C(100000000000));
    assert_int_equal(ifc->mtu, 9216);
    assert_true(ifc->enabled && ifc->link_up);
    ifc = tp_find_if(p, "TenGigE0/6/0/39", &if_index);
    assert_int_equal(if_index, 144);
    ifc = tp_find_if(p, "MgmtEth0/RP1/CPU0/0", &if_index);
    assert_true(ifc->enabled && !ifc->link_up);

    assert_true(p->traffic.util_min > 0.0999 && p->traffic.util_min < 0.1001);
    assert_true(p->traffic.util_max > 0.4499 && p->traffic.util_max < 0.4501);
    assert_int_equal(p->traffic.period_s, 86400);
    assert_int_equal(p->storages[2].type, 9);
    assert_string_equal(p->storages[2].descr, "bootflash:");
    assert_null(p->initial_config_file);
    profile_free(p);
}

static void
test_minimal_loads_by_path(void **state)
{
    struct tp_state *st = *state;
    char path[TP_PATH_BYTES + 16];
    struct profile *p;
    const struct profile_interface *ifc;
    uint32_t if_index = 0;

    snprintf(path, sizeof path, "%s/minimal.xml", st->profiles);
    p = tp_expect_loaded(st, path);
    assert_string_equal(p->name, "minimal");
    assert_int_equal(p->if_count, 5);
    ifc = tp_find_if(p, "Loopback0", &if_index);
    assert_int_equal(if_index, 5);
    assert_int_equal(ifc->iftype, 24);
    assert_string_equal(p->ifs[2].description, "port 2");
    assert_int_equal(tp_samples(p), 1 + 12 * 5 + 1 + 2 * 2);
    assert_non_null(strstr(p->path, "/profiles/minimal.xml"));
    assert_true(p->path[0] == '/');
    profile_free(p);
}

static void
test_generated_profile_takes_defaults_and_files(void **state)
{
    struct tp_state *st = *state;
    char init[TP_PATH_BYTES + 16];
    struct profile *p;
    FILE *f;

    snprintf(init, sizeof init, "%s/init.xml", st->tmp);
    f = fopen(init, "w");
    assert_non_null(f);
    fclose(f);
    tp_write(st, TP_OID,
             TP_GROUP "<interface-group><name-format>ser0</name-format><type>frameRelay</type>"
                      "<if-type-number>32</if-type-number><speed>2048000</speed></interface-group>\n",
             "<schema>ietf-ip</schema><initial-config>init.xml</initial-config>\n");
    p = tp_expect_loaded(st, st->file);
    assert_int_equal(p->if_count, 3);
    assert_string_equal(p->ifs[1].name, "eth1");
    assert_int_equal(p->ifs[1].mtu, 1500);
    assert_int_equal(p->ifs[2].iftype, 32);
    assert_string_equal(p->hostname_format, "device-{DEVICE}");
    assert_int_equal(p->cpu_count, 1);
    assert_int_equal(p->storage_count, 0);
    assert_int_equal(p->collection_count, 0);
    assert_int_equal(p->schema_count, 1);
    assert_string_equal(p->schemas[0], "ietf-ip");
    assert_int_equal(p->traffic.packet_bytes, 800);
    assert_non_null(p->initial_config_file);
    assert_non_null(strstr(p->initial_config_file, "/init.xml"));
    assert_true(p->initial_config_file[0] == '/');
    assert_null(p->state_data_file);
    profile_free(p);
}

static void
test_unknown_element_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(st, tp_write(st, TP_OID, TP_GROUP, "<colour>blue</colour>\n"), FLEET_ERR_INVAL,
                      "colour");
}

static void
test_bad_oid_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(st, tp_write(st, "1.3.6.one.1", TP_GROUP, ""), FLEET_ERR_INVAL, "1.3.6.one.1");
    assert_non_null(strstr(st->err, "sys-object-id"));
}

static void
test_oid_subid_overflow_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(
        st, tp_write(st, TP_OID, TP_GROUP, "<collection><object>1.3.6.1.4294967296</object></collection>\n"),
        FLEET_ERR_INVAL, "collection/object \"1.3.6.1.4294967296\"");
}

static void
test_missing_identity_refused(void **state)
{
    struct tp_state *st = *state;
    FILE *f;

    snprintf(st->file, sizeof st->file, "%s/p.xml", st->tmp);
    f = fopen(st->file, "w");
    assert_non_null(f);
    fputs("<profile xmlns=\"urn:fleetsim:profile\"><name>t</name>" TP_GROUP "</profile>", f);
    fclose(f);
    tp_expect_refused(st, st->file, FLEET_ERR_INVAL, "identity/sys-");
}

static void
test_util_min_above_util_max_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(
        st,
        tp_write(st, TP_OID, TP_GROUP, "<traffic><util-min>60</util-min><util-max>40</util-max></traffic>\n"),
        FLEET_ERR_INVAL, "util-max must not be below util-min");
}

static void
test_util_min_above_default_util_max_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(st, tp_write(st, TP_OID, TP_GROUP, "<traffic><util-min>60</util-min></traffic>\n"),
                      FLEET_ERR_INVAL, "util-max must not be below util-min");
}

static void
test_shares_above_100_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(st,
                      tp_write(st, TP_OID, TP_GROUP,
                               "<traffic><multicast-share>70</multicast-share><broadcast-share>40</"
                               "broadcast-share></traffic>\n"),
                      FLEET_ERR_INVAL, "add up to more than 100");
}

static void
test_duplicate_interface_names_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(st,
                      tp_write(st, TP_OID,
                               TP_GROUP
                               "<interface-group><name-format>eth1</name-format><type>ethernetCsmacd</type>"
                               "<speed>0</speed></interface-group>\n",
                               ""),
                      FLEET_ERR_INVAL, "duplicate interface name \"eth1\"");
    assert_non_null(strstr(st->err, "eth{N}"));
}

static void
test_group_without_placeholder_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(st,
                      tp_write(st, TP_OID,
                               "<interface-group><name-format>eth</name-format><count>3</count>"
                               "<type>ethernetCsmacd</type><speed>0</speed></interface-group>\n",
                               ""),
                      FLEET_ERR_INVAL, "duplicate interface name \"eth\"");
    assert_non_null(strstr(st->err, "lack {N}"));
}

static void
test_too_many_interfaces_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(st,
                      tp_write(st, TP_OID,
                               TP_GROUP "<interface-group><name-format>x{N}</name-format><count>65535</count>"
                                        "<type>other</type><speed>0</speed></interface-group>\n",
                               ""),
                      FLEET_ERR_INVAL, "65537 interfaces, more than the limit of 65536");
}

static void
test_unknown_iftype_without_number_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(st,
                      tp_write(st, TP_OID,
                               "<interface-group><name-format>fr{N}</name-format><type>frameRelay</type>"
                               "<speed>0</speed></interface-group>\n",
                               ""),
                      FLEET_ERR_INVAL, "type \"frameRelay\" has no known IANAifType number");
}

static void
test_no_interfaces_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(st, tp_write(st, TP_OID, "", ""), FLEET_ERR_INVAL, "interface-group");
}

static void
test_missing_referenced_file_refused(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(st, tp_write(st, TP_OID, TP_GROUP, "<state-data>nowhere.xml</state-data>\n"),
                      FLEET_ERR_INVAL, "state-data \"nowhere.xml\"");
}

static void
test_missing_file_refused(void **state)
{
    struct tp_state *st = *state;
    char path[TP_PATH_BYTES + 32];

    snprintf(path, sizeof path, "%s/absent.xml", st->tmp);
    tp_expect_refused(st, path, FLEET_ERR_NOTFOUND, "No such file");
}

static void
test_unknown_profile_name_lists_built_ins(void **state)
{
    struct tp_state *st = *state;

    tp_expect_refused(st, "crs-y", FLEET_ERR_NOTFOUND, "no such profile");
    assert_non_null(strstr(st->err, "crs-x"));
    assert_non_null(strstr(st->err, "minimal"));
}

static void
test_not_xml_refused(void **state)
{
    struct tp_state *st = *state;
    FILE *f;

    snprintf(st->file, sizeof st->file, "%s/p.xml", st->tmp);
    f = fopen(st->file, "w");
    assert_non_null(f);
    fputs("<profile xmlns=\"urn:fleetsim:profile\"><name>t</name>", f);
    fclose(f);
    tp_expect_refused(st, st->file, FLEET_ERR_INVAL, "invalid");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crs_x_has_144_interfaces_and_1738_samples),
        cmocka_unit_test(test_minimal_loads_by_path),
        cmocka_unit_test(test_generated_profile_takes_defaults_and_files),
        cmocka_unit_test(test_unknown_element_refused),
        cmocka_unit_test(test_bad_oid_refused),
        cmocka_unit_test(test_oid_subid_overflow_refused),
        cmocka_unit_test(test_missing_identity_refused),
        cmocka_unit_test(test_util_min_above_util_max_refused),
        cmocka_unit_test(test_util_min_above_default_util_max_refused),
        cmocka_unit_test(test_shares_above_100_refused),
        cmocka_unit_test(test_duplicate_interface_names_refused),
        cmocka_unit_test(test_group_without_placeholder_refused),
        cmocka_unit_test(test_too_many_interfaces_refused),
        cmocka_unit_test(test_unknown_iftype_without_number_refused),
        cmocka_unit_test(test_no_interfaces_refused),
        cmocka_unit_test(test_missing_referenced_file_refused),
        cmocka_unit_test(test_missing_file_refused),
        cmocka_unit_test(test_unknown_profile_name_lists_built_ins),
        cmocka_unit_test(test_not_xml_refused),
    };

    return cmocka_run_group_tests(tests, tp_setup, tp_teardown);
}
