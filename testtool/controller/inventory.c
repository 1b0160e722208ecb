/* Placeholder until the inventory writer lands (issue 7). */
#include "inventory.h"

#include <stdio.h>

int
inventory_emit(const struct fleet_config *cfg, char *err, size_t err_len)
{
    (void)cfg;
    snprintf(err, err_len, "--emit-inventory is not built yet");
    return -1;
}
