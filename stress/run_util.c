/*
 * Small services the workloads share: where device N is, reading input
 * files, and the descriptor limit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "run.h"

void
run_target(const struct stress_options *o, uint32_t device, uint32_t *addr, uint16_t *port)
{
    *addr = o->ip_per_device ? o->ip + device : o->ip;
    *port = (uint16_t)(o->ip_per_device ? o->port : o->port + device);
}

char *
run_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long size;

    if (!f) {
        fprintf(stderr, "fleetsim-stress: cannot open \"%s\": %s\n", path, strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
        !(buf = malloc((size_t)size + 1)) || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "fleetsim-stress: cannot read \"%s\"\n", path);
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    buf[size] = '\0';
    if (len) {
        *len = (size_t)size;
    }
    return buf;
}

int
run_raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_cur > 1000000 ? 1000000 : (int)rl.rlim_cur;
}
