"""The stack's top-level keys: checked as keys first (project and region, sizes, unknown keys,
secrets where none make sense, whose values are then skipped and never shown), then each parsed
(parse.py: whatever parses is checked further by the rules)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import defaults, formats
from .context import Context
from .parse import parse, parse_list
from .problems import ConfigError, Problem, Problems
from .rules import cluster as cluster_rules
from .rules import credentials, names, sizes
from .schema import MODES, ClusterSpec, Mode, NodePoolSpec, WorkloadSpec
from .schema.monitoring import MonitoringSpec
from .source import KNOWN_KEYS, SECRET_PLACEHOLDER


@dataclass(frozen=True)
class Parsed:
    """What parsed of the stack's keys (broken leaves left out, parse.py)."""

    cluster: ClusterSpec | None
    pools: list[tuple[int, NodePoolSpec]]
    workloads: list[tuple[int, WorkloadSpec]]
    namespace: Any
    monitoring: MonitoringSpec | None


def mode(raw_cluster: Any) -> Mode | None:
    """The mode drives the other checks even when `cluster` itself has problems."""
    if not isinstance(raw_cluster, Mapping):
        return None
    value = raw_cluster.get("mode", "autopilot")
    return next((m for m in MODES if m == value), None)


def kubeconfig_key(raw_cluster: Any) -> str | None:
    value = raw_cluster.get("kubeconfig") if isinstance(raw_cluster, Mapping) else None
    return value if isinstance(value, str) else None


def items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _referenced_keys(raw: Mapping[str, Any]) -> set[str]:
    """Top-level keys named by cluster.kubeconfig or secretEnv (they get their own message)."""
    kubeconfig = kubeconfig_key(raw.get("cluster"))
    found = {kubeconfig} if kubeconfig is not None else set()
    for item in items(raw.get("workloads")):
        if isinstance(item, Mapping) and isinstance(item.get("secretEnv"), Mapping):
            found.update(v for v in item["secretEnv"].values() if isinstance(v, str))
    return found


def secret_lengths(raw: Mapping[str, Any]) -> dict[str, int]:
    """The length of each key secretEnv names whose value is a string the program can see (not
    the offline plan's placeholder); the values themselves go no further."""
    return {
        key: len(value)
        for key in _referenced_keys(raw)
        if isinstance(value := raw.get(key), str) and value != SECRET_PLACEHOLDER
    }


def check(
    raw: Mapping[str, Any],
    ctx: Context,
    project: str | None,
    hidden: frozenset[str],
    problems: Problems,
) -> tuple[dict[str, Any], Any]:
    """The keys themselves; returns what is parsed of them: the keys without the secret values
    where none make sense, and `cluster` without a kubeconfig written out as YAML."""
    if not ctx.existing:  # an existing cluster needs no Google Cloud project or region
        problems += names.project_problems(project, "gcp:project" in hidden)
        problems += names.region_problems(ctx.region or None, "gcp:region" in hidden)
    oversized = sizes.size_problems(raw)
    if oversized:  # nothing else is worth reading (or safe to walk) in such a value
        raise ConfigError([*problems.found, *oversized])
    referenced = _referenced_keys(raw)
    problems += [
        Problem(
            f"gke-gpu:{key}",
            f"unknown key. Known keys: {', '.join(sorted(KNOWN_KEYS))}. Check the "
            "spelling (secrets for workloads[].secretEnv are set with --secret).",
        )
        for key in raw
        if key not in KNOWN_KEYS and key not in referenced
    ]
    # Secrets where none make sense are reported, and their values skipped, before parsing: the
    # placeholder of a `secure:` count is not also called "not a number", and no rule can echo
    # the secret in a message about another key (a secret gpu.type in a placement message).
    kept = copy.deepcopy(dict(raw))
    for problem in credentials.placement_problems(ctx, len(items(raw.get("workloads")))):
        problems.own(problem)
        _skip(kept, formats.split(problem.path))
    raw_cluster = kept.get("cluster") or {}
    if isinstance(raw_cluster, Mapping) and isinstance(raw_cluster.get("kubeconfig"), Mapping):
        # A kubeconfig pasted in as YAML: never let a type error echo it (credentials).
        problems.own(
            Problem(
                "cluster.kubeconfig",
                "holds a kubeconfig written out as YAML (not shown here, as it may hold "
                "credentials). Store it as a secret string instead: "
                f"`{cluster_rules.KUBECONFIG_FIX}`.",
            )
        )
        raw_cluster = {k: v for k, v in raw_cluster.items() if k != "kubeconfig"}
    return kept, raw_cluster


def _skip(data: Any, parts: list[str | int]) -> None:
    """The value at a key path below a top-level key replaced by null: never parsed, so never
    shown (what parse.py finds wrong there is under a path already reported)."""
    for part in parts[:-1]:
        data = _child(data, part)
    last = parts[-1]
    if len(parts) > 1 and _child(data, last) is not None:
        data[last] = None


def _child(data: Any, part: str | int) -> Any:
    if isinstance(data, dict):
        return data.get(part)
    if isinstance(data, list) and isinstance(part, int) and part < len(data):
        return data[part]
    return None


def parse_all(raw: Mapping[str, Any], raw_cluster: Any, ctx: Context, problems: Problems) -> Parsed:
    cluster = parse(ClusterSpec, raw_cluster, "cluster", problems, ctx)
    pool_specs = parse_list(NodePoolSpec, raw.get("nodePools"), "nodePools", problems, ctx)
    raw_workloads = raw.get("workloads")
    if raw_workloads is None:
        raw_workloads = defaults.default_workloads(ctx.mode)
    workload_specs = parse_list(WorkloadSpec, raw_workloads, "workloads", problems, ctx)
    namespace = raw.get("namespace", defaults.DEFAULT_NAMESPACE)
    # A secret namespace is already reported (never shown); checking its name would echo it.
    if not problems.is_broken("namespace"):
        problems += names.namespace_problems(namespace)
    raw_monitoring = raw.get("monitoring")
    monitoring = parse(
        MonitoringSpec,
        {} if raw_monitoring is None else raw_monitoring,
        "monitoring",
        problems,
        ctx,
    )
    return Parsed(cluster, pool_specs, workload_specs, namespace, monitoring)
