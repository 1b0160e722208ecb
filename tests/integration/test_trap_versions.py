"""SNMP traps v1 and v3 from every device (issue 29 item 3) into net-snmp's snmptrapd.

snmptrapd runs in each test on a free loopback port with a configuration of its own and prints every
trap on one line (-F): agent-addr, enterprise, generic and specific trap (v1), the transport source and
the varbinds. v1: agent-addr is each device's own address (--ip-per-device), enterprise snmpTraps with
generic linkDown (2) or linkUp (3) (RFC 3584 3.2), and per device the count snmptrapd printed equals the
fleet's `sent`. v3: one createUser -e ENGINEID per device (the device's engine is authoritative for its
traps); authPriv traps are decrypted and printed with the device's objects, and the counts match; a
user with another password gets nothing printed while the fleet still says what it sent. v3 informs:
snmptrapd's own user (no -e): the fleet discovers its engine (RFC 3414 4) and counts what it
acknowledged; with a wrong password they time out; to a sink that never answers the discovery they
count as send_failures. --trap-rate: the built-in catalog's traps, paced, counted per device as
snmptrapd printed them; per group of a fleet file, with the group's own catalog. Refusals at start:
v1 with informs, v3 without a user.

Usage: test_trap_versions.py <fleetsim>
"""

import json
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest

import fleetsim_harness as h

LINE = re.compile(r"^T (\S+)\|(\S+)\|(\d+)\|(\d+)\|UDP: \[([\d.]+)\]:\d+->\S+\|(.*)$", re.M)
SNMP_TRAPS = ".1.3.6.1.6.3.1.1.5"
LINK_TRAPS = (".1.3.6.1.6.3.1.1.5.3", ".1.3.6.1.6.3.1.1.5.4")
DEVICES = 3
FLAP_RATE = "4"  # flaps per device per second: a few traps each within a second or two


def engine_id(index):
    """The device's snmpEngineID as fleetsim's agents answer it (8000000005 'fleet' index)."""
    return "0x8000000005" + b"fleet".hex() + "%08x" % index


class TrapVersions(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="fleetsim-trapver-")

    def trapd(self, conf_lines):
        """snmptrapd on a free port printing one line per trap; returns (port, path of its output)."""
        conf = os.path.join(self.work, "snmptrapd.conf")
        with open(conf, "w") as c:
            c.write("\n".join(conf_lines) + "\n")
        out_path = os.path.join(self.work, "snmptrapd.out")
        out = open(out_path, "w")
        self.addCleanup(out.close)
        for _ in range(8):
            port = h.free_port()
            proc = subprocess.Popen(["snmptrapd", "-f", "-Lo", "-C", "-c", conf, "-On", "-n",
                                     "-F", "T %A|%N|%w|%q|%b|%v\n", "udp:127.0.0.1:%d" % port],
                                    stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ, MIBS=""))
            time.sleep(0.3)
            if proc.poll() is None:
                self.addCleanup(lambda: (proc.terminate(), proc.wait(timeout=10)))
                return port, out_path
        self.fail("snmptrapd did not start")

    def fleet(self, extra):
        self.report = os.path.join(self.work, "report.json")
        f = h.Fleet(devices=DEVICES, ip_per_device=True, ip="127.0.3.1",
                    extra=list(extra) + ["--report", self.report]).start()
        self.addCleanup(f.kill)
        return f

    def lines(self, path):
        with open(path) as o:
            return LINE.findall(o.read())

    def run_until(self, f, out_path, per_device):
        """Let the fleet flap until snmptrapd printed @per_device traps from each device (or 10 s), stop it
        (its report is written at exit) and return {device: ledger row of the one sink}."""
        hosts = [f.addr(i)[0] for i in range(DEVICES)]
        h.wait_for(lambda: all(sum(1 for l in self.lines(out_path) if l[4] == a) >= per_device for a in hosts),
                   h.scaled(10))
        f.stop()
        with open(self.report) as r:
            report = json.load(r)
        rows = {}
        for d in report["devices"]:
            self.assertEqual(len(d["trap_sinks"]), 1, d)
            rows[d["device"]] = d["trap_sinks"][0]
        return hosts, rows

    def wait_counts(self, out_path, hosts, rows):
        """What snmptrapd printed per source address, once it equals the fleet's sent (or 5 s)."""
        def counts():
            seen = self.lines(out_path)
            return [sum(1 for l in seen if l[4] == a) for a in hosts]
        want = [rows[i]["sent"] for i in range(DEVICES)]
        h.wait_for(lambda: counts() == want, h.scaled(5))
        return counts(), want

    def test_v1_traps_carry_agent_addr_enterprise_and_generic_trap(self):
        port, out_path = self.trapd(["authCommunity log,execute,net public", "disableAuthorization yes"])
        f = self.fleet(["--flap-rate", FLAP_RATE, "--trap-sink", "127.0.0.1:%d" % port, "--trap-version", "1"])
        hosts, rows = self.run_until(f, out_path, 2)
        got, want = self.wait_counts(out_path, hosts, rows)
        self.assertEqual(got, want, "snmptrapd printed per device what the fleet says it sent")
        for i, row in rows.items():
            self.assertGreaterEqual(row["sent"], 2, row)
            self.assertEqual(row["emitted"], row["sent"] + row["send_failures"] + row["dropped"], row)
        for agent_addr, enterprise, generic, specific, source, binds in self.lines(out_path):
            self.assertIn(source, hosts)
            self.assertEqual(agent_addr, source, "agent-addr is the device's own address")
            self.assertEqual(enterprise, SNMP_TRAPS)
            self.assertIn(generic, ("2", "3"), "linkDown or linkUp")
            self.assertEqual(specific, "0")
            self.assertIn('.1.3.6.1.2.1.1.5.0 = STRING: "device-%d"' % hosts.index(source), binds)
            self.assertNotIn(".1.3.6.1.6.3.18.1.3.0", binds, "agent-addr names the device, not snmpTrapAddress")
            if_index = re.search(r"\.1\.3\.6\.1\.2\.1\.2\.2\.1\.1\.(\d+) = INTEGER: (\d+)", binds)
            self.assertIsNotNone(if_index, binds)
            self.assertEqual(if_index.group(1), if_index.group(2))
            oper = re.search(r"\.1\.3\.6\.1\.2\.1\.2\.2\.1\.8\.\d+ = INTEGER: (\d)", binds).group(1)
            self.assertEqual(oper, "2" if generic == "2" else "1", "linkDown says down, linkUp up")

    def test_v3_auth_priv_traps_are_decrypted_per_device_engine(self):
        users = ["createUser -e %s trapper SHA-256 auth-pass-29 AES priv-pass-29" % engine_id(i)
                 for i in range(DEVICES)]
        port, out_path = self.trapd(users + ["authUser log,execute,net trapper priv"])
        f = self.fleet(["--flap-rate", FLAP_RATE, "--trap-sink", "127.0.0.1:%d" % port, "--trap-version", "3",
                        "--trap-v3-user", "trapper:sha256:auth-pass-29:aes:priv-pass-29"])
        hosts, rows = self.run_until(f, out_path, 2)
        got, want = self.wait_counts(out_path, hosts, rows)
        self.assertEqual(got, want, "snmptrapd decrypted per device what the fleet says it sent")
        for _, _, _, _, source, binds in self.lines(out_path):
            i = hosts.index(source)
            self.assertRegex(binds, r"\.1\.3\.6\.1\.6\.3\.1\.1\.4\.1\.0 = OID: (%s)\b" % "|".join(
                re.escape(t) for t in LINK_TRAPS))
            self.assertIn('.1.3.6.1.2.1.1.5.0 = STRING: "device-%d"' % i, binds)
            self.assertIn(".1.3.6.1.6.3.18.1.3.0 = IpAddress: %s" % source, binds)

    def test_v3_wrong_password_reaches_nothing_and_is_still_counted_sent(self):
        users = ["createUser -e %s trapper SHA auth-pass-29 AES priv-pass-29" % engine_id(i) for i in range(DEVICES)]
        port, out_path = self.trapd(users + ["authUser log,execute,net trapper priv"])
        f = self.fleet(["--flap-rate", FLAP_RATE, "--trap-sink", "127.0.0.1:%d" % port, "--trap-version", "3",
                        "--trap-v3-user", "trapper:sha:wrong-pass-29:aes:priv-pass-29"])
        time.sleep(h.scaled(1.5))
        hosts, rows = self.run_until(f, out_path, 0)
        time.sleep(0.5)
        self.assertEqual(self.lines(out_path), [], "snmptrapd drops what fails its digest")
        self.assertGreater(sum(r["sent"] for r in rows.values()), 0, rows)
        def refusals():
            with open(out_path) as o:
                return len(re.findall(r"^Authentication failed for trapper$", o.read(), re.M))
        sent = sum(r["sent"] for r in rows.values())
        h.wait_for(lambda: refusals() == sent, h.scaled(5))
        self.assertEqual(refusals(), sent, "snmptrapd refused every one the fleet sent, for its digest")

    def read_report(self, f):
        """The report fleetsim writes on SIGUSR1, while it runs."""
        try:
            os.unlink(self.report)
        except OSError:
            pass
        os.kill(f.proc.pid, signal.SIGUSR1)
        h.wait_for(lambda: os.path.exists(self.report) and os.path.getsize(self.report) > 0, h.scaled(5))
        time.sleep(0.2)
        with open(self.report) as r:
            return {d["device"]: d["trap_sinks"][0] for d in json.load(r)["devices"] if d["trap_sinks"]}

    def test_v3_informs_discover_the_receiver_engine_and_are_acknowledged(self):
        # No -e: the user is snmptrapd's own, localized for its engine, which the fleet must discover.
        port, out_path = self.trapd(["createUser trapper SHA-256 auth-pass-29 AES priv-pass-29",
                                     "authUser log,execute,net trapper priv"])
        f = self.fleet(["--flap-rate", FLAP_RATE, "--trap-sink", "127.0.0.1:%d" % port, "--trap-version", "3",
                        "--trap-inform", "true", "--trap-v3-user", "trapper:sha256:auth-pass-29:aes:priv-pass-29"])
        hosts, rows = self.run_until(f, out_path, 2)
        printed = [sum(1 for l in self.lines(out_path) if l[4] == a) for a in hosts]
        for i, row in rows.items():
            self.assertGreaterEqual(row["acknowledged"], 2, row)
            self.assertGreaterEqual(printed[i], row["acknowledged"], (printed, row))
            self.assertEqual(row["sent"], row["acknowledged"] + row["timed_out"], row)
            self.assertEqual(row["emitted"], row["sent"] + row["send_failures"] + row["dropped"], row)
        for _, _, _, _, source, binds in self.lines(out_path):
            self.assertIn('.1.3.6.1.2.1.1.5.0 = STRING: "device-%d"' % hosts.index(source), binds)

    def test_v3_informs_with_a_wrong_password_time_out(self):
        port, out_path = self.trapd(["createUser trapper SHA auth-pass-29 AES priv-pass-29",
                                     "authUser log,execute,net trapper priv"])
        f = self.fleet(["--flap-rate", FLAP_RATE, "--trap-sink", "127.0.0.1:%d" % port, "--trap-version", "3",
                        "--trap-inform", "true", "--trap-v3-user", "trapper:sha:wrong-pass-29:aes:priv-pass-29"])
        # One timeout (1 s) times four copies, and a little more: the first informs are given up by then.
        rows = h.wait_for(lambda: (lambda r: r if sum(x["timed_out"] for x in r.values()) > 0 else None)(
            self.read_report(f)), h.scaled(8))
        self.assertTrue(rows, "informs time out")
        for row in rows.values():
            self.assertEqual(row["acknowledged"], 0, row)
        self.assertEqual(self.lines(out_path), [], "snmptrapd printed nothing it could not authenticate")
        f.stop()

    def test_v3_informs_to_a_sink_that_never_answers_discovery_count_as_send_failures(self):
        silent = h.free_port()  # nothing listens: the discovery probes get no Report
        f = self.fleet(["--flap-rate", FLAP_RATE, "--trap-sink", "127.0.0.1:%d" % silent, "--trap-version", "3",
                        "--trap-inform", "true", "--trap-v3-user", "trapper:sha:auth-pass-29:aes:priv-pass-29"])
        # Four probes one timeout (1 s) apart, then the informs that waited are given up.
        rows = h.wait_for(lambda: (lambda r: r if sum(x["send_failures"] for x in r.values()) > 0 else None)(
            self.read_report(f)), h.scaled(8))
        self.assertTrue(rows, "informs waiting for a discovery that never ends are counted")
        for row in rows.values():
            self.assertEqual((row["sent"], row["acknowledged"], row["pending"]), (0, 0, 0), row)
            self.assertEqual(row["emitted"], row["send_failures"] + row["dropped"], row)
        f.stop()
        with open(self.report) as r:
            for d in json.load(r)["devices"]:
                for row in d["trap_sinks"]:
                    self.assertEqual(row["sent"], 0, row)
                    self.assertEqual(row["emitted"], row["send_failures"] + row["dropped"], row)

    def test_trap_rate_from_the_catalog_reaches_snmptrapd_counted(self):
        port, out_path = self.trapd(["authCommunity log,execute,net public", "disableAuthorization yes"])
        f = self.fleet(["--trap-rate", "20", "--trap-sink", "127.0.0.1:%d" % port])
        started = time.monotonic()
        hosts, rows = self.run_until(f, out_path, 30)
        elapsed = time.monotonic() - started
        got, want = self.wait_counts(out_path, hosts, rows)
        self.assertEqual(got, want, "snmptrapd printed per device what the fleet says it sent")
        # The sink's series counts what the devices' rows count (traps bypassed the ledger's calls: the
        # per-sink series and fleetsim_push_sink_messages_total stayed 0, issue 30).
        with open(self.report) as r:
            series = [x for x in json.load(r)["ledger"]["series"] if x["channel"] == "trap"]
        self.assertEqual(len(series), 1, series)
        self.assertEqual(series[0]["total"]["sent"], sum(row["sent"] for row in rows.values()), series[0])
        self.assertEqual(series[0]["total"]["emitted"], sum(row["emitted"] for row in rows.values()))
        for row in rows.values():
            self.assertGreaterEqual(row["sent"], 30, row)
            self.assertLessEqual(row["sent"], 20 * elapsed + 2, (row, elapsed))  # paced, not a burst
            self.assertEqual(row["dropped"] + row["send_failures"], 0, row)
        oids = {re.search(r"\.1\.3\.6\.1\.6\.3\.1\.1\.4\.1\.0 = OID: (\S+)", l[5]).group(1)
                for l in self.lines(out_path)}
        # The built-in catalog's draws: link traps and others (BGP, environment, entity).
        self.assertTrue(set(LINK_TRAPS) & oids, oids)
        self.assertTrue(oids - set(LINK_TRAPS), oids)

    def test_trap_rate_and_catalog_per_group_of_a_fleet_file(self):
        port, out_path = self.trapd(["authCommunity log,execute,net public", "disableAuthorization yes"])
        with open(os.path.join(self.work, "mine.json"), "w") as c:
            json.dump({"traps": [{"id": "mine", "oid": "1.3.6.1.4.1.99999.0.7", "objects": [
                {"oid": "1.3.6.1.4.1.99999.1.{ifindex}", "type": "string", "value": "{host} {if}"}]}]}, c)
        netconf, snmp = h.free_port(), h.free_port()
        group = {"device-count": 2, "ip-per-device": True, "starting-port": netconf, "snmp-starting-port": snmp,
                 "ssh": False}
        doc = {"fleetsim-fleet:fleet": {"group": [
            dict(group, name="quiet", ip="127.0.4.1"),
            dict(group, name="busy", ip="127.0.5.1", **{"trap-rate": "20", "trap-catalog": "mine.json"})]}}
        path = os.path.join(self.work, "fleet.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        log = open(os.path.join(self.work, "fleetsim.log"), "w")
        self.addCleanup(log.close)
        proc = subprocess.Popen([h.BINARY, "--fleet", path, "--trap-sink", "127.0.0.1:%d" % port],
                                stdout=log, stderr=subprocess.STDOUT)
        self.addCleanup(lambda: proc.poll() is None and (proc.kill(), proc.wait()))
        busy = ["127.0.5.1", "127.0.5.2"]
        ok = h.wait_for(lambda: all(sum(1 for l in self.lines(out_path) if l[4] == a) >= 10 for a in busy),
                        h.scaled(10))
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=h.scaled(20)), 0)
        if not ok:
            with open(os.path.join(self.work, "fleetsim.log")) as f:
                self.fail("the busy group's traps did not arrive; fleetsim's log:\n" + f.read())
        lines = self.lines(out_path)
        self.assertEqual({l[4] for l in lines}, set(busy), "only the group with a rate sends")
        for l in lines:
            self.assertIn(".1.3.6.1.6.3.1.1.4.1.0 = OID: .1.3.6.1.4.1.99999.0.7", l[5], "the group's own catalog")
            self.assertRegex(l[5], r'\.1\.3\.6\.1\.4\.1\.99999\.1\.(\d+) = STRING: "device-\d+ \S+"')

    def refused(self, extra, why):
        p = subprocess.run([h.BINARY, "--device-count", "1", "--ssh", "false", "--starting-port", "23990",
                            "--trap-sink", "127.0.0.1:23991"] + extra,
                           capture_output=True, text=True, timeout=h.scaled(20))
        self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(why, p.stderr)

    def test_v1_with_informs_and_v3_without_user_are_refused_at_start(self):
        self.refused(["--trap-version", "1", "--trap-inform", "true"], "SNMPv1 has no informs")
        self.refused(["--trap-version", "3"], "--trap-v3-user")
        self.refused(["--trap-version", "4"], "--trap-version must be 1, 2c or 3")


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
