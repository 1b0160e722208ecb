#!/usr/bin/python3
"""What an edit costs when the schema has a constraint spanning the tree: a
list whose entries reference each other by leafref (bench/schemas). Such a
module is validated whole by libyang after every edit, so the cost grows
with the module's data; compare with edit_cpu.py (ietf-interfaces, flat)."""

import argparse
import os
import random

import fleetlib

NS = "urn:fleetsim:yang:bench-constrained"


def body(items_xml):
    return ('<edit-config><target><running/></target><config><items xmlns="%s">%s</items></config>'
            "</edit-config>" % (NS, items_xml))


def item(i, peer=None):
    return "<item><id>%d</id>%s</item>" % (i, "<peer>%d</peer>" % peer if peer is not None else "")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sizes", default="0,1000,10000")
    p.add_argument("--edits", type=int, default=500)
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    port = random.randrange(10000, 32000 - len(sizes))
    schemas = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")
    proc, _ = fleetlib.start_fleet(["--device-count", str(len(sizes)), "--threads", "1", "--starting-port",
                                    str(port), "--schemas-dir", schemas])
    try:
        print("edit-config creating one entry with a leafref, %d edits per size:" % args.edits)
        for d, size in enumerate(sizes):
            c = fleetlib.Client("127.0.0.1", port + d)
            for start in range(0, size, 5000):
                reply = c.call(body("".join(item(i) for i in range(start, min(size, start + 5000)))))
                if b"<ok/>" not in reply:
                    raise RuntimeError(reply[:300])
            cpu0 = fleetlib.cpu_seconds(proc.pid)
            for n in range(args.edits):
                reply = c.call(body(item(10000000 + n, peer=0 if size else None)))
                if b"<ok/>" not in reply:
                    raise RuntimeError(reply[:300])
            per_edit = (fleetlib.cpu_seconds(proc.pid) - cpu0) / args.edits * 1e6
            print("  holding %6d entries: %9.1f server CPU-us per edit" % (size, per_edit))
            c.close()
    finally:
        fleetlib.stop_fleet(proc)


if __name__ == "__main__":
    main()
