"""The control API (/api/v1/ on the --metrics server): reads of the fleet and of a device, and the
actions seen by independent clients: ncclient over SSH (kill-sessions, reboot), plain TCP connects
(down refuse and blackhole, up), net-snmp's snmpget (sysUpTime after a reboot, a blackholed agent)
and snmptrapd (the coldStart of a reboot). Hostile input gets a 4xx with a JSON message and changes
nothing. Requests are made with the curl binary.

Run: /usr/bin/python3 test_control_api.py <path to fleetsim>. Loopback only, every wait bounded.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

from ncclient import manager  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

SYS_UPTIME = "1.3.6.1.2.1.1.3.0"
COLD_START = "1.3.6.1.6.3.1.1.5.1"
ENGINE_ID = "1.3.6.1.6.3.10.2.1.1.0"
ENGINE_BOOTS = "1.3.6.1.6.3.10.2.1.2.0"
ENGINE_TIME = "1.3.6.1.6.3.10.2.1.3.0"
V3_USER = "ops:sha256:authpass1:aes:privpass1"
V3_ARGS = ["-v3", "-l", "authPriv", "-u", "ops", "-a", "SHA-256", "-A", "authpass1", "-x", "AES", "-X",
           "privpass1"]


def api(base, path, method="GET", body=None, token=None, raw=None):
    """(status, parsed JSON body) of one request made by the curl binary."""
    args = ["curl", "-sS", "--max-time", str(h.scaled(10)), "-o", "-", "-w", "\n%{http_code}", "-X", method]
    if token:
        args += ["-H", "Authorization: Bearer " + token]
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    if data is not None:
        args += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
    out = subprocess.run(args + [base + path], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         timeout=h.scaled(20))
    if out.returncode != 0:
        raise AssertionError("curl %s failed: %s" % (path, out.stderr.decode(errors="replace")))
    text, _, code = out.stdout.decode().rpartition("\n")
    return int(code), json.loads(text)


def connect_outcome(addr, timeout=1.0):
    """'ok' (connected and the server spoke), 'refused' (RST at connect or at once after) or 'timeout'."""
    s = socket.socket()
    s.settimeout(timeout)
    try:
        s.connect(addr)
        s.settimeout(2.0)
        return "ok" if s.recv(4) else "refused"
    except (ConnectionRefusedError, ConnectionResetError):
        return "refused"
    except socket.timeout:
        return "timeout"
    finally:
        s.close()


def snmpget(port, oid=SYS_UPTIME):
    """(exit code, output) of one snmpget (no retries)."""
    out = subprocess.run(["snmpget", "-v2c", "-c", "public", "-On", "-t", "0.7", "-r", "0",
                          "127.0.0.1:%d" % port, oid], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=h.scaled(10), env=dict(os.environ, MIBS=""))
    return out.returncode, out.stdout.decode(errors="replace")


def snmpget_v3(port, oids, extra=()):
    """(exit code, output) of one authPriv snmpget as V3_USER (no retries), with extra options."""
    out = subprocess.run(["snmpget"] + V3_ARGS + ["-On", "-t", "1", "-r", "0"] + list(extra)
                         + ["127.0.0.1:%d" % port] + list(oids), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=h.scaled(10), env=dict(os.environ, MIBS=""))
    return out.returncode, out.stdout.decode(errors="replace")


def integer_of(text, oid):
    """The INTEGER value of @p oid in snmpget's output."""
    for line in text.splitlines():
        if line.startswith("." + oid + " = INTEGER: "):
            return int(line.rsplit(" ", 1)[1])
    raise AssertionError("no INTEGER %s in %r" % (oid, text))


def ticks(text):
    """The timeticks value of snmpget's output."""
    return int(text.split("(")[1].split(")")[0])


def read_text(path):
    with open(path) as f:
        return f.read()


def fleetsim_version():
    """What `fleetsim --version` prints: its last word."""
    out = subprocess.run([h.BINARY, "--version"], capture_output=True, text=True, timeout=h.scaled(10))
    return out.stdout.split()[-1]


class ControlApiTests(unittest.TestCase):
    def fleet(self, extra=(), devices=4):
        f, base = h.start_with_metrics(devices, list(extra), True, 8)
        self.addCleanup(f.stop)
        return f, base

    def ncc(self, f, i):
        host, port = f.addr(i)
        m = manager.connect(host=host, port=port, username="admin", password="admin", hostkey_verify=False,
                            allow_agent=False, look_for_keys=False, timeout=h.scaled(10))
        self.addCleanup(lambda: m.connected and m.close_session())
        return m

    def test_reads_of_the_fleet_and_of_a_device(self):
        f, base = self.fleet(devices=4)
        with h.RawClient(f.addr(2)).hello():
            code, fleet = api(base, "/api/v1/fleet")
            self.assertEqual(code, 200)
            self.assertEqual(fleet["devices"], 4)
            self.assertEqual(fleet["states"], {"up": 4, "down": 0, "rebooting": 0, "absent": 0})
            self.assertEqual(fleet["sessions_open"], 1)
            g = fleet["groups"][0]
            self.assertEqual((g["name"], g["first"], g["last"], g["count"]), ("default", 0, 3, 4))
            self.assertEqual(fleet["version"], fleetsim_version())
            self.assertEqual(g["push"], {"syslog": None, "trap": None, "notification": None})
            self.assertEqual(g["netconf_port_first"], f.port)
            code, dev = api(base, "/api/v1/devices/2")
            self.assertEqual(code, 200)
            self.assertEqual((dev["index"], dev["state"], dev["sessions_open"]), (2, "up", 1))
            self.assertEqual(dev["netconf_port"], f.port + 2)
            self.assertRegex(dev["boot_time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
            self.assertNotIn("down_mode", dev)

    def test_kill_sessions_ends_an_ncclient_session(self):
        f, base = self.fleet(["--ssh", "true"], devices=2)
        m = self.ncc(f, 1)
        other = self.ncc(f, 0)
        code, r = api(base, "/api/v1/devices/1/kill-sessions", "POST")
        self.assertEqual((code, r["devices"], r["ranges"]), (200, 1, [[1, 1]]))
        self.assertTrue(h.wait_for(lambda: not m.connected, 5), "the session of device 1 ended")
        self.assertTrue(other.connected)
        other.get_config(source="running")  # device 0 untouched

    def test_down_refuse_then_up(self):
        f, base = self.fleet(devices=3)
        self.assertEqual(connect_outcome(f.addr(1)), "ok")
        code, r = api(base, "/api/v1/devices/1/down", "POST", {"mode": "refuse"})
        self.assertEqual((code, r["devices"]), (200, 1))
        self.assertEqual(connect_outcome(f.addr(1)), "refused")
        self.assertEqual(connect_outcome(f.addr(0)), "ok")
        self.assertEqual(api(base, "/api/v1/devices/1")[1]["down_mode"], "refuse")
        self.assertEqual(api(base, "/api/v1/fleet")[1]["states"], {"up": 2, "down": 1, "rebooting": 0, "absent": 0})
        api(base, "/api/v1/devices/1/up", "POST")
        self.assertEqual(connect_outcome(f.addr(1)), "ok")

    def test_down_refuse_with_a_shared_port(self):
        f, base = h.start_with_metrics(3, [], True, 8, ip_per_device=True)
        self.addCleanup(f.stop)
        api(base, "/api/v1/devices/2/down", "POST", {"mode": "refuse"})
        self.assertEqual(connect_outcome(f.addr(2)), "refused")
        self.assertEqual(connect_outcome(f.addr(1)), "ok")
        api(base, "/api/v1/devices/2/up", "POST")
        self.assertEqual(connect_outcome(f.addr(2)), "ok")

    def test_blackhole_then_up(self):
        f, base = self.fleet(devices=2)
        self.assertEqual(snmpget(f.port + 1)[0], 0)
        api(base, "/api/v1/devices/1/down", "POST", {"mode": "blackhole"})
        self.assertEqual(connect_outcome(f.addr(1), timeout=1.0), "timeout")
        self.assertNotEqual(snmpget(f.port + 1)[0], 0, "the SNMP get times out")
        self.assertEqual(snmpget(f.port)[0], 0)
        api(base, "/api/v1/devices/1/up", "POST")
        self.assertEqual(connect_outcome(f.addr(1)), "ok")
        self.assertEqual(snmpget(f.port + 1)[0], 0)

    def test_fleet_says_how_each_push_channel_is_configured(self):
        # issue 30: fleetsim-stress ceiling records these as the run's controls
        routes = os.path.join(h.SOURCE_DIR, "notifications", "routes-1.xml")
        f, base = self.fleet(["--syslog-sink", "udp://127.0.0.1:9", "--syslog-sink", "tcp://[::1]:10",
                              "--syslog-format", "rfc3164", "--syslog-rate", "linear:0:5:1m",
                              "--trap-sink", "127.0.0.1:9", "--trap-version", "1", "--trap-rate", "0.5",
                              "--notification-file", routes, "--notification-rate", "sine:4:2:30s"], devices=2)
        code, fleet = api(base, "/api/v1/fleet")
        self.assertEqual(code, 200)
        self.assertEqual(fleet["groups"][0]["push"], {
            "syslog": {"sinks": ["udp://127.0.0.1:9", "tcp://[::1]:10"], "format": "rfc3164",
                       "framing": "octet-counting", "rate": "linear:0:5:1m"},
            "trap": {"sinks": ["udp://127.0.0.1:9"], "version": "v1", "inform": False, "rate": "0.5"},
            "notification": {"file": routes, "rate": "sine:4:2:30s"}})

    def test_reboot_seen_by_ncclient_snmpget_and_snmptrapd(self):
        work = tempfile.mkdtemp(prefix="fleetsim-capi-")
        tport, out_path = h.start_snmptrapd(self, work)
        f, base = self.fleet(["--ssh", "true", "--trap-sink", "127.0.0.1:%d" % tport], devices=2)
        code, before = snmpget(f.port + 1)
        self.assertEqual(code, 0, before)
        self.assertGreater(ticks(before), 6000, "booted a while before the fleet started")
        m = self.ncc(f, 1)
        m.edit_config(target="running", config='<config xmlns="%s">%s</config>' % (h.NC_NS, h.iface("capi-x")))
        self.assertIn("capi-x", m.get_config(source="running").xml)
        boot_before = api(base, "/api/v1/devices/1")[1]["boot_time"]
        code, r = api(base, "/api/v1/devices/1/reboot", "POST", {"for": "1s"})
        self.assertEqual((code, r["devices"]), (200, 1))
        self.assertTrue(h.wait_for(lambda: not m.connected, 5), "the session ended")
        self.assertEqual(api(base, "/api/v1/devices/1")[1]["state"], "rebooting")
        self.assertEqual(connect_outcome(f.addr(1)), "refused")
        self.assertTrue(h.wait_for(lambda: connect_outcome(f.addr(1)) == "ok", 5), "up again by itself")
        self.assertEqual(api(base, "/api/v1/devices/1")[1]["state"], "up")
        self.assertNotEqual(api(base, "/api/v1/devices/1")[1]["boot_time"], boot_before)
        fresh = self.ncc(f, 1)
        running = fresh.get_config(source="running").xml
        self.assertNotIn("capi-x", running, "running is startup again")
        code, after = snmpget(f.port + 1)
        self.assertEqual(code, 0, after)
        self.assertLess(ticks(after), 1000, "sysUpTime restarted")
        self.assertTrue(h.wait_for(lambda: COLD_START in read_text(out_path), 5), "coldStart reached snmptrapd")

    def test_snmpv3_resynchronizes_after_a_reboot_and_boots_go_up_by_one(self):
        f, base = self.fleet(["--snmp-v3-user", V3_USER], devices=2)
        port = f.port + 1
        code, before = snmpget_v3(port, [ENGINE_ID, ENGINE_BOOTS, ENGINE_TIME])
        self.assertEqual(code, 0, before)
        engine_id = before.split(ENGINE_ID + " = Hex-STRING: ")[1].splitlines()[0].replace(" ", "")
        boots, etime = integer_of(before, ENGINE_BOOTS), integer_of(before, ENGINE_TIME)
        time.sleep(1.1)  # engineTime moves past 0 again after the reboot
        code, r = api(base, "/api/v1/devices/1/reboot", "POST", {"for": "0s"})
        self.assertEqual((code, r["devices"]), (200, 1))
        self.assertTrue(h.wait_for(lambda: api(base, "/api/v1/devices/1")[1]["state"] == "up", 5))
        # A manager that kept the engine's old boots and time (net-snmp told them with -e and -Z, so no
        # discovery): the agent answers with an authenticated notInTimeWindow report carrying the new
        # boots and time, net-snmp takes them and sends again, and the get succeeds. -d shows both packets.
        code, stale = snmpget_v3(port, [ENGINE_BOOTS, ENGINE_TIME],
                                 ["-d", "-e", "0x" + engine_id, "-Z", "%d,%d" % (boots, etime)])
        self.assertEqual(code, 0, stale)
        self.assertEqual(stale.count("Received"), 2, "a report, then the response: " + stale)
        self.assertEqual(integer_of(stale, ENGINE_BOOTS), boots + 1)
        self.assertLess(integer_of(stale, ENGINE_TIME), 10, "engineTime restarted from 0 (was %d)" % etime)
        # A fresh manager (discovery first) sees the same.
        code, fresh = snmpget_v3(port, [ENGINE_BOOTS])
        self.assertEqual(code, 0, fresh)
        self.assertEqual(integer_of(fresh, ENGINE_BOOTS), boots + 1)
        # The other device was not rebooted.
        code, other = snmpget_v3(f.port, [ENGINE_BOOTS])
        self.assertEqual((code, integer_of(other, ENGINE_BOOTS)), (0, boots))

    def test_actions_are_in_the_report_and_counted_in_the_metrics(self):
        work = tempfile.mkdtemp(prefix="fleetsim-capi-")
        report = os.path.join(work, "report.json")
        f, base = self.fleet(["--report", report], devices=40)
        started = time.time()
        self.assertEqual(api(base, "/api/v1/devices/3-5/down", "POST", {"mode": "blackhole"})[0], 200)
        self.assertEqual(api(base, "/api/v1/devices/3-5/up", "POST")[0], 200)
        self.assertEqual(api(base, "/api/v1/devices/7/reboot", "POST", {"for": "0s"})[0], 200)
        _, shared = api(base, "/api/v1/groups/default/latency", "POST",
                        {"netconf": "10-20ms", "snmp": "5ms", "share": 0.5, "seed": 11})
        self.assertEqual(api(base, "/api/v1/devices/0/reboot", "POST", {"for": "1s"})[0], 200)
        # Refused requests are neither recorded nor counted.
        self.assertEqual(api(base, "/api/v1/devices/0/down", "POST", {"mode": "sideways"})[0], 400)
        self.assertEqual(api(base, "/api/v1/devices/99/up", "POST")[0], 404)
        ended = time.time()

        os.kill(f.proc.pid, signal.SIGUSR1)
        self.assertTrue(h.wait_for(lambda: os.path.exists(report), 5), "SIGUSR1 wrote the report")
        with open(report) as r:
            doc = json.load(r)
        acts = doc["actions"]
        self.assertEqual(doc["actions_dropped"], 0)
        self.assertEqual([a["action"] for a in acts], ["down", "up", "reboot", "latency", "reboot"])
        for a in acts:
            self.assertRegex(a["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
            t = time.mktime(time.strptime(a["time"][:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
            self.assertTrue(started - 1 <= t <= ended + 1, a)
        self.assertEqual(sorted(a["time"] for a in acts), [a["time"] for a in acts], "oldest first")
        self.assertEqual(acts[0]["parameters"], {"mode": "blackhole", "sessions": "reset"})
        self.assertEqual((acts[0]["devices"], acts[0]["ranges"]), (3, [[3, 5]]))
        self.assertEqual((acts[1]["parameters"], acts[1]["ranges"]), ({}, [[3, 5]]))
        self.assertEqual((acts[2]["parameters"], acts[2]["ranges"]), ({"for": "0ms"}, [[7, 7]]))
        self.assertEqual(acts[3]["parameters"], {"netconf": "10-20ms", "snmp": "5ms", "share": 0.5, "seed": 11})
        self.assertEqual((acts[3]["devices"], acts[3]["ranges"]), (shared["devices"], shared["ranges"]))
        self.assertTrue(0 < acts[3]["devices"] < 40)
        self.assertEqual(acts[4]["parameters"], {"for": "1000ms"})
        self.assertFalse(any(a["ranges_truncated"] for a in acts))
        self.assertEqual(len(doc["devices"]), 40, "the device rows are still there")

        # GET /api/v1/report is the same report, now (a shard's report where no folder is shared).
        code, live = api(base, "/api/v1/report")
        self.assertEqual(code, 200, live)
        self.assertGreaterEqual(live.pop("generated_at"), doc.pop("generated_at"))
        for d in live["devices"] + doc["devices"]:  # its live session's counts may have moved meanwhile
            d.pop("sessions", None)
        self.assertEqual(live, doc)
        self.assertEqual(api(base, "/api/v1/report", "POST")[0], 405)

        metrics = subprocess.run(["curl", "-sS", "--max-time", str(h.scaled(10)), base + "/metrics"],
                                 stdout=subprocess.PIPE, timeout=h.scaled(20), check=True).stdout.decode()
        self.assertIn("# TYPE fleetsim_actions_total counter", metrics)
        counts = {m.group(1): int(m.group(2))
                  for m in re.finditer(r'^fleetsim_actions_total\{action="([a-z-]+)"\} (\d+)$', metrics, re.M)}
        self.assertEqual(counts, {"kill-sessions": 0, "down": 1, "up": 1, "reboot": 2, "latency": 1,
                                  "drop-rate": 0, "set": 0, "notification-rate": 0, "flap": 0, "grow": 0, "shrink": 0,
                                  "syslog-rate": 0, "trap-rate": 0})

    def test_share_with_a_seed_picks_the_same_devices(self):
        f, base = self.fleet(devices=40)
        body = {"share": 0.3, "seed": 7}
        _, a = api(base, "/api/v1/devices/0-39/latency", "POST", dict(body, netconf="1ms"))
        _, b = api(base, "/api/v1/groups/default/latency", "POST", dict(body, netconf="1ms"))
        _, c = api(base, "/api/v1/devices/0-39/latency", "POST", {"share": 0.3, "seed": 8, "netconf": "1ms"})
        self.assertEqual(a["ranges"], b["ranges"])
        self.assertNotEqual(a["ranges"], c["ranges"])
        self.assertTrue(0 < a["devices"] < 40, a)

    def test_hostile_input_changes_nothing(self):
        f, base = self.fleet(devices=2)
        cases = [
            ("/api/v1/devices/0/down", "POST", b"{not json", 400),
            ("/api/v1/devices/0/down", "POST", b"[1]", 400),
            ("/api/v1/devices/0/down", "POST", b'{"mode":"sideways"}', 400),
            ("/api/v1/devices/0/down", "POST", b'{"bogus":1}', 400),
            ("/api/v1/devices/0/down", "POST", b'{"share":2}', 400),
            ("/api/v1/devices/0/down", "POST", b" " * (65 * 1024), 413),
            ("/api/v1/devices/0-2/down", "POST", b"{}", 404),
            ("/api/v1/devices/7/down", "POST", b"{}", 404),
            ("/api/v1/devices/1-0/down", "POST", b"{}", 400),
            ("/api/v1/devices/0/explode", "POST", b"{}", 404),
            ("/api/v1/groups/nosuch/down", "POST", b"{}", 404),
            ("/api/v1/devices/0/down", "GET", None, 405),
            ("/api/v1/fleet", "DELETE", None, 405),
            ("/api/v1/devices/9", "GET", None, 404),
            ("/api/v1/nothing", "GET", None, 404),
        ]
        for path, method, raw, want in cases:
            code, r = api(base, path, method, raw=raw)
            self.assertEqual(code, want, (path, raw and raw[:30]))
            self.assertIsInstance(r.get("error"), str)
        self.assertEqual(api(base, "/api/v1/fleet")[1]["states"], {"up": 2, "down": 0, "rebooting": 0, "absent": 0})
        self.assertEqual(connect_outcome(f.addr(0)), "ok")

    def test_bearer_token(self):
        work = tempfile.mkdtemp(prefix="fleetsim-capi-")
        path = os.path.join(work, "token")
        with open(path, "w") as t:
            t.write("s3cret-token\n")
        f, base = self.fleet(["--api-token-file", path], devices=1)
        self.assertEqual(api(base, "/api/v1/fleet")[0], 401)
        self.assertEqual(api(base, "/api/v1/fleet", token="wrong")[0], 401)
        self.assertEqual(api(base, "/api/v1/devices/0/down", "POST", {}, token="s3cret-tokeX")[0], 401)
        self.assertEqual(connect_outcome(f.addr(0)), "ok")
        self.assertEqual(api(base, "/api/v1/fleet", token="s3cret-token")[0], 200)
        self.assertEqual(h.run_fleetsim(["--device-count", "1", "--metrics", "1", "--api-token-file",
                                         os.path.join(work, "missing")], timeout=20)[0], 2)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
