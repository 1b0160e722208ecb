"""Offered load, shaped (issue 29 item 4): a rate profile on the syslog channel, seen by a counting UDP
socket the test owns.

A staged profile's stages arrive as clusters of exactly the profile's integral per device, at the
profile's rate per second, with the silent stage silent and nothing after a last stage of 0; the
control API's syslog-rate action changes a running device's rate (a number, a profile, null for the
group's again) while the other device keeps its own.

Usage: test_push_shape.py <fleetsim>
"""

import json
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
import unittest

import fleetsim_harness as h


class CountingSink:
    """A UDP socket on loopback recording (arrival time, host name) of every syslog datagram."""

    def __init__(self, test):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.port = None
        for _ in range(50):
            try:
                port = h.free_port()
                self.sock.bind(("127.0.0.1", port))
                self.port = port
                break
            except OSError:
                continue
        if self.port is None:
            raise AssertionError("no free UDP port")
        self.sock.settimeout(0.1)
        self.got = []  # (monotonic time, host)
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        test.addCleanup(self.close)

    def _run(self):
        while self.running:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            # <PRI>1 TIMESTAMP HOSTNAME ...: the host is the third field.
            fields = data.split(b" ", 3)
            with self.lock:
                self.got.append((time.monotonic(), fields[2].decode() if len(fields) > 2 else "?"))

    def snapshot(self):
        with self.lock:
            return list(self.got)

    def count(self, host=None, since=0.0):
        return sum(1 for t, hst in self.snapshot() if t >= since and (host is None or hst == host))

    def close(self):
        self.running = False
        self.thread.join(timeout=5)
        self.sock.close()


def clusters(times, gap_s):
    """Split sorted @times where two arrivals are more than @gap_s apart."""
    out = []
    for t in times:
        if out and t - out[-1][-1] <= gap_s:
            out[-1].append(t)
        else:
            out.append([t])
    return out


class PushShapeTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="fleetsim-shape-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.report = os.path.join(self.work, "report.json")

    def test_staged_profile_arrives_stage_by_stage_exactly(self):
        devices = 10
        sink = CountingSink(self)
        # 20/s for 3 s, silent 3 s, 40/s for 3 s, then 0 holds: 60 + 120 lines per device, exactly.
        fleet = h.Fleet(devices=devices, threads=2, ip_per_device=True,
                        extra=["--report", self.report, "--state-dir", os.path.join(self.work, "state"),
                               "--syslog-sink", "udp://127.0.0.1:%d" % sink.port,
                               "--syslog-rate", "staged:20@3s,0@3s,40@3,0@1m"])
        fleet.start()
        self.addCleanup(fleet.kill)
        total = devices * (60 + 120)
        h.wait_for(lambda: sink.count() >= total, 20, "%d lines" % total)
        time.sleep(h.scaled(2))  # the last stage's 0 holds: nothing more may come
        fleet.stop()
        got = sink.snapshot()
        self.assertEqual(len(got), total, "after the last stage its rate (0) holds")
        per_host = {}
        for _, host in got:
            per_host[host] = per_host.get(host, 0) + 1
        self.assertEqual(sorted(per_host.values()), [180] * devices, per_host)
        parts = clusters(sorted(t for t, _ in got), 1.5)
        self.assertEqual([len(p) for p in parts], [devices * 60, devices * 120],
                         "two stages of exactly their integral, the silent stage between")
        first, second = parts
        self.assertAlmostEqual(second[0] - first[0], 6.0, delta=0.5, msg="the second stage 6 s after the first")
        for part, rate in ((first, 20), (second, 40)):
            self.assertAlmostEqual(part[-1] - part[0], 3.0, delta=0.5)
            for s in range(3):
                n = sum(1 for t in part if part[0] + s <= t < part[0] + s + 1)
                # Phases spread over one arrival: each second holds the fleet's rate within a tenth
                # (the first and last seconds lose or gain at most one line per device).
                self.assertAlmostEqual(n, devices * rate, delta=max(devices, devices * rate * 0.1),
                                       msg="second %d of the stage at %d/s" % (s, rate))
        with open(self.report) as f:
            report = json.load(f)
        for dev in report["devices"]:
            row = dev["syslog_sinks"][0]
            self.assertEqual((row["emitted"], row["sent"]), (180, 180), row)

    def test_syslog_rate_action_changes_a_running_devices_rate(self):
        sink = CountingSink(self)
        f, base = h.start_with_metrics(2, ["--ip-per-device", "--report", self.report,
                                           "--syslog-sink", "udp://127.0.0.1:%d" % sink.port,
                                           "--syslog-rate", "0"])
        self.addCleanup(f.kill)
        time.sleep(h.scaled(1))
        self.assertEqual(sink.count(), 0, "rate 0: nothing at all")

        code, r = h.api_request(base, "/api/v1/devices/1/syslog-rate", {"rate": 40})
        self.assertEqual((code, r["devices"], r["failed"]), (200, 1, 0), r)
        t0 = time.monotonic()
        time.sleep(2)
        n = sink.count(since=t0)
        self.assertGreaterEqual(n, 70)
        self.assertLessEqual(n, 90)
        hosts = {hst for _, hst in sink.snapshot()}
        self.assertEqual(len(hosts), 1, "only device 1 sends: %s" % hosts)
        dev1 = hosts.pop()

        # A profile: silent for a second, 50/s for a second, then 0 holds: exactly 50 more, a second late.
        code, r = h.api_request(base, "/api/v1/devices/1/syslog-rate", {"rate": "staged:0@1,50@1,0@1"})
        self.assertEqual(code, 200, r)
        t1 = time.monotonic()
        before = sink.count()
        h.wait_for(lambda: sink.count() >= before + 50, 10, "the 50 lines of the profile's second stage")
        time.sleep(h.scaled(1))
        late = [t for t, _ in sink.snapshot()[before:]]
        self.assertEqual(len(late), 50)
        self.assertGreaterEqual(min(late) - t1, 0.8, "the first stage is silent")
        self.assertLessEqual(max(late) - min(late), 1.2)

        # A bad profile is refused and changes nothing; null goes back to the group's rate (0).
        code, _ = h.api_request(base, "/api/v1/devices/1/syslog-rate", {"rate": "linear:1:2"})
        self.assertEqual(code, 400)
        code, r = h.api_request(base, "/api/v1/devices/0-1/syslog-rate", {"rate": None})
        self.assertEqual(code, 200, r)
        settled = sink.count()
        time.sleep(h.scaled(1))
        self.assertEqual(sink.count(), settled, "back to the group's rate 0")
        self.assertEqual({hst for _, hst in sink.snapshot()}, {dev1})

        os.kill(f.proc.pid, signal.SIGUSR1)
        self.assertTrue(h.wait_for(lambda: os.path.exists(self.report), 5), "SIGUSR1 wrote the report")
        time.sleep(0.3)
        with open(self.report) as rf:
            acts = [a for a in json.load(rf)["actions"] if a["action"] == "syslog-rate"]
        self.assertEqual([a["parameters"] for a in acts],
                         [{"rate": 40}, {"rate": "staged:0@1,50@1,0@1"}, {"rate": None}])

    def test_trap_rate_action_profiles_send_exactly_their_integral(self):
        """The trap-rate action takes a profile (issue 29 item 4): a device without a rate gets one (its
        schedule made on demand), a running one changes; a raw UDP socket counts every trap datagram."""
        sink = CountingSink(self)
        f, base = h.start_with_metrics(2, ["--ip-per-device", "--report", self.report,
                                           "--trap-sink", "127.0.0.1:%d" % sink.port])
        self.addCleanup(f.kill)
        time.sleep(h.scaled(1))
        self.assertEqual(sink.count(), 0, "no --trap-rate: no background traps")

        # Device 1 alone: silent 1 s, 30/s for 1 s, then 0: exactly 30.
        code, r = h.api_request(base, "/api/v1/devices/1/trap-rate", {"rate": "staged:0@1,30@1,0@1"})
        self.assertEqual((code, r["devices"], r["failed"]), (200, 1, 0), r)
        t1 = time.monotonic()
        h.wait_for(lambda: sink.count() >= 30, 10, "the action's 30 traps")
        time.sleep(h.scaled(1))
        got = sink.snapshot()
        self.assertEqual(len(got), 30)
        self.assertGreaterEqual(got[0][0] - t1, 0.8, "the first stage is silent")
        # Both devices: 20/s for 2 s, then 0 holds: exactly 40 more each.
        code, r = h.api_request(base, "/api/v1/devices/0-1/trap-rate", {"rate": "staged:20@2,0@1m"})
        self.assertEqual((code, r["devices"]), (200, 2), r)
        h.wait_for(lambda: sink.count() >= 110, 10, "the profile's 2 x 40 traps")
        time.sleep(h.scaled(1))
        self.assertEqual(sink.count(), 110, "after the last stage its rate (0) holds")
        code, _ = h.api_request(base, "/api/v1/devices/1/trap-rate", {"rate": "sine:1"})
        self.assertEqual(code, 400)
        f.stop()
        with open(self.report) as rf:
            report = json.load(rf)
        sent = sorted(d["trap_sinks"][0]["sent"] for d in report["devices"])
        self.assertEqual(sent, [40, 70], report["devices"])

    def test_traps_on_their_own_wait_for_the_run_window(self):
        """--push-window holds the trap catalog's traps: none before START, counted suppressed_pre_window
        (issue 29 item 5)."""
        sink = CountingSink(self)
        f, base = h.start_with_metrics(2, ["--ip-per-device", "--report", self.report,
                                           "--trap-sink", "127.0.0.1:%d" % sink.port,
                                           "--trap-rate", "20", "--push-window", "3,"])
        self.addCleanup(f.kill)
        t0 = time.monotonic()
        time.sleep(2)
        self.assertEqual(sink.count(), 0, "nothing before START")
        h.wait_for(lambda: sink.count() >= 20, 10, "traps once the window opened")
        self.assertGreaterEqual(sink.snapshot()[0][0] - t0, 2.0)
        f.stop()
        with open(self.report) as rf:
            rows = [d["trap_sinks"][0] for d in json.load(rf)["devices"]]
        for row in rows:
            self.assertGreater(row["suppressed_pre_window"], 20, row)
            self.assertGreater(row["in_window"], 0, row)
            self.assertEqual(row["emitted"], row["in_window"] + row["drain"] + row["send_failures"] +
                             row["dropped"] + row["suppressed_pre_window"] + row.get("queued", 0), row)

    def test_a_scenario_event_sets_a_syslog_profile(self):
        sink = CountingSink(self)
        scenario = os.path.join(self.work, "scenario.json")
        with open(scenario, "w") as f:
            json.dump({"fleetsim-scenario:scenario": {"event": [
                {"name": "burst", "at": "1s", "devices": "1-2",
                 "syslog-rate": {"rate": "staged:30@2,0@1s"}}]}}, f)
        fleet = h.Fleet(devices=3, threads=2, ip_per_device=True,
                        extra=["--state-dir", os.path.join(self.work, "state"), "--scenario", scenario,
                               "--syslog-sink", "udp://127.0.0.1:%d" % sink.port])
        fleet.start()
        self.addCleanup(fleet.kill)
        h.wait_for(lambda: sink.count() >= 120, 15, "the scenario's 2 x 60 lines")
        time.sleep(h.scaled(1))
        fleet.stop()
        per_host = {}
        for _, host in sink.snapshot():
            per_host[host] = per_host.get(host, 0) + 1
        self.assertEqual(sorted(per_host.values()), [60, 60], "devices 1 and 2 only, 30/s for 2 s each")


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
