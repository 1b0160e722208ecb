"""OpenDaylight's NETCONF performance wiki, its whole workflow with our files (issue 16): fleetsim
started as the wiki starts netconf-testtool (--schemas-dir, --ssh false, --exi false,
--notification-file), the stress client's command line verbatim filling a layer-2 forwarding table
with one entry per {PHYS_ADDR} (examples/l2fib/), an independent client (ncclient) counting the entries,
a delete-all edit, and the count again; then the same with asynchronous requests on two sessions.

Run: /usr/bin/python3 test_odl_wiki_workflow.py <path to fleetsim> <path to fleetsim-stress>
"""

import os
import re
import subprocess
import sys
import unittest
import warnings
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from test_ncclient import tcp_manager  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

STRESS = None
L2FIB = os.path.join(h.SOURCE_DIR, "examples", "l2fib")
L2FIB_NS = "urn:fleetsim:example:l2fib"
FINISHED = re.compile(r"^FINISHED\. Execution time: \d+\.\d+ s\nRequests per second: \d+", re.M)


class WikiWorkflow(unittest.TestCase):

    def setUp(self):
        self.fleet = h.Fleet(devices=1, extra=[
            "--schemas-dir", L2FIB + "/", "--ssh", "false", "--exi", "false",
            "--notification-file", os.path.join(h.SOURCE_DIR, "notifications", "routes-100.xml")]).start()
        self.addCleanup(self.fleet.stop)

    def stress(self, *args):
        argv = [STRESS, "edit", "--ip", "127.0.0.1", "--port", str(self.fleet.port)] + list(args)
        out = subprocess.run(argv, capture_output=True, text=True, timeout=h.scaled(120))
        self.assertEqual(out.returncode, 0, "%s\n%s%s" % (" ".join(argv), out.stdout, out.stderr))
        return out.stdout

    def entries(self):
        """The l2-fib entries of running, read by ncclient: {phys-address: action}."""
        m = tcp_manager(self.fleet.addr(0))
        try:
            data = m.get_config(source="running",
                                filter=("subtree", '<bridge-domains xmlns="%s"/>' % L2FIB_NS)).data_xml
        finally:
            m.close_session()
        root = ET.fromstring(data)
        return {e.find("{%s}phys-address" % L2FIB_NS).text: e.find("{%s}action" % L2FIB_NS).text
                for e in root.iter("{%s}l2-fib" % L2FIB_NS)}

    def fill_and_empty(self, edits, *mode):
        out = self.stress("--edits", str(edits), "--exi", "false", "--ssh", "false", "--username", "admin",
                          "--password", "admin", *mode, "--edit-content", os.path.join(L2FIB, "edit.txt"))
        self.assertRegex(out, FINISHED)
        table = self.entries()
        self.assertEqual(len(table), edits, "one entry per {PHYS_ADDR}")
        self.assertEqual(set(table.values()), {"forward"})
        self.assertIn("aa:bb:cc:dd:00:00", table)
        self.stress("--edits", "1", "--ssh", "false", "--edit-content", os.path.join(L2FIB, "delete-all.txt"))
        self.assertEqual(self.entries(), {}, "the delete-all edit empties the table")

    def test_wiki_sync_command_fills_the_table_and_delete_all_empties_it(self):
        self.fill_and_empty(10000, "--thread-amount", "1", "--async", "false", "--edit-batch-size", "10000")

    def test_async_on_two_sessions_with_batches_fills_it_the_same(self):
        self.fill_and_empty(4000, "--thread-amount", "2", "--async", "true", "--edit-batch-size", "500")


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2, warnings=False)
