"""The offline plan's lines for a replica that spans nodes (issue 34): what a LeaderWorkerSet
group holds, how many fit the pool, what they cost idle and at most, which network their NCCL
traffic takes and what a group's cold start waits for."""

from __future__ import annotations

from components.config import NodePoolConfig, StackConfig, WorkloadConfig
from components.config.rules import model_fit, vllm
from components.facts import models
from components.platform import lws
from components.service import cost
from tools import cost as costs

# No GPUDirect path is built (docs/gpus.md, "Models bigger than one node"): NCCL between a
# group's nodes falls back to TCP sockets over the node's primary network interface.
NCCL_NETWORK = (
    "the cluster's VPC network, TCP sockets over each node's primary interface (no GPUDirect: "
    "TCPX, TCPXO or RDMA are not set up; docs/gpus.md)"
)


def group_lines(config: StackConfig, w: WorkloadConfig) -> list[str]:
    if w.spec.hosts == 1:
        return []
    pool = w.node_pool
    gpus = w.spec.hosts * w.spec.gpu.count
    name, replicas, cpu, memory = lws.always_on_requests()
    lines = [
        f"            group: a LeaderWorkerSet of {w.spec.hosts} pods (a leader and "
        f"{w.spec.hosts - 1} worker(s)), each {w.spec.gpu.count} x {w.gpu_type} on a node of "
        f"its own: {gpus} GPUs per group; the model's Service reaches the leaders only; a pod's "
        "restart recreates its group",
        f"            controller: LeaderWorkerSet {lws.VERSION} in {lws.NAMESPACE} ({name}, "
        f"{replicas} x {cpu} CPU / {memory} on the system pool)",
        f"            NCCL traffic between a group's nodes: {NCCL_NETWORK}",
    ]
    if pool is not None:
        most = w.max_replicas * w.spec.hosts
        spare = most + w.spec.hosts <= pool.max_nodes
        rate = cost.pool_rate(pool, config.region).configured
        price = (
            f"; {costs.money(rate * w.spec.hosts)} per group, idle "
            f"{costs.money(rate * w.idle_pods)}, max {costs.money(rate * w.max_pods)}"
            if rate is not None
            else ""
        )
        lines.append(f"            {_zones(pool)}")
        lines.append(
            f"            at max: {w.max_replicas} group(s) = {most} of pool {pool.name}'s "
            f"{pool.max_nodes} nodes; a rollout's extra group "
            + ("fits" if spare else "does not fit (a group is replaced, not surged)")
            + price
        )
    size = models.MODELS.get(vllm.parse(list(w.args)).model or "")
    checkpoint = (
        f" (about {size.parameters * model_fit.BYTES[size.dtype] / 1e9:,.0f} GB in {size.dtype})"
        if size is not None
        else ""
    )
    lines.append(
        f"            cold start of a group: all {w.spec.hosts} nodes boot, pull the image and "
        f"download the whole checkpoint each{checkpoint}; the leader is ready only once every "
        "node has loaded its share"
    )
    return lines


def _zones(pool: NodePoolConfig) -> str:
    """Where a group's nodes land: the pods carry no zone spread (components/kinds/
    leaderworkerset.py), so one zone keeps a group together only if the pool has one."""
    placed = " with compact placement" if pool.placement == "compact" else ""
    if len(pool.zones) == 1:
        return f"a group's nodes: all in {pool.zones[0]}{placed} (pool {pool.name}'s one zone)"
    where = ", ".join(pool.zones) if pool.zones else "the region's zones"
    return (
        f"a group's nodes: may land in different zones of pool {pool.name} ({where}): NCCL "
        "then crosses zones, slower and billed as inter-zone traffic; give the pool one zone"
    )
