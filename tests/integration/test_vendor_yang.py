"""--schemas-dir with a vendor-style folder (tests/integration/data/vendor_yang): a module with two
submodules, two revisions of one module, a deviation module, an import needed only for a leafref (so
it must be implemented), a later revision of a module fleetsim loads by default, and three modules
that do not load (a parse error, a compile error, and a fine module that imports the latter).

Checks, over ncclient: every module of the folder that loads is in the hello and in yang-library,
submodules are listed in yang-library and netconf-state/schemas, get-schema returns each file's
exact text; the skipped ones are named on stderr one line each; the summary line; --schemas-strict
exits 2; --features pins a module's features.

Run: /usr/bin/python3 test_vendor_yang.py <path to fleetsim>
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402
from test_ncclient import tcp_manager  # noqa: E402

from ncclient.operations import RPCError  # noqa: E402
from ncclient.xml_ import to_ele  # noqa: E402

warnings.simplefilter("default")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ncclient(\.|$)")

DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "vendor_yang")
YL_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-library"
NCM_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"

# file -> (name, revision) of what loads; the skipped files separately.
MODULES = {
    "vnd-system.yang": ("vnd-system", "2024-03-01"),
    "vnd-types@2024-06-01.yang": ("vnd-types", "2024-06-01"),
    "vnd-legacy.yang": ("vnd-legacy", "2023-05-05"),
    "vnd-system-deviations.yang": ("vnd-system-deviations", "2024-03-02"),
    "vnd-network-ref.yang": ("vnd-network-ref", "2024-01-01"),
    "fleetsim-route-events@2099-01-01.yang": ("fleetsim-route-events", "2099-01-01"),
}
IMPORT_ONLY = {"vnd-types@2023-01-10.yang": ("vnd-types", "2023-01-10")}
SUBMODULES = {
    "vnd-system-ntp.yang": ("vnd-system-ntp", "2024-03-01"),
    "vnd-system-dns.yang": ("vnd-system-dns", "2024-02-15"),
}
SKIPPED = ("vnd-typo.yang", "vnd-broken.yang", "vnd-uses-broken.yang")


def read(name):
    with open(os.path.join(DIR, name), encoding="utf-8") as f:
        return f.read()


def module_caps(m):
    """{module name: {revision, features, deviations}} of the hello's module capabilities."""
    out = {}
    for cap in m.server_capabilities:
        if "?module=" not in cap:
            continue
        query = dict(kv.split("=", 1) for kv in cap.split("?", 1)[1].split("&"))
        out.setdefault(query["module"], []).append(query)
    return out


class VendorFolderTests(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.fleet = h.Fleet(devices=2, extra=["--schemas-dir", DIR]).start()
        cls.log = cls.fleet.log()

    @classmethod
    def tearDownClass(cls):
        cls.fleet.stop()

    def setUp(self):
        self.m = tcp_manager(self.fleet.addr(1))

    def tearDown(self):
        if self.m.connected:
            self.m.close_session()

    def test_hello_lists_every_module(self):
        caps = module_caps(self.m)
        for name, rev in list(MODULES.values()) + list(IMPORT_ONLY.values()):
            self.assertIn(rev, [c.get("revision") for c in caps.get(name, [])], "%s@%s" % (name, rev))
        for name in ("vnd-typo", "vnd-broken", "vnd-uses-broken"):
            self.assertNotIn(name, caps)
        # the folder's revision wins over the one fleetsim loads by default
        self.assertEqual([c.get("revision") for c in caps["fleetsim-route-events"]], ["2099-01-01"])
        # the deviation module is applied, every feature is on by default
        system = caps["vnd-system"][0]
        self.assertEqual(system.get("deviations"), "vnd-system-deviations")
        self.assertEqual(system.get("features"), "dns-over-tls")
        # the import needed for a leafref is there (implemented, see the yang-library test)
        self.assertIn("ietf-network", caps)

    def yang_library(self):
        reply = self.m.get(filter=("subtree", '<yang-library xmlns="%s"/>' % YL_NS))
        return to_ele(reply.xml)

    def test_yang_library_lists_modules_and_submodules(self):
        root = self.yang_library()
        q = "{%s}" % YL_NS
        implemented = {}
        import_only = {}
        for ms in root.iter(q + "module-set"):
            for mod in ms.findall(q + "module"):
                subs = {s.findtext(q + "name"): s.findtext(q + "revision") for s in mod.findall(q + "submodule")}
                implemented[mod.findtext(q + "name")] = (mod.findtext(q + "revision"), subs)
            for mod in ms.findall(q + "import-only-module"):
                import_only.setdefault(mod.findtext(q + "name"), []).append(mod.findtext(q + "revision"))
        for name, rev in MODULES.values():
            self.assertIn(name, implemented)
            self.assertEqual(implemented[name][0], rev, name)
        self.assertEqual(implemented["vnd-system"][1], dict(SUBMODULES.values()))
        self.assertIn("2023-01-10", import_only.get("vnd-types", []))
        self.assertIn("ietf-network", implemented, "imported only for a leafref: must be implemented")
        for name in ("vnd-typo", "vnd-broken", "vnd-uses-broken"):
            self.assertNotIn(name, implemented)
            self.assertNotIn(name, import_only)

    def test_netconf_state_schemas_list_submodules(self):
        reply = self.m.get(filter=("subtree", '<netconf-state xmlns="%s"><schemas/></netconf-state>' % NCM_NS))
        root = to_ele(reply.xml)
        q = "{%s}" % NCM_NS
        listed = {(s.findtext(q + "identifier"), s.findtext(q + "version"), s.findtext(q + "format").split(":")[-1])
                  for s in root.iter(q + "schema")}
        for name, rev in list(MODULES.values()) + list(SUBMODULES.values()) + list(IMPORT_ONLY.values()):
            self.assertIn((name, rev, "yang"), listed)

    def test_get_schema_returns_the_files_text(self):
        for fname, (name, rev) in list(MODULES.items()) + list(SUBMODULES.items()) + list(IMPORT_ONLY.items()):
            for version in (rev, None):
                if version is None and fname in IMPORT_ONLY:
                    continue  # without a version, the newest revision answers
                text = self.m.get_schema(name, version=version).data
                self.assertEqual(text, read(fname), "get-schema %s %s" % (name, version))

    def test_every_module_of_yang_library_has_a_schema(self):
        # yang-library lists every module of the context, libyang's own "yang" too: a client that fetches
        # all of them (yangcli does) must get each.
        root = self.yang_library()
        q = "{%s}" % YL_NS
        for ms in root.iter(q + "module-set"):
            for mod in list(ms.findall(q + "module")) + list(ms.findall(q + "import-only-module")):
                name, rev = mod.findtext(q + "name"), mod.findtext(q + "revision")
                text = self.m.get_schema(name, version=rev).data
                self.assertRegex(text, r"^\s*(module|submodule)\s+%s\b" % re.escape(name), "%s@%s" % (name, rev))

    def test_get_schema_of_a_skipped_module_fails(self):
        with self.assertRaises(RPCError):
            self.m.get_schema("vnd-broken")

    def test_stderr_names_each_skipped_module_once_and_prints_the_summary(self):
        for fname in SKIPPED:
            lines = [ln for ln in self.log.splitlines() if "skipped" in ln and fname in ln]
            self.assertEqual(len(lines), 1, "%s: %r" % (fname, lines))
        self.assertRegex(self.log, r"vnd-typo\.yang: line 9: ")
        self.assertRegex(self.log, r"vnd-uses-broken\.yang: it imports \"vnd-broken\"")
        self.assertRegex(self.log, r"schemas: 7 modules and 2 submodules from %s, 3 skipped, in [0-9.]+ s"
                         % re.escape(DIR))


class OptionTests(unittest.TestCase):

    def test_strict_exits_2_naming_the_module(self):
        code, out = h.run_fleetsim(["--device-count", "1", "--ssh", "false", "--schemas-dir", DIR,
                                    "--schemas-strict"])
        self.assertEqual(code, 2, out)
        self.assertIn("vnd-typo.yang", out)
        self.assertIn("--schemas-strict", out)

    def test_features_pin(self):
        with h.Fleet(devices=1, extra=["--schemas-dir", DIR, "--features", "vnd-system:"]) as fleet:
            m = tcp_manager(fleet.addr(0))
            try:
                system = module_caps(m)["vnd-system"][0]
                self.assertNotIn("features", system)
            finally:
                m.close_session()

    def test_features_bad_value(self):
        code, out = h.run_fleetsim(["--features", "no-colon"])
        self.assertEqual(code, 2, out)
        self.assertIn("--features", out)

    def test_profile_crs_x_on_top_of_the_folder(self):
        with h.Fleet(devices=1, extra=["--schemas-dir", DIR, "--profile", "crs-x"]) as fleet:
            m = tcp_manager(fleet.addr(0))
            try:
                self.assertIn("vnd-system", module_caps(m))
                self.assertTrue(m.get_config("running").ok)
            finally:
                m.close_session()


class YangcliTests(unittest.TestCase):
    """yuma123's yangcli, an independent client: over SSH it reads the hello and yang-library, fetches every
    module it lacks with get-schema (its autoload), then edits and reads the vendor module's data."""

    def test_yangcli_loads_the_folder_and_edits_a_vendor_module(self):
        yangcli = shutil.which("yangcli")
        if not yangcli:
            self.skipTest("yangcli is not installed (scripts/setup.sh installs it)")
        tmp = tempfile.mkdtemp(prefix="fleetsim-yangcli-")
        fleet = h.Fleet(devices=1, extra=["--ssh", "true", "--state-dir", os.path.join(tmp, "state"),
                                          "--schemas-dir", DIR]).start()
        try:
            script = os.path.join(tmp, "edit.script")
            with open(script, "w") as f:
                f.write("merge /vnd-system:system/hostname value=set-by-yangcli\n"
                        "commit\n"
                        "sget-config /vnd-system:system source=running\n")
            host, port = fleet.addr(0)
            env = dict(os.environ, HOME=tmp)  # yangcli keeps its fetched modules under ~/.yuma
            p = subprocess.run([yangcli, "--server=%s" % host, "--ncport=%d" % port, "--user=admin",
                                "--password=admin", "--batch-mode", "--run-script=%s" % script],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=env, timeout=h.scaled(60))
            out = p.stdout.decode(errors="replace")
            self.assertIn("NETCONF session established", out, out)
            caps = out.split("Server Module Capabilities", 1)[1].split("Server Enterprise Capabilities", 1)[0]
            for name, rev in MODULES.values():
                self.assertIn("%s@%s" % (name, rev), caps, out)
            # every get-schema it sent was answered (yangcli saves a deviation module it meets twice, once
            # as a module and once in the deviations of vnd-system, and says so: that is not a failed fetch)
            self.assertNotRegex(out, r"<get-schema> for module .* failed", out)
            self.assertEqual(out.count("RPC OK Reply"), 2, out)  # the merge and the commit
            self.assertRegex(out, r"system \{\s+hostname set-by-yangcli\s+\}", out)
        finally:
            fleet.stop()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2, warnings=False)
