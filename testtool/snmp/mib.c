/*
 * GET and GETNEXT over the sorted objects. A GETNEXT finds, by binary
 * search, the first object that is after the name or contains it, then asks
 * that object's table for its next row; an object without one passes to the
 * next object. Objects never contain each other (they are leaves of the OID
 * tree), which is what makes the search a plain ordering. With a
 * recording loaded, its entries fill in every OID outside the live
 * objects: GET falls back to it, GETNEXT returns the smaller of the live and
 * the recorded candidate.
 */
#include "mib.h"

#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "devview.h"
#include "identity.h"
#include "recording.h"

static void
oid_copy(struct oid *dst, const struct oid *src)
{
    dst->len = src->len;
    memcpy(dst->sub, src->sub, src->len * sizeof *src->sub);
}

static int
object_order(const void *a, const void *b)
{
    return oid_cmp(&((const struct mib_object *)a)->oid, &((const struct mib_object *)b)->oid);
}

enum fleet_err
mib_view_init(struct mib_view *view)
{
    uint32_t count;
    const struct mib_object *all = mib_objects(&count);

    if (!(view->objects = malloc(count * sizeof *view->objects))) {
        return FLEET_ERR_NOMEM;
    }
    memcpy(view->objects, all, count * sizeof *all);
    qsort(view->objects, count, sizeof *view->objects, object_order);
    view->count = count;
    return FLEET_OK;
}

void
mib_view_free(struct mib_view *view)
{
    free(view->objects);
    view->objects = NULL;
    view->count = 0;
}

enum fleet_err
mib_req_init(struct mib_req *rq, struct device *dev, uint64_t now_ms, int v1)
{
    rq->dev = dev;
    rq->now_ms = now_ms;
    rq->v1 = v1;
    rq->dir_pos[0] = rq->dir_pos[1] = -1;
    rq->seed = devview_seed(dev);
    rq->cfg = devview_cfg(dev);
    return rq->cfg ? FLEET_OK : FLEET_ERR_NOMEM;
}

uint32_t
mib_rows(const struct mib_req *rq, enum mib_table table)
{
    const struct profile *p = rq->dev->type->profile;

    switch (table) {
    case MIB_SCALAR:
        return 1;
    case MIB_IF_TABLE:
        return p->if_count;
    case MIB_HR_PROC:
        return p->cpu_count;
    case MIB_HR_STORAGE:
        return p->storage_count;
    }
    return 0;
}

/*
 * Compare an object's OID with a name cut to the object's length: 0 when the object contains the
 * name (is a prefix of it), else the order of the two.
 */
static int
prefix_cmp(const struct oid *obj, const struct oid *name)
{
    uint32_t n = obj->len < name->len ? obj->len : name->len;

    for (uint32_t i = 0; i < n; i++) {
        if (obj->sub[i] != name->sub[i]) {
            return obj->sub[i] < name->sub[i] ? -1 : 1;
        }
    }
    return obj->len <= name->len ? 0 : 1;
}

/* Index of the first object that contains @p name or sorts after it. */
static uint32_t
first_candidate(const struct mib_view *view, const struct oid *name)
{
    const struct mib_object *objects = view->objects;
    uint32_t lo = 0, hi = view->count;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (prefix_cmp(&objects[mid].oid, name) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static int
visible(const struct mib_req *rq, const struct mib_object *o)
{
    return !(rq->v1 && o->tag == BER_COUNTER64);
}

/* Recorded Counter64 values are invisible to SNMPv1 like live ones (RFC 3584 4.2.2.1). */
static int
rec_visible(const struct mib_req *rq, const struct rec_table *rec, uint32_t i)
{
    return !(rq->v1 && rec->entries[i].tag == BER_COUNTER64);
}

/* Recorded entry @p i as served to this request's device at its instant. */
static void
rec_served(struct mib_req *rq, const struct rec_table *rec, uint32_t i, struct spdu_value *value)
{
    uint64_t start_ms = rq->dev->worker->fleet->start_ms;

    rec_value(rec, i, rq->seed, rq->now_ms > start_ms ? rq->now_ms - start_ms : 0, &rq->oid_scratch, value);
    if (value->tag == BER_OCTET_STRING && rq->dev->type->identity) {
        /* The type's identity rules: each device its own host name, addresses, serial numbers. */
        size_t n = identity_rewrite_value(rq->dev, (const char *)value->v.bytes.ptr, value->v.bytes.len,
                                          (char *)rq->scratch, sizeof rq->scratch);
        if (n != (size_t)-1) {
            value->v.bytes.ptr = rq->scratch;
            value->v.bytes.len = n;
        }
    }
}

const struct mib_object *
mib_find(struct mib_req *rq, const struct oid *name, uint32_t *row, int *is_object)
{
    const struct mib_view *view = &rq->dev->type->mib;
    const struct mib_object *objects = view->objects;
    uint32_t i = first_candidate(view, name);
    const struct mib_object *o;
    uint32_t suffix_len;

    *is_object = 0;
    if (i >= view->count || prefix_cmp(&objects[i].oid, name) != 0 || !visible(rq, &objects[i])) {
        return NULL;
    }
    o = &objects[i];
    *is_object = 1;
    suffix_len = name->len - o->oid.len;
    if (o->table == MIB_SCALAR) {
        if (suffix_len != 1 || name->sub[o->oid.len] != 0) {
            return NULL;
        }
        *row = 0;
        return o;
    }
    if (suffix_len != 1) {
        return NULL;
    }
    *row = name->sub[o->oid.len];
    if (*row < 1 || *row > mib_rows(rq, (enum mib_table)o->table)) {
        return NULL;
    }
    return o;
}

/* The tables beside the live objects, in precedence order: the profile's smiv2 data, then the recording. */
#define MIB_DATA_TABLES 2

static const struct rec_table *
data_table(const struct mib_req *rq, int i)
{
    const struct device_type *type = rq->dev->type;
    return i == 0 ? type->smiv2_table : type->recording;
}

void
mib_get(struct mib_req *rq, const struct oid *name, struct spdu_value *value)
{
    uint32_t row;
    int is_object;
    const struct mib_object *o = mib_find(rq, name, &row, &is_object);

    if (o) {
        mib_value(rq, o, row, value);
        return;
    }
    /* Not a live instance: a live object's column is never served from data tables (mib_attach_recording). */
    for (int t = 0; !is_object && t < MIB_DATA_TABLES; t++) {
        const struct rec_table *rec = data_table(rq, t);
        uint32_t ri;
        if (rec && (ri = rec_find(rec, name)) < rec->count && rec_visible(rq, rec, ri)) {
            rec_served(rq, rec, ri, value);
            return;
        }
    }
    value->tag = is_object ? BER_NO_SUCH_INSTANCE : BER_NO_SUCH_OBJECT;
}

/* The first row of object @p o after the name's suffix, or 0 when it has none. */
static uint32_t
next_row(const struct mib_req *rq, const struct mib_object *o, const struct oid *name, int contains)
{
    uint32_t rows = mib_rows(rq, (enum mib_table)o->table);
    uint64_t next;

    if (!contains || name->len == o->oid.len) {
        return rows ? 1 : 0; /* the name is before the object, or is the object itself */
    }
    if (o->table == MIB_SCALAR) {
        return 0; /* any suffix is at or past .0 */
    }
    /* [r] and [r, ...] are both followed by row r + 1. */
    next = (uint64_t)name->sub[o->oid.len] + 1;
    return next <= rows ? (uint32_t)next : 0;
}

/*
 * The first live instance after @p name: its object (NULL at the end) and @p row. @p hint, if not
 * NULL, is the object the previous step of the same walk ended in: when the name is still inside it
 * (the usual GETBULK column walk) the binary search is skipped.
 */
static const struct mib_object *
live_next(struct mib_req *rq, const struct oid *name, uint32_t *row, uint32_t *hint)
{
    const struct mib_view *view = &rq->dev->type->mib;
    const struct mib_object *objects = view->objects;
    uint32_t i = hint && *hint < view->count && prefix_cmp(&objects[*hint].oid, name) == 0
                     ? *hint
                     : first_candidate(view, name);

    for (; i < view->count; i++) {
        const struct mib_object *o = &objects[i];
        if (!visible(rq, o)) {
            continue;
        }
        if ((*row = next_row(rq, o, name, prefix_cmp(&o->oid, name) == 0))) {
            if (hint) {
                *hint = i;
            }
            return o;
        }
    }
    return NULL;
}

/*
 * The merged view: the smaller of the next live instance and the next recorded one. @p name and
 * @p next may be the same OID (GETBULK walks in place), so the recorded candidate is found before
 * @p next is written.
 */
void
mib_next(struct mib_req *rq, const struct oid *name, struct oid *next, struct spdu_value *value)
{
    mib_next_hinted(rq, name, next, value, NULL);
}

void
mib_next_hinted(struct mib_req *rq, const struct oid *name, struct oid *next, struct spdu_value *value,
                uint32_t *hint)
{
    const struct rec_table *best = NULL;
    uint32_t best_i = 0, row = 0;
    const struct mib_object *o = live_next(rq, name, &row, hint);
    struct oid *live = &rq->next_scratch;

    if (o && !rq->dev->type->smiv2_table && !rq->dev->type->recording) {
        /* No data tables (the usual case): the live instance is the answer, written in place. */
        oid_copy(next, &o->oid);
        next->sub[next->len++] = o->table == MIB_SCALAR ? 0 : row;
        mib_value(rq, o, o->table == MIB_SCALAR ? 0 : row, value);
        return;
    }
    if (o) {
        /* Only the arcs in use are copied: a whole struct oid is half a kilobyte. */
        oid_copy(live, &o->oid);
        live->sub[live->len++] = o->table == MIB_SCALAR ? 0 : row;
    }
    for (int t = 0; t < MIB_DATA_TABLES; t++) {
        const struct rec_table *rec = data_table(rq, t);
        uint32_t ri = rec ? rec_find_next(rec, name) : 0;
        while (rec && ri < rec->count && !rec_visible(rq, rec, ri)) {
            ri++;
        }
        if (!rec || ri >= rec->count || (o && rec_entry_cmp(rec, ri, live) >= 0)) {
            continue;
        }
        if (best) {
            struct oid cand;
            rec_entry_oid(rec, ri, &cand);
            if (rec_entry_cmp(best, best_i, &cand) <= 0) {
                continue;
            }
        }
        best = rec;
        best_i = ri;
    }
    if (best) {
        rec_entry_oid(best, best_i, next);
        rec_served(rq, best, best_i, value);
        return;
    }
    if (o) {
        oid_copy(next, live);
        mib_value(rq, o, o->table == MIB_SCALAR ? 0 : row, value);
        return;
    }
    if (next != name) {
        oid_copy(next, name);
    }
    value->tag = BER_END_OF_MIB_VIEW;
}

/* A recorded OID inside a live object's column (or equal to a live scalar's instance) is the live view's. */
static int
live_owns(const struct oid *oid, void *ctx)
{
    const struct mib_view *view = ctx;
    uint32_t i = first_candidate(view, oid);

    return i < view->count && prefix_cmp(&view->objects[i].oid, oid) == 0;
}

uint32_t
mib_attach_recording(const struct mib_view *view, struct rec_table *rec)
{
    return rec_drop(rec, live_owns, (void *)view);
}

/* An OID the profile's smiv2 data serves is not the recording's. */
static int
smiv2_owns(const struct oid *oid, void *ctx)
{
    const struct rec_table *smiv2 = ctx;
    return rec_find(smiv2, oid) < smiv2->count;
}

uint32_t
mib_attach_below(struct rec_table *rec, const struct rec_table *above)
{
    return above ? rec_drop(rec, smiv2_owns, (void *)above) : 0;
}
