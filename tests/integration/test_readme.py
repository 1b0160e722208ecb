"""Every command block of README.md, run as a new user would run it, with ports and counts moved only.

README.md is the first thing a new user follows; when one of its examples stops working, this
test fails. It reads every ```sh block of README.md and runs its commands in order, in a folder
that looks like a checkout (notifications/, schemas/, examples/ and tests/ link to the source
tree), with these changes and no others:

- `build/fleetsim` and `build/fleetsim-stress` are the binaries under test, and the
  `scripts/setup.sh && ` in front of the first command is dropped (the build under test is set
  up already); the block that runs scripts/test.sh is the suite that runs this test, so it is
  skipped.
- Ports move to a random free range: 17830 (NETCONF) and 16100 (SNMP) to P, 9464 (metrics) to
  P+200, 8181 (a controller) to the stand-in controller's port. A command that leaves a port to its
  default gets the moved port written out. When a fleet cannot listen (another test holds a port of
  the range), P moves to another range and the fleet starts again.
- Counts shrink so the test stays short: more than 100 devices become 100, --edits above 5,000
  become 5,000, notify's --count becomes 20.
- The example controller and host addresses (10.0.0.5, 10.0.0.7) become 127.0.0.1, where the
  test runs a stand-in RESTCONF controller that takes registrations and reports every registered
  node connected.
- A job spec (`%1`) becomes the process id of that fleet, since every command runs in a shell of
  its own.

A `build/fleetsim` command serves until it is stopped: it is started in the background, waited
for (its readiness line), and stopped with SIGINT at the end of its block (exit status 0
expected); one without `&` in README.md is an alternative to the next, so it is stopped before the
next command runs. A block without such a command runs against the fleet of the first block
(README's "in a second terminal"). Every other command must exit 0, and what the README says it
prints (EXPECT below, each phrase also found in README.md) must be in its output.

Usage: test_readme.py <fleetsim> <fleetsim-stress>
"""

import base64
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler

import fleetsim_harness as h

sys.path.insert(0, os.path.join(h.SOURCE_DIR, "bench"))
import fake_controller  # noqa: E402

FLEETSIM = None
STRESS = None
README = os.path.join(h.SOURCE_DIR, "README.md")
LINKED = ("notifications", "schemas", "examples", "tests")
MAX_DEVICES = 100
MAX_EDITS = 5000
NOTIFY_COUNT = 20
COMMAND_TIMEOUT_S = 120

# What README.md says a block prints: (a regular expression of its commands' output and fleet logs,
# the phrase README.md uses for it). Keyed by a text that identifies the block.
EXPECT = {
    "build/fleetsim --device-count 100\n": [
        (r"100 devices listening on 127\.0\.0\.1 ports \d+-\d+ \(NETCONF over SSH",
         "devices listening on 127.0.0.1 ports 17830-17929 (NETCONF over SSH"),
        (r"ssh -p \d+ -s admin@127\.0\.0\.1 netconf", "ssh -p 17830 -s admin@127.0.0.1 netconf"),
        (r"snmpwalk -v2c -c public 127\.0\.0\.1:\d+ 1\.3\.6\.1\.2\.1\.1\b", "snmpwalk -v2c -c public 127.0.0.1:16100 1.3.6.1.2.1.1"),
    ],
    "--edit-content examples/edit-interface.xml\n": [
        (r"mounted: 100 of 100 in", "mounted: 100 of 100 in"),
        (r"Requests per second: \d", "Requests per second:"),
        (r"collections: 200 completed, 0 failed", "collections: 200 completed, 0 failed"),
        (r'STRING: "device-0"', 'STRING: "device-0"'),
        (r'STRING: "GigabitEthernet0/0/0/0"', 'STRING: "GigabitEthernet0/0/0/0"'),
    ],
    "--profile crs-x --snmp-latency": [
        (r'\.3\.6\.1\.2\.1\.31\.1\.1\.1\.1\.144 = STRING: "', "crs-x` (144 interfaces)"),
    ],
    "--report sent.json &": [
        (r"totals: OK 100, LOSS 0, DUP 0, MISSING 0, PHANTOM 0", "OK, LOSS, DUP, MISSING or PHANTOM"),
    ],
    "--controller-ip 10.0.0.5 --generate-configs-batch-size": [
        (r"controller: registered 100 of 100 devices", "controller: registered X of N devices"),
    ],
    "--thread-amount 4": [
        (r"Requests per second: \d", "Requests per second:"),
        (r"mounted: 100 of 100 in", "mounted: 100 of 100 in"),
    ],
    "--same-device false": [
        (r"totals: OK 10, LOSS 0, DUP 0, MISSING 0", "Each device edited or receiving gets OK"),
        (r"Requests per second: \d", "Requests per second: R"),
    ],
    "controller-mount --url": [
        (r"all 100 connected after", "all 5000 connected after"),
    ],
}
SKIPPED = {"scripts/test.sh": "the test suite, which is what runs this test"}


def readme_blocks():
    """[(first line number, text)] of every ```sh block of README.md."""
    blocks, current, start = [], None, 0
    with open(README) as f:
        for number, line in enumerate(f, 1):
            if current is None and line.strip() == "```sh":
                current, start = [], number + 1
            elif current is not None and line.strip() == "```":
                blocks.append((start, "".join(current)))
                current = None
            elif current is not None:
                current.append(line)
    return blocks


def commands(block):
    """The block's commands: continuation lines joined, comments dropped."""
    out = []
    for line in block.replace("\\\n", " ").splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def shrink(match, limit):
    return "%s %d" % (match.group(1), min(int(match.group(2)), limit))


CONTROLLER_PORT = None  # the stand-in controller's, set by the test


def move(cmd, port):
    """The command line with the test's ports, counts and binaries (see the module's text)."""
    cmd = cmd.replace("scripts/setup.sh && ", "")
    cmd = re.sub(r"\b(10\.0\.0\.5|10\.0\.0\.7)\b", "127.0.0.1", cmd)
    cmd = cmd.replace("17830", str(port)).replace("16100", str(port))
    cmd = cmd.replace("9464", str(port + 200)).replace("8181", str(CONTROLLER_PORT))
    cmd = re.sub(r"(--device-count) (\d+)", lambda m: shrink(m, MAX_DEVICES), cmd)
    cmd = re.sub(r"(--edits) (\d+)", lambda m: shrink(m, MAX_EDITS), cmd)
    cmd = re.sub(r"(--count) (\d+)", lambda m: "%s %d" % (m.group(1), NOTIFY_COUNT), cmd)
    # Each simple command of the line (split at ; and &&) gets the ports it leaves to their defaults.
    parts = re.split(r"(;|&&)", cmd)
    return "".join(part if part in (";", "&&") else move_command(part, port) for part in parts)


def move_command(cmd, port):
    words = cmd.split()
    if not words:
        return cmd
    if words[0] == "build/fleetsim":
        for option, value in (("--starting-port", port), ("--snmp-starting-port", port)):
            if option not in words:
                words.insert(1, "%s %d" % (option, value))
        if "--controller-ip" in words and "--controller-port" not in words:
            words.insert(1, "--controller-port %d" % CONTROLLER_PORT)
        words[0] = FLEETSIM
    elif words[0] == "build/fleetsim-stress":
        if "--port" not in words and "--url" not in words and words[1] != "reconcile":
            words.insert(2, "--port %d" % port)
        words[0] = STRESS
    return " " + " ".join(words) + " "


def is_fleet(cmd):
    words = cmd.split()
    exits = {"--emit-inventory", "--export-snmprec", "--issue-client-cert", "--help"}
    return words[0] == "build/fleetsim" and not exits & set(words)


class StandInController:
    """RESTCONF stand-in: takes OpenDaylight registrations, reports every registered node connected, and
    turns REST perf clients' edits of a node's mount point into edit-configs on its device
    (bench/fake_controller.py's MountEdits)."""

    def __init__(self, port):
        self.nodes = {}
        nodes = self.nodes
        mount = self.mount = fake_controller.MountEdits(
            "Basic " + base64.b64encode(b"admin:admin").decode(),
            lambda node_id: ((fake_controller.node_field(nodes[node_id], "host"),
                              int(fake_controller.node_field(nodes[node_id], "port"))) if node_id in nodes else None))

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, code, body=b""):
                self.send_response(code)
                self.send_header("Content-Type", "application/yang-data+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass  # a fleet stopped at the end of its block

            def do_PATCH(self):
                doc = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                for node in doc["network-topology:topology"][0]["node"]:
                    nodes[node["node-id"]] = node
                self.reply(200)

            def _reply(self, code, body=b""):
                self.reply(code, body)

            def do_POST(self):
                mount.reply(self, "POST")

            def do_PUT(self):
                mount.reply(self, "PUT")

            def do_GET(self):
                listed = [{"node-id": n, "netconf-node-topology:netconf-node": {"connection-status": "connected"}}
                          for n in list(nodes)]
                self.reply(200, json.dumps({"network-topology:topology": [
                    {"topology-id": "topology-netconf", "node": listed}]}).encode())

        self.server = fake_controller.HttpServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.mount.close()


class Runner:
    """Runs commands in a checkout-like folder; keeps their output for the expectations."""

    def __init__(self, port):
        self.port = port
        self.dir = tempfile.mkdtemp(prefix="fleetsim-readme-")
        for name in LINKED:
            os.symlink(os.path.join(h.SOURCE_DIR, name), os.path.join(self.dir, name))
        self.env = dict(os.environ, XDG_STATE_HOME=os.path.join(self.dir, "state"))
        self.output = ""  # what the commands of the current block printed

    def start_fleet(self, cmd):
        """Start a fleet command in the background and wait for its readiness line; @return (Popen, log).
        A port of the range taken by another test moves the range (self.port) and starts it again."""
        for _ in range(h.START_ATTEMPTS):
            fleet = self.start_fleet_once(cmd.rstrip("&").strip())
            if fleet:
                return fleet
            self.port = random.Random().randrange(h.PORT_LOW, h.PORT_HIGH - 400)
        raise AssertionError("no free port range for %s in %d attempts" % (cmd, h.START_ATTEMPTS))

    def start_fleet_once(self, cmd):
        fd, log_path = tempfile.mkstemp(prefix="fleet-", suffix=".log", dir=self.dir)
        with os.fdopen(fd, "wb") as log:
            proc = subprocess.Popen("exec " + move(cmd, self.port), shell=True, cwd=self.dir, env=self.env,
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    preexec_fn=lambda: h._child_setup(None))
        deadline = time.monotonic() + h.scaled(30)
        while h.READY_TEXT not in self.log(log_path):
            text = self.log(log_path)
            if proc.poll() == 2 and ("cannot listen" in text or "cannot bind SNMP" in text):
                return None
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("%s did not start (exit %s):\n%s" % (cmd, proc.poll(), self.log(log_path)))
            time.sleep(0.05)
        return proc, log_path

    @staticmethod
    def log(path):
        with open(path, errors="replace") as f:
            return f.read()

    def run(self, cmd, fleets):
        """Run one command to its end; it must exit 0. Job specs %N name the block's fleets."""
        for n, (proc, _) in enumerate(fleets, 1):
            cmd = cmd.replace("%%%d" % n, str(proc.pid))
        moved = move(cmd, self.port)
        proc = subprocess.run(moved, shell=True, cwd=self.dir, env=self.env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=h.scaled(COMMAND_TIMEOUT_S), preexec_fn=lambda: h._child_setup(None))
        text = proc.stdout.decode(errors="replace")
        self.output += text
        if proc.returncode != 0:
            raise AssertionError("README command failed with exit %d:\n  %s\n(ran as: %s)\n%s" %
                                 (proc.returncode, cmd, moved, text))

    def stop(self, fleet):
        """SIGINT, as Ctrl-C; the fleet must end with exit status 0."""
        proc, path = fleet
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=h.scaled(20))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = "a hang"
        if code != 0:
            raise AssertionError("fleet ended with %s after SIGINT:\n%s" % (code, self.log(path)))


class ReadmeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.blocks = readme_blocks()
        with open(README) as f:
            cls.readme = f.read()

    def test_every_expectation_is_said_in_the_readme_and_names_a_block(self):
        texts = [b for _, b in self.blocks]
        for key, expectations in EXPECT.items():
            self.assertTrue(any(key in b for b in texts), "no README block has %r" % key)
            for _, phrase in expectations:
                self.assertIn(phrase, self.readme, "README.md does not say %r" % phrase)

    def test_every_command_block_runs_as_written(self):
        port = random.Random().randrange(h.PORT_LOW, h.PORT_HIGH - 400)
        runner = Runner(port)
        global CONTROLLER_PORT
        controller = StandInController(0)
        CONTROLLER_PORT = controller.server.server_address[1]
        first = commands(self.blocks[0][1])
        quick = None  # the first block's fleet, for the blocks without one of their own
        fleets = []  # the current block's fleets
        ran = []  # README lines of the blocks run
        try:
            for index, (line, block) in enumerate(self.blocks):
                if any(k in block for k in SKIPPED):
                    continue
                cmds = commands(block)
                own = any(is_fleet(c) for c in cmds)
                ran.append(line)
                started = time.monotonic()
                with self.subTest(readme_line=line):
                    runner.output = ""
                    if index == 0:
                        quick = runner.start_fleet(first[0])
                        self.check(runner, block, [quick])
                        continue
                    if own and quick:
                        runner.stop(quick)
                        quick = None
                    if not own and not quick:
                        quick = runner.start_fleet(first[0])
                    try:
                        self.run_block(runner, cmds, fleets)
                        self.check(runner, block, fleets + ([quick] if quick else []))
                    finally:
                        while fleets:
                            runner.stop(fleets.pop())
                sys.stderr.write("  README line %d: %d commands in %.1f s\n" % (line, len(cmds),
                                                                                time.monotonic() - started))
        finally:
            for fleet in fleets + ([quick] if quick else []):
                try:
                    runner.stop(fleet)
                except AssertionError:
                    pass
            controller.close()
        self.assertEqual(len(ran), len(self.blocks) - len(SKIPPED), "blocks run: %s" % ran)

    @staticmethod
    def run_block(runner, cmds, fleets):
        """The block's commands in order; its fleets are appended to @p fleets as they start."""
        for i, cmd in enumerate(cmds):
            if not is_fleet(cmd):
                runner.run(cmd, fleets)
                continue
            fleets.append(runner.start_fleet(cmd))
            if not cmd.endswith("&") and any(is_fleet(c) for c in cmds[i + 1:]):
                alternative = fleets.pop()  # to the next command: stopped before that one runs
                runner.stop(alternative)
                runner.output += runner.log(alternative[1])

    def check(self, runner, block, fleets):
        """What README.md says the block prints is in its output or its fleets' logs (which may still be
        growing: a registration runs in the background), within a bound."""
        expectations = [e for key, exp in EXPECT.items() if key in block for e in exp]
        deadline = time.monotonic() + h.scaled(30)
        while True:
            text = runner.output + "".join(runner.log(path) for _, path in fleets)
            missing = [rx for rx, _ in expectations if not re.search(rx, text)]
            if not missing:
                return
            if time.monotonic() > deadline:
                self.fail("README output not found: %s\nin:\n%s" % (missing, text[-6000:]))
            time.sleep(0.1)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: test_readme.py <fleetsim> <fleetsim-stress> [unittest options]")
    FLEETSIM = os.path.abspath(sys.argv.pop(1))
    STRESS = os.path.abspath(sys.argv.pop(1))
    h.BINARY = FLEETSIM
    unittest.main(verbosity=2)
