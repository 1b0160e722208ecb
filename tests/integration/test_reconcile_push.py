"""fleetsim-stress reconcile against real collectors (issue 29 item 7).

A fleet sends syslog over TCP to Debian's rsyslog, started unprivileged with its own configuration,
which writes every line twice: in RFC 5424 form (RSYSLOG_SyslogProtocol23Format) and in the traditional
form (RSYSLOG_TraditionalFileFormat). reconcile --format syslog must say OK for every device from either
file; a line taken out must give LOSS for that device only, a line from a host the fleet does not have
PHANTOM, another run's tag must be left out by --run-tag, and --ordering must find no inversion on TCP
and one after two lines of a device are swapped; RFC 3164 lines keep tag and sequence in either file
form. A fleet sending v2c traps to snmptrapd -Lf FILE must
reconcile OK with --format snmptrapd.

Usage: test_reconcile_push.py <fleetsim> <fleetsim-stress>
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import fleetsim_harness as h
import test_syslog as ts

STRESS = None
RATE = 20  # lines per device per second: few enough to read every line back quickly
DEVICES = 4
LINE_5424 = re.compile(r'^<\d+>1 \S+ (\S+) ')


class ReconcilePushTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="fleetsim-recon-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.report = os.path.join(self.work, "report.json")

    def reconcile(self, received, fmt, *extra):
        p = subprocess.run([STRESS, "reconcile", "--sent", self.report, "--received", received, "--format", fmt]
                           + list(extra), capture_output=True, text=True, timeout=h.scaled(30))
        return p.returncode, p.stdout, p.stderr

    def classes(self, out):
        """{source: class} of reconcile's source lines."""
        got = {}
        for line in out.splitlines():
            m = re.match(r"^(OK|LOSS|DUP|MISSING|PHANTOM)\s+\w+ (\S+) ", line)
            if m:
                got[m.group(2)] = m.group(1)
        return got

    def write(self, name, lines):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write("".join(l + "\n" for l in lines))
        return path

    def syslog_run(self, extra=()):
        """A fleet's TCP syslog into rsyslog; returns (5424 lines, traditional lines, the report)."""
        rs = ts.Rsyslog(self.work, "rs", tcp=True)
        with open(rs.conf, "a") as f:
            f.write('if $inputname == "imtcp" then action(type="omfile" file="%s/trad.log"'
                    ' template="RSYSLOG_TraditionalFileFormat")\n' % rs.dir)
        rs.start(self)
        fleet = h.Fleet(devices=DEVICES, threads=2, ip_per_device=True,
                        extra=["--report", self.report, "--state-dir", os.path.join(self.work, "state"),
                               "--syslog-sink", "tcp://127.0.0.1:%d" % rs.tcp_port, "--syslog-rate", str(RATE),
                               "--run-tag", "recon-29"] + list(extra))
        fleet.start()
        self.addCleanup(fleet.kill)
        time.sleep(2)
        fleet.stop()
        with open(self.report) as f:
            report = json.load(f)
        total = sum(r["sent"] for d in report["devices"] for r in d["syslog_sinks"])
        self.assertGreater(total, DEVICES * RATE)
        h.wait_for(lambda: len(rs.lines("tcp")) >= total and len(rs.lines("trad")) >= total, 15)
        time.sleep(0.3)
        return rs.lines("tcp"), rs.lines("trad"), report

    def test_syslog_both_forms_ok_then_loss_phantom_and_order(self):
        lines, trad, report = self.syslog_run()
        hosts = {d["hostname"] for d in report["devices"]}
        self.assertEqual(len(hosts), DEVICES)
        p5424 = self.write("5424.log", lines)
        ptrad = self.write("trad.log", trad)
        # Every device OK from either form, and in order on TCP.
        for path in (p5424, ptrad):
            code, out, err = self.reconcile(path, "syslog", "--tolerance", "0")
            self.assertEqual(code, 0, out + err)
            self.assertEqual(self.classes(out), {x: "OK" for x in hosts}, out)
        manifest = os.path.join(self.work, "recon.json")
        code, out, err = self.reconcile(p5424, "syslog", "--run-tag", "recon-29", "--ordering", "--json", manifest)
        self.assertEqual(code, 0, out + err)
        self.assertIn("inversions (adjacent descents) 0", out)
        with open(manifest) as f:
            m = json.load(f)
        self.assertEqual(m["results"]["counts"]["OK"], DEVICES)
        self.assertEqual(m["results"]["received"], len(lines))
        self.assertEqual({d["source"] for d in m["devices"]}, hosts)
        # The run tag: another run's tag leaves nothing, so every device is MISSING.
        code, out, _ = self.reconcile(p5424, "syslog", "--run-tag", "another-run")
        self.assertEqual(code, 1)
        self.assertEqual(set(self.classes(out).values()), {"MISSING"}, out)
        self.assertIn("without the run tag %d" % len(lines), out)
        # One line taken out: LOSS for its device only.
        victim = LINE_5424.match(lines[len(lines) // 2]).group(1)
        code, out, _ = self.reconcile(self.write("loss.log", lines[:len(lines) // 2] + lines[len(lines) // 2 + 1:]),
                                      "syslog")
        self.assertEqual(code, 1)
        got = self.classes(out)
        self.assertEqual(got.pop(victim), "LOSS", out)
        self.assertEqual(set(got.values()), {"OK"}, out)
        # A line from a host the fleet does not have: PHANTOM for it, the devices stay OK.
        stranger = LINE_5424.sub("<13>1 2026-12-07T15:40:00Z stranger-host ", lines[0], count=1)
        code, out, _ = self.reconcile(self.write("phantom.log", lines + [stranger]), "syslog")
        self.assertEqual(code, 1)
        got = self.classes(out)
        self.assertEqual(got.pop("stranger-host"), "PHANTOM", out)
        self.assertEqual(set(got.values()), {"OK"}, out)
        # Two lines of one device swapped: one inversion, counts still OK, exit 1.
        first = [i for i, l in enumerate(lines) if LINE_5424.match(l).group(1) == victim][:2]
        swapped = list(lines)
        swapped[first[0]], swapped[first[1]] = swapped[first[1]], swapped[first[0]]
        code, out, _ = self.reconcile(self.write("swapped.log", swapped), "syslog", "--ordering")
        self.assertEqual(code, 1)
        self.assertEqual(set(self.classes(out).values()), {"OK"}, out)
        self.assertRegex(out, r"OK\s+syslog %s \(device \d+\) sent \d+ received \d+ inversions 1\n"
                         % re.escape(victim))
        self.assertIn("inversions (adjacent descents) 1", out)

    def test_rfc3164_traditional_file_keeps_tag_and_order(self):
        # fleetsim's 3164 text carries seq=N run=T, so rsyslog's traditional file keeps both.
        lines, trad, report = self.syslog_run(["--syslog-format", "rfc3164"])
        hosts = {d["hostname"] for d in report["devices"]}
        for path in (self.write("trad.log", trad), self.write("5424.log", lines)):
            code, out, err = self.reconcile(path, "syslog", "--run-tag", "recon-29", "--ordering")
            self.assertEqual(code, 0, out + err)
            self.assertEqual(self.classes(out), {x: "OK" for x in hosts}, out)
            self.assertIn("without the run tag 0", out)
            self.assertNotIn("without a sequence number", out)

    def test_snmptrapd_log_reconciles(self):
        self.snmptrapd_log_reconciles(ip_per_device=True)

    def test_snmptrapd_log_reconciles_devices_sharing_an_address_by_sys_name(self):
        """Without --ip-per-device every device's traps come from 127.0.0.1: each is told apart by the
        sysName.0 its traps carry, one line per device (issue 29 item 7)."""
        self.snmptrapd_log_reconciles(ip_per_device=False)

    def test_snmptrapd_log_keeps_only_the_runs_traps_by_run_tag(self):
        """--run-tag goes into every trap (fleetsimRunTag.0): reconcile --run-tag counts only the run's
        records in a log that also holds another run's (issue 29 items 6, 7)."""
        self.snmptrapd_log_reconciles(ip_per_device=True, run_tag="run-29")

    def snmptrapd_log_reconciles(self, ip_per_device, run_tag=None):
        trap_log = os.path.join(self.work, "traps.log")
        conf = os.path.join(self.work, "snmptrapd.conf")
        with open(conf, "w") as c:
            c.write("authCommunity log,execute,net public\ndisableAuthorization yes\n")
        port = h.free_port()
        trapd = subprocess.Popen(["snmptrapd", "-f", "-Lf", trap_log, "-C", "-c", conf, "-n",
                                  "udp:127.0.0.1:%d" % port], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: (trapd.terminate(), trapd.wait(timeout=10)))
        time.sleep(0.5)
        self.assertIsNone(trapd.poll(), "snmptrapd runs")
        tag = ["--run-tag", run_tag] if run_tag else []
        if run_tag:
            # Another run first, into the same log: its traps carry another tag.
            other = h.Fleet(devices=DEVICES, threads=2, ip_per_device=ip_per_device,
                            extra=["--flap-rate", "2", "--trap-sink", "127.0.0.1:%d" % port,
                                   "--run-tag", "another-run"])
            other.start()
            self.addCleanup(other.kill)
            time.sleep(1)
            other.stop()
        fleet = h.Fleet(devices=DEVICES, threads=2, ip_per_device=ip_per_device,
                        extra=["--report", self.report, "--flap-rate", "2", "--trap-sink", "127.0.0.1:%d" % port]
                        + tag)
        fleet.start()
        self.addCleanup(fleet.kill)
        time.sleep(2)
        fleet.stop()
        with open(self.report) as f:
            report = json.load(f)
        total = sum(r["sent"] for d in report["devices"] for r in d["trap_sinks"])
        self.assertGreater(total, 0)

        def logged():
            with open(trap_log, errors="replace") as f:
                return len(re.findall(r"\[UDP: \[", f.read()))
        h.wait_for(lambda: logged() >= total, 10)
        code, out, err = self.reconcile(trap_log, "snmptrapd", *tag)
        self.assertEqual(code, 0, out + err)
        key = "address" if ip_per_device else "hostname"
        sources = {d[key] for d in report["devices"] if sum(r["sent"] for r in d["trap_sinks"])}
        self.assertGreater(len(sources), 1 if ip_per_device else 2)
        self.assertEqual(self.classes(out), {a: "OK" for a in sources}, out)
        if run_tag:
            self.assertNotIn("without the run tag 0", out, "the other run's records were set aside")
            code, out, err = self.reconcile(trap_log, "snmptrapd")
            self.assertEqual(code, 1, "without --run-tag the other run's traps count too: " + out)


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2)
