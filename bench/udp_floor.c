/*
 * The kernel's floor for a UDP syslog generator on this machine: CPU time
 * per loopback datagram of a given size sent with sendmmsg (batches of 64,
 * nothing else done in user space) into a socket that never reads, the
 * sink of bench/syslog_bench.py. Three ways: a connected socket (what
 * loggen uses), an unconnected one naming the peer in each message, and an
 * unconnected one that also sets each message's source with IP_PKTINFO
 * (what fleetsim does with --ip-per-device). No generator that uses the
 * kernel's UDP stack can spend less per message than the lowest of them.
 *
 * Usage: bench_udp_floor [BYTES [DATAGRAMS]] (defaults 207 and 2,000,000).
 * Prints CPU microseconds per datagram for each way.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

enum way { WAY_CONNECTED, WAY_NAMED, WAY_PKTINFO, WAYS };

static const char *const way_names[WAYS] = {"connected", "peer named per message",
                                            "peer named, source by IP_PKTINFO"};

static double
cpu_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* CPU microseconds per datagram of @p bytes, @p count of them, sent the way @p way says to @p peer. */
static double
run(enum way way, const struct sockaddr_in *peer, size_t bytes, long count)
{
    static char ctl[BATCH][CMSG_SPACE(sizeof(struct in_pktinfo))];
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    char *buf = calloc(1, bytes);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    int sndbuf = 4 << 20;
    double start;

    if (!buf || fd < 0) {
        perror("bench_udp_floor");
        exit(1);
    }
    memset(buf, 'x', bytes);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (way == WAY_CONNECTED && connect(fd, (const struct sockaddr *)peer, sizeof *peer)) {
        perror("connect");
        exit(1);
    }
    start = cpu_us();
    for (long done = 0; done < count; done += BATCH) {
        /* Built again for every batch, as a generator fills each batch with new messages. */
        for (int i = 0; i < BATCH; i++) {
            struct msghdr *mh = &msgs[i].msg_hdr;
            memset(mh, 0, sizeof *mh);
            iov[i].iov_base = buf;
            iov[i].iov_len = bytes;
            mh->msg_iov = &iov[i];
            mh->msg_iovlen = 1;
            if (way != WAY_CONNECTED) {
                mh->msg_name = (void *)peer;
                mh->msg_namelen = sizeof *peer;
            }
            if (way == WAY_PKTINFO) {
                struct cmsghdr *c;
                struct in_pktinfo pi = {0};
                mh->msg_control = ctl[i];
                mh->msg_controllen = sizeof ctl[i];
                c = CMSG_FIRSTHDR(mh);
                c->cmsg_level = IPPROTO_IP;
                c->cmsg_type = IP_PKTINFO;
                c->cmsg_len = CMSG_LEN(sizeof pi);
                pi.ipi_spec_dst.s_addr = htonl(0x7f000001u + (uint32_t)(i % 200)); /* 127.0.0.1 and on */
                memcpy(CMSG_DATA(c), &pi, sizeof pi);
            }
        }
        if (sendmmsg(fd, msgs, BATCH, 0) < 0) {
            perror("sendmmsg");
            exit(1);
        }
    }
    close(fd);
    free(buf);
    return (cpu_us() - start) / (double)count;
}

int
main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 10) : 207;
    long count = argc > 2 ? strtol(argv[2], NULL, 10) : 2000000;
    struct sockaddr_in peer = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001u)};
    socklen_t len = sizeof peer;
    int sink = socket(AF_INET, SOCK_DGRAM, 0);

    /* The sink: bound to a port the kernel picks, never read, so its queue fills and the rest are dropped
     * there, as in the bench. */
    if (sink < 0 || bind(sink, (struct sockaddr *)&peer, sizeof peer) ||
        getsockname(sink, (struct sockaddr *)&peer, &len) || bytes < 1 || bytes > 65000 || count < BATCH) {
        fprintf(stderr, "usage: bench_udp_floor [BYTES [DATAGRAMS]]\n");
        return 2;
    }
    printf("%zu-byte datagrams, %ld each way, CPU microseconds per datagram:\n", bytes, count);
    for (int w = 0; w < WAYS; w++) {
        printf("  %-34s %.3f\n", way_names[w], run((enum way)w, &peer, bytes, count));
    }
    close(sink);
    return 0;
}
