"""Reading option names from a program's --help and from README.md's markdown option tables.

Shared by test_options_doc.py (fleetsim) and test_stress_options_doc.py (fleetsim-stress): both
programs generate --help from one option table, README.md's tables are written by hand, and the
tests fail naming what each side lacks.
"""

import re

HELP_WIDTH = 110

# An option name at the start of a word: "--ip", "-h"; not the "-T" of "T[-T]".
OPTION = re.compile(r"(?:^|(?<=[\s,/]))(--?[A-Za-z][\w-]*)")


def help_columns(text):
    """The option column of each option line of --help: "  --name, --alias VALUE  description"."""
    return [re.split(r" {2,}", line.strip(), maxsplit=1)[0]
            for line in text.splitlines() if line.startswith("  -")]


def help_options(text):
    """The option names and aliases of --help's option column."""
    names = set()
    for column in help_columns(text):
        names |= set(OPTION.findall(column))
    return names


def readme_section(text, heading):
    """README's section from the line `heading` ("## ...") up to the next "## " heading."""
    start = text.index("\n%s\n" % heading)
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


def difference_message(in_help, in_readme, section):
    """What each side lacks, for a failed comparison."""
    return ("options in --help but not in README.md's %r tables: %s\n"
            "options in README.md's tables but not in --help: %s" %
            (section, " ".join(sorted(in_help - in_readme)) or "none",
             " ".join(sorted(in_readme - in_help)) or "none"))


def long_lines(text, width=HELP_WIDTH):
    """The lines of text past width columns."""
    return [line for line in text.splitlines() if len(line) > width]
