/*
 * Ledger rows (see ledger.h): the identity, the sums and the report's JSON.
 */
#include "ledger.h"

#include <inttypes.h>

int
ledger_consistent(const struct ledger_row *row)
{
    return row->emitted == row->in_window + row->drain + row->send_failures + row->dropped +
                               row->suppressed_pre_window + row->queued;
}

void
ledger_add(struct ledger_row *sum, const struct ledger_row *row)
{
    sum->emitted += row->emitted;
    sum->in_window += row->in_window;
    sum->drain += row->drain;
    sum->send_failures += row->send_failures;
    sum->dropped += row->dropped;
    sum->suppressed_pre_window += row->suppressed_pre_window;
    sum->queued += row->queued;
}

void
ledger_json(struct sbuf *b, const struct ledger_row *row)
{
    sbuf_printf(b,
                "\"emitted\":%" PRIu64 ",\"sent\":%" PRIu64 ",\"in_window\":%" PRIu64 ",\"drain\":%" PRIu64
                ",\"send_failures\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"suppressed_pre_window\":%" PRIu64
                ",\"queued\":%" PRIu32,
                row->emitted, ledger_sent(row), row->in_window, row->drain, row->send_failures, row->dropped,
                row->suppressed_pre_window, row->queued);
}

const char *
ledger_channel_name(enum ledger_channel ch)
{
    static const char *const names[LEDGER_CHANNELS] = {"syslog", "trap", "netconf"};

    return (unsigned)ch < LEDGER_CHANNELS ? names[ch] : "unknown";
}
