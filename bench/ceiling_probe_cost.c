/*
 * What ceiling's reads cost the machine it runs on (issue 30: the tool and
 * its probes under 1 % of a core while a cell runs): CPU time (this process
 * and the commands it ran) per read of the fleet's sent counter and of each
 * probe given, and the share of a core that makes at one read per sample.
 * Prints numbers; bench/ceiling_probe_cost.py starts what it reads.
 *
 *   bench_ceiling_probe_cost FLEET_URL READS SAMPLE_S [PROBE_SPEC...]
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "ceiling_fleet.h"
#include "ceiling_probe.h"

/* CPU seconds of this process and of its reaped children (the cmd probes' shells). */
static double
cpu_s(void)
{
    struct rusage self, kids;

    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
                    kids.ru_stime.tv_sec) +
           (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
                    kids.ru_stime.tv_usec) /
               1e6;
}

static void
print_row(const char *what, double cpu, int reads, double sample_s)
{
    double per_read_ms = cpu * 1000.0 / reads;

    printf("| %s | %.3f | %.4f %% |\n", what, per_read_ms, per_read_ms / 1000.0 / sample_s * 100.0);
}

int
main(int argc, char **argv)
{
    struct ceil_fleet f;
    char err[256];
    double v, t0, sample_s;
    int reads;

    if (argc < 4 || (reads = atoi(argv[2])) < 1 || !((sample_s = atof(argv[3])) > 0)) {
        fprintf(stderr, "usage: %s FLEET_URL READS SAMPLE_S [PROBE_SPEC...]\n", argv[0]);
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (ceil_fleet_open(&f, argv[1], NULL, NULL, CEIL_CHANNEL_SYSLOG, 5, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("| read | CPU ms per read | share of a core at one read per %.3g s |\n|---|---|---|\n", sample_s);
    t0 = cpu_s();
    for (int i = 0; i < reads; i++) {
        if (ceil_fleet_sent(&f, &v)) {
            fprintf(stderr, "%s\n", f.last_error);
            return 1;
        }
    }
    print_row("fleet sent (GET /metrics)", cpu_s() - t0, reads, sample_s);
    ceil_fleet_close(&f);
    for (int k = 4; k < argc; k++) {
        struct ceil_probe p;
        if (ceil_probe_parse("probe", argv[k], 5, &p, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        t0 = cpu_s();
        for (int i = 0; i < reads; i++) {
            if (ceil_probe_read(&p, &v)) {
                fprintf(stderr, "%s: %s\n", argv[k], p.last_error);
                return 1;
            }
        }
        print_row(argv[k], cpu_s() - t0, reads, sample_s);
        ceil_probe_free(&p);
    }
    curl_global_cleanup();
    return 0;
}
