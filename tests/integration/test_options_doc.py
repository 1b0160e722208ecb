"""fleetsim --help and README.md's option tables name the same options.

--help is generated from cli.c's option table; README.md's tables are written by hand. This test
reads every option name and alias in --help's option column (the text before the description on
each line that starts with "  -") and every `--name` in the first column of the markdown tables of
README.md's section "## Running a fleet" (up to the next "## " heading), and fails naming what each
side lacks. It also keeps --help readable at 110 columns.

Run: test_options_doc.py <path to fleetsim>
"""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from options_doc import (OPTION, HELP_WIDTH, difference_message, help_columns, help_options,  # noqa: E402
                         long_lines, readme_options, readme_section)

README = os.path.join(h.SOURCE_DIR, "README.md")
SECTION = "## Running a fleet"


class OptionsDocTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        code, cls.help = h.run_fleetsim(["--help"], timeout=h.scaled(10))
        assert code == 0, cls.help
        with open(README) as f:
            cls.section = readme_section(f.read(), SECTION)

    def test_readme_tables_list_exactly_the_options_of_help(self):
        in_help = help_options(self.help)
        in_readme, tables = readme_options(self.section)
        # The parsers found what they look for (an empty set on both sides would pass the comparison).
        self.assertGreaterEqual(tables, 2, "README's option tables not found in %r" % SECTION)
        for name in ("--device-count", "--devices-count", "--ip-per-device", "--exi", "--help", "-h"):
            self.assertIn(name, in_help, "--help's option column not parsed:\n" + self.help)
        self.assertTrue(in_help == in_readme, difference_message(in_help, in_readme, SECTION))

    def test_help_keeps_to_110_columns(self):
        self.assertEqual(long_lines(self.help), [], "--help lines past %d columns" % HELP_WIDTH)

    def test_every_option_of_help_is_accepted(self):
        # --version ends the parse at once when every option before it was accepted: each name (and
        # alias) of --help with a value it takes is parsed, none is "unknown".
        values = {"--ip": "127.0.0.1", "--auth": "password", "--log-level": "info",
                  "--inventory-format": "csv", "--controller-destination": "127.0.0.1:8181",
                  "--features": "m:", "--snmp-latency": "1ms", "--netconf-latency": "1ms",
                  "--snmp-fault": "0.1:timeout", "--snmp-v3-user": "ops:sha:authpass1:aes:privpass1",
                  "--trap-sink": "127.0.0.1:162", "--clock-fixed": "1000", "--snmp-drop-rate": "0.5",
                  "--notification-rate": "1", "--flap-rate": "1", "--max-message-size": "65536",
                  "--snmp-max-message-size": "1472", "--profile": "minimal",
                  "--call-home": "127.0.0.1:4334", "--host-key-type": "ecdsa", "--transport": "tls",
                  "--shard": "0/2", "--syslog-sink": "udp://127.0.0.1:514", "--syslog-format": "rfc3164",
                  "--syslog-framing": "lf", "--syslog-rate": "1", "--push-arrivals": "poisson", "--push-window": "3,60",
                  "--trap-v3-user": "traps:sha:authpass1:aes:privpass1"}
        for column in help_columns(self.help):
            names = OPTION.findall(column)
            if names[0] in ("--help", "--version"):
                continue
            takes = column.split()[-1] if " " in column.replace(", ", ",") else ""
            for name in names:
                with self.subTest(option=name):
                    args = [name]
                    if "[=" in column:
                        args = [name + "=true"]
                    elif takes in ("true|false",):
                        args.append("false")
                    elif takes:
                        args.append(values.get(names[0], "1"))
                    code, out = h.run_fleetsim(args + ["--version"], timeout=h.scaled(10))
                    self.assertEqual(code, 0, "%s: %s" % (args, out))
                    self.assertIn("fleetsim", out)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
