/*
 * SNMPv2c notifications from devices to collectors (RFC 3416 section 4.2.6
 * SNMPv2-Trap-PDU and 4.2.7 InformRequest-PDU, in RFC 1901 messages). One
 * sender per worker loop owns one UDP socket; each notification leaves from
 * the device's own address (IP_PKTINFO), because collectors identify a
 * device by the source address of what it sends, or from the device's own
 * agent socket when the caller gives one (devices sharing an address then
 * differ by source port), and may carry the device's identity as two more
 * objects (snmpTrapAddress.0, sysName.0). A Response to an inform sent
 * from an agent socket arrives there; the agent passes it on with
 * trap_sender_take_response(). Notifications queued in
 * one loop iteration go out together with sendmmsg at the start of the next
 * (a timer armed for "now"), or when the batch is full. Informs wait in a
 * bounded table for their Response, each with an embedded loop timer that
 * retransmits the same message (same request-id) after a fixed timeout and
 * gives up after the configured retries.
 *
 * Counting. The caller keeps one struct trap_counters row per (device,
 * sink) and passes it with every send; the sender updates it. A row must
 * stay valid until trap_sender_free() returns. See struct trap_counters for
 * the two identities that hold for every row at every moment.
 */
#ifndef FLEET_TRAP_H
#define FLEET_TRAP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "err.h"
#include "ledger.h"
#include "plan.h"
#include "spdu.h"
#include "trap_types.h"

struct loop;
struct susm_engine;
struct trap_sender;

/* The SNMP version of a sender's notifications (--trap-version); 0 is v2c, the default. */
enum trap_version {
    TRAP_VERSION_2C = 0, /* SNMPv2-Trap-PDU / InformRequest-PDU in a community message (RFC 1901) */
    TRAP_VERSION_1,      /* RFC 1157 Trap-PDU mapped as RFC 3584 section 3.2 says; no informs */
    TRAP_VERSION_3,      /* the v2 PDUs in RFC 3412 messages with USM (RFC 3414) */
};

/* The SNMP notification port (RFC 3417 section 3), used when a sink names no port. */
#define TRAP_DEFAULT_PORT 162
/* Largest notification message: one unfragmented datagram on a 1500-byte MTU (1500 - 20 IP - 8 UDP). */
#define TRAP_MAX_MSG_BYTES 1472
/* Longest community string accepted (RFC 3584 allows 255 bytes). */
#define TRAP_MAX_COMMUNITY_BYTES 255
/* Messages queued before a sendmmsg is forced (also the most one system call sends). */
#define TRAP_BATCH 64
/* Informs waiting for a response, per sender, when the configuration leaves it 0. */
#define TRAP_DEFAULT_MAX_PENDING 4096
/* Hard cap on the pending table: request-ids encode the slot, and 2^31 must hold many generations. */
#define TRAP_MAX_PENDING_LIMIT 65536
/* Defaults of --trap-inform-timeout and --trap-inform-retries (net-snmp's are 1 s and 5). */
#define TRAP_DEFAULT_INFORM_TIMEOUT_MS 1000
#define TRAP_DEFAULT_INFORM_RETRIES    3
/* Datagrams read from the socket per readiness event, so a flood of responses cannot starve the loop. */
#define TRAP_MAX_READS_PER_EVENT 64
/* Send buffer asked for: a fleet-wide flap queues thousands of traps at once (capped by wmem_max). */
#define TRAP_SNDBUF_BYTES (4 * 1024 * 1024)
/* Sinks whose engine a v3 inform sender discovers and keeps (as many as --trap-sink takes). */
#define TRAP_MAX_V3_PEERS 8

/* IF-MIB ifAdminStatus / ifOperStatus values used with trap_send_link() (RFC 2863). */
#define TRAP_IF_STATUS_UP   1
#define TRAP_IF_STATUS_DOWN 2

/*
 * Per (device, sink) counters, kept by the caller and updated by the sender:
 * the push ledger's row (ledger.h, channel LEDGER_TRAP) and what only
 * informs have. At every moment (between any two calls into the sender):
 *   ledger_consistent(&ledger), with ledger.queued == 0
 *   ledger_sent(&ledger) == acknowledged + timed_out + pending   (informs; for traps all three stay 0)
 * A notification is counted in emitted only together with its outcome, so one
 * waiting in the batch for its sendmmsg (or a v3 inform waiting for its sink's
 * engine) is in no counter yet. An inform whose first copy the kernel refused
 * counts in send_failures and is not retried; one given up after its retries
 * was sent, and counts in timed_out. Until the run window exists every
 * notification that reaches the wire counts in in_window.
 */
struct trap_counters {
    struct ledger_row ledger; /* emitted, in_window (first copy accepted by the kernel; traps: the only copy),
                                 send_failures (first copy refused: full buffer, no route, bad source; a v3
                                 sink never discovered), dropped (refused before the kernel: inform table
                                 full, message over TRAP_MAX_MSG_BYTES), suppressed_pre_window
                                 (trap_note_suppressed()) */
    uint64_t acknowledged;    /* informs answered by a matching Response (duplicates are not counted) */
    uint64_t timed_out;       /* informs given up: no Response within timeout * (retries + 1) */
    uint64_t retries;         /* inform retransmissions accepted by the kernel (not a notification count) */
    uint64_t pending;         /* gauge: informs sent and still waiting for a Response */
};

/* Sender-wide counts that belong to no row. */
struct trap_sender_stats {
    uint64_t batches;             /* sendmmsg calls that sent at least one message */
    uint64_t retry_send_failures; /* retransmissions the kernel refused (the inform keeps waiting) */
    uint64_t responses;           /* datagrams read from the socket */
    uint64_t responses_malformed; /* of those, not a well-formed v2c Response */
    uint64_t responses_unmatched; /* of those, answering no waiting inform (late, duplicate, wrong source) */
    uint64_t discoveries;         /* v3 informs: sink engines learned from a discovery Report */
    uint64_t discovery_timeouts; /* v3 informs: discoveries given up (their informs count as send_failures) */
    uint64_t responses_unauthentic; /* v3: Responses or Reports that failed their digest or decryption */
};

/* How a sender behaves; fixed for its life. */
struct trap_sender_config {
    int inform;               /* 1: InformRequest-PDU with retries; 0: SNMPv2-Trap-PDU, fire and forget */
    uint32_t timeout_ms;      /* wait for a Response before each retransmission (informs); > 0 */
    uint32_t retries;         /* retransmissions before giving up (informs) */
    uint32_t max_pending;     /* informs waiting at most; 0: TRAP_DEFAULT_MAX_PENDING */
    const char *community;    /* community string, copied; NULL: "public" */
    struct net_family fam;    /* the family of the devices' addresses (trap_origin.addr's 96 bits above) */
    uint32_t bind_addr;       /* local address of the socket of fam (low 32 bits); 0: the wildcard address.
                                 Responses go to the device's address, so informs from other addresses need 0 */
    int other_family;         /* 1: some sink is of the other family: a second socket, on its wildcard */
    uint32_t request_id_seed; /* start of the request-ids; one per worker keeps workers' ids apart */
    int version;              /* enum trap_version */
    const struct respond_v3_user *v3_user; /* TRAP_VERSION_3: the USM user, copied; else ignored */
};

/**
 * @brief Parse "HOST:PORT" or "HOST" (port TRAP_DEFAULT_PORT) into @p sink.
 * @param[in] text A numeric IPv4 address, optionally ':' and a port 1-65535; an IPv6 address, or one in
 * brackets and ':' and a port ("[::1]:162"). Names are refused
 * (no resolver runs inside the simulator).
 * @param[out] sink Filled on success.
 * @param[out] err Why the text was refused, naming it.
 * @return FLEET_OK or FLEET_ERR_INVAL.
 */
enum fleet_err trap_sink_parse(const char *text, struct trap_sink *sink, char *err, size_t err_len);

/** @brief Print @p sink as "A.B.C.D:PORT" or "[IPV6]:PORT" into @p buf (always NUL-terminated); @return @p
 * buf. */
char *trap_sink_format(const struct trap_sink *sink, char *buf, size_t buf_len);

/**
 * @brief Create a sender on @p loop: open and watch its UDP socket, allocate its batch and (informs) its
 * pending table.
 * @param[in] cfg Behaviour; copied.
 * @param[out] out The sender, or NULL on failure.
 * @param[out] err Why it failed.
 * @return FLEET_OK, FLEET_ERR_INVAL (bad configuration), FLEET_ERR_NOMEM or FLEET_ERR_SYS.
 * Call on the loop's thread; the sender is used only there.
 */
enum fleet_err trap_sender_new(struct loop *loop, const struct trap_sender_config *cfg,
                               struct trap_sender **out, char *err, size_t err_len);

/**
 * @brief Send what is queued, give up every waiting inform (counted as timed_out), stop its timers,
 * unwatch and close the socket, free the sender. Accepts NULL. Never call it from the sender's own
 * callbacks; every row it was given must still be valid.
 */
void trap_sender_free(struct trap_sender *sender);

/**
 * @brief Queue one notification from a device to a sink; it goes out with the batch.
 * The message holds sysUpTime.0 (@p sysuptime_ticks), snmpTrapOID.0 (@p trap_oid), then @p varbinds,
 * then, for a named origin, snmpTrapAddress.0 and sysName.0.
 * @param[in] from The device: socket or source address, and identity (copied into the message). An
 * inform's retransmissions leave from the same socket, which must stay open until trap_sender_free().
 * @param[in] sink Where to; copied.
 * @param[in] sysuptime_ticks The device's sysUpTime in hundredths of a second.
 * @param[in] trap_oid The notification's OID; copied into the message.
 * @param[in] varbinds The notification's objects, in order; copied into the message.
 * @param[in,out] row Counters of this (device, sink); updated now when the notification is dropped,
 * else when its batch goes out. Must stay valid until trap_sender_free().
 * @return FLEET_OK (queued); FLEET_ERR_LIMIT when dropped (counted: message too big, inform table full);
 * FLEET_ERR_INVAL for a value the encoder refuses (a bug of the caller: nothing counted).
 */
enum fleet_err trap_send(struct trap_sender *sender, const struct trap_origin *from,
                         const struct trap_sink *sink, uint32_t sysuptime_ticks, const struct oid *trap_oid,
                         const struct trap_varbind *varbinds, size_t varbind_count,
                         struct trap_counters *row);

/**
 * @brief Queue IF-MIB linkUp (1.3.6.1.6.3.1.1.5.4) or linkDown (1.3.6.1.6.3.1.1.5.3) with ifIndex.N,
 * ifAdminStatus.N and ifOperStatus.N (RFC 2863); otherwise as trap_send().
 * @param[in] up 1: linkUp, 0: linkDown.
 * @param[in] if_index N, the interface's ifIndex (1..2147483647).
 * @param[in] admin_status ifAdminStatus after the change (TRAP_IF_STATUS_UP, ...).
 * @param[in] oper_status ifOperStatus after the change.
 */
enum fleet_err trap_send_link(struct trap_sender *sender, const struct trap_origin *from,
                              const struct trap_sink *sink, uint32_t sysuptime_ticks, int up,
                              uint32_t if_index, int32_t admin_status, int32_t oper_status,
                              struct trap_counters *row);

/**
 * @brief As trap_send_link(), with @p more objects after the three IF-MIB ones (an event's id, event.h).
 * @param[in] more Copied into the message; NULL when @p more_count is 0. At most 4.
 */
enum fleet_err trap_send_link_more(struct trap_sender *sender, const struct trap_origin *from,
                                   const struct trap_sink *sink, uint32_t sysuptime_ticks, int up,
                                   uint32_t if_index, int32_t admin_status, int32_t oper_status,
                                   const struct trap_varbind *more, size_t more_count,
                                   struct trap_counters *row);

/**
 * @brief Offer a datagram read from a device's agent socket: a v2c Response settles the inform it answers
 * (matched as on the sender's own socket: request-id, sink address and port).
 * @param[in] from Who sent it.
 * @return 1 when it was a Response and the sender took it (counted in its stats, matched or not); 0 when it
 * is not one or the sender sends no informs: the agent answers it as a request.
 */
int trap_sender_take_response(struct trap_sender *sender, const uint8_t *data, size_t len,
                              const struct sockaddr *from);

/** @brief Count a notification the caller decided not to send (emitted and suppressed_pre_window). */
void trap_note_suppressed(struct trap_counters *row);

/**
 * @brief Send every queued message now (one sendmmsg per TRAP_BATCH) and count the outcomes. The sender
 * calls it itself at the start of the next loop iteration; callers need it only to send at once (tests,
 * shutdown).
 */
void trap_sender_flush(struct trap_sender *sender);

/** @return Messages queued and not yet handed to the kernel. */
size_t trap_sender_queued(const struct trap_sender *sender);

/** @return Informs waiting for a Response (the sum of the pending gauges of all rows). */
size_t trap_sender_pending(const struct trap_sender *sender);

/** @return The sender's own counts. */
const struct trap_sender_stats *trap_sender_stats(const struct trap_sender *sender);

/** @return The local port of the sender's socket (host order), where Responses arrive. */
uint16_t trap_sender_port(const struct trap_sender *sender);

/**
 * @brief Parse a --trap-version value: "1", "2c" (or "2") or "3".
 * @param[out] version An enum trap_version, set on success only.
 * @return FLEET_OK or FLEET_ERR_INVAL.
 */
enum fleet_err trap_version_parse(const char *text, int *version);

/** @return 1 when both identities of struct trap_counters hold for @p row, else 0. */
int trap_counters_consistent(const struct trap_counters *row);

#endif
