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


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = [os.path.join(top, d) for d in (sys.argv[1:] or ["common", "wire", "testtool", "stress"])]
    edges = graph(modules(roots))
    cycles = [c for c in find_cycles(edges) if frozenset(c) not in KNOWN]
    for comp in cycles:
        members = set(comp)
        print("include cycle among %d modules: %s" % (len(comp), ", ".join(comp)))
        for m in comp:
            inner = sorted(edges[m] & members)
            print("  %s -> %s" % (m, ", ".join(inner)))
    if cycles:
        return 1
    print("no include cycle among %d modules but the NETCONF session's (%s)" %
          (len(edges), ", ".join(sorted(next(iter(KNOWN))))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
