"""Every rendered object of every shipped stack through the real API server (issue 40, item 4).

Each shipped stack (the root's Pulumi.<stack>.yaml, examples/Pulumi.*.yaml and the real-cloud
test's .github/cloud-test/Pulumi.cloud-test.yaml, rendered as .ci/run renders them) is planned, and
every object of its manifests.yaml goes through `kubectl apply --server-side --dry-run=server
--field-manager=pulumi-kubernetes --validate=strict` against a control plane of this module's own
(control_plane.py): the API server's validation, defaulting and admission (Pod Security against the
stacks' own namespace labels), strict field validation, and each CRD's OpenAPI schema and CEL rules
(x-kubernetes-validations), which the offline plan's jsonschema check reads but does not evaluate.
An object is accepted when the server takes it without an error or a warning, and it names a
namespace exactly when its kind is namespaced.

The CRDs are installed for real first, as full CRDs wherever one is at hand: the ones the
repository vendors (KEDA, Kueue, LeaderWorkerSet, components/platform/vendor/), and the Gateway
API's standard channel from its Go module at the version tools/crds names (`go mod download`
through the module proxy, hashes checked against the Go checksum database). GKE's own kinds have no
public module; their CRDs are built from tools/crds' schemas with the plural and scope their source
CRDs declare (DERIVED). A kind that nothing here serves must be listed in UNCHECKED with a reason.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.real import control_plane
from tests.real.conftest import require
from tests.real.control_plane import ControlPlane
from tools import render
from tools.crd_schema import crd_file, file_name
from tools.stacks import SANDBOX_STACK_FILE

ROOT = Path(__file__).resolve().parents[2]
CRD_FILES = ROOT / "tools" / "crds"
VENDOR = ROOT / "components" / "platform" / "vendor"
FIELD_MANAGER = "pulumi-kubernetes"  # the Kubernetes provider's, in server-side apply mode
# Strict field validation: an unknown or duplicate field is an error, not a dropped value.
DRY_RUN = ("apply", "--server-side", "--dry-run=server", f"--field-manager={FIELD_MANAGER}",
           "--validate=strict")  # fmt: skip
GATEWAY_MODULE = "sigs.k8s.io/gateway-api"
# libyaml's loader when PyYAML has it: the vendored manifests are megabytes.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# tools/crds files with no full CRD here (GKE's own APIs are not published as Go modules): file ->
# (plural, scope), as the CRD each file's "source" names declares them. The plural is checked
# against the source text; the scope is not in the file, so each is read from its CRD:
DERIVED: dict[str, tuple[str, str]] = {
    # GKE's ComputeClass reference (cloud.google.com/kubernetes-engine/docs/reference/crds/
    # computeclass): metadata is a name only; pods of every namespace select a class by name.
    "cloud.google.com_v1_ComputeClass.json": ("computeclasses", "Cluster"),
    # prometheus-engine's charts/operator/crds/monitoring.googleapis.com_podmonitorings.yaml:
    # `scope: Namespaced` (ClusterPodMonitoring is the cluster-wide kind).
    "monitoring.googleapis.com_v1_PodMonitoring.json": ("podmonitorings", "Namespaced"),
    # gke-gateway-api's config/crd/networking.gke.io_{gcpbackendpolicies,healthcheckpolicies}.yaml:
    # `scope: Namespaced` (a policy targets a Service of its own namespace).
    "networking.gke.io_v1_GCPBackendPolicy.json": ("gcpbackendpolicies", "Namespaced"),
    "networking.gke.io_v1_HealthCheckPolicy.json": ("healthcheckpolicies", "Namespaced"),
    # networking.gke.io_gcpgatewaypolicies.yaml: `scope: Namespaced` (a policy targets a Gateway
    # of its own namespace).
    "networking.gke.io_v1_GCPGatewayPolicy.json": ("gcpgatewaypolicies", "Namespaced"),
}

# (apiVersion, kind) of rendered objects no API here serves, so none is checked: each with why.
# Empty: every kind the shipped stacks render is checked. A new kind without a CRD fails the test.
UNCHECKED: dict[tuple[str, str], str] = {}

# Namespaces a cluster has before anything is deployed; any other must be one a stack creates.
EVERY_CLUSTER = frozenset({"default", "kube-system"})

Object = dict[str, Any]


def need(message: str) -> None:
    """Skips the test, or fails it when GKE_GPU_REQUIRE_REAL=1 (as conftest.require does)."""
    if os.environ.get("GKE_GPU_REQUIRE_REAL") == "1":
        pytest.fail(message)
    pytest.skip(message)


def shipped_stacks() -> list[tuple[str, Path]]:
    """(stack, stack file) of every stack .ci/run renders."""
    files = [*sorted(ROOT.glob("Pulumi.*.yaml")), *sorted(ROOT.glob("examples/Pulumi.*.yaml"))]
    stacks = [(p.name.removeprefix("Pulumi.").removesuffix(".yaml"), p) for p in files]
    return [*stacks, ("cloud-test", ROOT / SANDBOX_STACK_FILE)]


def label(obj: Object) -> str:
    meta = obj.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')} {where}{meta.get('name')}"


@pytest.fixture(scope="module")
def manifests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Object]]:
    """Each shipped stack's manifests.yaml, as tools.render writes it."""
    out = tmp_path_factory.mktemp("plans")
    rendered: dict[str, list[Object]] = {}
    for stack, path in shipped_stacks():
        render.write_artifacts(render.render(stack, path), out / stack)
        text = (out / stack / "manifests.yaml").read_text()
        rendered[stack] = [doc for doc in yaml.load_all(text, Loader=LOADER) if doc]
    return rendered


# --- the CRDs --------------------------------------------------------------------------------


def vendored_crds() -> list[Object]:
    return [
        doc
        for path in sorted(VENDOR.glob("*/*.yaml"))
        for doc in yaml.load_all(path.read_text(), Loader=LOADER)
        if doc and doc.get("kind") == "CustomResourceDefinition"
    ]


def gateway_crds() -> list[Object]:
    """The Gateway API's standard-channel CRDs at the version tools/crds' Gateway API files name."""
    sources = {json.loads(p.read_text())["source"] for p in CRD_FILES.glob("gateway.*.json")}
    versions = {m.group(1) for s in sources for m in [re.search(r" at (v\d+\.\d+\.\d+)\b", s)] if m}
    assert len(versions) == 1 and all("standard" in s for s in sources), sources
    if shutil.which("go") is None:
        need("go not found: the Gateway API's CRDs come from its Go module")
    (version,) = versions
    result = subprocess.run(
        ["go", "mod", "download", "-json", f"{GATEWAY_MODULE}@{version}"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    module = json.loads(result.stdout or "{}")
    if result.returncode != 0 or "Dir" not in module:
        need(f"go mod download {GATEWAY_MODULE}@{version}: {module.get('Error') or result.stderr}")
    folder = Path(module["Dir"]) / "config" / "crd" / "standard"
    return [yaml.load(p.read_text(), Loader=LOADER) for p in sorted(folder.glob("*.yaml"))]


def _open(node: Any) -> Any:
    """A tools/crds schema as a CRD takes it: without the `additionalProperties: false` that
    tools/crd_schema.py adds for jsonschema (a structural schema may not have it; the API server's
    strict field validation rejects unknown fields itself)."""
    if isinstance(node, dict):
        return {
            key: _open(value)
            for key, value in node.items()
            if not (key == "additionalProperties" and value is False)
        }
    if isinstance(node, list):
        return [_open(value) for value in node]
    return node


def derived_crd(path: Path, plural: str, scope: str) -> Object:
    """A CRD of one tools/crds file: group, version and kind from its name."""
    group, version, kind = path.stem.split("_")
    stored = json.loads(path.read_text())
    assert plural in stored["source"], f"{path.name}: plural {plural} not in its source"
    schema = _open(stored["schema"])
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural},
            "scope": scope,
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},  # as each source CRD has it
                }
            ],
        },
    }


@functools.cache
def every_crd() -> tuple[list[Object], list[Object]]:
    """(the full CRDs, the ones built from tools/crds); every tools/crds file is one of them."""
    real = [*vendored_crds(), *gateway_crds()]
    defined = {
        file_name(crd, v["name"]) for crd in real for v in crd["spec"]["versions"] if v["served"]
    }
    derived = [derived_crd(CRD_FILES / f, *DERIVED[f]) for f in sorted(DERIVED)]
    missing = {p.name for p in CRD_FILES.glob("*.json")} - defined - set(DERIVED)
    assert not missing, f"no CRD for {sorted(missing)}: vendor it, or add it to DERIVED"
    return real, derived


def apply(plane: ControlPlane, manager: str, objects: list[Object]) -> list[str]:
    """Server-side apply, for real; the objects' `resource/name`s."""
    items = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
    out = plane.kubectl("apply", "--server-side", f"--field-manager={manager}", "-o", "name",
                        "-f", "-", stdin=items)  # fmt: skip
    return out.split()


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A control plane of this module's own, not the session's: a verdict depends on what the
    cluster holds (an object or a namespace another test left), so each is taken on a fresh one."""
    bin_dir = require(
        "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok"
    )
    with control_plane.running(bin_dir, tmp_path_factory.mktemp("dry-run-plane")) as running:
        yield running


@pytest.fixture(scope="module")
def served(plane: ControlPlane, manifests: dict[str, list[Object]]) -> dict[tuple[str, str], bool]:
    """The CRDs and the stacks' namespaces, made for real; (apiVersion, kind) -> namespaced of
    every kind the server serves then. The namespaces carry the stacks' Pod Security labels: the
    server warns of a workload whose pods those would reject."""
    real, derived = every_crd()
    # The provider's field manager: the stacks apply the same vendored CRDs (no conflict).
    crds = apply(plane, FIELD_MANAGER, [*real, *derived])
    plane.kubectl("wait", "--for=condition=Established", "--timeout=120s", *crds)
    apply(plane, FIELD_MANAGER, namespaces(manifests))
    return served_kinds(plane, {o["apiVersion"] for objs in manifests.values() for o in objs})


def namespaces(manifests: dict[str, list[Object]]) -> list[Object]:
    """Every Namespace the stacks render; one cluster holds them all, so a name must have one
    definition (else the stacks need a control plane each)."""
    found: dict[str, Object] = {}
    for stack, objs in manifests.items():
        for obj in (o for o in objs if o["kind"] == "Namespace"):
            kept = found.setdefault(obj["metadata"]["name"], obj)
            assert kept == obj, f"{stack}: {label(obj)} differs from another stack's"
    return list(found.values())


def served_kinds(plane: ControlPlane, api_versions: set[str]) -> dict[tuple[str, str], bool]:
    """The API server's discovery of each API version: (apiVersion, kind) -> namespaced."""
    kinds: dict[tuple[str, str], bool] = {}
    for api_version in sorted(api_versions):
        path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        try:
            found = json.loads(plane.kubectl("get", "--raw", path))
        except AssertionError:  # NotFound: no group of that version is served
            continue
        for resource in found["resources"]:
            if "/" not in resource["name"]:  # a subresource (status, scale) is not a kind
                kinds[(api_version, resource["kind"])] = resource["namespaced"]
    return kinds


# --- the dry run -----------------------------------------------------------------------------


def run(plane: ControlPlane, *args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    """kubectl against the plane, its exit code and stderr kept (warnings go there)."""
    command = [str(plane.bin_dir / "kubectl"), f"--kubeconfig={plane.kubeconfig}", *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=300)


def dry_run(plane: ControlPlane, obj: Object) -> str | None:
    """None when the API server accepts the object's server-side apply (dry run, strict field
    validation) without a warning (deprecated API, Pod Security), else what it said."""
    result = run(plane, *DRY_RUN, "-o", "name", "-f", "-", stdin=json.dumps(obj))
    return result.stderr.strip() or (None if result.returncode == 0 else "rejected")


def dry_run_all(plane: ControlPlane, objs: list[Object]) -> list[str | None]:
    """Each object's verdict. One batch first: kubectl goes on past a rejection and names each
    object the server accepted; unless it accepted all without a word, each object alone."""
    batch = json.dumps({"apiVersion": "v1", "kind": "List", "items": objs})
    result = run(plane, *DRY_RUN, "-o", "name", "-f", "-", stdin=batch)
    accepted = result.returncode == 0 and len(result.stdout.split()) == len(objs)
    if accepted and not result.stderr.strip():
        return [None] * len(objs)
    return [dry_run(plane, obj) for obj in objs]


def placement(obj: Object, namespaced: bool, own: set[str]) -> str | None:
    """Why the object's namespace is wrong for its kind's scope, if it is."""
    namespace = (obj.get("metadata") or {}).get("namespace")
    if not namespaced:
        return f"cluster-scoped, but names namespace {namespace}" if namespace else None
    if not namespace:
        return "namespaced, but names no namespace (it would land in the provider's default)"
    if namespace not in own | EVERY_CLUSTER:
        return f"namespace {namespace} is neither the stack's own nor one every cluster has"
    return None


def check_stacks(
    plane: ControlPlane, manifests: dict[str, list[Object]], served: dict[tuple[str, str], bool]
) -> tuple[list[str], Counter[tuple[str, str]], Counter[str]]:
    """(every problem as `stack: kind namespace/name: message`, the unchecked kinds, the checked
    kinds); the stacks in parallel, each in one batch while the server accepts all of it."""
    sent = [
        [o for o in objs if (o["apiVersion"], o["kind"]) in served] for objs in manifests.values()
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(lambda objs: dry_run_all(plane, objs), sent))
    verdicts = {
        id(o): v
        for objs, vs in zip(sent, found, strict=True)
        for o, v in zip(objs, vs, strict=True)
    }
    problems: list[str] = []
    unchecked: Counter[tuple[str, str]] = Counter()
    kinds: Counter[str] = Counter()
    for stack, objs in manifests.items():
        own = {o["metadata"]["name"] for o in objs if o["kind"] == "Namespace"}
        for obj in objs:
            key = (obj["apiVersion"], obj["kind"])
            if key not in served:
                unchecked[key] += 1
                continue
            kinds[obj["kind"]] += 1
            verdict = verdicts[id(obj)] or placement(obj, served[key], own)
            if verdict:
                problems.append(f"{stack}: {label(obj)}: {verdict}")
    return problems, unchecked, kinds


def test_every_object_of_every_stack_is_accepted(
    plane: ControlPlane, manifests: dict[str, list[Object]], served: dict[tuple[str, str], bool]
) -> None:
    problems, unchecked, kinds = check_stacks(plane, manifests, served)
    total = sum(len(objs) for objs in manifests.values())
    print(f"\n{total} objects of {len(manifests)} stacks ({', '.join(manifests)}):")
    print("  checked: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    for (api_version, kind), count in sorted(unchecked.items()):
        why = UNCHECKED.get((api_version, kind), "NOT IN UNCHECKED")
        print(f"  not checked: {count} {kind} ({api_version}), no API serves it: {why}")
    assert not problems, f"{len(problems)} objects rejected:\n" + "\n".join(problems)
    assert set(unchecked) == set(UNCHECKED), (
        f"kinds no API here serves: {sorted(unchecked)}; reasoned in UNCHECKED: {sorted(UNCHECKED)}"
        " (a new kind needs its CRD: vendor it, or add its schema to tools/crds and DERIVED)"
    )


def first(manifests: dict[str, list[Object]], kind: str) -> Object:
    return copy.deepcopy(next(o for objs in manifests.values() for o in objs if o["kind"] == kind))


def test_a_broken_object_is_rejected(
    plane: ControlPlane, manifests: dict[str, list[Object]], served: dict[tuple[str, str], bool]
) -> None:
    """The check can fail: a rendered object broken against a CEL rule of a full CRD, one of a
    CRD built from tools/crds, strict field validation, or its namespace's Pod Security level, is
    each reported with the server's message."""
    assert served
    gateway = first(manifests, "Gateway")
    http = next(
        listener for listener in gateway["spec"]["listeners"] if listener["protocol"] == "HTTP"
    )
    http["tls"] = {"mode": "Terminate", "certificateRefs": [{"name": "cert"}]}
    health = first(manifests, "HealthCheckPolicy")
    check = health["spec"]["default"]["config"]["httpHealthCheck"]
    assert check["portSpecification"] == "USE_FIXED_PORT", check
    del check["port"]
    unknown, host = first(manifests, "Deployment"), first(manifests, "Deployment")
    unknown["spec"]["template"]["spec"]["containers"][0]["portz"] = []
    host["spec"]["template"]["spec"]["hostNetwork"] = True
    broken = {
        "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']": gateway,
        "for portSpecification being USE_FIXED_PORT, port must be set": health,
        ".portz: field not declared in schema": unknown,
        'would violate PodSecurity "restricted:latest": host namespaces': host,
    }
    for expected, obj in broken.items():
        message = dry_run(plane, obj)
        assert message is not None and expected in message, f"{label(obj)}: {message}"


def test_tools_crds_are_the_installed_crds_schemas(served: dict[tuple[str, str], bool]) -> None:
    """The offline plan's schemas (tools/crds) are the ones the API server enforced here, for every
    kind installed from a full CRD: tools/crd_schema.py's rendering of that CRD's version."""
    assert served
    real, _ = every_crd()
    for crd in real:
        for version in crd["spec"]["versions"]:
            path = CRD_FILES / file_name(crd, version["name"])
            if path.exists():
                stored = json.loads(path.read_text())
                expected = crd_file(crd, version["name"], stored["source"])
                assert stored == expected, f"{path.name} differs from {crd['metadata']['name']}"
