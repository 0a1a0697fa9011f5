"""GPU capacity: each pool holds its workloads at maximum scale, and rollouts that cannot deadlock.

A pod that asks for more GPUs than its pool can ever have stays Pending while `pulumi up` waits
for it; a rollout that surges one extra pod on a pool with no spare GPU at its maximum waits
forever too (the autoscaler cannot add a node past maxNodes). Both are checked here, before
anything is created.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from components.config.model import NodePoolConfig
from components.config.schema import Mode, WorkloadSpec

# Instances of one MIG profile an NVIDIA A100/H100/H200/B200 can hold: 7 of 1g, 3 of 2g, 2 of 3g,
# 1 of 4g and 1 of 7g (NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles"; GKE's
# device plugin enforces the same maxima in container-engine-accelerators
# pkg/gpu/nvidia/mig/mig.go gpuPartitionSizeMaxCount).
MIG_INSTANCES = {1: 7, 2: 3, 3: 2, 4: 1, 7: 1}


def slots_per_node(pool: NodePoolConfig) -> int:
    """How many `nvidia.com/gpu: 1` containers one node of the pool can serve at once."""
    per_gpu = 1
    if pool.partition_size is not None:
        match = re.match(r"(\d+)g\.", pool.partition_size)
        per_gpu = MIG_INSTANCES.get(int(match.group(1)), 1) if match else 1
    if pool.sharing is not None:
        per_gpu *= pool.sharing.max_clients_per_gpu
    return pool.gpu_count * per_gpu


def pods(w: WorkloadSpec) -> int:
    return w.replicas if w.kind != "Job" else min(w.replicas, 1) or 1


def pool_problems(
    pool: NodePoolConfig, index: int, placed: Sequence[tuple[int, WorkloadSpec]]
) -> list[str]:
    """The pool's GPUs at maxNodes against what its workloads need at their maximum."""
    capacity = pool.max_nodes * slots_per_node(pool)
    demand = sum(pods(w) * w.gpu.count for _, w in placed)
    if demand <= capacity or not placed:
        return []
    names = ", ".join(f"workloads[{i}] ({pods(w)} x {w.gpu.count} GPU)" for i, w in placed)
    per_node = slots_per_node(pool)
    needed = -(-demand // per_node)
    return [
        f"nodePools[{index}].maxNodes: {pool.max_nodes} node(s) of {per_node} GPU(s) hold "
        f"{capacity}, but {names} need {demand} at their replicas. Raise maxNodes to {needed}, "
        "or lower replicas: the extra pods would stay Pending and `pulumi up` would wait for them."
    ]


def rollout(
    mode: Mode,
    w: WorkloadSpec,
    pool: NodePoolConfig | None,
    pool_demand: int,
) -> Literal["surge", "replace"]:
    """How a change rolls out: surge one pod only where a spare GPU exists at maximum scale."""
    if w.rollout != "auto":
        return w.rollout
    if mode == "autopilot":
        return "surge"  # Autopilot adds a node for the surge pod (within quota)
    if mode == "existing" or pool is None:
        return "replace"  # capacity unknown: never wait for a GPU that may not exist
    spare = pool.max_nodes * slots_per_node(pool) - pool_demand
    return "surge" if spare >= w.gpu.count else "replace"
