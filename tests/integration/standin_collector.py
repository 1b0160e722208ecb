"""A stand-in syslog collector of the tests that batches per source, as the ceiling method's OpenNMS
example does (../shared/reference: ~3 ms + 6.7 ms per message per work unit, 500 ms flush).

UDP syslog comes in on one socket; each line goes to its source's pending list (the HOSTNAME field of
an RFC 5424 or RFC 3164 line). Every flush interval each source's pending lines become work units (at
most --batch-max lines each, 0: no cap) on the work queue. N workers each take a unit, sleep the fixed
service time, then per line the per-message time and append the line to --out: lines persist as they
are served, like rows inserted one by one, so two workers serving one source at once interleave it.

Counters, on --http-port, as Prometheus text (/metrics) and as a minimal Prometheus HTTP API
(/api/v1/query?query=NAME or sum(NAME), the real JSON shape), so `prom:` probes read them:
  standin_arrived_total     lines read from the socket (point 2)
  standin_persisted_total   lines written to --out (point 3)
  standin_queue_messages    arrived - persisted: pending, queued and in service
  standin_service_time_ms   mean wall time of one work unit, over the units ended in the last 10 s
  standin_batch_messages    mean lines per work unit, same units
  standin_workers           the worker count
  standin_rcvbuf_drops_total  datagrams the kernel dropped on this socket (/proc/net/udp `drops`)

Modes: --split-workers (2 workers; a source's units go to them alternately, each worker its own queue,
so one device's lines can persist out of order); --rcvbuf BYTES with --read-delay-ms MS (a small
receive buffer and a slow reader: the kernel drops datagrams, arrived < sent).

Usage: standin_collector.py --port P --http-port H --out FILE [--flush-ms 500] [--fixed-ms 3]
       [--per-msg-ms 6.7] [--workers 1] [--batch-max 0] [--split-workers] [--rcvbuf B] [--read-delay-ms MS]
"""

import argparse
import collections
import http.server
import json
import queue
import re
import signal
import socket
import sys
import threading
import time
import urllib.parse

RECENT_S = 10.0  # the service-time and batch means cover the units ended this long ago at most
# <PRI>1 TIMESTAMP HOSTNAME (RFC 5424) or <PRI>Mmm dd hh:mm:ss HOSTNAME (RFC 3164)
HOST_5424 = re.compile(rb"^<\d+>1 \S+ (\S+) ")
HOST_3164 = re.compile(rb"^<\d+>\w{3} [ \d]\d \d\d:\d\d:\d\d (\S+) ")


class Collector:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.pending = collections.OrderedDict()  # source -> [lines] not yet in a work unit
        self.arrived = 0
        self.persisted = 0
        self.recent = collections.deque()  # (end time, service ms, lines) of units ended lately
        self.last_service_ms = None  # of the last unit: the gauge's value once the recent window is empty
        self.last_batch = None
        self.workers = 2 if args.split_workers else args.workers
        self.queues = [queue.Queue() for _ in range(self.workers if args.split_workers else 1)]
        self.turn = {}  # split mode: source -> the worker its next unit goes to
        self.out = open(args.out, "ab", buffering=0)
        self.out_lock = threading.Lock()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        if args.rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
        self.sock.bind((args.host, args.port))
        self.stop = threading.Event()

    # -- reading
    def receive(self):
        while not self.stop.is_set():
            data = self.sock.recv(65535)
            for line in data.splitlines():
                m = HOST_5424.match(line) or HOST_3164.match(line)
                source = m.group(1) if m else b"-"
                with self.lock:
                    self.arrived += 1
                    self.pending.setdefault(source, []).append(line)
            if self.args.read_delay_ms:
                time.sleep(self.args.read_delay_ms / 1000.0)

    # -- batching
    def flush(self):
        while not self.stop.wait(self.args.flush_ms / 1000.0):
            with self.lock:
                pending, self.pending = self.pending, collections.OrderedDict()
            cap = self.args.batch_max or None
            for source, lines in pending.items():
                step = cap or len(lines)
                for i in range(0, len(lines), step):
                    self.queue_for(source).put(lines[i:i + step])

    def queue_for(self, source):
        if not self.args.split_workers:
            return self.queues[0]
        k = self.turn.get(source, 0)
        self.turn[source] = (k + 1) % len(self.queues)
        return self.queues[k]

    # -- serving
    def work(self, q):
        while not self.stop.is_set():
            try:
                unit = q.get(timeout=0.2)
            except queue.Empty:
                continue
            started = time.monotonic()
            time.sleep(self.args.fixed_ms / 1000.0)
            for line in unit:
                time.sleep(self.args.per_msg_ms / 1000.0)
                with self.out_lock:
                    self.out.write(line + b"\n")
                with self.lock:
                    self.persisted += 1
            ended = time.monotonic()
            with self.lock:
                self.last_service_ms = (ended - started) * 1000.0
                self.last_batch = len(unit)
                self.recent.append((ended, self.last_service_ms, len(unit)))

    # -- counters
    def rcvbuf_drops(self):
        """The socket's `drops` column of /proc/net/udp (local address 127.0.0.1:port)."""
        local = "%08X:%04X" % (int.from_bytes(socket.inet_aton(self.args.host), "little"), self.args.port)
        with open("/proc/net/udp") as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                if cols[1] == local:
                    return int(cols[-1])
        return 0

    def values(self):
        now = time.monotonic()
        with self.lock:
            while self.recent and self.recent[0][0] < now - RECENT_S:
                self.recent.popleft()
            units = list(self.recent)
            arrived, persisted = self.arrived, self.persisted
            service, batch = self.last_service_ms, self.last_batch
        if units:
            service = sum(u[1] for u in units) / len(units)
            batch = sum(u[2] for u in units) / len(units)
        out = collections.OrderedDict()
        out["standin_arrived_total"] = arrived
        out["standin_persisted_total"] = persisted
        out["standin_queue_messages"] = arrived - persisted
        out["standin_service_time_ms"] = service  # None until a unit was served: no sample, not 0
        out["standin_batch_messages"] = batch
        out["standin_workers"] = self.workers
        out["standin_rcvbuf_drops_total"] = self.rcvbuf_drops()
        return out


def handler(collector):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, code, body, ctype):
            raw = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            values = collector.values()
            if url.path == "/metrics":
                text = "".join("%s %s\n" % (k, v) for k, v in values.items() if v is not None)
                return self.reply(200, text, "text/plain; version=0.0.4")
            if url.path != "/api/v1/query":
                return self.reply(404, "not found\n", "text/plain")
            q = urllib.parse.parse_qs(url.query).get("query", [""])[0].strip()
            m = re.match(r"^(?:sum\((\w+)\)|(\w+))$", q)
            if not m:
                body = {"status": "error", "errorType": "bad_data", "error": "unsupported query %r" % q}
                return self.reply(400, json.dumps(body), "application/json")
            name = m.group(1) or m.group(2)
            result = []
            if values.get(name) is not None:
                result.append({"metric": {} if m.group(1) else {"__name__": name},
                               "value": [round(time.time(), 3), repr(float(values[name]))]})
            body = {"status": "success", "data": {"resultType": "vector", "result": result}}
            return self.reply(200, json.dumps(body), "application/json")
    return Handler


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--http-port", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--flush-ms", type=float, default=500.0)
    p.add_argument("--fixed-ms", type=float, default=3.0)
    p.add_argument("--per-msg-ms", type=float, default=6.7)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--batch-max", type=int, default=0)
    p.add_argument("--split-workers", action="store_true")
    p.add_argument("--rcvbuf", type=int, default=0)
    p.add_argument("--read-delay-ms", type=float, default=0.0)
    args = p.parse_args()
    try:
        c = Collector(args)
        server = http.server.ThreadingHTTPServer((args.host, args.http_port), handler(c))
    except OSError as e:
        sys.stderr.write("standin_collector: %s\n" % e)
        return 3
    threads = [threading.Thread(target=c.receive, daemon=True), threading.Thread(target=c.flush, daemon=True)]
    for i in range(c.workers):
        threads.append(threading.Thread(target=c.work, args=(c.queues[i % len(c.queues)],), daemon=True))
    threads.append(threading.Thread(target=server.serve_forever, daemon=True))
    for t in threads:
        t.start()
    signal.signal(signal.SIGTERM, lambda *a: c.stop.set())
    signal.signal(signal.SIGINT, lambda *a: c.stop.set())
    sys.stdout.write("standin_collector: udp %s:%d, http %d, %d worker(s)\n" % (args.host, args.port,
                                                                             args.http_port, c.workers))
    sys.stdout.flush()
    c.stop.wait()
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
