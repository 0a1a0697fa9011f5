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
    ("takes", "the batch keys it honours (kinds/spec.py BATCH_KEYS), or frozenset()"),
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


def _capabilities(pairs: tuple[tuple[str, str], ...]) -> str:
    return "".join(f"    # {question}\n    {field}=UNDECIDED,\n" for field, question in pairs)


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

from ..manifest import manifest
from .base import Kind, Registered, Request, named, placed
from .{s}_spec import {const}


class {name}(Kind):
    spec = {const}
    pod_spec_path = {pod_spec_path!r}

    def register(self, request: Request) -> Registered:
        w = request.workload
        resource = k8s.apiextensions.CustomResource(
            f"{{request.name}}-{s.replace("_", "")}",
            api_version="{api_version}",
            kind=self.name,
            metadata=manifest(self.object_metadata(w, request.metadata)),
            spec=manifest(placed(self.pod_spec_path, request.template)),
            opts=request.waits,
        )
        return named(resource, w.spec.name)
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
    assert variants.KIND_SPECS.get("{name}") is {const}, "components/config/variants.py KIND_SPECS"
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

from components import slices
from components.config import variants
from components.expose.{s}_spec import {const}
from tests.conftest import SERVICE, STANDARD, Run


def test_it_is_registered_in_both_lists() -> None:
    assert variants.EXPOSURE_SPECS.get("{name}") is {const}, "components/config/variants.py"
    assert slices.EXPOSURES["{name}"].spec is {const}, "components/slices.py EXPOSURES"


def test_a_workload_exposed_through_it_gets_its_service(run: Run) -> None:
    workload = {{**STANDARD["gke-gpu:workloads"][0], "expose": {{"port": 443, "type": "{name}"}}}}
    recording = run({{**STANDARD, "gke-gpu:workloads": [workload]}})
    assert recording.of_type(SERVICE), "the gate's Service"
'''
    return {
        f"components/expose/{s}_spec.py": spec,
        f"components/expose/{s}.py": register,
        f"tests/test_{s}.py": test,
    }


def edits(what: str, name: str, api_version: str, path: tuple[str, ...]) -> list[str]:
    """The registrations written by hand, in the files every variant shares."""
    s, const = snake(name), snake(name).upper()
    listing = "KIND_SPECS" if what == "kind" else "EXPOSURE_SPECS"
    registry = "KINDS" if what == "kind" else "EXPOSURES"
    lines = [
        f"components/config/variants.py: `from ..{what}.{s}_spec import {const}`, and {const} in "
        f"{listing}",
        f"components/slices.py: `from .{what}.{s} import {name}`, and {name}() in {registry}",
    ]
    if what == "kind":
        group, _, version = api_version.rpartition("/")
        lines += [
            f'policy/rules/props.py: POD_SPEC_PATHS[("{group}", "{name}")] = {path!r} (the policy '
            "pack checks the pod spec there)",
            f"tools/crds/{group}_{version}_{name}.json: the CRD's openAPIV3Schema, from the "
            "project that defines it (the offline plan validates the object against it)",
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dev.new_variant", description=__doc__)
    parser.add_argument("what", choices=("kind", "expose"))
    parser.add_argument("name", help="its stack-file name, e.g. RayJob or InferenceGateway")
    parser.add_argument("--api-version", default="example.com/v1", help="a kind's API version")
    parser.add_argument(
        "--pod-spec-path",
        default="spec.template.spec",
        help="where a kind's object holds the pod spec, dotted",
    )
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]{1,40}", args.name):
        parser.error(f"{args.name!r} is not a variant name: UpperCamelCase, e.g. RayJob")
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
    for line in edits(args.what, args.name, args.api_version, path):
        print(f"  - {line}")
    print(f"\nThen: .venv/bin/python -m pytest tests/test_{snake(args.name)}.py")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
