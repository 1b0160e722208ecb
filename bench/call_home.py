#!/usr/bin/python3
"""A call-home storm: --devices devices (an address each on 127.0.x.y, --ip-per-device) dial out to a
local listener at once (or at --rate per second), and the time until every one of them is connected is
measured: connected means the listener accepted the connection and read the device's first bytes (its
SSH version line, as an RFC 8071 manager reads before it starts the SSH client). The listener is an
asyncio server in this process with a backlog of 4096; fleetsim's server CPU time is read from /proc.
Issue 17's bar: 10,000 devices all connected within 30 s.

Run: /usr/bin/python3 bench/call_home.py [--devices 10000] [--rate 0]
"""

import argparse
import asyncio
import shutil
import socket
import tempfile
import threading
import time

import fleetlib


async def storm(args):
    connected = set()
    first_bytes = {}
    done = asyncio.Event()

    async def on_connect(reader, writer):
        peer = writer.get_extra_info("peername")[0]
        try:
            line = await asyncio.wait_for(reader.readline(), 60)
        except (asyncio.TimeoutError, ConnectionError):
            line = b""
        if line.startswith(b"SSH-2.0-"):
            connected.add(peer)
            first_bytes[peer] = line
            if len(connected) >= args.devices:
                done.set()
        try:
            await reader.read()  # hold the connection, as a manager holds its session
        except ConnectionError:
            pass

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    port = sock.getsockname()[1]
    state_dir = tempfile.mkdtemp(prefix="fleetsim-callhome-")
    server = await asyncio.start_server(on_connect, sock=sock, backlog=4096)
    extra = ["--device-count", str(args.devices), "--ip", "127.0.100.1", "--ip-per-device", "--starting-port",
             "17830", "--snmp", "false", "--status-interval", "0", "--ssh", "true", "--state-dir", state_dir,
             "--call-home", "127.0.0.1:%d" % port]
    if args.rate:
        extra += ["--call-home-rate", str(args.rate)]
    proc, _ = fleetlib.start_fleet(extra)
    # keep reading its log, so that a full pipe never stalls it
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
    t0 = time.monotonic()
    cpu0 = fleetlib.cpu_seconds(proc.pid)
    try:
        try:
            await asyncio.wait_for(done.wait(), args.limit)
        except asyncio.TimeoutError:
            pass
        elapsed = time.monotonic() - t0
        cpu = fleetlib.cpu_seconds(proc.pid) - cpu0
    finally:
        fleetlib.stop_fleet(proc)
        server.close()
        shutil.rmtree(state_dir, ignore_errors=True)
    print("%d devices, --call-home-rate %s: %d connected (SSH version line read) in %.2f s; fleetsim CPU %.2f s"
          " (%.0f us per device)" % (args.devices, args.rate or "unbounded", len(connected), elapsed, cpu,
                                      cpu * 1e6 / max(len(connected), 1)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", type=int, default=10000)
    ap.add_argument("--rate", type=float, default=0, help="--call-home-rate (0: none)")
    ap.add_argument("--limit", type=float, default=120, help="give up after this many seconds")
    asyncio.run(storm(ap.parse_args()))


if __name__ == "__main__":
    main()
