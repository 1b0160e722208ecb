/*
 * Fuzz harness of what fleetsim-stress snmp does with each datagram an
 * agent sends back (stress/snmp_walk.h, as stress/snmp_run.c drives it):
 * a v2c Response advances the walk of a collection; a v3 message is peeked
 * for its msgID, verified and decrypted, and classified, which moves the
 * engine's clock, discovers it or ends the collection.
 *
 * Input: byte 0 bit 7 chooses the mode; the rest is a list of records, one
 * datagram each.
 *
 * Walk mode: byte 0 bits 0-2 give max_vars - 1, bits 3-4 the plan. Each
 * record starts with a byte r. With bit 7 set it is a raw datagram: two
 * length bytes, then the bytes. Otherwise r & 15 + 1 varbinds of three bytes
 * follow (column, how the name relates to the column's cursor, value type),
 * encoded into a v2c Response as an agent would (so that deep walks are
 * reached). Each Response goes through walk_response() like use_response();
 * a finished or failed walk starts again.
 *
 * v3 mode: records are built by an agent side from the bytes (engine ID,
 * boots, time, security level, key, PDU type, report counter), or are raw
 * (r bit 7, as above), and the client side handles them like
 * on_datagram_v3() with one user (SHA-1, AES) and one engine, starting with
 * discovery.
 *
 * Checks: the walk window stays within max_vars and in plan order, its
 * cursors inside their roots, counters consistent; a verdict's outputs
 * are those the header promises, a discovered engine ID has 5..32 bytes,
 * the clock never runs backwards.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "snmp_walk.h"

/* Longest input looked at. */
#define FZ_MAX_INPUT_BYTES 65536
/* Encoding buffer for one datagram (the client's datagram limit is of this order). */
#define FZ_DATAGRAM_BYTES 65536
/* Varbinds in one built Response at most. */
#define FZ_MAX_BUILT_BINDINGS 16
/* Most roots in a plan. */
#define FZ_MAX_ROOTS 6
/* The client's msgMaxSize. */
#define FZ_MAX_SIZE 65507

/* The client's user, its Ku derived once (the slow step); read only afterwards. */
static struct walk_v3_user fz_user;
/* The agent's Ku for the same passwords, and for a wrong password. */
static uint8_t fz_auth_ku[SUSM_KEY_MAX_BYTES], fz_priv_ku[SUSM_KEY_MAX_BYTES],
    fz_wrong_ku[SUSM_KEY_MAX_BYTES];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static const char name[] = "fuzzuser", auth_pw[] = "maplesyrup", priv_pw[] = "privacy-pass";

    (void)argc;
    (void)argv;
    fz_require(
        walk_v3_user_init(&fz_user, name, sizeof name - 1, SUSM_AUTH_SHA1, auth_pw, sizeof auth_pw - 1,
                          SUSM_PRIV_AES128, priv_pw, sizeof priv_pw - 1) == FLEET_OK &&
            susm_password_to_key(SUSM_AUTH_SHA1, (const uint8_t *)auth_pw, sizeof auth_pw - 1, fz_auth_ku) ==
                FLEET_OK &&
            susm_password_to_key(SUSM_AUTH_SHA1, (const uint8_t *)priv_pw, sizeof priv_pw - 1, fz_priv_ku) ==
                FLEET_OK &&
            susm_password_to_key(SUSM_AUTH_SHA1, (const uint8_t *)"wrongpass", 9, fz_wrong_ku) == FLEET_OK,
        "cannot derive keys");
    return 0;
}

/* A cursor over the records. */
struct fz_in {
    const uint8_t *p;   /* next byte */
    const uint8_t *end; /* past the last */
};

static int
fz_byte(struct fz_in *in, uint8_t *b)
{
    if (in->p >= in->end) {
        return -1;
    }
    *b = *in->p++;
    return 0;
}

/* A raw datagram: two length bytes, then that many (fewer at the end of the input). */
static int
fz_raw(struct fz_in *in, const uint8_t **buf, size_t *len)
{
    uint8_t hi, lo;
    size_t n;

    if (fz_byte(in, &hi) || fz_byte(in, &lo)) {
        return -1;
    }
    n = (size_t)hi << 8 | lo;
    if (n > (size_t)(in->end - in->p)) {
        n = (size_t)(in->end - in->p);
    }
    *buf = in->p;
    *len = n;
    in->p += n;
    return 0;
}

static void
fz_oid(struct oid *oid, const char *text)
{
    fz_require(oid_parse(text, oid) == FLEET_OK, "bad plan OID");
}

/* The plans: table columns, a whole table, scalars, a subtree. */
static uint32_t
fz_plan_oids(unsigned which, struct oid *oids)
{
    static const char *const plans[4][FZ_MAX_ROOTS] = {
        {"1.3.6.1.2.1.2.2.1.10", "1.3.6.1.2.1.2.2.1.16", "1.3.6.1.2.1.31.1.1.1.6", "1.3.6.1.2.1.31.1.1.1.10"},
        {"1.3.6.1.2.1.1.3.0", "1.3.6.1.2.1.1.5.0", "1.3.6.1.2.1.2.1.0"},
        {"1.3.6.1.2.1.2.2", "1.3.6.1.2.1.1"},
        {"1.3.6.1.2.1.1.1.0", "1.3.6.1.2.1.2.2.1.2", "1.3.6.1.2.1.1", "1.3.6.1.2.1.1.3.0", "1.3.6.1.4.1.8072",
         "1.3"},
    };
    uint32_t n = 0;

    while (n < FZ_MAX_ROOTS && plans[which][n]) {
        fz_oid(&oids[n], plans[which][n]);
        n++;
    }
    return n;
}

/* The window's invariants after a response was taken in. */
static void
fz_check_walk(const struct walk *w)
{
    const struct walk_plan *plan = w->plan;

    fz_require(w->active <= plan->max_vars, "window larger than max_vars");
    fz_require(w->next_root <= plan->count, "next root past the plan");
    fz_require(w->values <= w->varbinds && w->samples <= w->values, "counters inconsistent");
    for (uint32_t i = 0; i < w->active; i++) {
        const struct walk_column *c = &w->cols[i];

        fz_require(c->root < w->next_root, "column of a root not taken yet");
        fz_require(i == 0 || w->cols[i - 1].root < c->root, "window out of plan order");
        fz_require(walk_in_subtree(&plan->roots[c->root], &c->cursor) ||
                       oid_cmp(&c->cursor, &plan->starts[c->root]) == 0,
                   "cursor outside its root");
    }
    fz_require(w->active > 0 || w->next_root == plan->count, "walk ended with roots left");
}

/* Build a v2c Response from varbind descriptions, answering the walk's current request. */
static int
fz_build_response(struct fz_in *in, uint8_t r, const struct walk *w, uint8_t *buf, const uint8_t **msg,
                  size_t *msg_len)
{
    static const uint8_t community[] = "public";
    struct spdu_encoder e;
    uint32_t count = (uint32_t)(r & 15) + 1;
    uint8_t *out;

    spdu_enc_init(&e, buf, FZ_DATAGRAM_BYTES, SPDU_HEADROOM(sizeof community - 1),
                  spdu_bindings_budget(FZ_MAX_SIZE, sizeof community - 1, 1));
    for (uint32_t k = 0; k < count && k < FZ_MAX_BUILT_BINDINGS; k++) {
        uint8_t col_b, how, type;
        struct oid name;
        struct spdu_value value;
        const struct walk_column *c;

        if (fz_byte(in, &col_b) || fz_byte(in, &how) || fz_byte(in, &type)) {
            return -1;
        }
        c = &w->cols[col_b % (w->active ? w->active : 1)];
        name = c->cursor;
        switch (how & 7) {
        case 0: /* the next row: one arc more */
        case 1:
            if (name.len < OID_MAX_SUBIDS) {
                name.sub[name.len++] = how >> 3;
            }
            break;
        case 2: /* the next instance: last arc up */
            name.sub[name.len - 1] += 1 + (how >> 3);
            break;
        case 3: /* the same OID again */
            break;
        case 4: /* back one */
            name.sub[name.len - 1] -= name.sub[name.len - 1] ? 1 : 0;
            break;
        case 5: /* past the root: the root's last arc up */
            name = w->plan->roots[c->root];
            name.sub[name.len - 1]++;
            break;
        case 6: /* shorter than the root */
            name.len = 2;
            break;
        default: /* the root itself */
            name = w->plan->roots[c->root];
            break;
        }
        memset(&value, 0, sizeof value);
        switch (type % 7) {
        case 0:
            value.tag = BER_INTEGER;
            value.v.i = (int64_t)type - 100;
            break;
        case 1:
            value.tag = BER_COUNTER64;
            value.v.u = (uint64_t)type << 40;
            break;
        case 2:
            value.tag = BER_OCTET_STRING;
            value.v.bytes.ptr = community;
            value.v.bytes.len = type % 5;
            break;
        case 3:
            value.tag = BER_END_OF_MIB_VIEW;
            break;
        case 4:
            value.tag = BER_NO_SUCH_INSTANCE;
            break;
        case 5:
            value.tag = BER_TIMETICKS;
            value.v.u = type;
            break;
        default:
            value.tag = BER_NULL;
            break;
        }
        if (spdu_enc_binding(&e, &name, &value)) {
            break;
        }
    }
    spdu_enc_finish_message(&e, SPDU_V2C, community, sizeof community - 1, SPDU_RESPONSE, 1, 0, 0, &out,
                            msg_len);
    *msg = out;
    return 0;
}

static void
fz_walk_mode(uint8_t control, struct fz_in *in)
{
    struct oid oids[FZ_MAX_ROOTS];
    struct walk_column *cols;
    struct walk_plan plan;
    struct walk w;
    uint8_t *buf = malloc(FZ_DATAGRAM_BYTES);
    uint32_t count = fz_plan_oids((control >> 3) & 3, oids);
    uint8_t r;

    fz_require(buf != NULL, "out of memory");
    fz_require(walk_plan_init(&plan, oids, count, (uint32_t)(control & 7) + 1) == FLEET_OK, "plan refused");
    cols = calloc(plan.max_vars, sizeof *cols);
    fz_require(cols != NULL, "out of memory");
    walk_start(&w, &plan, cols);
    while (!fz_byte(in, &r)) {
        const struct oid *names[8];
        const uint8_t *msg;
        size_t msg_len;
        struct spdu_message m;
        const char *why = NULL;
        enum fleet_err rc;
        uint64_t values = w.values;

        fz_require(walk_request(&w, names) == w.active && w.active > 0, "request of an active walk is empty");
        if (r & 0x80 ? fz_raw(in, &msg, &msg_len) : fz_build_response(in, r, &w, buf, &msg, &msg_len)) {
            break;
        }
        /* on_datagram(): only a well-formed v2c Response without error-status reaches the walk. */
        if (spdu_message_decode(msg, msg_len, &m) != FLEET_OK || m.version != SPDU_V2C ||
            m.pdu.type != SPDU_RESPONSE || m.pdu.error_status != SPDU_NO_ERROR) {
            continue;
        }
        rc = walk_response(&w, &m.pdu, &why);
        if (rc != FLEET_OK) {
            fz_require(rc == FLEET_ERR_PROTO && why != NULL, "failure without a reason");
            walk_start(&w, &plan, cols);
            continue;
        }
        fz_require(why == NULL, "reason on success");
        fz_require(w.values >= values, "values went down");
        fz_check_walk(&w);
        if (walk_finished(&w)) {
            walk_start(&w, &plan, cols);
        }
    }
    free(cols);
    walk_plan_close(&plan);
    free(buf);
}

/* Build what an agent would send, from the record's bytes. */
static int
fz_build_v3(struct fz_in *in, const struct walk_v3_engine *e, int32_t msg_id, int32_t request_id,
            uint8_t *buf, size_t *len)
{
    static const uint8_t engine_a[] = {0x80, 0x00, 0x1f, 0x88, 0x80, 0x66, 0x6c, 0x65, 0x65, 0x74, 0x01};
    static const uint8_t engine_b[] = {0x80, 0x00, 0x1f, 0x88, 0x04, 'o', 't', 'h', 'e', 'r'};
    uint8_t pdu_buf[SPDU_HEADROOM(0) + 128], *pdu;
    uint8_t eng, boots_b, time_b, level, kind_b;
    struct susm_user agent_user;
    struct spdu_encoder enc;
    struct spdu_value value;
    struct oid name;
    struct susm_out o;
    size_t pdu_len;
    uint8_t type;

    if (fz_byte(in, &eng) || fz_byte(in, &boots_b) || fz_byte(in, &time_b) || fz_byte(in, &level) ||
        fz_byte(in, &kind_b)) {
        return -1;
    }
    memset(&o, 0, sizeof o);
    switch (eng & 3) {
    case 0:
        o.engine_id = engine_a;
        o.engine_id_len = sizeof engine_a;
        break;
    case 1:
        o.engine_id = engine_b;
        o.engine_id_len = sizeof engine_b;
        break;
    case 2:
        o.engine_id = engine_a;
        o.engine_id_len = 3; /* too short for an engine ID */
        break;
    default:
        o.engine_id = e->peer.engine_id; /* what the client believes */
        o.engine_id_len = e->peer.engine_id_len;
        break;
    }
    /* Boots and time near what the client knows, or anywhere. */
    o.engine_boots = (eng & 4) ? boots_b : e->peer.boots + (boots_b & 1);
    o.engine_time = (eng & 8) ? (uint32_t)time_b << 20 : e->peer.latest_time_s + (uint32_t)time_b * 2 - 128;
    if (o.engine_time > SUSM_MAX_ENGINE_BOOTS) {
        o.engine_time = 0;
    }
    if (o.engine_boots > SUSM_MAX_ENGINE_BOOTS) {
        o.engine_boots = SUSM_MAX_ENGINE_BOOTS;
    }
    o.msg_id = (eng & 16) ? msg_id + 1 : msg_id;
    o.max_size = FZ_MAX_SIZE;
    o.flags = level & (SUSM_FLAG_AUTH | SUSM_FLAG_PRIV);
    if ((o.flags & SUSM_FLAG_PRIV) && !(o.flags & SUSM_FLAG_AUTH)) {
        o.flags = 0;
    }
    o.user_name = fz_user.name;
    o.user_name_len = (level & 4) ? 3 : fz_user.name_len;
    o.salt = level;
    o.context_engine_id = o.engine_id;
    o.context_engine_id_len = o.engine_id_len;
    memset(&agent_user, 0, sizeof agent_user);
    if (o.flags & SUSM_FLAG_AUTH) {
        agent_user.auth = SUSM_AUTH_SHA1;
        agent_user.priv = SUSM_PRIV_AES128;
        fz_require(susm_localize_key(SUSM_AUTH_SHA1, (level & 8) ? fz_wrong_ku : fz_auth_ku, o.engine_id,
                                     o.engine_id_len, agent_user.auth_key) == FLEET_OK &&
                       susm_localize_key(SUSM_AUTH_SHA1, (level & 16) ? fz_wrong_ku : fz_priv_ku, o.engine_id,
                                         o.engine_id_len, agent_user.priv_key) == FLEET_OK,
                   "cannot localize");
        o.user = &agent_user;
    }

    /* The PDU: a Report naming a usmStats counter (or another OID), a Response, or a GET. */
    type = (level >> 5) == 0   ? SPDU_RESPONSE
           : (level >> 5) < 4  ? SPDU_REPORT
           : (level >> 5) == 4 ? SPDU_GET
                               : SPDU_RESPONSE;
    spdu_enc_init(&enc, pdu_buf, sizeof pdu_buf, SPDU_HEADROOM(0), sizeof pdu_buf - SPDU_HEADROOM(0));
    fz_oid(&name, type == SPDU_REPORT ? "1.3.6.1.6.3.15.1.1.1.0" : "1.3.6.1.2.1.1.3.0");
    if (type == SPDU_REPORT) {
        name.sub[9] = kind_b & 7;
        name.sub[10] = (kind_b & 8) ? 1 : 0;
    }
    value.tag = BER_COUNTER32;
    value.v.u = kind_b;
    if (!(kind_b & 16)) {
        fz_require(spdu_enc_binding(&enc, &name, &value) == FLEET_OK, "cannot encode a varbind");
    }
    spdu_enc_finish_pdu(&enc, type, (kind_b & 32) ? request_id + 1 : request_id, 0, 0, &pdu, &pdu_len);
    return susm_encode(&o, pdu, pdu_len, buf, FZ_DATAGRAM_BYTES, len) == FLEET_OK ? 0 : -1;
}

static void
fz_v3_mode(struct fz_in *in)
{
    struct walk_v3_engine engine;
    struct susm_user keys;
    uint8_t *buf = malloc(FZ_DATAGRAM_BYTES);
    uint64_t now_us = 1000000;
    int discovering = 1;
    int32_t msg_id = 1;
    uint8_t r;

    fz_require(buf != NULL, "out of memory");
    memset(&engine, 0, sizeof engine);
    memset(&keys, 0, sizeof keys);
    while (!fz_byte(in, &r)) {
        enum susm_report_kind failure = SUSM_REPORT_NONE, kind = SUSM_REPORT_NONE;
        enum walk_v3_verdict verdict;
        uint32_t latest = engine.peer.latest_time_s, boots = engine.peer.boots;
        const uint8_t *raw;
        const char *why = NULL;
        struct susm_msg msg;
        struct susm_out out;
        int32_t peeked = -1;
        size_t len = 0;

        now_us += (uint64_t)(r & 0x3f) * 500000;
        /* The request this datagram answers: its susm_out must be encodable with the engine as known. */
        if (!discovering) {
            walk_v3_request_out(&engine, &fz_user, &keys, msg_id, FZ_MAX_SIZE, (uint64_t)msg_id, now_us,
                                &out);
            fz_require(out.engine_time <= SUSM_MAX_ENGINE_BOOTS, "request time past the maximum");
            fz_require(susm_bindings_budget(FZ_MAX_SIZE, &out, msg_id) > 0, "request without room");
        }
        if (r & 0x80) {
            if (fz_raw(in, &raw, &len)) {
                break;
            }
            memcpy(buf, raw, len);
        } else if (fz_build_v3(in, &engine, msg_id, msg_id, buf, &len)) {
            break;
        }
        /* on_datagram_v3(): match by msgID, verify, classify. */
        if (walk_v3_peek_msg_id(buf, len, &peeked) != FLEET_OK) {
            continue;
        }
        fz_require(peeked >= 0, "negative msgID peeked");
        if (peeked != msg_id) {
            continue;
        }
        if (susm_client_receive(buf, len, discovering ? NULL : &keys, &msg, &failure) != FLEET_OK) {
            continue;
        }
        fz_require(msg.msg_id == peeked, "peeked msgID differs from the decoded one");
        verdict = walk_v3_classify(&engine, discovering, discovering ? SUSM_FLAG_REPORTABLE : fz_user.flags,
                                   &msg, failure, now_us, &kind, &why);
        fz_require(engine.peer.engine_id_len <= SUSM_ENGINE_ID_MAX_BYTES, "engine ID too long");
        switch (verdict) {
        case WALK_V3_RESPONSE:
            fz_require(!discovering && kind == SUSM_REPORT_NONE && !why, "Response with a kind or reason");
            fz_require(msg.pdu.type == SPDU_RESPONSE && msg.authenticated && (msg.flags & SUSM_FLAG_PRIV),
                       "Response below the level asked for");
            fz_require(engine.peer.boots > boots ||
                           (engine.peer.boots == boots && engine.peer.latest_time_s >= latest),
                       "engine clock went backwards");
            msg_id++;
            break;
        case WALK_V3_DISCOVERED:
            fz_require(discovering && !why && kind == SUSM_REPORT_NONE, "discovery with a kind or reason");
            fz_require(engine.peer.engine_id_len >= 5, "discovered engine ID too short");
            fz_require(walk_v3_localize(&fz_user, &engine, &keys) == FLEET_OK,
                       "cannot localize for the engine");
            discovering = 0;
            msg_id++;
            break;
        case WALK_V3_RESYNC:
            fz_require(!discovering && kind == SUSM_REPORT_NOT_IN_TIME_WINDOWS && msg.authenticated,
                       "resync without an authentic notInTimeWindow");
            break;
        case WALK_V3_REPORT:
            fz_require(kind > SUSM_REPORT_NONE && kind <= SUSM_REPORT_DECRYPTION_ERRORS && !why,
                       "Report without its counter");
            fz_require(strcmp(walk_v3_report_name(kind), "usmStats") != 0, "Report counter without a name");
            if (kind == SUSM_REPORT_UNKNOWN_ENGINE_IDS) {
                fz_require(engine.peer.engine_id_len == 0, "engine kept after unknownEngineID");
                discovering = 1;
            }
            msg_id++;
            break;
        case WALK_V3_UNUSABLE:
        case WALK_V3_UNVERIFIED:
            fz_require(why != NULL, "verdict without a reason");
            fz_require(verdict == WALK_V3_UNUSABLE || kind == SUSM_REPORT_NONE, "unverified with a kind");
            if (verdict == WALK_V3_UNUSABLE) {
                msg_id++;
            }
            break;
        default:
            fz_require(0, "verdict out of range");
        }
        if (msg_id > INT32_MAX / 2) {
            msg_id = 1;
        }
    }
    free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_in in;

    if (size < 1 || size > FZ_MAX_INPUT_BYTES) {
        return 0;
    }
    in.p = data + 1;
    in.end = data + size;
    if (data[0] & 0x80) {
        fz_v3_mode(&in);
    } else {
        fz_walk_mode(data[0], &in);
    }
    return 0;
}
