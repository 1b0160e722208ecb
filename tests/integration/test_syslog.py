"""Syslog from every device (issue 29 item 1) into a real collector: Debian's rsyslog.

rsyslog runs unprivileged in each test with a configuration of its own on loopback ports of the
harness's range (imudp, imtcp, and imtcp over its ossl driver for TLS), writes what it received with
RSYSLOG_SyslogProtocol23Format, and counts it with impstats. The fleet's --report is the other side:
what rsyslog wrote per device must equal the ledger's `sent` per device and sink, sequence ids per
device are 1..N in order on TCP, host names and UDP source addresses are the devices', and every
ledger row adds up (emitted = sent + send_failures + dropped + suppressed_pre_window, nothing queued).
A TCP collector that restarts mid-run is reconnected to, and the counts still add up.

Usage: test_syslog.py <fleetsim>
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import fleetsim_harness as h

RSYSLOGD = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
OSSL_DRIVER = "/usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_ossl.so"
# <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG, as RSYSLOG_SyslogProtocol23Format writes it.
LINE_5424 = re.compile(r'^<(\d+)>1 (\S+) (\S+) (\S+) (\S+) (\S+) (\[.*?[^\\]\](?:\[.*?[^\\]\])*|-) ?(.*)$')
SEQ = re.compile(r'\[meta sequenceId="(\d+)"\]')
RUN = re.compile(r'\[fleetsim@32473 run="((?:[^"\\]|\\.)*)"\]')
RATE = 20  # lines per device per second in the counting tests: loopback UDP keeps up with far more


class Rsyslog:
    """One rsyslogd -n with its own configuration in @work, inputs on free ports (udp, tcp, tls)."""

    def __init__(self, work, name, udp=False, tcp=False, tls=None, tcp_port=None, tcp_template=None):
        self.work, self.name = work, name
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        self.udp_port = h.free_port() if udp else None
        self.tcp_port = tcp_port or (h.free_port() if tcp or tls else None)
        self.tls = tls
        self.proc = None
        self.log = None
        lines = ['global(workDirectory="%s"' % self.dir]
        if tls:
            lines[0] += (' defaultNetstreamDriverCAFile="%s" defaultNetstreamDriverCertFile="%s"'
                         ' defaultNetstreamDriverKeyFile="%s"' % tls)
        lines[0] += ")"
        lines.append('module(load="impstats" interval="1" format="json" log.syslog="off" resetCounters="off"'
                     ' log.file="%s/stats.log")' % self.dir)
        if udp:
            lines += ['module(load="imudp")', 'input(type="imudp" port="%d" address="127.0.0.1")' % self.udp_port]
        if tls:
            # The client must show a certificate that chains to the CA (RFC 5425 mutual authentication).
            lines += ['module(load="imtcp" streamDriver.name="ossl" streamDriver.mode="1"'
                      ' streamDriver.authMode="x509/certvalid")',
                      'input(type="imtcp" port="%d" address="127.0.0.1")' % self.tcp_port]
        elif tcp:
            lines += ['module(load="imtcp")', 'input(type="imtcp" port="%d" address="127.0.0.1")' % self.tcp_port]
        lines.append('template(name="source" type="string" string="%fromhost-ip% %hostname%\\n")')
        if tcp_template:
            lines.append('template(name="custom" type="string" string="%s")' % tcp_template)
        tcp_fmt = "custom" if tcp_template else "RSYSLOG_SyslogProtocol23Format"
        # rsyslog's own lines (start, stop) stay out of the files: only what arrived on an input is written.
        lines.append('if $inputname == "imudp" then {\n action(type="omfile" file="%s/udp.log"'
                     ' template="RSYSLOG_SyslogProtocol23Format")\n action(type="omfile" file="%s/udp_src.log"'
                     ' template="source")\n}' % (self.dir, self.dir))
        lines.append('if $inputname == "imtcp" then action(type="omfile" file="%s/tcp.log" template="%s")'
                     % (self.dir, tcp_fmt))
        self.conf = os.path.join(self.dir, "rsyslog.conf")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def start(self, test):
        self.log = open(os.path.join(self.dir, "rsyslogd.out"), "ab")
        self.proc = subprocess.Popen([RSYSLOGD, "-n", "-f", self.conf, "-i", os.path.join(self.dir, "pid")],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        test.addCleanup(self.stop)
        if self.tcp_port:
            h.wait_for(lambda: self._listening(self.tcp_port), 10, "rsyslog's TCP input on %d" % self.tcp_port)
        if self.udp_port:
            h.wait_for(lambda: self.stats("imudp(w0)") is not None or self._udp_bound(), 10, "rsyslog's UDP input")
        return self

    def _listening(self, port):
        if self.proc.poll() is not None:
            raise AssertionError("rsyslogd exited: %s" % self.output())
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    def _udp_bound(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind(("127.0.0.1", self.udp_port))
                return False
            except OSError:
                return True

    def output(self):
        with open(os.path.join(self.dir, "rsyslogd.out"), errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=h.scaled(10))
        self.proc = None
        if self.log:
            self.log.close()
            self.log = None

    def lines(self, which):
        try:
            with open(os.path.join(self.dir, which + ".log"), errors="replace") as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def stats(self, name):
        """The last impstats record whose name starts with @name ("imtcp(PORT)", "imudp(ADDR:PORT)"), or None."""
        last = None
        try:
            with open(os.path.join(self.dir, "stats.log"), errors="replace") as f:
                for line in f:
                    start = line.find("{")
                    if start >= 0:
                        rec = json.loads(line[start:])
                        if rec.get("name", "").startswith(name) and "submitted" in rec:
                            last = rec
        except FileNotFoundError:
            pass
        return last


def parse_5424(lines):
    """{host: [(seq, run tag or None, msg)]} of RSYSLOG_SyslogProtocol23Format lines, in file order."""
    out = {}
    for line in lines:
        m = LINE_5424.match(line)
        if not m:
            raise AssertionError("not an RFC 5424 line: %r" % line)
        seq = SEQ.search(m.group(7))
        run = RUN.search(m.group(7))
        if not seq:
            raise AssertionError("no [meta sequenceId] in %r" % line)
        out.setdefault(m.group(3), []).append((int(seq.group(1)), run.group(1) if run else None, m.group(8)))
    return out


def rows(report, sink):
    """{device index: ledger row of @sink}."""
    out = {}
    for dev in report["devices"]:
        for row in dev.get("syslog_sinks", []):
            if row["sink"] == sink:
                out[dev["device"]] = row
    return out


class SyslogTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="fleetsim-syslog-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.report = os.path.join(self.work, "report.json")

    def fleet(self, devices, extra):
        fleet = h.Fleet(devices=devices, threads=2, ip_per_device=True,
                        extra=["--report", self.report, "--state-dir", os.path.join(self.work, "state")] + extra)
        fleet.start()
        self.addCleanup(fleet.kill)
        return fleet

    def load_report(self):
        with open(self.report) as f:
            return json.load(f)

    def assert_ledger_closed(self, report):
        for dev in report["devices"]:
            for row in dev.get("syslog_sinks", []):
                self.assertEqual(row["sent"], row["in_window"] + row["drain"], row)
                self.assertEqual(row["queued"], 0, row)
                self.assertEqual(row["emitted"], row["sent"] + row["send_failures"] + row["dropped"]
                                 + row["suppressed_pre_window"], row)

    def wait_written(self, rs, which, total):
        h.wait_for(lambda: len(rs.lines(which)) >= total, 15)
        time.sleep(0.3)  # nothing more may come: a duplicate would show now
        return rs.lines(which)

    def test_udp_and_tcp_lines_equal_the_ledger_per_device(self):
        rs = Rsyslog(self.work, "rs", udp=True, tcp=True).start(self)
        udp, tcp = "udp://127.0.0.1:%d" % rs.udp_port, "tcp://127.0.0.1:%d" % rs.tcp_port
        fleet = self.fleet(4, ["--profile", "crs-x", "--syslog-sink", udp, "--syslog-sink", tcp,
                               "--syslog-rate", str(RATE), "--run-tag", "itest-29"])
        started = time.monotonic()
        time.sleep(3)
        fleet.stop()
        elapsed = time.monotonic() - started
        report = self.load_report()
        self.assertEqual(report["run_tag"], "itest-29")
        self.assert_ledger_closed(report)
        hosts = {i: "crs-x-%d" % i for i in range(4)}
        for sink, which, source in ((tcp, "tcp", "imtcp(%d)" % rs.tcp_port),
                                    (udp, "udp", "imudp(")):
            ledger = rows(report, sink)
            self.assertEqual(sorted(ledger), [0, 1, 2, 3])
            total = sum(r["sent"] for r in ledger.values())
            got = parse_5424(self.wait_written(rs, which, total))
            self.assertEqual(set(got), set(hosts.values()), "host names are the devices'")
            for i, row in ledger.items():
                lines = got[hosts[i]]
                self.assertEqual(len(lines), row["sent"], "%s device %d: rsyslog wrote what the ledger sent" % (sink, i))
                self.assertEqual(row["emitted"], row["sent"], row)
                # A constant rate from the first line on: RATE per second, one period of phase at most.
                self.assertGreaterEqual(row["sent"], int(RATE * (elapsed - 1.5)), row)
                self.assertLessEqual(row["sent"], int(RATE * (elapsed + 0.5)) + 1, row)
                seqs = [s for s, _, _ in lines]
                if which == "tcp":
                    self.assertEqual(seqs, list(range(1, row["sent"] + 1)), "TCP keeps each device's order")
                else:
                    self.assertEqual(sorted(seqs), list(range(1, row["sent"] + 1)))
                self.assertTrue(all(run == "itest-29" for _, run, _ in lines))
                self.assertTrue(all(msg.startswith("%") for _, _, msg in lines), lines[:3])
            # impstats, rsyslog's own counter of what its input submitted, agrees.
            h.wait_for(lambda: (rs.stats(source) or {}).get("submitted") == total, 5)
            self.assertEqual((rs.stats(source) or {}).get("submitted"), total, rs.stats(source))
        # Each device's datagrams leave from its own address.
        for line in rs.lines("udp_src"):
            addr, host = line.split()
            self.assertEqual(addr, "127.0.0.%d" % (1 + int(host.rsplit("-", 1)[1])), line)

    def test_rfc3164_with_lf_framing(self):
        rs = Rsyslog(self.work, "rs", tcp=True,
                     tcp_template="%hostname%|%syslogtag%|%msg%\\n").start(self)
        tcp = "tcp://127.0.0.1:%d" % rs.tcp_port
        fleet = self.fleet(2, ["--syslog-sink", tcp, "--syslog-rate", str(RATE), "--syslog-format", "rfc3164",
                               "--syslog-framing", "lf", "--run-tag", "t3164"])
        time.sleep(2)
        fleet.stop()
        report = self.load_report()
        self.assert_ledger_closed(report)
        ledger = rows(report, tcp)
        lines = self.wait_written(rs, "tcp", sum(r["sent"] for r in ledger.values()))
        per_host = {}
        for line in lines:
            host, tag, msg = line.split("|", 2)
            m = re.match(r"^ ?seq=(\d+) run=t3164 ", msg)
            self.assertTrue(m, line)
            self.assertTrue(tag.endswith(":"), line)
            per_host.setdefault(host, []).append(int(m.group(1)))
        self.assertEqual(sorted(per_host), ["device-0", "device-1"])
        for i, row in ledger.items():
            self.assertEqual(per_host["device-%d" % i], list(range(1, row["sent"] + 1)))

    def test_tcp_collector_restart_is_reconnected_and_counted(self):
        rs1 = Rsyslog(self.work, "rs1", tcp=True).start(self)
        tcp = "tcp://127.0.0.1:%d" % rs1.tcp_port
        fleet = self.fleet(3, ["--syslog-sink", tcp, "--syslog-rate", "50", "--log-level", "info"])
        h.wait_for(lambda: len(rs1.lines("tcp")) >= 30, 10, "lines before the restart")
        rs1.stop()
        time.sleep(1.5)  # the fleet notices, queues, and retries with backoff meanwhile
        rs2 = Rsyslog(self.work, "rs2", tcp=True, tcp_port=rs1.tcp_port).start(self)
        h.wait_for(lambda: len(rs2.lines("tcp")) >= 60, 15, "lines after the restart")
        log = fleet.log()
        fleet.stop()
        self.assertIn("connection lost", log)
        report = self.load_report()
        self.assert_ledger_closed(report)
        ledger = rows(report, tcp)
        before, after = parse_5424(rs1.lines("tcp")), parse_5424(self.wait_written(rs2, "tcp", 60))
        for i, row in ledger.items():
            host = "device-%d" % i
            seqs = [s for s, _, _ in before.get(host, [])] + [s for s, _, _ in after.get(host, [])]
            # What the collector wrote is what reached the wire, at most: bytes a dying collector had not read
            # are the kernel's, and TCP cannot say more. Never a line twice, never out of order.
            self.assertLessEqual(len(seqs), row["sent"], row)
            self.assertEqual(seqs, sorted(set(seqs)), "no duplicate, no reordering")
            self.assertTrue(after.get(host), "device %d sends again after the reconnect" % i)
            # The lines queued while the collector was away went out after it came back.
            self.assertGreater(row["sent"], len(before.get(host, [])))

    @unittest.skipUnless(os.path.exists(OSSL_DRIVER), "rsyslog's ossl netstream driver (rsyslog-openssl) missing")
    def test_tls_into_rsyslog_with_the_fleets_ca(self):
        state = os.path.join(self.work, "state")
        # The fleet's CA (made by fleetsim in its state folder) signs the collector's certificate too.
        code, out = h.run_fleetsim(["--state-dir", state, "--issue-client-cert", "probe", "--out",
                                    os.path.join(self.work, "probe")])
        self.assertEqual(code, 0, out)
        ca, ca_key = os.path.join(state, "tls", "ca.pem"), os.path.join(state, "tls", "ca.key")
        srv_key, srv_csr, srv = (os.path.join(self.work, n) for n in ("srv.key", "srv.csr", "srv.pem"))
        ext = os.path.join(self.work, "ext.cnf")
        with open(ext, "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        for cmd in (["openssl", "ecparam", "-genkey", "-name", "prime256v1", "-noout", "-out", srv_key],
                    ["openssl", "req", "-new", "-key", srv_key, "-subj", "/CN=collector", "-out", srv_csr],
                    ["openssl", "x509", "-req", "-in", srv_csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
                     "-days", "2", "-extfile", ext, "-out", srv]):
            subprocess.run(cmd, check=True, capture_output=True)
        rs = Rsyslog(self.work, "rs", tls=(ca, srv, srv_key)).start(self)
        tls = "tls://127.0.0.1:%d" % rs.tcp_port
        fleet = self.fleet(2, ["--syslog-sink", tls, "--syslog-rate", str(RATE), "--run-tag", "tls"])
        time.sleep(2.5)
        fleet.stop()
        report = self.load_report()
        self.assert_ledger_closed(report)
        ledger = rows(report, tls)
        total = sum(r["sent"] for r in ledger.values())
        self.assertGreater(total, 0, "nothing went over TLS: %s" % rs.output())
        got = parse_5424(self.wait_written(rs, "tcp", total))
        for i, row in ledger.items():
            self.assertEqual([s for s, _, _ in got["device-%d" % i]], list(range(1, row["sent"] + 1)))

    def test_fleet_file_groups_and_silence_without_a_rate(self):
        rs = Rsyslog(self.work, "rs", udp=True, tcp=True).start(self)
        udp, tcp = "udp://127.0.0.1:%d" % rs.udp_port, "tcp://127.0.0.1:%d" % rs.tcp_port
        port = h.free_port()
        doc = {"fleetsim-fleet:fleet": {"group": [
            {"name": "talk", "device-count": 2, "ip": "127.0.3.1", "ip-per-device": True, "starting-port": port,
             "snmp-starting-port": port, "ssh": False, "syslog-sink": [udp], "syslog-rate": "10"},
            # A sink but no rate: only what happens to the devices (a flap) is said.
            {"name": "quiet", "device-count": 2, "ip": "127.0.4.1", "ip-per-device": True, "starting-port": port,
             "snmp-starting-port": port, "ssh": False, "syslog-sink": [tcp], "flap-rate": "4"},
            {"name": "none", "device-count": 1, "ip": "127.0.5.1", "ip-per-device": True, "starting-port": port,
             "snmp-starting-port": port, "ssh": False}]}}
        path = os.path.join(self.work, "fleet.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        log_path = os.path.join(self.work, "fleet.log")
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([h.BINARY, "--fleet", path, "--report", self.report, "--state-dir",
                                     os.path.join(self.work, "state")], stdout=log, stderr=log)
        self.addCleanup(lambda: proc.poll() is None and (proc.kill(), proc.wait()))
        def log_text():
            with open(log_path, errors="replace") as f:
                return f.read()

        h.wait_for(lambda: h.READY_TEXT in log_text() or proc.poll() is not None, 30)
        self.assertIsNone(proc.poll(), log_text())
        time.sleep(2.5)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=h.scaled(20)), 0, log_text())
        report = self.load_report()
        self.assert_ledger_closed(report)
        by_group = {}
        for dev in report["devices"]:
            by_group.setdefault(dev["group"], []).append(dev)
        self.assertTrue(all("syslog_sinks" not in d for d in by_group["none"]), "a group without a sink has no rows")
        talk = sum(d["syslog_sinks"][0]["sent"] for d in by_group["talk"])
        quiet = [d["syslog_sinks"][0] for d in by_group["quiet"]]
        self.assertGreater(talk, 20)
        got_udp = parse_5424(self.wait_written(rs, "udp", talk))
        self.assertEqual(set(got_udp), {"device-0", "device-1"})
        # The quiet group sent only flap lines, as many as it flapped, each naming the interface.
        flaps = sum(r["sent"] for r in quiet)
        got_tcp = parse_5424(self.wait_written(rs, "tcp", flaps)) if flaps else {}
        self.assertEqual(sum(len(v) for v in got_tcp.values()), flaps)
        for lines in got_tcp.values():
            for _, _, msg in lines:
                self.assertRegex(msg, r"^interface \S+ \(ifIndex \d+\): link (down|up)$")


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
