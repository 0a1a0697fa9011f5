"""What GKE will really schedule: pods within a node's allocatable, pools that hold their
workloads at maximum scale, and rollouts that never wait for a GPU the pool cannot add.

A pod whose requests exceed what its node leaves for pods stays Pending and the autoscaler never
scales up for it ("pod didn't trigger scale-up: it wouldn't fit"); so does a replica beyond the
pool's GPUs at maxNodes, and a surge pod on a pool with no spare GPU. `pulumi up` would wait
40 minutes for each and fail. All three are checked here, from the allocatable figures in
components/facts/allocatable.py (GKE's reservations, less GKE's own DaemonSets on GPU nodes).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ...facts import allocatable, catalog
from ...facts.allocatable import Resources
from .. import formats
from ..platform_model import NodePoolConfig
from ..problems import Problem
from ..schema import Mode, NodePoolSpec, WorkloadSpec
from ..variants import kind_spec
from . import streamer
from .coldstart import FUSE_SIDECAR_MEMORY_BYTES, FUSE_SIDECAR_MILLICORES

# Requests of a GKE workload whose GPU count no machine carries: a stand-in, as that count's own
# problem is reported and nothing is built (existing clusters assume no requests at all).
UNSIZED_DEFAULT = Resources(4000, 16 * 2**30)
# Instances of one MIG profile an NVIDIA A100/H100/H200/B200 can hold: 7 of 1g, 3 of 2g, 2 of 3g,
# 1 of 4g and 1 of 7g (NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles"; GKE's
# device plugin enforces the same maxima in container-engine-accelerators
# pkg/gpu/nvidia/mig/mig.go gpuPartitionSizeMaxCount).
MIG_INSTANCES = {1: 7, 2: 3, 3: 2, 4: 1, 7: 1}


def slots_per_node(spec: NodePoolSpec) -> int:
    """How many `nvidia.com/gpu: 1` containers one node of the pool can serve at once."""
    per_gpu = 1
    if spec.partition_size is not None:
        match = re.match(r"(\d+)g\.", spec.partition_size)
        per_gpu = MIG_INSTANCES.get(int(match.group(1)), 1) if match else 1
    if spec.sharing is not None:
        per_gpu *= spec.sharing.max_clients_per_gpu
    return spec.gpu.count * per_gpu


def idle_pods(w: WorkloadSpec) -> int:
    """Pods a workload that holds replicas keeps up with no traffic; any other (a Job) has pods
    only while it runs."""
    if not kind_spec(w).holds_replicas:
        return 0
    return (w.autoscale.min_replicas if w.autoscale is not None else w.replicas) * w.hosts


def pinned_nodes(pool: NodePoolConfig, placed: Sequence[tuple[int, WorkloadSpec]]) -> int:
    """Nodes of `pool` its workloads' idle pods hold: their GPUs (or GPU slots on a shared
    pool) packed onto the pool's nodes."""
    if pool.shared:
        slots, per_node = sum(idle_pods(w) for _, w in placed), pool.slots_per_node
    else:
        slots, per_node = sum(idle_pods(w) * w.gpu.count for _, w in placed), pool.gpu_count
    return -(-slots // per_node) if per_node else 0


def pods(w: WorkloadSpec) -> int:
    """Pods of the workload at its maximum: replicas (the HPA's maxReplicas when autoscaled),
    or, for a kind that holds none (a Job), its `parallelism` (one by default); each replica a
    group of `hosts` pods."""
    if not kind_spec(w).holds_replicas:
        return w.parallelism or 1
    return (w.autoscale.max_replicas if w.autoscale is not None else w.replicas) * w.hosts


def sidecar(w: WorkloadSpec) -> Resources:
    """What GKE injects next to each pod of the workload: the Cloud Storage FUSE sidecar's
    requests when it mounts a model cache (not one vLLM streams) or writes an output bucket
    (rules/coldstart.py has the source), else nothing."""
    if (w.model_cache is None or streamer.streams(w)) and w.output is None:
        return Resources(0, 0)
    return Resources(FUSE_SIDECAR_MILLICORES, FUSE_SIDECAR_MEMORY_BYTES)


def with_sidecar(w: WorkloadSpec, requests: Resources) -> Resources:
    """What a pod's node must hold: its requests and what GKE injects beside it."""
    side = sidecar(w)
    return Resources(
        requests.cpu_millicores + side.cpu_millicores, requests.memory_bytes + side.memory_bytes
    )


def node_allocatable(pool: NodePoolConfig, machine: catalog.MachineType) -> Resources:
    """What one node of `machine` offers pods, GKE's system pods included."""
    return allocatable.node_allocatable(
        machine.vcpus,
        machine.memory_gb,
        os_image="ubuntu" if pool.image_type.startswith("UBUNTU") else "cos",
        image_streaming=pool.image_streaming,
    )


def pod_room(pool: NodePoolConfig, machine: catalog.MachineType) -> Resources:
    """CPU and memory one node of `machine` leaves for the pool's workload pods."""
    return allocatable.pod_allocatable(
        machine.vcpus,
        machine.memory_gb,
        Resources(*pool.system_overhead),
        os_image="ubuntu" if pool.image_type.startswith("UBUNTU") else "cos",
        # Image streaming makes GKE reserve more memory on each node (allocatable.py, GKE_CA).
        image_streaming=pool.image_streaming,
    )


# What a GPU pod with unset requests gets at least per GPU when the machine is chosen for it: the
# project's default model-server size (4 CPU, 16 GiB), the figure components/facts/allocatable.py
# uses for Autopilot (AUTOPILOT_REQUEST_PER_GPU).
DEFAULT_PER_GPU = allocatable.AUTOPILOT_REQUEST_PER_GPU


def _at_least(w: WorkloadSpec, wanted: Resources, gpus: int) -> bool:
    cpu_ok = w.resources.cpu is not None or (
        wanted.cpu_millicores >= DEFAULT_PER_GPU.cpu_millicores * gpus
    )
    memory_ok = w.resources.memory is not None or (
        wanted.memory_bytes >= DEFAULT_PER_GPU.memory_bytes * gpus
    )
    return cpu_ok and memory_ok


def requests(w: WorkloadSpec, share: Resources) -> Resources:
    """The pod's requests: resources.cpu and memory as set, else `share`."""
    cpu, memory = w.resources.cpu, w.resources.memory
    return Resources(
        allocatable.parse_cpu(cpu) if cpu else share.cpu_millicores,
        allocatable.parse_memory(memory) if memory else share.memory_bytes,
    )


@dataclass
class PoolFit:
    """A pool's machine and what each of its workloads requests and gets on it."""

    machine: catalog.MachineType
    room: Resources
    requests: dict[int, Resources] = field(default_factory=dict)
    per_node: dict[int, int] = field(default_factory=dict)
    """Workload index -> pods of it one node holds (GPUs, CPU and memory together)."""
    problems: list[Problem] = field(default_factory=list)


def keeps_whole_room(w: WorkloadSpec) -> bool:
    """A kind whose pod template is immutable (a Job): a change of its derived requests replaces
    the object, which runs again (tools/replacing.py). Its requests keep the whole room (as before
    DERIVED_SHARE), so an upgrade of the program does not re-run a finished fine-tune; a CronJob's
    next runs take the new template in place, so it gets the headroom."""
    return kind_spec(w).immutable_template


def _fit(
    pool: NodePoolConfig,
    machine: catalog.MachineType,
    placed: Sequence[tuple[int, WorkloadSpec]],
    floor: bool,
) -> PoolFit:
    room = pod_room(pool, machine)
    slots = pool.slots_per_node
    result = PoolFit(machine, room)
    for i, w in placed:
        gpus = 1 if pool.shared else w.gpu.count
        by_gpu = slots // gpus
        # Each pod's sidecar (model cache) comes out of the node before the pods' shares.
        extra = sidecar(w)
        left = room - Resources(extra.cpu_millicores * by_gpu, extra.memory_bytes * by_gpu)
        share = allocatable.default_requests(left, slots, gpus, headroom=not keeps_whole_room(w))
        wanted = requests(w, share)
        result.requests[i] = wanted
        if floor and not pool.shared and not _at_least(w, wanted, gpus):
            result.per_node[i] = 0
            continue
        by_cpu = room.cpu_millicores // max(wanted.cpu_millicores + extra.cpu_millicores, 1)
        by_memory = room.memory_bytes // max(wanted.memory_bytes + extra.memory_bytes, 1)
        result.per_node[i] = min(by_gpu, by_cpu, by_memory)
    return result


def choose_machine(
    pool: NodePoolConfig,
    index: int,
    machines: Sequence[catalog.MachineType],
    placed: Sequence[tuple[int, WorkloadSpec]],
    named: bool,
) -> PoolFit:
    """The smallest candidate machine on which every workload's pod fits a node; else the
    largest, with one problem per request that does not fit, naming both numbers.

    A default machine also leaves each pod with unset requests at least DEFAULT_PER_GPU: the
    smallest shape's share can be far too little for a model server (n1-standard-1 leaves a T4
    pod a third of a CPU).
    """
    fits: list[PoolFit] = []
    for floor in (True, False) if not named else (False,):
        fits = [_fit(pool, m, placed, floor) for m in machines]
        for candidate in fits:
            if all(candidate.per_node[i] >= 1 for i, _ in placed):
                return candidate
    largest = fits[-1]
    where = (
        f"node pool {pool.name!r} (nodePools[{index}].machineType)"
        if named
        else f"{largest.machine.name}, the largest machine node pool {pool.name!r} "
        f"(nodePools[{index}]) can have for {pool.gpu_count} x {pool.gpu_type}"
    )
    fix = (
        "pick a larger machineType (or unset it to get the smallest that fits)"
        if named
        else "give the pool more GPUs per node"
    )
    for i, w in placed:
        wanted, room = largest.requests[i], largest.room
        room = room - sidecar(w)  # a model cache's FUSE sidecar shares the node
        for key, need, have, show in (
            ("cpu", wanted.cpu_millicores, room.cpu_millicores, formats.cpu),
            ("memory", wanted.memory_bytes, room.memory_bytes, formats.gib),
        ):
            if need > have:
                set_by_user = getattr(w.resources, key) is not None
                # Rounded alike ("27.0 GiB is more than the 27.0 GiB"), the two go in bytes.
                said = (show(need), show(have))
                if said[0] == said[1]:
                    said = (f"{need:,} bytes", f"{have:,} bytes")
                largest.problems.append(
                    Problem(
                        f"workloads[{i}].resources.{key}",
                        f"{said[0]} is more than the {said[1]} a node of {where} leaves for "
                        "pods (GKE's allocatable less its system pods on GPU nodes). "
                        + (
                            "Lower the request, or "
                            if set_by_user
                            else "Set a smaller request, or "
                        )
                        + f"{fix}.",
                    )
                )
    return largest


def nodes_needed(
    pool: NodePoolConfig,
    fit: PoolFit,
    placed: Sequence[tuple[int, WorkloadSpec]],
    extra: dict[int, int] | None = None,
) -> int:
    """Nodes the pool's pods take at their maximum (plus `extra` pods per workload), packed
    first-fit by GPUs, CPU and memory together, largest pods first, as the scheduler fills a
    node before the autoscaler adds one. Different workloads share a node where they fit."""
    slots = pool.slots_per_node
    pods_to_place: list[tuple[int, int, int]] = []
    for i, w in placed:
        count = pods(w) + (extra or {}).get(i, 0)
        wanted, side = fit.requests[i], sidecar(w)
        size = (
            1 if pool.shared else w.gpu.count,
            wanted.cpu_millicores + side.cpu_millicores,
            wanted.memory_bytes + side.memory_bytes,
        )
        pods_to_place += [size] * count
    nodes: list[list[int]] = []  # what each node has left: [GPU slots, millicores, bytes]
    for gpus, cpu, memory in sorted(pods_to_place, reverse=True):
        node = next((n for n in nodes if n[0] >= gpus and n[1] >= cpu and n[2] >= memory), None)
        if node is None:
            node = [slots, fit.room.cpu_millicores, fit.room.memory_bytes]
            nodes.append(node)
        node[0], node[1], node[2] = node[0] - gpus, node[1] - cpu, node[2] - memory
    return len(nodes)


def capacity_problems(
    pool: NodePoolConfig, index: int, fit: PoolFit, placed: Sequence[tuple[int, WorkloadSpec]]
) -> list[Problem]:
    """The pool's nodes at maxNodes against what its workloads need at their maximum."""
    if not placed or any(fit.per_node.get(i, 0) < 1 for i, _ in placed):
        return []  # a pod that fits no node is reported already
    needed = nodes_needed(pool, fit, placed)
    if needed <= pool.max_nodes:
        return []
    names = ", ".join(
        f"workloads[{i}] ({pods(w)} pods, {fit.per_node[i]} per node)" for i, w in placed
    )
    return [
        Problem(
            f"nodePools[{index}].maxNodes",
            f"{pool.max_nodes} node(s) of {fit.machine.name} hold fewer pods than {names} need at "
            f"their replicas (or autoscale.maxReplicas): {needed} nodes. Raise maxNodes to "
            f"{needed}, or lower replicas or autoscale.maxReplicas: the extra pods would stay "
            "Pending, holding requests or a `pulumi up` that waits for them.",
        )
    ]


def rollout(
    mode: Mode,
    w: WorkloadSpec,
    index: int,
    pool: NodePoolConfig | None,
    fit: PoolFit | None,
    placed: Sequence[tuple[int, WorkloadSpec]],
) -> Literal["surge", "replace"]:
    """How a change rolls out: surge one pod only where a node has room for it at max scale."""
    if w.rollout != "auto":
        return w.rollout
    if mode == "autopilot":
        return "surge"  # Autopilot adds a node for the surge pod (within quota)
    if mode == "existing" or pool is None or fit is None:
        return "replace"  # capacity unknown: never wait for a GPU that may not exist
    per_node = fit.per_node.get(index, 0)
    if per_node < 1:
        return "replace"
    fitting = [(j, other) for j, other in placed if fit.per_node.get(j, 0) >= 1]
    # A surge adds a whole replica: one pod, or a LeaderWorkerSet group of `hosts` pods.
    needed = nodes_needed(pool, fit, fitting, {index: w.hosts})
    return "surge" if needed <= pool.max_nodes else "replace"
