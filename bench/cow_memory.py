#!/usr/bin/python3
"""Memory of copy-on-write datastores: RSS of --devices devices started
with an initial configuration of --template-entries interfaces, before and
after one edit on every device (the first edit copies the template)."""

import argparse
import os
import random
import tempfile

import fleetlib


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--template-entries", default="0,10,100")
    args = p.parse_args()
    print("%-10s %-9s %14s %14s %18s" % ("template", "devices", "RSS before MiB", "RSS after MiB", "KiB per edited"))
    for entries in [int(x) for x in args.template_entries.split(",")]:
        with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
            f.write('<interfaces xmlns="%s">%s</interfaces>'
                    % (fleetlib.IF_NS, "".join(fleetlib.interface_xml("t%d" % i) for i in range(entries))))
            path = f.name
        port = random.randrange(10000, 32000 - args.devices)
        proc, _ = fleetlib.start_fleet(["--device-count", str(args.devices), "--starting-port", str(port),
                                        "--initial-config-xml-file", path])
        try:
            before = fleetlib.rss_kib(proc.pid)
            for i in range(args.devices):
                c = fleetlib.Client("127.0.0.1", port + i)
                reply = c.call(fleetlib.edit_body(fleetlib.interface_xml("new")))
                if b"<ok/>" not in reply:
                    raise RuntimeError(reply[:300])
                c.close()
            after = fleetlib.rss_kib(proc.pid)
        finally:
            fleetlib.stop_fleet(proc)
            os.unlink(path)
        print("%-10d %-9d %14.1f %14.1f %18.2f" % (entries, args.devices, before / 1024, after / 1024,
                                                    (after - before) / args.devices))


if __name__ == "__main__":
    main()
