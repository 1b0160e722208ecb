/*
 * The fleet's state folder (see state_dir.h): one place for the rule, so
 * every part that keeps files across runs (SSH host keys, the TLS CA, the
 * syslog channel's client certificate) finds the same folder.
 */
#include "state_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int
make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0700) && errno != EEXIST) {
                *p = '/';
                return -1;
            }
            *p = '/';
        }
    }
    return mkdir(path, 0700) && errno != EEXIST ? -1 : 0;
}

enum fleet_err
state_dir(const struct fleet_config *cfg, char *buf, size_t len, char *err, size_t err_len)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

    if (cfg->state_dir) {
        snprintf(buf, len, "%s", cfg->state_dir);
    } else if (xdg && *xdg) {
        snprintf(buf, len, "%s/fleetsim", xdg);
    } else if (home && *home) {
        snprintf(buf, len, "%s/.local/state/fleetsim", home);
    } else {
        snprintf(buf, len, "/tmp/fleetsim-state-%u", (unsigned)getuid());
    }
    if (make_dirs(buf)) {
        snprintf(err, err_len, "cannot create the state folder %s: %s (use --state-dir)", buf,
                 strerror(errno));
        return FLEET_ERR_SYS;
    }
    return FLEET_OK;
}
