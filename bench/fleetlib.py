"""Shared helpers of the benchmark scripts: start fleetsim, read its CPU time
and memory from /proc, and a minimal pipelining NETCONF-over-TCP client.
The client is deliberately simple: the benchmarks measure the server's CPU
time, which does not depend on how fast the client is."""

import os
import re
import signal
import socket
import json
import subprocess
import tempfile
import time

BASE_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
IF_NS = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
HZ = os.sysconf("SC_CLK_TCK")


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start_fleet(args, binary=None, timeout_s=60, prefix=()):
    """Start fleetsim with args (behind a prefix command such as taskset); return (process, ready line) once
    every device listens."""
    binary = binary or os.path.join(repo_root(), "build", "fleetsim")
    if "--snmp" not in args and "--snmp-starting-port" not in args and "--starting-port" in args:
        # NETCONF benchmarks: the agents (on by default) take the UDP ports of the same numbers.
        args = args + ["--snmp-starting-port", args[args.index("--starting-port") + 1]]
    if "--ssh" not in args and "--transport" not in args:
        args = args + ["--ssh", "false"]  # the NETCONF benchmarks measure TCP unless they ask for SSH or TLS
    proc = subprocess.Popen(list(prefix) + [binary] + args, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + timeout_s
    seen = []
    while time.time() < deadline:
        line = proc.stderr.readline()
        seen.append(line)
        if not line:
            raise RuntimeError("fleetsim exited with %s: %s" % (proc.wait(), "".join(seen[-3:])))
        if "devices listening on" in line:
            return proc, line.strip()  # one group / several groups (--fleet FILE)
    proc.kill()
    raise RuntimeError("fleetsim not ready in %d s" % timeout_s)


def stress_manifest(args, timeout_s=600):
    """Run fleetsim-stress (build/) with args plus --json to a temporary file; return its manifest, or raise
    with the run's output when it exits non-zero."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        run = subprocess.run([os.path.join(repo_root(), "build", "fleetsim-stress")] + [str(a) for a in args]
                             + ["--json", path], capture_output=True, text=True, timeout=timeout_s)
        if run.returncode != 0:
            raise RuntimeError(run.stdout + run.stderr)
        with open(path) as f:
            return json.load(f)
    finally:
        os.unlink(path)


def stress_mount_held(first_ip, port, count, client_args, concurrency, hold_s, proc):
    """fleetsim-stress mount of @count devices (address per device from @first_ip, hello only) with
    @client_args (its transport options), held @hold_s seconds, against the fleet @proc. Returns (results of
    the manifest, server CPU seconds of the whole run, the server's CPU share of a core while the sessions
    idle, its RSS in KiB then); the last two are None when the hold is under 6 s."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        manifest = f.name
    cmd = [os.path.join(repo_root(), "build", "fleetsim-stress"), "mount", "--ip", first_ip, "--ip-per-device",
           "--port", str(port), "--device-count", str(count), "--concurrency", str(concurrency), "--on-mount",
           "none", "--hold", str(hold_s), "--json", manifest] + list(client_args)
    cpu0 = cpu_seconds(proc.pid)
    client = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Idle measurement: once every session is open (the server holds one descriptor per session), over a
    # third of the hold.
    idle = rss = None
    base_fds = len(os.listdir("/proc/%d/fd" % proc.pid))
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and client.poll() is None:
        if len(os.listdir("/proc/%d/fd" % proc.pid)) >= base_fds + count:
            break
        time.sleep(0.2)
    if client.poll() is None and hold_s >= 6:
        time.sleep(1.0)
        c0, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(hold_s / 3)
        idle = (cpu_seconds(proc.pid) - c0) / (time.monotonic() - t0)
        rss = rss_kib(proc.pid)
    out, err = client.communicate(timeout=hold_s + 900)
    server_cpu = cpu_seconds(proc.pid) - cpu0
    if client.returncode != 0:
        raise RuntimeError("mount failed: %s %s" % (out[-600:], err[-600:]))
    with open(manifest) as f:
        r = json.load(f)["results"]
    os.unlink(manifest)
    return r, server_cpu, idle, rss


def stress_edit_rate(ip, port, client_args, extra, edits):
    """edit-config requests per second of fleetsim-stress edit (@edits on running, one session) with
    @client_args (its transport options) and @extra."""
    r = stress_manifest(["edit", "--ip", ip, "--port", port, "--edits", edits, "--candidate-datastore", "false"]
                        + list(client_args) + list(extra), timeout_s=900)
    return r["results"]["requests_per_second"]


def stop_fleet(proc):
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=60)
    if rc != 0:
        raise RuntimeError("fleetsim exited with %d" % rc)


def cpu_user_system(pid):
    """User and system CPU time of a process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / HZ, int(fields[12]) / HZ


def cpu_seconds(pid):
    """User plus system CPU time of a process, in seconds."""
    return sum(cpu_user_system(pid))


def rss_kib(pid):
    """VmRSS of a process, in KiB."""
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def startup_seconds(ready_line):
    return float(re.search(r"start-up took ([0-9.]+) s", ready_line).group(1))


class Client:
    """NETCONF over TCP with base:1.1 chunked framing and pipelined requests."""

    def __init__(self, host, port, timeout_s=120):
        self.sock = socket.create_connection((host, port), timeout=timeout_s)
        self.buf = b""
        self.next_id = 1
        hello = self._recv_eom()
        self.hello = hello.decode(errors="replace")  # the server's hello, e.g. to check its modules
        if b"base:1.1" not in hello:
            raise RuntimeError("server does not offer base:1.1")
        self.sock.sendall(
            ('<hello xmlns="%s"><capabilities><capability>urn:ietf:params:netconf:base:1.1'
             "</capability></capabilities></hello>]]>]]>" % BASE_NS).encode())

    def _recv_eom(self):
        while b"]]>]]>" not in self.buf:
            self._fill()
        msg, self.buf = self.buf.split(b"]]>]]>", 1)
        return msg

    def _fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise RuntimeError("server closed the session")
        self.buf += data

    def send(self, body):
        msg = ('<rpc message-id="%d" xmlns="%s">%s</rpc>' % (self.next_id, BASE_NS, body)).encode()
        self.next_id += 1
        self.sock.sendall(b"\n#%d\n%s\n##\n" % (len(msg), msg))

    def recv(self):
        parts = []
        while True:
            while len(self.buf) < 4 or b"\n" not in self.buf[1:]:
                self._fill()
            if self.buf.startswith(b"\n##\n"):
                self.buf = self.buf[4:]
                return b"".join(parts)
            m = re.match(rb"\n#(\d+)\n", self.buf)
            if not m:
                self._fill()
                continue
            size = int(m.group(1))
            while len(self.buf) < m.end() + size + 4:
                self._fill()
            parts.append(self.buf[m.end():m.end() + size])
            self.buf = self.buf[m.end() + size:]

    def call(self, body):
        self.send(body)
        return self.recv()

    def pipeline(self, make_body, count, window, expect):
        """Send @count requests (make_body(i) is the i-th), at most @window unanswered at a time; every
        reply must hold @expect (bytes), else RuntimeError with the reply's start."""
        sent = received = 0
        while received < count:
            while sent < count and sent - received < window:
                self.send(make_body(sent))
                sent += 1
            reply = self.recv()
            if expect not in reply:
                raise RuntimeError(reply[:500])
            received += 1

    def close(self):
        try:
            self.call("<close-session/>")
        finally:
            self.sock.close()


def interface_xml(name):
    return ("<interface><name>%s</name><type xmlns:ianaift=\"urn:ietf:params:xml:ns:yang:iana-if-type\">"
            "ianaift:ethernetCsmacd</type></interface>" % name)


def edit_body(interfaces_xml, target="running"):
    return ("<edit-config><target><%s/></target><config><interfaces xmlns=\"%s\">%s</interfaces></config>"
            "</edit-config>" % (target, IF_NS, interfaces_xml))
