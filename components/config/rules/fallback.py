"""A workload's fallbacks: the priorities of its ComputeClass, tried in order, and the node
auto-provisioning limits a Standard cluster needs for them (sources in capacity_sources.py)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from typing import Literal

from ...facts import allocatable, catalog, pins
from ...facts.allocatable import Resources
from .. import formats
from ..context import Context
from ..model import CapacityChoice, WorkloadConfig
from ..platform_model import NodePoolConfig, ProvisioningLimit, Reservation
from ..problems import Problem
from ..schema import FallbackSpec, Mode, SystemPoolSpec, WorkloadSpec
from ..variants import kind_spec
from . import fit
from .capacity_sources import (
    consumption_of,
    reservation,
    sold_text,
    system_node_count,
    way_text,
)
from .drivers import image_cuda, needs_latest_driver
from .pools import choices, gpu_type_problems


def smallest_fitting_machine(
    gpu_type: str, count: int, requests: Resources, way: str
) -> tuple[catalog.MachineType | None, tuple[catalog.MachineType, ...]]:
    """The smallest default machine carrying `count` x `gpu_type`, sold `way`, whose allocatable
    (less GKE's system pods) holds `requests`; and every machine sold `way`."""
    sold = tuple(m for m in catalog.machine_types_for(gpu_type, count) if way in m.consumption)
    for machine in sold:
        room = allocatable.pod_allocatable(machine.vcpus, machine.memory_gb)
        if requests.fits_in(room):
            return machine, sold
    return None, sold


def _describe(choice: tuple[str, int, bool, bool, Reservation | None]) -> str:
    gpu_type, count, spot, flex, res = choice
    how = "flex-start" if flex else "Spot" if spot else "on-demand"
    if res is not None:
        how += f", reservation {res.name or 'any'}"
    return f"{count} x {gpu_type} ({how})"


def plan(
    i: int, w: WorkloadSpec, ctx: Context, requests: Resources
) -> tuple[list[Problem], tuple[CapacityChoice, ...]]:
    """Every priority of the workload's ComputeClass (its own choice, then `fallback` in order),
    validated like its own GPU; and the resolved priorities when all are valid."""
    if not w.fallback:
        return [], ()
    path = f"workloads[{i}]"
    if ctx.existing:
        return [
            Problem(
                f"{path}.fallback",
                "fallbacks become a GKE ComputeClass, which an existing cluster "
                "does not have. Remove fallback.",
            )
        ], ()
    mode = ctx.mode
    if mode is None or w.gpu.type is None or w.gpu.type not in catalog.GPU_TYPES:
        return [], ()  # the mode's or the GPU type's own problem says what to fix
    problems: list[Problem] = []
    resolved: list[CapacityChoice] = []
    seen: dict[tuple[str, int, bool, bool, Reservation | None], str] = {}
    own = FallbackSpec(gpu=w.gpu, spot=w.spot)
    for j, alt in [(-1, own), *enumerate(w.fallback)]:
        where = path if j < 0 else f"{path}.fallback[{j}]"
        gpu_type = (alt.gpu.type if alt.gpu is not None else None) or w.gpu.type
        count = alt.gpu.count if alt.gpu is not None else w.gpu.count
        res = reservation(alt.reservation)
        alt_problems = list(_priority_problems(where, j < 0, alt, (gpu_type, count), mode, w, ctx))
        key = (gpu_type, count, alt.spot, alt.flex_start, res)
        if key in seen and not alt_problems:
            alt_problems.append(
                Problem(
                    f"{where}",
                    f"repeats {seen[key]} ({_describe(key)}), so GKE would try the same "
                    "capacity twice. Remove it or change it.",
                )
            )
        seen.setdefault(key, where if j >= 0 else "the workload's own choice")
        if alt_problems:
            problems += alt_problems
            continue
        choice = _choice(where, path, alt, gpu_type, count, res, w, requests)
        if isinstance(choice, Problem):
            problems.append(choice)
        else:
            resolved.append(choice)
    return problems, tuple(resolved) if not problems else ()


def _choice(
    where: str,
    path: str,
    alt: FallbackSpec,
    gpu_type: str,
    count: int,
    res: Reservation | None,
    w: WorkloadSpec,
    requests: Resources,
) -> CapacityChoice | Problem:
    """The priority's machine: the smallest sold its way that holds the pod, else why none."""
    driver: Literal["default", "latest"] = "latest" if needs_latest_driver(w) else "default"
    way = consumption_of(alt.spot, alt.flex_start, alt.reservation)
    # The node must also hold what GKE injects beside the pod (the FUSE sidecar).
    machine, sold = smallest_fitting_machine(gpu_type, count, fit.with_sidecar(w, requests), way)
    if not sold:
        machines = catalog.machine_types_for(gpu_type, count)
        return Problem(
            f"{where}",
            f"{count} x {gpu_type} is not sold {way_text(way)} by Compute Engine "
            f"(sold as: {sold_text(machines)}). Choose another way to buy it (spot, flexStart "
            "or reservation) or another GPU.",
        )
    if machine is None:
        largest = sold[-1]
        room = allocatable.pod_allocatable(largest.vcpus, largest.memory_gb)
        return Problem(
            f"{where}.gpu",
            f"the pod requests {formats.resources(requests)}, more "
            f"than any machine carrying {count} x {gpu_type} leaves for pods (the largest, "
            f"{largest.name}, leaves {formats.resources(room)}), so GKE could never "
            f"place it there. Lower {path}.resources, or choose a bigger GPU count.",
        )
    return CapacityChoice(
        gpu_type=gpu_type,
        gpu_count=count,
        spot=alt.spot,
        flex_start=alt.flex_start,
        reservation=res,
        machine_type=machine.name,
        driver_version=driver,
    )


def _priority_problems(
    where: str,
    own: bool,
    alt: FallbackSpec,
    gpus: tuple[str, int],
    mode: Mode,
    w: WorkloadSpec,
    ctx: Context,
) -> Iterator[Problem]:
    gpu_type, count = gpus
    unknown = [] if own else gpu_type_problems(f"{where}.gpu.type", gpu_type, ctx)
    if unknown:
        yield from unknown
        return
    gpu = catalog.lookup(gpu_type)
    if mode == "autopilot" and not own and count not in gpu.autopilot_counts:
        yield Problem(
            f"{where}.gpu.count",
            f"{count} GPUs per pod is not allowed for {gpu.name} on Autopilot (allowed: "
            f"{choices(gpu.autopilot_counts) or 'none'}). Set one of those.",
        )
    elif mode == "standard" and count not in gpu.node_counts:
        yield Problem(
            f"{where}.gpu.count",
            f"{count} GPUs is not a node shape of {gpu.name} (allowed: "
            f"{choices(gpu.node_counts)}); GKE creates a node of exactly that many for each "
            "pod. Set one of those.",
        )
    if alt.flex_start and alt.spot:
        yield Problem(
            f"{where}.flexStart",
            "flex-start cannot be combined with Spot (ComputeClass rule "
            "'Flex Start provisioning model is incompatible with Spot'). Remove spot.",
        )
    if alt.reservation is not None and (alt.spot or alt.flex_start):
        yield Problem(
            f"{where}.reservation",
            "Spot and flex-start VMs never consume reservations. Remove "
            "reservation, or spot/flexStart.",
        )
    cuda = image_cuda(w)
    if (
        not own
        and cuda is not None
        and cuda.needs_r580
        and gpu.compute_capability != (0, 0)
        and gpu.compute_capability < pins.VLLM_MIN_COMPUTE_CAPABILITY
    ):
        yield Problem(
            f"{where}.gpu.type",
            f"{ctx.show(where.split('.fallback')[0] + '.image', w.image)} is a CUDA "
            f"{cuda.version} build and {gpu.name} is too old for it "
            f"(compute capability {'.'.join(map(str, gpu.compute_capability))}); the "
            "fallback would crash. Pick a newer GPU.",
        )


# --- Standard: node auto-provisioning limits ------------------------------------------------


def _system_shape(machine_type: str) -> tuple[int, int]:
    """(vCPUs, GB) of a system-pool machine, an upper bound: the vCPUs are the name's last number
    (e2-standard-2 -> 2); memory is taken as 8 GB per vCPU, no less than standard (4) and
    highmem (8) shapes of E2/N2 have. An estimate, not a catalog fact: a limit is a ceiling, so
    too high costs nothing, while too low would stop scale-up."""
    match = re.search(r"-(\d+)$", machine_type)
    vcpus = int(match.group(1)) if match else 32
    return vcpus, vcpus * 8


def auto_provisioning_limits(
    mode: Mode,
    location: str,
    region: str,
    system_pool: SystemPoolSpec,
    pools: Sequence[NodePoolConfig],
    workloads: Sequence[WorkloadConfig],
) -> tuple[ProvisioningLimit, ...]:
    """NAP's resource limits: everything every pool and every ComputeClass workload may use at
    once at its maximum (NAP's limits count all nodes), with one spare node per class workload:
    a rollout's surge pod, or active migration's new node before the old one drains."""
    if mode != "standard" or not any(w.capacity for w in workloads):
        return ()
    system_nodes = system_node_count(system_pool.nodes, location, region)
    vcpus, memory_gb = _system_shape(system_pool.machine_type)
    cpu = vcpus * system_nodes
    memory = memory_gb * system_nodes
    gpus: dict[str, int] = {}
    for pool in pools:
        machine = catalog.machine_for(pool.gpu_type, pool.gpu_count, pool.machine_type)
        if machine is not None:
            cpu += machine.vcpus * pool.max_nodes
            memory += math.ceil(machine.memory_gb) * pool.max_nodes
        gpus[pool.gpu_type] = gpus.get(pool.gpu_type, 0) + pool.gpu_count * pool.max_nodes
    for w in workloads:
        if not w.capacity:
            continue
        # A node per replica (one for a kind that holds none, a Job), and a spare.
        nodes = (w.max_replicas if kind_spec(w.spec).holds_replicas else 1) + 1
        shapes = [catalog.machine_for(c.gpu_type, c.gpu_count, c.machine_type) for c in w.capacity]
        cpu += nodes * max(m.vcpus for m in shapes if m is not None)
        memory += nodes * max(math.ceil(m.memory_gb) for m in shapes if m is not None)
        per_type: dict[str, int] = {}
        for c in w.capacity:
            per_type[c.gpu_type] = max(per_type.get(c.gpu_type, 0), c.gpu_count)
        for gpu_type, count in per_type.items():
            gpus[gpu_type] = gpus.get(gpu_type, 0) + nodes * count
    limits = (("cpu", cpu), ("memory", memory), *sorted(gpus.items()))
    return tuple(ProvisioningLimit(resource, maximum) for resource, maximum in limits)
