"""fleetsim-stress end to end: what it sends, what it reports, and what landed on the server.

The stress client runs against three kinds of server:
  * fleetsim itself; afterwards an independent client (RawClient, or ncclient through the
    adapter of test_ncclient.py) reads every device's configuration, and the test asserts that
    exactly the expected entries exist, each on the device its session talked to;
  * scripted fake servers (fake_netconf.py) that record every byte the client sent and
    misbehave on purpose: close mid-run, never answer, send no hello, offer only base:1.0;
  * yuma123's netconfd (Debian package netconfd), reached with its tcp-direct preamble.
Every run is bounded, every reported number is checked against the manifest (--json) and the
server side, and any mismatch prints the client's whole output.

Run: /usr/bin/python3 test_stress.py <path to fleetsim> <path to fleetsim-stress> [unittest options]
"""

import collections
import getpass
import json
import os
import pty
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
import fake_netconf as fake  # noqa: E402
import test_ncclient as ncc  # noqa: E402  (its TCP adapter for ncclient; its tests do not run here)

STRESS = None  # path to fleetsim-stress, from the command line
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
RUN_LIMIT_S = 30.0
PHYS_ADDR_BASE = 0xAABBCCDD0000


def mac(index):
    v = (PHYS_ADDR_BASE + index) & 0xFFFFFFFFFFFF
    return ":".join("%02x" % ((v >> s) & 255) for s in range(40, -8, -8))


def split(edits, threads):
    """[(session, first index, count)]: edits split evenly, the last session takes the remainder."""
    per = edits // threads
    return [(s, per * s, edits - per * s if s == threads - 1 else per) for s in range(threads)]


def expected_default_names(edits, threads, devices):
    """{device: sorted names} for the built-in content (stress-{SESSION}-{INDEX})."""
    out = {d: [] for d in range(devices)}
    for s, first, count in split(edits, threads):
        out[s % devices] += ["stress-%d-%d" % (s, i) for i in range(first, first + count)]
    return {d: sorted(v) for d, v in out.items()}


def commits_expected(edits, threads, batch):
    return sum(-(-count // (batch or count)) for _, _, count in split(edits, threads))


# ---------------------------------------------------------------- running the client

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


def stress_cmd(args):
    return [STRESS] + [str(a) for a in args]


def run_stress(args, timeout=RUN_LIMIT_S, manifest=True):
    """Run fleetsim-stress to completion (bounded); stderr is a pipe, not a terminal."""
    args = [str(a) for a in args]
    path = None
    if manifest:
        fd, path = tempfile.mkstemp(prefix="fleetsim-stress-", suffix=".json")
        os.close(fd)
        os.unlink(path)  # the client must create it
        args = args + ["--json", path]
    started = time.monotonic()
    try:
        proc = subprocess.run(stress_cmd(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
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


def summary(out):
    """The stdout summary as a dict (absent lines are absent keys)."""
    s = {}
    m = re.search(r"^Requests per second: (\S+)$", out, re.M)
    if m:
        s["rps"] = m.group(1)
    m = re.search(r"^edits: (\d+) sent, (\d+) answered: (\d+) ok, (\d+) rpc-error$", out, re.M)
    if m:
        s["edits"] = tuple(int(x) for x in m.groups())
    m = re.search(r"^commits: (\d+) sent, (\d+) ok, (\d+) rpc-error$", out, re.M)
    if m:
        s["commits"] = tuple(int(x) for x in m.groups())
    m = re.search(r"^latency us: p50 (\d+) p90 (\d+) p99 (\d+) p99\.9 (\d+) max (\d+)$", out, re.M)
    if m:
        s["latency"] = [int(x) for x in m.groups()]
    m = re.search(r"^errors by error-tag:((?: \S+ \d+)+)$", out, re.M)
    if m:
        words = m.group(1).split()
        s["tags"] = {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}
    if re.search(r"^client CPU: \d+\.\d+ s\b.*, \d+\.\d+ us per edit$", out, re.M):
        s["cpu"] = True
    return s


class StressCase(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-stress-test-")
        self.cleanups = []

    def tearDown(self):
        # Every cleanup runs; the first failure among them fails the test afterwards.
        first = None
        for fn in reversed(self.cleanups):
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - reported below
                first = first or e
        shutil.rmtree(self.tmp, ignore_errors=True)
        if first:
            raise first

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
        return path

    def fleet(self, **kw):
        f = h.Fleet(**kw).start()
        self.cleanups.append(f.kill)  # after a failure only: a passing test stops it with SIGTERM itself
        return f

    def fakes(self, script=None, count=1):
        f = fake.FakeServers(script, count).start()
        self.cleanups.append(f.close)
        return f

    def stress(self, args, code=0, timeout=RUN_LIMIT_S):
        res = run_stress(args, timeout)
        if res.code != code:
            self.fail("exit code %s, want %d\n%s" % (res.code, code, res))
        return res

    def check(self, cond, res, what):
        if not cond:
            self.fail("%s\n%s" % (what, res))

    def assert_complete(self, res, edits, ok=None, rpc_errors=0, commits=None, tags=None):
        """A complete edit run: the summary lines and the manifest agree with the expected counts."""
        ok = edits - rpc_errors if ok is None else ok
        s = summary(res.out)
        self.check(res.err == "", res, "stderr should be empty (no progress bar off a terminal, no errors)")
        self.check("rps" in s, res, "no 'Requests per second:' line")
        try:
            rps = float(s["rps"])
        except ValueError:
            rps = -1.0
        self.check(rps > 0, res, "'Requests per second: %s' is not a float > 0" % s["rps"])
        self.check(s.get("edits") == (edits, edits, ok, rpc_errors), res,
                   "edits line should be: %d sent, %d answered: %d ok, %d rpc-error" % (edits, edits, ok, rpc_errors))
        if commits is None:
            self.check("commits" not in s, res, "a commits line without the candidate datastore")
        else:
            self.check(s.get("commits") == (commits, commits, 0), res,
                       "commits line should be: %d sent, %d ok, 0 rpc-error" % (commits, commits))
        lat = s.get("latency")
        self.check(lat is not None and lat == sorted(lat), res, "latency line missing or percentiles not ordered")
        self.check(s.get("tags", {}) == (tags or {}), res, "errors by error-tag should be %s" % (tags or "absent"))
        self.check(s.get("cpu"), res, "no 'client CPU:' line")
        m = res.manifest
        self.check(m is not None, res, "no manifest written")
        r = m["results"]
        want = {"complete": True, "edits_sent": edits, "edits_answered": edits, "edits_ok": ok,
                "edits_rpc_error": rpc_errors, "commits_sent": commits or 0, "commits_ok": commits or 0,
                "commits_rpc_error": 0, "errors_by_tag": tags or {}, "failure": None}
        got = {k: r.get(k) for k in want}
        self.assertEqual(got, want, "manifest results differ\n%s" % res)
        self.check(m["tool"] == "fleetsim-stress" and m["mode"] == "edit", res, "manifest tool/mode")
        self.check(abs(r["requests_per_second"] - rps) < 0.0015, res, "manifest rate differs from stdout")
        self.check(0 < r["elapsed_s"] <= res.wall_s, res, "elapsed_s outside (0, wall time of the run]")
        self.check([r["latency_us"][k] for k in ("p50", "p90", "p99", "p99.9", "max")] == lat, res,
                   "manifest latency differs from stdout")
        return s

    def assert_params(self, res, **want):
        got = {k: res.manifest["parameters"].get(k) for k in want}
        self.assertEqual(got, want, "manifest parameters\n%s" % res)

    def assert_failed(self, res, pattern):
        """Exit 1 with exactly one stderr line, FAILED: matching pattern; returns the match."""
        self.check(res.code == 1, res, "exit code should be 1")
        m = re.fullmatch(r"fleetsim-stress: FAILED: (%s)\n" % pattern, res.err)
        self.check(m, res, "stderr should be one line 'fleetsim-stress: FAILED: %s'" % pattern)
        self.check("Requests per second" not in res.out, res, "a failed run must not print a rate")
        return m

    def assert_failed_manifest(self, res, sent, answered, failure_text):
        r = res.manifest["results"]
        got = {k: r[k] for k in ("complete", "edits_sent", "edits_answered", "edits_ok", "failure")}
        want = {"complete": False, "edits_sent": sent, "edits_answered": answered, "edits_ok": answered,
                "failure": failure_text}
        self.assertEqual(got, want, "manifest of a failed run\n%s" % res)
        self.check(0 <= r["elapsed_s"] <= res.wall_s, res, "elapsed_s outside [0, wall time of the run]")

    # -- independent reads
    def interfaces(self, addr, preamble=None):
        """[(name, description)] in the device's running configuration, read by RawClient."""
        with h.RawClient(addr, timeout=h.scaled(10)) as c:
            if preamble:
                c.send_raw(preamble)
            c.hello()
            data = h.assert_data(c.get_config(), "get-config of %s:%d" % addr)
        out = []
        for itf in data.iter("{%s}interface" % h.IF_NS):
            name = itf.findtext("{%s}name" % h.IF_NS)
            if name not in h.PROFILE_INTERFACES:  # every device starts with its profile's interfaces
                out.append((name, itf.findtext("{%s}description" % h.IF_NS)))
        return out

    def assert_names(self, got, want, what):
        if sorted(got) != sorted(want):
            dup = [n for n, c in collections.Counter(got).items() if c > 1]
            missing = sorted(set(want) - set(got))
            extra = sorted(set(got) - set(want))
            self.fail("%s: %d names, want %d; missing %s; unexpected %s; duplicated %s"
                      % (what, len(got), len(want), missing[:20], extra[:20], dup[:20]))

    def assert_default_content(self, fleet_or_addrs, edits, threads, devices, preamble=None):
        want = expected_default_names(edits, threads, devices)
        for d in range(devices):
            addr = fleet_or_addrs.addr(d) if hasattr(fleet_or_addrs, "addr") else fleet_or_addrs[d]
            items = self.interfaces(addr, preamble)
            self.assert_names([n for n, _ in items], want[d], "device %d" % d)
            for name, desc in items:
                index = int(name.rsplit("-", 1)[1])
                self.assertEqual(desc, mac(index), "description of %s on device %d" % (name, d))


# ---------------------------------------------------------------- against fleetsim

class EditFleetsimTests(StressCase):

    def test_sync_one_session_lands_every_edit_once(self):
        f = self.fleet(devices=1)
        n = 500
        res = self.stress(["edit", "--port", f.port, "--edits", n, "--candidate-datastore", "false"])
        self.assert_complete(res, n)
        self.assert_params(res, ip="127.0.0.1", port=f.port, device_count=1, ip_per_device=False, edits=n,
                           candidate_datastore=False, async_requests=False, thread_amount=1, msg_timeout_s=60,
                           legacy_framing=False, ssh=False)
        self.assertEqual(res.manifest["server"]["framing"], "base:1.1")
        self.assertGreater(res.manifest["server"]["session_id"], 0)
        self.assertIn(h.BASE11, res.manifest["server"]["capabilities"])
        self.assert_default_content(f, n, 1, 1)
        f.stop()

    def test_async_pipeline_64_lands_every_edit_once(self):
        f = self.fleet(devices=1)
        n = 3000
        res = self.stress(["edit", "--port", f.port, "--edits", n, "--candidate-datastore", "false",
                           "--async-requests", "true", "--pipeline", "64"])
        self.assert_complete(res, n)
        self.assert_params(res, async_requests=True, pipeline=64)
        self.assert_default_content(f, n, 1, 1)
        f.stop()

    def test_three_sessions_over_three_devices_remainder_to_the_last(self):
        # 100 = 33 + 33 + 34; session s talks to device s. Read back with ncclient.
        f = self.fleet(devices=3)
        n = 100
        res = self.stress(["edit", "--port", f.port, "--device-count", 3, "--thread-amount", 3, "--edits", n,
                           "--candidate-datastore", "false"])
        self.assert_complete(res, n)
        want = expected_default_names(n, 3, 3)
        self.assertEqual([len(want[d]) for d in range(3)], [33, 33, 34])
        for d in range(3):
            m = ncc.tcp_manager(f.addr(d))
            try:
                names = [n for n in ncc.names_in(m.get_config(source="running")) if n not in h.PROFILE_INTERFACES]
            finally:
                m.close_session()
            self.assert_names(names, want[d], "device %d (ncclient)" % d)
        f.stop()

    def test_four_async_sessions_over_two_devices_wrap_around(self):
        f = self.fleet(devices=2)
        n = 50  # 12 + 12 + 12 + 14; sessions 0, 2 on device 0 and 1, 3 on device 1
        res = self.stress(["edit", "--port", f.port, "--device-count", 2, "--thread-amount", 4, "--edits", n,
                           "--candidate-datastore", "false", "--async-requests", "true", "--pipeline", "5"])
        self.assert_complete(res, n)
        self.assert_default_content(f, n, 4, 2)
        f.stop()

    def test_candidate_batches_of_7_over_three_sessions_commit_everything(self):
        f = self.fleet(devices=3)
        n = 100  # sessions of 33, 33, 34 edits: 5 commits each
        res = self.stress(["edit", "--port", f.port, "--device-count", 3, "--thread-amount", 3, "--edits", n,
                           "--edit-batch-size", 7])
        self.assert_complete(res, n, commits=commits_expected(n, 3, 7))
        self.assertEqual(commits_expected(n, 3, 7), 15)
        self.assert_params(res, candidate_datastore=True, edit_batch_size=7)
        self.assert_default_content(f, n, 3, 3)
        f.stop()

    def test_candidate_async_one_batch_commits_once(self):
        f = self.fleet(devices=1)
        n = 1000
        res = self.stress(["edit", "--port", f.port, "--edits", n, "--async-requests", "true", "--pipeline", "0"])
        self.assert_complete(res, n, commits=1)
        self.assert_default_content(f, n, 1, 1)
        f.stop()

    def test_legacy_framing_against_fleetsim(self):
        f = self.fleet(devices=1)
        n = 200
        res = self.stress(["edit", "--port", f.port, "--edits", n, "--legacy-framing", "--edit-batch-size", 50])
        self.assert_complete(res, n, commits=4)
        self.assertEqual(res.manifest["server"]["framing"], "base:1.0")
        self.assert_params(res, legacy_framing=True)
        self.assert_default_content(f, n, 1, 1)
        f.stop()

    def test_phys_addr_content_lands_in_order(self):
        # OpenDaylight-style content: the MAC is the interface's name. 300 edits cross 00:ff -> 01:00.
        f = self.fleet(devices=1)
        n = 300
        content = os.path.join(DATA_DIR, "edit_phys_addr.xml")
        res = self.stress(["edit", "--port", f.port, "--edits", n, "--candidate-datastore", "false",
                           "--edit-content", content])
        self.assert_complete(res, n)
        self.assertEqual(res.manifest["parameters"]["edit_content"], content)
        items = self.interfaces(f.addr(0))
        want = [mac(i) for i in range(n)]
        self.assertEqual(want[0], "aa:bb:cc:dd:00:00")
        self.assertEqual(want[256], "aa:bb:cc:dd:01:00")
        self.assertEqual([name for name, _ in items], want, "interfaces named by MAC, in edit order")
        self.assertEqual([d for _, d in items], ["phys %d" % i for i in range(n)])
        f.stop()

    def test_every_placeholder_with_commits_between_edits(self):
        # {MSG_ID} counts the session's requests, commits included: edit e of a session with
        # batches of 7 has message-id e + 1 + e // 7.
        f = self.fleet(devices=2)
        n, threads = 41, 2  # sessions of 20 and 21 edits
        content = os.path.join(DATA_DIR, "edit_placeholders.xml")
        res = self.stress(["edit", "--port", f.port, "--device-count", 2, "--thread-amount", threads,
                           "--edits", n, "--edit-batch-size", 7, "--edit-content", content])
        self.assert_complete(res, n, commits=commits_expected(n, threads, 7))
        for s, first, count in split(n, threads):
            want = []
            for e in range(count):
                i = first + e
                want.append(("ph-%d" % i, "index %d msg-id %d session %d device %d mac %s"
                             % (i, e + 1 + e // 7, s, s, mac(i))))
            got = sorted(self.interfaces(f.addr(s)), key=lambda x: int(x[0][3:]))
            self.assertEqual(got, want, "device %d" % s)
        f.stop()

    def test_rpc_errors_are_counted_by_tag_and_the_run_completes(self):
        # Creating the same interface every time: the first edit works, every other is data-exists.
        f = self.fleet(devices=1)
        n = 20
        content = os.path.join(DATA_DIR, "edit_create_same.xml")
        res = self.stress(["edit", "--port", f.port, "--edits", n, "--candidate-datastore", "false",
                           "--edit-content", content])
        self.assert_complete(res, n, ok=1, rpc_errors=n - 1, tags={"data-exists": n - 1})
        self.assertIn("errors by error-tag: data-exists %d\n" % (n - 1), res.out)
        self.assertEqual(self.interfaces(f.addr(0)), [("stress-dup", None)])
        f.stop()

    def test_kill_9_of_fleetsim_mid_run_fails_naming_unanswered_ids(self):
        f = self.fleet(devices=1)
        n = 100000
        path = os.path.join(self.tmp, "m.json")
        args = ["edit", "--port", f.port, "--edits", n, "--candidate-datastore", "false", "--json", path]
        started = time.monotonic()
        proc = subprocess.Popen(stress_cmd(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, preexec_fn=lambda: h._child_setup(None))
        self.cleanups.append(lambda: proc.poll() is None and (proc.kill(), proc.wait()))
        # Kill once edit 500 has landed, well before the run could end.
        filt = ('<filter type="subtree"><interfaces xmlns="%s"><interface><name>stress-0-500</name></interface>'
                '</interfaces></filter>' % h.IF_NS)
        deadline = time.monotonic() + h.scaled(15)
        with h.RawClient(f.addr(0)) as c:
            c.hello()
            while h.interface_names(c.get_config(filt=filt)) != ["stress-0-500"]:
                self.assertIsNone(proc.poll(), "the client ended before edit 500 landed")
                self.assertLess(time.monotonic(), deadline, "edit 500 did not land within the time limit")
                time.sleep(0.01)
        f.kill()
        try:
            out, err = proc.communicate(timeout=h.scaled(10))
        except subprocess.TimeoutExpired:
            self.fail("fleetsim-stress did not end within %.0f s of the server's death" % h.scaled(10))
        with open(path) as fh:
            manifest = json.load(fh)
        res = Result(args, proc.returncode, out.decode(), err.decode(), manifest, time.monotonic() - started)
        m = self.assert_failed(res, r"session 0 \(device 0\): (closed-by-server|reset) \((.*)\); requests with "
                                    r"message-id (\d+) to (\d+) were sent and not answered, (\d+) not sent")
        first, last, unsent = int(m.group(4)), int(m.group(5)), int(m.group(6))
        # Edit 500 (message-id 501) landed, so in a sync run the replies up to 500 had arrived.
        self.check(first == last and first >= 501 and last + unsent == n, res,
                   "one request in flight (sync), at least 500 answered, the rest not sent")
        self.assert_failed_manifest(res, last, first - 1, m.group(1))
        self.assertEqual(summary(res.out).get("edits"), (last, first - 1, first - 1, 0), res)


# ---------------------------------------------------------------- against scripted servers

class EditFakeServerTests(StressCase):

    def test_server_closing_after_10_sync_replies(self):
        srv = self.fakes(fake.Script(answer=10, after="close"))
        res = run_stress(["edit", "--port", srv.port, "--edits", 100, "--candidate-datastore", "false"])
        text = ("session 0 (device 0): closed-by-server (server closed the connection); requests with "
                "message-id 11 to 11 were sent and not answered, 89 not sent")
        self.assert_failed(res, re.escape(text))
        self.assert_failed_manifest(res, 11, 10, text)
        self.assertEqual(summary(res.out).get("edits"), (11, 10, 10, 0), res)
        self.assertEqual([r.message_id for r in srv.all_requests()], [str(i) for i in range(1, 12)])

    def test_server_closing_mid_pipeline_names_the_unanswered_range(self):
        # 64 in flight; each of the 10 replies lets one more out before the close is seen.
        srv = self.fakes(fake.Script(answer=10, after="close"))
        res = run_stress(["edit", "--port", srv.port, "--edits", 100, "--candidate-datastore", "false",
                          "--async-requests", "true", "--pipeline", 64])
        text = ("session 0 (device 0): closed-by-server (server closed the connection); requests with "
                "message-id 11 to 74 were sent and not answered, 26 not sent")
        self.assert_failed(res, re.escape(text))
        self.assert_failed_manifest(res, 74, 10, text)

    def test_no_answer_within_msg_timeout_fails_in_time(self):
        srv = self.fakes(fake.Script(answer=0, after="silent"))
        res = run_stress(["edit", "--port", srv.port, "--edits", 5, "--candidate-datastore", "false",
                          "--msg-timeout", 1])
        text = ("session 0 (device 0): timeout (no answer within 1000 ms); requests with message-id 1 to 1 "
                "were sent and not answered, 4 not sent")
        self.assert_failed(res, re.escape(text))
        self.check(0.9 <= res.wall_s <= h.scaled(4), res, "a 1 s timeout should end the run in 1 to 4 s")
        self.assert_failed_manifest(res, 1, 0, text)

    def test_no_hello_within_msg_timeout_fails_in_time(self):
        srv = self.fakes(fake.Script(send_hello=False))
        res = run_stress(["edit", "--port", srv.port, "--edits", 5, "--msg-timeout", 1])
        text = "session 0 (device 0): timeout (no answer within 1000 ms)"
        self.assert_failed(res, re.escape(text))
        self.check(0.9 <= res.wall_s <= h.scaled(4), res, "a 1 s timeout should end the run in 1 to 4 s")
        self.check(res.out == "", res, "nothing measured, so no summary")
        self.assert_failed_manifest(res, 0, 0, text)

    def test_hello_without_session_id_is_bad_hello(self):
        srv = self.fakes(fake.Script(session_id=None))
        res = run_stress(["edit", "--port", srv.port, "--edits", 5])
        self.assert_failed(res, re.escape("session 0 (device 0): bad-hello (server hello without session-id)"))
        self.assertEqual(srv.all_requests(), [])

    def test_base10_only_server_gets_end_of_message_framing(self):
        srv = self.fakes(fake.Script(caps=[h.BASE10], session_id=77))
        res = self.stress(["edit", "--port", srv.port, "--edits", 30, "--candidate-datastore", "false"])
        self.assert_complete(res, 30)
        self.assertEqual(res.manifest["server"], {"session_id": 77, "framing": "base:1.0", "capabilities": [h.BASE10]})
        conn = srv.only_connection()
        self.assertEqual(conn.errors, [])
        self.assertIn(h.BASE11, conn.client_caps, "without --legacy-framing the client offers base:1.1")
        self.assertEqual({r.framing for r in conn.requests}, {"eom"})
        self.assertEqual(len(conn.requests), 30)

    def test_legacy_framing_offers_only_base10(self):
        srv = self.fakes(fake.Script())
        res = self.stress(["edit", "--port", srv.port, "--edits", 10, "--legacy-framing"])
        self.assert_complete(res, 10, commits=1)
        conn = srv.only_connection()
        self.assertEqual(conn.client_caps, [h.BASE10])
        self.assertEqual({r.framing for r in conn.requests}, {"eom"})
        self.assertEqual(res.manifest["server"]["framing"], "base:1.0")

    def test_both_bases_give_chunked_framing(self):
        srv = self.fakes(fake.Script())
        res = self.stress(["edit", "--port", srv.port, "--edits", 10])
        self.assert_complete(res, 10, commits=1)
        conn = srv.only_connection()
        self.assertEqual(sorted(conn.client_caps), sorted([h.BASE10, h.BASE11]))
        self.assertEqual({r.framing for r in conn.requests}, {"chunked"})
        self.assertEqual(res.manifest["server"]["framing"], "base:1.1")
        self.assertEqual(res.manifest["server"]["session_id"], 4242)

    def test_candidate_batches_on_the_wire(self):
        srv = self.fakes(fake.Script())
        res = self.stress(["edit", "--port", srv.port, "--edits", 17, "--edit-batch-size", 7])
        self.assert_complete(res, 17, commits=3)
        reqs = srv.only_connection().requests
        got = [(r.message_id, r.op, r.target) for r in reqs]
        ops = (["e"] * 7 + ["c"] + ["e"] * 7 + ["c"] + ["e"] * 3 + ["c"])
        want = [(str(i + 1), "edit-config" if o == "e" else "commit", "candidate" if o == "e" else None)
                for i, o in enumerate(ops)]
        self.assertEqual(got, want)

    def test_running_target_sends_no_commit(self):
        srv = self.fakes(fake.Script())
        res = self.stress(["edit", "--port", srv.port, "--edits", 9, "--candidate-datastore", "false",
                           "--edit-batch-size", 4])
        self.assert_complete(res, 9)
        got = [(r.message_id, r.op, r.target) for r in srv.only_connection().requests]
        self.assertEqual(got, [(str(i), "edit-config", "running") for i in range(1, 10)])

    def test_pipeline_window_bounds_requests_in_flight(self):
        # The server answers only after the client has gone quiet: what piles up is the window.
        for extra, n, window in ((["--async-requests", "true", "--pipeline", 8], 20, 8),
                                 (["--async-requests", "true", "--pipeline", 0], 20, 20),
                                 ([], 4, 1)):
            with self.subTest(args=extra):
                with fake.FakeServers(fake.Script(settle_s=0.15)) as srv:
                    res = self.stress(["edit", "--port", srv.port, "--edits", n, "--candidate-datastore", "false"]
                                      + extra)
                    self.assert_complete(res, n)
                    conn = srv.only_connection()
                    self.assertEqual(conn.max_pending, window, "requests in flight at most\n%s" % res)
                    self.assertEqual([r.message_id for r in conn.requests], [str(i) for i in range(1, n + 1)])

    def test_commit_errors_are_counted_by_tag(self):
        srv = self.fakes(fake.Script(error_tags={"commit": "in-use"}))
        res = self.stress(["edit", "--port", srv.port, "--edits", 12, "--edit-batch-size", 5])
        s = summary(res.out)
        self.check(s.get("edits") == (12, 12, 12, 0) and s.get("commits") == (3, 0, 3), res,
                   "edits: 12 sent, 12 answered: 12 ok, 0 rpc-error / commits: 3 sent, 0 ok, 3 rpc-error")
        self.check(s.get("tags") == {"in-use": 3} and "rps" in s, res, "errors by error-tag: in-use 3")
        r = res.manifest["results"]
        self.assertEqual((r["complete"], r["commits_sent"], r["commits_ok"], r["commits_rpc_error"],
                          r["errors_by_tag"]), (True, 3, 0, 3, {"in-use": 3}), res)

    def test_notifications_between_replies_are_ignored(self):
        srv = self.fakes(fake.Script(notify=True))
        res = self.stress(["edit", "--port", srv.port, "--edits", 20, "--async-requests", "true", "--pipeline", 4])
        self.assert_complete(res, 20, commits=1)

    def test_reply_with_the_wrong_message_id_fails_the_run(self):
        srv = self.fakes(fake.Script(wrong_id_at=3))
        res = run_stress(["edit", "--port", srv.port, "--edits", 10, "--candidate-datastore", "false"])
        m = self.assert_failed(res, re.escape("session 0: reply with message-id 999999 where 3 was due; "
                                              "the server answered: <rpc-reply") + ".*")
        # What the server said is quoted, at most 200 bytes of it, so the line shows what went wrong.
        said = m.group(1).split("the server answered: ", 1)[1]
        self.check('message-id="999999"' in said and len(said) <= 200, res, "the quoted reply")

    def test_tcp_preamble_is_sent_first_byte_for_byte(self):
        preamble = (b'<ncx-connect xmlns="http://netconfcentral.org/ns/yuma-ncx" version="1" user="u" />\n'
                    b']]>]]>\x01\xff')
        path = self.write("pre.bin", preamble)
        srv = self.fakes(fake.Script(preamble_len=len(preamble)))
        res = self.stress(["edit", "--port", srv.port, "--edits", 3, "--tcp-preamble", path])
        self.assert_complete(res, 3, commits=1)
        conn = srv.only_connection()
        self.assertEqual(conn.preamble, preamble)
        self.assertEqual(conn.errors, [])
        self.assertTrue(conn.client_hello.lstrip().startswith("<?xml") or "<hello" in conn.client_hello[:200],
                        conn.client_hello)


class ProgressTests(StressCase):
    SLOW = fake.Script(reply_delay_s=0.1)  # 6 edits take about 0.6 s: two or more progress ticks

    def test_no_progress_bar_when_stderr_is_not_a_terminal(self):
        srv = self.fakes(self.SLOW)
        res = self.stress(["edit", "--port", srv.port, "--edits", 6, "--candidate-datastore", "false"])
        self.assert_complete(res, 6)  # includes: stderr is empty
        self.assertNotIn("\r", res.err + res.out)

    def test_progress_bar_on_a_terminal(self):
        srv = self.fakes(self.SLOW)
        master, slave = pty.openpty()
        self.cleanups.append(lambda: os.close(master))
        args = ["edit", "--port", srv.port, "--edits", 6, "--candidate-datastore", "false"]
        try:
            proc = subprocess.Popen(stress_cmd(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=slave, preexec_fn=lambda: h._child_setup(None))
        finally:
            os.close(slave)
        self.cleanups.append(lambda: proc.poll() is None and (proc.kill(), proc.wait()))
        tty = b""
        deadline = time.monotonic() + h.scaled(15)
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    data = os.read(master, 4096)
                except OSError:  # EIO: the terminal's last writer is gone
                    break
                if not data:
                    break
                tty += data
            elif proc.poll() is not None:
                break
        out = proc.stdout.read().decode()
        proc.stdout.close()
        code = proc.wait(timeout=h.scaled(5))
        text = tty.decode(errors="replace")
        self.assertEqual(code, 0, "stdout:\n%s\nterminal:\n%r" % (out, text))
        self.assertRegex(text, r"\r\[#* *\] \d+/6 \d+/s ETA", "progress line on the terminal")
        self.assertIn("Requests per second: ", out)
        self.assertNotIn("\r", out, "the progress bar belongs on stderr")


# ---------------------------------------------------------------- mount

def advertised_modules(addr):
    with h.RawClient(addr) as c:
        c.hello()
        mods = []
        for cap in c.server_caps():
            if "?" in cap:
                params = dict(p.split("=", 1) for p in cap.split("?", 1)[1].split("&") if "=" in p)
                if "module" in params:
                    mods.append(params["module"])
        return mods


def mount_summary(out):
    s = {}
    m = re.search(r"^mounted: (\d+) of (\d+) in (\d+\.\d+) s \((\d+\.\d+) sessions/s\)$", out, re.M)
    if m:
        s["mounted"] = (int(m.group(1)), int(m.group(2)))
        s["seconds"] = float(m.group(3))
    if re.search(r"^time to hello ms: p50 \d+\.\d+ p99 \d+\.\d+ max \d+\.\d+$", out, re.M):
        s["hello"] = True
    elif re.search(r"^time to hello ms: p50 n/a p99 n/a max n/a$", out, re.M):
        s["hello"] = "n/a"  # no hello completed: nothing measured
    m = re.search(r"^schemas fetched: (\d+)$", out, re.M)
    if m:
        s["schemas"] = int(m.group(1))
    m = re.search(r"^failures:(.*)$", out, re.M)
    if m:
        s["failures"] = m.group(1).strip()
    return s


class MountTests(StressCase):

    def assert_mounted(self, res, devices, failures="none", schemas=None):
        s = mount_summary(res.out)
        self.check(s.get("mounted") == (devices[0], devices[1]), res, "mounted: %d of %d" % devices)
        self.check(s.get("hello"), res, "no 'time to hello ms:' line")
        self.check(s.get("failures") == failures, res, "failures: %s" % failures)
        self.check(s.get("schemas") == schemas, res, "schemas fetched: %s" % schemas)
        return s

    def test_mount_40_get_schema_fetches_every_advertised_module(self):
        f = self.fleet(devices=40)
        mods = advertised_modules(f.addr(0))
        self.assertGreater(len(mods), 5, "modules advertised in fleetsim's hello: %s" % mods)
        res = self.stress(["mount", "--port", f.port, "--device-count", 40, "--on-mount", "get-schema",
                           "--concurrency", 10])
        self.assert_mounted(res, (40, 40), schemas=40 * len(mods))
        self.assertEqual(res.err, "", res)
        r = res.manifest["results"]
        self.assertEqual((r["mounted"], r["failed"], r["schemas_fetched"], r["rpc_errors"]),
                         (40, 0, 40 * len(mods), 0), res)
        self.assertEqual(res.manifest["parameters"]["on_mount"], "get-schema")
        f.stop()

    def test_mount_40_get_config(self):
        f = self.fleet(devices=40)
        res = self.stress(["mount", "--port", f.port, "--device-count", 40, "--on-mount", "get-config"])
        self.assert_mounted(res, (40, 40))
        self.assertEqual(res.manifest["results"]["failures"],
                         {k: 0 for k in ("refused", "timeout", "bad-hello", "closed-by-server", "reset",
                                         "framing", "resources", "auth", "ssh", "wrong-transport", "tls")})
        f.stop()

    def test_mount_hold_1_keeps_sessions_open_1_s(self):
        f = self.fleet(devices=3)
        res = self.stress(["mount", "--port", f.port, "--device-count", 3, "--hold", 1])
        self.assert_mounted(res, (3, 3))
        self.check(res.wall_s >= 1.0, res, "--hold 1 should take at least 1 s")
        f.stop()
        # The server's view: no session closes before 1 s after the last hello.
        srv = self.fakes(fake.Script(), count=3)
        res = self.stress(["mount", "--port", srv.port, "--device-count", 3, "--hold", 1])
        self.assert_mounted(res, (3, 3))
        conns = srv.finished()
        self.assertEqual(sorted(c.device for c in conns), [0, 1, 2])
        last_hello = max(c.hello_sent_at for c in conns)
        first_close = min(c.closed_by_client_at or 0 for c in conns)
        self.check(first_close - last_hello >= 0.95, res,
                   "a session closed %.3f s after the last hello, before --hold 1 ran out" % (first_close - last_hello))

    def test_mount_where_2_of_5_devices_do_not_listen_counts_refused(self):
        for _ in range(5):
            f = self.fleet(devices=3)
            # Hold ports P+3, P+4 (bound, not listening: connections are refused, nobody else can listen).
            holders = []
            try:
                for i in (3, 4):
                    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    holders.append(s)
                    s.bind(("127.0.0.1", f.port + i))
            except OSError:
                for s in holders:
                    s.close()
                f.stop()
                continue
            break
        else:
            self.fail("no fleet with two free ports after it")
        try:
            res = run_stress(["mount", "--port", f.port, "--device-count", 5])
        finally:
            for s in holders:
                s.close()
        self.assert_failed(res, r"2 of 5 sessions failed; first: device [34]: refused \(connect: Connection refused\)")
        self.assert_mounted(res, (3, 5), failures="refused 2")
        r = res.manifest["results"]
        self.assertEqual((r["mounted"], r["failed"], r["failures"]["refused"]), (3, 2, 2), res)
        f.stop()

    def test_mount_concurrency_bounds_sessions_in_setup(self):
        srv = self.fakes(fake.Script(hello_delay_s=0.15), count=6)
        res = self.stress(["mount", "--port", srv.port, "--device-count", 6, "--concurrency", 2])
        self.assert_mounted(res, (6, 6))
        self.assertEqual(srv.max_active_setups, 2, res)
        self.assertEqual(sorted(c.device for c in srv.finished()), list(range(6)))

    def test_mount_get_schema_asks_for_each_module_with_its_revision(self):
        caps = [h.BASE10, h.BASE11, "urn:a?module=mod-a&revision=2020-01-01",
                "urn:b?revision=2019-02-02&module=mod-b&features=x", "urn:c?module=mod-c",
                "urn:ietf:params:netconf:capability:yang-library:1.0?revision=2016-06-21&module-set-id=42"]
        srv = self.fakes(fake.Script(caps=caps), count=2)
        res = self.stress(["mount", "--port", srv.port, "--device-count", 2, "--on-mount", "get-schema"])
        self.assert_mounted(res, (2, 2), schemas=6)
        ns = "{%s}" % h.NCM_NS
        for conn in srv.finished():
            got = []
            for r in conn.requests:
                op = h.parse(r.text)[0]
                got.append((r.op, op.findtext(ns + "identifier"), op.findtext(ns + "version"),
                            op.findtext(ns + "format")))
            self.assertEqual(got, [("get-schema", "mod-a", "2020-01-01", "yang"),
                                   ("get-schema", "mod-b", "2019-02-02", "yang"),
                                   ("get-schema", "mod-c", None, "yang")], "device %d" % conn.device)

    def test_mount_get_config_rpc_errors_fail_the_run(self):
        srv = self.fakes(fake.Script(error_tags={"get-config": "access-denied"}), count=2)
        res = run_stress(["mount", "--port", srv.port, "--device-count", 2, "--on-mount", "get-config"])
        self.check(res.code == 1, res, "rpc-errors on mount should exit 1")
        s = mount_summary(res.out)
        self.check(s.get("failures") == "rpc-error 2", res, "failures: rpc-error 2")
        self.assertEqual([r.op for r in srv.all_requests()], ["get-config", "get-config"])

    def test_mount_bad_hellos_are_counted(self):
        srv = self.fakes(fake.Script(session_id=None), count=3)
        res = run_stress(["mount", "--port", srv.port, "--device-count", 3])
        self.assert_failed(res, r"3 of 3 sessions failed; first: device [012]: bad-hello "
                                r"\(server hello without session-id\)")
        s = self.assert_mounted(res, (0, 3), failures="bad-hello 3")
        self.check(s["hello"] == "n/a", res, "no hello completed: percentiles n/a, not 0.000")
        self.assertEqual(res.manifest["results"]["time_to_hello_us"], {"p50": None, "p99": None, "max": None})


# ---------------------------------------------------------------- an address per device

class IpPerDeviceTests(StressCase):
    FIRST = "127.0.3.1"

    def test_edit_five_sessions_over_five_addresses(self):
        f = self.fleet(devices=5, ip_per_device=True, ip=self.FIRST)
        n = 103
        res = self.stress(["edit", "--ip", self.FIRST, "--ip-per-device", "--port", f.port, "--device-count", 5,
                           "--thread-amount", 5, "--edits", n, "--edit-batch-size", 10])
        self.assert_complete(res, n, commits=commits_expected(n, 5, 10))
        self.assert_params(res, ip=self.FIRST, ip_per_device=True, device_count=5)
        self.assert_default_content(f, n, 5, 5)
        f.stop()

    def test_mount_five_addresses(self):
        f = self.fleet(devices=5, ip_per_device=True, ip=self.FIRST)
        res = self.stress(["mount", "--ip", self.FIRST, "--ip-per-device", "--port", f.port, "--device-count", 5,
                           "--on-mount", "get-config"])
        MountTests.assert_mounted(self, res, (5, 5))
        f.stop()


# ---------------------------------------------------------------- usage

class UsageTests(StressCase):

    def assert_usage(self, args, message):
        res = run_stress(args, manifest=False)
        self.check(res.code == 2, res, "usage errors exit 2")
        self.check(res.err == "fleetsim-stress: %s\n" % message, res, "stderr should be exactly: %s" % message)
        self.check(res.out == "", res, "nothing on stdout")

    def test_ssh_is_refused_where_it_makes_no_sense(self):
        self.assert_usage(["edit", "--ssh", "true", "--tcp-preamble", "/dev/null"],
                          "--tcp-preamble is for plain TCP; it cannot be combined with --ssh true")

    def test_unknown_option(self):
        self.assert_usage(["edit", "--frobnicate"], 'unknown option "--frobnicate" (see --help)')
        self.assert_usage(["mount", "--edits-per-second=3"], 'unknown option "--edits-per-second=3" (see --help)')

    def test_more_threads_than_edits(self):
        self.assert_usage(["edit", "--edits", 3, "--thread-amount", 4],
                          "--thread-amount 4 is more than --edits 3: every session needs an edit")

    def test_unknown_subcommand_and_bad_values(self):
        self.assert_usage(["frob"], 'unknown subcommand "frob": use edit, mount, snmp, notify, reconcile, '
                          'controller-mount, record, restconf, report, merge, ceiling or push (see --help)')
        self.assert_usage(["mount", "--on-mount", "get-all"],
                          '--on-mount takes none, get-schema or get-config, not "get-all"')
        self.assert_usage(["edit", "--edits", "0"], '--edits must be a number from 1, not "0"')
        self.assert_usage(["edit", "--candidate-datastore", "yes"],
                          '--candidate-datastore takes true or false, not "yes"')

    def test_option_without_its_value_says_so(self):
        self.assert_usage(["edit", "--edits"], "option --edits needs a value")

    def test_missing_preamble_file(self):
        path = os.path.join(self.tmp, "absent.bin")
        for mode in ("edit", "mount"):
            with self.subTest(mode=mode):
                self.assert_usage([mode, "--port", 1, "--tcp-preamble", path],
                                  'cannot open "%s": No such file or directory' % path)

    def test_missing_edit_content_file(self):
        path = os.path.join(self.tmp, "absent.xml")
        self.assert_usage(["edit", "--edits", 1, "--edit-content", path],
                          'cannot open "%s": No such file or directory' % path)


# ---------------------------------------------------------------- yuma123 netconfd

NETCONFD_MAGIC = "x56o8937ab17eg922z34rwhobskdbyswfehkpsqq3i55a0an960ccw24a4ek864aOpal1t2p"


def find_netconfd():
    for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/sbin", "/usr/bin"]:
        p = os.path.join(d, "netconfd")
        if d and os.access(p, os.X_OK):
            return p
    return None


class Netconfd:
    """yuma123's netconfd on a random port in tcp-direct mode, stopped with SIGTERM.

    netconfd keeps a transaction-id file and saves running to a startup file even with
    --no-startup. It looks for the transaction-id file in its working directory first and saves
    the startup file under $YUMA_HOME/data, so both stay in the test's temporary directory
    instead of ~/.yuma, where concurrent instances would clobber each other's files."""

    def __init__(self, workdir, extra=()):
        self.workdir = workdir
        self.extra = list(extra)
        self.proc = None
        self.port = None
        self.user = getpass.getuser()

    def preamble(self):
        # netconfd's thin-client connect message. It checks port against the SSH ports it
        # allows (--port), so the server is started with --port=<its tcp-direct port>.
        return ('<ncx-connect xmlns="http://netconfcentral.org/ns/yuma-ncx" version="1" user="%s" '
                'address="127.0.0.1" magic="%s" transport="ssh" port="%d" />\n]]>]]>'
                % (self.user, NETCONFD_MAGIC, self.port))

    def log(self):
        try:
            with open(os.path.join(self.workdir, "netconfd.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def start(self, binary):
        rng = random.Random()
        os.makedirs(os.path.join(self.workdir, "yuma-home", "data"), exist_ok=True)
        with open(os.path.join(self.workdir, "startup-cfg-txid.txt"), "w") as f:
            f.write("0\n")
        env = dict(os.environ, YUMA_HOME=os.path.join(self.workdir, "yuma-home"))
        for attempt in range(5):
            self.port = rng.randrange(h.PORT_LOW, h.PORT_HIGH)
            sock = os.path.join(self.workdir, "ncxserver-%d.sock" % self.port)
            args = [binary, "--no-startup", "--tcp-direct-address=127.0.0.1", "--tcp-direct-port=%d" % self.port,
                    "--port=%d" % self.port, "--module=ietf-interfaces", "--module=iana-if-type",
                    "--superuser=%s" % self.user, "--ncxserver-sockname=%s" % sock, "--log-level=error"] + self.extra
            with open(os.path.join(self.workdir, "netconfd.log"), "ab") as log:
                self.proc = subprocess.Popen(args, cwd=self.workdir, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=log, preexec_fn=lambda: h._child_setup(None))
            deadline = time.monotonic() + h.scaled(15)
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    return self
                except OSError:
                    time.sleep(0.05)
            if self.proc.poll() is None:
                self.stop()
                raise AssertionError("netconfd did not accept on port %d within %.0f s; log:\n%s"
                                     % (self.port, h.scaled(15), self.log()))
            if "Address already in use" not in self.log():
                raise AssertionError("netconfd exited with %s; log:\n%s" % (self.proc.returncode, self.log()))
        raise AssertionError("netconfd found no free port; log:\n%s" % self.log())

    def stop(self):
        """SIGTERM and a bounded wait (netconfd dies of SIGTERM; anything but a prompt end is an error)."""
        if not self.proc or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=h.scaled(10))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("netconfd did not exit within %.0f s of SIGTERM; log:\n%s"
                                 % (h.scaled(10), self.log()))

    def interfaces(self):
        """[(name, description)] in netconfd's running configuration, read by RawClient.

        netconfd (2.13) does not answer a request that it reads together with the client's
        hello, so this client waits a moment between its hello and its request."""
        with h.RawClient(("127.0.0.1", self.port), timeout=h.scaled(10)) as c:
            c.send_raw(self.preamble())
            c.hello()
            time.sleep(NETCONFD_AFTER_HELLO_S)
            data = h.assert_data(c.get_config(), "get-config of netconfd")
        return [(i.findtext("{%s}name" % h.IF_NS), i.findtext("{%s}description" % h.IF_NS))
                for i in data.iter("{%s}interface" % h.IF_NS)]


# fleetsim-stress sends its first request the moment the server's hello arrives; when netconfd
# reads that request before it has dispatched the client's hello, it never answers the request
# (see Netconfd.interfaces). Only that signature - nothing answered, then a timeout - is retried,
# at most this many times.
NETCONFD_ATTEMPTS = 3
NETCONFD_AFTER_HELLO_S = 0.2
NETCONFD_HELLO_RACE = re.compile(r"fleetsim-stress: FAILED: session 0 \(device 0\): timeout \(no answer within "
                                 r"\d+ ms\); requests with message-id 1 to \d+ were sent and not answered")


class NetconfdTests(StressCase):

    def netconfd(self, *extra):
        binary = find_netconfd()
        if not binary:
            self.fail("netconfd (yuma123) is not installed: install the Debian package netconfd "
                      "(apt-get install netconfd; scripts/setup.sh lists it)")
        n = Netconfd(tempfile.mkdtemp(dir=self.tmp), extra)
        self.cleanups.append(n.stop)
        return n.start(binary)

    def run_against(self, server_args, n, stress_args):
        """A fresh netconfd and one complete stress run against it; returns (server, result)."""
        server = self.netconfd(*server_args)
        # A first session warms netconfd up (its first session is slow to take the client's
        # hello, which makes the race below likely) and shows that it starts out empty.
        self.assertEqual(server.interfaces(), [], "netconfd --no-startup should start with no interfaces")
        pre = self.write("preamble-%d.xml" % server.port, server.preamble())
        for attempt in range(NETCONFD_ATTEMPTS):
            res = run_stress(["edit", "--port", server.port, "--edits", n, "--tcp-preamble", pre,
                              "--msg-timeout", 3] + stress_args)
            if res.code == 1 and NETCONFD_HELLO_RACE.match(res.err) and res.manifest \
                    and res.manifest["results"]["edits_answered"] == 0:
                # Retrying on the same server is safe: the stuck request is the same edit again.
                sys.stderr.write("\n  netconfd left the first request unanswered (its hello race); "
                                 "attempt %d of %d\n" % (attempt + 1, NETCONFD_ATTEMPTS))
                continue
            break
        if res.code != 0:
            self.fail("exit code %s, want 0\n%s\nnetconfd log:\n%s" % (res.code, res, server.log()))
        return server, res

    def assert_landed(self, server, n):
        items = server.interfaces()
        want = expected_default_names(n, 1, 1)[0]
        self.assert_names([name for name, _ in items], want, "netconfd")
        for name, desc in items:
            self.assertEqual(desc, mac(int(name.rsplit("-", 1)[1])), "description of %s" % name)

    def test_candidate_edits_land_in_netconfd(self):
        n = 60
        server, res = self.run_against([], n, ["--edit-batch-size", 25])
        self.assert_complete(res, n, commits=3)
        caps = res.manifest["server"]["capabilities"]
        self.assertIn(h.BASE11, caps)
        self.assertIn("urn:ietf:params:netconf:capability:candidate:1.0", caps)
        self.assertEqual(res.manifest["server"]["framing"], "base:1.1")
        self.assert_landed(server, n)
        server.stop()

    def test_running_edits_land_in_netconfd_with_target_running(self):
        # netconfd's default target is the candidate; editing running needs --target=running.
        n = 60
        server, res = self.run_against(["--target=running"], n, ["--candidate-datastore", "false",
                                                                  "--async-requests", "true", "--pipeline", 16])
        self.assert_complete(res, n)
        self.assertIn("urn:ietf:params:netconf:capability:writable-running:1.0", res.manifest["server"]["capabilities"])
        self.assert_landed(server, n)
        server.stop()


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2, warnings=False)
