#!/usr/bin/env python3
"""Check that the include graph of the programs' modules has no cycle.

A module is a .c file and the .h file of the same name (either may be missing). Module A depends on module B
when a file of A includes B's header. Dependencies must run one way: the base headers (common/, wire/, the
model) at the bottom, the protocol folders above them, the fleet that wires them on top. A cycle is printed
as the chain of modules and includes that closes it, and the check fails.
"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


# The one cycle left, and why: a NETCONF session and what it carries call each other (the session hands
# each message to rpc, rpc and the notification stream answer through the session). The transports (TCP,
# SSH) sit below the session's ops table (transport.h, a leaf) and feed it bytes from outside the cycle.
# Any other cycle, or this one growing, fails the check.
KNOWN = {frozenset(["ops", "rpc", "session", "stream"])}


def module_of(name):
    """A private header X_internal.h belongs to module X."""
    return name[: -len("_internal")] if name.endswith("_internal") else name


def modules(roots):
    """{module name: [files]}, module name = file name without extension (names are unique in the tree)."""
    mods = {}
    for root in roots:
        for dirpath, _, files in os.walk(root):
            for f in files:
                if f.endswith((".c", ".h")):
                    mods.setdefault(module_of(f[:-2]), []).append(os.path.join(dirpath, f))
    return mods


def graph(mods):
    edges = {}
    for name, files in mods.items():
        deps = set()
        for path in files:
            with open(path, encoding="utf-8") as fh:
                for inc in INCLUDE.findall(fh.read()):
                    dep = module_of(os.path.basename(inc)[:-2])
                    if dep != name and dep in mods:
                        deps.add(dep)
        edges[name] = deps
    return edges


def find_cycles(edges):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


# Directions inside the tree that the include graph alone does not see (a call by name needs no include,
# a header may declare another file's function). Each entry: (name, layers from top to bottom, why). A file
# of a layer may not include a header of a layer above it; a .c file may not name a function or variable
# that a file above defines; a header may not declare one that a file below defines (the files there
# would have to include up to see it). A path ending in "/"
# is a folder.
LAYERS = [
    ("common/ below wire/", [["wire/"], ["common/"]],
     "an OID's type and text parser are common/'s (oid.h); only its BER encoding is wire/'s"),
    ("model/ below netconf/", [["testtool/netconf/"], ["testtool/model/"]],
     "an edit's error record is the model's (edit_err.h); netconf/ renders it as rpc-error"),
    ("snmp/: respond -> mib_set -> mib -> mib_values",
     [["testtool/snmp/respond.c", "testtool/snmp/respond.h"],
      ["testtool/snmp/mib_set.c", "testtool/snmp/mib_set.h"],
      ["testtool/snmp/mib.c"],
      ["testtool/snmp/mib_values.c", "testtool/snmp/mib.h"]],
     "values (the engine ID too) are computed below the request handling; mib.h declares mib_values.c's "
     "functions"),
    ("stress/conn.c reaches its transports through the ops table",
     [["stress/conn_detect.c"], ["stress/conn_ssh.c", "stress/conn_tls.c"], ["stress/conn.c"]],
     "the transports register in conn_internal.h's table (struct conn_transport); conn.c names none of "
     "them, and the detection hands over to SSH, TLS or TCP, never the other way"),
]

COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
# A definition at file scope as this tree writes it: the name at the start of a line, its type on the line
# above (functions), or "type name = ..." on one line (variables); "static" ones are private to the file.
FUNC_DEF = re.compile(r'^(?P<type>[^\n;{}#]*)\n(?P<name>[A-Za-z_]\w*)\s*\([^;]*?\)\s*\{', re.M)
VAR_DEF = re.compile(r'^(?P<type>(?:const\s+)?(?:struct\s+|enum\s+)?\w[\w\s\*]*?)\b(?P<name>[A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*=',
                     re.M)
NAME = re.compile(r'\b[A-Za-z_]\w*\b')


def code_of(path):
    """The file's text without comments and string literals (names in those call nothing)."""
    with open(path, encoding="utf-8") as fh:
        return COMMENT_OR_STRING.sub(" ", fh.read())


def exported(code):
    """Names of the functions and variables a .c file defines for other files (not static)."""
    names = set()
    for m in FUNC_DEF.finditer(code):
        if "static" not in m.group("type").split() and not m.group("name").startswith("__"):
            names.add(m.group("name"))
    for m in VAR_DEF.finditer(code):
        words = m.group("type").split()
        if words and words[0] not in ("static", "return", "typedef") and "static" not in words:
            names.add(m.group("name"))
    return names


def layer_files(top, patterns):
    """Files (paths relative to top) matched by a layer's patterns."""
    out = []
    for pat in patterns:
        full = os.path.join(top, pat)
        if pat.endswith("/"):
            for dirpath, _, files in os.walk(full):
                out += [os.path.relpath(os.path.join(dirpath, f), top) for f in files if f.endswith((".c", ".h"))]
        elif os.path.exists(full):
            out.append(pat)
    return sorted(out)


def check_layers(top):
    """Messages for every file that reaches a layer above its own, or header that declares one below."""
    problems = []
    for name, layers, why in LAYERS:
        found = len(problems)
        files = [layer_files(top, pats) for pats in layers]
        code = {f: code_of(os.path.join(top, f)) for fs in files for f in fs}
        defined = [{} for _ in layers]  # per layer: exported name -> the .c file defining it
        for i, fs in enumerate(files):
            for f in fs:
                if f.endswith(".c"):
                    for sym in exported(code[f]):
                        defined[i][sym] = f
        for i, fs in enumerate(files):
            above = {}
            for j in range(i):
                above.update(defined[j])
            above_headers = {os.path.basename(f) for j in range(i) for f in files[j] if f.endswith(".h")}
            below = {}
            for j in range(i + 1, len(layers)):
                below.update(defined[j])
            for f in fs:
                with open(os.path.join(top, f), encoding="utf-8") as fh:
                    includes = INCLUDE.findall(fh.read())
                for inc in includes:
                    if os.path.basename(inc) in above_headers:
                        problems.append("%s: %s includes %s, a layer above it" % (name, f, inc))
                used = set(NAME.findall(code[f]))
                if f.endswith(".c"):
                    for sym in sorted(used & set(above)):
                        problems.append("%s: %s names %s, defined above it in %s" % (name, f, sym, above[sym]))
                else:
                    for sym in sorted(used & set(below)):
                        problems.append("%s: %s declares %s, defined below it in %s" % (name, f, sym, below[sym]))
        if len(problems) > found:
            problems.append("  (%s: %s)" % (name, why))
    return problems


def main():
    args = sys.argv[1:]
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if args[:1] == ["--top"]:
        top, args = os.path.abspath(args[1]), args[2:]
    roots = [os.path.join(top, d) for d in (args or ["common", "wire", "testtool", "stress"])]
    edges = graph(modules(roots))
    cycles = [c for c in find_cycles(edges) if frozenset(c) not in KNOWN]
    for comp in cycles:
        members = set(comp)
        print("include cycle among %d modules: %s" % (len(comp), ", ".join(comp)))
        for m in comp:
            inner = sorted(edges[m] & members)
            print("  %s -> %s" % (m, ", ".join(inner)))
    layer_problems = check_layers(top)
    for p in layer_problems:
        print(p)
    if cycles or layer_problems:
        return 1
    print("no include cycle among %d modules but the NETCONF session's (%s); %d layerings hold (%s)" %
          (len(edges), ", ".join(sorted(next(iter(KNOWN)))), len(LAYERS), "; ".join(n for n, _, _ in LAYERS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
