"""The live page (GET /) and its data (GET /live.json) on the --metrics server, in a real browser:
headless Chromium loads the page against a running fleet while a raw NETCONF client edits and net-snmp's
snmpget polls; the DOM it dumps must hold the drawn charts (the page writes into #live-summary how many
points each chart drew and their latest values), the numbers must move between two loads, the
screenshot must not be blank, and the browser must log no console message from the page. The JSON's
numbers must move too, ?since= must return only newer samples, and the page and the JSON are read
without the control API's token (the API itself still needs it); other methods get 405.

Set FLEETSIM_WRITE_SCREENSHOTS=1 to write the screenshot to docs/images/live-page.png (after 20 s of
traffic, so that the charts have lines).

Run: /usr/bin/python3 test_live_page.py <path to fleetsim>. Loopback only, every wait bounded.
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import zlib

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
SYS_NAME = "1.3.6.1.2.1.1.5.0"
ATTEMPTS = 8
LINE_CHARTS = ("sessions", "rpcs", "snmp", "notif", "fail")
SCREENSHOT = os.path.join(h.SOURCE_DIR, "docs", "images", "live-page.png")


def curl(url, method=None, token=None):
    """(status, body) of one request made by the curl binary."""
    args = ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "--max-time", str(h.scaled(10))]
    if method == "HEAD":
        args.append("-I")
    elif method:
        args += ["-X", method]
    if token:
        args += ["-H", "Authorization: Bearer " + token]
    out = subprocess.run(args + [url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(20))
    if out.returncode != 0:
        raise AssertionError("curl %s failed: %s" % (url, out.stderr.decode(errors="replace")))
    body, _, code = out.stdout.decode(errors="replace").rpartition("\n")
    return int(code), body


def live_json(base, query=""):
    status, body = curl(base + "/live.json" + query)
    if status != 200:
        raise AssertionError("/live.json%s answered %d: %s" % (query, status, body))
    return json.loads(body)


def chromium(url, *mode, budget_ms=5000):
    """Run headless Chromium once on @url with @mode (--dump-dom or --screenshot=...); (stdout, stderr)."""
    profile = tempfile.mkdtemp(prefix="fleetsim-chromium-")
    try:
        out = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                              "--disable-background-networking", "--disable-component-update", "--disable-sync",
                              "--no-first-run", "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
                              "--virtual-time-budget=%d" % budget_ms, "--window-size=1280,900"] + list(mode) + [url],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             timeout=h.scaled(90))
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return out.stdout.decode(errors="replace"), out.stderr.decode(errors="replace")


def console_lines(stderr, base):
    """The browser's console lines (and uncaught errors) that come from the page at @base."""
    return [line for line in stderr.splitlines()
            if ("CONSOLE" in line or "Uncaught" in line) and (base in line or "Uncaught" in line)]


def summary_of(dom):
    """The JSON the page wrote into #live-summary after its last update."""
    start = dom.find('id="live-summary"')
    if start < 0:
        raise AssertionError("no #live-summary in the DOM:\n" + dom[:2000])
    start = dom.index(">", start) + 1
    end = dom.index("</pre>", start)
    text = dom[start:end].replace("&quot;", '"').replace("&amp;", "&")
    if not text:
        raise AssertionError("#live-summary is empty: the page never updated")
    return json.loads(text)


def png_pixels(path):
    """(width, height, rows) of an 8-bit RGB or RGBA PNG, rows as bytes without filter bytes."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError("%s is not a PNG" % path)
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            if depth != 8 or colour not in (2, 6):
                raise AssertionError("unexpected PNG format: depth %d colour %d" % (depth, colour))
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif ftype == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


class Traffic:
    """NETCONF edits (a raw client on device 0) and SNMP GETs (device 1) in a thread until stopped."""

    def __init__(self, fleet):
        self.fleet = fleet
        self.stop_event = threading.Event()
        self.edits = self.gets = 0
        self.error = None
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        deadline = time.monotonic() + h.scaled(300)
        try:
            with h.RawClient(self.fleet.addr(0)) as c:
                c.hello()
                while not self.stop_event.is_set() and time.monotonic() < deadline:
                    h.assert_ok(c.edit_config(h.iface("live%d" % (self.edits % 50))), "edit")
                    self.edits += 1
                    subprocess.run(["snmpget", "-v2c", "-c", "public", "-t", "0.5", "-r", "0",
                                    "127.0.0.1:%d" % self.fleet.addr(1)[1], SYS_NAME],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=h.scaled(10))
                    self.gets += 1
                    time.sleep(0.02)
        except Exception as e:  # reported by stop()
            self.error = e

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        self.thread.join(h.scaled(30))
        if self.error:
            raise AssertionError("the traffic failed: %r" % self.error)


class LivePageTests(unittest.TestCase):
    def fleet(self, extra=(), devices=4):
        f, base = h.start_with_metrics(devices, extra, True, ATTEMPTS)
        self.addCleanup(f.stop)
        return f, base

    def test_page_draws_the_fleet_and_its_numbers_move(self):
        f, base = self.fleet()
        with Traffic(f):
            time.sleep(h.scaled(2.5))
            dom1, err1 = chromium(base + "/", "--dump-dom")
            # Device 3 goes down through the control API: the states chart must show it.
            status, body = curl(base + "/api/v1/devices/3/down", "POST")
            self.assertEqual(status, 200, body)
            time.sleep(h.scaled(2.5))
            dom2, err2 = chromium(base + "/", "--dump-dom")
            if os.environ.get("FLEETSIM_WRITE_SCREENSHOTS") == "1":
                time.sleep(h.scaled(20))
            shot = os.path.join(tempfile.mkdtemp(prefix="fleetsim-shot-"), "live.png")
            _, err3 = chromium(base + "/", "--screenshot=" + shot)
        for err in (err1, err2, err3):
            self.assertEqual(console_lines(err, base), [], "the page logged to the console")
        s1, s2 = summary_of(dom1), summary_of(dom2)
        self.assertGreaterEqual(s1["updates"], 2, "the page refreshes itself (several fetches in one load)")
        for s in (s1, s2):
            for name in LINE_CHARTS:
                self.assertIn(name, s["charts"])
                self.assertGreaterEqual(s["charts"][name]["points"], 2, (name, s["charts"][name]))
            self.assertEqual(s["charts"]["states"]["points"], 1, "one group, one bar")
        self.assertEqual(s1["charts"]["states"]["latest"], [4, 0, 0, 0])
        self.assertEqual(s2["charts"]["states"]["latest"], [3, 1, 0, 0])
        # One session over TCP (the raw client), none over SSH or TLS.
        self.assertEqual(s2["charts"]["sessions"]["latest"], [1, 0, 0])  # tcp, ssh, tls
        # The numbers move between the two loads, and the rates seen were not zero while traffic ran.
        self.assertGreater(s2["now"]["rpcs"], s1["now"]["rpcs"])
        self.assertGreater(s2["now"]["snmp_requests"], s1["now"]["snmp_requests"])
        self.assertGreater(s2["seq"], s1["seq"])
        self.assertGreater(s2["charts"]["rpcs"]["latest"][0], 0)
        self.assertGreater(s2["charts"]["snmp"]["latest"][0], 0)
        for key in ("devices", "up", "down", "sessions tcp", "NETCONF RPCs", "SNMP requests", "auth failures"):
            self.assertIn('data-key="%s"' % key, dom2)
        self.assertIn('id="c-rpcs"', dom2)
        self.assertRegex(dom2, r'id="c-rpcs"[^>]*data-points="\d+"')

        width, height, bpp, rows = png_pixels(shot)
        self.assertEqual((width, height), (1280, 900))
        colours = set()
        for row in rows[::6]:
            for x in range(0, width * bpp, bpp * 3):
                colours.add(row[x:x + 3])
        self.assertGreater(len(colours), 8, "the screenshot is (nearly) one colour")
        self.assertIn(bytes((0x2C, 0xA0, 0x2C)), colours, "the green 'up' bar of the states chart is drawn")
        if os.environ.get("FLEETSIM_WRITE_SCREENSHOTS") == "1":
            os.makedirs(os.path.dirname(SCREENSHOT), exist_ok=True)
            shutil.copyfile(shot, SCREENSHOT)
        shutil.rmtree(os.path.dirname(shot), ignore_errors=True)

    def test_json_moves_and_since_returns_only_newer_samples(self):
        f, base = self.fleet()
        j1 = live_json(base)
        self.assertEqual(j1["interval_ms"], 1000)
        self.assertEqual(j1["capacity"], 900)
        self.assertEqual(j1["devices"], 4)
        self.assertEqual(j1["columns"][:2], ["seq", "t_ms"])
        self.assertEqual([(g["name"], g["devices"], g["up"]) for g in j1["groups"]], [("default", 4, 4)])
        self.assertTrue(j1["samples"], "a first sample is taken at start")
        self.assertEqual(dict(zip(j1["columns"], j1["samples"][-1])), j1["now"])
        with Traffic(f) as t:
            deadline = time.monotonic() + h.scaled(10)
            while (t.edits < 5 or t.gets < 5) and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(h.scaled(2.2))
            j2 = live_json(base)
        self.assertGreater(j2["now"]["rpcs"], j1["now"]["rpcs"])
        self.assertGreater(j2["now"]["snmp_requests"], j1["now"]["snmp_requests"])
        self.assertGreater(j2["now"]["seq"], j1["now"]["seq"])
        self.assertLessEqual(len(j2["samples"]), 900)
        seqs = [s[0] for s in j2["samples"]]
        self.assertEqual(seqs, list(range(seqs[0], seqs[-1] + 1)), "consecutive, oldest first")
        times = [s[1] for s in j2["samples"]]
        gaps = [b - a for a, b in zip(times, times[1:])]
        self.assertTrue(all(500 <= g <= 2500 for g in gaps), gaps)
        newer = live_json(base, "?since=%d" % j1["now"]["seq"])
        self.assertTrue(newer["samples"])
        self.assertTrue(all(s[0] > j1["now"]["seq"] for s in newer["samples"]))
        self.assertEqual(live_json(base, "?since=%d" % (10 ** 12))["samples"], [])
        for bad in ("abc", "-1", "", "1x"):
            status, body = curl(base + "/live.json?since=" + bad)
            self.assertEqual(status, 400, (bad, body))
            self.assertIn("since", json.loads(body)["error"])

    def test_read_without_the_token_other_methods_405(self):
        work = tempfile.mkdtemp(prefix="fleetsim-live-")
        self.addCleanup(shutil.rmtree, work, True)
        path = os.path.join(work, "token")
        with open(path, "w") as t:
            t.write("s3cret-token\n")
        f, base = self.fleet(["--api-token-file", path], devices=1)
        status, page = curl(base + "/")
        self.assertEqual(status, 200)
        self.assertIn("<canvas", page)
        self.assertIn("Chart", page)
        self.assertNotRegex(page, r'<script[^>]+src=|<link[^>]+href="http', "no external requests")
        self.assertEqual(curl(base + "/live.json")[0], 200)
        self.assertEqual(curl(base + "/", "HEAD")[0], 200)
        # The control API's token rules are unchanged.
        self.assertEqual(curl(base + "/api/v1/fleet")[0], 401)
        self.assertEqual(curl(base + "/api/v1/fleet", token="wrong")[0], 401)
        self.assertEqual(curl(base + "/api/v1/fleet", token="s3cret-token")[0], 200)
        for method in ("POST", "PUT", "DELETE"):
            for path_ in ("/", "/live.json"):
                self.assertEqual(curl(base + path_, method)[0], 405, (method, path_))
        self.assertEqual(curl(base + "/nothing-here")[0], 404)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
