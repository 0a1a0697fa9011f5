"""GPU types, counts, machine types, sharing and MIG of a node pool; the machine a pool gets."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from ...facts import catalog
from ...facts.catalog import zones
from ..context import Context
from ..problems import Problem
from ..schema import NodePoolSpec


def cidr_problems(
    path: str, values: list[str] | tuple[str, ...], ctx: Context
) -> Iterator[Problem]:
    for i, value in enumerate(values):
        try:
            ipaddress.ip_network(value, strict=True)
        except (ValueError, TypeError) as exc:
            why = "host bits are set" if "host bits" in str(exc) else "not an address/prefix"
            yield Problem(
                f"{path}[{i}]",
                f"{ctx.show(f'{path}[{i}]', value)} is not a CIDR block ({why}). "
                "Use a network address with a prefix length, e.g. '203.0.113.0/24'.",
            )


def gpu_type_problems(path: str, gpu_type: str | None, ctx: Context | None = None) -> list[Problem]:
    """An unknown or retired GPU type; `ctx` decides whether a wrong one is shown (a value
    pasted in the wrong place may be a secret). A retired type is the catalog's word."""
    if gpu_type is None:
        return []
    if gpu_type in catalog.RETIRED:
        return [Problem(path, f"{gpu_type!r} is no longer offered: {catalog.RETIRED[gpu_type]}.")]
    if gpu_type not in catalog.GPU_TYPES:
        known = ", ".join(sorted(catalog.GPU_TYPES))
        shown = (ctx or Context()).show(path, gpu_type)
        return [Problem(path, f"{shown} is not a GKE GPU type. Use one of: {known}.")]
    return []


def choices(values: tuple[int, ...] | tuple[str, ...]) -> str:
    return ", ".join(str(v) for v in values)


def machine_candidates(spec: NodePoolSpec) -> tuple[catalog.MachineType, ...]:
    """The machine types the pool may get, smallest first: the one machineType names, or (none
    named) every type that carries its GPUs; the loader picks the smallest that also fits the
    pool's workloads. None while its GPU type or count is wrong."""
    gpu_type = spec.gpu.type
    if gpu_type is None or gpu_type_problems("", gpu_type):
        return ()
    if spec.gpu.count not in catalog.lookup(gpu_type).node_counts:
        return ()
    if spec.machine_type is None:
        return catalog.machine_types_for(gpu_type, spec.gpu.count)
    machine = catalog.machine_for(gpu_type, spec.gpu.count, spec.machine_type)
    return (machine,) if machine is not None else ()


def pool_problems(i: int, spec: NodePoolSpec, ctx: Context) -> Iterator[Problem]:
    """A node pool's GPUs, machine, sharing, node counts, driver and zones."""
    path = f"nodePools[{i}]"
    yield from _gpu_problems(path, spec, ctx)
    if spec.min_nodes > spec.max_nodes:
        yield Problem(
            f"{path}.minNodes",
            f"{spec.min_nodes} is more than maxNodes ({spec.max_nodes}). Set minNodes <= maxNodes.",
        )
    if spec.driver == "latest" and spec.image_type != "COS_CONTAINERD":
        yield Problem(
            f"{path}.driver",
            f"'latest' needs imageType COS_CONTAINERD (GKE installs LATEST "
            f"drivers only on Container-Optimized OS), got {spec.image_type}. Use driver "
            "'default', or 'installer' for Ubuntu.",
        )
    yield from _zone_problems(path, spec, ctx.location, ctx.region)


def _gpu_problems(path: str, spec: NodePoolSpec, ctx: Context) -> list[Problem]:
    problems = gpu_type_problems(f"{path}.gpu.type", spec.gpu.type, ctx)
    if spec.gpu.type is None:
        problems.append(
            Problem(
                f"{path}.gpu.type",
                "required for a GPU node pool. Set it to a GKE GPU type such as 'nvidia-l4'.",
            )
        )
    if problems or spec.gpu.type is None:
        return problems
    gpu = catalog.lookup(spec.gpu.type)
    if spec.gpu.count not in gpu.node_counts:
        nearest = [c for c in gpu.node_counts if c > spec.gpu.count][:1] or gpu.node_counts[-1:]
        problems.append(
            Problem(
                f"{path}.gpu.count",
                f"{spec.gpu.count} GPUs is not a valid count for {gpu.name} "
                f"(allowed: {choices(gpu.node_counts)}). Set count to {nearest[0]}.",
            )
        )
    elif spec.machine_type is not None and not machine_candidates(spec):
        why = catalog.machine_problem(gpu.name, spec.gpu.count, spec.machine_type)
        fitting = catalog.machine_types_for(gpu.name, spec.gpu.count)
        problems.append(
            Problem(
                f"{path}.machineType",
                f"{why or 'not a machine type for this GPU'}. Machine types for {spec.gpu.count} "
                f"x {gpu.name}: {choices(tuple(m.name for m in fitting))} (or leave machineType "
                "unset for the smallest that fits).",
            )
        )
    problems += _sharing_problems(path, spec, gpu)
    return problems


def _sharing_problems(path: str, spec: NodePoolSpec, gpu: catalog.GpuType) -> Iterator[Problem]:
    """Time-sharing, MPS and MIG partitions as GKE offers them on the pool's GPU."""
    if spec.sharing is not None:
        supported = gpu.time_sharing if spec.sharing.strategy == "TIME_SHARING" else gpu.mps
        if not supported:
            yield Problem(
                f"{path}.sharing.strategy",
                f"{spec.sharing.strategy} is not supported on "
                f"{gpu.name} by GKE. Remove sharing or pick a GPU type that supports it.",
            )
        if spec.partition_size is not None and spec.sharing.strategy == "MPS":
            yield Problem(
                f"{path}.sharing",
                "MPS cannot be combined with MIG partitions on GKE. "
                "Use TIME_SHARING with partitionSize, or drop partitionSize.",
            )
    if spec.partition_size is not None and spec.partition_size not in gpu.mig_partitions:
        allowed = choices(gpu.mig_partitions) if gpu.mig_partitions else "none (no MIG)"
        yield Problem(
            f"{path}.partitionSize",
            f"{spec.partition_size!r} is not a MIG partition of {gpu.name} (allowed: {allowed}). "
            + (
                "Pick one of those sizes."
                if gpu.mig_partitions
                else "Remove partitionSize or use an A100/H100 pool."
            ),
        )


def _zone_problems(path: str, spec: NodePoolSpec, location: str, region: str) -> Iterator[Problem]:
    known = zones.zones_of(region)
    for j, zone in enumerate(spec.zones):
        if not zone.startswith(region + "-"):
            yield Problem(
                f"{path}.zones[{j}]",
                f"{zone!r} is not in the cluster's region {region!r}. "
                f"Use zones of {region} (e.g. '{region}-a').",
            )
        elif location != region and zone != location:
            yield Problem(
                f"{path}.zones[{j}]",
                f"{zone!r} differs from the zonal cluster's location {location!r}. A zonal "
                "cluster's pools live in its zone: remove zones or make the cluster regional.",
            )
        elif known is not None and zone not in known:
            yield Problem(
                f"{path}.zones[{j}]",
                f"{zone!r} is not a zone of {region} (zones: "
                f"{', '.join(known)}; source: {zones.SOURCE}). Use one of those.",
            )
    if len(set(spec.zones)) != len(spec.zones):
        yield Problem(f"{path}.zones", f"{list(spec.zones)} lists a zone twice. List each once.")
    if spec.gpu.type is not None and not gpu_type_problems(f"{path}.gpu.type", spec.gpu.type):
        yield from gpu_zone_problems(path, spec.gpu.type, spec.zones, location, region)


def gpu_zone_problems(
    path: str, gpu: str, pool_zones: list[str] | tuple[str, ...], location: str, region: str
) -> list[Problem]:
    """A pool's GPU must be offered where its nodes run: in the region at all, in a zonal
    cluster's zone, and in each zone the pool names. Nothing is refused where catalog.zones does
    not know (a GPU type without zone data, a region not in its table)."""
    in_region = zones.gpu_zones(gpu, region)
    regions = zones.gpu_regions(gpu) or ()
    known = zones.zones_of(region) or ()
    if in_region == () or (in_region is None and regions and known and region not in regions):
        shown = ", ".join(regions[:6]) + (", ..." if len(regions) > 6 else "")
        return [
            Problem(
                f"{path}.gpu.type",
                f"{gpu} is not offered in any zone of {region} (regions with it: "
                f"{shown}; source: {zones.SOURCE}). Pick a GPU offered in {region}, or deploy the "
                "stack to one of those regions (gcp:region).",
            )
        ]
    if not in_region:
        return []
    where = f"zones of {region} with {gpu}: {', '.join(in_region)}; source: {zones.SOURCE}"
    if location != region:
        if location in in_region or not location.startswith(region + "-"):
            return []  # a location outside the region is cluster.location's problem
        what = "is not a zone of " + region if location not in known else f"does not offer {gpu}"
        return [
            Problem(
                f"{path}.gpu.type",
                f"the zonal cluster's zone {location!r} {what} ({where}). Set cluster.location to "
                f"one of those (or to {region} for a regional cluster), or pick another GPU.",
            )
        ]
    return [
        Problem(
            f"{path}.zones[{j}]",
            f"{zone} does not offer {gpu} ({where}). Pick one of those, or another GPU.",
        )
        for j, zone in enumerate(pool_zones)
        if zone in known and zone not in in_region
    ]
