"""`python -m dev.new_variant kind NAME` / `expose NAME`: the skeleton of a new variant (issue 42).

A variant is two modules and a test of its own (docs/architecture.md, "A variant in two halves"):
- `components/<kinds|expose>/<name>_spec.py`, below the config layer: what it is. Every
  capability is written UNDECIDED with the question it answers; the descriptor refuses itself at
  import until each is declared (components/facts/undecided.py), so nothing can run a variant
  that has not said whether it completes, scales, serves requests, is public, ...
- `components/<kinds|expose>/<name>.py`, above the platform: what it registers. A kind registers a
  custom resource holding the pod template at `--pod-spec-path`; an exposure, a Service in front
  of the gate, and says where it is served.
- `tests/test_<name>.py`: fails until the capabilities are declared and the variant registered.

What it cannot write, it prints: the lines that register the variant in the two lists (the
config layer's and the registrars'), and for a kind the policy pack's pod-spec path and the CRD
schema the offline plan validates its object against. tests/test_new_variant.py adds `kind:
RayJob` and `expose.type: InferenceGateway` with it and counts those edits.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

KIND_CAPABILITIES = (
    ("holds_replicas", "does it keep a count of long-running pods (spec.replicas)?"),
    ("completes", "do its pods run to completion (a batch job)?"),
    ("scales", "may an autoscaler (HPA, KEDA) set its replicas?"),
    ("serves_http", "do its pods serve requests (expose, apiKey, routing)?"),
    ("immutable_template", "does a change of its pod template replace the object?"),
    ("claims_storage", "does each pod claim a data disk of its own (`storage`)?"),
    ("spans_nodes", "is a replica a group of `hosts` pods?"),
    ("needs", "the controllers it needs, frozenset({Controller.X}) or frozenset()"),
    (
        "takes",
        "the batch keys its object carries (kinds/spec.py BATCH_KEYS; its registrar must build "
        "them, as kinds/base.py Batch does), or frozenset()",
    ),
)
EXPOSE_CAPABILITIES = (
    ("load_balanced", "does a cloud load balancer serve it?"),
    ("public", "is its address reached from the internet?"),
    ("in_cluster", "do only pods in the cluster reach it?"),
    ("address_type", '"EXTERNAL", "INTERNAL" or None: the address expose.staticIp reserves'),
    ("refused_on_gke", "why a stack that builds its cluster cannot use it (None: it can)"),
    ("refused_on_existing", "why a stack on an existing cluster cannot use it (None: it can)"),
    ("refuses_source_ranges", "why expose.sourceRanges cannot restrict it (None: it can)"),
    ("managed_certificate", "does it serve a name of its own with a Google-managed cert?"),
    ("terminates_at_edge", "does Google's front end end the clients' connections?"),
    ("needs", "the controllers it needs, frozenset({Controller.X}) or frozenset()"),
)


def snake(name: str) -> str:
    """`RayJob` -> `ray_job`, `InferenceGateway` -> `inference_gateway`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _path(path: tuple[str, ...]) -> str:
    """A tuple of strings as ruff format writes it."""
    return "(" + ", ".join(f'"{p}"' for p in path) + ("," if len(path) == 1 else "") + ")"


def _capabilities(pairs: tuple[tuple[str, str], ...]) -> str:
    """Each capability UNDECIDED under the question it answers (comments within 100 columns)."""
    return "".join(
        "".join(f"    # {line}\n" for line in textwrap.wrap(question, 94))
        + f"    {field}=UNDECIDED,\n"
        for field, question in pairs
    )


def kind_files(name: str, api_version: str, pod_spec_path: tuple[str, ...]) -> dict[str, str]:
    """The new kind's descriptor, registrar and test, by path."""
    s, const = snake(name), snake(name).upper()
    group, _, version = api_version.rpartition("/")
    spec = f'''"""A {name}'s capabilities (components/kinds/{s}.py registers it)."""

from __future__ import annotations

from ..facts.controllers import Controller
from ..facts.undecided import UNDECIDED
from .spec import BATCH_KEYS, KindSpec

__all__ = ["BATCH_KEYS", "Controller", "{const}"]

{const} = KindSpec(
    name="{name}",
    stack_kind="{name}",
    serves=lambda w: True,
    type_token="kubernetes:{group or "core"}/{version}:{name}",
    object_suffix="",
    namespace_objects=(),
{_capabilities(KIND_CAPABILITIES)})
'''
    register = f'''"""A {name}: a {api_version} custom resource holding the pod template."""

from __future__ import annotations

import pulumi_kubernetes as k8s

from ..config import WorkloadConfig
from ..manifest import manifest
from .base import Kind, Registered, Request, named, placed
from .{s}_spec import {const}


class {name}(Kind):
    spec = {const}
    pod_spec_path = {_path(pod_spec_path)}

    def awaited(self, w: WorkloadConfig) -> bool:
        """pulumi-kubernetes waits for a custom resource only when asked (PULUMI_K8S_AWAIT_ALL
        or a pulumi.com/waitFor annotation; pulumi/pulumi-kubernetes PR 3143): `pulumi up`
        returns once it is created."""
        del w
        return False

    def register(self, request: Request) -> Registered:
        """The object, the pod template at pod_spec_path. Add what the controller asks of it
        (a container name its webhook requires, the fields the batch keys set)."""
        w = request.workload
        name = self.object_name(w)
        resource = k8s.apiextensions.CustomResource(
            f"{{request.name}}-{s.replace("_", "")}",
            api_version="{api_version}",
            kind=self.name,
            metadata=manifest(self.object_metadata(w, {{**request.metadata, "name": name}})),
            spec=manifest(placed(self.pod_spec_path, request.template)),
            opts=request.waits,
        )
        return named(resource, name)
'''
    return {
        f"components/kinds/{s}_spec.py": spec,
        f"components/kinds/{s}.py": register,
        f"tests/test_{s}.py": _kind_test(name, s, const),
    }


def _kind_test(name: str, s: str, const: str) -> str:
    return f'''"""The {name} kind: declared, registered, and its object built from the workload."""

from __future__ import annotations

from components import slices
from components.config import variants
from components.kinds.{s}_spec import {const}
from tests.conftest import STANDARD, Run


def test_it_is_registered_in_both_lists() -> None:
    assert variants.KIND_SPECS.get("{name}") is {const}, (
        "components/config/variants.py KIND_SPECS"
    )
    assert slices.KINDS["{name}"].spec is {const}, "components/slices.py KINDS"


def test_a_workload_of_this_kind_registers_its_object(run: Run) -> None:
    workload = {{
        "name": "work",
        "kind": "{name}",
        "image": "example.com/work:1.0",
        "gpu": {{"type": "nvidia-l4", "count": 1}},
        "spot": True,
    }}
    recording = run({{**STANDARD, "gke-gpu:workloads": [workload]}})
    assert recording.of_type({const}.type_token), "the workload's object"
'''


def expose_files(name: str) -> dict[str, str]:
    """The new exposure's descriptor, registrar and test, by path."""
    s, const = snake(name), snake(name).upper()
    spec = f'''"""{name}'s capabilities (components/expose/{s}.py registers it)."""

from __future__ import annotations

from ..facts.controllers import Controller
from ..facts.undecided import UNDECIDED
from .spec import ExposureSpec

__all__ = ["Controller", "{const}"]

{const} = ExposureSpec(
    name="{name}",
{_capabilities(EXPOSE_CAPABILITIES)})
'''
    register = f'''"""{name}: how a workload's gate is reached through it."""

from __future__ import annotations

from typing import Any

import pulumi

from ..config import Expose
from .base import Exposure, Served
from .{s}_spec import {const}


class {name}(Exposure):
    spec = {const}
    service_type = "ClusterIP"

    def where_words(self, e: Expose, namespace: str) -> str:
        raise NotImplementedError("the plan's words for where {name} serves the workload")

    def addresses(
        self, served: Served, status: pulumi.Output[Any], node_port: pulumi.Output[int | None]
    ) -> tuple[pulumi.Output[str | None], pulumi.Output[str | None]]:
        raise NotImplementedError("{name}'s external IP (or None) and the workload's URL")
'''
    test = f'''"""The {name} exposure: declared, registered, and a workload served through it."""

from __future__ import annotations

import json
from pathlib import Path

from components import slices
from components.config import load, variants
from components.expose.{s}_spec import {const}
from tests.conftest import SERVICE, STANDARD, Run
from tools import render


def test_it_is_registered_in_both_lists() -> None:
    assert variants.EXPOSURE_SPECS.get("{name}") is {const}, (
        "components/config/variants.py EXPOSURE_SPECS"
    )
    assert slices.EXPOSURES["{name}"].spec is {const}, "components/slices.py EXPOSURES"


WORKLOAD = {{**STANDARD["gke-gpu:workloads"][0], "expose": {{"port": 443, "type": "{name}"}}}}


def test_a_workload_exposed_through_it_gets_its_service(run: Run) -> None:
    recording = run({{**STANDARD, "gke-gpu:workloads": [WORKLOAD]}})
    assert recording.of_type(SERVICE), "the gate's Service"


def test_the_plan_says_where_it_is_served(tmp_path: Path) -> None:
    stack_file = tmp_path / "Pulumi.exposed.yaml"
    stack_file.write_text(json.dumps({{"config": {{**STANDARD, "gke-gpu:workloads": [WORKLOAD]}}}}))
    text = render.summary(render.render("exposed", stack_file))
    raw = {{k.partition(":")[2]: v for k, v in STANDARD.items() if k.startswith("gke-gpu:")}}
    project, region = STANDARD["gcp:project"], STANDARD["gcp:region"]
    config = load({{**raw, "workloads": [WORKLOAD]}}, project=project, region=region, stack="t")
    expose = config.workloads[0].expose
    assert expose is not None
    words = slices.EXPOSURES["{name}"].where_words(expose, config.namespace)
    assert words in text, f"the plan shows where the workload is served: {{words}}"
'''
    return {
        f"components/expose/{s}_spec.py": spec,
        f"components/expose/{s}.py": register,
        f"tests/test_{s}.py": test,
    }


def edits(what: str, name: str, api_version: str, path: tuple[str, ...]) -> list[str]:
    """The registrations written by hand, in the files every variant shares."""
    s, const = snake(name), snake(name).upper()
    folder = "kinds" if what == "kind" else "expose"
    listing = "KIND_SPECS" if what == "kind" else "EXPOSURE_SPECS"
    registry = "KINDS" if what == "kind" else "EXPOSURES"
    lines = [
        f"components/config/variants.py: `from ..{folder}.{s}_spec import {const}`, and {const} "
        f"in {listing}",
        f"components/slices.py: `from .{folder}.{s} import {name}`, and {name}() in {registry}",
    ]
    if what == "kind":
        group, _, version = api_version.rpartition("/")
        lines += [
            f'policy/rules/props.py: POD_SPEC_PATHS[("{group}", "{name}")] = {_path(path)} (the '
            "policy pack checks the pod spec there)",
            f"tools/crds/{group}_{version}_{name}.json: the CRD's openAPIV3Schema, from the "
            "project that defines it (the offline plan validates the object against it)",
        ]
    return lines


# A custom resource's API group (a DNS name with a dot) and version (v1, v1beta2, ...).
_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
GROUP_VERSION = re.compile(rf"{_LABEL}(\.{_LABEL})+/v[0-9]+((alpha|beta)[0-9]+)?")
POD_SPEC_PATH = re.compile(r"spec(\.[A-Za-z][A-Za-z0-9]*)*\.template\.spec")


def _problems(what: str, name: str, api_version: str | None, pod_spec_path: str) -> list[str]:
    """Every way the command line cannot make a variant, at once."""
    found = []
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]{1,40}", name):
        found.append(f"{name!r} is not a variant name: UpperCamelCase, e.g. RayJob")
    if what == "expose":
        if api_version is not None or pod_spec_path != "spec.template.spec":
            found.append("--api-version and --pod-spec-path are a kind's, not an exposure's")
        return found
    if api_version is None or not GROUP_VERSION.fullmatch(api_version):
        found.append(
            f"--api-version {api_version!r}: a custom resource's GROUP/VERSION, e.g. ray.io/v1 "
            "(a kind of Kubernetes' own is registered by hand, as Deployment is)"
        )
    if not POD_SPEC_PATH.fullmatch(pod_spec_path):
        found.append(
            f"--pod-spec-path {pod_spec_path!r}: dotted object fields from spec to a pod "
            "template's spec, e.g. spec.rayClusterSpec.headGroupSpec.template.spec; a path "
            "through a list (a JobSet's replicatedJobs[0]) is not one the registrar, the policy "
            "pack and its test can walk: write that kind's register() by hand"
        )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dev.new_variant",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("what", choices=("kind", "expose"))
    parser.add_argument("name", help="its stack-file name, e.g. RayJob or InferenceGateway")
    parser.add_argument("--api-version", help="kind: its custom resource's GROUP/VERSION")
    parser.add_argument(
        "--pod-spec-path",
        default="spec.template.spec",
        help="kind: where its object holds the pod spec, dotted (spec.<fields>.template.spec)",
    )
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    problems = _problems(args.what, args.name, args.api_version, args.pod_spec_path)
    if problems:
        parser.error("; ".join(problems))
    path = tuple(args.pod_spec_path.split("."))
    files = (
        kind_files(args.name, args.api_version, path)
        if args.what == "kind"
        else expose_files(args.name)
    )
    taken = [p for p in files if (args.root / p).exists()]
    if taken:
        print(f"already there, nothing written: {', '.join(taken)}", file=sys.stderr)
        return 2
    for relative, text in files.items():
        (args.root / relative).write_text(text)
        print(f"wrote {relative}")
    print("\nDeclare every UNDECIDED capability, then register it by hand:")
    for line in edits(args.what, args.name, args.api_version or "", path):
        print(f"  - {line}")
    print(
        "\nThen regenerate what follows from the registry (the stack file's choices in "
        "docs/configuration.md, Pulumi.yaml and the Args): .venv/bin/python -m tools.reference "
        "--write; .venv/bin/python -m tools.args --write; .venv/bin/python -m tools."
        "component_args --write. Tidy: .venv/bin/ruff check --fix . (drops the UNDECIDED "
        "import); .venv/bin/ruff format .\n"
        f"Test: .venv/bin/python -m pytest tests/test_{snake(args.name)}.py"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
