#!/usr/bin/python3
"""What identity rules (--identity-rules, a recorded folder's rules.json) cost a get-config: server CPU time
per unfiltered get-config of a ~100 KB running configuration with no rules, with 4 rules on an untouched
device (the shared template is rewritten as printed: one pass over the text), and with the same rules on a
device that was edited once (its own copy already holds its values: no pass). Also get (configuration and
state), whose private view is rewritten as a tree. Every 10th interface description holds a match.
One device, one worker, one TCP session, --window requests in flight; the server's CPU time from /proc.
Each case runs --rounds times on a fresh fleet; the median is printed."""

import argparse
import json
import os
import random
import statistics
import tempfile

import fleetlib

SYS_NS = "urn:ietf:params:xml:ns:yang:ietf-system"
RULES = {"rules": [
    {"name": "hostname", "match": "edge-rtr-01", "replace": "edge-rtr-{INDEX}"},
    {"name": "mgmt-address", "match": "192.0.2.17", "replace": "{ADDR}"},
    {"name": "base-mac", "match": "00:1b:21:3a:4f:10", "replace": "{MAC}"},
    {"name": "serial", "match": "FOC1234X0AB", "replace": "{SERIAL}"},
]}
GET_CONFIG = "<get-config><source><running/></source></get-config>"
EDIT = ('<edit-config><target><running/></target><config><system xmlns="%s"><location>lab</location></system>'
        '</config></edit-config>' % SYS_NS)


def config_xml(interfaces):
    parts = ['<system xmlns="%s"><hostname>edge-rtr-01</hostname><contact>noc at 192.0.2.17</contact>'
             '</system><interfaces xmlns="%s" xmlns:ianaift="urn:ietf:params:xml:ns:yang:iana-if-type">'
             % (SYS_NS, fleetlib.IF_NS)]
    for i in range(interfaces):
        desc = ("uplink %d of edge-rtr-01 mac 00:1b:21:3a:4f:10" % i if i % 10 == 0
                else "customer port %d, circuit C-%06d, vlan %d" % (i, i * 7, 100 + i % 3000))
        parts.append("<interface><name>xe-0/%d/%d</name><type>ianaift:ethernetCsmacd</type>"
                     "<description>%s</description><enabled>true</enabled></interface>" % (i // 48, i % 48, desc))
    parts.append("</interfaces>")
    return "".join(parts)


def cpu_per_request(extra, body, count, window, edit_first):
    port = random.randrange(10000, 32000)
    proc, _ = fleetlib.start_fleet(["--device-count", "1", "--threads", "1", "--starting-port", str(port),
                                    "--status-interval", "0", "--snmp", "false"] + extra)
    try:
        client = fleetlib.Client("127.0.0.1", port)
        if edit_first and b"<ok/>" not in client.call(EDIT):
            raise RuntimeError("edit failed")
        size = len(client.call(body))  # warm-up
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        client.pipeline(lambda i: body, count, window, b"<data")
        cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
        client.close()
    finally:
        fleetlib.stop_fleet(proc)
    return cpu / count * 1e6, size


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--requests", type=int, default=3000)
    p.add_argument("--window", type=int, default=8)
    p.add_argument("--interfaces", type=int, default=640)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="fleetsim-identity-")
    config = os.path.join(work, "config.xml")
    with open(config, "w") as f:
        f.write(config_xml(args.interfaces))
    rules = os.path.join(work, "rules.json")
    with open(rules, "w") as f:
        json.dump(RULES, f)
    base = ["--initial-config-xml-file", config]
    cases = [
        ("get-config, no rules", base, GET_CONFIG, False),
        ("get-config, 4 rules, untouched device", base + ["--identity-rules", rules], GET_CONFIG, False),
        ("get-config, 4 rules, edited device", base + ["--identity-rules", rules], GET_CONFIG, True),
        ("get, no rules", base, "<get/>", False),
        ("get, 4 rules, untouched device", base + ["--identity-rules", rules], "<get/>", False),
    ]
    print("%d requests, window %d, one TCP session, median of %d rounds:" % (args.requests, args.window,
                                                                             args.rounds))
    first = {}
    for name, extra, body, edit in cases:
        runs = [cpu_per_request(extra, body, args.requests, args.window, edit) for _ in range(args.rounds)]
        us = statistics.median(r[0] for r in runs)
        key = name.split(",")[0]
        first.setdefault(key, us)
        print("  %-40s %8.1f server CPU-us per reply (%.2fx), reply %d bytes" % (name, us, us / first[key],
                                                                              runs[0][1]))


if __name__ == "__main__":
    main()
