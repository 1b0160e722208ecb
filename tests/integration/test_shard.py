"""One fleet across several processes (fleetsim --shard I/N): four shards of a 40-device fleet against one
process of the same fleet. Every device shows the same hello (less its session-id), state, SNMP values
(read with net-snmp's snmpget) and node-id; the shards' inventories merged with fleetsim-stress merge are
the single process's byte for byte in every format; the shards' reports merge and reconcile as one; a
fleet file's two groups are cut by a shard boundary; bad --shard values exit 2.
"""

import csv
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import unittest

import fleetsim_harness as h

DEVICES = 40
SHARDS = 4
CLOCK = ["--clock-fixed", "1700000000"]
STATE_GET = ('<get><filter type="subtree"><interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"/>'
             '</filter></get>')
# sysName, sysUpTime, snmpEngineID, snmpEngineBoots
OIDS = ["1.3.6.1.2.1.1.5.0", "1.3.6.1.2.1.1.3.0", "1.3.6.1.6.3.10.2.1.1.0", "1.3.6.1.6.3.10.2.1.2.0"]
FORMATS = ["odl-json", "prometheus-sd", "opennms-requisition", "csv"]
NOTIFICATIONS = os.path.join(h.SOURCE_DIR, "notifications", "routes-10.xml")


def random_port(span):
    """A first port of @span ports of the harness's range, drawn at random (the shards share it)."""
    return random.Random().randrange(h.PORT_LOW, h.PORT_HIGH - span)


class ShardTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fleetsim-shard-")
        self.fleets = []

    def tearDown(self):
        for f in self.fleets:
            f.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def stress(self, args, code=0):
        proc = subprocess.run([STRESS] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=h.scaled(30))
        out, err = proc.stdout.decode(), proc.stderr.decode()
        self.assertEqual(proc.returncode, code, out + err)
        return out, err

    def start(self, port, devices, extra):
        """fleetsim on 127.0.0.1, device i on port @port + i (NETCONF TCP and SNMP)."""
        f = h.Fleet(devices=devices, extra=[str(a) for a in CLOCK + extra])
        f.port = port
        outcome = f._start_once(h.scaled(h.READY_TIMEOUT_S))
        if outcome != "ready":
            raise h.FleetError(outcome)
        self.fleets.append(f)
        return f

    def start_anywhere(self, devices, extra):
        """start() on a first port drawn at random, drawn again while the range is taken (other tests run
        at the same time); (the fleet, its first port), which the shards started after it then share."""
        for _ in range(8):
            port = random_port(devices)
            try:
                return self.start(port, devices, extra), port
            except h.FleetError as e:
                if str(e) != "retry":
                    raise
        raise h.FleetError("no free range of %d ports" % devices)

    def start_shards(self, devices, args_of):
        """Every shard k (args_of(k)) on one range of ports drawn at random; the whole set drawn again when
        another test took one of its ports between the shards' starts. @return The range's first port."""
        for _ in range(8):
            port = random_port(devices)
            started = []
            try:
                for k in range(SHARDS):
                    started.append(self.start(port, devices, args_of(k)))
                return port
            except h.FleetError as e:
                if str(e) != "retry":
                    raise
                for f in started:
                    f.kill()
                    self.fleets.remove(f)
        raise h.FleetError("no free range of %d ports for %d shards" % (devices, SHARDS))

    def observe(self, port, host="127.0.0.1"):
        """What the device on @host:@port shows: its hello less the session-id, its state, its SNMP values."""
        with h.RawClient((host, port)) as c:
            c.hello()
            hello = re.sub(r"<session-id>\d+</session-id>", "", c.server_hello)
            state = c.rpc(STATE_GET)
        snmp = subprocess.run(["snmpget", "-v2c", "-c", "public", "-On", "-t", "2", "-r", "1",
                               "%s:%d" % (host, port)] + OIDS, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=h.scaled(10)).stdout.decode()
        self.assertIn("Hex-STRING", snmp)
        return hello, state, snmp

    def test_four_shards_are_the_single_fleet(self):
        whole, port = self.start_anywhere(DEVICES, [])
        want = [self.observe(port + i) for i in range(DEVICES)]
        api_port = h.free_port()
        whole.stop()
        self.fleets.remove(whole)
        shards = [self.start(port, DEVICES, ["--shard", "%d/%d" % (k, SHARDS)]
                             + (["--metrics", "127.0.0.1:%d" % api_port] if k == 1 else []))
                  for k in range(SHARDS)]
        got = [self.observe(port + i) for i in range(DEVICES)]
        for i in range(DEVICES):
            self.assertEqual(got[i], want[i], "device %d" % i)
        self.assertIn('STRING: "device-17"', got[17][2])
        # Shard 1 serves devices 10-19 only: its control API speaks global indices and skips the others.
        api = "http://127.0.0.1:%d" % api_port
        fleet = h.api_request(api, "/api/v1/fleet")[1]
        self.assertEqual((fleet["devices"], fleet["first_device"], fleet["fleet_devices"]), (10, 10, DEVICES))
        self.assertEqual((fleet["groups"][0]["first"], fleet["groups"][0]["last"]), (10, 19))
        status, dev = h.api_request(api, "/api/v1/devices/12")
        self.assertEqual((status, dev["index"], dev["address"]), (200, 12, "127.0.0.1"))
        self.assertEqual(dev["netconf_port"], port + 12)
        self.assertEqual(h.api_request(api, "/api/v1/devices/25")[0], 404)
        status, done = h.api_request(api, "/api/v1/devices/5-14/kill-sessions", body={})
        self.assertEqual((status, done["devices"], done["elsewhere"], done["ranges"]), (200, 5, 5, [[10, 14]]))
        for f in shards:
            f.stop()
        self.fleets.clear()

    def test_shards_on_their_own_ports_are_the_single_fleet(self):
        # --shard-own-ports: each shard (its own host or pod; here its own loopback address) numbers its
        # devices' ports from --starting-port, and node-ids are the devices' names: a fleet of more devices
        # than one host has ports. The devices are the single fleet's all the same.
        plan = ["--shard-own-ports", "--ssh", "false"]
        whole, port = self.start_anywhere(DEVICES, plan)
        want = [self.observe(port + i) for i in range(DEVICES)]
        whole.stop()
        self.fleets.remove(whole)
        firsts = [k * DEVICES // SHARDS for k in range(SHARDS)]
        for k in range(SHARDS):
            self.start(port, DEVICES, plan + ["--shard", "%d/%d" % (k, SHARDS), "--ip", "127.0.8.%d" % (k + 1)])
        for i in range(DEVICES):
            k = max(j for j in range(SHARDS) if firsts[j] <= i)
            self.assertEqual(self.observe(port + i - firsts[k], "127.0.8.%d" % (k + 1)), want[i], "device %d" % i)
        # The inventory: every device once, named device-N, at its shard's host and its own port there.
        parts = []
        for k in range(SHARDS):
            parts.append("own%d.csv" % k)
            self.emit(parts[-1], ["--device-count", DEVICES, "--starting-port", port, "--shard",
                                  "%d/%d" % (k, SHARDS), "--generate-config-address", "fleetsim-%d.fleetsim" % k]
                      + plan + ["--inventory-format", "csv"])
        self.stress(["merge"] + [self.path(p) for p in parts] + ["-o", self.path("own.csv")])
        with open(self.path("own.csv")) as fh:
            rows = list(csv.DictReader(fh))
        self.assertEqual([r["node_id"] for r in rows], ["device-%d" % i for i in range(DEVICES)])
        for i, r in enumerate(rows):
            k = max(j for j in range(SHARDS) if firsts[j] <= i)
            self.assertEqual((r["netconf_host"], int(r["netconf_port"])),
                             ("fleetsim-%d.fleetsim" % k, port + i - firsts[k]))
        for f in self.fleets:
            f.stop()
        self.fleets.clear()

    def emit(self, name, args):
        code, out = h.run_fleetsim([str(a) for a in args] + ["--emit-inventory", self.path(name)])
        self.assertEqual(code, 0, out)
        with open(self.path(name), "rb") as fh:
            return fh.read()

    def assert_inventories_merge(self, plan, formats, label):
        for fmt in formats:
            one = self.emit("whole.%s" % fmt, plan + ["--inventory-format", fmt])
            parts = [self.path("s%d.%s" % (k, fmt)) for k in range(SHARDS)]
            for k in range(SHARDS):
                self.emit("s%d.%s" % (k, fmt), plan + ["--inventory-format", fmt, "--shard", "%d/%d" % (k, SHARDS)])
            with open(parts[1], "rb") as fh:
                self.assertNotEqual(fh.read(), one, fmt)
            self.stress(["merge"] + parts + ["-o", self.path("merged.%s" % fmt)])
            with open(self.path("merged.%s" % fmt), "rb") as fh:
                self.assertEqual(fh.read(), one, "%s, %s" % (label, fmt))

    def test_merged_inventories_are_the_single_fleets(self):
        self.assert_inventories_merge(["--device-count", DEVICES, "--ip", "127.0.9.1", "--ip-per-device",
                                       "--ssh", "false"], FORMATS, "address per device")
        self.assert_inventories_merge(["--device-count", DEVICES, "--starting-port", 20000,
                                       "--snmp-starting-port", 21000], FORMATS, "port per device")
        # Each device's own host key derives from the state folder's secret: shards share the folder.
        self.assert_inventories_merge(["--device-count", DEVICES, "--host-key-per-device", "--host-key-type",
                                       "ecdsa", "--state-dir", self.path("state")], ["odl-callhome"], "call home")
        # --devices-per-port numbers the nodes across the shards too.
        self.assert_inventories_merge(["--device-count", DEVICES, "--devices-per-port", 2], ["prometheus-sd"],
                                      "two nodes a device")
        # Formats do not mix.
        self.stress(["merge", self.path("s0.csv"), self.path("s1.prometheus-sd"), "-o", self.path("x")], code=2)

    def fleet_file(self, port):
        # Two groups of 15 and 25 devices: the boundary of shard 1 (devices 10-19) cuts them at 15.
        groups = [{"name": "core", "device-count": 15, "starting-port": port, "snmp-starting-port": port},
                  {"name": "edge", "device-count": 25, "profile": "crs-x", "starting-port": port + 100,
                   "snmp-starting-port": port + 100}]
        with open(self.path("fleet.json"), "w") as fh:
            json.dump({"fleetsim-fleet:fleet": {"group": groups}}, fh)
        return self.path("fleet.json")

    def test_fleet_file_groups_cut_by_a_shard(self):
        # Drawn again, the whole case, when another test took one of the range's ports meanwhile.
        for attempt in range(5):
            try:
                return self.fleet_file_groups_cut_by_a_shard(random_port(200))
            except h.FleetError as e:
                if str(e) != "retry" or attempt == 4:
                    raise
                for f in self.fleets:
                    f.kill()
                self.fleets.clear()

    def fleet_file_groups_cut_by_a_shard(self, port):
        plan = ["--fleet", self.fleet_file(port)]
        self.assert_inventories_merge(plan, ["csv", "odl-json", "prometheus-sd"], "fleet file")
        ports = [port + i for i in range(10, 15)] + [port + 100 + i for i in range(5)]
        whole = self.start(port, 1, plan)
        want = [self.observe(p) for p in ports]
        whole.stop()
        self.fleets.remove(whole)
        shard = self.start(port, 1, plan + ["--shard", "1/4", "--report", self.path("r.json")])
        self.assertIn("10 devices listening on 127.0.0.1 ports %d-%d (core" % (port + 10, port + 14), shard.log())
        self.assertIn("127.0.0.1 ports %d-%d (edge" % (port + 100, port + 104), shard.log())
        got = [self.observe(p) for p in ports]
        self.assertEqual(got, want)
        self.assertIn('STRING: "crs-x-15"', got[5][2])
        shard.stop()
        self.fleets.clear()
        with open(self.path("r.json")) as fh:
            devices = json.load(fh)["devices"]
        self.assertEqual(sorted((d["device"], d["group"], d["port"]) for d in devices),
                         [(i, "core", port + i) for i in range(10, 15)]
                         + [(i, "edge", port + 100 + i - 15) for i in range(15, 20)])

    def test_shard_reports_merge_and_reconcile(self):
        def shard(k):
            return ["--shard", "%d/%d" % (k, SHARDS), "--notification-file", NOTIFICATIONS, "--report",
                    self.path("r%d.json" % k)]
        port = self.start_shards(DEVICES, shard)
        out, err = self.stress(["notify", "--port", port, "--device-count",
                                DEVICES, "--count", 3, "--seq-element", "sequence", "--json",
                                self.path("n.json")])
        # Four client hosts' worth of edits: each --shard k/4 client edits shard k's devices, 103 edits in all.
        for k in range(SHARDS):
            self.stress(["edit", "--shard", "%d/%d" % (k, SHARDS), "--port", port, "--device-count", DEVICES,
                         "--thread-amount", 2, "--edits", 103, "--json", self.path("e%d.json" % k)])
        self.stress(["merge"] + [self.path("e%d.json" % k) for k in range(SHARDS)] + ["-o", self.path("em.json")])
        with open(self.path("em.json")) as fh:
            edits = json.load(fh)
        self.assertEqual(edits["results"]["edits_answered"], 103)
        self.assertEqual(edits["parameters"]["port"], [port + 10 * k for k in range(SHARDS)])
        for f in self.fleets:
            f.stop()
        self.fleets.clear()
        reports = [self.path("r%d.json" % k) for k in range(SHARDS)]
        self.stress(["merge"] + reports + ["-o", self.path("merged.json")])
        with open(self.path("merged.json")) as fh:
            merged = json.load(fh)
        parts = []
        for r in reports:
            with open(r) as fh:
                parts.append(json.load(fh))
        self.assertEqual(sorted(d["device"] for d in merged["devices"]), list(range(DEVICES)))
        sent = sum(d["notifications"]["sent"] for d in merged["devices"])
        self.assertEqual(sent, sum(d["notifications"]["sent"] for p in parts for d in p["devices"]))
        # The stream goes on at 10/s until the client's close-session is read: a slow machine sends a 4th to
        # a device or two before it. What matters is that every device sent its 3 and the client got all.
        self.assertTrue(all(d["notifications"]["sent"] >= 3 for d in merged["devices"]), merged["devices"])
        self.assertEqual(sum(d["edits"]["edit_config"] for d in merged["devices"]), 103)
        self.assertEqual(sum(d["edits"]["edit_config"] for d in merged["devices"] if d["device"] < 10), 25)
        with open(self.path("n.json")) as fh:
            self.assertEqual(json.load(fh)["results"]["total_received"], sent)
        sents = [a for r in reports for a in ("--sent", r)]
        for sent_args in (sents, ["--sent", self.path("merged.json")]):
            out, err = self.stress(["reconcile"] + sent_args + ["--received", self.path("n.json")])
            self.assertRegex(out, r"totals: OK %d, LOSS 0, DUP 0, MISSING 0, PHANTOM 0" % DEVICES)

    def test_bad_shards_exit_2(self):
        for bad in ["0/0", "4/4", "1/2/3", "text", "-1/4", "1/", "/4", ""]:
            code, out = h.run_fleetsim(["--device-count", "4", "--shard", bad])
            self.assertEqual(code, 2, bad)
            self.assertIn("--shard takes I/N", out)
            out, err = self.stress(["edit", "--device-count", 4, "--shard", bad], code=2)
            self.assertIn("--shard takes I/N", err)
        code, out = h.run_fleetsim(["--device-count", "4", "--shard", "0/2", "--device-offset", "2"])
        self.assertEqual(code, 2, out)
        self.assertIn("--shard and --device-offset", out)
        code, out = h.run_fleetsim(["--device-count", "2", "--shard", "0/3", "--emit-inventory", self.path("x")])
        self.assertEqual(code, 2, out)
        self.assertIn("part 0 empty", out)
        # --device-offset K: devices K.. of the fleet, as the whole fleet lists them.
        one = self.emit("o.csv", ["--device-count", 10, "--inventory-format", "csv"]).split(b"\r\n")
        part = self.emit("p.csv", ["--device-count", 3, "--device-offset", 7, "--inventory-format", "csv"])
        self.assertEqual(part.split(b"\r\n"), one[:1] + one[8:11] + [b""])


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2)
