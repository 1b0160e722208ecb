/* ceiling: being written (issue 30). */
#include <stdio.h>

#include "run.h"

int
ceiling_run(const struct stress_options *opts)
{
    (void)opts;
    fprintf(stderr, "fleetsim-stress: ceiling is not built yet\n");
    return 2;
}
