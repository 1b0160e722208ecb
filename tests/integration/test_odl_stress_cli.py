"""OpenDaylight stress-client command lines run as written against fleetsim-stress edit.

The wiki's command line runs verbatim against fleetsim (only its port is replaced by a free one,
and edit.txt is this test's own file in the working directory), and the device is read back
afterwards. Every option of OpenDaylight's stress client (client/stress/Parameters.java) is then
checked against scripted fake servers (fake_netconf.py), which record what the client sent:
every boolean form that OpenDaylight's parser takes (true/false in any case), the aliases
(--async beside --async-requests, --concurrent-message-limit beside --pipeline), --tcp-header's
bytes, the notes of --exi true and --debug true, and the refusal of a bad value (exit 2).

Run: /usr/bin/python3 test_odl_stress_cli.py <path to fleetsim> <path to fleetsim-stress> [unittest options]
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
import fake_netconf as fake  # noqa: E402

STRESS = None  # path to fleetsim-stress, from the command line
RUN_LIMIT_S = 60.0
WIKI_PORT = "17830"
WIKI_COMMAND = ("fleetsim-stress edit --ip 127.0.0.1 --port 17830 --edits 10000 --exi false --ssh false "
                "--username admin --password admin --thread-amount 1 --async false --edit-batch-size 10000 "
                "--edit-content edit.txt")
WIKI_EDITS = 10000
# One new interface per edit, named after the edit's message-id (OpenDaylight's {MSG_ID} placeholder).
EDIT_TXT = ('<interfaces xmlns="%s"><interface><name>odl-{MSG_ID}</name>'
            '<type xmlns:ianaift="%s">ianaift:ethernetCsmacd</type><description>{PHYS_ADDR}</description>'
            '</interface></interfaces>\n' % (h.IF_NS, h.IANA_NS))
EXI_WARNING = "fleetsim-stress: warning: --exi true: fleetsim-stress speaks no EXI; it uses plain XML\n"
DEBUG_NOTE = "fleetsim-stress: --debug true: there is no debug log; the report and --json FILE hold the details\n"
FINISHED = re.compile(r"^FINISHED\. Execution time: (\d+\.\d{6}) s$", re.M)
RPS = re.compile(r"^Requests per second: (\d+\.\d+)$", re.M)
EDITS = re.compile(r"^edits: (\d+) sent, (\d+) answered: (\d+) ok, (\d+) rpc-error$", re.M)
TRUE_FORMS = ("true", "True", "TRUE", "tRuE")
FALSE_FORMS = ("false", "False", "FALSE")


class Run:
    def __init__(self, argv, proc):
        self.argv = argv
        self.code = proc.returncode
        self.out = proc.stdout.decode(errors="replace")
        self.err = proc.stderr.decode(errors="replace")

    def __str__(self):
        return "%s\nexit code %s\n--- stdout\n%s--- stderr\n%s" % (" ".join(self.argv), self.code, self.out,
                                                                   self.err)


def run(argv, cwd=None):
    """fleetsim-stress with @argv (words after the program name), bounded; stderr is a pipe."""
    argv = [str(a) for a in argv]
    try:
        proc = subprocess.run([STRESS] + argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=h.scaled(RUN_LIMIT_S),
                              preexec_fn=lambda: h._child_setup(None))
    except subprocess.TimeoutExpired as e:
        raise AssertionError("fleetsim-stress %s did not end in time; stdout:\n%s\nstderr:\n%s"
                             % (" ".join(argv), e.stdout, e.stderr))
    return Run(argv, proc)


def wiki_argv(port, replace=()):
    """The wiki's command as words, program name dropped, its port replaced by @port; @replace: more
    (old, new) word pairs."""
    words = shlex.split(WIKI_COMMAND)
    assert words[0] == "fleetsim-stress"
    words = [str(port) if w == WIKI_PORT else w for w in words[1:]]
    for old, new in replace:
        words = [new if w == old else w for w in words]
    return words


class OdlCase(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-odl-cli-")
        with open(os.path.join(self.tmp, "edit.txt"), "w") as f:
            f.write(EDIT_TXT)
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fakes(self, script=None):
        srv = fake.FakeServers(script or fake.Script()).start()
        self.servers.append(srv)
        return srv

    def check(self, cond, res, what):
        if not cond:
            self.fail("%s\n%s" % (what, res))

    def assert_finished(self, res, edits):
        """A complete edit run: exit 0, OpenDaylight's two lines in its order, every edit answered <ok/>."""
        self.check(res.code == 0, res, "exit code should be 0")
        fin, rps = FINISHED.search(res.out), RPS.search(res.out)
        self.check(fin and rps, res, "want a 'FINISHED. Execution time: X s' and a 'Requests per second: Y' line")
        self.check(fin.start() < rps.start(), res, "FINISHED comes before Requests per second (OpenDaylight's order)")
        secs, per_s = float(fin.group(1)), float(rps.group(1))
        self.check(secs > 0 and per_s > 0, res, "both numbers are positive")
        # Both lines come from one clock: edits / seconds is the rate (within the 3 decimals printed).
        self.check(abs(edits / secs - per_s) <= per_s * (0.001 + 0.000001 / secs), res,
                   "Requests per second should be edits / execution time (printed to the microsecond)")
        m = EDITS.search(res.out)
        self.check(m and tuple(map(int, m.groups())) == (edits, edits, edits, 0), res,
                   "edits line: %d sent, %d answered, all ok" % (edits, edits))


class WikiCommandTests(OdlCase):
    def device_interface_names(self, fleet):
        with h.RawClient(fleet.addr(0), timeout=h.scaled(30)) as c:
            c.hello()
            reply = c.get_config("running")
        root = h.parse(reply)
        return [n.text for n in root.iter("{%s}name" % h.IF_NS)
                if n.text and n.text.startswith("odl-")], root

    def test_wiki_command_runs_verbatim_and_the_device_has_every_edit(self):
        with h.Fleet(devices=1, threads=1) as fleet:
            res = run(wiki_argv(fleet.port), cwd=self.tmp)
            self.assert_finished(res, WIKI_EDITS)
            self.check(res.err == "", res, "--exi false is silent: stderr should be empty")
            self.check(re.search(r"^commits: 1 sent, 1 ok, 0 rpc-error$", res.out, re.M), res,
                       "candidate (OpenDaylight's default) with --edit-batch-size 10000: one commit")
            self.check(", sync\n" in res.out, res, "--async false runs synchronously")
            names, root = self.device_interface_names(fleet)
        # Synchronous, one session: message-ids 1..10000 are the edits (10001 is the commit).
        self.assertEqual(len(names), WIKI_EDITS, "interfaces odl-* in running after the commit")
        self.assertEqual(set(names), {"odl-%d" % i for i in range(1, WIKI_EDITS + 1)})
        descr = {i.findtext("{%s}name" % h.IF_NS): i.findtext("{%s}description" % h.IF_NS)
                 for i in root.iter("{%s}interface" % h.IF_NS)}
        self.assertEqual(descr["odl-1"], "aa:bb:cc:dd:00:00", "{PHYS_ADDR} of the first edit")

    def test_exi_true_warns_once_and_still_runs(self):
        with h.Fleet(devices=1, threads=1) as fleet:
            res = run(self.small_wiki(fleet.port, exi="true"), cwd=self.tmp)
            self.assert_finished(res, 500)
            self.check(res.err == EXI_WARNING, res, "stderr should be exactly the one EXI warning line")
            names, _ = self.device_interface_names(fleet)
        self.assertEqual(len(names), 500)

    @staticmethod
    def small_wiki(port, exi):
        """The wiki's command with 500 edits (and batch) and --exi @exi."""
        words = wiki_argv(port)
        for opt, value in (("--edits", "500"), ("--edit-batch-size", "500"), ("--exi", exi)):
            words[words.index(opt) + 1] = value
        return words


class BooleanFormTests(OdlCase):
    """Every boolean of OpenDaylight's client, in every case its parser takes (Boolean.valueOf)."""

    def edit(self, extra, script=None, edits=3):
        srv = self.fakes(script)
        path = os.path.join(self.tmp, "m.json")
        if os.path.exists(path):
            os.unlink(path)
        res = run(["edit", "--port", srv.port, "--edits", edits, "--edit-content", "edit.txt", "--json", path]
                  + list(extra), cwd=self.tmp)
        with open(path) if os.path.exists(path) else open(os.devnull) as f:
            text = f.read()
        manifest = json.loads(text) if text else None
        return res, srv, manifest

    def test_async_and_async_requests(self):
        for opt in ("--async", "--async-requests"):
            for form in TRUE_FORMS + FALSE_FORMS:
                with self.subTest(opt=opt, form=form):
                    want = form.lower() == "true"
                    res, _, m = self.edit([opt, form, "--candidate-datastore", "false"])
                    self.assert_finished(res, 3)
                    self.check(res.err == "", res, "stderr should be empty")
                    self.assertEqual(m["parameters"]["async_requests"], want, str(res))
                    self.check((", async" if want else ", sync") in res.out, res, "the summary names the mode")

    def test_candidate_datastore(self):
        for form in TRUE_FORMS + FALSE_FORMS:
            with self.subTest(form=form):
                want = form.lower() == "true"
                res, srv, m = self.edit(["--candidate-datastore", form])
                self.assert_finished(res, 3)
                self.assertEqual(m["parameters"]["candidate_datastore"], want)
                ops = [(r.op, r.target) for r in srv.only_connection().requests]
                self.assertEqual(ops, [("edit-config", "candidate")] * 3 + [("commit", None)] if want
                                 else [("edit-config", "running")] * 3)

    def test_legacy_framing(self):
        for form in TRUE_FORMS + FALSE_FORMS:
            with self.subTest(form=form):
                want = form.lower() == "true"
                res, srv, m = self.edit(["--legacy-framing", form])
                self.assert_finished(res, 3)
                self.assertEqual(m["parameters"]["legacy_framing"], want)
                self.assertEqual(srv.only_connection().chunked, not want, "base:1.1 chunks unless legacy")

    def test_exi_and_debug(self):
        for opt, note in (("--exi", EXI_WARNING), ("--debug", DEBUG_NOTE)):
            for form in TRUE_FORMS + FALSE_FORMS:
                with self.subTest(opt=opt, form=form):
                    res, _, _ = self.edit([opt, form])
                    self.assert_finished(res, 3)
                    self.assertEqual(res.err, note if form.lower() == "true" else "", str(res))

    def test_ssh(self):
        for form in FALSE_FORMS:
            with self.subTest(form=form):
                res, _, m = self.edit(["--ssh", form])
                self.assert_finished(res, 3)
                self.assertEqual(m["parameters"]["transport"], "tcp")
        for form in TRUE_FORMS:
            with self.subTest(form=form):
                # Read as true: the combination with --tcp-header (plain TCP only) is refused.
                res = run(["edit", "--ssh", form, "--tcp-header", "x"])
                self.assertEqual((res.code, res.err), (2, "fleetsim-stress: --tcp-header is for plain TCP; it "
                                                          "cannot be combined with --ssh true\n"), str(res))


class OptionTests(OdlCase):
    def test_concurrent_message_limit_is_the_pipeline_window(self):
        # The fake answers only once the client has gone quiet: what piles up is the window.
        for extra, window in ((["--concurrent-message-limit", 5], 5), (["--pipeline", 5], 5),
                              (["--concurrent-message-limit", 0], 12),
                              (["--pipeline", 3, "--concurrent-message-limit", 7], 7)):
            with self.subTest(extra=extra):
                srv = self.fakes(fake.Script(settle_s=0.15))
                res = run(["edit", "--port", srv.port, "--edits", 12, "--candidate-datastore", "false",
                           "--async", "true"] + extra)
                self.assert_finished(res, 12)
                self.assertEqual(srv.only_connection().max_pending, window, str(res))
                self.check("(pipeline %d)" % (0 if window == 12 else window) in res.out, res,
                           "the summary names the window")

    def test_concurrent_message_limit_does_nothing_when_sync(self):
        srv = self.fakes(fake.Script(settle_s=0.15))
        res = run(["edit", "--port", srv.port, "--edits", 4, "--candidate-datastore", "false",
                   "--async-requests", "false", "--concurrent-message-limit", 3])
        self.assert_finished(res, 4)
        self.assertEqual(srv.only_connection().max_pending, 1)

    def test_tcp_header_is_sent_first_as_opendaylight_sends_it(self):
        # OpenDaylight: the text without its double quotes, trimmed, and a newline, before the hello.
        text = '  "[admin;127.0.0.1:4000;tcp;1;2;;;]"  '
        want = b"[admin;127.0.0.1:4000;tcp;1;2;;;]\n"
        for mode in ("edit", "mount"):
            with self.subTest(mode=mode):
                srv = self.fakes(fake.Script(preamble_len=len(want)))
                res = run([mode, "--port", srv.port, "--edits", 2, "--tcp-header", text]
                          if mode == "edit" else [mode, "--port", srv.port, "--tcp-header", text])
                self.check(res.code == 0, res, "exit 0")
                conn = srv.only_connection()
                self.assertEqual(conn.preamble, want)
                self.assertEqual(conn.errors, [])
                self.assertTrue("<hello" in conn.client_hello[:300], conn.client_hello)

    def test_tcp_header_and_preamble_exclude_each_other(self):
        res = run(["edit", "--tcp-header", "x", "--tcp-preamble", "/dev/null"])
        self.assertEqual((res.code, res.err, res.out), (2, "fleetsim-stress: --tcp-preamble and --tcp-header "
                                                           "exclude each other: both are the bytes sent first\n",
                                                        ""))

    def test_every_opendaylight_option_at_once(self):
        # Parameters.java's options, each with a value (OpenDaylight's defaults where they run here).
        header = b"[admin;127.0.0.1:4000;tcp;1;2;;;]\n"
        srv = self.fakes(fake.Script(preamble_len=len(header)))
        res = run(["edit", "--ip", "127.0.0.1", "--port", srv.port, "--edits", 10, "--edit-content", "edit.txt",
                   "--edit-batch-size", 4, "--candidate-datastore", "true", "--debug", "false",
                   "--legacy-framing", "false", "--exi", "false", "--async-requests", "true", "--msg-timeout", 60,
                   "--ssh", "false", "--username", "admin", "--password", "admin", "--tcp-header",
                   header.decode().strip(), "--thread-amount", 2, "--concurrent-message-limit", 0], cwd=self.tmp)
        self.assert_finished(res, 10)
        self.check(res.err == "", res, "stderr should be empty")
        conns = sorted(srv.connections, key=lambda c: c.requests[0].message_id if c.requests else "")
        self.assertEqual(len(conns), 2)
        for c in conns:
            self.assertEqual(c.preamble, header)
        # 5 edits per session, a commit after every 4: edit x4, commit, edit, commit.
        for c in conns:
            self.assertEqual([r.op for r in c.requests], ["edit-config"] * 4 + ["commit", "edit-config", "commit"])

    def test_bad_values_are_refused_with_exit_2(self):
        for argv, message in (
                (["edit", "--exi", "maybe"], '--exi takes true or false, not "maybe"'),
                (["edit", "--debug", "1"], '--debug takes true or false, not "1"'),
                (["edit", "--async", "yes"], '--async takes true or false, not "yes"'),
                (["edit", "--async-requests", "on"], '--async-requests takes true or false, not "on"'),
                (["edit", "--concurrent-message-limit", "-1"],
                 '--concurrent-message-limit must be a number (0: no limit), not "-1"'),
                (["edit", "--exi"], "option --exi needs a value"),
                (["edit", "--tcp-header"], "option --tcp-header needs a value")):
            with self.subTest(argv=argv):
                res = run(argv)
                self.assertEqual((res.code, res.err, res.out), (2, "fleetsim-stress: %s\n" % message, ""))


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2, warnings=False)
