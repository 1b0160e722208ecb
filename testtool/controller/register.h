/*
 * --controller-ip: every device registered with a RESTCONF controller
 * (OpenDaylight's topology-netconf), in batches, from a thread of its own
 * once the fleet listens.
 */
#ifndef FLEET_REGISTER_H
#define FLEET_REGISTER_H

struct fleet;

/* Starts registering when cfg.controller_ip is set. @return 0, or -1 when the thread cannot start. */
int controller_register_start(struct fleet *fleet);
/* Stops and joins the registration thread, if any. */
void controller_register_stop(struct fleet *fleet);

#endif
