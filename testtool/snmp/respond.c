/*
 * Request processing. Varbinds are decoded from the request buffer in
 * place and the response is encoded forward into the worker's buffer, each
 * varbind checked against the size budget: GETBULK stops at the budget
 * (truncated, as RFC 3416 4.2.3 allows), a GET or GETNEXT that cannot fit
 * answers tooBig.
 */
#include "respond.h"

#include <string.h>

#include "device.h"
#include "devview.h"
#include "event.h"
#include "metrics_count.h"
#include "mib.h"
#include "mib_set.h"
#include "netaddr.h"
#include "spdu.h"
#include "susm.h"

/* SNMPv1 has six error-status values; map the SNMPv2 ones onto them (RFC 3584 section 4.4). */
static int
v1_status(int status)
{
    switch (status) {
    case SPDU_NO_ERROR:
    case SPDU_TOO_BIG:
    case SPDU_NO_SUCH_NAME:
    case SPDU_BAD_VALUE:
    case SPDU_READ_ONLY:
    case SPDU_GEN_ERR:
        return status;
    case SPDU_WRONG_VALUE:
    case SPDU_WRONG_ENCODING:
    case SPDU_WRONG_TYPE:
    case SPDU_WRONG_LENGTH:
    case SPDU_INCONSISTENT_VALUE:
        return SPDU_BAD_VALUE;
    case SPDU_NO_ACCESS:
    case SPDU_NOT_WRITABLE:
    case SPDU_NO_CREATION:
    case SPDU_INCONSISTENT_NAME:
    case SPDU_AUTHORIZATION_ERROR:
        return SPDU_NO_SUCH_NAME;
    default:
        return SPDU_GEN_ERR;
    }
}

static int
community_is(const struct spdu_message *m, const char *community)
{
    size_t len = community ? strlen(community) : 0;
    return community && m->community_len == len && !memcmp(m->community, community, len);
}

/* Echo the request's varbinds with an error (SET failures, SNMPv1 errors, injected errors). */
static void
echo_error(struct spdu_encoder *e, const struct spdu_pdu *pdu, int status, uint32_t index)
{
    struct spdu_binding_iter it;
    struct spdu_binding b;

    spdu_enc_reset(e);
    spdu_binding_iter_init(&it, pdu);
    while (spdu_binding_next(&it, &b) == FLEET_OK) {
        if (spdu_enc_raw(e, b.raw, b.raw_len)) {
            spdu_enc_reset(e); /* cannot even echo: an empty list still carries the error */
            break;
        }
    }
    (void)status;
    (void)index;
}

/* GET and GETNEXT. @return error-status; @p index the varbind concerned. */
static int
get_or_next(struct mib_req *rq, struct spdu_encoder *e, const struct spdu_pdu *pdu, int next, uint32_t *index)
{
    struct spdu_binding_iter it;
    struct spdu_binding b;
    uint32_t i = 0;

    spdu_binding_iter_init(&it, pdu);
    while (spdu_binding_next(&it, &b) == FLEET_OK) {
        struct spdu_value v;
        struct oid found;
        const struct oid *name = &b.name;
        i++;
        if (next) {
            mib_next(rq, &b.name, &found, &v);
            name = &found;
        } else {
            mib_get(rq, &b.name, &v);
        }
        if (rq->v1 &&
            (v.tag == BER_NO_SUCH_OBJECT || v.tag == BER_NO_SUCH_INSTANCE || v.tag == BER_END_OF_MIB_VIEW)) {
            *index = i;
            return SPDU_NO_SUCH_NAME;
        }
        if (spdu_enc_binding(e, name, &v)) {
            *index = 0;
            return SPDU_TOO_BIG;
        }
    }
    return SPDU_NO_ERROR;
}

static void
getbulk(struct mib_req *rq, struct respond_scratch *scratch, struct spdu_encoder *e,
        const struct spdu_pdu *pdu)
{
    struct spdu_binding_iter it;
    struct spdu_binding b;
    uint32_t non_repeaters = pdu->error_status < 0 ? 0 : (uint32_t)pdu->error_status;
    uint32_t max_reps = pdu->error_index < 0 ? 0 : (uint32_t)pdu->error_index;
    uint32_t i = 0, repeaters = 0;

    /* Non-repeaters: one GETNEXT each. Repeaters beyond the scratch are answered once too. */
    spdu_binding_iter_init(&it, pdu);
    while (spdu_binding_next(&it, &b) == FLEET_OK) {
        struct spdu_value v;
        struct oid found;
        if (i++ < non_repeaters || repeaters == RESPOND_MAX_REPEATERS || !max_reps) {
            if (i > non_repeaters && !max_reps) {
                continue; /* max-repetitions 0: repeaters get nothing */
            }
            mib_next(rq, &b.name, &found, &v);
            if (spdu_enc_binding(e, &found, &v)) {
                return;
            }
            continue;
        }
        scratch->hints[repeaters] = UINT32_MAX;
        scratch->repeaters[repeaters++] = b.name;
    }
    /* Repeaters, round by round, until the budget, the bindings limit or the end of every column. */
    for (uint32_t round = 0; round < max_reps && repeaters; round++) {
        uint32_t ended = 0;
        for (uint32_t r = 0; r < repeaters; r++) {
            struct spdu_value v;
            struct oid *pos = &scratch->repeaters[r];
            mib_next_hinted(rq, pos, pos, &v, &scratch->hints[r]);
            ended += v.tag == BER_END_OF_MIB_VIEW;
            if (e->count >= RESPOND_MAX_BINDINGS || spdu_enc_binding(e, pos, &v)) {
                return;
            }
        }
        if (ended == repeaters) {
            return;
        }
    }
}

/*
 * The operation itself, the same for every version: fills the encoder and returns the error-status
 * (SNMPv2 numbering) and error-index to answer with.
 */
static int
answer_pdu(struct device *dev, struct respond_scratch *scratch, struct spdu_encoder *e, struct spdu_pdu *pdu,
           int v1, int forced_error, uint32_t *index)
{
    struct respond_stats *st = &dev->snmp_stats;
    struct mib_req rq;
    int status = SPDU_NO_ERROR;

    *index = 0;
    if (mib_req_init(&rq, dev, devview_now_ms(dev->worker->fleet), v1)) {
        echo_error(e, pdu, SPDU_GEN_ERR, 0);
        return SPDU_GEN_ERR;
    }
    if (forced_error) {
        *index = pdu->binding_count ? 1 : 0;
        echo_error(e, pdu, forced_error, *index);
        return forced_error;
    }
    switch (pdu->type) {
    case SPDU_GET:
    case SPDU_GETNEXT:
        pdu->type == SPDU_GET ? st->in_get_requests++ : st->in_get_nexts++;
        status = get_or_next(&rq, e, pdu, pdu->type == SPDU_GETNEXT, index);
        if (status == SPDU_TOO_BIG) {
            /* RFC 3416 4.2.1: an empty varbind list; SNMPv1 (RFC 1157) echoes the request's. */
            spdu_enc_reset(e);
            if (v1) {
                echo_error(e, pdu, status, 0);
            }
        } else if (status) {
            echo_error(e, pdu, status, *index);
        }
        break;
    case SPDU_GETBULK:
        st->in_get_bulks++;
        getbulk(&rq, scratch, e, pdu);
        break;
    case SPDU_SET:
        st->in_set_requests++;
        status = mib_set(&rq, pdu, index);
        echo_error(e, pdu, status, *index);
        break;
    }
    return status;
}

static int
answerable(const struct spdu_pdu *pdu, int version)
{
    return pdu->type == SPDU_GET || pdu->type == SPDU_GETNEXT || pdu->type == SPDU_SET ||
           (pdu->type == SPDU_GETBULK && version != SPDU_V1);
}

/* Lookup for susm_agent_receive(): a configured user with keys localized for this device's engine. */
struct v3_lookup {
    const struct fleet_config *cfg; /* the users */
    const uint8_t *engine_id;       /* this device's engine */
    size_t engine_id_len;
    struct susm_user user; /* the user found, localized */
};

static const struct susm_user *
find_v3_user(void *arg, const uint8_t *name, size_t name_len)
{
    struct v3_lookup *l = arg;

    for (uint32_t i = 0; i < l->cfg->snmp_v3_user_count; i++) {
        const struct respond_v3_user *u = &l->cfg->snmp_v3_users[i];
        if (u->name_len != name_len || memcmp(u->name, name, name_len)) {
            continue;
        }
        memset(&l->user, 0, sizeof l->user);
        memcpy(l->user.name, u->name, u->name_len);
        l->user.name_len = u->name_len;
        l->user.auth = (enum susm_auth)u->auth;
        l->user.priv = (enum susm_priv)u->priv;
        if (u->auth != SUSM_AUTH_NONE &&
            (susm_localize_key(l->user.auth, u->auth_ku, l->engine_id, l->engine_id_len, l->user.auth_key) ||
             (u->priv != SUSM_PRIV_NONE && susm_localize_key(l->user.auth, u->priv_ku, l->engine_id,
                                                             l->engine_id_len, l->user.priv_key)))) {
            return NULL;
        }
        return &l->user;
    }
    return NULL;
}

/* A refused login (wrong community, unknown v3 user, wrong digest) is an event (event.h): the trap and the
 * login-failure line name the requester's address, and the v3 user it gave. */
static void
login_refused(struct device *dev, const union netaddr_sa *peer, const uint8_t *user, size_t user_len)
{
    char who[SUSM_USER_NAME_MAX_BYTES + 1];
    size_t n = user_len < SUSM_USER_NAME_MAX_BYTES ? user_len : SUSM_USER_NAME_MAX_BYTES;
    char from[NETADDR_TEXT_BYTES];
    struct net_endpoint e = {.len = 0};

    if (peer) {
        netaddr_endpoint_set(&e, &peer->sa, netaddr_sa_len(&peer->sa));
    }
    /* The name is the requester's bytes: what a line cannot carry (controls, quotes, non-ASCII) goes as '?'.
     */
    for (size_t i = 0; i < n; i++) {
        who[i] = user[i] >= 0x20 && user[i] < 0x7f && user[i] != '"' && user[i] != '\\' && user[i] != ']'
                     ? (char)user[i]
                     : '?';
    }
    who[n] = 0;
    event_login_refused(dev, EVENT_LOGIN_SNMP, n ? who : NULL,
                        peer ? netaddr_endpoint_text(&e, 0, from, sizeof from) : NULL);
}

static size_t
respond_v3(struct device *dev, struct respond_scratch *scratch, uint8_t *req, size_t req_len,
           const union netaddr_sa *peer, uint8_t *out, size_t out_cap, int forced_error, uint8_t **reply)
{
    struct respond_stats *st = &dev->snmp_stats;
    uint8_t id[SUSM_ENGINE_ID_MAX_BYTES];
    struct v3_lookup lookup = {.cfg = &dev->group->cfg};
    struct susm_engine engine;
    struct susm_msg msg;
    struct susm_out o;
    struct spdu_encoder e;
    enum susm_report_kind report = SUSM_REPORT_NONE;
    enum fleet_err rc;
    uint64_t now_ms = devview_now_ms(dev->worker->fleet);
    size_t len = 0, max_msg = dev->group->cfg.snmp_max_msg_bytes, pdu_len;
    uint8_t *pdu_bytes;
    uint32_t index = 0;
    int status;

    engine.id = id;
    engine.id_len = mib_engine_id(dev, id);
    engine.boots = 1 + dev->reboots; /* each reboot (control API) counts, as RFC 3414 2.2.2 wants */
    engine.time_s = (uint32_t)((now_ms - devview_boot_ms(dev)) / 1000);
    engine.max_msg_bytes = (int32_t)(max_msg < out_cap ? max_msg : out_cap);
    lookup.engine_id = engine.id;
    lookup.engine_id_len = engine.id_len;

    rc = susm_agent_receive(req, req_len, &engine, find_v3_user, &lookup, &msg, &report);
    if (rc == FLEET_ERR_PROTO || (rc && rc != FLEET_ERR_LIMIT)) {
        st->in_asn_parse_errs++;
        return 0;
    }
    if (report == SUSM_REPORT_NONE && msg.user &&
        ((msg.user->auth != SUSM_AUTH_NONE && !(msg.flags & SUSM_FLAG_AUTH)) ||
         (msg.user->priv != SUSM_PRIV_NONE && !(msg.flags & SUSM_FLAG_PRIV)))) {
        /* Below the user's level: a user with keys is never served by its name alone. The scopedPDU
         * was read, so a request (the Confirmed Class, RFC 3412 7.1 step 3b) gets the Report. */
        report = SUSM_REPORT_UNSUPPORTED_SEC_LEVELS;
        msg.report_wanted = answerable(&msg.pdu, SPDU_V3) || msg.pdu.type == SPDU_INFORM;
    }
    if (report == SUSM_REPORT_UNKNOWN_USER_NAMES || report == SUSM_REPORT_WRONG_DIGESTS) {
        /* A refused login (an unknown engine ID is discovery, a time window resynchronisation: neither). */
        login_refused(dev, peer, msg.user_name, msg.user_name_len);
    }
    if (report != SUSM_REPORT_NONE) {
        uint32_t counter = ++st->usm_stats[report];
        if (!msg.report_wanted || susm_encode_report(&msg, &engine, report, counter, out, out_cap, &len)) {
            return 0;
        }
        *reply = out;
        st->out_pkts++;
        return len;
    }
    if (!answerable(&msg.pdu, SPDU_V3)) {
        st->silent_drops++;
        return 0;
    }
    if (msg.pdu.type == SPDU_SET && !(msg.flags & SUSM_FLAG_AUTH)) {
        /* Reads for every user; writes only for authenticated ones. A user without write access gets
         * noAccess on the first varbind, as net-snmp's snmpd answers a SET outside a user's write view. */
        st->in_denied_v3_sets++;
        forced_error = SPDU_NO_ACCESS;
    }
    if (msg.max_size > 0 && (size_t)msg.max_size < max_msg) {
        max_msg = (size_t)msg.max_size;
    }
    if (max_msg > out_cap) {
        max_msg = out_cap;
    }
    susm_response_out(&msg, &engine, dyn_hash(devview_seed(dev), ++st->out_pkts, now_ms), &o);
    spdu_enc_init(&e, scratch->v3_pdu, sizeof scratch->v3_pdu, 64,
                  susm_bindings_budget(max_msg, &o, msg.pdu.request_id));
    if (rc == FLEET_ERR_LIMIT) {
        status = SPDU_TOO_BIG;
    } else {
        status = answer_pdu(dev, scratch, &e, &msg.pdu, 0, forced_error, &index);
    }
    metrics_count_snmp(dev->worker, msg.pdu.type, status);
    st->out_too_bigs += status == SPDU_TOO_BIG;
    spdu_enc_finish_pdu(&e, SPDU_RESPONSE, msg.pdu.request_id, status, (int32_t)index, &pdu_bytes, &pdu_len);
    if (susm_encode(&o, pdu_bytes, pdu_len, out, out_cap, &len)) {
        st->out_pkts--;
        return 0;
    }
    *reply = out;
    return len;
}

size_t
respond(struct device *dev, struct respond_scratch *scratch, uint8_t *req, size_t req_len,
        const union netaddr_sa *peer, uint8_t *out, size_t out_cap, int forced_error, uint8_t **reply)
{
    struct respond_stats *st = &dev->snmp_stats;
    struct spdu_message m;
    struct spdu_encoder e;
    enum fleet_err rc;
    size_t max_msg = dev->group->cfg.snmp_max_msg_bytes, headroom, len;
    int status;
    uint32_t index = 0;

    st->in_pkts++;
    rc = spdu_message_decode(req, req_len, &m);
    if (rc == FLEET_ERR_NOTFOUND) {
        if (!dev->group->cfg.snmp_v3_user_count) {
            st->in_bad_versions++;
            return 0;
        }
        return respond_v3(dev, scratch, req, req_len, peer, out, out_cap, forced_error, reply);
    }
    if (rc) {
        st->in_asn_parse_errs++;
        return 0;
    }
    if (m.version != SPDU_V1 && m.version != SPDU_V2C) {
        st->in_bad_versions++;
        return 0;
    }
    /* Communities: the write community may also read; the read community may not write. */
    if (!community_is(&m, dev->group->cfg.snmp_community) &&
        !community_is(&m, dev->group->cfg.snmp_write_community)) {
        st->in_bad_community_names++;
        login_refused(dev, peer, NULL, 0);
        return 0;
    }
    if (!answerable(&m.pdu, m.version)) {
        st->silent_drops++;
        return 0;
    }
    if (m.pdu.type == SPDU_SET && !community_is(&m, dev->group->cfg.snmp_write_community)) {
        /* Answered as net-snmp's snmpd answers a SET with its rocommunity: noAccess on the first
         * varbind (v1: noSuchName, RFC 3584 4.4), the varbinds echoed, nothing written. */
        st->in_bad_community_uses++;
        forced_error = SPDU_NO_ACCESS;
    }

    headroom = SPDU_HEADROOM(m.community_len);
    if (out_cap <= headroom) {
        return 0;
    }
    if (max_msg > out_cap - headroom) {
        max_msg = out_cap - headroom;
    }
    spdu_enc_init(&e, out, out_cap, headroom,
                  spdu_bindings_budget(max_msg, m.community_len, m.pdu.request_id));
    status = answer_pdu(dev, scratch, &e, &m.pdu, m.version == SPDU_V1, forced_error, &index);
    if (m.version == SPDU_V1) {
        status = v1_status(status);
    }
    metrics_count_snmp(dev->worker, m.pdu.type, status);
    st->out_too_bigs += status == SPDU_TOO_BIG;
    spdu_enc_finish_message(&e, m.version, m.community, m.community_len, SPDU_RESPONSE, m.pdu.request_id,
                            status, (int32_t)index, reply, &len);
    st->out_pkts++;
    return len;
}

enum fleet_err
respond_v3_user_parse(const char *text, struct respond_v3_user *user, char *err, size_t err_len)
{
    char buf[512], *field[5];
    enum susm_auth auth = SUSM_AUTH_NONE;
    enum susm_priv priv = SUSM_PRIV_NONE;
    int n = 0;

    snprintf(buf, sizeof buf, "%s", text);
    /* strtok would merge empty fields ("mon:none::none:"); split by hand. */
    field[n++] = buf;
    for (char *p = buf; *p && n < 5; p++) {
        if (*p == ':') {
            *p = '\0';
            field[n++] = p + 1;
        }
    }
    memset(user, 0, sizeof *user);
    if (n != 5 || !*field[0] || strlen(field[0]) > sizeof user->name ||
        susm_auth_parse(field[1], strlen(field[1]), &auth) ||
        susm_priv_parse(field[3], strlen(field[3]), &priv)) {
        snprintf(err, err_len,
                 "--snmp-v3-user \"%s\": expected NAME:AUTH:AUTHPASS:PRIV:PRIVPASS with AUTH " SUSM_AUTH_NAMES
                 " and PRIV " SUSM_PRIV_NAMES " (in any case)",
                 text);
        return FLEET_ERR_INVAL;
    }
    user->auth = (int)auth;
    user->priv = (int)priv;
    if (user->priv != SUSM_PRIV_NONE && user->auth == SUSM_AUTH_NONE) {
        snprintf(err, err_len, "--snmp-v3-user \"%s\": privacy needs authentication", text);
        return FLEET_ERR_INVAL;
    }
    /* RFC 3414 A.2 / net-snmp: passwords shorter than 8 characters are refused. */
    if ((user->auth != SUSM_AUTH_NONE && strlen(field[2]) < 8) ||
        (user->priv != SUSM_PRIV_NONE && strlen(field[4]) < 8)) {
        snprintf(err, err_len, "--snmp-v3-user \"%s\": passwords need at least 8 characters", text);
        return FLEET_ERR_INVAL;
    }
    user->name_len = strlen(field[0]);
    memcpy(user->name, field[0], user->name_len);
    if ((user->auth != SUSM_AUTH_NONE &&
         susm_password_to_key((enum susm_auth)user->auth, (const uint8_t *)field[2], strlen(field[2]),
                              user->auth_ku)) ||
        (user->priv != SUSM_PRIV_NONE &&
         susm_password_to_key((enum susm_auth)user->auth, (const uint8_t *)field[4], strlen(field[4]),
                              user->priv_ku))) {
        snprintf(err, err_len, "--snmp-v3-user \"%s\": cannot derive the keys", text);
        return FLEET_ERR_INVAL;
    }
    return FLEET_OK;
}
