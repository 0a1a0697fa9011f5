"""One workload resolved on its own, from a GpuService's Args: the loader's parse, rules and
decisions for the workload and the node pools it may land on, given the cluster keys they read
instead of the whole stack. Every problem at once, with its path in the Args (`workload.gpu.count`,
`nodePools[0].machineType`, `cluster.mode`); nothing read from the engine.

The Args arrive as TypedDicts (components/config/workload_args.py, generated from the schema):
snake_case keys and Enums, which `to_raw` turns back into the stack file's shape.
"""

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from . import build, keys, loader
from .context import Context
from .model import WorkloadConfig
from .parse import parse, parse_list
from .problems import ConfigError, Problem, Problems
from .rules import cluster as cluster_rules
from .schema import ClusterSpec, NodePoolSpec, WorkloadSpec

# The loader's path of the one workload, and the Args' (GpuServiceArgs.workload).
STACK_PATH, ARGS_PATH = "workloads[0]", "workload"


def to_raw(value: Any, model: type[BaseModel] | None) -> Any:
    """A value of the generated TypedDicts as the stack file writes it: each key of `model` by
    its alias (camelCase), Enums by their value, a whole number as an int, a user's own map
    (env, nodeSelector) as is."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        if model is None:
            return {k: to_raw(v, None) for k, v in value.items()}
        fields = model.model_fields
        return {
            (fields[k].alias or k) if k in fields else k: to_raw(
                v, _model_in(fields[k].annotation) if k in fields else None
            )
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [to_raw(v, model) for v in value]
    if isinstance(value, float) and value.is_integer():
        # Numbers cross the wire as floats. Pulumi's provider host means to turn an integer
        # input back into an int (pulumi/pulumi#21944), but in the SDK pinned here (3.272.0,
        # pulumi/provider/experimental/component.py lines 276-287) the plain value overwrites
        # the converted one. The schema has no float key, so a whole number is an int.
        return int(value)
    return value


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The schema model a field holds (through Annotated, Optional and list), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (typing.Annotated, typing.Union, types.UnionType, list):
        return next(filter(None, (_model_in(a) for a in get_args(annotation))), None)
    return None


@dataclass(frozen=True)
class Resolved:
    workload: WorkloadConfig
    cluster: ClusterSpec
    """The cluster keys as parsed, defaults applied."""


def resolve(
    workload: Mapping[str, Any],
    cluster: Mapping[str, Any],
    node_pools: Sequence[Mapping[str, Any]],
    *,
    region: str,
    project: str = "",
    secret_env: Sequence[str] = (),
    secret_args: bool = False,
) -> Resolved:
    """The workload's config, decided as the stack's loader decides it; or ConfigError listing
    every problem of the workload, its pools and the cluster keys.

    `secret_env`: keys of the workload's env whose values are secrets; `secret_args`: its args
    may hold one (which is unknown), so every env value is treated as one too.
    """
    raw_cluster = to_raw(cluster, ClusterSpec)
    raw = {
        "cluster": raw_cluster,
        "nodePools": to_raw(list(node_pools), NodePoolSpec),
        "workloads": [to_raw(workload, WorkloadSpec)],
    }
    secret = bool(secret_env) or secret_args
    # secretEnv names the Args' secrets, handed over as Inputs (the caller checks each is there),
    # not config keys that might have been set in plain text.
    entry = raw["workloads"][0]
    named = entry.get("secretEnv") if isinstance(entry, Mapping) else None
    handed = [v for v in named.values() if isinstance(v, str)] if isinstance(named, Mapping) else []
    ctx = Context(
        secret_keys=frozenset([*(["workloads"] if secret else []), *handed]),
        secure_paths=None
        if secret_args
        else frozenset(f"{STACK_PATH}.env.{key}" for key in secret_env),
        mode=keys.mode(raw_cluster),
        region=region,
        project=project,
    )
    problems = Problems()
    spec = parse(ClusterSpec, raw_cluster, "cluster", problems, ctx)
    parsed = keys.Parsed(
        spec,
        parse_list(NodePoolSpec, raw["nodePools"], "nodePools", problems, ctx),
        parse_list(WorkloadSpec, raw["workloads"], "workloads", problems, ctx),
        None,
        None,
    )
    ctx = dataclasses.replace(
        ctx,
        cluster=spec,
        cluster_name=(spec.name if spec else None) or "",
        location=(spec.location if spec else None) or region,
        device_plugin=cluster_rules.device_plugin(None, ctx, problems),
    )
    decided, _, ctx = loader.decide(raw, parsed, ctx, problems)
    reported = problems.final()
    if reported or spec is None or not decided:
        raise ConfigError([_in_args(p) for p in reported])
    return Resolved(build.workload(decided[0], ctx), spec)


def _in_args(problem: Problem) -> Problem:
    """The problem at its path in the Args: `workload.…` for the loader's `workloads[0].…`."""
    path = ARGS_PATH + problem.path.removeprefix(STACK_PATH)
    return Problem(
        path if problem.path.startswith(STACK_PATH) else problem.path,
        problem.message.replace(STACK_PATH, ARGS_PATH),
    )
