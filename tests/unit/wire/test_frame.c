/*
 * Unit tests of the RFC 6242 decoder and encoder helpers (wire/frame.c).
 * Most tests feed the same bytes in different cuttings (one shot, split at
 * every position, one byte at a time) and require the same messages, because
 * a TCP or SSH peer may cut its writes anywhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

/* Most messages one feed in these tests produces. */
#define TF_MAX_MSGS 64
/* Feed everything at once. */
#define TF_ONE_SHOT SIZE_MAX

/* What a feed produced: the messages taken out of the decoder, in order. */
struct tf_fed {
    char *msgs[TF_MAX_MSGS]; /* taken buffers, owned until tf_fed_free() */
    size_t lens[TF_MAX_MSGS];
    size_t count;
};

static void
tf_fed_free(struct tf_fed *fed)
{
    size_t i;

    for (i = 0; i < fed->count; i++) {
        free(fed->msgs[i]);
    }
    fed->count = 0;
}

/*
 * Feed @p buf in reads of at most @p step bytes, taking every message, the way
 * a session does: after FRAME_MESSAGE the rest of the read is fed again.
 * Returns FRAME_ERROR at the first error, otherwise the last status.
 */
static enum frame_status
tf_feed(struct frame_decoder *d, const char *buf, size_t len, size_t step, struct tf_fed *fed)
{
    enum frame_status st = FRAME_NEED_MORE;
    size_t off = 0;

    while (off < len) {
        size_t piece = len - off < step ? len - off : step;
        size_t done = 0;

        while (done < piece) {
            size_t left = piece - done;
            size_t used = 0;

            st = frame_decode(d, buf + off + done, left, &used);
            if (st == FRAME_ERROR) {
                return st;
            }
            if (st == FRAME_MESSAGE) {
                assert_true(used <= left);
                assert_true(fed->count < TF_MAX_MSGS);
                fed->msgs[fed->count] = frame_decoder_take(d, &fed->lens[fed->count]);
                assert_non_null(fed->msgs[fed->count]);
                fed->count++;
            } else {
                /* Without a message the decoder must have swallowed the whole read. */
                assert_int_equal(used, left);
            }
            done += used;
        }
        off += piece;
    }
    return st;
}

/* Check one produced message against the expected text. */
static void
tf_assert_msg(const struct tf_fed *fed, size_t i, const char *expected)
{
    assert_true(i < fed->count);
    assert_int_equal(fed->lens[i], strlen(expected));
    assert_string_equal(fed->msgs[i], expected);
}

/* Check the decoder reports exactly @p expected as its error. */
static void
tf_assert_error(const struct frame_decoder *d, const char *expected)
{
    assert_non_null(frame_decoder_error(d));
    assert_string_equal(frame_decoder_error(d), expected);
}

/* A chunked decoder with the given limit (0: default). */
static void
tf_init_chunked(struct frame_decoder *d, size_t max_msg_bytes)
{
    frame_decoder_init(d, max_msg_bytes);
    frame_decoder_set_mode(d, FRAME_CHUNKED);
}

/* Feed bad chunked input one shot and byte by byte; both must fail with @p expected. */
static void
tf_expect_chunked_error(const char *input, const char *expected)
{
    static const size_t steps[] = {TF_ONE_SHOT, 1};
    size_t i;

    for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        struct frame_decoder d;
        struct tf_fed fed = {0};

        tf_init_chunked(&d, 0);
        assert_int_equal(tf_feed(&d, input, strlen(input), steps[i], &fed), FRAME_ERROR);
        tf_assert_error(&d, expected);
        assert_int_equal(fed.count, 0);
        tf_fed_free(&fed);
        frame_decoder_close(&d);
        assert_null(d.msg);
    }
}

/* Append one chunked frame of @p payload, cut into chunks of the given sizes (cycled). */
static size_t
tf_encode_chunked(const char *payload, size_t len, const size_t *sizes, size_t n_sizes, char *out)
{
    size_t off = 0;
    size_t w = 0;
    size_t k = 0;

    while (off < len) {
        size_t n = sizes[k++ % n_sizes];

        if (n > len - off) {
            n = len - off;
        }
        w += frame_header(FRAME_CHUNKED, n, out + w);
        memcpy(out + w, payload + off, n);
        w += n;
        off += n;
    }
    w += frame_trailer(FRAME_CHUNKED, out + w);
    return w;
}

static void
test_init_zero_limit_means_default(void **state)
{
    struct frame_decoder d;

    frame_decoder_init(&d, 0);
    assert_int_equal(d.max_msg_bytes, FRAME_DEFAULT_MAX_MSG_BYTES);
    assert_int_equal(d.mode, FRAME_EOM);
    assert_null(d.msg);
    assert_false(frame_decoder_partial(&d));
    frame_decoder_close(&d);
}

static void
test_close_accepts_zeroed_and_closed_decoder(void **state)
{
    struct frame_decoder d;

    memset(&d, 0, sizeof d);
    frame_decoder_close(&d);
    frame_decoder_close(&d);
    frame_decoder_close(NULL);
}

static void
test_eom_single_message(void **state)
{
    struct frame_decoder d;
    const char in[] = "<rpc/>]]>]]>";
    size_t used = 0;
    size_t len = 0;

    frame_decoder_init(&d, 0);
    assert_int_equal(frame_decode(&d, in, sizeof in - 1, &used), FRAME_MESSAGE);
    assert_int_equal(used, sizeof in - 1);
    assert_string_equal(frame_decoder_message(&d, &len), "<rpc/>");
    assert_int_equal(len, 6);
    assert_false(frame_decoder_partial(&d));
    frame_decoder_close(&d);
}

static void
test_eom_delimiter_split_at_every_position(void **state)
{
    const char in[] = "<rpc message-id=\"1\"><get/></rpc>]]>]]>";
    size_t cut;

    for (cut = 0; cut <= sizeof in - 1; cut++) {
        struct frame_decoder d;
        struct tf_fed fed = {0};

        frame_decoder_init(&d, 0);
        assert_int_equal(tf_feed(&d, in, cut, TF_ONE_SHOT, &fed),
                         cut == sizeof in - 1 ? FRAME_MESSAGE : FRAME_NEED_MORE);
        tf_feed(&d, in + cut, sizeof in - 1 - cut, TF_ONE_SHOT, &fed);
        assert_int_equal(fed.count, 1);
        tf_assert_msg(&fed, 0, "<rpc message-id=\"1\"><get/></rpc>");
        assert_false(frame_decoder_partial(&d));
        assert_null(d.msg);
        tf_fed_free(&fed);
        frame_decoder_close(&d);
    }
}

static void
test_eom_near_miss_delimiters_backtrack(void **state)
{
    static const struct {
        const char *in;
        const char *msg;
    } cases[] = {
        {"a]]]>]]>", "a]"},       {"]]]>]]>", "]"},           {"]]>]]]>]]>", "]]>]"},
        {"]]>]>]]>]]>", "]]>]>"}, {"x]]>]]]]>]]>", "x]]>]]"}, {"]]>]]x]]>]]>", "]]>]]x"},
        {"]]]]]]>]]>", "]]]]"},
    };
    static const size_t steps[] = {TF_ONE_SHOT, 1, 2, 3};
    size_t i;
    size_t s;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (s = 0; s < sizeof steps / sizeof steps[0]; s++) {
            struct frame_decoder d;
            struct tf_fed fed = {0};

            frame_decoder_init(&d, 0);
            assert_int_equal(tf_feed(&d, cases[i].in, strlen(cases[i].in), steps[s], &fed), FRAME_MESSAGE);
            assert_int_equal(fed.count, 1);
            tf_assert_msg(&fed, 0, cases[i].msg);
            tf_fed_free(&fed);
            frame_decoder_close(&d);
        }
    }
}

/*
 * Every string over {']', '>', 'x'} up to TF_BRUTE_LEN bytes, followed by the
 * marker and fed byte by byte, must split exactly where strstr() splits it.
 */
#define TF_BRUTE_LEN 8
static void
test_eom_agrees_with_strstr_on_all_short_inputs(void **state)
{
    static const char alphabet[] = "]>x";
    char in[TF_BRUTE_LEN + 16];
    size_t len;
    unsigned long combos;
    unsigned long c;

    for (len = 0; len <= TF_BRUTE_LEN; len++) {
        combos = 1;
        for (c = 0; c < len; c++) {
            combos *= 3;
        }
        for (c = 0; c < combos; c++) {
            struct frame_decoder d;
            struct tf_fed fed = {0};
            unsigned long v = c;
            const char *rest = in;
            const char *hit;
            size_t k;
            size_t n_expected = 0;

            for (k = 0; k < len; k++) {
                in[k] = alphabet[v % 3];
                v /= 3;
            }
            memcpy(in + len, "]]>]]>", sizeof "]]>]]>");

            frame_decoder_init(&d, 0);
            assert_int_not_equal(tf_feed(&d, in, strlen(in), 1, &fed), FRAME_ERROR);
            while ((hit = strstr(rest, "]]>]]>"))) {
                if (hit > rest) {
                    assert_true(n_expected < fed.count);
                    assert_int_equal(fed.lens[n_expected], (size_t)(hit - rest));
                    assert_memory_equal(fed.msgs[n_expected], rest, (size_t)(hit - rest));
                    n_expected++;
                }
                rest = hit + 6;
            }
            assert_int_equal(fed.count, n_expected);
            assert_int_equal(frame_decoder_partial(&d), *rest != '\0');
            tf_fed_free(&fed);
            frame_decoder_close(&d);
        }
    }
}

static void
test_eom_several_messages_in_one_read(void **state)
{
    struct frame_decoder d;
    const char in[] = "<a/>]]>]]>\n<b/>]]>]]>\n<c/>";
    size_t used = 0;
    size_t len = 0;
    size_t off = 0;

    frame_decoder_init(&d, 0);
    assert_int_equal(frame_decode(&d, in, sizeof in - 1, &used), FRAME_MESSAGE);
    assert_int_equal(used, 10);
    assert_string_equal(frame_decoder_message(&d, &len), "<a/>");
    frame_decoder_next(&d);
    off += used;
    assert_int_equal(frame_decode(&d, in + off, sizeof in - 1 - off, &used), FRAME_MESSAGE);
    assert_int_equal(used, 11);
    assert_string_equal(frame_decoder_message(&d, &len), "<b/>");
    frame_decoder_next(&d);
    off += used;
    assert_int_equal(frame_decode(&d, in + off, sizeof in - 1 - off, &used), FRAME_NEED_MORE);
    assert_int_equal(used, sizeof in - 1 - off);
    assert_true(frame_decoder_partial(&d));
    frame_decoder_close(&d);
    assert_null(d.msg);
}

static void
test_eom_whitespace_only_message_is_skipped(void **state)
{
    struct frame_decoder d;
    struct tf_fed fed = {0};
    const char in[] = "]]>]]>\n  \r\n\t]]>]]>\n<hello/>]]>]]>";

    frame_decoder_init(&d, 0);
    assert_int_equal(tf_feed(&d, in, sizeof in - 1, TF_ONE_SHOT, &fed), FRAME_MESSAGE);
    assert_int_equal(fed.count, 1);
    tf_assert_msg(&fed, 0, "<hello/>");
    tf_fed_free(&fed);
    frame_decoder_close(&d);
}

static void
test_eom_whitespace_between_messages_holds_no_buffer(void **state)
{
    struct frame_decoder d;
    const char in[] = "\n\n   \r\n";
    size_t used = 0;

    frame_decoder_init(&d, 0);
    assert_int_equal(frame_decode(&d, in, sizeof in - 1, &used), FRAME_NEED_MORE);
    assert_int_equal(used, sizeof in - 1);
    assert_null(d.msg);
    assert_false(frame_decoder_partial(&d));
    assert_int_equal(frame_decode(&d, "]]>]]>", 6, &used), FRAME_NEED_MORE);
    assert_null(d.msg);
    assert_false(frame_decoder_partial(&d));
    frame_decoder_close(&d);
}

static void
test_eom_message_at_limit_is_accepted(void **state)
{
    struct frame_decoder d;
    struct tf_fed fed = {0};
    const char in[] = "0123456789]]>]]>";

    frame_decoder_init(&d, 10);
    assert_int_equal(tf_feed(&d, in, sizeof in - 1, 1, &fed), FRAME_MESSAGE);
    tf_assert_msg(&fed, 0, "0123456789");
    tf_fed_free(&fed);
    frame_decoder_close(&d);
}

static void
test_eom_message_over_limit(void **state)
{
    static const char *const inputs[] = {
        "0123456789A]]>]]>", /* eleventh payload byte */
        "0123456789]]>]]X",  /* a near-miss marker turns out to be payload */
    };
    size_t i;

    for (i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        struct frame_decoder d;
        struct tf_fed fed = {0};

        frame_decoder_init(&d, 10);
        assert_int_equal(tf_feed(&d, inputs[i], strlen(inputs[i]), TF_ONE_SHOT, &fed), FRAME_ERROR);
        tf_assert_error(&d, "message exceeds the size limit");
        assert_int_equal(fed.count, 0);
        frame_decoder_close(&d);
    }
}

static void
test_eom_partial_marker_within_limit_is_pending(void **state)
{
    struct frame_decoder d;
    struct tf_fed fed = {0};
    const char in[] = "0123456789]]>]]";

    frame_decoder_init(&d, 10);
    assert_int_equal(tf_feed(&d, in, sizeof in - 1, TF_ONE_SHOT, &fed), FRAME_NEED_MORE);
    assert_true(frame_decoder_partial(&d));
    assert_int_equal(tf_feed(&d, ">", 1, TF_ONE_SHOT, &fed), FRAME_MESSAGE);
    tf_assert_msg(&fed, 0, "0123456789");
    tf_fed_free(&fed);
    frame_decoder_close(&d);
}

static void
test_chunk_single_message(void **state)
{
    struct frame_decoder d;
    const char in[] = "\n#4\n<rpc\n#3\n/>\n\n##\n";
    size_t used = 0;
    size_t len = 0;

    tf_init_chunked(&d, 0);
    assert_int_equal(frame_decode(&d, in, sizeof in - 1, &used), FRAME_MESSAGE);
    assert_int_equal(used, sizeof in - 1);
    assert_string_equal(frame_decoder_message(&d, &len), "<rpc/>\n");
    assert_int_equal(len, 7);
    frame_decoder_close(&d);
}

static void
test_chunk_split_at_every_position(void **state)
{
    const char in[] = "\n#11\n<rpc><get/>\n#7\n</rpc>\n\n##\n";
    size_t a;
    size_t b;

    /* Every two-way and three-way cut: each header field and the data may end a read. */
    for (a = 0; a <= sizeof in - 1; a++) {
        for (b = a; b <= sizeof in - 1; b++) {
            struct frame_decoder d;
            struct tf_fed fed = {0};

            tf_init_chunked(&d, 0);
            assert_int_not_equal(tf_feed(&d, in, a, TF_ONE_SHOT, &fed), FRAME_ERROR);
            assert_int_not_equal(tf_feed(&d, in + a, b - a, TF_ONE_SHOT, &fed), FRAME_ERROR);
            assert_int_not_equal(tf_feed(&d, in + b, sizeof in - 1 - b, TF_ONE_SHOT, &fed), FRAME_ERROR);
            assert_int_equal(fed.count, 1);
            tf_assert_msg(&fed, 0, "<rpc><get/></rpc>\n");
            assert_false(frame_decoder_partial(&d));
            assert_null(d.msg);
            tf_fed_free(&fed);
            frame_decoder_close(&d);
        }
    }
}

static void
test_chunk_several_messages_in_one_read(void **state)
{
    struct frame_decoder d;
    const char in[] = "\n#3\nabc\n##\n\n#2\nde\n#1\nf\n##\n\n#1\n";
    size_t used = 0;
    size_t len = 0;
    size_t off = 0;

    tf_init_chunked(&d, 0);
    assert_int_equal(frame_decode(&d, in, sizeof in - 1, &used), FRAME_MESSAGE);
    assert_int_equal(used, 11);
    assert_string_equal(frame_decoder_message(&d, &len), "abc");
    frame_decoder_next(&d);
    off += used;
    assert_int_equal(frame_decode(&d, in + off, sizeof in - 1 - off, &used), FRAME_MESSAGE);
    assert_int_equal(used, 15);
    assert_string_equal(frame_decoder_message(&d, &len), "def");
    frame_decoder_next(&d);
    off += used;
    assert_int_equal(frame_decode(&d, in + off, sizeof in - 1 - off, &used), FRAME_NEED_MORE);
    assert_int_equal(off + used, sizeof in - 1);
    assert_true(frame_decoder_partial(&d));
    frame_decoder_close(&d);
}

static void
test_chunk_header_without_lf(void **state)
{
    tf_expect_chunked_error("#3\nabc\n##\n", "chunk header does not start with LF");
}

static void
test_chunk_header_without_hash(void **state)
{
    tf_expect_chunked_error("\n3\nabc\n##\n", "chunk header lacks '#' after LF");
}

static void
test_chunk_size_zero(void **state)
{
    tf_expect_chunked_error("\n#0\n\n##\n", "chunk-size is zero");
}

static void
test_chunk_size_leading_zero(void **state)
{
    tf_expect_chunked_error("\n#03\nabc\n##\n", "chunk-size has a leading zero");
}

static void
test_chunk_size_missing(void **state)
{
    tf_expect_chunked_error("\n#\nabc\n##\n", "chunk-size is missing");
}

static void
test_chunk_size_non_digit(void **state)
{
    tf_expect_chunked_error("\n#x\n", "chunk-size has a non-digit character");
    tf_expect_chunked_error("\n#12a\n", "chunk-size has a non-digit character");
    tf_expect_chunked_error("\n#0x\n", "chunk-size has a non-digit character");
    tf_expect_chunked_error("\n# 1\n", "chunk-size has a non-digit character");
    tf_expect_chunked_error("\n#1\r\n", "chunk-size has a non-digit character");
}

static void
test_chunk_header_too_long(void **state)
{
    tf_expect_chunked_error("\n#10000000000\n", "chunk-size has more than 10 digits");
}

static void
test_chunk_size_above_uint32_max(void **state)
{
    tf_expect_chunked_error("\n#4294967296\n", "chunk-size exceeds 4294967295");
    tf_expect_chunked_error("\n#9999999999\n", "chunk-size exceeds 4294967295");
}

static void
test_chunk_size_uint32_max_is_accepted(void **state)
{
    struct frame_decoder d;
    const char in[] = "\n#4294967295\n";
    size_t used = 0;

    tf_init_chunked(&d, SIZE_MAX);
    assert_int_equal(frame_decode(&d, in, sizeof in - 1, &used), FRAME_NEED_MORE);
    assert_int_equal(used, sizeof in - 1);
    assert_true(frame_decoder_partial(&d));
    /* The announced size is not allocated up front. */
    assert_null(d.msg);
    frame_decoder_close(&d);
}

static void
test_end_of_chunks_before_any_chunk(void **state)
{
    tf_expect_chunked_error("\n##\n", "end-of-chunks before any chunk");
}

static void
test_end_of_chunks_without_final_lf(void **state)
{
    tf_expect_chunked_error("\n#1\na\n##x", "end-of-chunks lacks the final LF");
}

static void
test_chunk_data_longer_than_chunk_size(void **state)
{
    tf_expect_chunked_error("\n#2\nabc\n##\n", "chunk header does not start with LF");
}

static void
test_eom_delimiter_inside_chunk_is_data(void **state)
{
    struct frame_decoder d;
    struct tf_fed fed = {0};
    const char in[] = "\n#8\na]]>]]>b\n#6\n]]>]]>\n##\n";

    tf_init_chunked(&d, 0);
    assert_int_equal(tf_feed(&d, in, sizeof in - 1, 1, &fed), FRAME_MESSAGE);
    assert_int_equal(fed.count, 1);
    tf_assert_msg(&fed, 0, "a]]>]]>b]]>]]>");
    tf_fed_free(&fed);
    frame_decoder_close(&d);
}

static void
test_chunk_message_over_limit_refused_at_header(void **state)
{
    struct frame_decoder d;
    const char in[] = "\n#11\n";
    size_t used = 0;

    tf_init_chunked(&d, 10);
    assert_int_equal(frame_decode(&d, in, sizeof in - 1, &used), FRAME_ERROR);
    tf_assert_error(&d, "message exceeds the size limit");
    assert_null(d.msg);
    frame_decoder_close(&d);
}

static void
test_chunk_message_over_limit_across_chunks(void **state)
{
    struct frame_decoder d;
    struct tf_fed fed = {0};
    const char ok[] = "\n#6\nabcdef\n#4\nghij\n##\n";
    const char bad[] = "\n#6\nabcdef\n#5\nghijk\n##\n";

    tf_init_chunked(&d, 10);
    assert_int_equal(tf_feed(&d, ok, sizeof ok - 1, TF_ONE_SHOT, &fed), FRAME_MESSAGE);
    tf_assert_msg(&fed, 0, "abcdefghij");
    assert_int_equal(tf_feed(&d, bad, sizeof bad - 1, TF_ONE_SHOT, &fed), FRAME_ERROR);
    tf_assert_error(&d, "message exceeds the size limit");
    assert_int_equal(fed.count, 1);
    tf_fed_free(&fed);
    frame_decoder_close(&d);
}

static void
test_error_is_sticky(void **state)
{
    struct frame_decoder d;
    size_t used = 99;

    tf_init_chunked(&d, 0);
    assert_int_equal(frame_decode(&d, "x", 1, &used), FRAME_ERROR);
    assert_int_equal(frame_decode(&d, "\n#1\na\n##\n", 9, &used), FRAME_ERROR);
    assert_int_equal(used, 0);
    tf_assert_error(&d, "chunk header does not start with LF");
    frame_decoder_close(&d);
}

/* Bytes of a payload that exercise framing: markers and header look-alikes inside the data. */
static char *
tf_tricky_payload(size_t len)
{
    static const char pieces[] = "<data>]]>]]>\n#12\n\n##\n]]]>]]";
    char *p = malloc(len + 1);
    size_t i;

    assert_non_null(p);
    for (i = 0; i < len; i++) {
        p[i] = pieces[(i * 7 + i / 13) % (sizeof pieces - 1)];
    }
    p[0] = '<';
    p[len] = '\0';
    return p;
}

static void
test_chunked_byte_at_a_time_equals_one_shot(void **state)
{
    static const size_t sizes[] = {1, 4096, 7, 333, 65536, 2, 9999};
    const size_t payload_len = 300000;
    char *payload = tf_tricky_payload(payload_len);
    char *wire = malloc(payload_len * 20);
    size_t wire_len;
    struct frame_decoder one;
    struct frame_decoder bytes;
    struct tf_fed fed_one = {0};
    struct tf_fed fed_bytes = {0};

    assert_non_null(wire);
    /* Two messages back to back, so the second starts where the first ended mid-read. */
    wire_len = tf_encode_chunked(payload, payload_len, sizes, 7, wire);
    wire_len += tf_encode_chunked(payload, 1000, sizes + 1, 3, wire + wire_len);

    tf_init_chunked(&one, 0);
    tf_init_chunked(&bytes, 0);
    assert_int_equal(tf_feed(&one, wire, wire_len, TF_ONE_SHOT, &fed_one), FRAME_MESSAGE);
    assert_int_equal(tf_feed(&bytes, wire, wire_len, 1, &fed_bytes), FRAME_MESSAGE);
    assert_int_equal(fed_one.count, 2);
    assert_int_equal(fed_bytes.count, 2);
    assert_int_equal(fed_one.lens[0], payload_len);
    assert_int_equal(fed_bytes.lens[0], payload_len);
    assert_memory_equal(fed_one.msgs[0], payload, payload_len);
    assert_memory_equal(fed_bytes.msgs[0], payload, payload_len);
    assert_int_equal(fed_bytes.lens[1], 1000);
    assert_memory_equal(fed_bytes.msgs[1], payload, 1000);
    assert_memory_equal(fed_one.msgs[1], payload, 1000);

    tf_fed_free(&fed_one);
    tf_fed_free(&fed_bytes);
    frame_decoder_close(&one);
    frame_decoder_close(&bytes);
    free(wire);
    free(payload);
}

static void
test_eom_byte_at_a_time_equals_one_shot(void **state)
{
    const char in[] = "<a>]]]>]]</a>]]>]]>\n<b>]]>]>]]]]></b>]]>]]>\n\n  <c x=\"]]>\"/>]]>]]>";
    static const char *const expected[] = {"<a>]]]>]]</a>", "<b>]]>]>]]]]></b>", "<c x=\"]]>\"/>"};
    struct frame_decoder one;
    struct frame_decoder bytes;
    struct tf_fed fed_one = {0};
    struct tf_fed fed_bytes = {0};
    size_t i;

    frame_decoder_init(&one, 0);
    frame_decoder_init(&bytes, 0);
    assert_int_equal(tf_feed(&one, in, sizeof in - 1, TF_ONE_SHOT, &fed_one), FRAME_MESSAGE);
    assert_int_equal(tf_feed(&bytes, in, sizeof in - 1, 1, &fed_bytes), FRAME_MESSAGE);
    assert_int_equal(fed_one.count, 3);
    assert_int_equal(fed_bytes.count, 3);
    for (i = 0; i < 3; i++) {
        tf_assert_msg(&fed_one, i, expected[i]);
        tf_assert_msg(&fed_bytes, i, expected[i]);
    }
    tf_fed_free(&fed_one);
    tf_fed_free(&fed_bytes);
    frame_decoder_close(&one);
    frame_decoder_close(&bytes);
}

static void
test_take_hands_over_buffer(void **state)
{
    struct frame_decoder d;
    const char in[] = "\n#5\nfirst\n##\n\n#6\nsecond\n##\n";
    size_t used = 0;
    size_t len = 0;
    char *msg;

    tf_init_chunked(&d, 0);
    assert_null(frame_decoder_take(&d, &len));
    assert_int_equal(len, 0);
    assert_int_equal(frame_decode(&d, in, sizeof in - 1, &used), FRAME_MESSAGE);
    msg = frame_decoder_take(&d, &len);
    assert_non_null(msg);
    assert_int_equal(len, 5);
    assert_string_equal(msg, "first");
    /* The decoder forgot the buffer: it holds nothing and starts empty. */
    assert_null(d.msg);
    assert_int_equal(d.msg_len, 0);
    assert_false(frame_decoder_partial(&d));
    assert_null(frame_decoder_message(&d, &len));
    assert_int_equal(len, 0);

    assert_int_equal(frame_decode(&d, in + used, sizeof in - 1 - used, &used), FRAME_MESSAGE);
    assert_string_equal(frame_decoder_message(&d, &len), "second");
    /* The taken buffer is still ours and intact. */
    assert_string_equal(msg, "first");
    free(msg);
    frame_decoder_close(&d);
}

static void
test_next_frees_buffer(void **state)
{
    struct frame_decoder d;
    const char in[] = "<hello/>]]>]]>";
    size_t used = 0;
    size_t len = 0;

    frame_decoder_init(&d, 0);
    assert_int_equal(frame_decode(&d, in, sizeof in - 1, &used), FRAME_MESSAGE);
    assert_non_null(d.msg);
    frame_decoder_next(&d);
    assert_null(d.msg);
    assert_int_equal(d.msg_cap, 0);
    assert_int_equal(d.msg_len, 0);
    assert_null(frame_decoder_message(&d, &len));
    assert_false(frame_decoder_partial(&d));
    frame_decoder_close(&d);
}

static void
test_message_is_unavailable_until_complete(void **state)
{
    struct frame_decoder d;
    size_t used = 0;
    size_t len = 99;

    frame_decoder_init(&d, 0);
    assert_int_equal(frame_decode(&d, "<rpc/>]]>", 9, &used), FRAME_NEED_MORE);
    assert_null(frame_decoder_message(&d, &len));
    assert_int_equal(len, 0);
    assert_true(frame_decoder_partial(&d));
    frame_decoder_close(&d);
}

static void
test_chunk_header_alone_holds_no_buffer(void **state)
{
    struct frame_decoder d;
    size_t used = 0;

    tf_init_chunked(&d, 0);
    assert_false(frame_decoder_partial(&d));
    assert_int_equal(frame_decode(&d, "\n", 1, &used), FRAME_NEED_MORE);
    assert_true(frame_decoder_partial(&d));
    assert_int_equal(frame_decode(&d, "#5\n", 3, &used), FRAME_NEED_MORE);
    assert_true(frame_decoder_partial(&d));
    assert_null(d.msg);
    assert_int_equal(frame_decode(&d, "ab", 2, &used), FRAME_NEED_MORE);
    assert_non_null(d.msg);
    frame_decoder_close(&d);
    assert_null(d.msg);
}

static void
test_mode_switch_after_hello_in_same_read(void **state)
{
    struct frame_decoder d;
    const char in[] = "<hello/>]]>]]>\n#3\n<a>\n#4\n</a>\n##\n";
    size_t used = 0;
    size_t off;
    size_t len = 0;

    frame_decoder_init(&d, 0);
    assert_int_equal(frame_decode(&d, in, sizeof in - 1, &used), FRAME_MESSAGE);
    assert_int_equal(used, 14);
    assert_string_equal(frame_decoder_message(&d, &len), "<hello/>");
    frame_decoder_next(&d);
    frame_decoder_set_mode(&d, FRAME_CHUNKED);
    off = used;
    assert_int_equal(frame_decode(&d, in + off, sizeof in - 1 - off, &used), FRAME_MESSAGE);
    assert_int_equal(off + used, sizeof in - 1);
    assert_string_equal(frame_decoder_message(&d, &len), "<a></a>");
    frame_decoder_close(&d);
}

static void
test_header_and_trailer_bytes(void **state)
{
    char out[FRAME_HEADER_MAX_BYTES];

    assert_int_equal(frame_header(FRAME_EOM, 123, out), 0);
    assert_int_equal(frame_header(FRAME_CHUNKED, 1, out), 4);
    assert_memory_equal(out, "\n#1\n", 4);
    assert_int_equal(frame_header(FRAME_CHUNKED, 4294967295u, out), 13);
    assert_memory_equal(out, "\n#4294967295\n", 13);
    assert_int_equal(frame_trailer(FRAME_EOM, out), 6);
    assert_memory_equal(out, "]]>]]>", 6);
    assert_int_equal(frame_trailer(FRAME_CHUNKED, out), 4);
    assert_memory_equal(out, "\n##\n", 4);
}

static void
test_encoded_frames_decode_to_the_payload(void **state)
{
    static const enum frame_mode modes[] = {FRAME_EOM, FRAME_CHUNKED};
    const char payload[] = "<rpc message-id=\"7\"><get-config><source><running/></source></get-config></rpc>";
    size_t i;

    for (i = 0; i < 2; i++) {
        struct frame_decoder d;
        struct tf_fed fed = {0};
        char wire[256];
        size_t w;

        w = frame_header(modes[i], sizeof payload - 1, wire);
        memcpy(wire + w, payload, sizeof payload - 1);
        w += sizeof payload - 1;
        w += frame_trailer(modes[i], wire + w);

        frame_decoder_init(&d, 0);
        frame_decoder_set_mode(&d, modes[i]);
        assert_int_equal(tf_feed(&d, wire, w, 1, &fed), FRAME_MESSAGE);
        tf_assert_msg(&fed, 0, payload);
        tf_fed_free(&fed);
        frame_decoder_close(&d);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_zero_limit_means_default),
        cmocka_unit_test(test_close_accepts_zeroed_and_closed_decoder),
        cmocka_unit_test(test_eom_single_message),
        cmocka_unit_test(test_eom_delimiter_split_at_every_position),
        cmocka_unit_test(test_eom_near_miss_delimiters_backtrack),
        cmocka_unit_test(test_eom_agrees_with_strstr_on_all_short_inputs),
        cmocka_unit_test(test_eom_several_messages_in_one_read),
        cmocka_unit_test(test_eom_whitespace_only_message_is_skipped),
        cmocka_unit_test(test_eom_whitespace_between_messages_holds_no_buffer),
        cmocka_unit_test(test_eom_message_at_limit_is_accepted),
        cmocka_unit_test(test_eom_message_over_limit),
        cmocka_unit_test(test_eom_partial_marker_within_limit_is_pending),
        cmocka_unit_test(test_chunk_single_message),
        cmocka_unit_test(test_chunk_split_at_every_position),
        cmocka_unit_test(test_chunk_several_messages_in_one_read),
        cmocka_unit_test(test_chunk_header_without_lf),
        cmocka_unit_test(test_chunk_header_without_hash),
        cmocka_unit_test(test_chunk_size_zero),
        cmocka_unit_test(test_chunk_size_leading_zero),
        cmocka_unit_test(test_chunk_size_missing),
        cmocka_unit_test(test_chunk_size_non_digit),
        cmocka_unit_test(test_chunk_header_too_long),
        cmocka_unit_test(test_chunk_size_above_uint32_max),
        cmocka_unit_test(test_chunk_size_uint32_max_is_accepted),
        cmocka_unit_test(test_end_of_chunks_before_any_chunk),
        cmocka_unit_test(test_end_of_chunks_without_final_lf),
        cmocka_unit_test(test_chunk_data_longer_than_chunk_size),
        cmocka_unit_test(test_eom_delimiter_inside_chunk_is_data),
        cmocka_unit_test(test_chunk_message_over_limit_refused_at_header),
        cmocka_unit_test(test_chunk_message_over_limit_across_chunks),
        cmocka_unit_test(test_error_is_sticky),
        cmocka_unit_test(test_chunked_byte_at_a_time_equals_one_shot),
        cmocka_unit_test(test_eom_byte_at_a_time_equals_one_shot),
        cmocka_unit_test(test_take_hands_over_buffer),
        cmocka_unit_test(test_next_frees_buffer),
        cmocka_unit_test(test_message_is_unavailable_until_complete),
        cmocka_unit_test(test_chunk_header_alone_holds_no_buffer),
        cmocka_unit_test(test_mode_switch_after_hello_in_same_read),
        cmocka_unit_test(test_header_and_trailer_bytes),
        cmocka_unit_test(test_encoded_frames_decode_to_the_payload),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
