/*
 * The fleetsim command line. Option names follow OpenDaylight's
 * netconf-testtool where it has them, so existing scripts keep working.
 */
#ifndef FLEET_CLI_H
#define FLEET_CLI_H

#include <stddef.h>

#include "fleet.h"

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

#endif
