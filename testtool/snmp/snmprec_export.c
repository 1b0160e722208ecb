/*
 * A GETNEXT walk of the device's view from the start, each answer printed
 * as a recording line (recording.c's rec_print_line).
 */
#include "snmprec_export.h"

#include "mib.h"
#include "recording.h"

enum fleet_err
snmprec_export(struct device *dev, uint64_t now_ms, FILE *out)
{
    struct mib_req rq;
    struct oid pos = {.len = 2, .sub = {0, 0}}, prev;
    struct spdu_value v;
    enum fleet_err rc;

    if ((rc = mib_req_init(&rq, dev, now_ms, 0))) {
        return rc;
    }
    for (;;) {
        prev = pos;
        mib_next(&rq, &prev, &pos, &v);
        /* GETNEXT always moves forward; the check guards the walk against a bug looping forever. */
        if (v.tag == BER_END_OF_MIB_VIEW || oid_cmp(&pos, &prev) <= 0) {
            break;
        }
        if ((rc = rec_print_line(out, &pos, &v))) {
            return rc;
        }
    }
    return fflush(out) || ferror(out) ? FLEET_ERR_SYS : FLEET_OK;
}
