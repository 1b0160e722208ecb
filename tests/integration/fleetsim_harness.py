"""Shared pieces of the Python integration tests: running fleetsim, and a raw NETCONF client.

Fleet starts the real binary on random ports of 127.0.0.0/8, waits (bounded) for its readiness
line and stops it with SIGTERM; any exit but a prompt exit(0) fails the test. The server's stderr
goes to a file (a pipe nobody drains would stall a chatty server) and is printed on failure. The
server gets PR_SET_PDEATHSIG, so a test killed by its CTest time limit leaves no straggler.

RawClient speaks NETCONF over a plain socket, byte by byte as the test wants it, including what
polite client libraries never send. Every socket operation has a time limit.

Time limits scale with FLEETSIM_TIMEOUT_MULTIPLIER (3 for sanitizer builds). The binary comes
from the command line: `python3 test_x.py <path to fleetsim> [unittest options]`.
"""

import ctypes
import ipaddress
import json
import os
import random
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

NC_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
IF_NS = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
IANA_NS = "urn:ietf:params:xml:ns:yang:iana-if-type"
NCM_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"
BASE10 = "urn:ietf:params:netconf:base:1.0"
BASE11 = "urn:ietf:params:netconf:base:1.1"
IFTYPE_ETH = "<type>ianaift:ethernetCsmacd</type>"

READY_TEXT = "devices listening on"
# Ports come from below Linux's ephemeral range, so client sockets never take them.
PORT_LOW = 20000
PORT_HIGH = 32000
START_ATTEMPTS = 8
READY_TIMEOUT_S = 30.0  # a first start creates an RSA host key: seconds on a loaded machine
STOP_TIMEOUT_S = 10.0
IO_TIMEOUT_S = 5.0

PR_SET_PDEATHSIG = 1
SOURCE_DIR = os.environ.get("FLEETSIM_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def multiplier():
    try:
        return max(1.0, float(os.environ.get("FLEETSIM_TIMEOUT_MULTIPLIER", "1")))
    except ValueError:
        return 1.0


def scaled(seconds):
    """A time limit for this build (sanitizer builds are slower)."""
    return seconds * multiplier()


def take_binary_argument():
    """Remove the fleetsim path from sys.argv (unittest gets the rest) and return it."""
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: %s <path to fleetsim> [unittest options]" % sys.argv[0])
    return sys.argv.pop(1)


BINARY = None  # set by each test script from its command line


def take_binaries_arguments():
    """Remove the fleetsim and fleetsim-stress paths from sys.argv (unittest gets the rest); set BINARY and
    return fleetsim-stress's absolute path."""
    global BINARY
    BINARY = take_binary_argument()
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: %s <path to fleetsim> <path to fleetsim-stress> [unittest options]" % sys.argv[0])
    return os.path.abspath(sys.argv.pop(1))


# Loaded before any fork: the child of a threaded parent (ncclient runs a thread per session)
# should do no more than plain C calls between fork and exec.
_LIBC = ctypes.CDLL(None, use_errno=True)
_SIGKILL = int(signal.SIGKILL)


def _child_setup(nofile):
    """Runs in the child before exec: die with the test, and optionally lower the descriptor limit."""
    _LIBC.prctl(PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
    if nofile is not None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))


def run_fleetsim(args, timeout=None, nofile=None):
    """Run fleetsim to completion (for plans it must refuse); returns (exit code, stderr text)."""
    proc = subprocess.run([BINARY] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout or scaled(30),
                          preexec_fn=lambda: _child_setup(nofile))
    return proc.returncode, proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")


class FleetError(AssertionError):
    pass


class Fleet:
    """One running fleetsim. Use start()/stop() or a with block."""

    def __init__(self, devices=4, threads=2, extra=(), ip_per_device=False, ip="127.0.0.1", nofile=None,
                 default_transport=False):
        self.devices = devices
        self.default_transport = default_transport  # True: no --ssh at all, fleetsim's default decides
        self.threads = threads
        self.extra = list(extra)
        self.ip_per_device = ip_per_device
        self.ip = ip
        self.nofile = nofile
        self.proc = None
        self.port = None  # first device's port (the only port with ip_per_device)
        self.log_path = None
        self.startup_s = None

    # -- addresses
    def addr(self, i):
        """(host, port) of device i."""
        if self.ip_per_device:
            return str(ipaddress.ip_address(self.ip) + i), self.port
        return self.ip, self.port + i

    # -- life
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def log(self):
        try:
            with open(self.log_path, "r", errors="replace") as f:
                return f.read()
        except (OSError, TypeError):
            return ""

    def _drop_log(self):
        """The log's text, after which the file is gone (failures carry the text in their message)."""
        text = self.log()
        try:
            os.unlink(self.log_path)
        except (OSError, TypeError):
            pass
        return text

    def start(self, ready_timeout=READY_TIMEOUT_S):
        rng = random.Random()
        span = 1 if self.ip_per_device else self.devices
        for _ in range(START_ATTEMPTS):
            self.port = rng.randrange(PORT_LOW, PORT_HIGH - span)
            outcome = self._start_once(scaled(ready_timeout))
            if outcome == "ready":
                return self
            if outcome == "retry":
                continue
            raise FleetError(outcome)
        raise FleetError("no free port range found in %d attempts" % START_ATTEMPTS)

    def restart(self, ready_timeout=READY_TIMEOUT_S, pause_s=0):
        """Stop, wait @pause_s, and start again on the same ports: a reload, as clients see it."""
        self.stop()
        time.sleep(pause_s)
        outcome = self._start_once(scaled(ready_timeout))
        if outcome != "ready":
            raise FleetError("the ports were taken meanwhile" if outcome == "retry" else outcome)
        return self

    def _start_once(self, ready_timeout):
        args = [BINARY, "--device-count", str(self.devices), "--starting-port", str(self.port),
                "--threads", str(self.threads), "--ip", self.ip]
        if "--ssh" not in self.extra and not self.default_transport:
            args += ["--ssh", "false"]  # the tests speak plain TCP unless they ask for SSH
        if self.ip_per_device:
            args.append("--ip-per-device")
        if "--snmp-starting-port" not in self.extra:
            # UDP ports are a space of their own: the agents take the same numbers as the NETCONF ports.
            args += ["--snmp-starting-port", str(self.port)]
        args += self.extra
        fd, self.log_path = tempfile.mkstemp(prefix="fleetsim-pytest-", suffix=".log")
        with os.fdopen(fd, "wb") as log:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         preexec_fn=lambda: _child_setup(self.nofile))
        started = time.monotonic()
        deadline = started + ready_timeout
        while True:
            text = self.log()
            code = self.proc.poll()
            if READY_TEXT in text and code is None:
                self.startup_s = time.monotonic() - started
                return "ready"
            if code is not None:
                self.proc = None
                text = self._drop_log()
                if code == 2 and ("cannot listen" in text or "cannot bind SNMP" in text):
                    return "retry"
                return "fleetsim exited with %d before it was ready; its log:\n%s" % (code, text)
            if time.monotonic() > deadline:
                self.proc.kill()
                self.proc.wait()
                self.proc = None
                return "fleetsim did not report %r within %.0f s; its log:\n%s" % (READY_TEXT, ready_timeout,
                                                                                   self._drop_log())
            time.sleep(0.01)

    def stop(self):
        """SIGTERM and a bounded wait; raises unless the exit code is 0."""
        if not self.proc:
            return
        proc, self.proc = self.proc, None
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=scaled(STOP_TIMEOUT_S))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise FleetError("fleetsim did not exit within %.0f s of SIGTERM; its log:\n%s"
                             % (scaled(STOP_TIMEOUT_S), self._drop_log()))
        text = self._drop_log()
        if code != 0:
            raise FleetError("fleetsim exited with %d after SIGTERM (want 0; -11 is a crash); its log:\n%s"
                             % (code, text))

    def kill(self):
        """For cleanup after a failure: no checks."""
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            self._drop_log()


# ---------------------------------------------------------------- fleetsim-stress runs

class StressRun:
    """What one fleetsim-stress run left: its arguments, exit code, output, manifest and wall time."""

    def __init__(self, args, proc, manifest, elapsed_s):
        self.args = args
        self.code = proc.returncode
        self.out = proc.stdout.decode(errors="replace")
        self.err = proc.stderr.decode(errors="replace")
        self.manifest = manifest  # the parsed --json file, or None when the run wrote none
        self.elapsed_s = elapsed_s

    def __str__(self):
        return "fleetsim-stress %s\nexit code %s after %.2f s\n--- stdout\n%s--- stderr\n%s" % (
            " ".join(self.args), self.code, self.elapsed_s, self.out, self.err)


def run_stress(stress, argv, manifest_path, limit_s):
    """Run fleetsim-stress with @argv (which names @manifest_path as its --json) to its end, within
    @limit_s (scaled); stderr is a pipe, not a terminal. A run that does not end fails the test."""
    argv = [str(a) for a in argv]
    started = time.monotonic()
    try:
        proc = subprocess.run([stress] + argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=scaled(limit_s), preexec_fn=lambda: _child_setup(None))
    except subprocess.TimeoutExpired as e:
        raise AssertionError("fleetsim-stress %s did not end in time; stdout:\n%s\nstderr:\n%s"
                             % (" ".join(argv), e.stdout, e.stderr))
    data = None
    if manifest_path and os.path.exists(manifest_path):
        with open(manifest_path) as m:
            data = json.load(m)
    return StressRun(argv, proc, data, time.monotonic() - started)


# ---------------------------------------------------------------- small helpers of many tests

def start_snmptrapd(test, work, host="127.0.0.1"):
    """net-snmp's snmptrapd on a free UDP port of @host (IPv4 or IPv6), accepting community public and
    logging every trap and inform (numeric OIDs) to a file in @work; stopped at @test's cleanup.
    Returns (port, path of its log)."""
    conf = os.path.join(work, "snmptrapd.conf")
    with open(conf, "w") as c:
        c.write("authCommunity log,execute,net public\ndisableAuthorization yes\n")
    log_path = os.path.join(work, "snmptrapd.log")
    log = open(log_path, "w")
    test.addCleanup(log.close)
    transport = "udp6:[%s]" % host if ":" in host else "udp:%s" % host
    for _ in range(8):
        port = free_port(host)
        trapd = subprocess.Popen(["snmptrapd", "-f", "-Lo", "-C", "-c", conf, "-On", "-n",
                                  "%s:%d" % (transport, port)], stdout=log, stderr=subprocess.STDOUT,
                                 env=dict(os.environ, MIBS=""))
        time.sleep(0.3)
        if trapd.poll() is None:  # else the port was taken meanwhile: another one
            test.addCleanup(lambda: (trapd.terminate(), trapd.wait(timeout=10)))
            return port, log_path
    raise AssertionError("snmptrapd did not start on %s" % host)


def free_port(host="127.0.0.1"):
    """A port of the harness's range (below the ephemeral range, so no client socket takes it before the
    test binds it) that nothing has bound on @host now."""
    rng = random.Random()
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for _ in range(50):
        port = rng.randrange(PORT_LOW, PORT_HIGH)
        with socket.socket(family) as s:
            try:
                s.bind((host, port))
                return port
            except OSError:
                continue
    raise AssertionError("no free port")


def wait_for(pred, limit_s, what=None):
    """Poll @pred every 50 ms until it returns a true value or scaled(@limit_s) seconds pass; that value,
    else the last false one, or, when @what names it, an AssertionError "timed out waiting for WHAT"."""
    deadline = time.monotonic() + scaled(limit_s)
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    value = pred()
    if not value and what:
        raise AssertionError("timed out waiting for " + what)
    return value


def api_request(base, path, body=None, method=None, token=None):
    """(HTTP status, parsed JSON body or None) of one request to a fleet's HTTP server; a body makes it a
    POST unless @method says otherwise."""
    import urllib.error
    import urllib.request
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(base + path, data=data, headers=headers,
                                 method=method or ("POST" if data is not None else "GET"))
    try:
        with urllib.request.urlopen(req, timeout=scaled(10)) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        return e.code, None


# ---------------------------------------------------------------- raw client

def start_with_metrics(devices=1, extra=(), metrics=True, attempts=8, **kw):
    """A started Fleet serving --metrics on a random free loopback port (another is drawn when the one
    drawn is taken): (fleet, base URL); with metrics=False a plain fleet and None."""
    for _ in range(attempts):
        port = random.randrange(PORT_LOW, PORT_HIGH)
        args = list(extra) + (["--metrics", "127.0.0.1:%d" % port] if metrics else [])
        try:
            f = Fleet(devices=devices, extra=args, **kw).start()
        except FleetError as e:
            if metrics and "--metrics" in str(e) and "in use" in str(e):
                continue
            raise
        return f, ("http://127.0.0.1:%d" % port if metrics else None)
    raise FleetError("no free metrics port in %d attempts" % attempts)


class ConnectionClosed(Exception):
    pass


def client_hello(caps=(BASE10, BASE11)):
    return ('<?xml version="1.0" encoding="UTF-8"?><hello xmlns="%s"><capabilities>%s</capabilities></hello>'
            % (NC_NS, "".join("<capability>%s</capability>" % c for c in caps)))


class RawClient:
    """A NETCONF client that frames and sends exactly what it is told."""

    def __init__(self, addr, timeout=None):
        self.timeout = timeout or scaled(IO_TIMEOUT_S)
        self.sock = socket.create_connection(addr, timeout=self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.chunked = False
        self.server_hello = None
        self.session_id = None

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- bytes
    def send_raw(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.sock.sendall(data)

    def _fill(self):
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise AssertionError("no data from the server within %.1f s (buffer: %r)" % (self.timeout, self.buf[:500]))
        except ConnectionResetError:
            data = b""
        if not data:
            raise ConnectionClosed("server closed the connection (buffer: %r)" % self.buf[:500])
        self.buf += data

    def _read_eom(self):
        while b"]]>]]>" not in self.buf:
            self._fill()
        msg, _, self.buf = self.buf.partition(b"]]>]]>")
        return msg

    def _read_chunked(self):
        msg = b""
        while True:
            while not re.match(rb"\n#(#|[1-9][0-9]*)\n", self.buf):
                if len(self.buf) > 16 and not self.buf.startswith(b"\n#"):
                    raise AssertionError("bad chunk header from the server: %r" % self.buf[:100])
                self._fill()
            m = re.match(rb"\n#(#|[1-9][0-9]*)\n", self.buf)
            self.buf = self.buf[m.end():]
            if m.group(1) == b"#":
                return msg
            size = int(m.group(1))
            while len(self.buf) < size:
                self._fill()
            msg += self.buf[:size]
            self.buf = self.buf[size:]

    def recv_msg(self):
        """The next whole message, as text."""
        return (self._read_chunked() if self.chunked else self._read_eom()).decode()

    def frame(self, xml):
        if isinstance(xml, str):
            xml = xml.encode()
        if self.chunked:
            return b"\n#%d\n%s\n##\n" % (len(xml), xml)
        return xml + b"]]>]]>"

    def send_msg(self, xml):
        self.send_raw(self.frame(xml))

    # -- NETCONF
    def read_hello(self):
        self.server_hello = self._read_eom().decode()
        root = ET.fromstring(self.server_hello)
        sid = root.find("{%s}session-id" % NC_NS)
        self.session_id = int(sid.text) if sid is not None else None
        return self.server_hello

    def hello(self, caps=(BASE10, BASE11)):
        """Exchange hellos; chunked framing when both sides have base:1.1."""
        self.read_hello()
        self.send_raw(client_hello(caps) + "]]>]]>")
        self.chunked = BASE11 in caps and BASE11 in self.server_caps()
        return self

    def server_caps(self):
        root = ET.fromstring(self.server_hello)
        return [c.text for c in root.iter("{%s}capability" % NC_NS)]

    def rpc(self, body, msg_id="1", attrs=""):
        """Send <rpc> with @body, return the reply text."""
        self.send_msg('<rpc xmlns="%s" message-id="%s"%s>%s</rpc>' % (NC_NS, msg_id, attrs, body))
        return self.recv_msg()

    def get_config(self, source="running", filt=""):
        return self.rpc("<get-config><source><%s/></source>%s</get-config>" % (source, filt))

    def edit_config(self, config, target="running", options=""):
        return self.rpc('<edit-config><target><%s/></target>%s<config>%s</config></edit-config>'
                        % (target, options, config))

    def expect_closed(self, timeout=None):
        """True when the server closes the connection within the time limit (any pending output is read)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        self.sock.settimeout(0.05)
        try:
            while time.monotonic() < deadline:
                try:
                    data = self.sock.recv(65536)
                except socket.timeout:
                    continue
                except (ConnectionResetError, BrokenPipeError):
                    return True
                if not data:
                    return True
                self.buf += data
            return False
        finally:
            self.sock.settimeout(self.timeout)


def iface(name, inner=IFTYPE_ETH, op=None):
    """An <interfaces> edit for one interface."""
    return ('<interfaces xmlns="%s" xmlns:nc="%s" xmlns:ianaift="%s"><interface%s><name>%s</name>%s</interface>'
            '</interfaces>' % (IF_NS, NC_NS, IANA_NS, ' nc:operation="%s"' % op if op else "", name, inner))


def parse(reply):
    """ElementTree root of a reply; a reply that is not XML fails the test with its text."""
    try:
        return ET.fromstring(reply)
    except ET.ParseError as e:
        raise AssertionError("reply is not well-formed XML (%s):\n%s" % (e, reply))


def errors(reply):
    """[(error-type, error-tag), ...] of a reply."""
    root = parse(reply)
    out = []
    for err in root.iter("{%s}rpc-error" % NC_NS):
        out.append((err.findtext("{%s}error-type" % NC_NS), err.findtext("{%s}error-tag" % NC_NS)))
    return out


def assert_ok(reply, what=""):
    root = parse(reply)
    if root.tag != "{%s}rpc-reply" % NC_NS or root.find("{%s}ok" % NC_NS) is None or errors(reply):
        raise AssertionError("%s: expected <ok/>, got:\n%s" % (what, reply))


def assert_error(reply, tag, etype=None, what=""):
    errs = errors(reply)
    if not errs or errs[0][1] != tag or (etype and errs[0][0] != etype):
        raise AssertionError("%s: expected rpc-error %s/%s, got:\n%s" % (what, etype or "*", tag, reply))


def assert_data(reply, what=""):
    root = parse(reply)
    if root.find("{%s}data" % NC_NS) is None or errors(reply):
        raise AssertionError("%s: expected <data>, got:\n%s" % (what, reply))
    return root.find("{%s}data" % NC_NS)


def profile_interface_names(profile="minimal"):
    """Names of a built-in profile's interfaces, read from its file in schemas/profiles/."""
    ns = "{urn:fleetsim:profile}"
    root = ET.parse(os.path.join(SOURCE_DIR, "schemas", "profiles", profile + ".xml")).getroot()
    names = []
    for group in root.iter(ns + "interface-group"):
        fmt = group.findtext(ns + "name-format")
        first = int(group.findtext(ns + "first") or 0)
        count = int(group.findtext(ns + "count") or 1)
        names += [fmt.replace("{N}", str(first + i)) for i in range(count)]
    return names


def interface_names(reply, keep_profile=False):
    """Interface names in a get-config reply; those of the default profile's own interfaces are left out
    (every device starts with them) unless keep_profile."""
    data = assert_data(reply, "get-config")
    names = [n.text for n in data.iter("{%s}name" % IF_NS)]
    return names if keep_profile else [n for n in names if n not in PROFILE_INTERFACES]


# The default profile's interfaces, present in every device's running configuration from the start.
PROFILE_INTERFACES = frozenset(profile_interface_names())
