"""What the platform's public components check of their own Args: every problem at once, each
at its property path, raised before the component registers anything.

The rules are the config layer's: a pool's settings go through the stack file's own schema and
pool rules (rules/pools.py, capacity_sources.py, coldstart.py), their key paths turned into the
Args' property paths, so a TypeScript or YAML consumer gets the errors a stack file gets.
"""

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import fields
from typing import Any

import pulumi
from pydantic.alias_generators import to_camel

from . import formats
from .context import Context
from .parse import parse
from .platform_model import (
    ClusterConfig,
    ClusterMode,
    DevicePluginConfig,
    DevicePluginKind,
    GpuPool,
    Reservation,
    Sharing,
)
from .problems import Problem, Problems
from .rules import capacity_sources, coldstart, pools
from .schema import DevicePluginSharingSpec, NodePoolSpec

POOL = "nodePools[0]"
# Stack-file keys of a pool whose GpuPool property is named otherwise.
_POOL_KEYS = {"gpu.type": "gpuType", "gpu.count": "gpuCount", "gpu": "gpuType"}


class ArgsError(pulumi.RunError):
    """Every problem of a component's Args; Pulumi prints it without a Python traceback."""

    def __init__(self, component: str, name: str, problems: Sequence[Problem]) -> None:
        self.problems = [f'{component} "{name}": {p}' for p in problems]
        self.details = list(problems)  # at their key paths (components/serve/provider.py)
        listing = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(
            f'{len(problems)} problem(s) in the Args of {component} "{name}"; '
            f"nothing was created:\n{listing}"
        )

    @classmethod
    def check(cls, component: str, name: str, problems: Iterable[Problem]) -> None:
        found = list(problems)
        if found:
            raise cls(component, name, found)


def region_of(location: str) -> str:
    """The region of a cluster location: itself, or the region of its zone."""
    return location.rsplit("-", 1)[0] if formats.matches(formats.ZONE, location) else location


def pool_args_problems(pool: GpuPool, location: str, base: str = "pool") -> list[Problem]:
    """A GPU pool's settings under the stack file's schema and pool rules (GpuNodePoolArgs)."""
    ctx = Context(mode="standard", region=region_of(location), location=location)
    found = Problems()
    spec = parse(NodePoolSpec, pool_keys(pool), POOL, found, ctx)
    if spec is not None:
        for rule in (pools.pool_problems, capacity_sources.pool_problems, coldstart.pool_problems):
            found += rule(0, spec, ctx)
    return [Problem(_args_path(p.path, base), p.message) for p in found.final()]


def pool_keys(pool: GpuPool) -> dict[str, Any]:
    """The pool as a stack file would write it (nodePools[] keys), its unset settings left out."""
    raw: dict[str, Any] = {"gpu": {"type": pool.gpu_type, "count": pool.gpu_count or 1}}
    for f in fields(GpuPool):
        value = getattr(pool, f.name)
        if value is None or f.name in ("gpu_type", "gpu_count", "service_account"):
            continue
        raw[to_camel(f.name)] = _plain(value)
    return raw


def _plain(value: object) -> Any:
    if isinstance(value, Reservation):
        return "any" if value.any else {"name": value.name}
    if isinstance(value, Sharing):
        return {"strategy": str(value.strategy), "maxClientsPerGpu": value.max_clients_per_gpu}
    if isinstance(value, str):
        return str(value)  # an Enum's value: the schema is strict about str
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _args_path(path: str, base: str) -> str:
    rest = path.removeprefix(POOL).lstrip(".")
    head = re.match(r"[A-Za-z]+(?:\.[A-Za-z]+)?", rest)
    if head and head.group(0) in _POOL_KEYS:
        rest = _POOL_KEYS[head.group(0)] + rest[head.end() :]
    return f"{base}.{rest}" if rest else base


def cluster_args_problems(cluster: ClusterConfig, region: str) -> Iterator[Problem]:
    """A GKE cluster's name, location, authorized networks and system pool (GkeClusterArgs)."""
    if not formats.matches(formats.GKE_NAME, cluster.name):
        yield Problem(
            "cluster.name", f"{formats.show(cluster.name)} {formats.hint(formats.GKE_NAME)}"
        )
    if cluster.location != region and not cluster.location.startswith(region + "-"):
        yield Problem(
            "cluster.location",
            f"{cluster.location!r} is not the region {region!r} or one of its zones. Use "
            f"{region} (a regional cluster) or a zone such as '{region}-a'.",
        )
    yield from pools.cidr_problems(
        "cluster.masterAuthorizedNetworks", list(cluster.master_authorized_networks), Context()
    )
    if cluster.mode == ClusterMode.STANDARD and cluster.system_nodes < 1:
        yield Problem(
            "cluster.systemNodes",
            f"{cluster.system_nodes}: a Standard cluster needs at least 1 system node (per zone) "
            "for the cluster's own pods and the gates. Set systemNodes to 1 or more.",
        )


def existing_args_problems(kubeconfig: object, context: str | None) -> list[Problem]:
    """An existing cluster is reached through a kubeconfig or a context (ExistingClusterArgs)."""
    if (kubeconfig is None) == (context is None):
        return [
            Problem(
                "kubeconfig",
                "give a kubeconfig or a context of the ambient kubeconfig (one of them, not "
                f"{'both' if context is not None else 'neither'}).",
            )
        ]
    return []


def plugin_args_problems(plugin: DevicePluginConfig) -> list[Problem]:
    """Time-slicing and the nodes NVIDIA's static plugin runs on (NvidiaDevicePluginArgs)."""
    found = Problems()
    if plugin.sharing_replicas is not None:
        raw = {"replicas": plugin.sharing_replicas}
        parse(DevicePluginSharingSpec, raw, "plugin.sharingReplicas", found, Context())
        if plugin.type == DevicePluginKind.NONE:
            found += [
                Problem(
                    "plugin.sharingReplicas",
                    "type 'none' deploys nothing, so nothing would time-slice the GPUs. "
                    "Remove sharingReplicas, or use type static or gpu-operator.",
                )
            ]
    for i, term in enumerate(plugin.node_selector_terms):
        for j, (key, value) in enumerate(term):
            where = f"plugin.nodeSelectorTerms[{i}][{j}]"
            if not formats.matches(formats.LABEL_KEY, key):
                found += [Problem(f"{where}.key", formats.hint(formats.LABEL_KEY))]
            if not formats.matches(formats.K8S_LABEL_VALUE, value):
                found += [
                    Problem(
                        f"{where}.value",
                        f"{formats.show(value)} {formats.hint(formats.K8S_LABEL_VALUE)}",
                    )
                ]
    return [Problem(p.path.replace(".replicas", ""), p.message) for p in found.found]


def installer_args_problems(pool_names: Sequence[str]) -> list[Problem]:
    """The pools a driver installer serves, by their pool label (NvidiaDriverInstallerArgs)."""
    if not pool_names:
        return [Problem("pools", "names no node pool, so the installer would run nowhere.")]
    return [
        Problem(f"pools[{i}]", f"{formats.show(name)} {formats.hint(formats.GKE_NAME)}")
        for i, name in enumerate(pool_names)
        if not formats.matches(formats.GKE_NAME, name)
    ]
