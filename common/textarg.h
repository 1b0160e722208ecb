/*
 * Command-line values: whole numbers in a range and true/false, parsed the
 * same way by fleetsim and fleetsim-stress (no sign, no trailing text), and
 * the word wrapping of both programs' --help.
 */
#ifndef FLEET_TEXTARG_H
#define FLEET_TEXTARG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** @brief A decimal number in [min, max]. @return 0, or -1 when @p s is not one. */
int textarg_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/** @brief The same for 32 bits. */
int textarg_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);

/**
 * @brief A duration: a decimal number with a unit, "ms", "s", "m" or "h" ("500ms", "1.5s", "15m"), or a
 * bare number of seconds, in [@p min_s, @p max_s]. @return 0 with seconds in @p out, or -1.
 */
int textarg_duration_s(const char *s, double min_s, double max_s, double *out);

/** @brief "true" or "false" in any case, as OpenDaylight's tools read booleans (NULL, as for a flag given
 * without value, is true). @return 0 or -1. */
int textarg_bool(const char *s, int *out);

/**
 * @brief The value of a flag declared with an optional argument: getopt hands a value over only in the
 * form "--flag=false", so "--flag false" (OpenDaylight's scripts write it so) would leave "false" behind as
 * a stray argument. When @p optarg is NULL and the next argument reads true or false (any case), that
 * argument is the value and @p optind moves past it.
 * @param[in] optarg getopt's optarg for the flag.
 * @param[in] argc, argv The command line.
 * @param[in,out] optind getopt's optind.
 * @return The value text, or NULL for a flag given alone (textarg_bool() reads NULL as true).
 */
const char *textarg_flag_value(const char *optarg, int argc, char **argv, int *optind);

/* Where textarg_help_words() is on a --help line: the column, and the description's indent and width. */
struct textarg_help_pos {
    size_t col;    /* column the next character goes to */
    int fresh;     /* 1 at the start of a description line (no space before the next word) */
    size_t indent; /* column descriptions start at */
    size_t width;  /* columns a line keeps to */
};

/**
 * @brief Write @p text's words to @p out from @p pos on, breaking the line between words before
 * pos->width and going on at pos->indent: the wrapping both programs' --help share.
 */
void textarg_help_words(FILE *out, const char *text, struct textarg_help_pos *pos);

#endif
