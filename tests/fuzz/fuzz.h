/*
 * What every harness shares: libFuzzer's two entry points (each harness
 * defines them; replay_main.c and libFuzzer call them) and the check that
 * ends the run when a property of a result does not hold, so that libFuzzer
 * keeps the input as a crash.
 */
#ifndef FLEET_FUZZ_H
#define FLEET_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort, naming the harness's file and the property, unless @p ok. */
#define fz_require(ok, what) fz_require_in(__FILE__, (ok), (what))

static inline void
fz_require_in(const char *file, int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "%s: %s\n", file, what);
        abort();
    }
}

/*
 * The input copied to the heap, exactly @p size bytes (nothing added): ASan then reports a read past its
 * end, which a larger buffer would hide. Aborts when out of memory; the caller frees it.
 */
static inline void *
fz_copy_input(const uint8_t *data, size_t size)
{
    void *copy = malloc(size ? size : 1);

    fz_require(copy != NULL, "out of memory");
    if (size) {
        memcpy(copy, data, size);
    }
    return copy;
}

/* XML whitespace (the scanners trim exactly these). */
static inline int
fz_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * A text field a scanner copied out of @p src (@p src_len bytes) into a char array of @p cap bytes: it is
 * NUL-terminated and trimmed. Cut at the limit, or at a NUL in the source (it is a C string to its
 * readers), it may end in whitespace. @return Its length.
 */
#define fz_require_trimmed(field, src, src_len, name)                                                        \
    fz_require_trimmed_in(__FILE__, (field), sizeof(field), (src), (src_len), (name))

static inline size_t
fz_require_trimmed_in(const char *file, const char *field, size_t cap, const void *src, size_t src_len,
                      const char *name)
{
    size_t len = strnlen(field, cap);
    const char *broken = NULL;

    if (len == cap) {
        broken = "not NUL-terminated";
    } else if (len && fz_is_space(field[0])) {
        broken = "not trimmed";
    } else if (len && len != cap - 1 && !memchr(src, 0, src_len) && fz_is_space(field[len - 1])) {
        broken = "not trimmed at its end";
    }
    if (broken) {
        fprintf(stderr, "%s: %s %s\n", file, name, broken);
        abort();
    }
    return len;
}

#endif
