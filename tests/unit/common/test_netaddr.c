/*
 * Unit tests of common/netaddr.c: an IPv6 fleet keeps a device's low 32 bits
 * and one prefix, so parsing, the sockaddr and back, and the text forms must
 * round-trip for both families; a peer outside the prefix is not a device;
 * endpoints take brackets and ports as RFC 3986 writes them, and bad text is
 * refused with a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "netaddr.h"

static void
test_ipv4_round_trip(void **state)
{
    struct net_family fam;
    struct sockaddr_storage ss;
    uint32_t low, back;
    uint16_t port;
    char text[NETADDR_TEXT_BYTES];

    (void)state;
    assert_int_equal(netaddr_parse("127.0.100.1", &fam, &low), 0);
    assert_int_equal(fam.v6, 0);
    assert_int_equal(low, 0x7f006401u);
    assert_int_equal(netaddr_af(&fam), AF_INET);
    assert_int_equal(netaddr_sockaddr(&fam, low + 255, 830, &ss), sizeof(struct sockaddr_in));
    assert_int_equal(netaddr_from_sockaddr(&fam, (struct sockaddr *)&ss, &back, &port), 0);
    assert_int_equal(back, 0x7f006500u);
    assert_int_equal(port, 830);
    assert_string_equal(netaddr_text(&fam, back, text, sizeof text), "127.0.101.0");
    assert_string_equal(netaddr_host(&fam, back, text, sizeof text), "127.0.101.0");
}

static void
test_ipv6_round_trip(void **state)
{
    struct net_family fam;
    struct sockaddr_storage ss;
    uint32_t low, back;
    uint16_t port;
    char text[NETADDR_TEXT_BYTES];

    (void)state;
    assert_int_equal(netaddr_parse("fd00::1", &fam, &low), 0);
    assert_int_equal(fam.v6, 1);
    assert_int_equal(low, 1);
    assert_int_equal(netaddr_af(&fam), AF_INET6);
    assert_int_equal(netaddr_sockaddr(&fam, low + 0xffff, 17830, &ss), sizeof(struct sockaddr_in6));
    assert_int_equal(netaddr_from_sockaddr(&fam, (struct sockaddr *)&ss, &back, &port), 0);
    assert_int_equal(back, 0x10000u);
    assert_int_equal(port, 17830);
    assert_string_equal(netaddr_text(&fam, back, text, sizeof text), "fd00::1:0");
    assert_string_equal(netaddr_host(&fam, back, text, sizeof text), "[fd00::1:0]");
    assert_int_equal(netaddr_parse("::1", &fam, &low), 0);
    assert_string_equal(netaddr_text(&fam, low, text, sizeof text), "::1");
}

static void
test_peer_outside_prefix(void **state)
{
    struct net_family fam, v4;
    struct sockaddr_in6 other = {.sin6_family = AF_INET6};
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001u)};
    uint32_t low;
    uint16_t port;

    (void)state;
    assert_int_equal(netaddr_parse("fd00::1", &fam, &low), 0);
    inet_pton(AF_INET6, "fd01::1", &other.sin6_addr);
    assert_int_equal(netaddr_from_sockaddr(&fam, (struct sockaddr *)&other, &low, &port), -1);
    assert_int_equal(netaddr_from_sockaddr(&fam, (struct sockaddr *)&sin, &low, &port), -1);

    /* an IPv4 fleet takes IPv4-mapped peers of a dual-stack socket as IPv4 */
    assert_int_equal(netaddr_parse("127.0.0.1", &v4, &low), 0);
    inet_pton(AF_INET6, "::ffff:127.0.0.9", &other.sin6_addr);
    assert_int_equal(netaddr_from_sockaddr(&v4, (struct sockaddr *)&other, &low, &port), 0);
    assert_int_equal(low, 0x7f000009u);
}

static void
test_range_fits(void **state)
{
    struct net_family fam;
    uint32_t low;

    (void)state;
    assert_int_equal(netaddr_parse("fd00::ffff:ff00", &fam, &low), 0);
    assert_true(netaddr_range_fits(&fam, low, 256));
    assert_false(netaddr_range_fits(&fam, low, 257));
    assert_true(netaddr_range_fits(&fam, UINT32_MAX, 1));
}

static void
test_endpoint_parse(void **state)
{
    struct net_endpoint e;
    char err[128], text[NETADDR_TEXT_BYTES];

    (void)state;
    assert_int_equal(netaddr_endpoint_parse("192.0.2.7:162", 0, &e, err, sizeof err), 0);
    assert_int_equal(netaddr_endpoint_port(&e), 162);
    assert_string_equal(netaddr_endpoint_text(&e, 1, text, sizeof text), "192.0.2.7:162");
    assert_int_equal(netaddr_endpoint_parse("[::1]:4335", 0, &e, err, sizeof err), 0);
    assert_string_equal(netaddr_endpoint_text(&e, 1, text, sizeof text), "[::1]:4335");
    assert_string_equal(netaddr_endpoint_text(&e, 0, text, sizeof text), "::1");
    assert_int_equal(netaddr_endpoint_parse("fd00::5", 162, &e, err, sizeof err), 0);
    assert_int_equal(netaddr_endpoint_port(&e), 162);
    assert_int_equal(netaddr_endpoint_parse("10.1.1.1", 4334, &e, err, sizeof err), 0);
    assert_int_equal(netaddr_endpoint_port(&e), 4334);

    struct net_endpoint same;

    assert_int_equal(netaddr_endpoint_parse("10.1.1.1:4334", 0, &same, err, sizeof err), 0);
    assert_true(netaddr_endpoint_equal(&e, &same));
    assert_int_equal(netaddr_endpoint_parse("10.1.1.1:4335", 0, &same, err, sizeof err), 0);
    assert_false(netaddr_endpoint_equal(&e, &same));

    assert_int_equal(netaddr_endpoint_parse("10.1.1.1", 0, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "needs a port"));
    assert_int_equal(netaddr_endpoint_parse("[::1:162", 0, &e, err, sizeof err), -1);
    assert_int_equal(netaddr_endpoint_parse("[::1]:0", 0, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a port"));
    assert_int_equal(netaddr_endpoint_parse("host.example:162", 0, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "not an IPv4 or IPv6 address"));
    assert_int_equal(netaddr_endpoint_parse(":162", 0, &e, err, sizeof err), -1);
}

/* A socket's local address has a family of its own: split it whatever the fleet's family. */
static void
test_split_any_sockaddr(void **state)
{
    struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = htons(4242)};
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(7)};
    struct sockaddr unix_sa = {.sa_family = AF_UNIX};
    struct net_family fam;
    uint32_t low;
    uint16_t port;
    char text[NETADDR_TEXT_BYTES];

    (void)state;
    inet_pton(AF_INET6, "fd00::1:2", &sin6.sin6_addr);
    assert_int_equal(netaddr_split((struct sockaddr *)&sin6, &fam, &low, &port), 0);
    assert_int_equal(fam.v6, 1);
    assert_int_equal(port, 4242);
    assert_string_equal(netaddr_host(&fam, low, text, sizeof text), "[fd00::1:2]");
    inet_pton(AF_INET6, "::ffff:127.0.0.9", &sin6.sin6_addr);
    assert_int_equal(netaddr_split((struct sockaddr *)&sin6, &fam, &low, &port), 0);
    assert_int_equal(fam.v6, 0);
    assert_string_equal(netaddr_text(&fam, low, text, sizeof text), "127.0.0.9");
    sin.sin_addr.s_addr = htonl(0x7f000002u);
    assert_int_equal(netaddr_split((struct sockaddr *)&sin, &fam, &low, &port), 0);
    assert_int_equal(fam.v6, 0);
    assert_int_equal(low, 0x7f000002u);
    assert_int_equal(port, 7);
    assert_int_equal(netaddr_split(&unix_sa, &fam, &low, &port), -1);
}

static void
test_port_text_is_digits_only(void **state)
{
    struct net_endpoint e;
    char err[160];

    (void)state;
    assert_int_equal(netaddr_endpoint_parse("127.0.0.1: 162", 0, &e, err, sizeof err), -1);
    assert_int_equal(netaddr_endpoint_parse("127.0.0.1:+162", 0, &e, err, sizeof err), -1);
    assert_int_equal(netaddr_endpoint_parse("[::1]:-1", 0, &e, err, sizeof err), -1);
    assert_int_equal(netaddr_endpoint_parse("[::1]:162", 0, &e, err, sizeof err), 0);
}

/* ::1 has a local route of its own on every Linux host; 2001:db8::/32 is documentation, never local. */
static void
test_is_local(void **state)
{
    struct net_family fam;
    uint32_t low;

    (void)state;
    assert_int_equal(netaddr_parse("127.0.0.1", &fam, &low), 0);
    assert_int_equal(netaddr_is_local(&fam, low), 1);
    assert_int_equal(netaddr_parse("::", &fam, &low), 0);
    assert_int_equal(netaddr_is_local(&fam, low), 1);
    assert_int_equal(netaddr_parse("::1", &fam, &low), 0);
    if (netaddr_is_local(&fam, low) < 0) {
        skip(); /* no /proc/net/ipv6_route: no IPv6 in this kernel */
    }
    assert_int_equal(netaddr_is_local(&fam, low), 1);
    assert_int_equal(netaddr_parse("2001:db8::1", &fam, &low), 0);
    assert_int_equal(netaddr_is_local(&fam, low), 0);
}

/* IPV6_PKTINFO carries the same in6_pktinfo both ways: a source netaddr_msg_source() writes is read back by
 * netaddr_msg_destination(), and refused for another prefix. */
static void
test_pktinfo_round_trip(void **state)
{
    union {
        char buf[NETADDR_PKTINFO_BYTES];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = {0};
    struct net_family fam, other;
    uint32_t low, back = 0;

    (void)state;
    assert_int_equal(netaddr_parse("fd5e:f1ee::7", &fam, &low), 0);
    netaddr_msg_source(&mh, ctl.buf, &fam, low);
    assert_int_equal(netaddr_msg_destination(&mh, &fam, &back), 0);
    assert_int_equal(back, 7);
    other = fam;
    other.prefix[0] ^= 1;
    assert_int_equal(netaddr_msg_destination(&mh, &other, &back), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipv4_round_trip),
        cmocka_unit_test(test_ipv6_round_trip),
        cmocka_unit_test(test_peer_outside_prefix),
        cmocka_unit_test(test_range_fits),
        cmocka_unit_test(test_endpoint_parse),
        cmocka_unit_test(test_port_text_is_digits_only),
        cmocka_unit_test(test_is_local),
        cmocka_unit_test(test_pktinfo_round_trip),
        cmocka_unit_test(test_split_any_sockaddr),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
