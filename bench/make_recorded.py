#!/usr/bin/python3
"""Write a recorded device type folder (docs/RECORDED_TYPES.md) from a running fleetsim device.

A stand-in for `fleetsim-stress record` for test data and benchmarks: it starts one fleetsim device
with the given options (plain TCP, loopback), and saves what a recorder saves: hello.xml as received,
yang/ from get-schema of every netconf-state schema, yang-library.xml, schemas.xml, running.xml,
state.xml (a get) and manifest.json. Options shape the recording the way a real device differs from
fleetsim, so that a test can tell the recording is what is served:

  --state-extra FILE    XML elements added inside state.xml's <data> (state fleetsim has no source for)
  --hello-extra CAP     a capability added to the hello after the base ones (repeatable)
  --reverse-modules     the module capabilities in reverse order
  --module-set-id ID    yang-library content-id and module-set-id (in the data and the hello) set to ID

The test data tests/integration/data/recorded_device was made with
  S=tests/integration/data/recorded_device_src; mkdir /tmp/acme; \\
  cp tests/integration/data/recorded_device/yang/acme-* /tmp/acme
  bench/make_recorded.py build/fleetsim tests/integration/data/recorded_device \\
      --state-extra $S/state-extra.xml \\
      --hello-extra 'urn:ietf:params:netconf:capability:url:1.0?scheme=file' \\
      --hello-extra http://example.com/ns/vendor-actions/1.0 \\
      --reverse-modules --module-set-id acme-recorded-7 -- \\
      --schemas-dir /tmp/acme --initial-config-xml-file $S/initial-config.xml
(the acme modules are those of its yang/ folder).

Run: /usr/bin/python3 bench/make_recorded.py FLEETSIM OUT [options] -- [fleetsim options]
"""

import argparse
import json
import os
import re
import shutil
import sys
import time
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests", "integration"))
import fleetsim_harness as h  # noqa: E402

YL_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-library"
NCM_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"


def data_of(reply):
    """The reply's <data> element as text, in the base namespace (docs/RECORDED_TYPES.md)."""
    if re.search(r"<data\s*/>", reply):
        return '<data xmlns="%s"/>\n' % h.NC_NS
    start = reply.index("<data>") + len("<data>")
    end = reply.rindex("</data>")
    return '<data xmlns="%s">%s</data>\n' % (h.NC_NS, reply[start:end])


def get(client, filt=""):
    reply = client.rpc("<get>%s</get>" % filt)
    h.assert_data(reply, "get")
    return reply


def record(client, out, args):
    counts = {}
    hello = client.server_hello
    caps = client.server_caps()
    if args.reverse_modules:
        mods = [c for c in caps if "?module=" in c]
        others = [c for c in caps if "?module=" not in c]
        caps = others + mods[::-1]
    for extra in reversed(args.hello_extra):
        caps.insert(2, extra)
    yl = data_of(get(client, '<filter type="subtree"><yang-library xmlns="%s"/><modules-state xmlns="%s"/>'
                             "</filter>" % (YL_NS, YL_NS)))
    if args.module_set_id:
        yl = re.sub(r"<content-id>[^<]*</content-id>", "<content-id>%s</content-id>" % args.module_set_id, yl)
        yl = re.sub(r"<module-set-id>[^<]*</module-set-id>",
                    "<module-set-id>%s</module-set-id>" % args.module_set_id, yl)
        caps = [re.sub(r"(module-set-id|content-id)=[^&]*", r"\1=" + args.module_set_id, c) for c in caps]
    if caps != client.server_caps():
        sid = re.search(r"<session-id>[^<]*</session-id>", hello)
        hello = ('<?xml version="1.0" encoding="UTF-8"?><hello xmlns="%s"><capabilities>%s</capabilities>%s'
                 "</hello>" % (h.NC_NS, "".join("<capability>%s</capability>" % c.replace("&", "&amp;")
                                                for c in caps), sid.group(0) if sid else ""))
    counts["capabilities"] = len(caps)
    with open(os.path.join(out, "hello.xml"), "w", encoding="utf-8") as f:
        f.write(hello + "\n")
    with open(os.path.join(out, "yang-library.xml"), "w", encoding="utf-8") as f:
        f.write(yl)
    schemas = data_of(get(client, '<filter type="subtree"><netconf-state xmlns="%s"><schemas/></netconf-state>'
                                  "</filter>" % NCM_NS))
    with open(os.path.join(out, "schemas.xml"), "w", encoding="utf-8") as f:
        f.write(schemas)
    os.makedirs(os.path.join(out, "yang"))
    fetched = 0
    for s in ET.fromstring(schemas).iter("{%s}schema" % NCM_NS):
        if s.find("{%s}format" % NCM_NS).text.split(":")[-1] != "yang":
            continue
        ident = s.find("{%s}identifier" % NCM_NS).text
        version = s.find("{%s}version" % NCM_NS).text or ""
        reply = client.rpc('<get-schema xmlns="%s"><identifier>%s</identifier><version>%s</version>'
                           "<format>yang</format></get-schema>" % (NCM_NS, ident, version))
        text = ET.fromstring(reply).find("{%s}data" % NCM_NS).text or ""
        name = "%s@%s.yang" % (ident, version) if version else "%s.yang" % ident
        with open(os.path.join(out, "yang", name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        fetched += 1
    counts["schemas_fetched"] = fetched
    reply = client.get_config()
    h.assert_data(reply, "get-config")
    running = data_of(reply)
    with open(os.path.join(out, "running.xml"), "w", encoding="utf-8") as f:
        f.write(running)
    counts["running_bytes"] = len(running)
    state = data_of(get(client))
    if args.state_extra:
        with open(args.state_extra, encoding="utf-8") as f:
            extra = f.read().strip()
        state = state.replace("</data>\n", extra + "</data>\n") if "</data>" in state else state
    with open(os.path.join(out, "state.xml"), "w", encoding="utf-8") as f:
        f.write(state)
    counts["state_bytes"] = len(state)
    return counts


def main():
    argv = sys.argv[1:]
    rest = []
    if "--" in argv:
        rest = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fleetsim")
    ap.add_argument("out")
    ap.add_argument("--state-extra")
    ap.add_argument("--hello-extra", action="append", default=[])
    ap.add_argument("--reverse-modules", action="store_true")
    ap.add_argument("--module-set-id")
    args = ap.parse_args(argv)
    h.BINARY = args.fleetsim
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    started = time.monotonic()
    fleet = h.Fleet(devices=1, threads=1, extra=["--snmp", "false"] + rest).start(ready_timeout=120)
    try:
        with h.RawClient(fleet.addr(0), timeout=60) as client:
            client.hello()
            counts = record(client, args.out, args)
    finally:
        fleet.stop()
    manifest = {
        "tool": "bench/make_recorded.py", "version": "0.1", "format": 1,
        "source": {"host": "127.0.0.1", "port": fleet.port, "transport": "tcp", "username": ""},
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "duration_s": round(time.monotonic() - started, 2),
        "counts": dict(counts, snmp_oids=0), "nmda": False, "problems": [], "complete": True,
    }
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    print("%s: %d capabilities, %d schemas" % (args.out, counts["capabilities"], counts["schemas_fetched"]))


if __name__ == "__main__":
    main()
