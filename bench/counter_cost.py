#!/usr/bin/python3
"""What a moving counter costs the server per value read: over NETCONF (a get
of a state tree of --interfaces openconfig-like interfaces, 16 counters
each, set by movers.c at every get) against over SNMP (GETBULK walks of the
same device's ifTable and ifXTable, whose counters come from the same
device view). Issue 15's bar: no more CPU per value over NETCONF than over
SNMP. One device, one worker; the server's CPU time from /proc; each side
runs --rounds times and the median is printed. The profile and modules are
tests/integration/data/moving_state/'s, with the state data generated."""

import argparse
import os
import random
import re
import shutil
import statistics
import tempfile

import fleetlib
import snmplib

DATA = os.path.join(fleetlib.repo_root(), "tests", "integration", "data", "moving_state")
OCIF_NS = "urn:fleetsim:test:oc-if"
COUNTERS = ["in-octets", "in-pkts", "in-unicast-pkts", "in-broadcast-pkts", "in-multicast-pkts", "in-discards",
            "in-errors", "in-fcs-errors", "out-octets", "out-pkts", "out-unicast-pkts", "out-broadcast-pkts",
            "out-multicast-pkts", "out-discards", "out-errors", "carrier-transitions"]
GET = '<get><filter type="subtree"><interfaces xmlns="%s"/></filter></get>' % OCIF_NS
# The same get with with-defaults report-all: answered by copying, merging and printing the tree with
# libyang (the text path serves the default mode only), for the before-and-after ratio.
GET_LIBYANG = ('<get><filter type="subtree"><interfaces xmlns="%s"/></filter><with-defaults '
               'xmlns="urn:ietf:params:xml:ns:yang:ietf-netconf-with-defaults">report-all</with-defaults></get>'
               % OCIF_NS)
COUNTER_TAGS = (0x41, 0x46)  # Counter32, Counter64


def make_profile(folder, interfaces, frozen=False):
    """A copy of the test profile whose state data has @interfaces interfaces and no vendor container;
    @frozen: the counters typed uint64, so that nothing moves (the baseline of what moving costs)."""
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(DATA):
        if name.endswith(".yang"):
            with open(os.path.join(DATA, name)) as f:
                text = f.read()
            if frozen:
                text = text.replace("type oc-yang:counter64;", "type uint64;")
            with open(os.path.join(folder, name), "w") as f:
                f.write(text)
    with open(os.path.join(DATA, "profile-oc.xml")) as f:
        text = f.read().replace("state-oc.xml", "state-bench.xml")
    with open(os.path.join(folder, "profile.xml"), "w") as f:
        f.write(text)
    with open(os.path.join(folder, "state-bench.xml"), "w") as f:
        f.write('<interfaces xmlns="%s">\n' % OCIF_NS)
        for i in range(interfaces):
            c = "".join("<%s>%d</%s>" % (n, 1000 * i + k, n) for k, n in enumerate(COUNTERS))
            f.write("<interface><name>et-%d</name><state><name>et-%d</name><type>iana-if-type:ethernetCsmacd"
                    "</type><oper-status>UP</oper-status><counters>%s</counters></state></interface>\n"
                    % (i, i, c))
        f.write("</interfaces>\n")
    return os.path.join(folder, "profile.xml")


def make_config(folder, interfaces):
    """Running configuration with every interface of the state data in it, as openconfig devices have
    interface/config beside interface/state: the get joins running and state."""
    path = os.path.join(folder, "config.xml")
    with open(path, "w") as f:
        f.write('<interfaces xmlns="%s">' % OCIF_NS)
        f.write("".join("<interface><name>et-%d</name></interface>" % i for i in range(interfaces)))
        f.write("</interfaces>\n")
    return path


def netconf_round(profile, gets, window, get=GET, extra=()):
    port = random.randrange(10000, 32000)
    proc, _ = fleetlib.start_fleet(["--device-count", "1", "--threads", "1", "--starting-port", str(port),
                                    "--status-interval", "0", "--profile", profile] + list(extra))
    try:
        client = fleetlib.Client("127.0.0.1", port)
        reply = client.call(get).decode()
        values = sum(len(re.findall(r"<%s>\d+</%s>" % (n, n), reply)) for n in COUNTERS)
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        sent = done = 0
        while done < gets:
            while sent < gets and sent - done < window:
                client.send(get)
                sent += 1
            client.recv()
            done += 1
        cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
        client.close()
    finally:
        fleetlib.stop_fleet(proc)
    return cpu, values * gets, values, len(reply)


def snmp_round(profile, walks):
    port = random.randrange(10000, 32000)
    proc, _ = fleetlib.start_fleet(["--device-count", "1", "--threads", "1", "--starting-port", str(port),
                                    "--status-interval", "0", "--profile", profile])
    try:
        snmplib.wait_agent("127.0.0.1", port, "public")
        per_walk = 0
        cpu0 = fleetlib.cpu_seconds(proc.pid)
        for _ in range(walks):
            n = 0
            for root in ("1.3.6.1.2.1.2.2", "1.3.6.1.2.1.31.1.1"):
                n += sum(tag in COUNTER_TAGS for tag in subtree_tags(port, root))
            per_walk = n
        cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
    finally:
        fleetlib.stop_fleet(proc)
    return cpu, per_walk * walks, per_walk


def subtree_tags(port, root, max_repetitions=25):
    """The value tags of every varbind under @root, by GETBULK, stopping at the subtree's end."""
    a = snmplib.Agent("127.0.0.1", port)
    prefix = snmplib.oid_parse(root)
    cur, tags = prefix, []
    try:
        while True:
            msg, off = snmplib.request("public", snmplib.GETBULK, [cur], 0, max_repetitions)
            _, err, vbs = snmplib.parse_full(a.call(msg, off, timeout=2.0))
            if err or not vbs:
                return tags
            for oid, tag, _ in vbs:
                if list(oid[:len(prefix)]) != list(prefix) or oid <= cur:
                    return tags
                tags.append(tag)
                cur = oid
    finally:
        a.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--interfaces", type=int, default=64, help="interfaces (16 counters each; default 64)")
    ap.add_argument("--gets", type=int, default=2000, help="NETCONF gets per round")
    ap.add_argument("--walks", type=int, default=200, help="SNMP walks (ifTable + ifXTable) per round")
    ap.add_argument("--window", type=int, default=4, help="NETCONF gets in flight")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="fleetsim-counter-cost-")
    try:
        profile = make_profile(folder, args.interfaces)
        frozen = make_profile(os.path.join(folder, "frozen"), args.interfaces, frozen=True)
        config = ["--initial-config-xml-file", make_config(folder, args.interfaces)]
        nc, fr, mixed, ly, sn = [], [], [], [], []
        for _ in range(args.rounds):
            cpu, values, per_get, reply_bytes = netconf_round(profile, args.gets, args.window)
            nc.append(cpu / values * 1e9)
            cpu, values, _, _ = netconf_round(frozen, args.gets, args.window)
            fr.append(cpu / values * 1e9)
            cpu, values, _, _ = netconf_round(profile, args.gets, args.window, extra=config)
            mixed.append(cpu / values * 1e9)
            cpu, values, _, _ = netconf_round(profile, max(args.gets // 20, 20), args.window, get=GET_LIBYANG)
            ly.append(cpu / values * 1e9)
            cpu, values, per_walk = snmp_round(profile, args.walks)
            sn.append(cpu / values * 1e9)
        print("interfaces %d: a get carries %d counters (%d bytes), a walk of ifTable+ifXTable %d"
              % (args.interfaces, per_get, reply_bytes, per_walk))
        print("NETCONF get: %.0f ns server CPU per counter value (median of %s)"
              % (statistics.median(nc), ", ".join("%.0f" % v for v in nc)))
        print("NETCONF get, frozen (uint64 types): %.0f ns per value (median of %s); moving adds %.0f"
              % (statistics.median(fr), ", ".join("%.0f" % v for v in fr),
                 statistics.median(nc) - statistics.median(fr)))
        print("NETCONF get, every interface in running too: %.0f ns per value (median of %s)"
              % (statistics.median(mixed), ", ".join("%.0f" % v for v in mixed)))
        print("NETCONF get by libyang (copy, merge, print; with-defaults report-all): %.0f ns per value "
              "(median of %s)" % (statistics.median(ly), ", ".join("%.0f" % v for v in ly)))
        print("SNMP walk:   %.0f ns server CPU per counter value (median of %s)"
              % (statistics.median(sn), ", ".join("%.0f" % v for v in sn)))
        print("NETCONF / SNMP: %.2f (state only), %.2f (joined with running), %.2f (libyang path)"
              % (statistics.median(nc) / statistics.median(sn), statistics.median(mixed) / statistics.median(sn),
                 statistics.median(ly) / statistics.median(sn)))
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
