"""fleetsim-stress snmp end to end, against net-snmp's snmpd and silent or broken UDP peers.

net-snmp's snmpd (Debian package snmpd) runs on a random loopback port with a throw-away
configuration; net-snmp's snmpbulkwalk (package snmp) walks the same OIDs, and the samples the
stress client reports must equal the numeric values snmpbulkwalk prints. Peers that never answer,
and one that answers garbage, must make the run time out after its retries, be reported, and exit 1.
Every run is bounded; any mismatch prints the client's whole output.

Run: /usr/bin/python3 test_stress_snmp.py <path to fleetsim-stress> [unittest options]
"""

import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

STRESS = None  # path to fleetsim-stress, from the command line
RUN_LIMIT_S = 30.0
READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
START_ATTEMPTS = 8

# Objects with a stable number of instances on any Linux host: the interfaces table, the system
# group (sysORTable included), a scalar given as x.0 and a Counter64 column of ifXTable.
IF_ENTRY = "1.3.6.1.2.1.2.2.1"
SYSTEM = "1.3.6.1.2.1.1"
SYS_UPTIME = "1.3.6.1.2.1.1.3.0"
IF_HC_IN_OCTETS = "1.3.6.1.2.1.31.1.1.1.6"
IF_IN_OCTETS = "1.3.6.1.2.1.2.2.1.10"
OIDS = [IF_ENTRY, SYS_UPTIME, SYSTEM, IF_HC_IN_OCTETS]

NUMERIC = re.compile(r" = (INTEGER|Counter32|Gauge32|Timeticks|Counter64): ")
VALUE = re.compile(r"^\.[0-9.]+ = (?!No Such Object|No Such Instance|No more variables)")

# net-snmp tools and agent without MIB files: numeric OIDs only, and no complaints about missing MIBs.
NET_SNMP_ENV = dict(os.environ, MIBS="", MIBDIRS="/nonexistent")

MANIFEST_PARAMETERS = ["ip", "port", "device_count", "ip_per_device", "snmp_version", "community", "v3_user",
                       "profile", "profile_path", "oids", "concurrency", "max_repetitions", "max_vars_per_pdu",
                       "timeout_ms", "retries", "rounds", "duration_s"]
MANIFEST_RESULTS = ["collections", "completed", "failed", "elapsed_s", "collections_per_second",
                    "collection_time_ms", "requests_per_collection", "response_time_ms",
                    "samples_per_collection", "samples", "values_per_collection", "values", "samples_per_second",
                    "requests", "requests_sent", "responses", "timeouts", "request_timeouts", "retries", "stray",
                    "malformed", "send_errors", "engines_discovered", "time_resyncs", "error_responses", "failures",
                    "fit", "client_cpu_s", "client_cpu_us_per_request", "failed_devices", "failed_device_count",
                    "first_failure"]


def random_port(span=1, host="127.0.0.1"):
    """A port (and span - 1 after it) below Linux's ephemeral range, free for UDP on host now."""
    for _ in range(100):
        port = random.randint(h.PORT_LOW, h.PORT_HIGH - span)
        socks = []
        try:
            for p in range(port, port + span):
                s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
                socks.append(s)
                s.bind((host, p))
            return port
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no free UDP port range found")


class Snmpd:
    """net-snmp's snmpd on 127.0.0.1:port (and the next addresses with addresses > 1), or on udp6 [::1]:port
    with v6, v2c community public, read-only; SIGTERM at the end."""

    def __init__(self, port=None, addresses=1, v6=False):
        self.port = port
        self.addresses = addresses
        self.v6 = v6
        self.proc = None
        self.dir = tempfile.mkdtemp(prefix="fleetsim-snmpd-")
        self.conf = os.path.join(self.dir, "snmpd.conf")
        self.log_path = os.path.join(self.dir, "snmpd.log")
        with open(self.conf, "w") as f:
            f.write("rocommunity6 public ::1/128\n" if v6 else "rocommunity public 127.0.0.0/8\n")

    def __enter__(self):
        fixed = self.port is not None
        for _ in range(1 if fixed else START_ATTEMPTS):
            if not fixed:
                self.port = random_port(host="::1" if self.v6 else "127.0.0.1")
            if self._start_once():
                return self
        self.stop()
        raise AssertionError("snmpd did not start on %s:\n%s" % (self.agent(), self.log()))

    def __exit__(self, *exc):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def agent(self, a=0):
        """net-snmp's name of the agent (address a)."""
        return "udp6:[::1]:%d" % self.port if self.v6 else "udp:127.0.0.%d:%d" % (a + 1, self.port)

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return "(no log)"

    def _start_once(self):
        env = dict(NET_SNMP_ENV, SNMP_PERSISTENT_DIR=self.dir)
        log = open(self.log_path, "w")
        # -C: only our configuration; -I -smux: no SMUX (TCP 199); -f: stay in the foreground.
        self.proc = subprocess.Popen(
            [shutil.which("snmpd") or "/usr/sbin/snmpd", "-f", "-Lf", self.log_path, "-C", "-c", self.conf,
             "-I", "-smux", "-p", os.path.join(self.dir, "pid"),
             ",".join(self.agent(a) for a in range(self.addresses))],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
            preexec_fn=lambda: h._child_setup(None))
        log.close()
        deadline = time.monotonic() + h.scaled(READY_TIMEOUT_S)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            r = subprocess.run(["snmpget", "-v2c", "-c", "public", "-On", "-t", "0.3", "-r", "0",
                                self.agent(), SYS_UPTIME], env=NET_SNMP_ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(5))
            if r.returncode == 0 and b"Timeticks" in r.stdout:
                return True
            time.sleep(0.1)
        self.stop()
        return False

    def stop(self):
        if not self.proc or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=h.scaled(STOP_TIMEOUT_S))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("snmpd did not stop on SIGTERM")


def bulkwalk(port, oid, host="127.0.0.1"):
    """snmpbulkwalk's lines (-On) for one OID."""
    agent = ("udp6:[%s]:%d" if ":" in host else "%s:%d") % (host, port)
    r = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", "-t", "2", "-r", "1", agent, oid],
                       env=NET_SNMP_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(30))
    if r.returncode != 0:
        raise AssertionError("snmpbulkwalk %s failed: %s" % (oid, r.stderr.decode(errors="replace")))
    return r.stdout.decode(errors="replace").splitlines()


def expected_counts(port, oids, host="127.0.0.1"):
    """(numeric values, all values) snmpbulkwalk reports for these OIDs together."""
    numeric = values = 0
    for oid in oids:
        lines = bulkwalk(port, oid, host)
        numeric += sum(1 for line in lines if NUMERIC.search(line))
        values += sum(1 for line in lines if VALUE.search(line))
    return numeric, values


class SilentPeer:
    """A UDP socket on 127.0.0.1:port that records every datagram; answer() decides the reply."""

    def __init__(self, port, answer=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))
        self.sock.settimeout(0.1)
        self.answer = answer
        self.received = []
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping = True
        self.thread.join(timeout=h.scaled(5))
        self.sock.close()

    def _serve(self):
        while not self.stopping:
            try:
                data, addr = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            except OSError:
                return
            self.received.append(data)
            if self.answer:
                self.sock.sendto(self.answer(data), addr)


def request_id(datagram):
    """The request-id of a v2c GETBULK as fleetsim-stress encodes it (minimal BER, short community)."""
    return pdu_fields(datagram)[0][1]


def echo_response(datagram, error_status=0, wrong_id=False):
    """The GETBULK turned into a Response-PDU with its varbinds (NULL values) echoed: same lengths,
    with error-status set, and the request-id changed in its last byte when wrong_id."""
    (id_at, _), (status_at, status_len), pdu_at = pdu_fields(datagram)
    out = bytearray(datagram)
    out[pdu_at] = 0xA2
    assert status_len == 1 and error_status < 128
    out[status_at] = error_status
    if wrong_id:
        out[id_at] ^= 1
    return bytes(out)


def pdu_fields(datagram):
    """((offset of the request-id's last byte, request-id), (offset, length) of the non-repeaters /
    error-status contents, offset of the PDU tag)."""
    i = 0

    def header():
        nonlocal i
        tag = datagram[i]
        length = datagram[i + 1]
        i += 2
        if length & 0x80:
            n = length & 0x7F
            length = int.from_bytes(datagram[i:i + n], "big")
            i += n
        return tag, length

    tag, _ = header()  # message SEQUENCE
    assert tag == 0x30
    tag, n = header()  # version
    assert tag == 0x02 and datagram[i:i + n] == b"\x01", "not SNMPv2c"
    i += n
    tag, n = header()  # community
    assert tag == 0x04
    i += n
    pdu_at = i
    tag, _ = header()  # PDU
    assert tag == 0xA5, "not a GetBulkRequest-PDU: tag 0x%02x" % tag
    tag, n = header()  # request-id
    assert tag == 0x02
    rid = (i + n - 1, int.from_bytes(datagram[i:i + n], "big", signed=True))
    i += n
    tag, n = header()  # non-repeaters
    assert tag == 0x02
    return rid, (i, n), pdu_at


class Result:
    def __init__(self, args, code, out, err, manifest, wall_s):
        self.args = [str(a) for a in args]
        self.code = code
        self.out = out
        self.err = err
        self.manifest = manifest
        self.wall_s = wall_s

    def __str__(self):
        return ("fleetsim-stress %s\nexit code %s after %.2f s\n--- stdout\n%s--- stderr\n%s--- manifest\n%s"
                % (" ".join(self.args), self.code, self.wall_s, self.out, self.err,
                   json.dumps(self.manifest, indent=1) if self.manifest is not None else "(none)"))


def run_stress(args, timeout=RUN_LIMIT_S, manifest=True):
    """Run fleetsim-stress snmp to completion (bounded); stdout is a pipe, so no progress line."""
    args = ["snmp"] + [str(a) for a in args]
    path = None
    if manifest:
        fd, path = tempfile.mkstemp(prefix="fleetsim-stress-snmp-", suffix=".json")
        os.close(fd)
        os.unlink(path)  # the client must create it
        args += ["--json", path]
    started = time.monotonic()
    try:
        proc = subprocess.run([STRESS] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=h.scaled(timeout),
                              preexec_fn=lambda: h._child_setup(None))
    except subprocess.TimeoutExpired as e:
        raise AssertionError("fleetsim-stress %s did not end within %.0f s; stdout:\n%s\nstderr:\n%s"
                             % (" ".join(args), h.scaled(timeout), e.stdout, e.stderr))
    wall = time.monotonic() - started
    data = None
    if path and os.path.exists(path):
        with open(path) as f:
            text = f.read()
        os.unlink(path)
        try:
            data = json.loads(text)
        except ValueError as e:
            raise AssertionError("manifest is not JSON (%s):\n%s" % (e, text))
    return Result(args, proc.returncode, proc.stdout.decode(errors="replace"),
                  proc.stderr.decode(errors="replace"), data, wall)


class StressSnmpTest(unittest.TestCase):
    agent = None

    @classmethod
    def setUpClass(cls):
        for tool in ("snmpd", "snmpbulkwalk", "snmpget"):
            if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
                raise AssertionError("test_stress_snmp needs net-snmp's %s (Debian: snmpd, snmp)" % tool)
        cls.agent = Snmpd().__enter__()

    @classmethod
    def tearDownClass(cls):
        if cls.agent:
            cls.agent.__exit__(None, None, None)

    def ok(self, r):
        self.assertEqual(r.code, 0, str(r))
        self.assertIsNotNone(r.manifest, str(r))
        res = r.manifest["results"]
        self.assertEqual(res["failed"], 0, str(r))
        self.assertEqual(res["collections"], res["completed"], str(r))
        self.assertNotIn("FAILED", r.err, str(r))
        return res

    def test_samples_equal_the_numeric_values_snmpbulkwalk_reports(self):
        numeric, values = expected_counts(self.agent.port, OIDS)
        self.assertGreater(numeric, 10)
        # Every way of packing the walk into requests yields the same samples: one column per
        # request and one repetition, a window smaller than the OID list, and the defaults.
        for reps, per_pdu in ((25, 10), (1, 1), (3, 2), (100, 4)):
            with self.subTest(max_repetitions=reps, max_vars_per_pdu=per_pdu):
                r = run_stress(["--port", self.agent.port, "--oids", ",".join(OIDS), "--rounds", 3,
                                "--max-repetitions", reps, "--max-vars-per-pdu", per_pdu])
                res = self.ok(r)
                self.assertEqual(res["completed"], 3, str(r))
                spc = res["samples_per_collection"]
                self.assertEqual((spc["min"], spc["max"]), (numeric, numeric), str(r))
                self.assertEqual(res["samples"], 3 * numeric, str(r))
                self.assertEqual(res["values"], 3 * values, str(r))
                self.assertEqual(res["requests_sent"], res["responses"], str(r))
                self.assertEqual(res["requests_sent"], res["requests"], str(r))
                self.assertEqual(res["timeouts"] + res["retries"] + res["stray"] + res["malformed"], 0, str(r))
                self.assertRegex(r.out, r"samples per collection: mean %d\.0 min %d max %d"
                                 % (numeric, numeric, numeric))
        # One column per request and one repetition: a request per value, plus one to see the end.
        r = run_stress(["--port", self.agent.port, "--oids", IF_IN_OCTETS, "--max-repetitions", 1,
                        "--max-vars-per-pdu", 1])
        res = self.ok(r)
        in_octets = expected_counts(self.agent.port, [IF_IN_OCTETS])[0]
        self.assertEqual(res["requests_per_collection"]["max"], in_octets + 1, str(r))

    def test_ip_per_device_walks_every_address_on_one_port(self):
        numeric = expected_counts(self.agent.port, OIDS)[0]
        with Snmpd(addresses=3) as agent:
            r = run_stress(["--port", agent.port, "--ip-per-device", "--device-count", 3, "--rounds", 4,
                            "--oids", ",".join(OIDS)])
        res = self.ok(r)
        self.assertEqual(res["completed"], 12, str(r))
        self.assertEqual(res["samples"], 12 * numeric, str(r))
        self.assertEqual(res["stray"], 0, str(r))
        self.assertTrue(r.manifest["parameters"]["ip_per_device"])

    def test_scalar_given_as_x_0_is_one_sample(self):
        r = run_stress(["--port", self.agent.port, "--oids", SYS_UPTIME])
        res = self.ok(r)
        self.assertEqual(res["samples"], 1, str(r))
        self.assertEqual(res["requests"], 1, str(r))

    def test_silent_device_times_out_after_retries_and_fails_the_run(self):
        # Device 0 is the agent; device 1, on the next port, is a UDP socket that never answers.
        with Snmpd(port=random_port(span=2)) as agent, SilentPeer(agent.port + 1) as peer:
            r = run_stress(["--port", agent.port, "--device-count", 2, "--oids", ",".join(OIDS),
                            "--timeout", 200, "--retries", 2])
            self.assertEqual(r.code, 1, str(r))
            res = r.manifest["results"]
            self.assertEqual((res["completed"], res["failed"], res["timeouts"]), (1, 1, 1), str(r))
            self.assertEqual(res["retries"], 2, str(r))
            self.assertEqual(res["request_timeouts"], 3, str(r))
            self.assertEqual(res["failures"]["timeout"], 1, str(r))
            self.assertEqual(res["failed_devices"],
                             [{"device": 1, "address": "127.0.0.1:%d" % (agent.port + 1), "failure": "timeout"}],
                             str(r))
            self.assertIn("no response after 2 retries", res["first_failure"], str(r))
            self.assertIn("failed devices:\n  device 1 (127.0.0.1:%d) timeout\n" % (agent.port + 1), r.out)
            self.assertIn("FAILED: 1 of 2 collections failed", r.err)
            # Three attempts of the same request, each under its own request-id, none before the timeout.
            self.assertEqual(len(peer.received), 3, str(r))
            ids = [request_id(d) for d in peer.received]
            self.assertEqual(len(set(ids)), 3, ids)
            self.assertGreaterEqual(r.wall_s, 0.6, str(r))

    def test_port_with_nothing_listening_times_out(self):
        r = run_stress(["--port", random_port(), "--oids", IF_ENTRY, "--timeout", 100, "--retries", 1])
        self.assertEqual(r.code, 1, str(r))
        res = r.manifest["results"]
        self.assertEqual((res["failed"], res["timeouts"], res["retries"], res["request_timeouts"]), (1, 1, 1, 2),
                         str(r))
        self.assertEqual(res["samples"], 0, str(r))

    def test_garbage_replies_are_counted_and_ignored(self):
        with SilentPeer(random_port(), answer=lambda d: b"\x30\x03\x02\x01") as peer:
            r = run_stress(["--port", peer.sock.getsockname()[1], "--oids", IF_ENTRY, "--timeout", 150,
                            "--retries", 1])
        self.assertEqual(r.code, 1, str(r))
        res = r.manifest["results"]
        self.assertEqual((res["malformed"], res["timeouts"], res["responses"]), (2, 1, 0), str(r))

    def test_error_status_fails_the_collection_without_retrying(self):
        with SilentPeer(random_port(), answer=lambda d: echo_response(d, error_status=5)) as peer:
            r = run_stress(["--port", peer.sock.getsockname()[1], "--oids", IF_ENTRY, "--timeout", 2000])
            self.assertEqual(len(peer.received), 1, str(r))
        self.assertEqual(r.code, 1, str(r))
        res = r.manifest["results"]
        self.assertEqual((res["failed"], res["responses"], res["retries"], res["timeouts"]), (1, 1, 0, 0), str(r))
        self.assertEqual(res["error_responses"]["genErr"], 1, str(r))
        self.assertEqual(res["failures"]["error-status"], 1, str(r))
        self.assertIn("error-status genErr (5)", res["first_failure"], str(r))
        self.assertIn("error responses: genErr 1", r.out)
        self.assertLess(r.wall_s, h.scaled(2.0), str(r))

    def test_reply_with_another_request_id_is_stray(self):
        with SilentPeer(random_port(), answer=lambda d: echo_response(d, wrong_id=True)) as peer:
            r = run_stress(["--port", peer.sock.getsockname()[1], "--oids", IF_ENTRY, "--timeout", 150,
                            "--retries", 1])
        self.assertEqual(r.code, 1, str(r))
        res = r.manifest["results"]
        self.assertEqual((res["stray"], res["responses"], res["timeouts"]), (2, 0, 1), str(r))

    def test_manifest_records_every_parameter_and_result(self):
        r = run_stress(["--port", self.agent.port, "--oids", ",".join(OIDS), "--rounds", 5, "--concurrency", 3,
                        "--max-repetitions", 7, "--max-vars-per-pdu", 2, "--timeout", 900, "--retries", 1,
                        "--community", "public"])
        res = self.ok(r)
        m = r.manifest
        self.assertEqual((m["tool"], m["mode"]), ("fleetsim-stress", "snmp"))
        for key in MANIFEST_PARAMETERS:
            self.assertIn(key, m["parameters"], key)
        for key in MANIFEST_RESULTS:
            self.assertIn(key, res, key)
        p = m["parameters"]
        self.assertEqual(p["oids"], OIDS)
        self.assertEqual((p["port"], p["device_count"], p["rounds"], p["concurrency"], p["max_repetitions"],
                          p["max_vars_per_pdu"], p["timeout_ms"], p["retries"], p["community"], p["profile"]),
                         (self.agent.port, 1, 5, 3, 7, 2, 900, 1, "public", None))
        self.assertEqual(res["completed"], 5)
        for key in ("p50", "p99", "max"):
            self.assertGreater(res["collection_time_ms"][key], 0)
            self.assertGreater(res["response_time_ms"][key], 0)
        self.assertLessEqual(res["response_time_ms"]["p50"], res["response_time_ms"]["p99"])
        fit = res["fit"]
        for key in ("model", "collections", "r_ms", "c_ms", "r_squared", "mean_relative_error", "line"):
            self.assertIn(key, fit)
        self.assertEqual(fit["collections"], 5)
        self.assertAlmostEqual(fit["r_ms"], res["response_time_ms"]["mean"], places=3)
        # c is the mean of T - P x R: the collections' time beyond their requests' response times.
        self.assertGreater(res["collection_time_ms"]["max"], fit["c_ms"])
        self.assertEqual(res["error_responses"]["tooBig"], 0)
        self.assertIn("genErr", res["error_responses"])
        self.assertGreater(res["client_cpu_s"], 0)
        self.assertGreater(res["samples_per_second"], 0)
        for line in ("collection time ms: p50", "requests per collection:", "response time ms: p50",
                     "fit T = P x R + c over 5 collections", "client CPU:", "error responses: none"):
            self.assertIn(line, r.out)

    def test_duration_keeps_collecting_until_it_is_over(self):
        r = run_stress(["--port", self.agent.port, "--oids", IF_ENTRY, "--duration", 1, "--concurrency", 1])
        res = self.ok(r)
        self.assertGreater(res["completed"], 5, str(r))
        self.assertGreaterEqual(res["elapsed_s"], 1.0, str(r))
        self.assertEqual(r.manifest["parameters"]["duration_s"], 1)
        self.assertEqual(res["fit"]["collections"], res["completed"])

    def test_usage_errors_exit_2(self):
        cases = [
            (["--v3-user", "admin:sha-1024:authpass1:aes:privpass1"], "AUTH must be none, md5, sha (sha1, SHA-1)"),
            (["--oids", "1.3.6.1,ifTable"], "--oids takes dotted OIDs"),
            (["--rounds", 2, "--duration", 2], "exclude each other"),
            (["--profile", "no-such-profile-here"], "no-such-profile-here"),
            (["--max-vars-per-pdu", 0], "--max-vars-per-pdu must be"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                r = run_stress(["--port", self.agent.port] + args, manifest=False)
                self.assertEqual(r.code, 2, str(r))
                self.assertIn(message, r.err, str(r))


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: %s <path to fleetsim-stress> [unittest options]" % sys.argv[0])
    STRESS = sys.argv.pop(1)
    unittest.main()
