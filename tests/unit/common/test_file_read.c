/*
 * Unit tests of common/file_read.c, the one whole-file reader: a file of
 * exactly the limit is read whole and NUL-terminated, one byte more is
 * refused as too large, an empty file is an empty text, a file larger than
 * the first buffer grows it, and a missing file says why.
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

#include "file_read.h"

/* A temporary file holding @p len bytes of 'x'; its path in @p path. */
static void
make_file(char path[64], size_t len)
{
    snprintf(path, 64, "/tmp/test_file_read.XXXXXX");
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "wb");

    assert_non_null(f);
    for (size_t i = 0; i < len; i++) {
        fputc('x', f);
    }
    fclose(f);
}

static void
test_limit(void **state)
{
    char path[64], *text;
    size_t len = 0;

    (void)state;
    make_file(path, 100);
    assert_int_equal(file_read_all(path, 100, &text, &len), FILE_READ_OK);
    assert_int_equal(len, 100);
    assert_int_equal(text[100], '\0');
    assert_int_equal(strspn(text, "x"), 100);
    free(text);
    assert_int_equal(file_read_all(path, 99, &text, &len), FILE_READ_TOO_LARGE);
    assert_null(text);
    assert_string_equal(file_read_reason(FILE_READ_TOO_LARGE, 99), "larger than 99 bytes");
    unlink(path);
}

static void
test_empty_and_large(void **state)
{
    char path[64], *text;
    size_t len = 1;

    (void)state;
    make_file(path, 0);
    assert_int_equal(file_read_all(path, 0, &text, &len), FILE_READ_OK);
    assert_int_equal(len, 0);
    assert_string_equal(text, "");
    free(text);
    unlink(path);

    make_file(path, 300000); /* beyond the first 64 KiB buffer: it grows */
    assert_int_equal(file_read_all(path, 0, &text, &len), FILE_READ_OK);
    assert_int_equal(len, 300000);
    assert_int_equal(strlen(text), 300000);
    free(text);
    unlink(path);
}

static void
test_missing(void **state)
{
    char *text;

    (void)state;
    assert_int_equal(file_read_all("/nonexistent/fleetsim/file", 0, &text, NULL), FILE_READ_OPEN);
    assert_null(text);
    assert_string_equal(file_read_reason(FILE_READ_OPEN, 0), "No such file or directory");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_empty_and_large),
        cmocka_unit_test(test_missing),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
