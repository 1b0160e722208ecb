"""The container image of deploy/container: its binaries, data files and entrypoint work in a container.

Skipped, with the reason, when podman is missing, the image is not built (deploy/container/build.sh;
FLEETSIM_IMAGE names another) or this machine cannot run containers. Every container uses the host's
network and listens on loopback only.

Run: test_deploy_image.py
"""

import os
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

IMAGE = os.environ.get("FLEETSIM_IMAGE", "localhost/fleetsim:latest")
FLEET = os.path.join(h.SOURCE_DIR, "deploy", "kubernetes", "fleet.json")
# Where the default runtime may not start containers (no CAP_SYS_RESOURCE for its rlimits, cgroups v1
# beside a v2 controller), runc with limits at most the caller's may.
RUN_OPTIONS = ([], ["--runtime", "runc", "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"])


def podman(args, timeout=60):
    return subprocess.run(["podman"] + args, capture_output=True, text=True, timeout=h.scaled(timeout))


def find_run_options():
    """(podman run options that start a container here, or None, why not)."""
    why = ""
    for opts in RUN_OPTIONS:
        out = podman(["run", "--rm", "--network", "none"] + opts + [IMAGE, "--version"])
        if out.returncode == 0:
            return opts, ""
        why = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "exit %d" % out.returncode
    return None, why


class DeployImageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("podman"):
            raise unittest.SkipTest("podman is not installed")
        if podman(["image", "exists", IMAGE]).returncode:
            raise unittest.SkipTest("image %s is not built (deploy/container/build.sh)" % IMAGE)
        cls.opts, why = find_run_options()
        if cls.opts is None:
            raise unittest.SkipTest("podman cannot run containers here: " + why)
        out = podman(["run", "--rm", "--network", "none"] + cls.opts + [IMAGE, "--help"])
        cls.has_shard = "--shard" in out.stdout

    def run_image(self, args, env=(), entrypoint=None, extra=(), timeout=60):
        cmd = ["run", "--rm", "--network", "host"] + self.opts + list(extra)
        for e in env:
            cmd += ["-e", e]
        if entrypoint:
            cmd += ["--entrypoint", entrypoint]
        return podman(cmd + [IMAGE] + list(args), timeout=timeout)

    def test_runs_as_its_own_user_with_a_health_check(self):
        out = podman(["image", "inspect", "--format", "{{.Config.User}} {{.Config.Healthcheck}}", IMAGE])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("10001:10001 "), out.stdout)
        self.assertIn("/api/v1/fleet", out.stdout)

    def test_help_is_fleetsims(self):
        out = self.run_image(["--help"])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("--device-count", out.stdout)

    def test_the_installed_schemas_load(self):
        # The fleet file (fleetsim-fleet.yang) and the crs-x profile are read from the installed schemas/.
        out = self.run_image(["-c", "fleetsim --fleet /etc/fleetsim/fleet.json --shard-own-ports --shard 9/10 "
                              "--emit-inventory /tmp/f.csv --inventory-format csv && tail -n 1 /tmp/f.csv"],
                             entrypoint="sh", extra=["-v", FLEET + ":/etc/fleetsim/fleet.json:ro"])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertRegex(out.stdout, r"^199999,device-199999,.*,61999,.*,access,minimal$")

    def test_ten_devices_answer_on_loopback(self):
        port, http = h.free_port(), h.free_port()
        name = "fleetsim-test-%d" % os.getpid()
        args = ["--device-count", "10", "--ip", "127.0.0.1", "--starting-port", str(port), "--ssh", "false",
                "--snmp", "false", "--metrics", "127.0.0.1:%d" % http, "--status-interval", "0"]
        cmd = ["run", "-d", "--rm", "--name", name, "--network", "host", "-e", "FLEETSIM_SHARDS=1",
               "-e", "FLEETSIM_METRICS=127.0.0.1:%d" % http] + self.opts
        if not self.has_shard:  # the binary itself, as the entrypoint would start it with --shard 0/1
            cmd += ["--entrypoint", "fleetsim"]
        cmd += [IMAGE] + args
        out = podman(cmd)
        self.assertEqual(out.returncode, 0, out.stderr)
        try:
            base = "http://127.0.0.1:%d" % http

            def fleet():
                try:
                    return h.api_request(base, "/api/v1/fleet")
                except OSError:
                    return None
            status, body = h.wait_for(fleet, 20, "the fleet's control API")
            self.assertEqual(status, 200)
            self.assertEqual(body["devices"], 10)
            for i in (0, 9):
                with h.RawClient(("127.0.0.1", port + i)) as c:
                    self.assertIn("urn:ietf:params:netconf:base:1.1", c.hello().server_caps())
            # the image's HEALTHCHECK, run once by hand (podman schedules it through systemd)
            health = podman(["healthcheck", "run", name])
            self.assertEqual(health.returncode, 0, health.stdout + health.stderr)
        finally:
            podman(["rm", "-f", "-t", "2", name])

    def test_the_entrypoint_shards_or_refuses(self):
        if not self.has_shard:
            out = self.run_image(["--device-count", "10"], env=["FLEETSIM_SHARDS=2"])
            self.assertEqual(out.returncode, 2)
            self.assertIn("has no --shard option", out.stderr)
            self.skipTest("the image's fleetsim has no --shard: sharded start not checked")
        out = self.run_image(["--device-count", "10", "--emit-inventory", "/tmp/i.csv"],
                             env=["FLEETSIM_SHARDS=2"], extra=["--hostname", "fleetsim-1"])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("shard 1 of 2", out.stderr)
        out = self.run_image(["--device-count", "10"], env=["FLEETSIM_SHARDS=2", "FLEETSIM_SHARD_INDEX=2"])
        self.assertEqual(out.returncode, 2)
        self.assertIn("is not below FLEETSIM_SHARDS=2", out.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
