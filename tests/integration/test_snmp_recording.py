"""Recordings as SNMP data: --export-snmprec writes a device's view as .snmprec, and
--snmp-recording serves a recorded walk (.snmprec or snmpwalk -On output) beside the live
objects, checked with net-snmp's snmpbulkwalk and snmpget.

Run: /usr/bin/python3 test_snmp_recording.py <path to fleetsim>. Every agent is on 127.0.0.0/8,
every call has a time limit, ports are random.
"""

import os
import random
import re
import tempfile
import time
import unittest

import fleetsim_harness as h
from test_snmp import snmp, values

ENTERPRISE = "1.3.6.1.4.1.99999"
IF_DESCR = "1.3.6.1.2.1.2.2.1.2"
IF_HC_IN_OCTETS = "1.3.6.1.2.1.31.1.1.1.6"
SYS_DESCR = "1.3.6.1.2.1.1.1.0"

# An enterprise subtree in .snmprec, unsorted, with a recorded ifDescr.99 and sysDescr.0 that the
# live objects own (they must not show), and a hex string.
SNMPREC = """# a small device
1.3.6.1.4.1.99999.1.3.0|6|1.3.6.1.4.1.99999.42
1.3.6.1.4.1.99999.1.1.0|65|1000
1.3.6.1.4.1.99999.1.2.0|4|recorded text
1.3.6.1.4.1.99999.1.4.0|4x|00ff10
1.3.6.1.4.1.99999.1.5.0|70|5000000000
1.3.6.1.2.1.1.1.0|4|recorded sysDescr
1.3.6.1.2.1.2.2.1.2.99|4|recorded ifDescr
"""

# The same kind of data as net-snmp prints it with -On, with a string over two lines.
WALK = """.1.3.6.1.2.1.4.1.0 = INTEGER: forwarding(1)
.1.3.6.1.2.1.4.3.0 = Counter32: 777
.1.3.6.1.2.1.4.20.1.1.10.0.0.1 = IpAddress: 10.0.0.1
.1.3.6.1.4.1.99998.1.0 = STRING: "two
lines"
.1.3.6.1.4.1.99998.2.0 = Hex-STRING: 00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF
01 02
.1.3.6.1.4.1.99998.3.0 = Timeticks: (4242) 0:00:42.42
.1.3.6.1.4.1.99998.3.0 = No more variables left in this MIB View (It is past the end of the MIB tree)
"""


class RecordingTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    @staticmethod
    def run_on_free_port(args):
        """run_fleetsim with a random port below the ephemeral range, again if that port was taken."""
        for _ in range(h.START_ATTEMPTS):
            port = random.randrange(h.PORT_LOW, h.PORT_HIGH)
            code, log = h.run_fleetsim(args + ["--starting-port", str(port), "--snmp-starting-port", str(port)])
            if not (code == 2 and ("cannot listen" in log or "cannot bind SNMP" in log)):
                return code, log
        return code, log

    def fleet(self, recording, devices=2):
        f = h.Fleet(devices=devices, extra=["--snmp-recording", recording]).start()
        self.addCleanup(f.stop)
        return f

    def test_export_writes_the_live_view_as_snmprec(self):
        out = os.path.join(self.dir.name, "dev0.snmprec")
        code, log = self.run_on_free_port(["--export-snmprec", out, "--threads", "1"])
        self.assertEqual(code, 0, log)
        with open(out) as exported:
            lines = exported.read().splitlines()
        self.assertTrue(all(re.match(r"^[\d.]+\|\d+x?\|", l) for l in lines), lines[:5])
        oids = [l.split("|", 1)[0] for l in lines]
        self.assertIn(SYS_DESCR, oids)
        self.assertTrue(any(o.startswith(IF_HC_IN_OCTETS + ".") for o in oids))
        key = [tuple(int(a) for a in o.split(".")) for o in oids]
        self.assertEqual(key, sorted(set(key)), "sorted, no duplicates")
        # The export reads back as a recording: a fleet serving it starts.
        f = self.fleet(out, devices=1)
        self.assertIn(SYS_DESCR, values(snmp("snmpget", f.addr(0), [SYS_DESCR])))

    def test_snmprec_served_beside_the_live_objects(self):
        f = self.fleet(self.write("dev.snmprec", SNMPREC))
        a = f.addr(1)
        first = values(snmp("snmpbulkwalk", a, [ENTERPRISE]))
        self.assertEqual(first[ENTERPRISE + ".1.2.0"], ("STRING", "recorded text"))
        self.assertEqual(first[ENTERPRISE + ".1.3.0"], ("OID", ".1.3.6.1.4.1.99999.42"))
        self.assertEqual(first[ENTERPRISE + ".1.4.0"][0], "Hex-STRING")
        self.assertEqual(first[ENTERPRISE + ".1.4.0"][1].split(), ["00", "FF", "10"])
        self.assertEqual(first[ENTERPRISE + ".1.1.0"][0], "Counter32")
        self.assertEqual(first[ENTERPRISE + ".1.5.0"][0], "Counter64")
        time.sleep(1.2)
        second = values(snmp("snmpbulkwalk", a, [ENTERPRISE]))
        for o in (".1.1.0", ".1.5.0"):
            moved = int(second[ENTERPRISE + o][1]) - int(first[ENTERPRISE + o][1])
            self.assertGreater(moved, 0, "%s did not move in 1.2 s" % o)
            self.assertLess(moved, 10_000_000 * h.scaled(30), o)
        # The live objects own their columns: live sysDescr and ifDescr rows, no recorded ifDescr.99.
        live = values(snmp("snmpbulkwalk", a, [IF_DESCR]))
        self.assertEqual(len(live), len(h.PROFILE_INTERFACES), live)
        self.assertNotIn(IF_DESCR + ".99", live)
        self.assertNotEqual(values(snmp("snmpget", a, [SYS_DESCR]))[SYS_DESCR][1], "recorded sysDescr")
        self.assertEqual(len(values(snmp("snmpbulkwalk", a, [IF_HC_IN_OCTETS]))), len(h.PROFILE_INTERFACES))
        # A whole walk visits live and recorded OIDs in order and reaches the end.
        everything = snmp("snmpbulkwalk", a, ["1.3"])
        oids = [tuple(int(x) for x in o.split(".")) for o in values(everything)]
        self.assertEqual(oids, sorted(oids))
        self.assertIn(ENTERPRISE + ".1.2.0", values(everything))

    def test_snmpwalk_output_served(self):
        f = self.fleet(self.write("dev.walk", WALK))
        a = f.addr(0)
        got = values(snmp("snmpbulkwalk", a, ["1.3.6.1.2.1.4"]))
        self.assertEqual(got["1.3.6.1.2.1.4.1.0"][0], "INTEGER")
        self.assertEqual(got["1.3.6.1.2.1.4.3.0"][0], "Counter32")
        self.assertEqual(got["1.3.6.1.2.1.4.20.1.1.10.0.0.1"], ("IpAddress", "10.0.0.1"))
        got = values(snmp("snmpbulkwalk", a, ["1.3.6.1.4.1.99998"], extra=["-Ox"]))
        self.assertEqual(got["1.3.6.1.4.1.99998.1.0"][1].split(), ["74", "77", "6F", "0A", "6C", "69", "6E",
                                                                    "65", "73"])
        # net-snmp wraps a Hex-STRING at 16 bytes a line, as in the recording.
        raw = snmp("snmpget", a, ["1.3.6.1.4.1.99998.2.0"])
        self.assertEqual(raw.split("Hex-STRING:", 1)[1].split(), "00 11 22 33 44 55 66 77 88 99 AA BB CC DD "
                         "EE FF 01 02".split())
        self.assertEqual(got["1.3.6.1.4.1.99998.3.0"][0], "Timeticks")
        self.assertEqual(values(snmp("snmpget", a, [SYS_DESCR]))[SYS_DESCR][0], "STRING")

    def test_a_profile_brings_its_own_recording(self):
        self.write("lab.snmprec", "1.3.6.1.4.1.99992.1.0|4|from the profile\n1.3.6.1.4.1.99992.2.0|65|5\n")
        with open(os.path.join(h.SOURCE_DIR, "schemas", "profiles", "minimal.xml")) as f:
            text = f.read()
        text = text.replace("<name>minimal</name>", "<name>lab</name>")
        text = text.replace("</profile>", "<recording>lab.snmprec</recording></profile>")
        profile = self.write("lab.xml", text)
        f = h.Fleet(devices=1, extra=["--profile", profile]).start()
        self.addCleanup(f.stop)
        a = (f.ip, f.port)
        got = values(snmp("snmpbulkwalk", a, ["1.3.6.1.4.1.99992"]))
        self.assertEqual(got["1.3.6.1.4.1.99992.1.0"], ("STRING", "from the profile"))
        self.assertEqual(got["1.3.6.1.4.1.99992.2.0"][0], "Counter32")

    def test_export_of_another_device_is_that_device(self):
        out = os.path.join(self.dir.name, "dev3.snmprec")
        code, log = self.run_on_free_port(["--export-snmprec", out, "--export-device", "3", "--device-count", "4"])
        self.assertEqual(code, 0, log)
        with open(out) as exported:
            text = exported.read()
        self.assertIn("1.3.6.1.2.1.1.5.0|4|device-3\n", text)
        code, log = self.run_on_free_port(["--export-snmprec", out, "--export-device", "4", "--device-count", "4"])
        self.assertEqual(code, 2, log)
        self.assertIn("devices 0 to 3", log)

    def test_bad_recording_refused_naming_the_line(self):
        path = self.write("bad.snmprec", "1.3.6.1.4.1.9.1.0|4|ok\n1.3.6.1.4.1.9.2.0|4:numeric|x\n")
        code, log = self.run_on_free_port(["--snmp-recording", path])
        self.assertEqual(code, 2, log)
        self.assertIn(path + ":2: tag \"4:numeric\" is not supported", log)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
