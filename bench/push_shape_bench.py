#!/usr/bin/python3
"""Offered load, shaped (issue 29 item 4): how exactly a fleet's syslog follows its rate profile, counted by
a UDP socket that reads every datagram and stamps it on arrival.

  --constant  --devices devices (default 10,000) at 1/s each for --seconds (default 60), as the profile
              staged:1@SECONDS,0@1m (paced arrivals: exactly SECONDS lines per device, then silence):
              the total counted against devices x seconds, and the count over the steady window from
              the 5th to the (SECONDS-5)th second after the first line against devices x its length.
  --sine      --devices devices on sine:MEAN:AMPLITUDE:PERIOD (default 1:0.5:20, so the fleet swings
              between 5,000 and 15,000 lines/s) for --seconds: each whole second's count against the
              profile's integral over that second times the devices, the profile's start found by the best
              fit of the first seconds (the fleet starts its profiles before it is ready; the bench cannot
              see that instant). The worst second's deviation is printed, and the mean absolute one.
With neither, both run. --arrivals poisson runs them with --push-arrivals poisson (the counts then
scatter as a Poisson process's: about sqrt(count)). Every process started here is stopped here.
"""

import argparse
import math
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetlib  # noqa: E402


class StampingSink:
    """A UDP socket read by a thread that stamps each datagram (monotonic seconds) into an array."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.2)
        self.stamps = []
        self.stop = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        recv, now, add = self.sock.recv, time.monotonic, self.stamps.append
        while not self.stop:
            try:
                recv(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            add(now())

    def close(self):
        self.stop = True
        self.thread.join(timeout=5)
        self.sock.close()


def run_fleet(devices, profile, seconds, sink, settle_s, arrivals="paced"):
    port = fleetlib_free_port()
    proc, _ = fleetlib.start_fleet(
        ["--device-count", str(devices), "--ip", "127.0.0.1", "--ip-per-device", "--starting-port", str(port),
         "--snmp", "false", "--threads", "2", "--syslog-sink", "udp://127.0.0.1:%d" % sink.port,
         "--syslog-rate", profile, "--push-arrivals", arrivals, "--status-interval", "0"], timeout_s=300)
    try:
        time.sleep(seconds + settle_s)
    finally:
        fleetlib.stop_fleet(proc)


def fleetlib_free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def constant(args):
    sink = StampingSink()
    try:
        run_fleet(args.devices, "staged:1@%d,0@1m" % args.seconds, args.seconds, sink, 3, args.arrivals)
    finally:
        sink.close()
    stamps = sorted(sink.stamps)
    want = args.devices * args.seconds
    print("constant (%s): %d devices at 1/s for %d s (staged:1@%d,0@1m): counted %d, want %d (%+.4f %%)" %
          (args.arrivals, args.devices, args.seconds, args.seconds, len(stamps), want,
           100.0 * (len(stamps) - want) / want))
    if stamps and args.seconds > 10:
        a, b = stamps[0] + 5, stamps[0] + args.seconds - 5
        n = sum(1 for t in stamps if a <= t < b)
        w = args.devices * (b - a)
        print("constant: steady window of %d s: counted %d, want %d (%+.4f %%)" % (b - a, n, w, 100.0 * (n - w) / w))


def sine_integral(mean, amp, period, t):
    return mean * t + amp * period / (2 * math.pi) * (1 - math.cos(2 * math.pi * t / period))


def sine(args):
    mean, amp, period = (float(x) for x in args.sine.split(":"))
    sink = StampingSink()
    try:
        run_fleet(args.devices, "sine:%s" % args.sine, args.seconds, sink, 0, args.arrivals)
    finally:
        sink.close()
    stamps = sorted(sink.stamps)
    if not stamps:
        print("sine: nothing counted")
        return
    t_first = stamps[0]
    seconds = int(stamps[-1] - t_first) - 1
    bins = [0] * seconds
    for t in stamps:
        k = int(t - t_first)
        if k < seconds:
            bins[k] += 1

    def expected(origin, k):  # bin k covers [t_first + k, t_first + k + 1)
        a = max(t_first + k - origin, 0)
        return args.devices * (sine_integral(mean, amp, period, t_first + k + 1 - origin) -
                               sine_integral(mean, amp, period, a))

    # The profile's start: at most a couple of seconds before the first line; fit it on every bin, 1 ms steps.
    best = min((sum((bins[k] - expected(t_first - d / 1000.0, k)) ** 2 for k in range(1, seconds)), d)
               for d in range(0, 3000))
    origin = t_first - best[1] / 1000.0
    devs = [(bins[k] - expected(origin, k)) / expected(origin, k) for k in range(1, seconds)]
    worst = max(range(len(devs)), key=lambda i: abs(devs[i]))
    print("sine: %d devices on sine:%s for %d s: %d whole seconds counted, profile start fitted %.3f s "
          "before the first line" % (args.devices, args.sine, args.seconds, seconds - 1, best[1] / 1000.0))
    print("sine: per-second count against the curve: worst %+.3f %% (second %d: %d counted, %.0f expected), "
          "mean |deviation| %.3f %%" % (100 * devs[worst], worst + 1, bins[worst + 1], expected(origin, worst + 1),
                                        100 * sum(abs(d) for d in devs) / len(devs)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--constant", action="store_true")
    p.add_argument("--sine", nargs="?", const="1:0.5:20", default=None, metavar="MEAN:AMPLITUDE:PERIOD")
    p.add_argument("--devices", type=int, default=10000)
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--arrivals", choices=("paced", "poisson"), default="paced")
    args = p.parse_args()
    both = not args.constant and args.sine is None
    if args.constant or both:
        constant(args)
    if args.sine is not None or both:
        if args.sine is None:
            args.sine = "1:0.5:20"
        sine(args)


if __name__ == "__main__":
    main()
