/*
 * Fuzz harness of the SNMP recording reader (testtool/snmp/recording.h):
 * each input is a whole file, snmpsim's .snmprec or net-snmp's
 * `snmpwalk -On` output (the reader tells them apart). Every entry of a table
 * that loads is then read back as the agent serves it (recorded counters
 * move with time) and printed as an .snmprec line, as --export-snmprec does.
 *
 * Checked beyond memory safety: the table is sorted by OID with no two
 * equal, and what was printed reads back as a table of the same OIDs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "recording.h"

/* Largest input: real recordings are bigger, but size only slows the search. */
#define FZ_REC_MAX_BYTES (64u * 1024u)

/* Print every entry of @p rec; @return the text (caller frees), or NULL when a value has no .snmprec form. */
static char *
fz_print_all(const struct rec_table *rec, size_t *len)
{
    struct oid scratch;
    char *text = NULL;
    FILE *out = open_memstream(&text, len);
    int failed = 0;

    if (!out) {
        abort();
    }
    for (uint32_t i = 0; i < rec->count && !failed; i++) {
        struct oid oid;
        struct spdu_value value;
        rec_entry_oid(rec, i, &oid);
        rec_value(rec, i, 42, 123456, &scratch, &value);
        failed = rec_print_line(out, &oid, &value) != FLEET_OK;
    }
    fclose(out);
    if (failed) {
        free(text);
        return NULL;
    }
    return text;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rec_table *rec = NULL;
    struct rec_table *again = NULL;
    char err[512];
    char *text = NULL;
    size_t len = 0;
    FILE *in;

    if (size > FZ_REC_MAX_BYTES || !size || !(in = fmemopen((void *)data, size, "r"))) {
        return -1;
    }
    if (rec_read(in, "fuzz.snmprec", &rec, err, sizeof err)) {
        goto cleanup;
    }
    for (uint32_t i = 1; i < rec->count; i++) {
        struct oid a;
        struct oid b;
        rec_entry_oid(rec, i - 1, &a);
        rec_entry_oid(rec, i, &b);
        if (oid_cmp(&a, &b) >= 0) {
            abort();
        }
    }
    if ((text = fz_print_all(rec, &len)) && len) {
        FILE *back = fmemopen(text, len, "r");
        if (!back || rec_read(back, "printed.snmprec", &again, err, sizeof err) ||
            again->count != rec->count) {
            fprintf(stderr, "fuzz: the printed table does not read back: %s\n", err);
            abort();
        }
        fclose(back);
        for (uint32_t i = 0; i < rec->count; i++) {
            struct oid a;
            struct oid b;
            rec_entry_oid(rec, i, &a);
            rec_entry_oid(again, i, &b);
            if (oid_cmp(&a, &b)) {
                abort();
            }
        }
    }

cleanup:
    free(text);
    rec_free(again);
    rec_free(rec);
    fclose(in);
    return 0;
}
