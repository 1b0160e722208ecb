"""fleetsim --help and README.md's option tables name the same options.

--help is generated from cli.c's option table; README.md's tables are written by hand. This test
reads every option name and alias in --help's option column (the text before the description on
each line that starts with "  -") and every `--name` in the first column of the markdown tables of
README.md's section "## Running a fleet" (up to the next "## " heading), and fails naming what each
side lacks. It also keeps --help readable at 110 columns.

Run: test_options_doc.py <path to fleetsim>
"""

import os
import re
import unittest

import fleetsim_harness as h

README = os.path.join(h.SOURCE_DIR, "README.md")
SECTION = "## Running a fleet"
HELP_WIDTH = 110

# An option name at the start of a word: "--ip", "-h"; not the "-T" of "T[-T]".
OPTION = re.compile(r"(?:^|(?<=[\s,/]))(--?[A-Za-z][\w-]*)")


def help_options(text):
    """The option names of --help: each line "  --name, --alias VALUE  description"."""
    names = set()
    for line in text.splitlines():
        if line.startswith("  -"):
            column = re.split(r" {2,}", line.strip(), maxsplit=1)[0]
            names |= set(OPTION.findall(column))
    return names


def readme_section(text):
    start = text.index("\n%s\n" % SECTION)
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def readme_options(section):
    """(names, tables): the options named in the first column of the section's markdown tables."""
    names, tables, in_table = set(), 0, False
    for line in section.splitlines():
        if not line.startswith("|"):
            in_table = False
            continue
        if not in_table:
            tables, in_table = tables + 1, True
        first = re.split(r"(?<!\\)\|", line)[1]
        for code in re.findall(r"`([^`]*)`", first):
            names |= set(OPTION.findall(code))
    return names, tables


class OptionsDocTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        code, cls.help = h.run_fleetsim(["--help"], timeout=h.scaled(10))
        assert code == 0, cls.help
        with open(README) as f:
            cls.section = readme_section(f.read())

    def test_readme_tables_list_exactly_the_options_of_help(self):
        in_help = help_options(self.help)
        in_readme, tables = readme_options(self.section)
        # The parsers found what they look for (an empty set on both sides would pass the comparison).
        self.assertGreaterEqual(tables, 2, "README's option tables not found in %r" % SECTION)
        for name in ("--device-count", "--devices-count", "--ip-per-device", "--exi", "--help", "-h"):
            self.assertIn(name, in_help, "--help's option column not parsed:\n" + self.help)
        self.assertTrue(
            in_help == in_readme,
            "options in --help but not in README.md's %r tables: %s\n"
            "options in README.md's tables but not in --help: %s" %
            (SECTION, " ".join(sorted(in_help - in_readme)) or "none",
             " ".join(sorted(in_readme - in_help)) or "none"))

    def test_help_keeps_to_110_columns(self):
        long_lines = [line for line in self.help.splitlines() if len(line) > HELP_WIDTH]
        self.assertEqual(long_lines, [], "--help lines past %d columns" % HELP_WIDTH)

    def test_every_option_of_help_is_accepted(self):
        # --version ends the parse at once when every option before it was accepted: each name (and
        # alias) of --help with a value it takes is parsed, none is "unknown".
        values = {"--ip": "127.0.0.1", "--auth": "password", "--log-level": "info",
                  "--inventory-format": "csv", "--controller-destination": "127.0.0.1:8181",
                  "--features": "m:", "--snmp-latency": "1ms", "--netconf-latency": "1ms",
                  "--snmp-fault": "0.1:timeout", "--snmp-v3-user": "ops:sha:authpass1:aes:privpass1",
                  "--trap-sink": "127.0.0.1:162", "--clock-fixed": "1000", "--snmp-drop-rate": "0.5",
                  "--notification-rate": "1", "--flap-rate": "1", "--max-message-size": "65536",
                  "--snmp-max-message-size": "1472", "--profile": "minimal"}
        for line in self.help.splitlines():
            if not line.startswith("  -"):
                continue
            column = re.split(r" {2,}", line.strip(), maxsplit=1)[0]
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
