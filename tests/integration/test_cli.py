"""fleetsim's command line: plans it must refuse (exit code 2 and a message naming the problem,
before anything listens), the initial configuration, SIGTERM with sessions open, a
30,000-device fleet with an address per device under a 20,000-descriptor limit, and the first-run
banner: its lines for a default fleet, a TCP fleet without SNMP, an address-per-device fleet with
--auth any and SNMPv3 users, and a login of one's own with --authorized-keys; the commands it gives
are run as pasted (OpenSSH's ssh with the password from SSH_ASKPASS, net-snmp's snmpwalk v2c and v3,
the metrics URL) or, for nc, dialled at the address and port it names.

Run: /usr/bin/python3 test_cli.py <path to fleetsim>
"""

import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

# The descriptor limit the big fleets are planned against (the limit the project targets).
TARGET_NOFILE = 20000
BIG_FLEET = 30000


def child_nofile():
    """The descriptor limit to give fleetsim: TARGET_NOFILE, or less when the hard limit is lower
    (a limit can be lowered for the child, never raised)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY:
        return TARGET_NOFILE
    return min(hard, TARGET_NOFILE)


# A banner line without the log's prefix.
BANNER_PREFIX = "fleetsim[info]: "
SYSDESCR = re.compile(r"^(SNMPv2-MIB::sysDescr\.0|iso\.3\.6\.1\.2\.1\.1\.1\.0|\.1\.3\.6\.1\.2\.1\.1\.1\.0) = "
                      r"STRING: \S", re.M)


def banner(fleet):
    """The lines fleetsim logged at info level, without the prefix, once the banner is whole: its lines follow
    the ready line the harness waits for, so the log is read until it stops growing (slow builds: TSan)."""
    text = fleet.log()
    deadline = time.monotonic() + h.scaled(5)
    while time.monotonic() < deadline:
        time.sleep(0.2)
        again = fleet.log()
        if again == text:
            break
        text = again
    return [line[len(BANNER_PREFIX):] for line in text.splitlines() if line.startswith(BANNER_PREFIX)]


def banner_line(testcase, lines, pattern):
    """The one banner line matching pattern (a regular expression matched whole); its match."""
    found = [m for m in (re.fullmatch(pattern, line) for line in lines) if m]
    testcase.assertEqual(len(found), 1, "want one line matching %r in:\n%s" % (pattern, "\n".join(lines)))
    return found[0]


def run_pasted(command, timeout=15, **kw):
    """Run a command line as a user pasting it would (shell words); (exit code, stdout, stderr)."""
    argv = shlex.split(command) if isinstance(command, str) else command
    if "input" not in kw:
        kw["stdin"] = subprocess.DEVNULL
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h.scaled(timeout), **kw)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


INTERFACES = ('<interfaces xmlns="%s" xmlns:ianaift="%s">'
              '<interface><name>init-eth0</name><type>ianaift:ethernetCsmacd</type>'
              '<description>from the file</description></interface>'
              '<interface><name>init-lo</name><type>ianaift:softwareLoopback</type>'
              '<enabled>false</enabled></interface></interfaces>' % (h.IF_NS, h.IANA_NS))


class CliTests(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-cli-")
        self.fleets = []

    def tearDown(self):
        for f in self.fleets:
            f.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_refused(self, args, *needles, nofile=None):
        """fleetsim exits with 2 and its message contains every needle; returns the output."""
        code, out = h.run_fleetsim(args, nofile=nofile)
        self.assertEqual(code, 2, "fleetsim %s: exit code %d, want 2; output:\n%s" % (" ".join(args), code, out))
        for needle in needles:
            self.assertIn(needle, out, "fleetsim %s: message should name %r:\n%s" % (" ".join(args), needle, out))
        self.assertNotIn(h.READY_TEXT, out, "fleetsim %s listened before refusing" % " ".join(args))
        return out

    def fleet(self, **kw):
        f = h.Fleet(**kw)
        self.fleets.append(f)
        return f.start()

    # ------------------------------------------------------------ refused plans

    def test_unknown_option_exits_2_naming_it(self):
        self.assert_refused(["--frobnicate"], "--frobnicate")
        self.assert_refused(["--device-count", "2", "--no-such-flag=1"], "--no-such-flag")

    def test_bad_option_values_exit_2_naming_the_option(self):
        for args, needle in ((["--device-count", "0"], "--device-count"),
                             (["--device-count", "many"], "--device-count"),
                             (["--starting-port", "70000"], "--starting-port"),
                             (["--threads", "-1"], "--threads"),
                             (["--ip", "300.1.2.3"], "--ip"),
                             (["--log-level", "loud"], "--log-level"),
                             (["--ssh", "maybe"], "--ssh"),
                             (["--hello-timeout", "0"], "--hello-timeout"),
                             (["--device-count"], "--device-count")):
            with self.subTest(args=args):
                self.assert_refused(args, needle)

    def test_unknown_snmp_v3_protocol_exits_2_listing_the_names_taken(self):
        for user in ("ops:SHA-1024:authpass1:AES:privpass1", "ops:SHA-:authpass1:none:",
                     "ops:SHA-256:authpass1:AES-256:privpass1"):
            with self.subTest(user=user):
                self.assert_refused(["--snmp-v3-user", user], "--snmp-v3-user \"%s\"" % user,
                                    "sha256 (SHA-256)", "none or aes (AES-128, aes128) (in any case)")

    def test_port_range_past_65535_exits_2(self):
        out = self.assert_refused(["--starting-port", "65530", "--device-count", "10"], "65535")
        self.assertIn("65539", out, "the message should say how far the range goes:\n%s" % out)

    def test_ssh_host_key_folder_that_cannot_be_made_exits_2(self):
        out = self.assert_refused(["--ssh", "true", "--state-dir", "/proc/fleetsim-cannot-be-here",
                                   "--starting-port", "20000"], "state folder")
        self.assertIn("--state-dir", out)

    def test_schema_that_does_not_compile_exits_2_naming_the_file_with_schemas_strict(self):
        # Without --schemas-strict such a module is skipped with a warning (test_vendor_yang.py).
        bad_type = self.write("broken-type.yang",
                              'module broken-type { namespace "urn:example:broken-type"; prefix bt;\n'
                              '  leaf x { type no-such-type; } }\n')
        self.assert_refused(["--schemas-dir", self.tmp, "--schemas-strict", "--starting-port", "20000"], bad_type)
        os.unlink(bad_type)
        truncated = self.write("broken-syntax.yang", 'module broken-syntax { namespace "urn:example:bs";\n')
        self.assert_refused(["--schemas-dir", self.tmp, "--schemas-strict", "--starting-port", "20000"],
                            truncated)

    def test_initial_config_that_does_not_validate_exits_2(self):
        cases = {
            "no-type.xml": '<interfaces xmlns="%s"><interface><name>x</name></interface></interfaces>' % h.IF_NS,
            "unknown.xml": '<interfaces xmlns="%s"><bogus/></interfaces>' % h.IF_NS,
            "not-xml.xml": '<interfaces xmlns="%s"><interface>' % h.IF_NS,
            "bad-value.xml": ('<config xmlns="%s">%s</config>'
                              % (h.NC_NS, INTERFACES.replace("<enabled>false", "<enabled>maybe"))),
            "bad-value-bare-wrapper.xml": ("<config>%s</config>"
                                           % INTERFACES.replace("<enabled>false", "<enabled>maybe")),
        }
        for name, text in cases.items():
            with self.subTest(file=name):
                path = self.write(name, text)
                self.assert_refused(["--initial-config-xml-file", path, "--starting-port", "20000"], name)
        self.assert_refused(["--initial-config-xml-file", os.path.join(self.tmp, "missing.xml"),
                             "--starting-port", "20000"], "missing.xml")

    def test_too_many_devices_for_descriptor_limit_exits_2_saying_how_many_fit(self):
        limit = child_nofile()
        devices = BIG_FLEET if BIG_FLEET > limit else limit + 1000
        self.assertLessEqual(20000 + devices - 1, 65535)
        out = self.assert_refused(["--device-count", str(devices), "--starting-port", "20000", "--threads", "2"],
                                  "--ip-per-device", nofile=limit)
        m = re.search(r"at most (\d+) devices fit", out)
        self.assertIsNotNone(m, "the message should say how many devices fit:\n%s" % out)
        self.assertTrue(0 < int(m.group(1)) < limit, out)

    def test_devices_said_to_fit_do_fit(self):
        # With a small limit, the number in the message is checked both ways: it starts, one more does not.
        limit = 512
        out = self.assert_refused(["--device-count", "5000", "--starting-port", "20000", "--threads", "2"],
                                  "at most", nofile=limit)
        fit = int(re.search(r"at most (\d+) devices fit", out).group(1))
        self.assertGreater(fit, 0, out)
        self.assert_refused(["--device-count", str(fit + 1), "--starting-port", "20000", "--threads", "2"],
                            "at most %d devices fit" % fit, nofile=limit)
        f = self.fleet(devices=fit, threads=2, nofile=limit)
        with h.RawClient(f.addr(fit - 1)).hello() as c:
            h.assert_data(c.get_config(), "last device of a fleet that just fits")
        f.stop()

    # ------------------------------------------------------------ initial configuration

    def check_initial_config(self, path):
        f = self.fleet(devices=4, extra=["--initial-config-xml-file", path])
        # Interfaces the profile does not list get configuration only, and the log says so.
        self.assertRegex(f.log(), r'initial configuration: 2 interfaces not in profile "[^"]+" '
                                  r'\("init-eth0", "init-lo"\) have configuration only')
        clients = [h.RawClient(f.addr(i)).hello() for i in range(4)]
        try:
            for i, c in enumerate(clients):
                reply = c.get_config()
                self.assertEqual(sorted(h.interface_names(reply)), ["init-eth0", "init-lo"],
                                 "device %d:\n%s" % (i, reply))
                self.assertIn("<description>from the file</description>", reply)
                self.assertIn("<enabled>false</enabled>", reply)
                # The candidate starts as a copy of running.
                self.assertEqual(sorted(h.interface_names(c.get_config("candidate"))), ["init-eth0", "init-lo"])
            # Each device owns its copy: an edit on one leaves the others as the file says.
            h.assert_ok(clients[0].edit_config(h.iface("init-eth0", "", op="delete")), "delete on device 0")
            self.assertEqual(h.interface_names(clients[0].get_config()), ["init-lo"])
            for c in clients[1:]:
                self.assertEqual(sorted(h.interface_names(c.get_config())), ["init-eth0", "init-lo"])
        finally:
            for c in clients:
                c.close()
        f.stop()

    def test_initial_config_wrapped_in_config_is_on_every_device(self):
        self.check_initial_config(self.write("wrapped.xml", '<config xmlns="%s">%s</config>' % (h.NC_NS, INTERFACES)))

    def test_initial_config_wrapped_without_namespace_is_on_every_device(self):
        # README: "wrapped in <config> or <data>"; people write the wrapper without a namespace.
        for name, text in (("config.xml", "<config>%s</config>" % INTERFACES),
                           ("data.xml", '<?xml version="1.0"?>\n<!-- saved --><data>%s</data>' % INTERFACES),
                           ("data-ns.xml", '<data xmlns="%s">%s</data>' % (h.NC_NS, INTERFACES)),
                           ("prefixes.xml", '<config xmlns:if="%s" xmlns:ianaift="%s">%s</config>'
                            % (h.IF_NS, h.IANA_NS, INTERFACES.replace("<interfaces", "<if:interfaces", 1)
                               .replace("</interfaces>", "</if:interfaces>")))):
            with self.subTest(file=name):
                self.check_initial_config(self.write(name, text))

    def test_initial_config_bare_is_on_every_device(self):
        self.check_initial_config(self.write("bare.xml", INTERFACES))

    # ------------------------------------------------------------ signals

    def test_sigterm_with_open_sessions_exits_0(self):
        f = self.fleet(devices=3)
        idle = h.RawClient(f.addr(0)).hello()
        locker = h.RawClient(f.addr(1)).hello()
        h.assert_ok(locker.rpc("<lock><target><candidate/></target></lock>"), "lock")
        h.assert_ok(locker.edit_config(h.iface("sigterm"), target="candidate"), "edit candidate")
        mid_hello = h.RawClient(f.addr(2))
        mid_hello.read_hello()
        mid_hello.send_raw('<hello xmlns="%s"><capabilities>' % h.NC_NS)
        mid_message = h.RawClient(f.addr(2)).hello()
        mid_message.send_raw("\n#500\n<rpc xmlns=")
        pending = h.RawClient(f.addr(0)).hello()
        pending.send_msg('<rpc xmlns="%s" message-id="1"><get/></rpc>' % h.NC_NS)  # reply never read
        try:
            started = time.monotonic()
            f.stop()  # raises unless exit code 0 within the bound
            self.assertLess(time.monotonic() - started, h.scaled(h.STOP_TIMEOUT_S))
            for c in (idle, locker, mid_hello, mid_message):
                self.assertTrue(c.expect_closed(h.scaled(2)), "a session outlived the server")
        finally:
            for c in (idle, locker, mid_hello, mid_message, pending):
                c.close()

    # ------------------------------------------------------------ the big fleet

    def test_30000_devices_with_ip_per_device_start_under_the_descriptor_limit(self):
        limit = child_nofile()
        first, last = "127.2.0.1", "127.2.117.48"  # 127.2.0.1 + 29999
        f = self.fleet(devices=BIG_FLEET, ip_per_device=True, ip=first, nofile=limit)
        self.assertIn("%d devices listening on %s-%s" % (BIG_FLEET, first, last), f.log())
        self.assertEqual(f.addr(BIG_FLEET - 1)[0], last)
        with h.RawClient(f.addr(BIG_FLEET - 1)).hello() as c_last, h.RawClient(f.addr(0)).hello() as c_first:
            h.assert_ok(c_last.edit_config(h.iface("big-last")), "edit on the last device")
            self.assertEqual(h.interface_names(c_last.get_config()), ["big-last"])
            self.assertEqual(h.interface_names(c_first.get_config()), [])
        # Addresses across the range, each connection landing on either worker's socket.
        for i in list(range(0, BIG_FLEET, BIG_FLEET // 64)) + [BIG_FLEET - 2, BIG_FLEET - 1]:
            with h.RawClient(f.addr(i)).hello() as c:
                self.assertEqual(h.interface_names(c.get_config()), ["big-last"] if i == BIG_FLEET - 1 else [],
                                 "device %d (%s)" % (i, f.addr(i)[0]))
        sys.stderr.write("\n  30000 devices ready in %.2f s (descriptor limit %d)\n" % (f.startup_s, limit))
        f.stop()

    # ------------------------------------------------------------ the first-run banner

    def run_ssh_line(self, ssh_line, password):
        """Run the banner's ssh command with OpenSSH: the password comes from SSH_ASKPASS (forced, no
        terminal), host keys are not kept, no user configuration is read. Returns what the server sent."""
        askpass = self.write("askpass", "#!/bin/sh\necho %s\n" % shlex.quote(password))
        os.chmod(askpass, 0o700)
        argv = shlex.split(ssh_line)
        self.assertEqual(argv[0], "ssh")
        argv[1:1] = ["-F", "/dev/null", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                     "-o", "PubkeyAuthentication=no", "-o", "ConnectTimeout=5", "-o", "LogLevel=ERROR"]
        env = dict(os.environ, SSH_ASKPASS=askpass, SSH_ASKPASS_REQUIRE="force", DISPLAY="")
        env.pop("SSH_AUTH_SOCK", None)
        hello = ('<hello xmlns="%s"><capabilities><capability>%s</capability></capabilities></hello>]]>]]>'
                 '<rpc message-id="1" xmlns="%s"><close-session/></rpc>]]>]]>' % (h.NC_NS, h.BASE10, h.NC_NS))
        code, out, err = run_pasted(argv, input=hello.encode(), env=env)
        self.assertIn("<hello", out, "ssh exited with %d: %s" % (code, err))
        self.assertIn("<ok/>", out, "close-session was not answered: %s %s" % (out[-300:], err))
        return out

    def test_banner_of_a_default_fleet_gives_commands_that_work(self):
        f, url = h.start_with_metrics(devices=3, default_transport=True, extra=["--state-dir", self.tmp])
        self.fleets.append(f)
        lines = banner(f)
        p = f.port
        banner_line(self, lines, r"3 devices listening on 127\.0\.0\.1 ports %d-%d \(NETCONF over SSH, 2 workers\), "
                                 r"start-up took [0-9.]+ s; stop with Ctrl-C" % (p, p + 2))
        banner_line(self, lines, re.escape("NETCONF over SSH on 127.0.0.1 ports %d-%d (login admin/admin):"
                                           % (p, p + 2)))
        ssh = banner_line(self, lines, r"  (ssh -p %d -s admin@127\.0\.0\.1 netconf) +\(or: (fleetsim-stress mount "
                                       r"--ssh true --port %d --device-count 3)\)" % (p, p))
        banner_line(self, lines, re.escape("SNMP v2c on UDP 127.0.0.1 ports %d-%d, community public (write: private):"
                                           % (p, p + 2)))
        walk = banner_line(self, lines, re.escape("  snmpwalk -v2c -c public 127.0.0.1:%d 1.3.6.1.2.1.1" % p))
        metrics = banner_line(self, lines, re.escape("metrics: %s/metrics" % url))
        # Pasted, the commands work: snmpwalk returns sysDescr, ssh gets the device's hello with the
        # login the banner names, the URL serves metrics.
        code, out, err = run_pasted(walk.group(0))
        self.assertEqual(code, 0, err)
        self.assertRegex(out, SYSDESCR)
        self.run_ssh_line(ssh.group(1), "admin")
        with urllib.request.urlopen(metrics.group(0)[len("metrics: "):], timeout=h.scaled(5)) as r:
            self.assertIn(b"fleetsim_", r.read())
        # Few lines, all of them on stderr through the log.
        start = next(i for i, line in enumerate(lines) if "devices listening on" in line)
        self.assertEqual(len(lines) - start, 6, "\n".join(lines[start:]))
        f.stop()

    def test_banner_of_a_tcp_fleet_without_snmp(self):
        f = self.fleet(devices=2, extra=["--snmp", "false"])
        lines = banner(f)
        p = f.port
        banner_line(self, lines, re.escape("NETCONF over TCP on 127.0.0.1 ports %d-%d (no login):" % (p, p + 1)))
        nc = banner_line(self, lines, r"  nc (127\.0\.0\.1) (%d) +\(or: fleetsim-stress mount --port %d "
                                      r"--device-count 2\)" % (p, p))
        self.assertFalse([line for line in lines if "SNMP" in line or "snmpwalk" in line or "metrics" in line],
                         "\n".join(lines))
        self.assertFalse([line for line in lines if "ssh" in line.lower()], "\n".join(lines))
        # Where nc would connect, a device greets.
        with h.RawClient((nc.group(1), int(nc.group(2)))) as c:
            self.assertIn(h.BASE11, c.read_hello())
        f.stop()

    def test_banner_of_an_address_per_device_fleet_with_auth_any_and_v3_users(self):
        f = self.fleet(devices=3, ip_per_device=True, ip="127.0.23.1", default_transport=True,
                       extra=["--state-dir", self.tmp, "--auth", "any",
                              "--snmp-v3-user", "ops:sha256:authpass1:aes:privpass1",
                              "--snmp-v3-user", "reader:md5:authpass2:none:"])
        lines = banner(f)
        p = f.port
        banner_line(self, lines, re.escape("NETCONF over SSH on 127.0.23.1-127.0.23.3 port %d (any user and password: "
                                           "--auth any):" % p))
        ssh = banner_line(self, lines, r"  (ssh -p %d -s admin@127\.0\.23\.1 netconf) +\(or: fleetsim-stress mount "
                                       r"--ssh true --ip 127\.0\.23\.1 --ip-per-device --port %d --device-count 3\)"
                          % (p, p))
        banner_line(self, lines, re.escape("SNMP v2c and v3 (users ops, reader) on UDP 127.0.23.1-127.0.23.3 port %d, "
                                           "community public (write: private):" % p))
        banner_line(self, lines, re.escape("  snmpwalk -v2c -c public 127.0.23.1:%d 1.3.6.1.2.1.1" % p))
        v3 = banner_line(self, lines, re.escape("  snmpwalk -v3 -l authPriv -u ops -a SHA-256 -A '<auth password>' "
                                                "-x AES -X '<priv password>' 127.0.23.1:%d 1.3.6.1.2.1.1" % p))
        argv = [{"<auth password>": "authpass1", "<priv password>": "privpass1"}.get(w, w)
                for w in shlex.split(v3.group(0))]
        code, out, err = run_pasted(argv)
        self.assertEqual(code, 0, err)
        self.assertRegex(out, SYSDESCR)
        self.run_ssh_line(ssh.group(1), "whatever")
        f.stop()

    def test_banner_keeps_a_password_of_ones_own_out_of_the_log(self):
        key = os.path.join(self.tmp, "id_ed25519")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True,
                       stdout=subprocess.DEVNULL, timeout=h.scaled(10))
        f = self.fleet(devices=1, default_transport=True,
                       extra=["--state-dir", self.tmp, "--username", "bob", "--password", "s3cret-pw",
                              "--authorized-keys", key + ".pub", "--snmp-community", "my comm"])
        lines = banner(f)
        p = f.port
        banner_line(self, lines, re.escape("NETCONF over SSH on 127.0.0.1 port %d (login bob, the --password given, "
                                           "or a key of %s.pub):" % (p, key)))
        ssh = banner_line(self, lines, r"  (ssh -p %d -s bob@127\.0\.0\.1 netconf) +\(or: fleetsim-stress mount --ssh "
                                       r"true --port %d --device-count 1 --username bob --password '<password>'\)"
                          % (p, p))
        walk = banner_line(self, lines, re.escape("  snmpwalk -v2c -c 'my comm' 127.0.0.1:%d 1.3.6.1.2.1.1" % p))
        self.assertNotIn("s3cret-pw", f.log())
        self.run_ssh_line(ssh.group(1), "s3cret-pw")
        code, out, err = run_pasted(walk.group(0))
        self.assertEqual(code, 0, err)
        self.assertRegex(out, SYSDESCR)
        f.stop()

    def test_help_and_version_exit_0(self):
        code, out = h.run_fleetsim(["--help"])
        self.assertEqual(code, 0, out)
        self.assertIn("--device-count", out)
        code, out = h.run_fleetsim(["--version"])
        self.assertEqual(code, 0, out)
        self.assertIn("fleetsim", out)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
