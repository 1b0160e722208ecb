/* Placeholder until the metrics server lands (issue 7). */
#include "metrics.h"

int
metrics_start(struct fleet *fleet, char *err, size_t err_len)
{
    (void)fleet;
    (void)err;
    (void)err_len;
    return 0;
}

void
metrics_stop(struct fleet *fleet)
{
    (void)fleet;
}
