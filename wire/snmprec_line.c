/*
 * One variable as a line of snmpsim's `.snmprec` format (`OID|TAG|VALUE`),
 * shared by the simulator's recording export and the stress client's
 * recorder, so both write the same text the simulator reads back.
 */
#include "snmprec_line.h"

#include <inttypes.h>

enum fleet_err
snmprec_print_line(FILE *out, const struct oid *name, const struct spdu_value *value)
{
    char text[OID_MAX_SUBIDS * 11 + 1];
    int printable = 1;

    fprintf(out, "%s|", oid_format(name, text, sizeof text));
    switch (value->tag) {
    case BER_INTEGER:
        fprintf(out, "2|%" PRId64 "\n", value->v.i);
        break;
    case BER_OCTET_STRING:
    case BER_OPAQUE:
    case BER_IPADDRESS:
        for (size_t k = 0; k < value->v.bytes.len; k++) {
            uint8_t c = value->v.bytes.ptr[k];
            printable &= c >= 0x20 && c < 0x7f;
        }
        if (value->tag == BER_IPADDRESS && value->v.bytes.len == 4) {
            const uint8_t *a = value->v.bytes.ptr;
            fprintf(out, "64|%u.%u.%u.%u\n", a[0], a[1], a[2], a[3]);
        } else if (value->tag == BER_OCTET_STRING && printable) {
            fprintf(out, "4|%.*s\n", (int)value->v.bytes.len, (const char *)value->v.bytes.ptr);
        } else {
            fprintf(out, "%ux|", (unsigned)value->tag);
            for (size_t k = 0; k < value->v.bytes.len; k++) {
                fprintf(out, "%02x", value->v.bytes.ptr[k]);
            }
            fputc('\n', out);
        }
        break;
    case BER_NULL:
        fputs("5|\n", out);
        break;
    case BER_OID:
        fprintf(out, "6|%s\n", oid_format(value->v.oid, text, sizeof text));
        break;
    case BER_COUNTER32:
    case BER_GAUGE32:
    case BER_TIMETICKS:
    case BER_COUNTER64:
        fprintf(out, "%u|%" PRIu64 "\n", (unsigned)value->tag, value->v.u);
        break;
    default:
        fputs("5|\n", out);
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}
