/*
 * Walk state of one SNMP collection and the collection-time fit; see
 * snmp_walk.h. Nothing here touches a socket or a clock.
 */
#include "snmp_walk.h"

#include <stdlib.h>
#include <string.h>

enum fleet_err
walk_plan_init(struct walk_plan *plan, const struct ber_oid *oids, uint32_t count, uint32_t max_vars)
{
    memset(plan, 0, sizeof *plan);
    if (!count || !max_vars) {
        return FLEET_ERR_INVAL;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (oids[i].len < 2) {
            return FLEET_ERR_INVAL;
        }
    }
    plan->roots = malloc(count * sizeof *plan->roots);
    plan->starts = malloc(count * sizeof *plan->starts);
    if (!plan->roots || !plan->starts) {
        walk_plan_close(plan);
        return FLEET_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < count; i++) {
        plan->roots[i] = oids[i];
        plan->starts[i] = oids[i];
        /* GETBULK returns what follows its OID, never the OID itself. For a scalar x.0 start at x:
         * nothing sorts between x and x.0, so x.0 is the first answer, as snmpbulkwalk's fallback
         * GET of a lone scalar would give. */
        if (oids[i].sub[oids[i].len - 1] == 0) {
            plan->starts[i].len--;
        }
    }
    plan->count = count;
    plan->max_vars = max_vars;
    return FLEET_OK;
}

void
walk_plan_close(struct walk_plan *plan)
{
    free(plan->roots);
    free(plan->starts);
    memset(plan, 0, sizeof *plan);
}

/* Take roots into the window until it is full or no root is left. */
static void
fill_window(struct walk *w)
{
    while (w->active < w->plan->max_vars && w->next_root < w->plan->count) {
        struct walk_column *c = &w->cols[w->active++];
        c->root = w->next_root++;
        c->cursor = w->plan->starts[c->root];
    }
}

void
walk_start(struct walk *w, const struct walk_plan *plan, struct walk_column *cols)
{
    w->plan = plan;
    w->cols = cols;
    w->active = 0;
    w->next_root = 0;
    w->values = 0;
    w->samples = 0;
    fill_window(w);
}

int
walk_finished(const struct walk *w)
{
    return w->active == 0;
}

uint32_t
walk_request(const struct walk *w, const struct ber_oid **names)
{
    for (uint32_t i = 0; i < w->active; i++) {
        names[i] = &w->cols[i].cursor;
    }
    return w->active;
}

int
walk_is_numeric(uint8_t tag)
{
    return tag == BER_INTEGER || tag == BER_COUNTER32 || tag == BER_GAUGE32 || tag == BER_TIMETICKS ||
           tag == BER_COUNTER64;
}

int
walk_in_subtree(const struct ber_oid *root, const struct ber_oid *oid)
{
    return oid->len >= root->len && !memcmp(oid->sub, root->sub, root->len * sizeof *root->sub);
}

/* Window columns that ended in this response; bit per column, kept on the stack for any max_vars. */
#define WALK_ENDED_WORDS(n) (((n) + 63) / 64)

enum fleet_err
walk_response(struct walk *w, const struct spdu_pdu *pdu, const char **why)
{
    uint32_t n = w->active;
    uint64_t ended[WALK_ENDED_WORDS(1000)] = {0};
    uint64_t *ended_bits = ended;
    struct spdu_binding_iter it;
    struct spdu_binding b;
    enum fleet_err err = FLEET_OK;
    uint32_t advanced = 0;
    uint32_t ended_count = 0;
    uint32_t kept = 0;
    uint64_t k = 0;

    *why = NULL;
    if (!n) {
        *why = "response to a finished walk";
        return FLEET_ERR_PROTO;
    }
    if (WALK_ENDED_WORDS(n) > WALK_ENDED_WORDS(1000) &&
        !(ended_bits = calloc(WALK_ENDED_WORDS(n), sizeof *ended_bits))) {
        *why = "out of memory";
        return FLEET_ERR_NOMEM;
    }

    /* Each varbind advances or ends its column; varbinds of an ended column are padding. */
    spdu_binding_iter_init(&it, pdu);
    while ((err = spdu_binding_next(&it, &b)) == FLEET_OK) {
        uint32_t col = (uint32_t)(k++ % n);
        struct walk_column *c = &w->cols[col];
        const struct ber_oid *root = &w->plan->roots[c->root];

        if (ended_bits[col / 64] & (1ull << (col % 64))) {
            continue;
        }
        if (b.value.tag == BER_END_OF_MIB_VIEW || b.value.tag == BER_NO_SUCH_OBJECT ||
            b.value.tag == BER_NO_SUCH_INSTANCE || !walk_in_subtree(root, &b.name)) {
            ended_bits[col / 64] |= 1ull << (col % 64);
            ended_count++;
            continue;
        }
        if (ber_oid_cmp(&b.name, &c->cursor) <= 0) {
            *why = "OID not increasing";
            err = FLEET_ERR_PROTO;
            goto cleanup;
        }
        c->cursor = b.name;
        w->values++;
        w->samples += walk_is_numeric(b.value.tag);
        advanced++;
    }
    if (err != FLEET_ERR_NOTFOUND) {
        *why = "malformed varbind";
        err = FLEET_ERR_PROTO;
        goto cleanup;
    }
    err = FLEET_OK;
    if (!advanced && !ended_count) {
        *why = "response neither advances nor ends any column";
        err = FLEET_ERR_PROTO;
        goto cleanup;
    }

    /* Ended columns leave the window in place; the order of the rest stays the plan's. */
    for (uint32_t i = 0; i < n; i++) {
        if (!(ended_bits[i / 64] & (1ull << (i % 64)))) {
            if (kept != i) {
                w->cols[kept] = w->cols[i];
            }
            kept++;
        }
    }
    w->active = kept;
    fill_window(w);

cleanup:
    if (ended_bits != ended) {
        free(ended_bits);
    }
    return err;
}

/* Relative variance below which a set of values counts as constant. */
#define WALK_FIT_EPSILON 1e-12

void
walk_fit_compute(const double *t_us, const uint32_t *requests, size_t n, double r_us, struct walk_fit *fit)
{
    double t_mean = 0, x_mean = 0, ss_tot = 0, ss_res = 0, sxx = 0, sxt = 0, rel = 0;
    size_t rel_n = 0;

    memset(fit, 0, sizeof *fit);
    fit->n = n;
    fit->r_us = r_us;
    if (!n) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        t_mean += t_us[i];
        x_mean += requests[i] * r_us;
    }
    t_mean /= (double)n;
    x_mean /= (double)n;
    /* With the slope held at 1, least squares puts c at the mean residual. */
    fit->c_us = t_mean - x_mean;
    for (size_t i = 0; i < n; i++) {
        double x = requests[i] * r_us;
        double res = t_us[i] - (x + fit->c_us);
        ss_res += res * res;
        ss_tot += (t_us[i] - t_mean) * (t_us[i] - t_mean);
        sxx += (x - x_mean) * (x - x_mean);
        sxt += (x - x_mean) * (t_us[i] - t_mean);
        if (t_us[i] > 0) {
            rel += (res < 0 ? -res : res) / t_us[i];
            rel_n++;
        }
    }
    fit->mean_rel_error = rel_n ? rel / (double)rel_n : 0.0;
    /* Sums of equal values need not cancel exactly in floating point: a spread below this share of
     * the mean counts as none. */
    if (n >= 2 && ss_tot > WALK_FIT_EPSILON * t_mean * t_mean * (double)n) {
        fit->r_squared = 1.0 - ss_res / ss_tot;
        /* With every P equal the model explains nothing but the mean: R^2 is 0, not -0.0000. */
        if (fit->r_squared > -1e-9 && fit->r_squared < 1e-9) {
            fit->r_squared = 0.0;
        }
        fit->r_squared_valid = 1;
    }
    if (n >= 2 && sxx > WALK_FIT_EPSILON * x_mean * x_mean * (double)n) {
        fit->slope = sxt / sxx;
        fit->intercept_us = t_mean - fit->slope * x_mean;
        fit->line_valid = 1;
        if (ss_tot > 0) {
            fit->line_r_squared = (sxt * sxt) / (sxx * ss_tot);
        }
    }
}
