/* Placeholder until registration lands (issue 7). */
#include "register.h"

int
controller_register_start(struct fleet *fleet)
{
    (void)fleet;
    return 0;
}

void
controller_register_stop(struct fleet *fleet)
{
    (void)fleet;
}
