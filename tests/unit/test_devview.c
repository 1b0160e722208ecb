/*
 * The device view on a one-device fleet (devfix.h): the interface name
 * index, oper status and last change following enabled in running, the
 * counters stopping while an interface is down, and the host name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "devfix.h"

static void
write_enabled(struct devfix *f, const char *ifname, const char *value)
{
    char path[256];

    snprintf(path, sizeof path, "/ietf-interfaces:interfaces/interface[name='%s']/enabled", ifname);
    devfix_write_running(f, path, value);
}

static void
test_if_pos_finds_every_interface(void **state)
{
    (void)state;
    const char *profiles[] = {"minimal", "crs-x"};

    for (size_t k = 0; k < 2; k++) {
        struct devfix *f = devfix_new(profiles[k]);
        const struct profile *p = f->type.profile;
        assert_true(p->if_count > 1);
        for (uint32_t i = 0; i < p->if_count; i++) {
            assert_int_equal(devview_if_pos(&f->type, p->ifs[i].name), (int32_t)i);
        }
        assert_int_equal(devview_if_pos(&f->type, "NoSuchEthernet9/9"), -1);
        assert_int_equal(devview_if_pos(&f->type, ""), -1);
        devfix_free(f);
    }
}

static void
test_untouched_device_reads_profile(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    const struct devview_cfg *cfg = devview_cfg(&f->dev);

    assert_non_null(cfg);
    assert_ptr_equal(cfg, &f->type.view.template_cfg);
    assert_null(f->dev.view);
    /* Boot lies before the fleet's start, by less than 30 days. */
    assert_true(devview_boot_ms(&f->dev) <= f->fleet.start_ms);
    assert_true(f->fleet.start_ms - devview_boot_ms(&f->dev) < 30ull * 24 * 3600 * 1000);
    assert_int_equal(devview_now_ms(&f->fleet), DEVFIX_NOW_MS);
    for (uint32_t i = 0; i < f->type.profile->if_count; i++) {
        assert_int_equal(cfg->enabled[i], 1);
        assert_int_equal(devview_oper(&f->dev, i), DEVVIEW_OPER_UP);
        assert_int_equal(devview_last_change_ms(&f->dev, i), devview_boot_ms(&f->dev));
    }
    devfix_free(f);
}

static void
test_seed_and_boot_differ_per_device(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    struct device other = f->dev;

    other.index = DEVFIX_INDEX + 1;
    devview_device_init(&other, &f->fleet);
    assert_int_not_equal(devview_seed(&other), devview_seed(&f->dev));
    assert_int_not_equal(devview_boot_ms(&other), devview_boot_ms(&f->dev));
    /* The same index and fleet seed give the same device again. */
    other.index = DEVFIX_INDEX;
    devview_device_init(&other, &f->fleet);
    assert_int_equal(devview_seed(&other), devview_seed(&f->dev));
    assert_int_equal(devview_boot_ms(&other), devview_boot_ms(&f->dev));
    devfix_free(f);
}

static void
test_disable_takes_oper_down_and_stops_counters(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    struct device *dev = &f->dev;
    const char *name = f->type.profile->ifs[0].name;
    uint64_t seed = devview_seed(dev);
    uint64_t t0 = DEVFIX_NOW_MS, t1 = t0 + 60000, t2 = t1 + 60000, t3 = t2 + 60000, t4 = t3 + 60000;
    uint64_t o0, o1, o2, o3, o4;
    const struct devview_cfg *cfg;

    assert_true(f->type.profile->ifs[0].speed_bps > 0);
    o0 = devview_octets(dev, seed, 0, t0, 0);
    o1 = devview_octets(dev, seed, 0, t1, 0);
    assert_true(o1 > o0);

    /* Down at t1. */
    devfix_set_now(f, t1);
    write_enabled(f, name, "false");
    assert_non_null(cfg = devview_cfg(dev));
    assert_int_equal(cfg->enabled[0], 0);
    assert_int_equal(cfg->enabled[1], 1);
    assert_int_equal(devview_oper(dev, 0), DEVVIEW_OPER_DOWN);
    assert_int_equal(devview_oper(dev, 1), DEVVIEW_OPER_UP);
    assert_int_equal(devview_last_change_ms(dev, 0), t1);
    assert_int_equal(devview_last_change_ms(dev, 1), devview_boot_ms(dev));
    /* While down the counters stand still, the other interfaces' go on. */
    assert_int_equal(devview_octets(dev, seed, 0, t1, 0), o1);
    assert_int_equal(devview_octets(dev, seed, 0, t2, 0), o1);
    assert_int_equal(devview_octets(dev, seed, 0, t2, 1), devview_octets(dev, seed, 0, t1, 1));
    assert_true(devview_octets(dev, seed, 1, t2, 0) > devview_octets(dev, seed, 1, t1, 0));

    /* Up again at t3: counters resume from where they stopped, last change moves again. */
    devfix_set_now(f, t3);
    write_enabled(f, name, "true");
    assert_non_null(cfg = devview_cfg(dev));
    assert_int_equal(cfg->enabled[0], 1);
    assert_int_equal(devview_oper(dev, 0), DEVVIEW_OPER_UP);
    assert_int_equal(devview_last_change_ms(dev, 0), t3);
    o3 = devview_octets(dev, seed, 0, t3, 0);
    o4 = devview_octets(dev, seed, 0, t4, 0);
    assert_int_equal(o3, o1);
    assert_true(o4 > o3);
    /* A minute of traffic before and after the gap: the resumed curve is the one the interface left. */
    o2 = devview_octets(dev, seed, 0, t2, 0);
    assert_int_equal(o2, o1);
    (void)o2;
    devfix_free(f);
}

static void
test_change_dated_to_first_write_since_read(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    const char *name = f->type.profile->ifs[2].name;
    uint64_t t1 = DEVFIX_NOW_MS + 5000;

    devfix_set_now(f, t1);
    write_enabled(f, name, "false");
    /* Read later: the change is dated to the write, not the read. */
    devfix_set_now(f, t1 + 30000);
    assert_non_null(devview_cfg(&f->dev));
    assert_int_equal(devview_oper(&f->dev, 2), DEVVIEW_OPER_DOWN);
    assert_int_equal(devview_last_change_ms(&f->dev, 2), t1);
    devfix_free(f);
}

static void
test_rewrite_same_value_keeps_last_change(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    const char *name = f->type.profile->ifs[0].name;
    uint64_t t1 = DEVFIX_NOW_MS + 1000;

    devfix_set_now(f, t1);
    write_enabled(f, name, "false");
    assert_non_null(devview_cfg(&f->dev));
    devfix_set_now(f, t1 + 9000);
    write_enabled(f, name, "false");
    assert_non_null(devview_cfg(&f->dev));
    assert_int_equal(devview_oper(&f->dev, 0), DEVVIEW_OPER_DOWN);
    assert_int_equal(devview_last_change_ms(&f->dev, 0), t1);
    devfix_free(f);
}

static void
test_flap_link_down_and_up(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    uint64_t t1 = DEVFIX_NOW_MS + 2000, t2 = t1 + 4000;

    assert_int_equal(devview_set_link(&f->dev, 1, 0, t1), 0);
    assert_int_equal(devview_link_up(&f->dev, 1), 0);
    assert_int_equal(devview_oper(&f->dev, 1), DEVVIEW_OPER_DOWN);
    assert_int_equal(devview_last_change_ms(&f->dev, 1), t1);
    assert_int_equal(devview_oper(&f->dev, 0), DEVVIEW_OPER_UP);
    assert_int_equal(devview_set_link(&f->dev, 1, 1, t2), 0);
    assert_int_equal(devview_link_up(&f->dev, 1), 1);
    assert_int_equal(devview_oper(&f->dev, 1), DEVVIEW_OPER_UP);
    assert_int_equal(devview_last_change_ms(&f->dev, 1), t2);
    devfix_free(f);
}

static void
test_hostname_profile_format_then_running(void **state)
{
    (void)state;
    struct devfix *f = devfix_new("minimal");
    char buf[128], want[128];

    devview_hostname(&f->dev, buf, sizeof buf);
    snprintf(want, sizeof want, "device-%u", DEVFIX_INDEX);
    assert_string_equal(buf, want);

    devfix_write_running(f, "/ietf-system:system/hostname", "core-rtr-7");
    devview_hostname(&f->dev, buf, sizeof buf);
    assert_string_equal(buf, "core-rtr-7");
    assert_string_equal(devview_cfg(&f->dev)->hostname, "core-rtr-7");
    /* Contact and location come from the profile's identity, through the template. */
    assert_string_equal(devview_cfg(&f->dev)->contact, f->type.profile->sys_contact);
    /* A short buffer is cut, not overrun. */
    devview_hostname(&f->dev, buf, 5);
    assert_string_equal(buf, "core");
    devfix_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_if_pos_finds_every_interface),
        cmocka_unit_test(test_untouched_device_reads_profile),
        cmocka_unit_test(test_seed_and_boot_differ_per_device),
        cmocka_unit_test(test_disable_takes_oper_down_and_stops_counters),
        cmocka_unit_test(test_change_dated_to_first_write_since_read),
        cmocka_unit_test(test_rewrite_same_value_keeps_last_change),
        cmocka_unit_test(test_flap_link_down_and_up),
        cmocka_unit_test(test_hostname_profile_format_then_running),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
