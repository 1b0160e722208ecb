"""deploy/kubernetes renders into objects Kubernetes accepts, and they fit together.

`kubectl kustomize deploy/kubernetes` renders the kustomization; every object of a built-in kind is
read into python3-kubernetes's typed model of that kind and written back, and any key of the rendered
object that did not survive (the models drop what they do not know: a misspelt field would be silently
ignored by them, and rejected or ignored by a real API server) fails with its path. The PodMonitor, a
prometheus-operator CRD the models lack, is checked against the CRD's field names. Then the objects are
checked against each other (selectors, names, ConfigMap keys, the shard count and --shard) and the
fleet file against fleetsim itself. Cases feeding misspelt or inconsistent copies prove each check can
fail.

Run: test_deploy_manifests.py <path to fleetsim>
"""

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleetsim_harness as h  # noqa: E402

import kubernetes.client  # noqa: E402
import yaml  # noqa: E402

KUSTOMIZATION = os.path.join(h.SOURCE_DIR, "deploy", "kubernetes")
KUBECTL = os.environ.get("KUBECTL") or shutil.which("kubectl") or "/usr/bin/kubectl"
MODELS = {("apps/v1", "StatefulSet"): "V1StatefulSet", ("v1", "Service"): "V1Service",
          ("v1", "ConfigMap"): "V1ConfigMap", ("batch/v1", "Job"): "V1Job"}

# monitoring.coreos.com/v1 PodMonitor, from prometheus-operator's CRD: the fields of spec and of a
# podMetricsEndpoints item (the nested objects they name are not checked further).
PODMONITOR_SPEC = {"jobLabel", "podTargetLabels", "podMetricsEndpoints", "selector", "namespaceSelector",
                   "sampleLimit", "targetLimit", "labelLimit", "labelNameLengthLimit",
                   "labelValueLengthLimit", "keepDroppedTargets", "attachMetadata", "scrapeProtocols",
                   "scrapeClass"}
PODMONITOR_ENDPOINT = {"port", "portNumber", "targetPort", "path", "scheme", "params", "interval",
                       "scrapeTimeout", "tlsConfig", "bearerTokenSecret", "honorLabels", "honorTimestamps",
                       "trackTimestampsStaleness", "basicAuth", "oauth2", "authorization",
                       "metricRelabelings", "relabelings", "proxyUrl", "noProxy", "proxyFromEnvironment",
                       "proxyConnectHeader", "followRedirects", "enableHttp2", "filterRunning"}
PODMONITOR_NAMESPACE_SELECTOR = {"any", "matchNames"}
# The CRD's Duration pattern.
DURATION = re.compile(r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?"
                      r"(([0-9]+)ms)?)$")
# Options the pods take that the registration job must not: the rest of the arguments are the fleet's
# and must be the same on both.
POD_ONLY = {"--shard", "--threads", "--status-interval", "--report", "--metrics"}


class ManifestError(Exception):
    pass


def render(directory):
    out = subprocess.run([KUBECTL, "kustomize", directory], capture_output=True, text=True,
                         timeout=h.scaled(20))
    if out.returncode:
        raise ManifestError("kubectl kustomize %s: %s" % (directory, out.stderr.strip()))
    return [o for o in yaml.safe_load_all(out.stdout) if o]


def dropped(given, kept, path):
    """Paths of `given` that `kept` (the model's serialization) lacks or holds another value at."""
    if isinstance(given, dict):
        if not isinstance(kept, dict):
            return [path]
        out = []
        for key, value in given.items():
            if key not in kept:
                out.append("%s.%s" % (path, key))
            else:
                out.extend(dropped(value, kept[key], "%s.%s" % (path, key)))
        return out
    if isinstance(given, list):
        if not isinstance(kept, list) or len(kept) != len(given):
            return [path]
        return [p for i, (g, k) in enumerate(zip(given, kept)) for p in dropped(g, k, "%s[%d]" % (path, i))]
    return [] if given == kept else ["%s (%r became %r)" % (path, given, kept)]


def check_typed(obj, model):
    """Read obj into the typed model and back; fail on any key the model did not keep."""
    api = kubernetes.client.ApiClient()
    name = "%s %s" % (obj.get("kind"), obj.get("metadata", {}).get("name"))
    try:
        typed = api._ApiClient__deserialize(copy.deepcopy(obj), model)
    except (ValueError, TypeError) as e:  # a required field missing, a value of the wrong type
        raise ManifestError("%s: %s" % (name, e))
    lost = dropped(obj, api.sanitize_for_serialization(typed), name)
    if lost:
        raise ManifestError("%s: not fields of %s: %s" % (name, model, ", ".join(lost)))


def check_keys(mapping, allowed, where):
    unknown = sorted(set(mapping) - allowed)
    if unknown:
        raise ManifestError("%s: not fields of the PodMonitor CRD: %s" % (where, ", ".join(unknown)))


def check_podmonitor(obj):
    check_keys(obj, {"apiVersion", "kind", "metadata", "spec"}, "PodMonitor")
    check_typed(dict(obj["metadata"]), "V1ObjectMeta")
    spec = obj.get("spec") or {}
    check_keys(spec, PODMONITOR_SPEC, "PodMonitor.spec")
    if "selector" not in spec:
        raise ManifestError("PodMonitor.spec: selector is required")
    check_typed(spec["selector"], "V1LabelSelector")
    check_keys(spec.get("namespaceSelector", {}), PODMONITOR_NAMESPACE_SELECTOR, "PodMonitor.spec.namespaceSelector")
    endpoints = spec.get("podMetricsEndpoints")
    if not endpoints:
        raise ManifestError("PodMonitor.spec: no podMetricsEndpoints")
    for i, ep in enumerate(endpoints):
        where = "PodMonitor.spec.podMetricsEndpoints[%d]" % i
        check_keys(ep, PODMONITOR_ENDPOINT, where)
        for key in ("interval", "scrapeTimeout"):
            if key in ep and not (isinstance(ep[key], str) and DURATION.match(ep[key])):
                raise ManifestError("%s.%s: %r is not a Duration" % (where, key, ep[key]))
        if "path" in ep and not str(ep["path"]).startswith("/"):
            raise ManifestError("%s.path: %r" % (where, ep["path"]))


def check_objects(objects):
    """Every object against its schema; returns them by (kind, name)."""
    by_kind = {}
    for obj in objects:
        key = (obj.get("apiVersion"), obj.get("kind"))
        if key == ("monitoring.coreos.com/v1", "PodMonitor"):
            check_podmonitor(obj)
        elif key in MODELS:
            check_typed(obj, MODELS[key])
        else:
            raise ManifestError("unexpected object %s %s" % key)
        by_kind.setdefault(obj["kind"], []).append(obj)
    for kind in ("StatefulSet", "Service", "ConfigMap", "Job", "PodMonitor"):
        if kind not in by_kind:
            raise ManifestError("no %s rendered" % kind)
    return by_kind


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def env_of(container):
    return {e["name"]: e for e in container.get("env", [])}


def check_configmap_refs(pod_spec, configmaps, where):
    """The ConfigMaps (and keys) a pod mounts or reads exist."""
    for vol in pod_spec.get("volumes", []):
        if "configMap" in vol:
            name = vol["configMap"]["name"]
            if name not in configmaps:
                raise ManifestError("%s mounts ConfigMap %s, which is not rendered" % (where, name))
    for c in pod_spec["containers"]:
        for e in c.get("env", []):
            ref = e.get("valueFrom", {}).get("configMapKeyRef")
            if ref and ref["key"] not in configmaps.get(ref["name"], {}).get("data", {}):
                raise ManifestError("%s: env %s reads %s/%s, which is not rendered" %
                                    (where, e["name"], ref["name"], ref["key"]))


def fleet_args(args):
    """args without the pod-only options and their values."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in POD_ONLY:
            skip = True
        else:
            out.append(a)
    return out


def check_consistency(by_kind):
    sts, svc, job, pm = by_kind["StatefulSet"][0], by_kind["Service"][0], by_kind["Job"][0], by_kind["PodMonitor"][0]
    configmaps = {c["metadata"]["name"]: c for c in by_kind["ConfigMap"]}
    labels = sts["spec"]["template"]["metadata"]["labels"]
    if not matches(sts["spec"]["selector"]["matchLabels"], labels):
        raise ManifestError("the StatefulSet's selector does not select its own pods")
    if not matches(svc["spec"].get("selector"), labels):
        raise ManifestError("Service %s's selector %s does not select the StatefulSet's pods %s" %
                            (svc["metadata"]["name"], svc["spec"].get("selector"), labels))
    if svc["spec"].get("clusterIP") != "None" or sts["spec"]["serviceName"] != svc["metadata"]["name"]:
        raise ManifestError("the StatefulSet's serviceName must be the headless Service (pod DNS names)")
    if sts["spec"].get("podManagementPolicy") != "Parallel":
        raise ManifestError("the shards should start in parallel")
    if not matches(pm["spec"]["selector"].get("matchLabels"), labels):
        raise ManifestError("the PodMonitor does not select the StatefulSet's pods")
    pod = sts["spec"]["template"]["spec"]
    container = pod["containers"][0]
    port_names = {p["name"] for p in container.get("ports", [])}
    for ep in pm["spec"]["podMetricsEndpoints"]:
        if ep.get("port") not in port_names:
            raise ManifestError("the PodMonitor scrapes port %r, not a port of the pod" % ep.get("port"))
    for p in svc["spec"]["ports"]:
        if isinstance(p.get("targetPort"), str) and p["targetPort"] not in port_names:
            raise ManifestError("Service port %s targets %r, not a port of the pod" % (p["name"], p["targetPort"]))
    check_configmap_refs(pod, configmaps, "the StatefulSet")
    check_configmap_refs(job["spec"]["template"]["spec"], configmaps, "the Job")

    args, env = container.get("args", []), env_of(container)
    if "--shard" not in args:
        raise ManifestError("the StatefulSet's container args do not contain --shard")
    shard = args[args.index("--shard") + 1]
    if shard != "$(FLEETSIM_SHARD_INDEX)/$(FLEETSIM_SHARDS)":
        raise ManifestError("--shard %s: not the pod's index and the shard count" % shard)
    index = env.get("FLEETSIM_SHARD_INDEX", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
    if index != "metadata.labels['apps.kubernetes.io/pod-index']":
        raise ManifestError("FLEETSIM_SHARD_INDEX is not the pod-index label: %r" % index)
    for where, c in (("StatefulSet", container), ("Job", job["spec"]["template"]["spec"]["containers"][0])):
        ref = env_of(c).get("FLEETSIM_SHARDS", {}).get("valueFrom", {}).get("configMapKeyRef")
        if not ref:
            raise ManifestError("the %s has no FLEETSIM_SHARDS from a ConfigMap" % where)
        shards = configmaps[ref["name"]]["data"][ref["key"]]
        if shards != str(sts["spec"]["replicas"]):
            raise ManifestError("FLEETSIM_SHARDS of the %s is %s, the StatefulSet has %s replicas" %
                                (where, shards, sts["spec"]["replicas"]))
    job_args = job["spec"]["template"]["spec"]["containers"][0].get("args", [])
    if any(a in POD_ONLY for a in job_args) or job_args != fleet_args(args):
        raise ManifestError("the Job's fleet options %s are not the StatefulSet's %s" % (job_args, fleet_args(args)))
    return args


def fleet_file(by_kind, args):
    """The fleet file's text, from the ConfigMap mounted where --fleet points."""
    sts = by_kind["StatefulSet"][0]
    path = args[args.index("--fleet") + 1]
    pod = sts["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    for m in pod["containers"][0]["volumeMounts"]:
        if path.startswith(m["mountPath"].rstrip("/") + "/") and "configMap" in volumes[m["name"]]:
            name = volumes[m["name"]]["configMap"]["name"]
            cm = next(c for c in by_kind["ConfigMap"] if c["metadata"]["name"] == name)
            return os.path.basename(path), cm["data"][os.path.basename(path)]
    raise ManifestError("--fleet %s is not in a mounted ConfigMap" % path)


class DeployManifestsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.objects = render(KUSTOMIZATION)

    def test_every_object_is_valid_and_they_fit_together(self):
        by_kind = check_objects(self.objects)
        args = check_consistency(by_kind)
        replicas = by_kind["StatefulSet"][0]["spec"]["replicas"]
        self.assertEqual(replicas, 10)
        self.assertIn("--shard-own-ports", args, "a pod's devices on its own ports: 200,000 outgrow one range")
        # The fleet file loads in fleetsim; each shard's part has every device on a port of its own on the
        # pod's address, within range; the parts hold the fleet's devices once each, node-ids unique.
        name, text = fleet_file(by_kind, args)
        rows = []
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
            for k in range(replicas):
                inv = os.path.join(tmp, "shard-%d.csv" % k)
                code, out = h.run_fleetsim(["--fleet", os.path.join(tmp, name), "--shard", "%d/%d" % (k, replicas)]
                                           + fleet_args(args)[2:] + ["--emit-inventory", inv, "--inventory-format",
                                                                     "csv"], timeout=h.scaled(20))
                self.assertEqual(code, 0, out)
                with open(inv) as f:
                    part = [r.split(",") for r in f.read().splitlines()[1:]]
                ports = [int(r[3]) for r in part]
                self.assertLessEqual(max(ports), 65535, "shard %d" % k)
                self.assertEqual(len(set(ports)), len(part), "shard %d: a port of its own for every device" % k)
                rows += part
        count = sum(g["device-count"] for g in json.loads(text)["fleetsim-fleet:fleet"]["group"])
        self.assertEqual(count, 200000)
        self.assertEqual([int(r[0]) for r in rows], list(range(count)), "every device once, in order")
        self.assertEqual(len({r[1] for r in rows}), count, "every node-id once")

    def test_a_misspelt_field_fails(self):
        by_kind = {o["kind"]: o for o in self.objects}
        cases = []
        sts = copy.deepcopy(by_kind["StatefulSet"])
        sts["spec"]["podManagmentPolicy"] = sts["spec"].pop("podManagementPolicy")
        cases.append((sts, "StatefulSet fleetsim.spec.podManagmentPolicy"))
        sts = copy.deepcopy(by_kind["StatefulSet"])
        port = sts["spec"]["template"]["spec"]["containers"][0]["ports"][0]
        port["containerport"] = port.pop("containerPort")
        cases.append((sts, "container_port"))  # containerPort, required, is missing
        svc = copy.deepcopy(by_kind["Service"])
        svc["spec"]["ports"][0]["protocl"] = "TCP"
        cases.append((svc, "spec.ports[0].protocl"))
        job = copy.deepcopy(by_kind["Job"])
        job["spec"]["template"]["spec"]["containers"][0]["env"][0]["valueFrom"]["configMapKeyref"] = {}
        cases.append((job, "configMapKeyref"))
        pm = copy.deepcopy(by_kind["PodMonitor"])
        pm["spec"]["podMetricEndpoints"] = pm["spec"].pop("podMetricsEndpoints")
        cases.append((pm, "podMetricEndpoints"))
        pm = copy.deepcopy(by_kind["PodMonitor"])
        pm["spec"]["podMetricsEndpoints"][0]["interval"] = "30 seconds"
        cases.append((pm, "not a Duration"))
        for obj, expected in cases:
            with self.subTest(expected=expected):
                with self.assertRaises(ManifestError) as caught:
                    check_objects([obj if o["kind"] == obj["kind"] else o for o in self.objects])
                self.assertIn(expected, str(caught.exception))

    def test_inconsistent_objects_fail(self):
        def altered(kind, change):
            objects = copy.deepcopy(self.objects)
            change(next(o for o in objects if o["kind"] == kind))
            return objects

        def no_shard(sts):
            args = sts["spec"]["template"]["spec"]["containers"][0]["args"]
            del args[:2]

        cases = [
            (altered("Service", lambda s: s["spec"]["selector"].update({"app.kubernetes.io/name": "fleetsm"})),
             "selector"),
            (altered("StatefulSet", no_shard), "do not contain --shard"),
            (altered("StatefulSet", lambda s: s["spec"]["template"]["spec"]["volumes"][0]["configMap"].update(
                name="fleetsim-fleet")), "mounts ConfigMap fleetsim-fleet"),
            (altered("StatefulSet", lambda s: s["spec"].update(replicas=5)), "5 replicas"),
            (altered("Job", lambda j: j["spec"]["template"]["spec"]["containers"][0]["args"].extend(["--seed", "2"])),
             "fleet options"),
        ]
        for objects, expected in cases:
            with self.subTest(expected=expected):
                with self.assertRaises(ManifestError) as caught:
                    check_consistency(check_objects(objects))
                self.assertIn(expected, str(caught.exception))

    def test_a_misspelt_field_in_the_sources_fails_to_render_or_check(self):
        # The whole path, from a kustomization on disk: kustomize passes unknown fields through.
        with tempfile.TemporaryDirectory() as tmp:
            copy_dir = os.path.join(tmp, "k")
            shutil.copytree(KUSTOMIZATION, copy_dir)
            path = os.path.join(copy_dir, "statefulset.yaml")
            with open(path) as f:
                text = f.read()
            self.assertIn("readinessProbe:", text)
            with open(path, "w") as f:
                f.write(text.replace("readinessProbe:", "readynessProbe:"))
            with self.assertRaises(ManifestError) as caught:
                check_objects(render(copy_dir))
            self.assertIn("readynessProbe", str(caught.exception))


if __name__ == "__main__":
    h.BINARY = h.take_binary_argument()
    unittest.main(verbosity=2)
