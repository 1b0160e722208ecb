"""Print one counter of rsyslog's impstats log: the latest record named NAME, its field FIELD.

Usage: impstats_probe.py FILE NAME FIELD

A `cmd:` probe of `fleetsim-stress ceiling` (tests/integration/test_ceiling.py, bench/ceiling_bench.py):
FILE is impstats' log.file written with format="json" and resetCounters="off", so each record holds
running totals and the latest one is the answer. Only the file's tail is read, because the probe runs
every sample for the whole run and the log grows by a few records a second. Exit 1, with the reason
on stderr and nothing on stdout, when the file or the record is not there (yet): a probe that fails
must never read as 0.
"""

import json
import os
import sys

TAIL_BYTES = 65536  # several impstats intervals of a small configuration: the latest record is in it


def latest(path, name, field):
    """The value of @field in the last record of @path named @name, or None."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - TAIL_BYTES))
        tail = f.read().decode(errors="replace")
    for line in reversed(tail.splitlines()):
        start = line.find("{")
        # impstats escapes '/' in names ("imudp(127.0.0.1\\/514\\/IPv4)"): a cheap filter before parsing
        if start < 0 or name.replace("/", "\\/") not in line and name not in line:
            continue
        try:
            rec = json.loads(line[start:])
        except ValueError:
            continue  # the first line of the tail may be cut, or a record is being written
        if rec.get("name") == name and field in rec:
            return rec[field]
    return None


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: impstats_probe.py FILE NAME FIELD\n")
        return 2
    try:
        value = latest(argv[1], argv[2], argv[3])
    except OSError as e:
        sys.stderr.write("impstats_probe: %s: %s\n" % (argv[1], e.strerror))
        return 1
    if value is None:
        sys.stderr.write("impstats_probe: no record %r with field %r in %s\n" % (argv[2], argv[3], argv[1]))
        return 1
    sys.stdout.write("%s\n" % value)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
