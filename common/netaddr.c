/*
 * Addresses of both families: see netaddr.h for the split of a fleet's
 * addresses into a family-wide prefix and a 32-bit part per device.
 */
#include "netaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
netaddr_parse(const char *text, struct net_family *fam, uint32_t *low)
{
    struct in_addr a4;
    struct in6_addr a6;

    memset(fam, 0, sizeof *fam);
    if (inet_pton(AF_INET, text, &a4) == 1) {
        *low = ntohl(a4.s_addr);
        return 0;
    }
    if (inet_pton(AF_INET6, text, &a6) == 1) {
        fam->v6 = 1;
        memcpy(fam->prefix, a6.s6_addr, sizeof fam->prefix);
        *low = (uint32_t)a6.s6_addr[12] << 24 | (uint32_t)a6.s6_addr[13] << 16 |
               (uint32_t)a6.s6_addr[14] << 8 | a6.s6_addr[15];
        return 0;
    }
    return -1;
}

int
netaddr_af(const struct net_family *fam)
{
    return fam->v6 ? AF_INET6 : AF_INET;
}

int
netaddr_range_fits(const struct net_family *fam, uint32_t low, uint64_t count)
{
    (void)fam;
    return count == 0 || (uint64_t)low + count - 1 <= UINT32_MAX;
}

socklen_t
netaddr_sockaddr(const struct net_family *fam, uint32_t low, uint16_t port, struct sockaddr_storage *out)
{
    memset(out, 0, sizeof *out);
    if (!fam->v6) {
        struct sockaddr_in *sin = (struct sockaddr_in *)out;

        sin->sin_family = AF_INET;
        sin->sin_port = htons(port);
        sin->sin_addr.s_addr = htonl(low);
        return sizeof *sin;
    }
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;

    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    memcpy(sin6->sin6_addr.s6_addr, fam->prefix, sizeof fam->prefix);
    sin6->sin6_addr.s6_addr[12] = (uint8_t)(low >> 24);
    sin6->sin6_addr.s6_addr[13] = (uint8_t)(low >> 16);
    sin6->sin6_addr.s6_addr[14] = (uint8_t)(low >> 8);
    sin6->sin6_addr.s6_addr[15] = (uint8_t)low;
    return sizeof *sin6;
}

int
netaddr_from_sockaddr(const struct net_family *fam, const struct sockaddr *sa, uint32_t *low, uint16_t *port)
{
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
        const uint8_t *b = sin6->sin6_addr.s6_addr;

        if (fam->v6 ? memcmp(b, fam->prefix, sizeof fam->prefix) != 0
                    : !IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
            return -1;
        }
        *low = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
        *port = ntohs(sin6->sin6_port);
        return 0;
    }
    if (sa->sa_family == AF_INET && !fam->v6) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

        *low = ntohl(sin->sin_addr.s_addr);
        *port = ntohs(sin->sin_port);
        return 0;
    }
    return -1;
}

int
netaddr_split(const struct sockaddr *sa, struct net_family *fam, uint32_t *low, uint16_t *port)
{
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

    memset(fam, 0, sizeof *fam);
    if (sa->sa_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
        fam->v6 = 1;
        memcpy(fam->prefix, sin6->sin6_addr.s6_addr, sizeof fam->prefix);
    }
    return netaddr_from_sockaddr(fam, sa, low, port);
}

char *
netaddr_text(const struct net_family *fam, uint32_t low, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    struct net_endpoint e;

    e.len = netaddr_sockaddr(fam, low, 0, &ss);
    e.sa = ss;
    return netaddr_endpoint_text(&e, 0, buf, len);
}

char *
netaddr_host(const struct net_family *fam, uint32_t low, char *buf, size_t len)
{
    char text[NETADDR_TEXT_BYTES];

    netaddr_text(fam, low, text, sizeof text);
    snprintf(buf, len, fam->v6 ? "[%s]" : "%s", text);
    return buf;
}

int
netaddr_endpoint_parse(const char *text, uint16_t default_port, struct net_endpoint *out, char *err,
                       size_t err_len)
{
    char host[NETADDR_TEXT_BYTES];
    const char *port_text = NULL;
    const char *colon = strrchr(text, ':');
    size_t host_len;

    memset(out, 0, sizeof *out);
    if (text[0] == '[') {
        const char *close = strchr(text, ']');

        if (!close || (close[1] && close[1] != ':')) {
            snprintf(err, err_len, "\"%s\" is not [IPV6-ADDRESS]:PORT", text);
            return -1;
        }
        host_len = (size_t)(close - text - 1);
        text++;
        port_text = close[1] ? close + 2 : NULL;
    } else if (colon && strchr(text, ':') == colon) { /* one colon: IPv4 (or a name) and a port */
        host_len = (size_t)(colon - text);
        port_text = colon + 1;
    } else { /* no colon, or a bare IPv6 address */
        host_len = strlen(text);
    }
    if (host_len == 0 || host_len >= sizeof host) {
        snprintf(err, err_len, "\"%s\" has no address", text);
        return -1;
    }
    memcpy(host, text, host_len);
    host[host_len] = '\0';

    unsigned long port = default_port;

    if (port_text) {
        char *end;

        port = strtoul(port_text, &end, 10);
        /* strtoul alone would take blanks and signs */
        if (*port_text < '0' || *port_text > '9' || *end || port < 1 || port > 65535) {
            snprintf(err, err_len, "\"%s\" is not a port (1-65535)", port_text);
            return -1;
        }
    } else if (!default_port) {
        snprintf(err, err_len, "\"%s\" needs a port (ADDRESS:PORT, [IPV6-ADDRESS]:PORT)", host);
        return -1;
    }

    struct net_family fam;
    uint32_t low;

    if (netaddr_parse(host, &fam, &low)) {
        snprintf(err, err_len, "\"%s\" is not an IPv4 or IPv6 address", host);
        return -1;
    }
    out->len = netaddr_sockaddr(&fam, low, (uint16_t)port, &out->sa);
    return 0;
}

void
netaddr_endpoint_set(struct net_endpoint *out, const struct sockaddr *sa, socklen_t len)
{
    memset(out, 0, sizeof *out);
    if (len > sizeof out->sa) {
        len = sizeof out->sa;
    }
    memcpy(&out->sa, sa, len);
    out->len = len;
}

void
netaddr_endpoint_set_port(struct net_endpoint *e, uint16_t port)
{
    if (e->sa.ss_family == AF_INET6) {
        ((struct sockaddr_in6 *)&e->sa)->sin6_port = htons(port);
    } else if (e->sa.ss_family == AF_INET) {
        ((struct sockaddr_in *)&e->sa)->sin_port = htons(port);
    }
}

uint16_t
netaddr_endpoint_port(const struct net_endpoint *e)
{
    if (!e->len) {
        return 0;
    }
    return ntohs(e->sa.ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)&e->sa)->sin6_port
                                             : ((const struct sockaddr_in *)&e->sa)->sin_port);
}

char *
netaddr_endpoint_text(const struct net_endpoint *e, int with_port, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "";
    int v6 = e->sa.ss_family == AF_INET6;

    if (!e->len) {
        snprintf(buf, len, "(none)");
        return buf;
    }
    if (v6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&e->sa)->sin6_addr, host, sizeof host);
    } else {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)&e->sa)->sin_addr, host, sizeof host);
    }
    if (!with_port) {
        snprintf(buf, len, "%s", host);
    } else {
        snprintf(buf, len, v6 ? "[%s]:%u" : "%s:%u", host, (unsigned)netaddr_endpoint_port(e));
    }
    return buf;
}

int
netaddr_endpoint_equal(const struct net_endpoint *a, const struct net_endpoint *b)
{
    if (a->len != b->len || a->sa.ss_family != b->sa.ss_family) {
        return 0;
    }
    if (a->sa.ss_family == AF_INET6) {
        const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)&a->sa,
                                  *y = (const struct sockaddr_in6 *)&b->sa;

        return x->sin6_port == y->sin6_port && !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr);
    }
    const struct sockaddr_in *x = (const struct sockaddr_in *)&a->sa, *y = (const struct sockaddr_in *)&b->sa;

    return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
}

void
netaddr_socket_prepare(int fd, const struct net_family *fam, uint32_t low)
{
    int one = 1;

    (void)low;
    if (!fam->v6) {
        return;
    }
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    /* Also on the wildcard: a source address given with IPV6_PKTINFO must be free-binding too. */
    setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
}

/* RTF_LOCAL of the kernel's route flags (linux/ipv6_route.h). */
#define NETADDR_RTF_LOCAL 0x80000000u

int
netaddr_is_local(const struct net_family *fam, uint32_t low)
{
    struct sockaddr_storage ss;
    const uint8_t *want;
    char line[256];
    int found = 0;
    FILE *f;

    if (!fam->v6) {
        return 1;
    }
    netaddr_sockaddr(fam, low, 0, &ss);
    want = ((const struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr;
    if (IN6_IS_ADDR_UNSPECIFIED((const struct in6_addr *)want)) {
        return 1;
    }
    if (!(f = fopen("/proc/net/ipv6_route", "r"))) {
        return -1;
    }
    /* "DEST PLEN SRC SPLEN NEXTHOP METRIC REFCNT USE FLAGS DEV", addresses as 32 hex digits */
    while (!found && fgets(line, sizeof line, f)) {
        char dest_hex[33];
        unsigned plen, flags;
        uint8_t dest[16];
        unsigned full;

        if (sscanf(line, "%32s %x %*s %*s %*s %*s %*s %*s %x", dest_hex, &plen, &flags) != 3 ||
            !(flags & NETADDR_RTF_LOCAL) || plen > 128 || strlen(dest_hex) != 32) {
            continue;
        }
        for (int i = 0; i < 16; i++) {
            unsigned byte;
            sscanf(dest_hex + 2 * i, "%2x", &byte);
            dest[i] = (uint8_t)byte;
        }
        full = plen / 8;
        found = !memcmp(dest, want, full) &&
                (plen % 8 == 0 || !((dest[full] ^ want[full]) & (uint8_t)(0xff00u >> (plen % 8))));
    }
    fclose(f);
    return found;
}

void
netaddr_socket_pktinfo(int fd, const struct net_family *fam)
{
    int one = 1;

    if (fam->v6) {
        setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
    } else {
        setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
    }
}

int
netaddr_msg_destination(const struct msghdr *mh, const struct net_family *fam, uint32_t *low)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR((struct msghdr *)mh, c)) {
        union netaddr_sa dst = {.sa.sa_family = AF_UNSPEC};
        uint16_t port;

        if (!fam->v6 && c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
            struct in_pktinfo pi;
            memcpy(&pi, CMSG_DATA(c), sizeof pi);
            dst.v4.sin_family = AF_INET;
            dst.v4.sin_addr = pi.ipi_addr;
        } else if (fam->v6 && c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
            struct in6_pktinfo pi;
            memcpy(&pi, CMSG_DATA(c), sizeof pi);
            dst.v6.sin6_family = AF_INET6;
            dst.v6.sin6_addr = pi.ipi6_addr;
        } else {
            continue;
        }
        return netaddr_from_sockaddr(fam, &dst.sa, low, &port);
    }
    return -1;
}

void
netaddr_msg_source(struct msghdr *mh, void *ctl, const struct net_family *fam, uint32_t low)
{
    struct sockaddr_storage ss;
    struct cmsghdr *c;

    netaddr_sockaddr(fam, low, 0, &ss);
    memset(ctl, 0, NETADDR_PKTINFO_BYTES);
    mh->msg_control = ctl;
    c = (struct cmsghdr *)ctl;
    if (fam->v6) {
        /* ipi6_ifindex 0: routing picks the interface; the address picks the source. */
        struct in6_pktinfo pi = {.ipi6_addr = ((struct sockaddr_in6 *)&ss)->sin6_addr};
        mh->msg_controllen = CMSG_SPACE(sizeof pi);
        c->cmsg_level = IPPROTO_IPV6;
        c->cmsg_type = IPV6_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof pi);
        memcpy(CMSG_DATA(c), &pi, sizeof pi);
    } else {
        /* ipi_spec_dst picks the source address; ipi_ifindex 0 lets routing pick the interface. */
        struct in_pktinfo pi = {.ipi_spec_dst = ((struct sockaddr_in *)&ss)->sin_addr};
        mh->msg_controllen = CMSG_SPACE(sizeof pi);
        c->cmsg_level = IPPROTO_IP;
        c->cmsg_type = IP_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof pi);
        memcpy(CMSG_DATA(c), &pi, sizeof pi);
    }
}
