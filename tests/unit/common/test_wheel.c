/*
 * Unit tests of the timing wheel (common/wheel.c) on the loop's fake clock: entries fire at their
 * millisecond and not before, in due order; entries beyond one turn of the wheel wait for their turn;
 * removal and re-adding, from outside and from a callback; a late loop fires everything that fell due;
 * many entries. Each test ends with nothing scheduled and no loop timer left armed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "wheel.h"

/* Descriptors the test loop indexes (none are watched). */
#define TW_MAX_FDS 64
/* Entries a test may record. */
#define TW_MAX_FIRED 64
/* Entries of the many-entries test, spread over TW_MANY_SPAN_MS (several turns of the wheel). */
#define TW_MANY         50000
#define TW_MANY_SPAN_MS 20000
/* Origin of the fake clock: not a multiple of the wheel's turn. */
#define TW_ORIGIN_US 1234567000ull

static monotime_us tw_now_us;

static monotime_us
tw_clock(void)
{
    return tw_now_us;
}

/* A scheduled record, as a subscription embeds its entry. */
struct tw_item {
    struct wheel_entry entry; /* in the wheel */
    int id;                   /* what the callback records */
    monotime_us fired_us;     /* loop time it fired at, 0 before */
    struct tw_item *victim;   /* removed by the callback, or NULL */
    monotime_us readd_us;     /* the callback adds it again at this time, 0: not */
};

struct tw_state {
    struct loop *loop;
    struct wheel *wheel;
    int fired[TW_MAX_FIRED]; /* ids in firing order */
    size_t fired_count;      /* entries of fired */
    uint64_t total;          /* callbacks run */
};

static void
tw_cb(struct wheel *w, struct wheel_entry *e, void *data)
{
    struct tw_state *st = data;
    struct tw_item *it = (struct tw_item *)((char *)e - offsetof(struct tw_item, entry));

    assert_false(wheel_scheduled(e));
    assert_true(e->due_us <= loop_now_us(st->loop));
    it->fired_us = loop_now_us(st->loop);
    if (st->fired_count < TW_MAX_FIRED) {
        st->fired[st->fired_count++] = it->id;
    }
    st->total++;
    if (it->victim) {
        wheel_remove(w, &it->victim->entry);
    }
    if (it->readd_us) {
        monotime_us at = it->readd_us;
        it->readd_us = 0;
        wheel_add(w, e, at);
    }
}

static int
tw_setup(void **state)
{
    struct tw_state *st = calloc(1, sizeof *st);

    assert_non_null(st);
    tw_now_us = TW_ORIGIN_US;
    st->loop = loop_new(TW_MAX_FDS);
    assert_non_null(st->loop);
    loop_set_clock(st->loop, tw_clock);
    st->wheel = wheel_new(st->loop, tw_cb, st);
    assert_non_null(st->wheel);
    *state = st;
    return 0;
}

static int
tw_teardown(void **state)
{
    struct tw_state *st = *state;

    assert_int_equal(wheel_count(st->wheel), 0);
    wheel_free(st->wheel);
    assert_int_equal(loop_timer_count(st->loop), 0);
    loop_free(st->loop);
    free(st);
    return 0;
}

/* Move the fake clock to @p us and run one loop pass without sleeping. */
static void
tw_run_at(struct tw_state *st, monotime_us us)
{
    tw_now_us = us;
    loop_run_once(st->loop, 0);
}

static void
tw_item_init(struct tw_item *it, int id)
{
    memset(it, 0, sizeof *it);
    it->id = id;
}

static void
tw_assert_fired(const struct tw_state *st, const int *want, size_t count)
{
    int same = st->fired_count == count && !memcmp(st->fired, want, count * sizeof *want);

    if (!same) {
        print_error("expected:");
        for (size_t i = 0; i < count; i++) {
            print_error(" %d", want[i]);
        }
        print_error("\nfired:   ");
        for (size_t i = 0; i < st->fired_count; i++) {
            print_error(" %d", st->fired[i]);
        }
        print_error("\n");
    }
    assert_true(same);
}

static void
test_entries_fire_at_their_millisecond_not_before(void **state)
{
    struct tw_state *st = *state;
    struct tw_item a, b;

    tw_item_init(&a, 1);
    tw_item_init(&b, 2);
    wheel_add(st->wheel, &a.entry, TW_ORIGIN_US + 10000);
    wheel_add(st->wheel, &b.entry, TW_ORIGIN_US + 25500);
    assert_int_equal(wheel_count(st->wheel), 2);
    tw_run_at(st, TW_ORIGIN_US + 9999);
    assert_int_equal(st->fired_count, 0);
    tw_run_at(st, TW_ORIGIN_US + 10000);
    assert_int_equal(a.fired_us, TW_ORIGIN_US + 10000);
    /* Same millisecond as b's slot, but before its microsecond: not yet. */
    tw_run_at(st, TW_ORIGIN_US + 25000);
    assert_int_equal(b.fired_us, 0);
    tw_run_at(st, TW_ORIGIN_US + 25500);
    assert_int_equal(b.fired_us, TW_ORIGIN_US + 25500);
    tw_assert_fired(st, (const int[]){1, 2}, 2);
}

static void
test_entries_fire_in_due_order_when_the_loop_is_late(void **state)
{
    struct tw_state *st = *state;
    struct tw_item it[6];
    static const monotime_us offset_ms[6] = {50, 3, 40, 7, 3000, 1};

    for (int i = 0; i < 6; i++) {
        tw_item_init(&it[i], i);
        wheel_add(st->wheel, &it[i].entry, TW_ORIGIN_US + offset_ms[i] * 1000);
    }
    /* One late pass collects everything due; the 3 s entry waits. */
    tw_run_at(st, TW_ORIGIN_US + 100000);
    assert_int_equal(st->fired_count, 5);
    assert_int_equal(wheel_count(st->wheel), 1);
    tw_run_at(st, TW_ORIGIN_US + 3000000);
    /* Within one pass the slots are met from the cursor on, so in due order. */
    tw_assert_fired(st, (const int[]){5, 1, 3, 2, 0, 4}, 6);
}

static void
test_far_future_entry_waits_for_its_turn(void **state)
{
    struct tw_state *st = *state;
    struct tw_item far, near;

    tw_item_init(&far, 1);
    tw_item_init(&near, 2);
    /* 10.005 s: the same slot as 5 ms (mod the 4096 ms turn) comes round twice before it is due. */
    wheel_add(st->wheel, &far.entry, TW_ORIGIN_US + 10005000);
    wheel_add(st->wheel, &near.entry, TW_ORIGIN_US + 5000);
    for (monotime_us t = TW_ORIGIN_US; t < TW_ORIGIN_US + 10005000; t += 1000) {
        tw_run_at(st, t);
        if (t >= TW_ORIGIN_US + 5000) {
            assert_int_equal(near.fired_us, TW_ORIGIN_US + 5000);
        }
        assert_int_equal(far.fired_us, 0);
    }
    tw_run_at(st, TW_ORIGIN_US + 10005000);
    assert_int_equal(far.fired_us, TW_ORIGIN_US + 10005000);
}

static void
test_loop_sleeps_until_the_earliest_entry(void **state)
{
    struct tw_state *st = *state;
    struct tw_item it;

    tw_item_init(&it, 1);
    wheel_add(st->wheel, &it.entry, TW_ORIGIN_US + 7000);
    /* The wheel drives one loop timer, armed at the entry's time. */
    assert_int_equal(loop_timer_count(st->loop), 1);
    tw_run_at(st, TW_ORIGIN_US + 7000);
    assert_int_equal(it.fired_us, TW_ORIGIN_US + 7000);
    assert_int_equal(loop_timer_count(st->loop), 0);
}

static void
test_removed_entry_never_fires_and_readded_fires_at_new_time(void **state)
{
    struct tw_state *st = *state;
    struct tw_item a, b;

    tw_item_init(&a, 1);
    tw_item_init(&b, 2);
    wheel_add(st->wheel, &a.entry, TW_ORIGIN_US + 2000);
    wheel_add(st->wheel, &b.entry, TW_ORIGIN_US + 3000);
    wheel_remove(st->wheel, &a.entry);
    wheel_remove(st->wheel, &a.entry); /* harmless twice */
    assert_false(wheel_scheduled(&a.entry));
    /* Re-adding moves it: b's earlier time is replaced. */
    wheel_add(st->wheel, &b.entry, TW_ORIGIN_US + 9000);
    assert_int_equal(wheel_count(st->wheel), 1);
    tw_run_at(st, TW_ORIGIN_US + 5000);
    assert_int_equal(st->fired_count, 0);
    wheel_add(st->wheel, &a.entry, TW_ORIGIN_US + 6000);
    tw_run_at(st, TW_ORIGIN_US + 9000);
    tw_assert_fired(st, (const int[]){1, 2}, 2);
    assert_int_equal(a.fired_us, TW_ORIGIN_US + 9000);
    assert_int_equal(b.fired_us, TW_ORIGIN_US + 9000);
}

static void
test_callback_removes_a_due_entry_and_readds_itself(void **state)
{
    struct tw_state *st = *state;
    struct tw_item a, b;

    tw_item_init(&a, 1);
    tw_item_init(&b, 2);
    a.victim = &b;                       /* b is due in the same pass but must not run */
    a.readd_us = TW_ORIGIN_US + 1000000; /* a periodic record: next slot from its own slot */
    wheel_add(st->wheel, &a.entry, TW_ORIGIN_US + 4000);
    wheel_add(st->wheel, &b.entry, TW_ORIGIN_US + 4000);
    tw_run_at(st, TW_ORIGIN_US + 4000);
    tw_assert_fired(st, (const int[]){1}, 1);
    assert_true(wheel_scheduled(&a.entry));
    assert_false(wheel_scheduled(&b.entry));
    tw_run_at(st, TW_ORIGIN_US + 1000000);
    tw_assert_fired(st, (const int[]){1, 1}, 2);
}

static void
test_past_time_fires_at_the_next_pass(void **state)
{
    struct tw_state *st = *state;
    struct tw_item it;

    tw_run_at(st, TW_ORIGIN_US + 50000);
    tw_item_init(&it, 1);
    wheel_add(st->wheel, &it.entry, TW_ORIGIN_US + 10000);
    loop_run_once(st->loop, 0);
    assert_int_equal(it.fired_us, TW_ORIGIN_US + 50000);
}

static void
test_idle_wheel_accepts_entries_long_after_it_was_made(void **state)
{
    struct tw_state *st = *state;
    struct tw_item it;

    /* An hour with nothing scheduled, then an entry 2 ms away: it fires on time. */
    tw_now_us = TW_ORIGIN_US + 3600000000ull;
    loop_run_once(st->loop, 0);
    tw_item_init(&it, 1);
    wheel_add(st->wheel, &it.entry, tw_now_us + 2000);
    tw_run_at(st, tw_now_us + 1999);
    assert_int_equal(it.fired_us, 0);
    tw_run_at(st, tw_now_us + 1);
    assert_int_equal(it.fired_us, TW_ORIGIN_US + 3600002000ull);
}

static void
test_many_entries_each_fire_once_on_time(void **state)
{
    struct tw_state *st = *state;
    struct tw_item *it = calloc(TW_MANY, sizeof *it);
    uint64_t seed = 42;

    assert_non_null(it);
    for (int i = 0; i < TW_MANY; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        tw_item_init(&it[i], i);
        wheel_add(st->wheel, &it[i].entry, TW_ORIGIN_US + (seed >> 33) % (TW_MANY_SPAN_MS * 1000ull));
    }
    assert_int_equal(wheel_count(st->wheel), TW_MANY);
    /* Steps of 7 ms: each entry fires at the first step at or after its time. */
    for (monotime_us t = TW_ORIGIN_US; t <= TW_ORIGIN_US + TW_MANY_SPAN_MS * 1000ull + 7000; t += 7000) {
        tw_run_at(st, t);
    }
    assert_int_equal(st->total, TW_MANY);
    for (int i = 0; i < TW_MANY; i++) {
        assert_true(it[i].fired_us >= it[i].entry.due_us);
        assert_true(it[i].fired_us - it[i].entry.due_us < 7000);
    }
    free(it);
}

#define TW_TEST(f) cmocka_unit_test_setup_teardown(f, tw_setup, tw_teardown)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        TW_TEST(test_entries_fire_at_their_millisecond_not_before),
        TW_TEST(test_entries_fire_in_due_order_when_the_loop_is_late),
        TW_TEST(test_far_future_entry_waits_for_its_turn),
        TW_TEST(test_loop_sleeps_until_the_earliest_entry),
        TW_TEST(test_removed_entry_never_fires_and_readded_fires_at_new_time),
        TW_TEST(test_callback_removes_a_due_entry_and_readds_itself),
        TW_TEST(test_past_time_fires_at_the_next_pass),
        TW_TEST(test_idle_wheel_accepts_entries_long_after_it_was_made),
        TW_TEST(test_many_entries_each_fire_once_on_time),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
