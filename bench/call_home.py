"""Call-home storm: N devices (--ip-per-device on 127.0.x.y) dial a local asyncio listener that accepts
each connection and reads the SSH version line; prints the time from fleetsim's start until all N
connected. Both processes need about N descriptors (the limit is raised to the hard limit).

Run: python3 bench/call_home.py build/fleetsim [N]   (default 10000)
"""

import asyncio
import resource
import socket
import subprocess
import sys
import time


async def main(binary, n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < n + 1000:
        sys.exit("descriptor limit %d is below %d" % (hard, n + 1000))
    got = 0
    done = asyncio.Event()
    conns = []

    async def on_conn(reader, writer):
        nonlocal got
        try:
            line = await asyncio.wait_for(reader.readline(), 30)
        except Exception:
            line = b""
        if line.startswith(b"SSH-"):
            got += 1
            conns.append(writer)
            if got == n:
                done.set()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = await asyncio.start_server(on_conn, "127.0.0.1", port, backlog=4096)
    started = time.monotonic()
    proc = subprocess.Popen([binary, "--device-count", str(n), "--ip", "127.0.1.1", "--ip-per-device",
                             "--snmp", "false", "--ssh", "true", "--threads", "2",
                             "--call-home", "127.0.0.1:%d" % port], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        await asyncio.wait_for(done.wait(), 120)
        print("%d devices called home (SSH banner read) in %.2f s" % (n, time.monotonic() - started))
    except asyncio.TimeoutError:
        print("only %d of %d devices called home within 120 s" % (got, n))
    finally:
        proc.terminate()
        proc.wait(30)
        server.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10000))
