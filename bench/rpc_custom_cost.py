#!/usr/bin/python3
"""What --rpc-config costs a request: server CPU time per get-config with
no custom replies, with 100 configured rpcs of another operation (turned
down by the name scan), with 100 configured get-configs the request does not
match (turned down by the text hash), and with the request matching one of
them (parsed, compared, custom reply sent). One device, one worker, one TCP
session, --window requests in flight; the server's CPU time from /proc.
Each case runs --rounds times on a fresh fleet; the median is printed."""

import argparse
import os
import random
import statistics
import tempfile

import fleetlib

FILTER = ('<get-config><source><running/></source><filter type="subtree"><interfaces xmlns="%s"><interface>'
          '<name>%%s</name></interface></interfaces></filter></get-config>' % fleetlib.IF_NS)
REPLY = ('<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><data><interfaces xmlns="%s"><interface>'
         '<name>%%s</name><description>custom</description></interface></interfaces></data></rpc-reply>'
         % fleetlib.IF_NS)


def rpc_file(path, inputs):
    with open(path, "w") as f:
        f.write("<rpcs>\n")
        for body, reply in inputs:
            f.write("<rpc><input>%s</input><output>%s</output></rpc>\n" % (body, reply))
        f.write("</rpcs>\n")


def cpu_per_request(extra, body, count, window):
    port = random.randrange(10000, 32000)
    proc, _ = fleetlib.start_fleet(["--device-count", "1", "--threads", "1", "--starting-port", str(port),
                                    "--status-interval", "0"] + extra)
    try:
        client = fleetlib.Client("127.0.0.1", port)
        client.call(body)  # warm-up
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        client.pipeline(lambda i: body, count, window, b"<data")
        cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
        client.close()
    finally:
        fleetlib.stop_fleet(proc)
    return cpu / count * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--requests", type=int, default=100000)
    p.add_argument("--window", type=int, default=50)
    p.add_argument("--rpcs", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="fleetsim-rpc-custom-")
    others = os.path.join(work, "others.xml")
    rpc_file(others, [('<reboot xmlns="urn:example:ops"><delay>%d</delay></reboot>' % i,
                       '<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><ok/></rpc-reply>')
                      for i in range(args.rpcs)])
    gets = os.path.join(work, "gets.xml")
    rpc_file(gets, [(FILTER % ("custom%d" % i), REPLY % ("custom%d" % i)) for i in range(args.rpcs)])
    cases = [
        ("no --rpc-config", [], FILTER % "eth0"),
        ("%d rpcs of another operation" % args.rpcs, ["--rpc-config", others], FILTER % "eth0"),
        ("%d get-configs, request not matching" % args.rpcs, ["--rpc-config", gets], FILTER % "eth0"),
        ("%d get-configs, request matching one" % args.rpcs, ["--rpc-config", gets],
         FILTER % ("custom%d" % (args.rpcs - 1))),
    ]
    print("get-config with a subtree filter, %d requests, window %d, one TCP session, median of %d rounds:"
          % (args.requests, args.window, args.rounds))
    base = None
    for name, extra, body in cases:
        us = statistics.median(cpu_per_request(extra, body, args.requests, args.window) for _ in range(args.rounds))
        base = base or us
        print("  %-40s %6.1f server CPU-us per request (%.2fx)" % (name, us, us / base))


if __name__ == "__main__":
    main()
