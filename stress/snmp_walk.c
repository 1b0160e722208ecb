/*
 * Walk state of one SNMP collection and the collection-time fit; see
 * snmp_walk.h. Nothing here touches a socket or a clock.
 */
#include "snmp_walk.h"

#include <stdlib.h>
#include <string.h>

enum fleet_err
walk_plan_init(struct walk_plan *plan, const struct oid *oids, uint32_t count, uint32_t max_vars)
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
    w->varbinds = 0;
    w->samples = 0;
    fill_window(w);
}

int
walk_finished(const struct walk *w)
{
    return w->active == 0;
}

uint32_t
walk_request(const struct walk *w, const struct oid **names)
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
walk_in_subtree(const struct oid *root, const struct oid *oid)
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

        w->varbinds++;
        const struct oid *root = &w->plan->roots[c->root];

        if (ended_bits[col / 64] & (1ull << (col % 64))) {
            continue;
        }
        if (b.value.tag == BER_END_OF_MIB_VIEW || b.value.tag == BER_NO_SUCH_OBJECT ||
            b.value.tag == BER_NO_SUCH_INSTANCE || !walk_in_subtree(root, &b.name)) {
            ended_bits[col / 64] |= 1ull << (col % 64);
            ended_count++;
            continue;
        }
        if (oid_cmp(&b.name, &c->cursor) <= 0) {
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

/* RFC 3411 SnmpEngineID: a discovered engine ID has 5..32 bytes. */
#define WALK_V3_ENGINE_ID_MIN_BYTES 5

enum fleet_err
walk_v3_user_init(struct walk_v3_user *u, const char *name, size_t name_len, enum susm_auth auth,
                  const char *auth_password, size_t auth_password_len, enum susm_priv priv,
                  const char *priv_password, size_t priv_password_len)
{
    enum fleet_err rc = FLEET_ERR_INVAL;

    memset(u, 0, sizeof *u);
    if (!name_len || name_len > SUSM_USER_NAME_MAX_BYTES ||
        (priv != SUSM_PRIV_NONE && auth == SUSM_AUTH_NONE)) {
        goto cleanup;
    }
    memcpy(u->name, name, name_len);
    u->name_len = name_len;
    u->auth = auth;
    u->priv = priv;
    u->flags = SUSM_FLAG_REPORTABLE;
    if (auth != SUSM_AUTH_NONE) {
        rc = susm_password_to_key(auth, (const uint8_t *)auth_password, auth_password_len, u->auth_ku);
        if (rc) {
            goto cleanup;
        }
        u->flags |= SUSM_FLAG_AUTH;
    }
    if (priv != SUSM_PRIV_NONE) {
        /* RFC 3826 section 1.2: the privacy key comes from its password through the auth protocol's hash. */
        rc = susm_password_to_key(auth, (const uint8_t *)priv_password, priv_password_len, u->priv_ku);
        if (rc) {
            goto cleanup;
        }
        u->flags |= SUSM_FLAG_PRIV;
    }
    rc = FLEET_OK;

cleanup:
    return rc;
}

const char *
walk_v3_level_name(uint8_t flags)
{
    if (flags & SUSM_FLAG_PRIV) {
        return "authPriv";
    }
    return (flags & SUSM_FLAG_AUTH) ? "authNoPriv" : "noAuthNoPriv";
}

const char *
walk_v3_report_name(enum susm_report_kind kind)
{
    static const char *const names[] = {"usmStats",
                                        "usmStatsUnsupportedSecLevels",
                                        "usmStatsNotInTimeWindows",
                                        "usmStatsUnknownUserNames",
                                        "usmStatsUnknownEngineIDs",
                                        "usmStatsWrongDigests",
                                        "usmStatsDecryptionErrors"};

    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : names[0];
}

enum fleet_err
walk_v3_localize(const struct walk_v3_user *u, const struct walk_v3_engine *e, struct susm_user *out)
{
    const struct susm_peer *peer = &e->peer;
    enum fleet_err rc = FLEET_ERR_INVAL;

    memset(out, 0, sizeof *out);
    if (peer->engine_id_len < WALK_V3_ENGINE_ID_MIN_BYTES) {
        goto cleanup;
    }
    memcpy(out->name, u->name, u->name_len);
    out->name_len = u->name_len;
    out->auth = u->auth;
    out->priv = u->priv;
    rc = FLEET_OK;
    if (u->auth != SUSM_AUTH_NONE) {
        rc = susm_localize_key(u->auth, u->auth_ku, peer->engine_id, peer->engine_id_len, out->auth_key);
    }
    if (!rc && u->priv != SUSM_PRIV_NONE) {
        rc = susm_localize_key(u->auth, u->priv_ku, peer->engine_id, peer->engine_id_len, out->priv_key);
    }

cleanup:
    return rc;
}

void
walk_v3_request_out(struct walk_v3_engine *e, const struct walk_v3_user *u, const struct susm_user *user,
                    int32_t msg_id, int32_t max_size, uint64_t salt, uint64_t now_us, struct susm_out *out)
{
    uint64_t elapsed_s = now_us > e->synced_us ? (now_us - e->synced_us) / 1000000u : 0;
    uint64_t t = (uint64_t)e->peer.latest_time_s + elapsed_s;

    /* RFC 3414 section 2.2.2: our notion of the engine's clock runs on with ours since we learned it. */
    e->peer.time_s = t < SUSM_MAX_ENGINE_BOOTS ? (uint32_t)t : SUSM_MAX_ENGINE_BOOTS;
    susm_request_out(&e->peer, user, u->flags, msg_id, max_size, salt, out);
}

enum fleet_err
walk_v3_peek_msg_id(const uint8_t *buf, size_t len, int32_t *msg_id)
{
    struct ber_reader r = {buf, buf + len}, seq, global;
    int64_t v;

    if (ber_read_enter(&r, BER_SEQUENCE, &seq) || ber_read_int(&seq, BER_INTEGER, &v) || v != SPDU_V3 ||
        ber_read_enter(&seq, BER_SEQUENCE, &global) || ber_read_int(&global, BER_INTEGER, &v) || v < 0 ||
        v > INT32_MAX) {
        return FLEET_ERR_PROTO;
    }
    *msg_id = (int32_t)v;
    return FLEET_OK;
}

static int
walk_v3_same_engine(const struct walk_v3_engine *e, const struct susm_msg *msg)
{
    return msg->engine_id_len == e->peer.engine_id_len &&
           !memcmp(msg->engine_id, e->peer.engine_id, e->peer.engine_id_len);
}

enum walk_v3_verdict
walk_v3_classify(struct walk_v3_engine *e, int discovering, uint8_t flags_sent, const struct susm_msg *msg,
                 enum susm_report_kind failure, uint64_t now_us, enum susm_report_kind *kind,
                 const char **why)
{
    enum walk_v3_verdict verdict = WALK_V3_UNVERIFIED;
    uint32_t boots = e->peer.boots;
    uint32_t latest = e->peer.latest_time_s;

    *kind = SUSM_REPORT_NONE;
    *why = NULL;
    if (failure == SUSM_REPORT_WRONG_DIGESTS) {
        *why = "its digest does not verify";
        goto cleanup;
    }
    if (failure == SUSM_REPORT_DECRYPTION_ERRORS) {
        *why = "it does not decrypt";
        goto cleanup;
    }
    if (failure != SUSM_REPORT_NONE) {
        *why = "it is protected at a level the request was not sent at";
        goto cleanup;
    }
    if (!msg->scoped_ok) {
        *why = "it has no scoped PDU";
        goto cleanup;
    }

    /* Discovery (RFC 3414 section 4): a Report names the engine, with its boots and time. */
    if (discovering) {
        verdict = WALK_V3_UNUSABLE;
        if (msg->pdu.type != SPDU_REPORT) {
            *why = "the discovery request was answered without a Report";
        } else if (msg->engine_id_len < WALK_V3_ENGINE_ID_MIN_BYTES ||
                   msg->engine_id_len > SUSM_ENGINE_ID_MAX_BYTES) {
            *why = "the discovery Report carries no valid engine ID";
        } else {
            susm_peer_discovered(&e->peer, msg);
            e->synced_us = now_us;
            verdict = WALK_V3_DISCOVERED;
        }
        goto cleanup;
    }

    /* A Report: most are sent noAuthNoPriv (the agent could not check us), so they are taken as they come,
     * except notInTimeWindow, whose clock we only trust when the agent authenticated it (step 7a). */
    if (msg->pdu.type == SPDU_REPORT) {
        *kind = susm_report_kind_of(&msg->pdu, NULL);
        verdict = WALK_V3_REPORT;
        if (*kind == SUSM_REPORT_NONE) {
            verdict = WALK_V3_UNUSABLE;
            *why = "a Report without a usmStats counter";
        } else if (*kind == SUSM_REPORT_NOT_IN_TIME_WINDOWS && (flags_sent & SUSM_FLAG_AUTH)) {
            if (!msg->authenticated || !walk_v3_same_engine(e, msg)) {
                *kind = SUSM_REPORT_NONE;
                verdict = WALK_V3_UNVERIFIED;
                *why = "a notInTimeWindow Report that is not authenticated by the engine";
                goto cleanup;
            }
            e->peer.boots = msg->engine_boots;
            e->peer.time_s = msg->engine_time;
            e->peer.latest_time_s = msg->engine_time;
            e->synced_us = now_us;
            verdict = WALK_V3_RESYNC;
        } else if (*kind == SUSM_REPORT_UNKNOWN_ENGINE_IDS) {
            e->peer.engine_id_len = 0; /* the engine changed: its next collection discovers it again */
        }
        goto cleanup;
    }
    if (msg->pdu.type != SPDU_RESPONSE) {
        *why = "neither a Response nor a Report";
        goto cleanup;
    }

    /* A Response must come at the level asked for, from the engine asked, in its time window (step 7b). */
    if (((flags_sent & SUSM_FLAG_AUTH) && !msg->authenticated) ||
        ((flags_sent & SUSM_FLAG_PRIV) && !(msg->flags & SUSM_FLAG_PRIV))) {
        *why = "a Response below the security level of its request";
        goto cleanup;
    }
    if (!walk_v3_same_engine(e, msg)) {
        *why = "a Response from another engine";
        goto cleanup;
    }
    if (flags_sent & SUSM_FLAG_AUTH) {
        if (susm_peer_update(&e->peer, msg) != FLEET_OK) {
            *why = "a Response outside the engine's time window";
            goto cleanup;
        }
        if (e->peer.boots != boots || e->peer.latest_time_s != latest) {
            e->synced_us = now_us;
        }
    }
    verdict = WALK_V3_RESPONSE;

cleanup:
    return verdict;
}
