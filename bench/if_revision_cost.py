#!/usr/bin/python3
"""What a device implementing ietf-interfaces 2014-05-08 costs against one implementing 2018-02-20
(issue 28): fleetsim --profile crs-x (144 interfaces) with a vendor folder holding Debian's 2014 files
and the test's two vendor modules (tests/integration/data/vendor_yang_2014), against the same without
a folder (fleetsim's 2018-02-20). Per revision: start-up time and RSS of --devices devices, then the
server's CPU per get of one device (one worker), for a get of /interfaces-state and for an unfiltered
get, --gets gets with 4 in flight. --rounds rounds, median (min-max)."""

import argparse
import os
import random
import shutil
import statistics
import tempfile

import fleetlib

YUMA = "/usr/share/yuma/modules/ietf"
DATA = os.path.join(fleetlib.repo_root(), "tests", "integration", "data", "vendor_yang_2014")
GETS = {
    "get /interfaces-state": '<get><filter type="subtree"><interfaces-state '
                             'xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"/></filter></get>',
    "get (unfiltered)": "<get/>",
}


def make_folder(tmp):
    folder = os.path.join(tmp, "yang2014")
    os.mkdir(folder)
    for name in ("ietf-interfaces@2014-05-08.yang", "iana-if-type@2014-05-08.yang"):
        shutil.copy(os.path.join(YUMA, name), folder)
    for name in os.listdir(DATA):
        shutil.copy(os.path.join(DATA, name), folder)
    return folder


def start(devices, args):
    """fleetsim on a random port range, drawn again while another run on the machine holds a port of it."""
    for _ in range(8):
        port = random.randrange(10000, 32000 - devices)
        try:
            proc, ready = fleetlib.start_fleet(["--device-count", str(devices), "--starting-port", str(port)]
                                               + args, timeout_s=300)
            return proc, ready, port
        except RuntimeError as e:
            if "already in use" not in str(e):
                raise
    raise RuntimeError("no free port range")


def startup(devices, extra):
    proc, ready, _ = start(devices, ["--snmp", "false", "--status-interval", "0", "--profile", "crs-x"] + extra)
    try:
        return fleetlib.startup_seconds(ready), fleetlib.rss_kib(proc.pid) / 1024.0
    finally:
        fleetlib.stop_fleet(proc)


def get_cpu_us(gets, extra):
    """{get name: server CPU per get in us} on one device."""
    proc, _, port = start(1, ["--threads", "1", "--snmp", "false", "--status-interval", "0", "--profile",
                              "crs-x"] + extra)
    out = {}
    try:
        client = fleetlib.Client("127.0.0.1", port)
        for name, body in GETS.items():
            client.call(body)
            cpu0 = fleetlib.cpu_seconds(proc.pid)
            client.pipeline(lambda i, body=body: body, gets, 4, b"in-octets")
            out[name] = (fleetlib.cpu_seconds(proc.pid) - cpu0) / gets * 1e6
        client.close()
    finally:
        fleetlib.stop_fleet(proc)
    return out


def summary(values, digits):
    return "%.*f (%.*f-%.*f)" % (digits, statistics.median(values), digits, min(values), digits, max(values))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--devices", type=int, default=10000)
    p.add_argument("--gets", type=int, default=500)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="fleetsim-ifrev-")
    try:
        revisions = {"2018-02-20": [], "2014-05-08": ["--schemas-dir", make_folder(tmp)]}
        rows = {rev: {"start-up s": [], "RSS MiB": []} for rev in revisions}
        for _ in range(args.rounds):
            for rev, extra in revisions.items():  # interleaved, so that the machine's load hits both alike
                s, rss = startup(args.devices, extra)
                rows[rev]["start-up s"].append(s)
                rows[rev]["RSS MiB"].append(rss)
                for name, us in get_cpu_us(args.gets, extra).items():
                    rows[rev].setdefault("CPU us per " + name, []).append(us)
        print("| %s | ietf-interfaces 2018-02-20 | 2014-05-08 | 2014 / 2018 |" % "measure")
        print("| --- | --- | --- | --- |")
        for key in rows["2018-02-20"]:
            new, old = rows["2018-02-20"][key], rows["2014-05-08"][key]
            print("| %s%s | %s | %s | %.2f |" % (key, " (%d devices)" % args.devices if "CPU" not in key else "",
                                               summary(new, 3 if "start" in key else 0),
                                               summary(old, 3 if "start" in key else 0),
                                               statistics.median(old) / statistics.median(new)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
