"""Certificates for the NETCONF over TLS tests, made by independent means.

A client of the fleet's CA comes from `fleetsim --issue-client-cert`; the refused ones come from the
openssl command line: a client of another CA, and a client of the fleet's CA whose validity ended in 2020
(`openssl ca` takes a start and an end date, so no clock tricks are needed).
"""

import os
import socket
import ssl
import subprocess

import fleetsim_harness as h

EOM = b"]]>]]>"


def run(args, timeout=20):
    return subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=h.scaled(timeout), text=True)


def openssl(*args):
    r = run(["openssl"] + list(args))
    if r.returncode:
        raise AssertionError("openssl %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


class Certs:
    """Certificates in @work for a fleet whose state folder is @state: NAME.pem and NAME.key each."""

    def __init__(self, work, state):
        self.work = work
        self.state = state

    def path(self, name):
        return os.path.join(self.work, name)

    def fleet_ca(self):
        return os.path.join(self.state, "tls", "ca.pem")

    def issue(self, name):
        """A client certificate of the fleet's CA (created first when missing), by fleetsim itself."""
        r = run([h.BINARY, "--issue-client-cert", name, "--out", self.path(name), "--state-dir", self.state])
        if r.returncode:
            raise AssertionError("--issue-client-cert %s: %s%s" % (name, r.stdout, r.stderr))
        return r

    def csr(self, name):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                self.path(name + ".key"), "-out", self.path(name + ".csr"), "-subj", "/CN=" + name)

    def other_ca_client(self, name):
        """A client certificate of a CA the fleet does not know."""
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", self.path("other-ca.key"), "-out", self.path("other-ca.pem"), "-days", "2",
                "-subj", "/CN=other CA")
        self.csr(name)
        openssl("x509", "-req", "-in", self.path(name + ".csr"), "-CA", self.path("other-ca.pem"), "-CAkey",
                self.path("other-ca.key"), "-CAcreateserial", "-out", self.path(name + ".pem"), "-days", "2")

    def expired_client(self, name):
        """A client certificate of the fleet's CA, valid on 1 January 2020 only."""
        self.csr(name)
        with open(self.path("index.txt"), "w"):
            pass
        with open(self.path("serial"), "w") as f:
            f.write("1000\n")
        with open(self.path("ca.cnf"), "w") as f:
            f.write("[ca]\ndefault_ca = d\n[d]\ndatabase = %s\nnew_certs_dir = %s\nserial = %s\n"
                    "default_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n[ext]\n"
                    "extendedKeyUsage = clientAuth\n" % (self.path("index.txt"), self.work, self.path("serial")))
        openssl("ca", "-batch", "-config", self.path("ca.cnf"), "-cert", self.fleet_ca(), "-keyfile",
                os.path.join(self.state, "tls", "ca.key"), "-in", self.path(name + ".csr"), "-out",
                self.path(name + ".pem"), "-startdate", "20200101000000Z", "-enddate", "20200102000000Z",
                "-extensions", "ext", "-notext")

    def clients(self):
        """alice (of the fleet's CA), other (of another CA) and expired (of the fleet's CA, expired)."""
        self.issue("alice")
        self.other_ca_client("other")
        self.expired_client("expired")

    def connect(self, host, port, name=None, ctx=None, session=None):
        """A TLS connection to @host:@port with client certificate @name (None: none), the server's
        certificate verified against the fleet's CA; through @ctx instead when given, offering @session
        to resume."""
        if ctx is None:
            ctx = ssl.create_default_context(cafile=self.fleet_ca())
            if name:
                ctx.load_cert_chain(self.path(name + ".pem"), self.path(name + ".key"))
        sock = socket.create_connection((host, port), timeout=h.scaled(10))
        return ctx.wrap_socket(sock, server_hostname=host, session=session)

    def refused(self, host, port, name):
        """True when the session with @name's certificate ends without a hello."""
        try:
            with self.connect(host, port, name) as conn:
                read_msg(conn)
        except (ssl.SSLError, h.ConnectionClosed, ConnectionResetError, BrokenPipeError):
            return True
        return False


def read_msg(conn):
    """One ]]>]]>-framed message of @conn, decoded."""
    data = b""
    while EOM not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise h.ConnectionClosed("closed after %r" % data[-200:])
        data += chunk
    return data[:data.index(EOM)].decode()
