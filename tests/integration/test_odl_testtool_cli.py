"""OpenDaylight netconf-testtool's command lines run as written (issue 16): the performance wiki's
fleetsim --schemas-dir ./schemas/ --ssh false --exi false --notification-file notifs.xml, with our own
files; --exi true warns and advertises nothing, start-exi is refused with operation-not-supported;
every testtool option fleetsim does not act on is accepted with one line saying what fleetsim does
instead; bad values of them exit 2 naming the option.

Run: /usr/bin/python3 test_odl_testtool_cli.py <path to fleetsim>
"""

import os
import shutil
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

EXI_NS = "urn:ietf:params:xml:ns:netconf:exi:1.0"


class OdlTesttoolCommandLines(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fleetsim-odl-cli-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.schemas = os.path.join(h.SOURCE_DIR, "examples", "vendor-yang")
        self.notifs = os.path.join(h.SOURCE_DIR, "notifications", "routes-100.xml")

    def fleet(self, args):
        f = h.Fleet(devices=2, extra=args).start()
        self.addCleanup(f.stop)
        return f

    def test_the_wiki_command_runs_and_serves_plain_tcp(self):
        f = self.fleet(["--schemas-dir", self.schemas + "/", "--ssh", "false", "--exi", "false",
                        "--notification-file", self.notifs])
        with h.RawClient(f.addr(1)) as c:
            caps = c.hello().server_caps()
            self.assertFalse([cap for cap in caps if "exi" in cap.lower()], "no EXI capability")
            self.assertTrue([cap for cap in caps if "module=acme-router" in cap], "the schemas folder's module")
            reply = c.rpc("<get-config><source><running/></source></get-config>")
            self.assertIn("<data", reply)
            reply = c.rpc('<create-subscription xmlns="urn:ietf:params:xml:ns:netconf:notification:1.0"/>',
                          msg_id="2")
            self.assertIn("<ok/>", reply)
            self.assertIn("<notification", c.recv_msg(), "the notification file streams")
        self.assertNotIn("EXI", f.log(), "--exi false is silent")

    def test_booleans_in_any_case_as_opendaylight_reads_them(self):
        f = self.fleet(["--ssh", "False", "--exi", "FALSE", "--md-sal", "False", "--snmp", "TRUE"])
        with h.RawClient(f.addr(0)) as c:  # plain TCP: --ssh False took
            c.hello()
        self.assertNotIn("EXI", f.log())

    def test_exi_true_warns_and_start_exi_is_refused(self):
        f = self.fleet(["--ssh", "false", "--exi", "true"])
        self.assertIn("--exi true: fleetsim speaks no EXI", f.log())
        with h.RawClient(f.addr(0)) as c:
            caps = c.hello().server_caps()
            self.assertFalse([cap for cap in caps if "exi" in cap.lower()])
            reply = c.rpc('<start-exi xmlns="%s"/>' % EXI_NS)
            self.assertIn("<error-tag>operation-not-supported</error-tag>", reply)
            self.assertIn("<data", c.rpc("<get-config><source><running/></source></get-config>", msg_id="2"),
                          "the session goes on after the refusal")

    def test_options_fleetsim_does_not_act_on_say_what_it_does_instead(self):
        said = {
            ("--md-sal", "true"): "--md-sal true: fleetsim's datastore is always a real one",
            ("--distribution-folder", self.tmp): "--distribution-folder %s: OpenDaylight's scale-util" % self.tmp,
            ("--edit-content", self.notifs): "--edit-content %s: fleetsim registers each device" % self.notifs,
            ("--async-requests", "true"): "--async-requests: fleetsim registers devices from one event loop",
            ("--thread-amount", "8"): "--thread-amount 8: fleetsim registers devices from one event loop",
            ("--throttle", "5000"): "--throttle 5000: fleetsim registers devices from one event loop",
            ("--permit-null-revision", "false"): "--permit-null-revision false: fleetsim loads modules",
        }
        args = ["--ssh", "false", "--generate-config-connection-timeout", "1800000", "--timeout", "20",
                "--time-out", "20", "--thread-pool-size", "2", "--debug", "false"]
        for (name, value) in said:
            args += [name, value]
        f = self.fleet(args)
        log = f.log()
        for key, line in said.items():
            self.assertIn(line, log, key)
        with h.RawClient(f.addr(0)) as c:
            c.hello()

    def test_generate_config_connection_timeout_is_the_hello_timeout(self):
        # 1500 ms: a client that sends no hello is closed within about 2 s, as --hello-timeout 2 would
        f = self.fleet(["--ssh", "false", "--generate-config-connection-timeout", "1500"])
        with h.RawClient(f.addr(0), timeout=h.scaled(10)) as c:
            c.read_hello()
            with self.assertRaises(h.ConnectionClosed):
                c.recv_msg()

    def test_bad_values_exit_2_naming_the_option(self):
        cases = [
            (["--exi", "maybe"], "--exi takes true or false"),
            (["--md-sal", "2"], "--md-sal takes true or false"),
            (["--async-requests", "sometimes"], "--async-requests takes true or false"),
            (["--thread-amount", "0"], "--thread-amount must be a number from 1"),
            (["--throttle", "x"], "--throttle must be a number from 1"),
            (["--controller-destination", "127.0.0.1"], "--controller-destination must be IP:PORT"),
            (["--controller-destination", "127.0.0.1:70000"], "--controller-destination must be IP:PORT"),
            (["--generate-config-connection-timeout", "0"], "--generate-config-connection-timeout must be"),
        ]
        for args, want in cases:
            code, text = h.run_fleetsim(args, timeout=h.scaled(10))
            self.assertEqual(code, 2, args)
            self.assertIn(want, text, args)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2, warnings=False)
