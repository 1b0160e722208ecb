/*
 * The integration fixture for C tests: fork and exec the real fleetsim on a
 * random free port range of 127.0.0.1, wait (bounded) for its readiness line,
 * and stop it with SIGTERM, where anything but a prompt exit(0) is a failure.
 * The server dies with the test process (PR_SET_PDEATHSIG), so a test killed
 * by its CTest timeout leaves no straggler behind.
 */
#ifndef FLEET_ITEST_SERVER_H
#define FLEET_ITEST_SERVER_H

#include <stdint.h>
#include <sys/types.h>

/* Readiness must be reported within this time (before the multiplier). */
#define ITEST_READY_TIMEOUT_MS 10000
/* After SIGTERM the server must exit within this time (before the multiplier). */
#define ITEST_STOP_TIMEOUT_MS 10000
/* Ports are drawn from this range, below Linux's ephemeral ports so that clients never collide with it. */
#define ITEST_PORT_LOW  20000
#define ITEST_PORT_HIGH 32000
/* Port ranges tried before giving up when the ports turn out to be taken. */
#define ITEST_START_ATTEMPTS 8
/* The line fleetsim writes on stderr once every device listens. */
#define ITEST_READY_TEXT "devices listening on"

struct itest_server {
    pid_t pid;             /* fleetsim's process id; 0 when not running */
    uint16_t base_port;    /* device i listens on base_port + i; valid while running */
    uint32_t device_count; /* devices the server was started with */
    char log_path[64];     /* file receiving the server's stdout and stderr */
};

/**
 * @brief Scale a timeout by FLEETSIM_TIMEOUT_MULTIPLIER (sanitizer builds are slower).
 * @param[in] base_ms Timeout for a plain build.
 * @return The timeout to use, in milliseconds.
 */
int itest_timeout_ms(int base_ms);

/**
 * @brief Start fleetsim with --device-count and --starting-port (random) plus @p extra_args, and
 * wait for its readiness line. A range whose ports are taken (exit code 2, "cannot listen") is
 * retried with another range.
 * @param[out] srv Filled in on success.
 * @param[in] binary Path of the fleetsim executable.
 * @param[in] device_count Devices to simulate.
 * @param[in] extra_args NULL-terminated further arguments, or NULL.
 * @return 0 when the server is ready; -1 (with the reason and the server's log printed) otherwise.
 */
int itest_server_start(struct itest_server *srv, const char *binary, uint32_t device_count,
                       const char *const *extra_args);

/**
 * @brief SIGTERM the server and wait (bounded) for it. Safe on a server that is not running.
 * @return 0 when it exited with status 0; -1 otherwise (status and log printed; a hung server is killed).
 */
int itest_server_stop(struct itest_server *srv);

/** @brief Print the server's log so far to stderr. */
void itest_server_print_log(const struct itest_server *srv);

/**
 * @brief Connect to 127.0.0.1:@p port with a bounded connect and send/receive timeouts set.
 * @return A blocking, close-on-exec socket, or -1.
 */
int itest_connect(uint16_t port, int timeout_ms);

#endif
