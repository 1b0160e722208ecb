/*
 * Listening sockets and accepting connections. Port per device: one socket
 * per device on its worker. Address per device: one socket per worker on
 * the shared port (SO_REUSEPORT), and the connection's local address tells
 * which device was dialled; a connection that lands on another device's
 * worker is handed over through that worker's inbox.
 */
#ifndef FLEET_LISTEN_H
#define FLEET_LISTEN_H

#include <stddef.h>

#include "device.h"

/* Backlog of each listening socket (the kernel caps it at net.core.somaxconn); a mount storm fills a small
 * one. */
#define LISTEN_BACKLOG 1024
/* Connections accepted per readiness event, so one listener cannot starve a loop. */
#define LISTEN_MAX_ACCEPTS_PER_EVENT 32
/* Pause of a listener after the process ran out of descriptors. */
#define LISTEN_EMFILE_PAUSE_MS 100

/**
 * @brief Open every listening socket of the fleet and register it with its worker's loop.
 * @param[out] err Names the address and port that failed, and why.
 */
enum fleet_err listen_open_all(struct fleet *fleet, char *err, size_t err_len);

/** @brief Close every listening socket. */
void listen_close_all(struct fleet *fleet);

#endif
