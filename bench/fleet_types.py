#!/usr/bin/python3
"""Two device types in one fleet (issue 14): does a fleet of two types cost more per device than a fleet
of one? Starts fleetsim --fleet FILE with (a) one group of N crs-x, (b) one group of N devices of
examples/vendor-yang (with examples/vendor-yang-config.xml), (c) N/2 of each; and each again with 1 device
a group as the baseline. Reports start-up time (fleetsim's readiness line), RSS once every device listens,
RSS per device beyond the baseline; then a light load (get-config over TCP and an SNMP get of sysDescr on
100 devices of each group) checks that each address range answers as its own type. Loopback only, every
step bounded in time.

  bench/fleet_types.py --devices 10000
"""

import argparse
import json
import os
import random
import socket
import tempfile
import time

import fleetlib
import snmplib

SYS_DESCR = "1.3.6.1.2.1.1.1.0"
ROOT = fleetlib.repo_root()
TYPES = {
    "crs-x": {"profile": "crs-x"},
    "vendor-yang": {"schemas-dir": os.path.join(ROOT, "examples", "vendor-yang"),
                    "initial-config-xml-file": os.path.join(ROOT, "examples", "vendor-yang-config.xml")},
}
FIRST_IP = {"crs-x": "127.1.0.1", "vendor-yang": "127.2.0.1"}  # one /16 a type: up to 65,000 devices


def ip_at(first, i):
    a = sum(int(x) << (8 * (3 - k)) for k, x in enumerate(first.split("."))) + i
    return ".".join(str((a >> s) & 255) for s in (24, 16, 8, 0))


def fleet_file(tmp, name, groups, nc_port, snmp_port):
    """Write a fleet file of groups [(type, count)]; return its path."""
    doc = {"fleetsim-fleet:fleet": {"group": []}}
    for t, count in groups:
        g = {"name": t, "device-count": count, "ip": FIRST_IP[t], "ip-per-device": True,
             "starting-port": nc_port, "snmp-starting-port": snmp_port, "ssh": False, "snmp": True}
        g.update(TYPES[t])
        doc["fleetsim-fleet:fleet"]["group"].append(g)
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    return path


def snmp_sysdescr(host, port, timeout_s=2.0):
    msg, off = snmplib.request("public", snmplib.GET, [snmplib.oid_parse(SYS_DESCR)])
    msg[off:off + 4] = (snmplib.REQID_BASE + random.randrange(1 << 20)).to_bytes(4, "big")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(timeout_s)
    try:
        for _ in range(3):
            s.sendto(msg, (host, port))
            try:
                data = s.recv(65535)
            except socket.timeout:
                continue
            _, err, vbs = snmplib.parse_full(data)
            if err or not vbs:
                raise RuntimeError("%s:%d: sysDescr error %d" % (host, port, err))
            return vbs[0][2].decode(errors="replace")
        raise RuntimeError("%s:%d: no SNMP reply" % (host, port))
    finally:
        s.close()


def check_group(t, count, nc_port, snmp_port, sample):
    """get-config and sysDescr on `sample` devices of the group spread over its range; raise unless every
    one answers as type t. Returns the number of devices checked."""
    idx = sorted(set(int(i * count / sample) for i in range(min(sample, count))))
    for i in idx:
        host = ip_at(FIRST_IP[t], i)
        c = fleetlib.Client(host, nc_port, timeout_s=10)
        hello_acme = "acme-router" in c.hello
        reply = c.call("<get-config><source><running/></source></get-config>").decode(errors="replace")
        c.close()
        descr = snmp_sysdescr(host, snmp_port)
        if "<rpc-error" in reply:
            raise RuntimeError("%s: get-config failed: %s" % (host, reply[:200]))
        if t == "crs-x" and ("Cisco" not in descr or hello_acme):
            raise RuntimeError("%s (crs-x): sysDescr %r, acme-router in hello: %s" % (host, descr, hello_acme))
        if t == "vendor-yang" and (not hello_acme or "urn:example:acme:router" not in reply
                                   or "Cisco" in descr):
            raise RuntimeError("%s (vendor-yang): acme-router in hello: %s, sysDescr %r" % (host, hello_acme, descr))
    return len(idx)


def run(tmp, name, groups, sample, load):
    nc_port = random.randrange(20000, 40000)
    snmp_port = nc_port + 1
    path = fleet_file(tmp, name, groups, nc_port, snmp_port)
    total = sum(c for _, c in groups)
    proc, ready = fleetlib.start_fleet(["--fleet", path, "--status-interval", "0"], timeout_s=120)
    try:
        res = {"devices": total, "startup": fleetlib.startup_seconds(ready), "rss": fleetlib.rss_kib(proc.pid)}
        if load:
            cpu0, t0 = fleetlib.cpu_seconds(proc.pid), time.time()
            res["checked"] = sum(check_group(t, c, nc_port, snmp_port, sample) for t, c in groups)
            res["load_s"] = time.time() - t0
            res["load_cpu"] = fleetlib.cpu_seconds(proc.pid) - cpu0
            res["rss_after"] = fleetlib.rss_kib(proc.pid)
    finally:
        fleetlib.stop_fleet(proc)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devices", type=int, default=10000, help="devices of each fleet (even)")
    ap.add_argument("--sample", type=int, default=100, help="devices of each group the light load checks")
    a = ap.parse_args()
    n = a.devices - a.devices % 2
    cases = [("a", "one type: crs-x", [("crs-x", n)]),
             ("b", "one type: vendor-yang", [("vendor-yang", n)]),
             ("c", "two types: crs-x + vendor-yang", [("crs-x", n // 2), ("vendor-yang", n // 2)])]
    rows = {}
    with tempfile.TemporaryDirectory(prefix="fleet_types.") as tmp:
        for key, label, groups in cases:
            base = run(tmp, key + "-base", [(t, 1) for t, _ in groups], a.sample, False)
            full = run(tmp, key, groups, a.sample, True)
            per_dev = (full["rss"] - base["rss"]) / (full["devices"] - base["devices"])
            rows[key] = (label, base, full, per_dev)
    print("| fleet | devices | start-up s | RSS MiB | RSS baseline MiB (devices) | RSS KiB/device | "
          "checked (get-config + sysDescr) | load s | load CPU s | RSS after load MiB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key, (label, base, full, per_dev) in rows.items():
        print("| (%s) %s | %d | %.3f | %.1f | %.1f (%d) | %.2f | %d | %.2f | %.2f | %.1f |" % (
            key, label, full["devices"], full["startup"], full["rss"] / 1024, base["rss"] / 1024,
            base["devices"], per_dev, full["checked"], full["load_s"], full["load_cpu"],
            full["rss_after"] / 1024))
    mean = (rows["a"][3] + rows["b"][3]) / 2
    print("\nratio (c) per device / mean of (a) and (b): %.3f (%.2f / %.2f KiB)" % (rows["c"][3] / mean,
                                                                             rows["c"][3], mean))
    mean_su = (rows["a"][2]["startup"] + rows["b"][2]["startup"]) / 2
    print("start-up (c) / mean of (a) and (b): %.3f" % (rows["c"][2]["startup"] / mean_su))


if __name__ == "__main__":
    main()
