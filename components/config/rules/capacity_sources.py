"""Where GPUs come from: fallbacks (a ComputeClass), reservations, compact placement, flex-start.

Sources (each rule below names the one it encodes; all checked 2026-11-22):
  CRD: GKE's ComputeClass CRD schema, vendored in tools/crds/cloud.google.com_v1_ComputeClass.json
    (datreeio/CRDs-catalog at 7b1e26ef); its CEL rules include "Flex Start provisioning model is
    incompatible with Spot".
  CCC: https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes:
    custom ComputeClasses in Autopilot and Standard from 1.30.3-gke.1451000; GKE falls back to
    the next priority when one has no capacity and, with active migration, moves workloads back
    to a more preferred one when its capacity returns.
  TOOLKIT: GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool/main.tf at 1047080
    (Google's own node-pool module), its preconditions: "enable_flex_start requires
    reservation_affinity.consume_reservation_type to be 'NO_RESERVATION'", "Both enable_flex_start
    and spot consumption option cannot be set to true at the same time", "enable_flex_start needs
    node auto_repair set to false", "Spot consumption option only works with reservation_affinity
    consume_reservation_type NO_RESERVATION", "Compact placement is only available for node pools
    operating in a single zone", "Compact placement with DWS Flex start is only supported for A3
    Ultra, A4, and H4D machine types".
  DWS: https://cloud.google.com/kubernetes-engine/docs/concepts/dws (read in its zh-CN version):
    flex-start for GPUs needs "GKE 1.32.2-gke.1652000 or later"; flex-start VMs run "up to 7
    days".
  COMPACT: https://cloud.google.com/kubernetes-engine/docs/how-to/compact-placement: compact
    placement is "Available only with A100, L4, and H100 GPUs" and "for Pods grouped on up to
    1,500 nodes" (its Autopilot section; the Standard section could not be read here).
  NAP: https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning ("Any
    resource limits that you set for the cluster when you enable node auto-provisioning also
    apply to the node pools that GKE creates for ComputeClasses") and pulumi-gcp 10.2.0
    ClusterClusterAutoscalingArgs: "Resource limits for cpu and memory must be defined to enable
    node auto-provisioning for GKE Standard" and they "apply to node pool autoscaling in addition
    to node auto-provisioning", so they cover every pool, not only the auto-created ones.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Literal

from components import allocatable, catalog, pins
from components.allocatable import Resources
from components.config.model import (
    CapacityChoice,
    NodePoolConfig,
    Reservation,
    WorkloadConfig,
)
from components.config.rules import fit
from components.config.rules.drivers import needs_latest_driver
from components.config.rules.pools import choices, gpu_type_problems
from components.config.schema import (
    FallbackSpec,
    Mode,
    NodePoolSpec,
    ReservationSpec,
    SystemPoolSpec,
    WorkloadSpec,
)

# DWS: the oldest GKE version whose GPU node pools take flex-start.
FLEX_START_MIN_GKE = "1.32.2-gke.1652000"
# COMPACT names A100, L4 and H100; TOOLKIT allows compact placement with flex-start on A3 Ultra
# (H200) and A4 (B200), so those two take it as well.
COMPACT_GPUS = frozenset(
    {
        "nvidia-tesla-a100",
        "nvidia-a100-80gb",
        "nvidia-l4",
        "nvidia-h100-80gb",
        "nvidia-h100-mega-80gb",
        "nvidia-h200-141gb",
        "nvidia-b200",
    }
)
COMPACT_FLEX_START_GPUS = frozenset({"nvidia-h200-141gb", "nvidia-b200"})  # TOOLKIT
# COMPACT groups up to 1,500 nodes; schema.NodePoolSpec caps maxNodes at 1,000, so no pool can
# exceed it and no rule is needed.
# ComputeClass names may not start with these (CCC, "Limitations"); the program's prefix avoids
# them for any workload name. A label value is at most 63 characters.
CLASS_PREFIX = "gpu-"
LABEL_VALUE_MAX = 63
# GKE spreads a regional cluster's node pools over three zones by default
# (https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters: "the default node
# pool ... nine nodes (three per zone) ... across three zones").
REGIONAL_DEFAULT_ZONES = 3


def system_node_count(nodes_per_zone: int, location: str, region: str) -> int:
    """The system pool's nodes in all: its node_count is per zone, and a regional cluster
    spreads it over REGIONAL_DEFAULT_ZONES zones."""
    return nodes_per_zone * (1 if location != region else REGIONAL_DEFAULT_ZONES)


def consumption_of(spot: bool, flex_start: bool, reservation: object) -> str:
    """How a pool or priority buys its VMs, in the catalog's words (catalog.model)."""
    if flex_start:
        return catalog.FLEX_START
    if spot:
        return catalog.SPOT
    if reservation is not None:
        return catalog.RESERVATION
    return catalog.ON_DEMAND


def _sold(machines: Sequence[catalog.MachineType]) -> str:
    ways = frozenset().union(*(m.consumption for m in machines)) if machines else frozenset()
    return ", ".join(w for w in catalog.CONSUMPTION_ORDER if w in ways) or "nothing"


def reservation(value: ReservationSpec | str | None) -> Reservation | None:
    if value is None:
        return None
    return Reservation(None if isinstance(value, str) else value.name)


def class_name(workload: str) -> str:
    """The workload's ComputeClass: `gpu-<workload>`, shortened with a hash past 63 chars."""
    name = CLASS_PREFIX + workload
    if len(name) <= LABEL_VALUE_MAX:
        return name
    digest = hashlib.sha256(workload.encode()).hexdigest()[:8]
    return f"{name[: LABEL_VALUE_MAX - 9].rstrip('-')}-{digest}"


# --- node pools ---------------------------------------------------------------------------------


def sold_as_wanted(
    spec: NodePoolSpec, machines: Sequence[catalog.MachineType]
) -> tuple[catalog.MachineType, ...]:
    """The candidate machines Compute Engine sells the way the pool buys them."""
    way = consumption_of(spec.spot, spec.flex_start, spec.reservation)
    return tuple(m for m in machines if way in m.consumption)


def pool_problems(
    i: int,
    spec: NodePoolSpec,
    machines: Sequence[catalog.MachineType],
    location: str,
    region: str,
    channel: str | None,
) -> list[str]:
    """Reservation, compact placement and flex-start rules of one node pool."""
    path = f"nodePools[{i}]"
    problems: list[str] = []
    if spec.flex_start and spec.spot:
        problems.append(
            f"{path}.flexStart: flex-start and Spot are two different ways to buy the VMs, and "
            "GKE takes one per pool (cluster-toolkit gke-node-pool: 'Both enable_flex_start and "
            "spot ... cannot be set to true'). Remove spot or flexStart."
        )
    if spec.flex_start and spec.reservation is not None:
        problems.append(
            f"{path}.reservation: flex-start nodes never consume a reservation (their "
            "reservation affinity must be NO_RESERVATION). Remove reservation, or flexStart."
        )
    elif spec.spot and spec.reservation is not None:
        problems.append(
            f"{path}.reservation: Spot VMs do not consume reservations (a Spot pool's "
            "reservation affinity must be NO_RESERVATION). Remove reservation, or spot."
        )
    if spec.flex_start and spec.min_nodes > 0:
        problems.append(
            f"{path}.minNodes: flex-start nodes are created only when a pod waits for them and "
            "capacity frees up; a pool cannot keep any warm. Set minNodes: 0 (or drop flexStart "
            "for a warm pool)."
        )
    if spec.flex_start and channel in pins.CHANNEL_DEFAULT_VERSION:
        default = pins.CHANNEL_DEFAULT_VERSION[channel]
        if pins.gke_version(default) < pins.gke_version(FLEX_START_MIN_GKE):
            problems.append(
                f"{path}.flexStart: flex-start GPU pools need GKE {FLEX_START_MIN_GKE} or later, "
                f"and the {channel} channel creates clusters at {default}. Use a newer channel."
            )
    if spec.placement == "compact":
        problems += _compact_problems(path, spec, location, region)
    if machines and spec.gpu.type is not None:
        way = consumption_of(spec.spot, spec.flex_start, spec.reservation)
        if not sold_as_wanted(spec, machines):
            names = ", ".join(sorted({m.name for m in machines}))
            problems.append(
                f"{path}: {names} ({spec.gpu.type}) is not sold {_way(way)} by Compute Engine "
                f"(sold as: {_sold(machines)}). Set reservation: {{name: <your reservation>}} "
                "(or reservation: any), flexStart: true, or spot: true, whichever you have."
            )
    return problems


def _way(way: str) -> str:
    return {
        catalog.ON_DEMAND: "on demand",
        catalog.SPOT: "as Spot VMs",
        catalog.FLEX_START: "through flex-start",
        catalog.RESERVATION: "from reservations",
    }[way]


def _compact_problems(path: str, spec: NodePoolSpec, location: str, region: str) -> list[str]:
    problems = []
    zonal_cluster = location != region
    if not zonal_cluster and len(spec.zones) != 1:
        problems.append(
            f"{path}.zones: compact placement puts the pool's nodes close together in one zone "
            f"(cluster-toolkit: 'only available for node pools operating in a single zone'); "
            f"this pool spans {len(spec.zones) or 'all the cluster'}'s zones. List one zone, "
            f"e.g. zones: [{region}-a]."
        )
    if spec.gpu.type is not None and spec.gpu.type not in COMPACT_GPUS:
        offered = choices(tuple(sorted(COMPACT_GPUS)))
        problems.append(
            f"{path}.placement: GKE offers compact placement with {offered} GPUs, not "
            f"{spec.gpu.type}. Remove placement, or use one of those GPU types."
        )
    elif spec.flex_start and spec.gpu.type not in COMPACT_FLEX_START_GPUS:
        problems.append(
            f"{path}.placement: compact placement with flex-start is only supported on A3 Ultra "
            "and A4 machines (nvidia-h200-141gb, nvidia-b200). Remove placement or flexStart."
        )
    return problems


def pool_extras(spec: NodePoolSpec) -> dict[str, object]:
    """The NodePoolConfig fields this module owns (dataclasses.replace on the resolved pool)."""
    return {
        "reservation": reservation(spec.reservation),
        "placement": spec.placement,
        "flex_start": spec.flex_start,
    }


# --- workloads: fallbacks and their ComputeClass ----------------------------------------------


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


def workload_problems(
    i: int, w: WorkloadSpec, mode: Mode | None, requests: Resources
) -> tuple[list[str], tuple[CapacityChoice, ...]]:
    """Every priority of the workload's ComputeClass (its own choice, then `fallback` in order),
    validated like its own GPU; and the resolved priorities when all are valid."""
    if not w.fallback:
        return [], ()
    path = f"workloads[{i}]"
    if mode == "existing":
        return [
            f"{path}.fallback: fallbacks become a GKE ComputeClass, which an existing cluster "
            "does not have. Remove fallback."
        ], ()
    if mode is None or w.gpu.type is None or w.gpu.type not in catalog.GPU_TYPES:
        return [], ()  # the mode's or the GPU type's own problem says what to fix
    driver: Literal["default", "latest"] = "latest" if needs_latest_driver(w) else "default"
    problems: list[str] = []
    resolved: list[CapacityChoice] = []
    seen: dict[tuple[str, int, bool, bool, Reservation | None], str] = {}
    own = FallbackSpec(gpu=w.gpu, spot=w.spot)
    for j, alt in [(-1, own), *enumerate(w.fallback)]:
        where = path if j < 0 else f"{path}.fallback[{j}]"
        gpu_type = (alt.gpu.type if alt.gpu is not None else None) or w.gpu.type
        count = alt.gpu.count if alt.gpu is not None else w.gpu.count
        res = reservation(alt.reservation)
        alt_problems = _priority_problems(where, j < 0, alt, gpu_type, count, mode, w)
        key = (gpu_type, count, alt.spot, alt.flex_start, res)
        if key in seen and not alt_problems:
            alt_problems.append(
                f"{where}: repeats {seen[key]} ({_describe(key)}), so GKE would try the same "
                "capacity twice. Remove it or change it."
            )
        seen.setdefault(key, where if j >= 0 else "the workload's own choice")
        if alt_problems:
            problems += alt_problems
            continue
        way = consumption_of(alt.spot, alt.flex_start, alt.reservation)
        # The node must also hold what GKE injects beside the pod (the FUSE sidecar).
        side = fit.sidecar(w)
        whole = Resources(
            requests.cpu_millicores + side.cpu_millicores,
            requests.memory_bytes + side.memory_bytes,
        )
        machine, sold = smallest_fitting_machine(gpu_type, count, whole, way)
        if not sold:
            machines = catalog.machine_types_for(gpu_type, count)
            problems.append(
                f"{where}: {count} x {gpu_type} is not sold {_way(way)} by Compute Engine "
                f"(sold as: {_sold(machines)}). Choose another way to buy it (spot, flexStart "
                "or reservation) or another GPU."
            )
            continue
        if machine is None:
            largest = sold[-1]
            room = allocatable.pod_allocatable(largest.vcpus, largest.memory_gb)
            problems.append(
                f"{where}.gpu: the pod requests {_cores(requests)} / {_gib(requests)}, more "
                f"than any machine carrying {count} x {gpu_type} leaves for pods (the largest, "
                f"{largest.name}, leaves {_cores(room)} / {_gib(room)}), so GKE could never "
                f"place it there. Lower {path}.resources, or choose a bigger GPU count."
            )
            continue
        resolved.append(
            CapacityChoice(
                gpu_type=gpu_type,
                gpu_count=count,
                spot=alt.spot,
                flex_start=alt.flex_start,
                reservation=res,
                machine_type=machine.name,
                driver_version=driver,
            )
        )
    return problems, tuple(resolved) if not problems else ()


def _priority_problems(
    where: str,
    own: bool,
    alt: FallbackSpec,
    gpu_type: str,
    count: int,
    mode: Mode,
    w: WorkloadSpec,
) -> list[str]:
    problems: list[str] = []
    if not own:
        problems += gpu_type_problems(f"{where}.gpu.type", gpu_type)
        if problems:
            return problems
    gpu = catalog.lookup(gpu_type)
    if mode == "autopilot" and not own and count not in gpu.autopilot_counts:
        problems.append(
            f"{where}.gpu.count: {count} GPUs per pod is not allowed for {gpu.name} on "
            f"Autopilot (allowed: {choices(gpu.autopilot_counts) or 'none'}). Set one of those."
        )
    elif mode == "standard" and count not in gpu.node_counts:
        problems.append(
            f"{where}.gpu.count: {count} GPUs is not a node shape of {gpu.name} (allowed: "
            f"{choices(gpu.node_counts)}); GKE creates a node of exactly that many for each "
            "pod. Set one of those."
        )
    if alt.flex_start and alt.spot:
        problems.append(
            f"{where}.flexStart: flex-start cannot be combined with Spot (ComputeClass rule "
            "'Flex Start provisioning model is incompatible with Spot'). Remove spot."
        )
    if alt.reservation is not None and (alt.spot or alt.flex_start):
        problems.append(
            f"{where}.reservation: Spot and flex-start VMs never consume reservations. Remove "
            "reservation, or spot/flexStart."
        )
    if (
        not own
        and needs_latest_driver(w)
        and gpu.compute_capability != (0, 0)
        and gpu.compute_capability < pins.VLLM_MIN_COMPUTE_CAPABILITY
    ):
        problems.append(
            f"{where}.gpu.type: {w.image} is a CUDA {pins.VLLM_CUDA} build and {gpu.name} is "
            f"too old for it (compute capability {'.'.join(map(str, gpu.compute_capability))}); "
            "the fallback would crash. Pick a newer GPU."
        )
    return problems


def _cores(r: Resources) -> str:
    return f"{r.cpu_millicores / 1000:g} CPU"


def _gib(r: Resources) -> str:
    return f"{r.memory_bytes / 2**30:.1f} GiB"


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
) -> tuple[tuple[str, int], ...]:
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
        nodes = (1 if w.kind == "Job" else w.max_replicas) + 1  # a node per pod, and a spare
        shapes = [catalog.machine_for(c.gpu_type, c.gpu_count, c.machine_type) for c in w.capacity]
        cpu += nodes * max(m.vcpus for m in shapes if m is not None)
        memory += nodes * max(math.ceil(m.memory_gb) for m in shapes if m is not None)
        per_type: dict[str, int] = {}
        for c in w.capacity:
            per_type[c.gpu_type] = max(per_type.get(c.gpu_type, 0), c.gpu_count)
        for gpu_type, count in per_type.items():
            gpus[gpu_type] = gpus.get(gpu_type, 0) + nodes * count
    return (("cpu", cpu), ("memory", memory), *sorted(gpus.items()))
