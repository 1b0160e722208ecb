/*
 * Unit tests of the output queue (common/outq.h), above all its references
 * to shared buffers (outq_add_ref()): the bytes go out in the order they
 * were queued, whether copied or referenced, through outq_write() (one
 * sendmsg() over the segments, short writes included) and through
 * outq_peek()/outq_consume(); a reference is not copied (the queue shows
 * the caller's own bytes) and is never freed by the queue; a drained queue
 * holds no memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "outq.h"
#include "sbuf.h"

/* A shared body well above the size below which references are copied. */
#define TOQ_BODY_BYTES (256 * 1024)

static char toq_body[TOQ_BODY_BYTES];

static int
toq_setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof toq_body; i++) {
        toq_body[i] = (char)('a' + (i * 7 + i / 251) % 26);
    }
    return 0;
}

/* Queue head copy, body reference, tail copy, twice (as two replies), and the same bytes into @p want. */
static void
toq_queue_two_replies(struct outq *q, struct sbuf *want)
{
    static const char head[] = "<rpc-reply message-id=\"1\"><data>";
    static const char tail[] = "</data></rpc-reply>";

    for (int i = 0; i < 2; i++) {
        assert_int_equal(outq_add(q, head, sizeof head - 1), 0);
        assert_int_equal(outq_add_ref(q, toq_body, sizeof toq_body), 0);
        assert_int_equal(outq_add(q, tail, sizeof tail - 1), 0);
        sbuf_add(want, head, sizeof head - 1);
        sbuf_add(want, toq_body, sizeof toq_body);
        sbuf_add(want, tail, sizeof tail - 1);
    }
    assert_false(want->failed);
    assert_int_equal(outq_pending(q), want->len);
}

/* Read what is readable from @p fd (non-blocking) into @p got. */
static void
toq_drain(int fd, struct sbuf *got)
{
    char buf[65536];
    ssize_t n;

    while ((n = read(fd, buf, sizeof buf)) > 0) {
        sbuf_add(got, buf, (size_t)n);
    }
    assert_true(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

static void
toq_socketpair(int fds[2], int sndbuf_bytes)
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    if (sndbuf_bytes) {
        assert_int_equal(setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &sndbuf_bytes, sizeof sndbuf_bytes), 0);
    }
}

static void
test_copies_and_references_are_written_in_order(void **state)
{
    struct outq q = {0};
    struct sbuf want = {0};
    struct sbuf got = {0};
    enum outq_status st;
    int fds[2];
    int rounds = 0;

    (void)state;
    toq_socketpair(fds, 0);
    toq_queue_two_replies(&q, &want);
    while ((st = outq_write(&q, fds[0])) == OUTQ_AGAIN) {
        toq_drain(fds[1], &got);
        assert_true(++rounds < 10000);
    }
    assert_int_equal(st, OUTQ_EMPTY);
    toq_drain(fds[1], &got);
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.buf, want.buf, want.len);
    assert_null(q.head);
    assert_int_equal(outq_pending(&q), 0);
    close(fds[0]);
    close(fds[1]);
    sbuf_free(&want);
    sbuf_free(&got);
}

static void
test_short_write_keeps_the_rest_in_order(void **state)
{
    struct outq q = {0};
    struct sbuf want = {0};
    struct sbuf got = {0};
    int fds[2];
    int again = 0;

    (void)state;
    toq_socketpair(fds, 4096); /* the kernel rounds it up; still far below two bodies */
    toq_queue_two_replies(&q, &want);
    for (;;) {
        enum outq_status st = outq_write(&q, fds[0]);
        if (st == OUTQ_EMPTY) {
            break;
        }
        assert_int_equal(st, OUTQ_AGAIN);
        assert_true(outq_pending(&q) > 0 && outq_pending(&q) < want.len);
        again++;
        toq_drain(fds[1], &got);
        assert_true(again < 100000);
    }
    toq_drain(fds[1], &got);
    assert_true(again > 0); /* the test wrote short at least once */
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.buf, want.buf, want.len);
    assert_null(q.head);
    close(fds[0]);
    close(fds[1]);
    sbuf_free(&want);
    sbuf_free(&got);
}

static void
test_peek_and_consume_walk_every_segment(void **state)
{
    struct outq q = {0};
    struct sbuf want = {0};
    struct sbuf got = {0};
    const char *data;
    size_t n;

    (void)state;
    toq_queue_two_replies(&q, &want);
    /* An SSH channel's window: odd-sized pieces of each run. */
    while ((n = outq_peek(&q, &data)) > 0) {
        size_t take = n < 1000 ? n : 1000;
        sbuf_add(&got, data, take);
        outq_consume(&q, take);
    }
    assert_null(data);
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.buf, want.buf, want.len);
    assert_null(q.head);
    assert_int_equal(outq_pending(&q), 0);
    sbuf_free(&want);
    sbuf_free(&got);
}

static void
test_reference_is_not_copied(void **state)
{
    struct outq q = {0};
    const char *data;

    (void)state;
    assert_int_equal(outq_add(&q, "head", 4), 0);
    assert_int_equal(outq_add_ref(&q, toq_body, sizeof toq_body), 0);
    assert_int_equal(outq_peek(&q, &data), 4);
    outq_consume(&q, 4);
    /* The queue shows the caller's own bytes, not a copy. */
    assert_int_equal(outq_peek(&q, &data), sizeof toq_body);
    assert_ptr_equal(data, toq_body);
    outq_consume(&q, 100);
    assert_int_equal(outq_peek(&q, &data), sizeof toq_body - 100);
    assert_ptr_equal(data, toq_body + 100);
    outq_free(&q);
}

static void
test_small_reference_is_copied(void **state)
{
    struct outq q = {0};
    char small[16] = "0123456789abcdef";
    const char *data;

    (void)state;
    assert_int_equal(outq_add(&q, "<", 1), 0);
    assert_int_equal(outq_add_ref(&q, small, sizeof small), 0);
    memset(small, 'x', sizeof small); /* a copy does not see this */
    assert_int_equal(outq_peek(&q, &data), 1 + sizeof small);
    assert_memory_equal(data, "<0123456789abcdef", 1 + sizeof small);
    outq_free(&q);
}

static void
test_reserved_room_unused_before_a_reference_is_skipped(void **state)
{
    struct outq q = {0};
    const char *data;

    (void)state;
    assert_int_equal(outq_reserve(&q, 100), 0);
    assert_int_equal(outq_pending(&q), 0);
    assert_int_equal(outq_add_ref(&q, toq_body, sizeof toq_body), 0);
    assert_int_equal(outq_pending(&q), sizeof toq_body);
    assert_int_equal(outq_peek(&q, &data), sizeof toq_body);
    assert_ptr_equal(data, toq_body);
    outq_consume(&q, sizeof toq_body);
    assert_null(q.head); /* drained: nothing held, the reserved room included */
}

static void
test_reserved_room_takes_the_next_copies_contiguously(void **state)
{
    struct outq q = {0};
    const char *data;

    (void)state;
    assert_int_equal(outq_add_ref(&q, toq_body, sizeof toq_body), 0);
    /* After a reference: a new copy segment, and the three parts of a framed message fill it in order. */
    assert_int_equal(outq_reserve(&q, 9), 0);
    assert_int_equal(outq_add(&q, "#4\n", 3), 0);
    assert_int_equal(outq_add(&q, "ab", 2), 0);
    assert_int_equal(outq_add(&q, "cd\n#", 4), 0);
    outq_consume(&q, sizeof toq_body);
    assert_int_equal(outq_peek(&q, &data), 9);
    assert_memory_equal(data, "#4\nabcd\n#", 9);
    outq_free(&q);
}

static void
test_free_leaves_referenced_buffers_alone(void **state)
{
    struct outq q = {0};
    char *shared = malloc(TOQ_BODY_BYTES);

    (void)state;
    assert_non_null(shared);
    memset(shared, 's', TOQ_BODY_BYTES);
    outq_free(&q); /* an empty queue is accepted */
    assert_int_equal(outq_add_ref(&q, shared, TOQ_BODY_BYTES), 0);
    assert_int_equal(outq_add(&q, "x", 1), 0);
    assert_int_equal(outq_add_ref(&q, shared, TOQ_BODY_BYTES), 0);
    outq_free(&q);
    assert_null(q.head);
    assert_int_equal(outq_pending(&q), 0);
    assert_int_equal(shared[TOQ_BODY_BYTES - 1], 's'); /* still the caller's (ASan: not freed) */
    free(shared);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_and_references_are_written_in_order),
        cmocka_unit_test(test_short_write_keeps_the_rest_in_order),
        cmocka_unit_test(test_peek_and_consume_walk_every_segment),
        cmocka_unit_test(test_reference_is_not_copied),
        cmocka_unit_test(test_small_reference_is_copied),
        cmocka_unit_test(test_reserved_room_unused_before_a_reference_is_skipped),
        cmocka_unit_test(test_reserved_room_takes_the_next_copies_contiguously),
        cmocka_unit_test(test_free_leaves_referenced_buffers_alone),
    };

    return cmocka_run_group_tests(tests, toq_setup, NULL);
}
