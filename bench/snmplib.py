"""Shared helpers of the SNMP benchmarks: a small BER encoder for SNMPv2c
GET/GETBULK requests (NULL values, request bytes built once and only the
request-id patched per send), a light response parser that only finds the
request-id and counts varbinds, a full varbind decoder for walks, the
.snmprec converter, and closed-loop and paced UDP load clients.

The load clients are plain Python on one UDP socket; they measure the
agent's CPU time per varbind (read from /proc) and the reply latency seen by
the client, which includes the client's own scheduling."""

import os
import select
import socket
import struct
import subprocess
import time

GET, GETNEXT, RESPONSE, GETBULK = 0xA0, 0xA1, 0xA2, 0xA5
EXCEPTIONS = (0x80, 0x81, 0x82)  # noSuchObject, noSuchInstance, endOfMibView
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux; Python 3.11 does not name it

# Request ids stay in 0x10000000..0x7fffffff, so their minimal encoding is
# always 4 bytes and a prebuilt request is patched in place.
REQID_BASE = 0x10000000
REQID_MARK = b"\x02\x04\x7f\x7e\x7d\x7c"


def enc_len(n):
    if n < 0x80:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(b)]) + b


def tlv(tag, body):
    return bytes([tag]) + enc_len(len(body)) + body


def enc_int(v):
    n = 1
    while not -(1 << (8 * n - 1)) <= v < (1 << (8 * n - 1)):
        n += 1
    return tlv(0x02, v.to_bytes(n, "big", signed=True))


def oid_parse(text):
    return [int(x) for x in text.strip(".").split(".")]


def enc_oid(arcs):
    if isinstance(arcs, str):
        arcs = oid_parse(arcs)
    out = bytearray([40 * arcs[0] + arcs[1]])
    for a in arcs[2:]:
        chunk = [a & 0x7F]
        a >>= 7
        while a:
            chunk.append(0x80 | (a & 0x7F))
            a >>= 7
        out += bytes(reversed(chunk))
    return tlv(0x06, bytes(out))


def dec_oid(body):
    arcs = [body[0] // 40 if body[0] < 80 else 2, body[0] % 40 if body[0] < 80 else body[0] - 80]
    v = 0
    for b in body[1:]:
        v = (v << 7) | (b & 0x7F)
        if not b & 0x80:
            arcs.append(v)
            v = 0
    return arcs


def request(community, pdu, oids, non_repeaters=0, max_repetitions=0):
    """SNMPv2c request with a placeholder request-id; returns (bytearray, offset of the 4 id bytes)."""
    vbl = b"".join(tlv(0x30, enc_oid(o) + b"\x05\x00") for o in oids)
    body = REQID_MARK + enc_int(non_repeaters if pdu == GETBULK else 0) + \
        enc_int(max_repetitions if pdu == GETBULK else 0) + tlv(0x30, vbl)
    msg = tlv(0x30, enc_int(1) + tlv(0x04, community.encode()) + tlv(pdu, body))
    return bytearray(msg), msg.index(REQID_MARK) + 2


def _hdr(d, i):
    """(content start, content length) of the TLV at i."""
    n = d[i + 1]
    if n < 0x80:
        return i + 2, n
    k = n & 0x7F
    return i + 2 + k, int.from_bytes(d[i + 2:i + 2 + k], "big")


def parse_light(d):
    """(request-id, error-status, varbinds, exception varbinds) of a response."""
    i, _ = _hdr(d, 0)
    i += 2 + d[i + 1]                 # version
    i = sum(_hdr(d, i))               # community
    i, _ = _hdr(d, i)                 # PDU
    n = d[i + 1]
    reqid = int.from_bytes(d[i + 2:i + 2 + n], "big")
    i += 2 + n
    err = d[i + 2]
    i += 2 + d[i + 1]
    i += 2 + d[i + 1]                 # error-index
    i, ln = _hdr(d, i)
    end = i + ln
    count = exc = 0
    while i < end:
        j, ln = _hdr(d, i)            # varbind SEQUENCE
        k = j + 2 + d[j + 1]          # past the OID (always short form)
        if d[k] in EXCEPTIONS:
            exc += 1
        i = j + ln
        count += 1
    return reqid, err, count, exc


def parse_full(d):
    """(request-id, error-status, [(oid arcs, tag, value bytes)])."""
    i, _ = _hdr(d, 0)
    i += 2 + d[i + 1]
    i = sum(_hdr(d, i))
    i, _ = _hdr(d, i)
    n = d[i + 1]
    reqid = int.from_bytes(d[i + 2:i + 2 + n], "big")
    i += 2 + n
    err = d[i + 2]
    i += 2 + d[i + 1]
    i += 2 + d[i + 1]
    i, ln = _hdr(d, i)
    end = i + ln
    out = []
    while i < end:
        j, ln = _hdr(d, i)
        o, olen = _hdr(d, j)
        oid = dec_oid(d[o:o + olen])
        v, vlen = _hdr(d, o + olen)
        out.append((oid, d[o + olen], bytes(d[v:v + vlen])))
        i = j + ln
    return reqid, err, out


class Agent:
    """One UDP socket connected to an agent."""

    def __init__(self, host, port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.connect((host, port))
        self.next = REQID_BASE

    def call(self, msg, off, timeout=1.0, tries=3):
        for _ in range(tries):
            self.next += 1
            msg[off:off + 4] = self.next.to_bytes(4, "big")
            self.sock.send(msg)
            deadline = time.time() + timeout
            while time.time() < deadline:
                r, _, _ = select.select([self.sock], [], [], max(0, deadline - time.time()))
                if not r:
                    break
                d = self.sock.recv(65535)
                if parse_light(d)[0] == self.next:
                    return d
        raise TimeoutError("no answer")

    def close(self):
        self.sock.close()


def wait_agent(host, port, community, timeout_s=60):
    a = Agent(host, port)
    msg, off = request(community, GET, ["1.3.6.1.2.1.1.3.0"])
    deadline = time.time() + timeout_s
    try:
        while time.time() < deadline:
            try:
                a.call(msg, off, timeout=0.3, tries=1)
                return
            except TimeoutError:
                pass
            except ConnectionRefusedError:  # not bound yet (ICMP port unreachable)
                time.sleep(0.1)
        raise RuntimeError("agent on %s:%d did not answer in %d s" % (host, port, timeout_s))
    finally:
        a.close()


def walk(host, port, community, root="1.3", max_repetitions=25):
    """Every varbind after root, in order, by GETBULK."""
    a = Agent(host, port)
    out = []
    cur = oid_parse(root)
    try:
        while True:
            msg, off = request(community, GETBULK, [cur], 0, max_repetitions)
            _, err, vbs = parse_full(a.call(msg, off, timeout=2.0))
            if err:
                raise RuntimeError("walk: error-status %d after %s" % (err, cur))
            done = False
            for oid, tag, val in vbs:
                if tag in EXCEPTIONS or oid <= cur:
                    done = True
                    break
                out.append((oid, tag, val))
                cur = oid
            if done or not vbs:
                return out
    finally:
        a.close()


def _printable(b):
    return all(0x20 <= c < 0x7F for c in b) and b"|" not in b and b.strip() == b


def snmprec_line(oid, tag, val):
    """One `OID|TYPE|VALUE` record with snmpsim's type tags, or None for a type it has no tag for."""
    o = ".".join(map(str, oid))
    if tag == 0x02:
        return "%s|2|%d" % (o, int.from_bytes(val, "big", signed=True))
    if tag == 0x04:
        return "%s|4|%s" % (o, val.decode()) if _printable(val) else "%s|4x|%s" % (o, val.hex())
    if tag == 0x05:
        return "%s|5|" % o
    if tag == 0x06:
        return "%s|6|%s" % (o, ".".join(map(str, dec_oid(val))))
    if tag == 0x40:
        return "%s|64|%s" % (o, ".".join(map(str, val)))
    if tag in (0x41, 0x42, 0x43, 0x46):
        return "%s|%d|%d" % (o, tag, int.from_bytes(val, "big"))
    if tag == 0x44:
        return "%s|68x|%s" % (o, val.hex())
    return None


def closed_loop(host, port, templates, window, duration_s, pid=None, warmup_s=0.3):
    """Keep `window` requests in flight for duration_s, cycling through the prebuilt
    (bytearray, offset) templates. Returns a dict of counts, latencies and the
    agent's CPU seconds over the measured interval (after warmup_s)."""
    from fleetlib import cpu_seconds
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.connect((host, port))
    sock.settimeout(0.2)
    clock = time.perf_counter_ns
    outstanding = {}
    reqid = REQID_BASE
    nt = len(templates)
    lat = []
    reqs = vbs = exc = errs = lost = stray = 0
    measuring = False
    cpu0 = 0.0
    t_start = clock()
    t_warm = t_start + int(warmup_s * 1e9)
    t_end = t_warm + int(duration_s * 1e9)

    def send():
        nonlocal reqid
        reqid += 1
        msg, off = templates[reqid % nt]
        msg[off:off + 4] = reqid.to_bytes(4, "big")
        outstanding[reqid] = clock()
        sock.send(msg)

    for _ in range(window):
        send()
    t_m0 = t_start
    while True:
        try:
            d = sock.recv(65535)
        except socket.timeout:
            now = clock()
            for rid in [r for r, t in outstanding.items() if now - t > 500_000_000]:
                del outstanding[rid]
                lost += 1
            if now >= t_end:
                break
            while len(outstanding) < window:
                send()
            continue
        now = clock()
        rid, err, n, x = parse_light(d)
        t0 = outstanding.pop(rid, None)
        if t0 is None:
            stray += 1
            continue
        if measuring:
            reqs += 1
            vbs += n
            exc += x
            errs += err != 0
            lat.append(now - t0)
        elif now >= t_warm:
            measuring = True
            t_m0 = now
            cpu0 = cpu_seconds(pid) if pid else 0.0
        if now >= t_end:
            break
        send()
    t_m1 = clock()
    cpu = (cpu_seconds(pid) - cpu0) if pid else 0.0
    sock.close()
    lat.sort()
    return {"requests": reqs, "varbinds": vbs, "exceptions": exc, "errors": errs, "lost": lost,
            "stray": stray, "seconds": (t_m1 - t_m0) / 1e9, "server_cpu_s": cpu, "lat_ns": lat}


def paced(host, port, templates, rate, duration_s, warmup_s=0.3, ontime_ns=100_000):
    """Open loop: send at `rate` requests/s for duration_s (after warmup_s) on a fixed
    schedule. A reply's latency runs from just before its request's send() to the
    kernel's receive timestamp of the reply (SO_TIMESTAMPNS), so time the reply
    waits in the client's socket while the client is not running is not counted;
    the sender's lateness against the schedule is reported separately, and so is
    the latency of the requests sent within ontime_ns of their schedule (a client
    that was descheduled sends a burst, which queues in the agent)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.connect((host, port))
    sock.setblocking(False)
    clock = time.time_ns  # the clock of SO_TIMESTAMPNS
    step = 1e9 / rate
    nt = len(templates)
    outstanding = {}
    lat = []
    lat_ontime = []
    late = []
    reqid = REQID_BASE
    sent = reqs = vbs = answered = 0
    t0 = clock()
    t_warm = t0 + int(warmup_s * 1e9)
    t_end = t_warm + int(duration_s * 1e9)
    k = 0
    recvmsg = sock.recvmsg
    due = t0
    while True:
        now = clock()
        while due <= now and due < t_end:
            reqid += 1
            msg, off = templates[reqid % nt]
            msg[off:off + 4] = reqid.to_bytes(4, "big")
            ts = clock()
            outstanding[reqid] = (ts, ts - due)
            try:
                sock.send(msg)
            except BlockingIOError:
                pass
            if ts >= t_warm:
                sent += 1
                late.append(ts - due)
            k += 1
            due = t0 + int(k * step)
        while True:
            try:
                d, anc, _, _ = recvmsg(65535, 64)
            except BlockingIOError:
                break
            tr = None
            for level, typ, data in anc:
                if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("qq", data[:16])
                    tr = sec * 1_000_000_000 + nsec
            if tr is None:
                tr = clock()
            rid, err, n, x = parse_light(d)
            sent_at = outstanding.pop(rid, None)
            if sent_at is None:
                continue
            answered += 1
            ts, lateness = sent_at
            if ts >= t_warm:
                reqs += 1
                vbs += n
                lat.append(tr - ts)
                if lateness < ontime_ns:
                    lat_ontime.append(tr - ts)
        now = clock()
        if now >= t_end:
            if not outstanding or now >= t_end + 200_000_000:
                break
            select.select([sock], [], [], 0.01)
            continue
        wait = (due - now) / 1e9
        if wait > 0:
            select.select([sock], [], [], wait)
    sock.close()
    return {"sent": sent, "requests": reqs, "varbinds": vbs, "lost": sent - reqs, "seconds": duration_s,
            "answered_all": answered, "lat_ns": sorted(lat), "late_ns": sorted(late),
            "lat_ontime_ns": sorted(lat_ontime)}


def pct(sorted_vals, p):
    if not sorted_vals:
        return float("nan")
    return sorted_vals[min(len(sorted_vals) - 1, int(len(sorted_vals) * p / 100))]


def kill_proc(proc, sig_timeout=10):
    """Terminate a process this script started, by its own handle."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=sig_timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def start_snmpd(port, workdir):
    conf = os.path.join(workdir, "snmpd.conf")
    with open(conf, "w") as f:
        f.write("rocommunity public 127.0.0.1\nrwcommunity private 127.0.0.1\n")
    env = dict(os.environ, SNMP_PERSISTENT_DIR=os.path.join(workdir, "persist"), MIBS="")
    proc = subprocess.Popen(["snmpd", "-f", "-Lo", "-C", "-c", conf, "udp:127.0.0.1:%d" % port], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir)
    try:
        wait_agent("127.0.0.1", port, "public", 20)
    except Exception:
        kill_proc(proc)
        raise
    return proc


def start_snmpsim(port, workdir, records, extra=()):
    """snmpsimd serving `records` (snmprec lines) as community `public`."""
    data = os.path.join(workdir, "data")
    cache = os.path.join(workdir, "cache")
    os.makedirs(data, exist_ok=True)
    os.makedirs(cache, exist_ok=True)
    if os.getuid() == 0:
        # snmpsimd refuses to run as root; it runs as nobody, which must read the data and write the index.
        extra = ["--process-user=nobody", "--process-group=nogroup"] + list(extra)
        for d in (workdir, data):
            os.chmod(d, 0o755)
        os.chmod(cache, 0o777)
    with open(os.path.join(data, "public.snmprec"), "w") as f:
        f.write("\n".join(records) + "\n")
    proc = subprocess.Popen(["snmpsimd", "--data-dir=%s" % data, "--cache-dir=%s" % cache,
                             "--agent-udpv4-endpoint=127.0.0.1:%d" % port, "--logging-method=null"] + list(extra),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir)
    try:
        wait_agent("127.0.0.1", port, "public", 60)
    except Exception:
        kill_proc(proc)
        raise
    return proc
