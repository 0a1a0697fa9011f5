"""The offline plan: `python -m tools.render <stack>` shows what `pulumi up` would create.

It needs neither the Pulumi CLI nor a cloud account: it reads Pulumi.<stack>.yaml (secure values
become placeholders, never decrypted), runs the real __main__.py against a recording engine,
writes build/<stack>/{plan.json,manifests.yaml,graph.md}, prints a summary, and validates every
Kubernetes object against the Kubernetes OpenAPI schema and every resource against the policy
pack (and the Cloud Monitoring resources against pulumi-gcp's inputs, tools/gcp_schema.py). Exit 0:
clean; 1: a schema or mandatory policy failure; 2: the config is invalid. With `--against
OLD/plan.json` it also prints what `pulumi up` would create, update, replace and delete in a stack
deployed as that plan, and a one-line verdict (tools/plan_diff.py).
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from components.config import StackConfig, from_stack_file
from components.config.source import read_stack_file
from components.facts.pins import KUBERNETES_SCHEMA_VERSION
from tools import gcp_schema
from tools.engine import (
    MOCKED_VALUES,
    ROOT,
    SECRET_MASK,
    Recording,
    Registration,
    run_program,
)

# The Kubernetes minor version whose OpenAPI schema the manifests are checked against (GKE's
# REGULAR channel, components/facts/pins.py). Channels move; pass the cluster's own with
# --kubernetes-version.
DEFAULT_KUBERNETES_VERSION = KUBERNETES_SCHEMA_VERSION
EXIT_OK, EXIT_FAILED, EXIT_CONFIG = 0, 1, 2
# libyaml's emitter when PyYAML was built with it (it is, on PyPI's wheels): 10x faster.
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass
class Plan:
    stack: str
    recording: Recording
    secret_keys: tuple[str, ...]
    manifests: list[dict[str, Any]]
    """Every Kubernetes object as it would be applied."""
    outputs: dict[str, dict[str, Any]]
    """Stack outputs: value (masked when secret), secret, computed."""
    config: StackConfig | None = None
    """The validated config the program ran with (the summary's facts come from it)."""
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    stack_file: Path | None = None
    """The stack file rendered: whether CI deploys it decides the plan's IAM warnings."""

    @classmethod
    def of(
        cls,
        stack: str,
        recording: Recording,
        secret_keys: tuple[str, ...] = (),
        config: StackConfig | None = None,
    ) -> Plan:
        """A plan of a recorded run, with its manifests and outputs derived once."""
        return cls(
            stack=stack,
            recording=recording,
            secret_keys=secret_keys,
            config=config,
            manifests=kubernetes_manifests(recording),
            outputs=output_entries(recording),
        )


def render(stack: str, stack_file: Path | None = None) -> Plan:
    """Run the program for a stack; raises ConfigError when the config is invalid."""
    path = stack_file or ROOT / f"Pulumi.{stack}.yaml"
    read = read_stack_file(path)
    recording = run_program(read.config, stack=stack, secret_keys=read.secret_keys, stack_file=path)
    # The program validated the same config before registering anything; load it again here for
    # the summary's facts (allocatable, requests, GPUs at max scale).
    plan = Plan.of(stack, recording, read.secret_keys, from_stack_file(read, stack))
    plan.stack_file = path
    return plan


def supported_kubernetes_versions() -> list[str]:
    from kubernetes_validate import utils

    return list(utils.all_versions())


# --- artifacts ---------------------------------------------------------------------------------


def kubernetes_manifests(recording: Recording) -> list[dict[str, Any]]:
    # Each object as it would be applied: its inputs, secrets masked. A Helm release is a Pulumi
    # resource, not a Kubernetes object: no schema, no manifest.
    return [
        dict(r.inputs)
        for r in recording.kubernetes_objects()
        if not r.type.startswith(("pulumi:providers:", "kubernetes:helm.sh/"))
    ]


def _is_computed(value: Any) -> bool:
    text = json.dumps(value, default=str)
    return any(mocked in text for mocked in MOCKED_VALUES)


def output_entries(recording: Recording) -> dict[str, dict[str, Any]]:
    return {
        name: {
            "value": SECRET_MASK if name in recording.secret_outputs else value,
            "secret": name in recording.secret_outputs,
            "computed": _is_computed(value),
        }
        for name, value in sorted(recording.stack_outputs.items())
    }


def plan_document(plan: Plan) -> dict[str, Any]:
    recording = plan.recording
    return {
        "stack": plan.stack,
        "secretConfigKeys": list(plan.secret_keys),
        "resources": [
            {
                "type": r.type,
                "name": r.name,
                "urn": r.urn,
                "custom": r.custom,
                "parent": r.parent or None,
                "provider": r.provider or None,
                "dependencies": r.dependencies,
                "protect": r.protect,
                "ignoreChanges": r.ignore_changes,
                "customTimeouts": r.custom_timeouts,
                "aliases": r.aliases,
                "inputs": r.inputs,
                "computedOutputs": r.computed,
            }
            for r in sorted(recording.resources, key=lambda r: r.urn)
        ],
        "outputs": plan.outputs,
        "problems": plan.problems,
        "warnings": plan.warnings,
    }


def _node_id(urn: str, ids: dict[str, str]) -> str:
    return ids.setdefault(urn, f"r{len(ids)}")


def mermaid_graph(recording: Recording) -> str:
    """Components as subgraphs around their resources; dotted arrows are dependencies."""
    ids: dict[str, str] = {}
    children: dict[str, list[Registration]] = {}
    by_urn = {r.urn: r for r in recording.resources}
    for r in recording.resources:
        parent = r.parent if r.parent in by_urn else ""
        children.setdefault(parent, []).append(r)
    lines = ["```mermaid", "flowchart LR"]

    def emit(parent: str, indent: str) -> None:
        for r in sorted(children.get(parent, []), key=lambda r: r.urn):
            label = f"{r.name}<br/><small>{r.type}</small>"
            node = _node_id(r.urn, ids)
            if r.urn in children:
                lines.append(f'{indent}subgraph {node}["{label}"]')
                emit(r.urn, indent + "  ")
                lines.append(f"{indent}end")
            else:
                lines.append(f'{indent}{node}["{label}"]')

    emit("", "  ")
    for r in sorted(recording.resources, key=lambda r: r.urn):
        for dependency in r.dependencies:
            if dependency in by_urn:
                lines.append(f"  {_node_id(r.urn, ids)} -.-> {_node_id(dependency, ids)}")
    lines.append("```")
    return "\n".join(lines) + "\n"


def write_artifacts(plan: Plan, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = {
        out / "plan.json": json.dumps(plan_document(plan), indent=2, default=str) + "\n",
        out / "manifests.yaml": yaml.dump_all(plan.manifests, Dumper=_Dumper, sort_keys=False),
        out / "graph.md": f"# {plan.stack}: resources and dependencies\n\n"
        + mermaid_graph(plan.recording),
    }
    for path, text in files.items():
        path.write_text(text)
    return list(files)


# --- validation --------------------------------------------------------------------------------


def schema_problems(manifests: Iterable[dict[str, Any]], version: str) -> list[str]:
    """Each object checked against the official OpenAPI schema (strict: no unknown fields)."""
    import kubernetes_validate  # imported here: only validation needs its schemas
    from kubernetes_validate import utils

    # The library re-reads its (multi-MB) schema JSON for every object; the files never change
    # within a run, so read each once. Validation itself stays the library's.
    if not hasattr(utils.schema_contents, "cache_info"):
        utils.schema_contents = functools.lru_cache(maxsize=None)(utils.schema_contents)

    problems = []
    for obj in manifests:
        name = f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"
        crd = crd_schema_path(obj)
        if crd is not None:
            problems += _crd_problems(name, obj, crd)
            continue
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(p) for p in exc.path) or "(top)"
            problems.append(f"{name}: {where}: {exc.message}")
        except kubernetes_validate.SchemaNotFoundError as exc:
            problems.append(f"{name}: no schema for {obj.get('apiVersion')} ({exc})")
    return problems


CRD_SCHEMAS = ROOT / "tools" / "crds"


def crd_schema_path(obj: dict[str, Any]) -> Path | None:
    """Custom resources (GKE's ComputeClass, Managed Prometheus' PodMonitoring, ...) are not in
    Kubernetes' OpenAPI schema: each is checked against the CRD's own OpenAPI v3 schema, vendored
    as tools/crds/<group>_<version>_<kind>.json with its source inside."""
    group, _, api_version = str(obj.get("apiVersion", "")).rpartition("/")
    path = CRD_SCHEMAS / f"{group}_{api_version}_{obj.get('kind')}.json"
    if "." not in group or (group.endswith(".k8s.io") and not path.exists()):
        # A built-in API group: Kubernetes' own schema has it. The Gateway API's group
        # (gateway.networking.k8s.io) ends the same way but is CRDs: its files are here.
        return None
    return path


def _crd_problems(name: str, obj: dict[str, Any], path: Path) -> list[str]:
    import jsonschema

    if not path.exists():
        return [f"{name}: no schema for {obj.get('apiVersion')} (add {path.relative_to(ROOT)})"]
    schema = json.loads(path.read_text())["schema"]
    validator = jsonschema.Draft202012Validator(schema)
    return [
        f"{name}: {'.'.join(str(p) for p in error.path) or '(top)'}: {error.message}"
        for error in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.path)))
    ]


def policy_findings(plan: Plan) -> tuple[list[str], list[str]]:
    """(mandatory violations, advisory ones), each naming the rule and the resource."""
    from policy.rules import evaluate

    mandatory, advisory = [], []
    for r in plan.recording.resources:
        for violation in evaluate(r.type, r.inputs, plan.stack):
            line = f"[{violation.rule}] {r.type} {r.name}: {violation.message}"
            (mandatory if violation.enforcement == "mandatory" else advisory).append(line)
    return mandatory, advisory


# --- summary -----------------------------------------------------------------------------------


def summary(plan: Plan) -> str:
    from tools import summary as summary_module
    from tools.stacks import ci_deployment

    if plan.config is None:
        return f"Stack {plan.stack}\n  {len(plan.recording.resources)} resources"
    deployment = ci_deployment(plan.stack_file) if plan.stack_file is not None else None
    return summary_module.summary(plan.stack, plan.config, plan.recording, plan.outputs, deployment)


# --- command line ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.render", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument(
        "stack",
        nargs="?",
        default="dev",
        help="stack name: reads Pulumi.<stack>.yaml (default dev)",
    )
    parser.add_argument("--out", type=Path, help="output directory (default build/<stack>)")
    parser.add_argument("--stack-file", type=Path, help="a stack file elsewhere (examples/)")
    parser.add_argument(
        "--kubernetes-version",
        default=DEFAULT_KUBERNETES_VERSION,
        help=f"schema version to validate against (default {DEFAULT_KUBERNETES_VERSION})",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="OLD/plan.json",
        help="an earlier plan.json of the same stack: print what `pulumi up` would create, "
        "update, replace and delete, and a verdict (read before this render overwrites it)",
    )
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", args.stack):
        parser.error(f"stack name {args.stack!r} has characters a Pulumi stack cannot have")
    stack_file = args.stack_file or ROOT / f"Pulumi.{args.stack}.yaml"
    if not stack_file.exists():
        parser.error(f"{stack_file} does not exist")
    if args.against is not None and not args.against.is_file():
        parser.error(f"--against {args.against} does not exist (render the old stack first)")

    from components.config import ConfigError
    from tools.plan_diff import PlanFileError, read_plan

    if (unknown := _unknown_kubernetes_version(args.kubernetes_version)) is not None:
        print(unknown, file=sys.stderr)
        return EXIT_CONFIG
    try:
        # Read before the render: the earlier plan may be the very file this one overwrites.
        against = (
            None if args.against is None else (args.against, read_plan(args.against, args.stack))
        )
        plan = render(args.stack, stack_file)
    except PlanFileError as exc:
        print(f"gke-gpu: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except ConfigError as exc:
        print(f"gke-gpu: stack {args.stack}: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    out = args.out or ROOT / "build" / args.stack
    return _check_and_report(plan, args.kubernetes_version, out, against)


def _unknown_kubernetes_version(wanted: str) -> str | None:
    versions = supported_kubernetes_versions()
    if any(v == wanted or v.startswith(wanted + ".") for v in versions):
        return None
    return (
        f"gke-gpu: --kubernetes-version {wanted!r} has no schema here "
        f"(supported: {versions[0]} to {versions[-1]}). Use the cluster's minor version, "
        "e.g. --kubernetes-version 1.33."
    )


def _check_and_report(
    plan: Plan, version: str, out: Path, against: tuple[Path, dict[str, Any]] | None = None
) -> int:
    """Validate the manifests and run the policy pack, write the artifacts, print the summary (and
    the changes against an earlier plan)."""
    plan.problems = schema_problems(plan.manifests, version)
    plan.problems += gcp_schema.problems(plan.recording)
    mandatory, advisory = policy_findings(plan)
    plan.problems += mandatory
    plan.warnings = advisory
    written = write_artifacts(plan, out)
    print(summary(plan))
    shown = [str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p) for p in written]
    print(f"  wrote {', '.join(shown)}")
    for warning in plan.warnings:
        print(f"  advisory: {warning}")
    if against is not None:
        from tools import plan_diff, plan_verdict

        changed = plan_diff.diff(against[1], plan_document(plan))
        print(plan_verdict.report(changed, str(against[0])))
    if plan.problems:
        print(f"\n{len(plan.problems)} problem(s):", file=sys.stderr)
        for problem in plan.problems:
            print(f"  - {problem}", file=sys.stderr)
        return EXIT_FAILED
    print(
        f"  OK: {len(plan.manifests)} Kubernetes objects valid against the {version} schema "
        "(strict); Cloud Monitoring resources valid against pulumi-gcp's inputs; no mandatory "
        "policy violated"
    )
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
