/*
 * The walk of one SNMP collection, without sockets or clocks: which OIDs
 * the next GETBULK asks for, what a response adds (values and numeric
 * samples inside each walked subtree), when a column ends (an OID outside
 * its subtree, or endOfMibView), and the fit of collection time against
 * requests x response time that the report prints. fleetsim-stress snmp
 * drives it (snmp_run.c); unit tests drive it with hand-made PDUs.
 *
 * A collection walks "roots": table columns, whole tables or subtrees, or
 * scalars. Up to max_vars roots are walked together, one varbind each per
 * GETBULK; the window of roots being walked keeps only their cursors, so
 * an in-flight collection costs max_vars cursors however many roots it has.
 *
 * With SNMPv3 the same walk travels inside USM messages (wire/susm.h). The
 * second half of this file is the client's security state, also without
 * sockets or clocks (the caller passes the time): the user's keys, what is
 * known of each device's engine, and what a verified message means for the
 * collection (use it, learn the engine, resynchronize, or give up).
 */
#ifndef STRESS_SNMP_WALK_H
#define STRESS_SNMP_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "err.h"
#include "spdu.h"
#include "susm.h"

/* What every collection walks; read-only once built, shared by every collection. */
struct walk_plan {
    struct oid *roots;  /* subtrees to walk, in order; a value belongs to root r when r is its prefix */
    struct oid *starts; /* OID the walk of each root starts after: the root, or for a root ending
                               in .0 (a scalar) its parent, so that the scalar itself is returned */
    uint32_t count;     /* entries in roots and starts */
    uint32_t max_vars;  /* roots walked together in one GETBULK, >= 1 */
};

/* One root in the window of a walk. */
struct walk_column {
    uint32_t root;     /* index in the plan's roots */
    struct oid cursor; /* last OID received inside the root's subtree, or the root's start OID */
};

/* The state of one collection's walk; valid between walk_start() and walk_finished(). */
struct walk {
    const struct walk_plan *plan; /* what to walk */
    struct walk_column *cols;     /* window, plan->max_vars entries lent by the caller; first active used */
    uint32_t active;              /* roots being walked, in plan order; 0 when the walk is finished */
    uint32_t next_root;           /* first root not yet taken into the window */
    uint64_t values;              /* varbinds received inside a walked subtree */
    uint64_t varbinds;            /* varbinds received, those past a column's end included */
    uint64_t samples;             /* those with a numeric value (INTEGER, Counter32, Gauge32, TimeTicks,
                                     Counter64) */
};

/**
 * @brief Build a plan from @p count OIDs (copied).
 * @return FLEET_OK, FLEET_ERR_INVAL when @p count or @p max_vars is 0 or an OID has fewer than 2
 * sub-identifiers, FLEET_ERR_NOMEM.
 */
enum fleet_err walk_plan_init(struct walk_plan *plan, const struct oid *oids, uint32_t count,
                              uint32_t max_vars);

/** @brief Free what walk_plan_init() allocated; a zeroed plan is fine. */
void walk_plan_close(struct walk_plan *plan);

/**
 * @brief Start a walk of every root of @p plan.
 * @param[in] cols Window storage of plan->max_vars entries, owned by the caller, used until the walk ends.
 */
void walk_start(struct walk *w, const struct walk_plan *plan, struct walk_column *cols);

/** @return 1 when every root has been walked to its end. */
int walk_finished(const struct walk *w);

/**
 * @brief The OIDs the next GETBULK asks for, one per active root, in window order.
 * @param[out] names w->plan->max_vars entries; each points into the walk, valid until walk_response().
 * @return How many (w->active).
 */
uint32_t walk_request(const struct walk *w, const struct oid **names);

/**
 * @brief Take in the response to the request walk_request() described. Varbind k answers window
 * column k mod n (n = the request's varbind count), repetition k / n. A column ends at the first
 * OID outside its root's subtree, at endOfMibView (or another exception); its later varbinds are
 * ignored. Ended columns leave the window and the next roots take their places.
 * @param[out] why On failure, a static description.
 * @return FLEET_OK; FLEET_ERR_PROTO for malformed varbinds, an OID inside the subtree that does not
 * increase (the agent would loop), or a response that neither advances nor ends any column.
 */
enum fleet_err walk_response(struct walk *w, const struct spdu_pdu *pdu, const char **why);

/** @return 1 when @p tag is one of the numeric types a sample is counted for. */
int walk_is_numeric(uint8_t tag);

/** @return 1 when @p root is a prefix of (or equal to) @p oid. */
int walk_in_subtree(const struct oid *root, const struct oid *oid);

/*
 * How well T = P x R + c describes collection times: T the collection time, P its requests, R one
 * response time for every request (the mean over all requests), c a constant fitted by least
 * squares with the slope held at 1. For comparison an ordinary least-squares line T = a (P x R) + b
 * is fitted too, when P x R varies at all.
 */
struct walk_fit {
    size_t n;              /* collections fitted */
    double r_us;           /* R, microseconds */
    double c_us;           /* c, microseconds: mean of T - P x R */
    double r_squared;      /* 1 - SS_res / SS_tot of T = P x R + c (0 when every P is equal: the model
                              then explains only the mean); valid when r_squared_valid */
    int r_squared_valid;   /* 0 when n < 2 or every T is equal */
    double mean_rel_error; /* mean of |T - (P x R + c)| / T over collections with T > 0 */
    double slope;          /* a of the free line; valid when line_valid */
    double intercept_us;   /* b of the free line, microseconds; valid when line_valid */
    double line_r_squared; /* R^2 of the free line; valid when line_valid and r_squared_valid */
    int line_valid;        /* 0 when n < 2 or every P x R is equal */
};

/**
 * @brief Fit T = P x R + c.
 * @param[in] t_us Collection times, microseconds.
 * @param[in] requests Requests of each collection (P).
 * @param[in] n Entries in both.
 * @param[in] r_us R, microseconds.
 * @param[out] fit The result; all zero when @p n is 0.
 */
void walk_fit_compute(const double *t_us, const uint32_t *requests, size_t n, double r_us,
                      struct walk_fit *fit);

/*
 * SNMPv3. RFC 3414 A.2 turns a password into a key (Ku) by hashing 1 MiB, a few milliseconds: that is
 * done once per run. Each engine then needs the key localized for its engine ID, one hash: that is done
 * when a collection of the device starts, into the collection's slot, so a device keeps only its engine
 * (64 bytes) and not its keys (176 more); a collection costs two more hashes, against the HMAC of every
 * message it sends and receives.
 */

/* The user every request is sent as, keys not yet localized; read-only once made. */
struct walk_v3_user {
    uint8_t name[SUSM_USER_NAME_MAX_BYTES]; /* usmUserName, not NUL-terminated */
    size_t name_len;                        /* bytes in name, 1..32 */
    enum susm_auth auth;                    /* authentication protocol */
    enum susm_priv priv;                    /* privacy protocol; NONE unless auth */
    uint8_t auth_ku[SUSM_KEY_MAX_BYTES];    /* Ku of the auth password, susm_auth_key_bytes(auth) used */
    uint8_t priv_ku[SUSM_KEY_MAX_BYTES];    /* Ku of the priv password (with the auth hash); priv only */
    uint8_t flags;                          /* msgFlags of every request: the level, and reportable */
};

/* What the poller knows of one device's engine. */
struct walk_v3_engine {
    struct susm_peer peer; /* engine ID, boots and time; peer.engine_id_len 0 until discovered */
    uint64_t synced_us;    /* local monotonic clock (us) when peer.latest_time_s was learned */
};

/* What a received v3 message means for the collection waiting for it. */
enum walk_v3_verdict {
    WALK_V3_RESPONSE,   /* a Response at the level asked for, in the time window: msg->pdu is for the walk */
    WALK_V3_DISCOVERED, /* the discovery Report: the engine is known, its keys can be localized */
    WALK_V3_RESYNC,     /* an authentic notInTimeWindow Report: the engine's clock is updated, send again */
    WALK_V3_REPORT,     /* a usmStats Report that ends the collection (its kind in *kind) */
    WALK_V3_UNUSABLE,   /* a well-formed message the walk cannot use (*why says why): ends the collection */
    WALK_V3_UNVERIFIED, /* it fails verification (digest, decryption, level, time window): drop it */
};

/**
 * @brief Derive the user's keys (the slow step, once per run) and the level of its requests.
 * @param[in] auth_password Ignored with SUSM_AUTH_NONE.
 * @param[in] priv_password Ignored with SUSM_PRIV_NONE.
 * @return FLEET_OK; FLEET_ERR_INVAL for a name of 0 or more than 32 bytes, privacy without
 * authentication or an empty password; FLEET_ERR_SYS if libcrypto fails.
 */
enum fleet_err walk_v3_user_init(struct walk_v3_user *u, const char *name, size_t name_len,
                                 enum susm_auth auth, const char *auth_password, size_t auth_password_len,
                                 enum susm_priv priv, const char *priv_password, size_t priv_password_len);

/** @return The level of @p flags: "authPriv", "authNoPriv" or "noAuthNoPriv". */
const char *walk_v3_level_name(uint8_t flags);

/** @return The usmStats counter's name ("usmStatsWrongDigests"), "usmStats" for SUSM_REPORT_NONE. */
const char *walk_v3_report_name(enum susm_report_kind kind);

/**
 * @brief The user's keys localized for a discovered engine (two hashes at most).
 * @param[out] out The keys for susm_request_out() and susm_client_receive().
 * @return FLEET_OK; FLEET_ERR_INVAL before discovery; FLEET_ERR_SYS if libcrypto fails.
 */
enum fleet_err walk_v3_localize(const struct walk_v3_user *u, const struct walk_v3_engine *e,
                                struct susm_user *out);

/**
 * @brief The susm_out of a request to a discovered engine: its clock advanced by the local one since it
 * was learned (RFC 3414 section 2.2.2), at the user's level.
 * @param[in,out] e The engine; e->peer.time_s is set to the advanced time.
 * @param[in] user Keys from walk_v3_localize(); must outlive @p out.
 * @param[in] salt AES salt; unique per message for the run.
 * @param[in] now_us Local monotonic clock, microseconds, not before e->synced_us.
 */
void walk_v3_request_out(struct walk_v3_engine *e, const struct walk_v3_user *u, const struct susm_user *user,
                         int32_t msg_id, int32_t max_size, uint64_t salt, uint64_t now_us,
                         struct susm_out *out);

/**
 * @brief The msgID of a v3 message, read without decoding the rest, to find the request it answers
 * before its keys are known (a Report to an encrypted request has request-id 0).
 * @return FLEET_OK; FLEET_ERR_PROTO when it does not start like a v3 message.
 */
enum fleet_err walk_v3_peek_msg_id(const uint8_t *buf, size_t len, int32_t *msg_id);

/**
 * @brief What a message from susm_client_receive() (returning FLEET_OK) means for the request it answers.
 * @param[in,out] e The device's engine: learned on discovery, its clock moved by authentic messages.
 * @param[in] discovering 1 when the request was the discovery request.
 * @param[in] flags_sent msgFlags of the request.
 * @param[in] failure What susm_client_receive() found wrong, or SUSM_REPORT_NONE.
 * @param[in] now_us Local monotonic clock, microseconds.
 * @param[out] kind The Report's usmStats counter with WALK_V3_REPORT and WALK_V3_RESYNC, else NONE.
 * @param[out] why A static description with WALK_V3_UNUSABLE and WALK_V3_UNVERIFIED, else NULL.
 */
enum walk_v3_verdict walk_v3_classify(struct walk_v3_engine *e, int discovering, uint8_t flags_sent,
                                      const struct susm_msg *msg, enum susm_report_kind failure,
                                      uint64_t now_us, enum susm_report_kind *kind, const char **why);

#endif
