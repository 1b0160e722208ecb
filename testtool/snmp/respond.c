/*
 * Request processing. Varbinds are decoded from the request buffer in
 * place and the response is encoded forward into the worker's buffer, each
 * varbind checked against the size budget: GETBULK stops at the budget
 * (truncated, as RFC 3416 4.2.3 allows), a GET or GETNEXT that cannot fit
 * answers tooBig.
 */
#include "respond.h"

#include <string.h>

#include "fleet.h"
#include "mib.h"
#include "mib_set.h"
#include "spdu.h"

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
        struct ber_oid found;
        const struct ber_oid *name = &b.name;
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
        struct ber_oid found;
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
        scratch->repeaters[repeaters++] = b.name;
    }
    /* Repeaters, round by round, until the budget, the bindings limit or the end of every column. */
    for (uint32_t round = 0; round < max_reps && repeaters; round++) {
        uint32_t ended = 0;
        for (uint32_t r = 0; r < repeaters; r++) {
            struct spdu_value v;
            struct ber_oid *pos = &scratch->repeaters[r];
            mib_next(rq, pos, pos, &v);
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

size_t
respond(struct device *dev, struct respond_scratch *scratch, const uint8_t *req, size_t req_len, uint8_t *out,
        size_t out_cap, int forced_error, uint8_t **reply)
{
    struct fleet *fleet = dev->worker->fleet;
    struct respond_stats *st = &dev->snmp_stats;
    struct spdu_message m;
    struct spdu_encoder e;
    struct mib_req rq;
    enum fleet_err rc;
    size_t max_msg = fleet->cfg.snmp_max_msg_bytes, headroom, len;
    int status = SPDU_NO_ERROR;
    uint32_t index = 0;

    st->in_pkts++;
    rc = spdu_message_decode(req, req_len, &m);
    if (rc == FLEET_ERR_NOTFOUND) {
        st->in_bad_versions++; /* SNMPv3 goes elsewhere before this */
        return 0;
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
    if (!community_is(&m, fleet->cfg.snmp_community) && !community_is(&m, fleet->cfg.snmp_write_community)) {
        st->in_bad_community_names++;
        return 0;
    }
    if (m.pdu.type == SPDU_SET && !community_is(&m, fleet->cfg.snmp_write_community)) {
        st->in_bad_community_uses++;
        return 0;
    }
    if (m.pdu.type != SPDU_GET && m.pdu.type != SPDU_GETNEXT && m.pdu.type != SPDU_SET &&
        !(m.pdu.type == SPDU_GETBULK && m.version == SPDU_V2C)) {
        st->silent_drops++;
        return 0;
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
    if (mib_req_init(&rq, dev, devview_now_ms(fleet), m.version == SPDU_V1)) {
        status = SPDU_GEN_ERR;
        echo_error(&e, &m.pdu, status, 0);
        goto finish;
    }
    if (forced_error) {
        status = forced_error;
        index = m.pdu.binding_count ? 1 : 0;
        echo_error(&e, &m.pdu, status, index);
        goto finish;
    }

    switch (m.pdu.type) {
    case SPDU_GET:
    case SPDU_GETNEXT:
        m.pdu.type == SPDU_GET ? st->in_get_requests++ : st->in_get_nexts++;
        status = get_or_next(&rq, &e, &m.pdu, m.pdu.type == SPDU_GETNEXT, &index);
        if (status == SPDU_TOO_BIG) {
            /* RFC 3416 4.2.1: an empty varbind list; SNMPv1 (RFC 1157) echoes the request's. */
            spdu_enc_reset(&e);
            if (rq.v1) {
                echo_error(&e, &m.pdu, status, 0);
            }
        } else if (status) {
            echo_error(&e, &m.pdu, status, index);
        }
        break;
    case SPDU_GETBULK:
        st->in_get_bulks++;
        getbulk(&rq, scratch, &e, &m.pdu);
        break;
    case SPDU_SET:
        st->in_set_requests++;
        status = mib_set(&rq, &m.pdu, &index);
        echo_error(&e, &m.pdu, status, index);
        break;
    }

finish:
    if (rq.v1 || m.version == SPDU_V1) {
        status = v1_status(status);
    }
    st->out_too_bigs += status == SPDU_TOO_BIG;
    spdu_enc_finish_message(&e, m.version, m.community, m.community_len, SPDU_RESPONSE, m.pdu.request_id,
                            status, (int32_t)index, reply, &len);
    st->out_pkts++;
    return len;
}
