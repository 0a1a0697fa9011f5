"""What a stack costs per hour, idle and at maximum scale, from the price table (an estimate).

Idle is what runs with no traffic: each pool at the nodes its long-running workloads' pods hold
(their replicas, or the autoscaler's minReplicas; a Job's pod only while it runs, so not at idle),
and at least its minNodes; the system pool; the cluster fee; and on Autopilot (or a ComputeClass)
the node of each such pod. Maximum is every pool at maxNodes and every workload at its replicas
or maxReplicas (a Job's one pod). Prices are the stack's region's (components/catalog/prices.py).
Autopilot GPU pods are priced as the node GKE creates for each (prices.py AUTOPILOT_NODES): the
smallest machine of the GPU whose allocatable holds the pod. A workload with fallbacks is priced
at its first priority; the summary lists what each fallback costs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from components import allocatable, catalog, gate
from components.allocatable import Resources
from components.catalog import prices
from components.config import ClusterConfig, NodePoolConfig, StackConfig, WorkloadConfig
from components.config.rules import capacity_sources, fit

ON_DEMAND, SPOT = "on-demand", "Spot"


@dataclass(frozen=True)
class Rate:
    """USD per hour of one item, as configured and with every VM bought one way or the other."""

    configured: float | None
    on_demand: float | None
    spot: float | None

    def __mul__(self, n: int) -> Rate:
        def times(value: float | None) -> float | None:
            if n == 0:
                return 0.0  # nothing running costs nothing, priced or not
            return None if value is None else value * n

        return Rate(times(self.configured), times(self.on_demand), times(self.spot))


ZERO = Rate(0.0, 0.0, 0.0)


@dataclass
class Line:
    """One priced item of the stack: idle and maximum hourly rates."""

    name: str
    idle: Rate
    max: Rate
    note: str = ""


@dataclass
class StackCost:
    lines: list[Line] = field(default_factory=list)

    def total(self, attr: str, which: str) -> tuple[float, int]:
        """(sum of the known rates, number of unknown ones) for idle/max and a column."""
        values = [getattr(getattr(line, attr), which) for line in self.lines]
        return sum(v for v in values if v is not None), sum(1 for v in values if v is None)


def node_rate(
    machine: str, gpu_type: str | None, gpus: int, spot: bool, flex: bool, region: str
) -> Rate:
    on_demand = prices.node_price(machine, gpu_type, gpus, spot=False, region=region)
    spot_price = prices.node_price(machine, gpu_type, gpus, spot=True, region=region)
    # Flex-start VMs have their own (discounted) SKUs, not in the table: unknown as configured.
    configured = None if flex else spot_price if spot else on_demand
    return Rate(configured, on_demand, spot_price)


def pool_rate(pool: NodePoolConfig, region: str) -> Rate:
    return node_rate(
        pool.machine_type, pool.gpu_type, pool.gpu_count, pool.spot, pool.flex_start, region
    )


def idle_pods(w: WorkloadConfig) -> int:
    """Pods a long-running workload keeps up with no traffic; a Job's only while it runs."""
    if w.kind == "Job":
        return 0
    return w.autoscale.min_replicas if w.autoscale else w.replicas


def pinned_nodes(pool: NodePoolConfig, workloads: Iterable[WorkloadConfig]) -> int:
    """Nodes of `pool` its workloads' idle pods hold: their GPUs (or GPU slots on a shared
    pool) packed onto the pool's nodes. The autoscaler removes a node only when its pods can
    move elsewhere, so these nodes stay up whatever minNodes says."""
    if pool.shared:
        slots = sum(idle_pods(w) for w in workloads)
        per_node = fit.slots_per_node(pool)
    else:
        slots = sum(idle_pods(w) * w.gpu_count for w in workloads)
        per_node = pool.gpu_count
    return -(-slots // per_node) if per_node else 0


def workloads_on(config: StackConfig, pool: NodePoolConfig) -> list[WorkloadConfig]:
    """The workloads the config placed on `pool`."""
    return [w for w in config.workloads if w.node_pool == pool]


def idle_nodes(pool: NodePoolConfig, workloads: Iterable[WorkloadConfig]) -> int:
    """What stays up of a pool with no traffic: the pinned nodes, and at least minNodes."""
    return max(pool.min_nodes, pinned_nodes(pool, workloads))


def pod_machine(w: WorkloadConfig) -> catalog.MachineType | None:
    """The node Autopilot creates for one of the workload's pods (the smallest that holds it)."""
    if w.gpu_type is None or w.gpu_type not in catalog.GPU_TYPES:
        return None
    side = fit.sidecar(w)  # the FUSE sidecar shares the pod's node
    requests = Resources(
        allocatable.parse_cpu(w.cpu or "0") + side.cpu_millicores,
        allocatable.parse_memory(w.memory or "0") + side.memory_bytes,
    )
    way = catalog.SPOT if w.spot else catalog.ON_DEMAND
    machine, _ = capacity_sources.smallest_fitting_machine(w.gpu_type, w.gpu_count, requests, way)
    return machine


def workload_rate(w: WorkloadConfig, region: str) -> tuple[Rate, str]:
    """One pod's node: the first ComputeClass priority, or Autopilot's node for the pod."""
    if w.capacity:
        first = w.capacity[0]
        rate = node_rate(
            first.machine_type,
            first.gpu_type,
            first.gpu_count,
            first.spot,
            first.flex_start,
            region,
        )
        return rate, first.machine_type
    machine = pod_machine(w)
    if machine is None:
        return Rate(None, None, None), "unknown machine"
    return node_rate(machine.name, w.gpu_type, w.gpu_count, w.spot, False, region), machine.name


def stack_cost(config: StackConfig) -> StackCost | None:
    """The stack's priced items; None for an existing cluster (nothing is bought)."""
    cluster = config.cluster
    if not isinstance(cluster, ClusterConfig):
        return None
    cost = StackCost()
    fee = Rate(
        prices.CLUSTER_FEE_PER_HOUR, prices.CLUSTER_FEE_PER_HOUR, prices.CLUSTER_FEE_PER_HOUR
    )
    cost.lines.append(Line("GKE cluster fee", fee, fee))
    if cluster.mode == "standard":
        nodes = capacity_sources.system_node_count(
            cluster.system_nodes, cluster.location, config.region
        )
        system = node_rate(cluster.system_machine_type, None, 0, False, False, config.region)
        system = Rate(system.configured, system.on_demand, system.on_demand)  # never Spot
        cost.lines.append(
            Line(
                f"system pool ({nodes} x {cluster.system_machine_type})",
                system * nodes,
                system * nodes,
            )
        )
        for pool in config.node_pools:
            rate = pool_rate(pool, config.region)
            idle = idle_nodes(pool, workloads_on(config, pool))
            cost.lines.append(
                Line(
                    f"pool {pool.name} (idle {idle}, max {pool.max_nodes} x {pool.machine_type})",
                    rate * idle,
                    rate * pool.max_nodes,
                )
            )
    gates = [w for w in config.workloads if w.expose is not None and w.port is not None]
    if cluster.mode == "autopilot" and gates:
        # Each gate: gate.REPLICAS CPU-only pods, billed by their requests. In Standard they run
        # on the system pool, priced above.
        per_pod = (
            allocatable.parse_cpu(gate.CPU) / 1000 * prices.AUTOPILOT_POD_VCPU_HOUR
            + allocatable.parse_memory(gate.MEMORY) / 2**30 * prices.AUTOPILOT_POD_GIB_HOUR
        )
        rate = Rate(per_pod, per_pod, per_pod) * (gate.REPLICAS * len(gates))
        cost.lines.append(
            Line(
                f"API gates ({gate.REPLICAS * len(gates)} pods x {gate.CPU} CPU / {gate.MEMORY}, "
                "Autopilot general-purpose; price not confirmed from Google's page)",
                rate,
                rate,
            )
        )
    for w in config.workloads:
        if w.node_pool is not None:
            continue  # priced with its pool
        rate, machine = workload_rate(w, config.region)
        pods = 1 if w.kind == "Job" else w.max_replicas
        idle = idle_pods(w)
        cost.lines.append(Line(f"workload {w.name} ({machine} per pod)", rate * idle, rate * pods))
    return cost


def money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}/h"


def total_text(cost: StackCost, attr: str, which: str) -> str:
    known, unknown = cost.total(attr, which)
    return f"${known:,.2f}/h" + (f" + {unknown} unknown" if unknown else "")


def fallback_rates(w: WorkloadConfig, region: str) -> Iterable[tuple[str, Rate]]:
    for choice in w.capacity:
        how = "flex-start" if choice.flex_start else SPOT if choice.spot else ON_DEMAND
        if choice.reservation is not None:
            how += f", reservation {choice.reservation.name or 'any'}"
        label = f"{choice.gpu_count} x {choice.gpu_type} on {choice.machine_type} ({how})"
        yield (
            label,
            node_rate(
                choice.machine_type,
                choice.gpu_type,
                choice.gpu_count,
                choice.spot,
                choice.flex_start,
                region,
            ),
        )
