"""fleetsim-stress --help and README.md's option tables name the same options.

--help is generated from stress/options.c's option table; README.md's tables are written by hand.
This test reads every option name and alias in --help's option column and every `--name` in the
first column of the markdown tables of README.md's section "## Measuring a NETCONF server:
fleetsim-stress" (its subsections included, up to the next "## " heading), and fails naming what
each side lacks. It also keeps --help readable at 110 columns, and checks that every mode's --help
(`fleetsim-stress MODE --help`) is the same text.

Run: /usr/bin/python3 test_stress_options_doc.py <path to fleetsim> <path to fleetsim-stress>
"""

import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from options_doc import (HELP_WIDTH, difference_message, help_options, long_lines,  # noqa: E402
                         readme_options, readme_section)

STRESS = None  # path to fleetsim-stress, from the command line
README = os.path.join(h.SOURCE_DIR, "README.md")
SECTION = "## Measuring a NETCONF server: fleetsim-stress"
MODES = ("edit", "mount", "snmp", "notify", "push", "reconcile", "controller-mount", "record", "restconf", "ceiling", "report")


def stress(args):
    proc = subprocess.run([STRESS] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=h.scaled(10), check=False)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


class StressOptionsDocTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        code, cls.help, err = stress(["--help"])
        assert code == 0 and not err, (code, err)
        with open(README) as f:
            cls.section = readme_section(f.read(), SECTION)

    def test_readme_tables_list_exactly_the_options_of_help(self):
        in_help = help_options(self.help)
        in_readme, tables = readme_options(self.section)
        # The parsers found what they look for (an empty set on both sides would pass the comparison).
        self.assertGreaterEqual(tables, 3, "README's option tables not found in %r" % SECTION)
        for name in ("--ip", "--async-requests", "--async", "--concurrent-message-limit", "--timeout",
                     "--ncx-connect", "--auth", "--help", "-h", "--version"):
            self.assertIn(name, in_help, "--help's option column not parsed:\n" + self.help)
        self.assertTrue(in_help == in_readme, difference_message(in_help, in_readme, SECTION))

    def test_help_keeps_to_110_columns(self):
        self.assertEqual(long_lines(self.help), [], "--help lines past %d columns" % HELP_WIDTH)

    def test_help_is_grouped_by_mode(self):
        # Every subcommand has its section, in the order of the usage lines' modes.
        starts = [self.help.find("\n%s: " % mode) for mode in MODES]
        self.assertNotIn(-1, starts, self.help)
        self.assertEqual(starts, sorted(starts), self.help)
        # An option with a meaning per mode is listed under each: --timeout in ms, seconds, minutes.
        for mode, line in (("snmp", "--timeout MS"), ("controller-mount", "--timeout S"),
                           ("restconf", "--timeout MIN")):
            with self.subTest(mode=mode):
                start = self.help.index("\n%s: " % mode)
                end = self.help.find("\n\n", start + 1)
                self.assertIn("\n  %s " % line, self.help[start:end if end >= 0 else None])

    def test_every_mode_prints_the_same_help(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                self.assertEqual(stress([mode, "--help"]), (0, self.help, ""))
        code, out, err = stress([])
        self.assertEqual((code, out), (2, ""))
        self.assertTrue(err.startswith(self.help), err)


if __name__ == "__main__":
    STRESS = h.take_binaries_arguments()
    unittest.main(verbosity=2)
