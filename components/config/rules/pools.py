"""GPU types, counts, machine types, sharing and MIG of a node pool; the machine a pool gets."""

from __future__ import annotations

import ipaddress
from decimal import Decimal

from components import catalog
from components.config.formats import GIB, quantity_bytes, quantity_cores
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
        else:
            machine_type = spec.machine_type
            fitting = catalog.machine_types_for(gpu.name, spec.gpu.count)
            candidates = tuple(m for m in fitting if machine_type in (None, m.name))
            if machine_type is not None and not candidates:
                family = machine_type.split("-")[0]
                why = (
                    f"{machine_type!r} is {family.upper()}, but {gpu.name} runs on "
                    f"{gpu.family.upper()} machine types"
                    if family != gpu.family
                    else f"{machine_type!r} cannot carry {spec.gpu.count} x {gpu.name}"
                )
                problems.append(
                    f"{path}.machineType: {why}. Machine types for "
                    f"{spec.gpu.count} x {gpu.name}: {choices(tuple(m.name for m in fitting))} "
                    "(or leave machineType unset for the smallest)."
                )
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
    if len(set(spec.zones)) != len(spec.zones):
        problems.append(f"{path}.zones: {list(spec.zones)} lists a zone twice. List each once.")
    return problems, candidates


def machine_type(
    pool: NodePoolConfig,
    index: int,
    machines: tuple[catalog.MachineType, ...],
    workloads: list[tuple[int, str, str]],
    problems: list[str],
) -> str:
    """The pool's machine type: the smallest candidate whose vCPUs and memory hold every
    workload placed on it (requests compared with capacity; the kubelet reserves a little)."""
    cores = max((quantity_cores(cpu) for _, cpu, _ in workloads), default=Decimal(0))
    memory = max((quantity_bytes(mem) for _, _, mem in workloads), default=Decimal(0))
    for machine in machines:
        if machine.vcpus >= cores and Decimal(machine.memory_gb) * GIB >= memory:
            return machine.name
    largest = machines[-1]
    for i, cpu, mem in workloads:
        requests = {"cpu": cpu, "memory": mem}
        for key, wanted, have, unit in (
            ("cpu", quantity_cores(cpu), Decimal(largest.vcpus), "vCPUs"),
            ("memory", quantity_bytes(mem), Decimal(largest.memory_gb) * GIB, "GiB"),
        ):
            if wanted > have:
                shown = largest.vcpus if key == "cpu" else largest.memory_gb
                problems.append(
                    f"workloads[{i}].resources.{key}: {requests[key]} is more than the "
                    f"{shown} {unit} of {largest.name}, the largest machine type node pool "
                    f"{pool.name!r} (nodePools[{index}]) can have for {pool.gpu_count} x "
                    f"{pool.gpu_type}. Lower the request, or give the pool more GPUs per node."
                    if len(machines) > 1
                    else f"workloads[{i}].resources.{key}: {requests[key]} is more "
                    f"than the {shown} {unit} of {largest.name} in node pool {pool.name!r} "
                    f"(nodePools[{index}].machineType). Lower the request or pick a larger "
                    "machine type (or unset machineType to get the smallest that fits)."
                )
    return largest.name


def resolve_pool(spec: NodePoolSpec, name: str, machine_type: str) -> NodePoolConfig:
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
        zones=tuple(spec.zones),
        image_type=spec.image_type,
        driver=spec.driver,
        sharing=(
            Sharing(spec.sharing.strategy, spec.sharing.max_clients_per_gpu)
            if spec.sharing
            else None
        ),
        partition_size=spec.partition_size,
    )
