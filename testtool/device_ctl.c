/*
 * A device's control state, as the serving paths read it (see device_ctl.h).
 */
#include "device_ctl.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

void
devctl_reset_fd(int fd)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};

    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
}

int
devact_on_accept(struct device *dev, int fd, uint16_t peer_port)
{
    struct device_ctl *ctl = dev->ctl;

    if (!ctl || !ctl->down) {
        return 0;
    }
    if (ctl->throttled && peer_port == ctl->plug_port) {
        close(fd); /* our own plug, accepted before the listener was plugged */
        return 1;
    }
    /* Allocated at the first held connection: an absent device (a fleet that grows) is only refused. */
    if (ctl->down == DEVACT_BLACKHOLE && !ctl->held) {
        ctl->held = malloc(DEVACT_MAX_HELD * sizeof *ctl->held);
    }
    if (ctl->down == DEVACT_BLACKHOLE && ctl->held && ctl->held_count < DEVACT_MAX_HELD) {
        ctl->held[ctl->held_count++] = fd;
        return 1;
    }
    devctl_reset_fd(fd);
    close(fd);
    return 1;
}

void
devact_free(struct device *dev)
{
    struct device_ctl *ctl = dev->ctl;

    if (!ctl) {
        return;
    }
    for (uint32_t i = 0; i < ctl->held_count; i++) {
        close(ctl->held[i]);
    }
    if (ctl->plug_fd >= 0) {
        close(ctl->plug_fd);
    }
    if (dev->worker && dev->worker->loop) {
        loop_timer_stop(dev->worker->loop, &ctl->reboot_timer);
        loop_timer_stop(dev->worker->loop, &ctl->flap_timer);
    }
    free(ctl->held);
    free(ctl->flap_all);
    for (int r = 0; r < DEVCTL_RATES; r++) {
        free(ctl->rate[r]);
    }
    free(ctl);
    dev->ctl = NULL;
}

const char *
devact_state_name(const struct device *dev)
{
    if (!dev->ctl || !dev->ctl->down) {
        return "up";
    }
    return dev->ctl->absent ? "absent" : dev->ctl->rebooting ? "rebooting" : "down";
}
