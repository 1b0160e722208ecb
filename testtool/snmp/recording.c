/*
 * Reading and writing recordings. Both formats are read line by line into
 * one table: names and OID values go into a pool of arcs, strings into a
 * pool of bytes, and each entry refers to them by offset, so a million
 * entries cost 24 bytes each plus their data rather than a 516-byte
 * struct oid apiece. The entries are merge-sorted by OID once at the
 * end (recordings are usually sorted already, and the sort is stable, so
 * a duplicate is reported with both its lines). snmpwalk output may carry
 * a value over several lines (strings with newlines, Hex-STRING wrapped at
 * 16 bytes): a record is gathered whole before it is parsed.
 */
#include "recording.h"
#include "snmprec_line.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics.h"

/* Largest snmpwalk record gathered over continuation lines (a 64 KiB Hex-STRING is ~200 KiB of text). */
#define REC_RECORD_MAX_BYTES (4u * REC_LINE_MAX_BYTES)
/* Largest pool of arcs or bytes (offsets are 32-bit). */
#define REC_POOL_MAX 0x40000000u

enum rec_format {
    REC_FORMAT_UNKNOWN, /* no significant line read yet */
    REC_FORMAT_SNMPREC, /* OID|TAG|VALUE */
    REC_FORMAT_WALK,    /* .OID = TYPE: value */
};

/* The state of one load. */
struct rec_parser {
    struct rec_table *rec; /* table being filled */
    const char *name;      /* file name for messages */
    uint32_t line;         /* current line, 1-based */
    char *err;             /* caller's message buffer */
    size_t err_len;        /* bytes at err */
    uint8_t *val;          /* a value being decoded, REC_VALUE_MAX_BYTES */
    char *pend;            /* snmpwalk record gathered so far (NUL-terminated), REC_RECORD_MAX_BYTES */
    size_t pend_len;       /* bytes in pend; 0 when no record is open */
    uint32_t pend_line;    /* line the open record started on */
};

__attribute__((format(printf, 3, 4))) static enum fleet_err
fail(struct rec_parser *ps, enum fleet_err rc, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(ps->err, ps->err_len, "%s:%" PRIu32 ": ", ps->name, ps->line);

    if (n >= 0 && (size_t)n < ps->err_len) {
        va_start(ap, fmt);
        vsnprintf(ps->err + n, ps->err_len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* Make room for @p need more elements of @p size bytes in an array of @p *cap, @p len used. */
static enum fleet_err
reserve(void **p, uint32_t *cap, uint32_t len, uint32_t need, size_t size, uint32_t max)
{
    uint64_t want = (uint64_t)len + need;
    uint64_t new_cap = *cap ? *cap : 64;
    void *q;

    if (want <= *cap) {
        return FLEET_OK;
    }
    if (want > max) {
        return FLEET_ERR_LIMIT;
    }
    while (new_cap < want) {
        new_cap *= 2;
    }
    if (new_cap > max) {
        new_cap = max;
    }
    q = realloc(*p, (size_t)new_cap * size);
    if (!q) {
        return FLEET_ERR_NOMEM;
    }
    *p = q;
    *cap = (uint32_t)new_cap;
    return FLEET_OK;
}

static enum fleet_err
pool_fail(struct rec_parser *ps, enum fleet_err rc)
{
    if (rc == FLEET_ERR_LIMIT) {
        return fail(ps, rc, "recording too large (more than %u entries or %u values)", REC_MAX_ENTRIES,
                    REC_POOL_MAX);
    }
    return fail(ps, rc, "out of memory");
}

static enum fleet_err
add_arcs(struct rec_parser *ps, const uint32_t *arcs, uint32_t len, uint32_t *off)
{
    struct rec_table *rec = ps->rec;
    enum fleet_err rc =
        reserve((void **)&rec->arcs, &rec->arcs_cap, rec->arcs_len, len, sizeof *rec->arcs, REC_POOL_MAX);

    if (rc) {
        return pool_fail(ps, rc);
    }
    memcpy(rec->arcs + rec->arcs_len, arcs, len * sizeof *arcs);
    *off = rec->arcs_len;
    rec->arcs_len += len;
    return FLEET_OK;
}

static enum fleet_err
add_bytes(struct rec_parser *ps, const uint8_t *bytes, uint32_t len, struct rec_entry *e)
{
    struct rec_table *rec = ps->rec;
    enum fleet_err rc = reserve((void **)&rec->bytes, &rec->bytes_cap, rec->bytes_len, len, 1, REC_POOL_MAX);

    if (rc) {
        return pool_fail(ps, rc);
    }
    if (len) {
        memcpy(rec->bytes + rec->bytes_len, bytes, len);
    }
    e->v.ref.off = rec->bytes_len;
    e->v.ref.len = len;
    rec->bytes_len += len;
    return FLEET_OK;
}

/* sysUpTime.0 and hrSystemUptime.0: the TimeTicks that count the time since boot. */
static int
is_uptime(const struct oid *oid)
{
    static const uint32_t sys_uptime[] = {1, 3, 6, 1, 2, 1, 1, 3, 0};
    static const uint32_t hr_uptime[] = {1, 3, 6, 1, 2, 1, 25, 1, 1, 0};

    return (oid->len == 9 && !memcmp(oid->sub, sys_uptime, sizeof sys_uptime)) ||
           (oid->len == 10 && !memcmp(oid->sub, hr_uptime, sizeof hr_uptime));
}

/* Append entry @p e (value set, string bytes already pooled) named @p name. */
static enum fleet_err
add_entry(struct rec_parser *ps, const struct oid *name, struct rec_entry *e, uint32_t line)
{
    struct rec_table *rec = ps->rec;
    enum fleet_err rc =
        reserve((void **)&rec->entries, &rec->cap, rec->count, 1, sizeof *rec->entries, REC_MAX_ENTRIES);

    if (rc) {
        return pool_fail(ps, rc);
    }
    if ((rc = add_arcs(ps, name->sub, name->len, &e->oid_off))) {
        return rc;
    }
    e->oid_len = (uint16_t)name->len;
    e->line = line;
    e->moves =
        e->tag == BER_COUNTER32 || e->tag == BER_COUNTER64 || (e->tag == BER_TIMETICKS && is_uptime(name));
    rec->entries[rec->count++] = *e;
    return FLEET_OK;
}

/* Decimal digits at @p s into @p v; @return the first byte after them, or NULL (none, or overflow). */
static const char *
parse_u64(const char *s, uint64_t *v)
{
    uint64_t x = 0;
    const char *start = s;

    while (*s >= '0' && *s <= '9') {
        uint64_t d = (uint64_t)(*s - '0');
        if (x > (UINT64_MAX - d) / 10) {
            return NULL;
        }
        x = x * 10 + d;
        s++;
    }
    *v = x;
    return s == start ? NULL : s;
}

/* A signed INTEGER (Integer32 range); @return the first byte after it, or NULL. */
static const char *
parse_i32(const char *s, int64_t *v)
{
    int neg = *s == '-';
    uint64_t u;

    s = parse_u64(s + neg, &u);
    if (!s || u > (neg ? 2147483648u : 2147483647u)) {
        return NULL;
    }
    *v = neg ? -(int64_t)u : (int64_t)u;
    return s;
}

static const char *
skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n') {
        s++;
    }
    return s;
}

static int
hex_digit(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Hex pairs, optionally separated by white space or colons, into ps->val. @return bytes, or -1. */
static int64_t
parse_hex(struct rec_parser *ps, const char *s)
{
    uint32_t n = 0;

    for (;;) {
        int hi, lo;
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == ':') {
            s++;
        }
        if (!*s) {
            return n;
        }
        hi = hex_digit(s[0]);
        lo = hi < 0 ? -1 : hex_digit(s[1]);
        if (lo < 0 || n == REC_VALUE_MAX_BYTES) {
            return -1;
        }
        ps->val[n++] = (uint8_t)(hi << 4 | lo);
        s += 2;
    }
}

/* A dotted quad into ps->val[0..3]. @return 0, or -1. */
static int
parse_ipv4(struct rec_parser *ps, const char *s)
{
    for (int i = 0; i < 4; i++) {
        uint64_t v;
        if (i && *s++ != '.') {
            return -1;
        }
        if (!(s = parse_u64(s, &v)) || v > 255) {
            return -1;
        }
        ps->val[i] = (uint8_t)v;
    }
    return *skip_space(s) ? -1 : 0;
}

/* An unsigned value of @p tag at @p s (trailing text allowed when @p units). */
static enum fleet_err
parse_unsigned(struct rec_parser *ps, uint8_t tag, const char *s, int units, struct rec_entry *e)
{
    uint64_t v;
    const char *end = parse_u64(s, &v);

    if (!end || (!units && *skip_space(end)) || (tag != BER_COUNTER64 && v > UINT32_MAX)) {
        return fail(ps, FLEET_ERR_INVAL, "bad %s value \"%s\"",
                    tag == BER_COUNTER64 ? "Counter64" : "32-bit unsigned", s);
    }
    e->v.u = v;
    return FLEET_OK;
}

static enum fleet_err
parse_oid_value(struct rec_parser *ps, const char *s, struct rec_entry *e)
{
    struct oid oid;
    char buf[OID_MAX_SUBIDS * 11 + 2];
    size_t n = strcspn(s, " \t\n");

    if (n >= sizeof buf) {
        return fail(ps, FLEET_ERR_INVAL, "OBJECT IDENTIFIER value too long");
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (*skip_space(s + n) || oid_parse(buf, &oid)) {
        return fail(ps, FLEET_ERR_INVAL, "bad OBJECT IDENTIFIER value \"%s\" (numeric OIDs only)", s);
    }
    e->v.ref.len = oid.len;
    return add_arcs(ps, oid.sub, oid.len, &e->v.ref.off);
}

/* The name of a record: dotted text into @p oid. */
static enum fleet_err
parse_name(struct rec_parser *ps, const char *text, struct oid *oid)
{
    if (oid_parse(text, oid)) {
        return fail(ps, FLEET_ERR_INVAL, "bad OID \"%s\" (numeric, e.g. 1.3.6.1.2.1.1.1.0)", text);
    }
    return FLEET_OK;
}

/* One `OID|TAG|VALUE` line (modified in place). */
static enum fleet_err
snmprec_line(struct rec_parser *ps, char *line)
{
    struct rec_entry e = {0};
    struct oid name;
    char *tag_text, *value, *end;
    uint64_t tag;
    int hex = 0;
    int64_t n;
    enum fleet_err rc;

    if (!(tag_text = strchr(line, '|')) || !(value = strchr(tag_text + 1, '|'))) {
        return fail(ps, FLEET_ERR_INVAL, "expected OID|TAG|VALUE");
    }
    *tag_text++ = '\0';
    *value++ = '\0';
    if ((rc = parse_name(ps, line, &name))) {
        return rc;
    }
    end = (char *)parse_u64(tag_text, &tag);
    if (end && *end == 'x') {
        hex = 1;
        end++;
    }
    if (!end || *end) {
        return fail(ps, FLEET_ERR_INVAL,
                    "tag \"%s\" is not supported (a number with an optional x; variation modules and "
                    "other suffixes are not)",
                    tag_text);
    }
    e.tag = (uint8_t)tag;
    if (hex && tag != BER_OCTET_STRING && tag != BER_OPAQUE && tag != BER_IPADDRESS) {
        return fail(ps, FLEET_ERR_INVAL, "tag %" PRIu64 " cannot be hex (x is for strings)", tag);
    }
    switch (tag) {
    case BER_INTEGER:
        if (!(end = (char *)parse_i32(value, &e.v.i)) || *end) {
            return fail(ps, FLEET_ERR_INVAL, "bad INTEGER value \"%s\"", value);
        }
        break;
    case BER_OCTET_STRING:
    case BER_OPAQUE:
    case BER_IPADDRESS:
        if (hex) {
            n = parse_hex(ps, value);
            if (n < 0) {
                return fail(ps, FLEET_ERR_INVAL, "bad hex value \"%s\"", value);
            }
        } else if (tag == BER_IPADDRESS) {
            if (parse_ipv4(ps, value)) {
                return fail(ps, FLEET_ERR_INVAL, "bad IpAddress value \"%s\"", value);
            }
            n = 4;
        } else {
            n = (int64_t)strlen(value);
            if (n > (int64_t)REC_VALUE_MAX_BYTES) {
                return fail(ps, FLEET_ERR_LIMIT, "value longer than %u bytes", REC_VALUE_MAX_BYTES);
            }
            memcpy(ps->val, value, (size_t)n);
        }
        if (tag == BER_IPADDRESS && n != 4) {
            return fail(ps, FLEET_ERR_INVAL, "an IpAddress has 4 bytes, not %" PRId64, n);
        }
        rc = add_bytes(ps, ps->val, (uint32_t)n, &e);
        break;
    case BER_NULL:
        break;
    case BER_OID:
        rc = parse_oid_value(ps, value, &e);
        break;
    case BER_COUNTER32:
    case BER_GAUGE32:
    case BER_TIMETICKS:
    case BER_COUNTER64:
        rc = parse_unsigned(ps, e.tag, value, 0, &e);
        break;
    default:
        return fail(ps, FLEET_ERR_INVAL, "unknown tag %" PRIu64, tag);
    }
    return rc ? rc : add_entry(ps, &name, &e, ps->line);
}

/* Index of ": " ending a walk record's TYPE, or NULL. */
static const char *
walk_type_end(const char *value)
{
    const char *colon = strstr(value, ": ");
    return colon && (size_t)(colon - value) < 32 ? colon : NULL;
}

/* A quoted string ending at the last '"' of @p s (escapes \" and \\), into ps->val. @return bytes, or -1. */
static int64_t
parse_quoted(struct rec_parser *ps, const char *s)
{
    const char *end = s + strlen(s);
    uint32_t n = 0;

    while (end > s + 1 && (end[-1] == ' ' || end[-1] == '\n')) {
        end--;
    }
    if (end - s < 2 || end[-1] != '"') {
        return -1;
    }
    for (const char *p = s + 1; p < end - 1; p++) {
        if (*p == '\\' && p + 1 < end - 1 && (p[1] == '"' || p[1] == '\\')) {
            p++;
        }
        if (n == REC_VALUE_MAX_BYTES) {
            return -1;
        }
        ps->val[n++] = (uint8_t)*p;
    }
    return n;
}

/* The whole gathered snmpwalk record in ps->pend. */
static enum fleet_err
walk_record(struct rec_parser *ps)
{
    struct rec_entry e = {0};
    struct oid name;
    char *rest = strstr(ps->pend, " = ");
    const char *type_end, *v;
    int64_t n = -1;
    size_t type_len;
    enum fleet_err rc;
    uint32_t line = ps->line;

    ps->line = ps->pend_line; /* messages name the record's first line */
    *rest = '\0';
    rest += 3;
    if ((rc = parse_name(ps, ps->pend, &name))) {
        goto cleanup;
    }
    if (!strncmp(rest, "No more variables", 17) || !strncmp(rest, "No Such Object", 14) ||
        !strncmp(rest, "No Such Instance", 16)) {
        goto cleanup; /* the end of a walk, or a GET's exception: no variable */
    }
    if (!strcmp(rest, "\"\"")) {
        e.tag = BER_OCTET_STRING; /* net-snmp prints an empty string without a type */
        rc = add_bytes(ps, ps->val, 0, &e);
        goto add;
    }
    if (!strcmp(rest, "NULL")) {
        e.tag = BER_NULL;
        goto add;
    }
    if (!(type_end = walk_type_end(rest))) {
        rc = fail(ps, FLEET_ERR_INVAL, "expected TYPE: value after \" = \", not \"%.40s\"", rest);
        goto cleanup;
    }
    type_len = (size_t)(type_end - rest);
    v = skip_space(type_end + 2);
#define TYPE_IS(s) (type_len == sizeof(s) - 1 && !memcmp(rest, s, type_len))
    if (TYPE_IS("INTEGER")) {
        const char *paren = strchr(v, '(');
        const char *end = parse_i32(paren ? paren + 1 : v, &e.v.i); /* name(3) or 3 [units] */
        e.tag = BER_INTEGER;
        if (!end || (paren && *end != ')')) {
            rc = fail(ps, FLEET_ERR_INVAL, "bad INTEGER value \"%s\"", v);
        }
    } else if (TYPE_IS("STRING")) {
        e.tag = BER_OCTET_STRING;
        if (*v == '"') {
            n = parse_quoted(ps, v);
        } else if ((n = (int64_t)strlen(v)) <= (int64_t)REC_VALUE_MAX_BYTES) {
            memcpy(ps->val, v, (size_t)n);
        } else {
            n = -1;
        }
        rc = n < 0 ? fail(ps, FLEET_ERR_INVAL, "bad STRING value (unterminated or over %u bytes)",
                          REC_VALUE_MAX_BYTES)
                   : add_bytes(ps, ps->val, (uint32_t)n, &e);
    } else if (TYPE_IS("Hex-STRING") || TYPE_IS("BITS") || TYPE_IS("Opaque")) {
        e.tag = TYPE_IS("Opaque") ? BER_OPAQUE : BER_OCTET_STRING;
        if (TYPE_IS("BITS")) {
            ((char *)v)[strcspn(v, "(")] = '\0'; /* "80 00 up(0)": the bytes come before the names */
        }
        n = parse_hex(ps, v);
        rc = n < 0 ? fail(ps, FLEET_ERR_INVAL, "bad hex value \"%.40s\"", v)
                   : add_bytes(ps, ps->val, (uint32_t)n, &e);
    } else if (TYPE_IS("OID")) {
        e.tag = BER_OID;
        rc = parse_oid_value(ps, v, &e);
    } else if (TYPE_IS("IpAddress")) {
        e.tag = BER_IPADDRESS;
        rc = parse_ipv4(ps, v) ? fail(ps, FLEET_ERR_INVAL, "bad IpAddress value \"%s\"", v)
                               : add_bytes(ps, ps->val, 4, &e);
    } else if (TYPE_IS("Counter32") || TYPE_IS("Gauge32") || TYPE_IS("Counter64") || TYPE_IS("Unsigned32")) {
        e.tag = TYPE_IS("Counter32") ? BER_COUNTER32 : TYPE_IS("Counter64") ? BER_COUNTER64 : BER_GAUGE32;
        rc = parse_unsigned(ps, e.tag, v, 1, &e);
    } else if (TYPE_IS("Timeticks")) {
        e.tag = BER_TIMETICKS;
        rc = *v == '(' ? parse_unsigned(ps, e.tag, v + 1, 1, &e)
                       : fail(ps, FLEET_ERR_INVAL, "bad Timeticks value \"%s\" (expected (ticks) ...)", v);
    } else {
        rc = fail(ps, FLEET_ERR_INVAL, "type \"%.*s\" is not supported", (int)type_len, rest);
    }
#undef TYPE_IS
    if (rc) {
        goto cleanup;
    }
add:
    rc = rc ? rc : add_entry(ps, &name, &e, ps->pend_line);

cleanup:
    ps->line = line;
    ps->pend_len = 0;
    return rc;
}

/* Whether @p line starts a new snmpwalk record: ".1.3... = ". */
static int
walk_starts_record(const char *line)
{
    const char *eq = strstr(line, " = ");
    return line[0] == '.' && line[1] >= '0' && line[1] <= '9' && eq &&
           strspn(line, ".0123456789") == (size_t)(eq - line);
}

/* Whether the open record can take a continuation line: an unclosed quoted string, or hex bytes. */
static int
walk_open(const struct rec_parser *ps)
{
    const char *rest = strstr(ps->pend, " = ") + 3;
    const char *type_end = walk_type_end(rest);
    const char *v;
    size_t len, bs = 0;

    if (!type_end) {
        return 0;
    }
    v = type_end + 2;
    if (!strncmp(rest, "Hex-STRING: ", 12) || !strncmp(rest, "BITS: ", 6)) {
        return 1;
    }
    if (strncmp(rest, "STRING: ", 8)) {
        return 0;
    }
    if (*v != '"') {
        return 1; /* an unquoted string runs until the next record */
    }
    len = strlen(v);
    while (len > 1 && v[len - 1] == ' ') {
        len--;
    }
    if (len < 2 || v[len - 1] != '"') {
        return 1;
    }
    while (bs + 2 < len && v[len - 2 - bs] == '\\') {
        bs++;
    }
    return bs % 2 == 1; /* the last quote is escaped: still open */
}

static enum fleet_err
walk_line(struct rec_parser *ps, const char *line, size_t len)
{
    enum fleet_err rc = FLEET_OK;

    if (walk_starts_record(line)) {
        if (ps->pend_len && (rc = walk_record(ps))) {
            return rc;
        }
        ps->pend_line = ps->line;
    } else if (ps->pend_len && walk_open(ps)) {
        ps->pend[ps->pend_len++] = '\n';
    } else if (len == 0) {
        return FLEET_OK;
    } else {
        return fail(ps, FLEET_ERR_INVAL, "expected \".OID = TYPE: value\" (snmpwalk -On output)");
    }
    if (ps->pend_len + len + 2 > REC_RECORD_MAX_BYTES) {
        return fail(ps, FLEET_ERR_LIMIT, "record longer than %u bytes", REC_RECORD_MAX_BYTES);
    }
    memcpy(ps->pend + ps->pend_len, line, len);
    ps->pend_len += len;
    ps->pend[ps->pend_len] = '\0';
    return FLEET_OK;
}

static int
entry_less_eq(const struct rec_table *rec, const struct rec_entry *a, const struct rec_entry *b)
{
    const uint32_t *x = rec->arcs + a->oid_off, *y = rec->arcs + b->oid_off;
    uint32_t n = a->oid_len < b->oid_len ? a->oid_len : b->oid_len;

    for (uint32_t i = 0; i < n; i++) {
        if (x[i] != y[i]) {
            return x[i] < y[i];
        }
    }
    return a->oid_len <= b->oid_len;
}

/* Bottom-up merge sort (stable; qsort has no context argument for the arcs pool). */
static enum fleet_err
sort_entries(struct rec_table *rec)
{
    struct rec_entry *tmp, *src = rec->entries, *dst;
    uint32_t n = rec->count;

    if (n < 2) {
        return FLEET_OK;
    }
    if (!(tmp = malloc((size_t)n * sizeof *tmp))) {
        return FLEET_ERR_NOMEM;
    }
    dst = tmp;
    for (uint64_t width = 1; width < n; width *= 2) {
        for (uint64_t lo = 0; lo < n; lo += 2 * width) {
            uint64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            uint64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                dst[k++] = entry_less_eq(rec, &src[i], &src[j]) ? src[i++] : src[j++];
            }
            while (i < mid) {
                dst[k++] = src[i++];
            }
            while (j < hi) {
                dst[k++] = src[j++];
            }
        }
        struct rec_entry *t = src;
        src = dst;
        dst = t;
    }
    if (src != rec->entries) {
        memcpy(rec->entries, src, (size_t)n * sizeof *src);
    }
    free(tmp);
    return FLEET_OK;
}

/* Read one line into @p buf (without its end of line). @return 1 read, 0 at end, -1 too long or error. */
static int
read_line(FILE *in, char *buf, size_t cap, size_t *len)
{
    if (!fgets(buf, (int)cap, in)) {
        return ferror(in) ? -1 : 0;
    }
    *len = strlen(buf);
    if (*len && buf[*len - 1] == '\n') {
        buf[--*len] = '\0';
    } else if (!feof(in)) {
        return -1;
    }
    if (*len && buf[*len - 1] == '\r') {
        buf[--*len] = '\0';
    }
    return 1;
}

enum fleet_err
rec_read(FILE *in, const char *name, struct rec_table **out, char *err, size_t err_len)
{
    struct rec_parser ps = {.name = name, .err = err, .err_len = err_len};
    enum rec_format format = REC_FORMAT_UNKNOWN;
    enum fleet_err rc = FLEET_OK;
    char *buf = NULL;
    size_t len;
    int got;

    *out = NULL;
    ps.rec = calloc(1, sizeof *ps.rec);
    ps.val = malloc(REC_VALUE_MAX_BYTES);
    ps.pend = malloc(REC_RECORD_MAX_BYTES);
    buf = malloc(REC_LINE_MAX_BYTES + 2);
    if (!ps.rec || !ps.val || !ps.pend || !buf) {
        rc = fail(&ps, FLEET_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    /* Step 1: every line, into entries in file order. */
    while ((got = read_line(in, buf, REC_LINE_MAX_BYTES + 2, &len)) == 1) {
        ps.line++;
        if (format == REC_FORMAT_UNKNOWN) {
            if (len == 0 || buf[0] == '#') {
                continue;
            }
            if (walk_starts_record(buf)) {
                format = REC_FORMAT_WALK;
            } else if (strchr(buf, '|')) {
                format = REC_FORMAT_SNMPREC;
            } else {
                rc = fail(&ps, FLEET_ERR_INVAL,
                          "neither .snmprec (OID|TAG|VALUE) nor snmpwalk -On output (.OID = TYPE: value)");
                goto cleanup;
            }
        }
        if (format == REC_FORMAT_SNMPREC) {
            rc = len == 0 || buf[0] == '#' ? FLEET_OK : snmprec_line(&ps, buf);
        } else {
            rc = walk_line(&ps, buf, len);
        }
        if (rc) {
            goto cleanup;
        }
    }
    if (got < 0) {
        ps.line++;
        rc = ferror(in) ? fail(&ps, FLEET_ERR_SYS, "read error: %s", strerror(errno))
                        : fail(&ps, FLEET_ERR_LIMIT, "line longer than %u bytes", REC_LINE_MAX_BYTES);
        goto cleanup;
    }
    if (ps.pend_len && (rc = walk_record(&ps))) {
        goto cleanup;
    }
    /* Step 2: sort, then refuse duplicates. */
    if ((rc = sort_entries(ps.rec))) {
        rc = fail(&ps, rc, "out of memory");
        goto cleanup;
    }
    for (uint32_t i = 1; i < ps.rec->count; i++) {
        const struct rec_entry *a = &ps.rec->entries[i - 1], *b = &ps.rec->entries[i];
        if (entry_less_eq(ps.rec, b, a)) {
            struct oid oid;
            char text[OID_MAX_SUBIDS * 11 + 1];
            rec_entry_oid(ps.rec, i, &oid);
            ps.line = b->line;
            rc = fail(&ps, FLEET_ERR_INVAL, "duplicate OID %s (first on line %" PRIu32 ")",
                      oid_format(&oid, text, sizeof text), a->line);
            goto cleanup;
        }
    }
    *out = ps.rec;
    ps.rec = NULL;

cleanup:
    rec_free(ps.rec);
    free(ps.val);
    free(ps.pend);
    free(buf);
    return rc;
}

enum fleet_err
rec_load(const char *path, struct rec_table **rec, char *err, size_t err_len)
{
    FILE *in = fopen(path, "r");
    enum fleet_err rc;

    *rec = NULL;
    if (!in) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return FLEET_ERR_SYS;
    }
    rc = rec_read(in, path, rec, err, err_len);
    fclose(in);
    return rc;
}

void
rec_free(struct rec_table *rec)
{
    if (!rec) {
        return;
    }
    free(rec->entries);
    free(rec->arcs);
    free(rec->bytes);
    free(rec);
}

void
rec_entry_oid(const struct rec_table *rec, uint32_t i, struct oid *oid)
{
    const struct rec_entry *e = &rec->entries[i];

    oid->len = e->oid_len;
    memcpy(oid->sub, rec->arcs + e->oid_off, e->oid_len * sizeof *oid->sub);
}

int
rec_entry_cmp(const struct rec_table *rec, uint32_t i, const struct oid *oid)
{
    const struct rec_entry *e = &rec->entries[i];
    const uint32_t *arcs = rec->arcs + e->oid_off;
    uint32_t n = e->oid_len < oid->len ? e->oid_len : oid->len;

    for (uint32_t k = 0; k < n; k++) {
        if (arcs[k] != oid->sub[k]) {
            return arcs[k] < oid->sub[k] ? -1 : 1;
        }
    }
    return e->oid_len < oid->len ? -1 : e->oid_len > oid->len;
}

/* Index of the first entry at or after @p oid (@p after: strictly after). */
static uint32_t
lower_bound(const struct rec_table *rec, const struct oid *oid, int after)
{
    uint32_t lo = 0, hi = rec->count;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = rec_entry_cmp(rec, mid, oid);
        if (c < 0 || (after && c == 0)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

uint32_t
rec_find(const struct rec_table *rec, const struct oid *oid)
{
    uint32_t i = lower_bound(rec, oid, 0);
    return i < rec->count && rec_entry_cmp(rec, i, oid) == 0 ? i : rec->count;
}

uint32_t
rec_find_next(const struct rec_table *rec, const struct oid *oid)
{
    return lower_bound(rec, oid, 1);
}

/* FNV-1a over the name's arcs: which counter this is, for its rate. */
static uint64_t
entry_hash(const struct rec_table *rec, const struct rec_entry *e)
{
    uint64_t h = 0xcbf29ce484222325u;

    for (uint32_t k = 0; k < e->oid_len; k++) {
        h = (h ^ rec->arcs[e->oid_off + k]) * 0x100000001b3u;
    }
    return h;
}

void
rec_value(const struct rec_table *rec, uint32_t i, uint64_t seed, uint64_t elapsed_ms,
          struct oid *oid_scratch, struct spdu_value *value)
{
    const struct rec_entry *e = &rec->entries[i];

    value->tag = e->tag;
    switch (e->tag) {
    case BER_INTEGER:
        value->v.i = e->v.i;
        break;
    case BER_OCTET_STRING:
    case BER_OPAQUE:
    case BER_IPADDRESS:
        /* A table of empty strings only has no byte store: never offset a NULL pointer. */
        value->v.bytes.ptr = rec->bytes ? rec->bytes + e->v.ref.off : (const uint8_t *)"";
        value->v.bytes.len = e->v.ref.len;
        break;
    case BER_OID:
        oid_scratch->len = e->v.ref.len;
        memcpy(oid_scratch->sub, rec->arcs + e->v.ref.off, e->v.ref.len * sizeof *oid_scratch->sub);
        value->v.oid = oid_scratch;
        break;
    case BER_NULL:
        break;
    default: {
        uint64_t v = e->v.u;
        if (e->moves && e->tag == BER_TIMETICKS) {
            v = (v + elapsed_ms / 10) & 0xffffffffu;
        } else if (e->moves) {
            /* Split seconds and milliseconds so rate x time stays far from 2^64 for centuries. */
            uint64_t rate = REC_COUNTER_RATE_MIN + dyn_hash(seed, entry_hash(rec, e), 0) %
                                                       (REC_COUNTER_RATE_MAX - REC_COUNTER_RATE_MIN + 1);
            v += rate * (elapsed_ms / 1000) + rate * (elapsed_ms % 1000) / 1000;
            if (e->tag == BER_COUNTER32) {
                v &= 0xffffffffu;
            }
        }
        value->v.u = v;
        break;
    }
    }
}

uint32_t
rec_drop(struct rec_table *rec, int (*shadowed)(const struct oid *oid, void *ctx), void *ctx)
{
    struct oid oid;
    uint32_t kept = 0, dropped;

    for (uint32_t i = 0; i < rec->count; i++) {
        rec_entry_oid(rec, i, &oid);
        if (!shadowed(&oid, ctx)) {
            rec->entries[kept++] = rec->entries[i];
        }
    }
    dropped = rec->count - kept;
    rec->count = kept;
    return dropped;
}

enum fleet_err
rec_print_line(FILE *out, const struct oid *name, const struct spdu_value *value)
{
    return snmprec_print_line(out, name, value);
}
