"""The real collectors whose ceiling test_ceiling.py and bench/ceiling_bench.py measure.

SlowRsyslog is Debian's rsyslogd (started as test_syslog.Rsyslog starts it: -n, its own configuration
and work directory, no system socket) with one imudp input on loopback and one omfile action behind a
LinkedList action queue slowed by queue.dequeueSlowdown, one message per dequeue
(queue.dequeueBatchSize="1"), so the action drains at a known rate of a few hundred messages a second.
impstats (1 s, json, running totals) gives the probes, read by impstats_probe.py:
  point 2 (arrived)   the imudp input's `submitted`: only what arrived on the input the fleet sends to.
                      The main queue's `enqueued` would also count rsyslog's own messages (its start line).
  point 3 (persisted) the lines in the omfile's file (`wc -l`): the action's `processed` counts what
                      entered its queue (it equals the queue's `enqueued`, measured), not what was written.
  queue               the action queue's `size`: what waits behind the slowed dequeue.
The omfile template is RFC 5424 (RSYSLOG_SyslogProtocol23Format), so `--ordering FILE --format syslog`
reads the sequence ids back. The action queue is large enough that a burst is queued, not discarded.

StandinCollector runs standin_collector.py as a process (see that file) and gives its probes.
"""

import os
import subprocess
import time

import fleetsim_harness as h
import impstats_probe
import test_syslog as ts

ITEST_DIR = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(ITEST_DIR, "impstats_probe.py")
STANDIN = os.path.join(ITEST_DIR, "standin_collector.py")
PYTHON = "/usr/bin/python3"  # Debian's: the probes and the stand-in need nothing else
ACTION = "persist"  # the slowed omfile action's name in impstats (its queue: "persist queue")
QUEUE_SIZE = 500000  # action queue capacity in messages: a test's burst fits, nothing is discarded


class SlowRsyslog(ts.Rsyslog):
    """rsyslogd with one imudp input whose omfile action is slowed to about 1e6 / @slowdown_us msg/s."""

    def __init__(self, work, name, slowdown_us):
        super().__init__(work, name, udp=True)
        self.slowdown_us = slowdown_us
        self.out = os.path.join(self.dir, "persisted.log")
        self.stats_path = os.path.join(self.dir, "stats.log")
        lines = ['global(workDirectory="%s")' % self.dir,
                 'module(load="impstats" interval="1" format="json" log.syslog="off" resetCounters="off"'
                 ' log.file="%s")' % self.stats_path,
                 'module(load="imudp")',
                 'input(type="imudp" port="%d" address="127.0.0.1")' % self.udp_port,
                 # Only what arrived on the input is written: rsyslog's own lines would be persisted unsent.
                 'if $inputname == "imudp" then action(name="%s" type="omfile" file="%s"'
                 ' template="RSYSLOG_SyslogProtocol23Format" queue.type="LinkedList" queue.size="%d"'
                 ' queue.dequeueBatchSize="1" queue.dequeueSlowdown="%d")' % (ACTION, self.out, QUEUE_SIZE,
                                                                           slowdown_us)]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        # omfile creates its file with the first line; until then `wc -l <` would fail, not read 0.
        open(self.out, "a").close()

    def start(self, test):
        """Start it, and return once impstats wrote its first records: the probes read them from the start."""
        super().start(test)
        h.wait_for(lambda: None not in self.counters(), 10, "rsyslog's first impstats records")
        return self

    def input_name(self):
        return "imudp(127.0.0.1/%d/IPv4)" % self.udp_port

    def probe(self, name, field):
        """A `cmd:` probe printing impstats' latest @field of record @name."""
        return "cmd:%s -S %s %s '%s' %s" % (PYTHON, PROBE, self.stats_path, name, field)

    def shell_probe(self, name, field):
        """The same reading as probe() by tail, grep and sed: a few ms of CPU where Python's start-up
        costs tens (bench/ceiling_bench.py measures both)."""
        pattern = '"name": "%s"' % name.replace("/", "\\/")
        return ("cmd:tail -c %d %s | grep -F '%s' | tail -n 1 | sed -n 's/.*\"%s\": \\([0-9]*\\).*/\\1/p'"
                % (impstats_probe.TAIL_BYTES, self.stats_path, pattern, field))

    def file_probe(self, name, field):
        """The same reading as a `file:` probe: ceiling reads impstats' tail itself, no process per read.
        impstats writes '/' in a name as '\\/'; the name's other POSIX ERE metacharacters are escaped."""
        escaped = "".join("\\" + c if c in ".[]()*+?{}|^$\\" else c for c in name.replace("/", "\\/"))
        return 'file:%s:"name": "%s".*"%s": ([0-9]+)' % (self.stats_path, escaped, field)

    def probes(self, kind="file"):
        """{arrived, persisted, queue}: the probes of the three readings (module docstring): impstats read
        by `file:` probes, or by `cmd:` probes running impstats_probe.py (kind "cmd") or tail|grep|sed
        ("shell"); the persisted lines are counted by `wc -l` in every kind."""
        make = {"file": self.file_probe, "cmd": self.probe, "shell": self.shell_probe}[kind]
        return {"arrived": make(self.input_name(), "submitted"),
                "persisted": "cmd:wc -l < %s" % self.out,
                "queue": make(ACTION + " queue", "size")}

    def counters(self):
        """(submitted, lines written, action queue size) now; None where impstats has no record yet."""
        try:
            sub = impstats_probe.latest(self.stats_path, self.input_name(), "submitted")
            size = impstats_probe.latest(self.stats_path, ACTION + " queue", "size")
        except FileNotFoundError:
            sub = size = None
        return sub, self.persisted_lines(), size

    def persisted_lines(self):
        try:
            with open(self.out, "rb") as f:
                return sum(1 for _ in f)
        except FileNotFoundError:
            return 0


def measure_drain_rate(count_fn, limit_s, min_backlog):
    """The drain rate (messages/s) of a collector holding a backlog: @count_fn() gives what it persisted so
    far; the rate is fitted (least squares) over the readings while it keeps moving, within @limit_s.
    Waits first until @count_fn has moved, and needs @min_backlog messages drained to answer."""
    points = []
    deadline = time.monotonic() + h.scaled(limit_s)
    first = count_fn()
    last_change = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.25)
        n = count_fn()
        now = time.monotonic()
        points.append((now, n))
        if n != first:
            last_change = now
            first = n
        elif now - last_change > 2.0:
            break
    moving = [p for p in points if p[1] < points[-1][1]]
    if len(moving) < 4 or moving[-1][1] - moving[0][1] < min_backlog:
        raise AssertionError("no drain to measure: %r" % points[-8:])
    n = len(moving)
    mt = sum(p[0] for p in moving) / n
    mc = sum(p[1] for p in moving) / n
    num = sum((p[0] - mt) * (p[1] - mc) for p in moving)
    den = sum((p[0] - mt) ** 2 for p in moving)
    return num / den


class StandinCollector:
    """standin_collector.py as a process on free loopback ports; stopped at @test's cleanup."""

    def __init__(self, work, name, *args):
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        self.out = os.path.join(self.dir, "persisted.log")
        self.args = list(args)
        self.proc = None
        self.port = self.http_port = None

    def start(self, test=None):
        for _ in range(8):
            self.port, self.http_port = h.free_port(), h.free_port()
            log = open(os.path.join(self.dir, "standin.out"), "ab")
            self.proc = subprocess.Popen([PYTHON, STANDIN, "--port", str(self.port), "--http-port",
                                          str(self.http_port), "--out", self.out] + self.args,
                                         stdout=log, stderr=subprocess.STDOUT)
            log.close()
            if test:
                test.addCleanup(self.stop)
            h.wait_for(lambda: self.proc.poll() is not None or "standin_collector: udp" in self.output(), 10)
            if self.proc.poll() is None and "standin_collector: udp" in self.output():
                return self
            self.proc = None  # a port was taken meanwhile (exit 3): other ports
        raise AssertionError("standin_collector did not start: %s" % self.output())

    def output(self):
        with open(os.path.join(self.dir, "standin.out"), errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=h.scaled(10))
        self.proc = None

    def warm_up(self, fleet_base, sent_fn):
        """A few lines through the stand-in before a run, as a collector in service has seen: its service
        time and batch gauges have no series until a work unit was served, and ceiling checks every probe
        before it starts. The fleet at @fleet_base is silent again, and all it sent (@sent_fn) persisted,
        when this returns."""
        h.api_request(fleet_base, "/api/v1/groups/default/syslog-rate", {"rate": 2})
        time.sleep(1.5)
        h.api_request(fleet_base, "/api/v1/groups/default/syslog-rate", {"rate": 0})
        time.sleep(0.5)
        h.wait_for(lambda: self.metric("standin_persisted_total") == sent_fn() > 0, 20, "the warm-up lines")

    def base(self):
        return "http://127.0.0.1:%d" % self.http_port

    def probe(self, metric):
        """A `prom:` probe of @metric (an instant query of the stand-in's Prometheus API)."""
        return "prom:%s:%s" % (self.base(), metric)

    def metric(self, name):
        """The value of @name in /metrics now."""
        import urllib.request
        with urllib.request.urlopen(self.base() + "/metrics", timeout=h.scaled(5)) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(name + " "):
                    return float(line.split()[1])
        raise AssertionError("no %s in the stand-in's /metrics" % name)
