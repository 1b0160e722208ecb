/*
 * Addresses of both families for the simulator and the stress client.
 *
 * A fleet's device addresses are consecutive, so a device keeps only the
 * low 32 bits of its address (a uint32_t, host byte order, as for IPv4);
 * the family and, for IPv6, the 96 bits above live once in a net_family.
 * Per-device memory therefore does not grow with IPv6. A range may not
 * cross a 32-bit boundary of an IPv6 prefix: netaddr_range_fits() says so.
 *
 * Other endpoints (controllers, trap sinks, call-home managers, the HTTP
 * server) are any address of either family: a net_endpoint holds the
 * sockaddr itself. Text forms: "192.0.2.1", "2001:db8::1"; host and port
 * as "192.0.2.1:161" or "[2001:db8::1]:161" (RFC 3986's brackets).
 */
#ifndef FLEET_NETADDR_H
#define FLEET_NETADDR_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Room for an address's text with brackets and a port: "[" INET6_ADDRSTRLEN "]:65535". */
#define NETADDR_TEXT_BYTES 56

/* The family of a fleet's addresses and, for IPv6, the 12 bytes above the low 32 bits. */
struct net_family {
    uint8_t v6;         /* 0: IPv4; 1: IPv6 */
    uint8_t prefix[12]; /* IPv6: the first 12 bytes of every address; zero for IPv4 */
};

/* A socket address of either family, no bigger than it needs to be (28 bytes), for tables of peers. */
union netaddr_sa {
    struct sockaddr sa;     /* sa_family tells which */
    struct sockaddr_in v4;  /* AF_INET */
    struct sockaddr_in6 v6; /* AF_INET6 */
};

/* Room for the control message netaddr_msg_source() writes (an IPv6 one is the larger). */
#define NETADDR_PKTINFO_BYTES CMSG_SPACE(sizeof(struct in6_pktinfo))

/* An endpoint of either family, with its port. */
struct net_endpoint {
    struct sockaddr_storage sa;
    socklen_t len; /* 0: unset */
};

/**
 * @brief Parse an IPv4 or IPv6 address (no brackets, no port).
 * @return 0 with @p fam and @p low set, -1 when @p text is neither.
 */
int netaddr_parse(const char *text, struct net_family *fam, uint32_t *low);

/** @return AF_INET or AF_INET6. */
int netaddr_af(const struct net_family *fam);

/** @return 1 when @p count consecutive addresses from @p low stay in @p fam's prefix (IPv4: below 2^32). */
int netaddr_range_fits(const struct net_family *fam, uint32_t low, uint64_t count);

/** @brief The socket address of @p low in @p fam with @p port. @return Its length. */
socklen_t netaddr_sockaddr(const struct net_family *fam, uint32_t low, uint16_t port,
                           struct sockaddr_storage *out);

/**
 * @brief The low 32 bits and port of @p sa when it is an address of @p fam (an IPv4-mapped IPv6 address
 * counts as IPv4). @return 0, or -1 when @p sa is of another family or prefix.
 */
int netaddr_from_sockaddr(const struct net_family *fam, const struct sockaddr *sa, uint32_t *low,
                          uint16_t *port);

/**
 * @brief The family, low 32 bits and port of any @p sa (an IPv4-mapped IPv6 address counts as IPv4), as
 * for an address seen from the outside (a socket's local address). @return 0, or -1 for another family.
 */
int netaddr_split(const struct sockaddr *sa, struct net_family *fam, uint32_t *low, uint16_t *port);

/** @brief The address's text ("192.0.2.1", "fd00::1") into @p buf. @return @p buf. */
char *netaddr_text(const struct net_family *fam, uint32_t low, char *buf, size_t len);

/** @brief The address as a host of a URL or of HOST:PORT: IPv6 in brackets ("[fd00::1]"). @return @p buf. */
char *netaddr_host(const struct net_family *fam, uint32_t low, char *buf, size_t len);

/**
 * @brief Parse "ADDR", "ADDR:PORT" or "[ADDR6]:PORT" (a bare IPv6 address takes no port) into @p out;
 * @p default_port when none is given (0: a port is required). @return 0, or -1 with a message in @p err.
 */
int netaddr_endpoint_parse(const char *text, uint16_t default_port, struct net_endpoint *out, char *err,
                           size_t err_len);

/** @brief An endpoint from a sockaddr (of either family). */
void netaddr_endpoint_set(struct net_endpoint *out, const struct sockaddr *sa, socklen_t len);

/** @brief Change the endpoint's port (a default that depends on other options). */
void netaddr_endpoint_set_port(struct net_endpoint *e, uint16_t port);

/** @return The endpoint's port, or 0 when unset. */
uint16_t netaddr_endpoint_port(const struct net_endpoint *e);

/** @brief "192.0.2.1:161" or "[fd00::1]:161" into @p buf (with_port 0: the bare address). @return @p buf. */
char *netaddr_endpoint_text(const struct net_endpoint *e, int with_port, char *buf, size_t len);

/** @return 1 when @p a and @p b are the same address and port. */
int netaddr_endpoint_equal(const struct net_endpoint *a, const struct net_endpoint *b);

/** @return The length of @p sa by its family (sockaddr_in or sockaddr_in6). */
static inline socklen_t
netaddr_sa_len(const struct sockaddr *sa)
{
    return sa->sa_family == AF_INET6 ? (socklen_t)sizeof(struct sockaddr_in6)
                                     : (socklen_t)sizeof(struct sockaddr_in);
}

/** @brief Ask for each datagram's destination on UDP socket @p fd (IP_PKTINFO, IPV6_RECVPKTINFO). */
void netaddr_socket_pktinfo(int fd, const struct net_family *fam);

/**
 * @brief The destination of a datagram received on a socket set up by netaddr_socket_pktinfo().
 * @return 0 with its low 32 bits in @p low, -1 when the message tells none or it is outside @p fam.
 */
int netaddr_msg_destination(const struct msghdr *mh, const struct net_family *fam, uint32_t *low);

/**
 * @brief Make @p low of @p fam the source address of the datagram @p mh sends (IP_PKTINFO,
 * IPV6_PKTINFO), using @p ctl (NETADDR_PKTINFO_BYTES, aligned for a cmsghdr) as its control buffer.
 */
void netaddr_msg_source(struct msghdr *mh, void *ctl, const struct net_family *fam, uint32_t low);

/**
 * @brief Prepare socket @p fd of netaddr_af(@p fam) before it binds @p low: an IPv6 socket is IPv6 only
 * (IPV6_V6ONLY, so the wildcard leaves IPv4's alone) and free-binding (IP_FREEBIND: an address of a
 * prefix made local by a route is no interface's, to bind or to send from with IPV6_PKTINFO).
 */
void netaddr_socket_prepare(int fd, const struct net_family *fam, uint32_t low);

/**
 * @brief Whether this host takes @p low of the IPv6 family @p fam as its own: a local route covers it
 * (/proc/net/ipv6_route, RTF_LOCAL), as `ip -6 route add local PREFIX/64 dev lo` makes one.
 * @return 1 yes (always for IPv4 and the wildcard), 0 no, -1 unknown (no /proc).
 */
int netaddr_is_local(const struct net_family *fam, uint32_t low);

#endif
