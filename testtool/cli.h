/*
 * The fleetsim command line. Option names follow OpenDaylight's
 * netconf-testtool where it has them, so existing scripts keep working.
 */
#ifndef FLEET_CLI_H
#define FLEET_CLI_H

#include <stddef.h>

#include "plan.h"

enum cli_result {
    CLI_RUN = 0, /* start the fleet */
    CLI_EXIT_OK, /* --help or --version printed */
    CLI_ERROR,   /* bad usage; the message is in err */
};

/**
 * @brief Parse arguments into @p cfg (defaults first).
 * @param[out] err Message naming the bad option on CLI_ERROR.
 */
enum cli_result cli_parse(int argc, char **argv, struct fleet_config *cfg, char *err, size_t err_len);

/**
 * @brief Fill @p cfg with the defaults every option starts from (what cli_parse() does first).
 * @param[out] cfg The plan of a command line without options.
 */
void cli_defaults(struct fleet_config *cfg);

/**
 * @brief Re-aim @p cfg's pointers into itself (schema_opts.features at feature_pins) after @p cfg was
 * copied from another struct fleet_config by assignment or memcpy. Call it on every copy.
 * @param[in,out] cfg The copy.
 */
void cli_config_fix_pointers(struct fleet_config *cfg);

/**
 * @brief Apply one option by its long name, as if "--NAME VALUE" were on the command line: the same
 * option table, the same checks and the same error text.
 * @param[in] name Long option name without dashes ("snmp-latency"); aliases work, abbreviations do not.
 * @param[in] value Its value text; NULL for a flag given without one (true). Options that take text
 * keep the pointer: it must outlive @p cfg.
 * @param[in,out] cfg The plan to change. A repeatable option (features, snmp-fault, snmp-v3-user,
 * trap-sink) adds a value; cli_clear_named() drops the earlier ones.
 * @param[out] err On error, a message naming the option ("--snmp-latency must be ..."), as the command
 * line gives it.
 * @return FLEET_OK; FLEET_ERR_NOTFOUND for an unknown name; FLEET_ERR_INVAL for a bad value, a missing
 * value or --help/--version.
 */
enum fleet_err cli_apply_named(const char *name, const char *value, struct fleet_config *cfg, char *err,
                               size_t err_len);

/**
 * @brief Drop every value a repeatable option has collected in @p cfg, so that the values applied next
 * replace them.
 * @param[in] name Long option name: features, snmp-fault, snmp-v3-user or trap-sink.
 * @param[in,out] cfg The plan.
 * @return FLEET_OK; FLEET_ERR_NOTFOUND for an unknown name; FLEET_ERR_INVAL for an option that does not
 * repeat.
 */
enum fleet_err cli_clear_named(const char *name, struct fleet_config *cfg);

/**
 * @brief Whether @p name is a long option of the command line (for messages that point a misplaced
 * option to where it belongs).
 * @return 1 or 0.
 */
int cli_option_known(const char *name);

#endif
