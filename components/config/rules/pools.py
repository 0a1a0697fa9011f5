"""GPU types, counts, machine types, sharing and MIG of a node pool; the machine a pool gets."""

from __future__ import annotations

import ipaddress

from components import allocatable, catalog
from components.catalog import zones
from components.config.model import NodePoolConfig, Sharing
from components.config.parse import Context
from components.config.schema import NodePoolSpec


def cidr_problems(path: str, values: list[str] | tuple[str, ...], ctx: Context) -> list[str]:
    problems = []
    for i, value in enumerate(values):
        try:
            ipaddress.ip_network(value, strict=True)
        except (ValueError, TypeError) as exc:
            why = "host bits are set" if "host bits" in str(exc) else "not an address/prefix"
            problems.append(
                f"{path}[{i}]: {ctx.show(f'{path}[{i}]', value)} is not a CIDR block ({why}). "
                "Use a network address with a prefix length, e.g. '203.0.113.0/24'."
            )
    return problems


def gpu_type_problems(path: str, gpu_type: str | None) -> list[str]:
    if gpu_type is None:
        return []
    if gpu_type in catalog.RETIRED:
        return [f"{path}: {gpu_type!r} is no longer offered: {catalog.RETIRED[gpu_type]}."]
    if gpu_type not in catalog.GPU_TYPES:
        known = ", ".join(sorted(catalog.GPU_TYPES))
        return [f"{path}: {gpu_type!r} is not a GKE GPU type. Use one of: {known}."]
    return []


def choices(values: tuple[int, ...] | tuple[str, ...]) -> str:
    return ", ".join(str(v) for v in values)


def pool_problems(
    i: int, spec: NodePoolSpec, location: str, region: str
) -> tuple[list[str], tuple[catalog.MachineType, ...]]:
    """Problems of one node pool, and the machine types it may get (smallest first).

    An explicit machineType gives one candidate; none gives every type that carries the GPUs,
    and the loader later picks the smallest that also fits the pool's workloads.
    """
    path = f"nodePools[{i}]"
    problems = gpu_type_problems(f"{path}.gpu.type", spec.gpu.type)
    if spec.gpu.type is None:
        problems.append(
            f"{path}.gpu.type: required for a GPU node pool. Set it to a GKE GPU type "
            "such as 'nvidia-l4'."
        )
    candidates: tuple[catalog.MachineType, ...] = ()
    if not problems and spec.gpu.type is not None:
        gpu = catalog.lookup(spec.gpu.type)
        if spec.gpu.count not in gpu.node_counts:
            nearest = [c for c in gpu.node_counts if c > spec.gpu.count][:1] or gpu.node_counts[-1:]
            problems.append(
                f"{path}.gpu.count: {spec.gpu.count} GPUs is not a valid count for {gpu.name} "
                f"(allowed: {choices(gpu.node_counts)}). Set count to {nearest[0]}."
            )
        elif spec.machine_type is not None:
            machine = catalog.machine_for(gpu.name, spec.gpu.count, spec.machine_type)
            candidates = (machine,) if machine is not None else ()
            if machine is None:
                why = catalog.machine_problem(gpu.name, spec.gpu.count, spec.machine_type)
                fitting = catalog.machine_types_for(gpu.name, spec.gpu.count)
                problems.append(
                    f"{path}.machineType: {why or 'not a machine type for this GPU'}. Machine "
                    f"types for {spec.gpu.count} x {gpu.name}: "
                    f"{choices(tuple(m.name for m in fitting))} (or leave machineType unset for "
                    "the smallest that fits)."
                )
        else:
            candidates = catalog.machine_types_for(gpu.name, spec.gpu.count)
        if spec.sharing is not None:
            supported = gpu.time_sharing if spec.sharing.strategy == "TIME_SHARING" else gpu.mps
            if not supported:
                problems.append(
                    f"{path}.sharing.strategy: {spec.sharing.strategy} is not supported on "
                    f"{gpu.name} by GKE. Remove sharing or pick a GPU type that supports it."
                )
            if spec.partition_size is not None and spec.sharing.strategy == "MPS":
                problems.append(
                    f"{path}.sharing: MPS cannot be combined with MIG partitions on GKE. "
                    "Use TIME_SHARING with partitionSize, or drop partitionSize."
                )
        if spec.partition_size is not None and spec.partition_size not in gpu.mig_partitions:
            allowed = choices(gpu.mig_partitions) if gpu.mig_partitions else "none (no MIG)"
            problems.append(
                f"{path}.partitionSize: {spec.partition_size!r} is not a MIG partition of "
                f"{gpu.name} (allowed: {allowed}). "
                + (
                    "Pick one of those sizes."
                    if gpu.mig_partitions
                    else "Remove partitionSize or use an A100/H100 pool."
                )
            )
    if spec.min_nodes > spec.max_nodes:
        problems.append(
            f"{path}.minNodes: {spec.min_nodes} is more than maxNodes ({spec.max_nodes}). "
            f"Set minNodes <= maxNodes."
        )
    if spec.driver == "latest" and spec.image_type != "COS_CONTAINERD":
        problems.append(
            f"{path}.driver: 'latest' needs imageType COS_CONTAINERD (GKE installs LATEST "
            f"drivers only on Container-Optimized OS), got {spec.image_type}. Use driver "
            "'default', or 'installer' for Ubuntu."
        )
    known = zones.zones_of(region)
    for j, zone in enumerate(spec.zones):
        if not zone.startswith(region + "-"):
            problems.append(
                f"{path}.zones[{j}]: {zone!r} is not in the cluster's region {region!r}. "
                f"Use zones of {region} (e.g. '{region}-a')."
            )
        elif location != region and zone != location:
            problems.append(
                f"{path}.zones[{j}]: {zone!r} differs from the zonal cluster's location "
                f"{location!r}. A zonal cluster's pools live in its zone: remove zones or make "
                "the cluster regional."
            )
        elif known is not None and zone not in known:
            problems.append(
                f"{path}.zones[{j}]: {zone!r} is not a zone of {region} (zones: "
                f"{', '.join(known)}; source: {zones.SOURCE}). Use one of those."
            )
    if len(set(spec.zones)) != len(spec.zones):
        problems.append(f"{path}.zones: {list(spec.zones)} lists a zone twice. List each once.")
    if spec.gpu.type is not None and not gpu_type_problems(f"{path}.gpu.type", spec.gpu.type):
        problems += gpu_zone_problems(path, spec.gpu.type, spec.zones, location, region)
    return problems, candidates


def gpu_zone_problems(
    path: str, gpu: str, pool_zones: list[str] | tuple[str, ...], location: str, region: str
) -> list[str]:
    """A pool's GPU must be offered where its nodes run: in the region at all, in a zonal
    cluster's zone, and in each zone the pool names. Nothing is refused where catalog.zones does
    not know (a GPU type without zone data, a region not in its table)."""
    in_region = zones.gpu_zones(gpu, region)
    regions = zones.gpu_regions(gpu) or ()
    known = zones.zones_of(region) or ()
    if in_region == () or (in_region is None and regions and known and region not in regions):
        shown = ", ".join(regions[:6]) + (", ..." if len(regions) > 6 else "")
        return [
            f"{path}.gpu.type: {gpu} is not offered in any zone of {region} (regions with it: "
            f"{shown}; source: {zones.SOURCE}). Pick a GPU offered in {region}, or deploy the "
            "stack to one of those regions (gcp:region)."
        ]
    if not in_region:
        return []
    where = f"zones of {region} with {gpu}: {', '.join(in_region)}; source: {zones.SOURCE}"
    if location != region:
        if location in in_region or not location.startswith(region + "-"):
            return []  # a location outside the region is cluster.location's problem
        what = "is not a zone of " + region if location not in known else f"does not offer {gpu}"
        return [
            f"{path}.gpu.type: the zonal cluster's zone {location!r} {what} ({where}). "
            f"Set cluster.location to one of those (or to {region} for a regional cluster), or "
            "pick another GPU."
        ]
    return [
        f"{path}.zones[{j}]: {zone} does not offer {gpu} ({where}). Pick one of those, or "
        "another GPU."
        for j, zone in enumerate(pool_zones)
        if zone in known and zone not in in_region
    ]


def resolve_pool(
    spec: NodePoolSpec, name: str, location: str, region: str, machine_type: str = ""
) -> NodePoolConfig:
    """The pool as configured; the loader's fit() sets machine_type when it is left empty."""
    assert spec.gpu.type is not None
    return NodePoolConfig(
        name=name,
        gpu_type=spec.gpu.type,
        gpu_count=spec.gpu.count,
        machine_type=machine_type,
        spot=spec.spot,
        min_nodes=spec.min_nodes,
        max_nodes=spec.max_nodes,
        min_nodes_reason=spec.min_nodes_reason,
        # No zones named: the region's zones that offer the GPU rather than GKE's default, the
        # cluster's zones, some of which may not have it. On a pool already deployed this
        # changes node_locations, which GKE updates in place (components/nodepool.py,
        # replacement_settings): the pool is not replaced and keeps its name.
        zones=tuple(spec.zones) or zones.default_zones(spec.gpu.type, region, location),
        image_type=spec.image_type,
        driver=spec.driver or "default",  # the loader derives it from the pool's workloads
        sharing=(
            Sharing(spec.sharing.strategy, spec.sharing.max_clients_per_gpu)
            if spec.sharing
            else None
        ),
        partition_size=spec.partition_size,
        system_overhead=(
            (
                allocatable.parse_cpu(spec.system_overhead.cpu or "0"),
                allocatable.parse_memory(spec.system_overhead.memory or "0"),
            )
            if spec.system_overhead is not None
            else (
                allocatable.GPU_NODE_SYSTEM_OVERHEAD.cpu_millicores,
                allocatable.GPU_NODE_SYSTEM_OVERHEAD.memory_bytes,
            )
        ),
    )
