/*
 * fleetsim-stress command lines: "edit" keeps OpenDaylight's stress-client
 * option names; "mount" emulates a controller mounting a fleet.
 */
#ifndef STRESS_OPTIONS_H
#define STRESS_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum stress_mode {
    STRESS_EDIT,  /* edit-config throughput */
    STRESS_MOUNT, /* mount storm */
};

enum mount_action {
    MOUNT_NONE,       /* hello only */
    MOUNT_GET_SCHEMA, /* fetch every advertised module */
    MOUNT_GET_CONFIG, /* read the running configuration */
};

struct stress_options {
    enum stress_mode mode;     /* subcommand */
    uint32_t ip;               /* first server address, host order */
    uint32_t port;             /* first server port */
    uint32_t device_count;     /* servers: port..port+D-1, or ip..ip+D-1 with ip_per_device */
    int ip_per_device;         /* 1: vary the address, not the port */
    int ssh;                   /* NETCONF over SSH asked for */
    const char *username;      /* SSH user (and the user of a preamble) */
    const char *password;      /* SSH password */
    uint32_t msg_timeout_s;    /* seconds to wait for any answer */
    int legacy_framing;        /* offer only base:1.0 */
    const char *json_path;     /* manifest, or NULL */
    const char *preamble_path; /* bytes to send before the hello, or NULL */
    /* edit */
    uint64_t edits;           /* edit-config requests in all */
    const char *edit_content; /* file with the XML inside <config>, NULL for the built-in one */
    uint64_t batch_size;      /* with candidate: a commit after this many edits (0: all in one batch) */
    int candidate;            /* edit the candidate and commit, else edit running */
    int async;                /* pipeline requests */
    uint32_t threads;         /* sessions */
    uint32_t pipeline;        /* requests in flight per session in async mode, 0 = all */
    /* mount */
    uint32_t concurrency;       /* sessions being set up at once */
    enum mount_action on_mount; /* what a mount does after the hello */
    uint32_t hold_s;            /* seconds to keep all sessions open afterwards */
};

enum stress_parse {
    STRESS_PARSE_RUN = 0, /* options valid */
    STRESS_PARSE_EXIT,    /* --help or --version printed */
    STRESS_PARSE_ERROR,   /* bad usage; message in err */
};

/** @brief Parse argv (argv[1] is the subcommand) into @p opts. */
enum stress_parse stress_options_parse(int argc, char **argv, struct stress_options *opts, char *err,
                                       size_t err_len);

#endif
