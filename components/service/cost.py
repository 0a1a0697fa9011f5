"""What a stack costs per hour, idle and at maximum scale, from the price table (an estimate).

The one estimate both the offline plan's summary (tools/cost.py prints it) and the stack's Cloud
Monitoring dashboard (components/service/monitoring.py shows it beside the GPU charts) read.

Idle is what runs with no traffic: each pool at the nodes its long-running workloads' pods hold
(their replicas, or the autoscaler's minReplicas; a Job's pod only while it runs, so not at idle),
and at least its minNodes; the system pool; the cluster fee; and on Autopilot (or a ComputeClass)
the node of each such pod. Maximum is every pool at maxNodes and every workload at its replicas
or maxReplicas (a Job's one pod). Prices are the stack's region's
(components/facts/catalog/prices.py).
Autopilot GPU pods are priced as the node GKE creates for each (prices.py AUTOPILOT_NODES): the
smallest machine of the GPU whose allocatable holds the pod. A workload with fallbacks is priced
at its first priority; the summary lists what each fallback costs. The forwarding rules of the
load balancers that expose the workloads run idle and at max alike (forwarding_rule_lines).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import slices
from ..config import (
    CapacityChoice,
    ClusterConfig,
    NodePoolConfig,
    StackConfig,
    WorkloadConfig,
)
from ..config.sleep import sleeps
from ..facts import allocatable
from ..facts.catalog import price_table, prices
from ..platform import keda
from . import gate_pod

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


def how(spot: bool, flex_start: bool) -> str:
    return "flex-start" if flex_start else SPOT if spot else ON_DEMAND


def pool_rate(pool: NodePoolConfig | CapacityChoice, region: str) -> Rate:
    """A node pool's node, or a ComputeClass priority's: the same fields price it."""
    return node_rate(
        pool.machine_type, pool.gpu_type, pool.gpu_count, pool.spot, pool.flex_start, region
    )


def workload_rate(w: WorkloadConfig, region: str) -> tuple[Rate, str]:
    """One pod's node: the first ComputeClass priority, or Autopilot's node for the pod."""
    if w.capacity:
        return pool_rate(w.capacity[0], region), w.capacity[0].machine_type
    if w.pod_machine is None:
        return Rate(None, None, None), "unknown machine"
    rate = node_rate(w.pod_machine, w.gpu_type, w.spec.gpu.count, w.spec.spot, False, region)
    return rate, w.pod_machine


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
        nodes = cluster.system_nodes_total
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
            idle = pool.idle_nodes
            cost.lines.append(
                Line(
                    f"pool {pool.name} (idle {idle}, max {pool.max_nodes} x {pool.machine_type})",
                    rate * idle,
                    rate * pool.max_nodes,
                )
            )
    gates = [w for w in config.workloads if w.expose is not None and w.spec.port is not None]
    if cluster.mode == "autopilot" and gates:
        # Each gate: gate_pod.REPLICAS CPU-only pods, billed by their requests. In Standard they run
        # on the system pool, priced above.
        per_pod = autopilot_pod_rate(gate_pod.CPU, gate_pod.MEMORY)
        rate = Rate(per_pod, per_pod, per_pod) * (gate_pod.REPLICAS * len(gates))
        cost.lines.append(
            Line(
                f"API gates ({gate_pod.REPLICAS * len(gates)} pods x {gate_pod.CPU} CPU / "
                f"{gate_pod.MEMORY}, "
                "Autopilot general-purpose; price not confirmed from Google's page)",
                rate,
                rate,
            )
        )
    if cluster.mode == "autopilot" and any(sleeps(w) for w in config.workloads):
        cost.lines.append(_keda_line())
    cost.lines += forwarding_rule_lines(gates, config.region)
    for w in config.workloads:
        if w.node_pool is not None:
            continue  # priced with its pool
        rate, machine = workload_rate(w, config.region)
        cost.lines.append(
            Line(
                f"workload {w.spec.name} ({machine} per pod)", rate * w.idle_pods, rate * w.max_pods
            )
        )
    return cost


def forwarding_rule_lines(exposed: Sequence[WorkloadConfig], region: str) -> list[Line]:
    """The forwarding rules of the exposed workloads' load balancers, regional and global: one
    line each, the same idle and at max (a load balancer stays while the model sleeps)."""
    counts = {False: 0, True: 0}
    whose: dict[bool, list[str]] = {False: [], True: []}
    for w in exposed:
        assert w.expose is not None
        scope, rules = slices.exposure_of(w.expose, w.spec.name).forwarding_rules
        counts[scope] += rules
        whose[scope] += [w.spec.name] if rules else []
    lines = []
    for scope, where, when in (
        (
            False,
            f" in {region}",
            f"the SKU's price of {price_table.FORWARDING_RULES_REGIONAL_DATE}",
        ),
        (True, ", global", f"Google's pricing page, read {price_table.FORWARDING_RULES_READ}"),
    ):
        if counts[scope]:
            price = prices.forwarding_rules_price(counts[scope], None if scope else region)
            rate = Rate(price, price, price)
            lines.append(
                Line(
                    f"load balancer forwarding rules{where} ({counts[scope]}, for "
                    f"{', '.join(whose[scope])}; up to {prices.FORWARDING_RULES_IN_MINIMUM} are "
                    f"one minimum charge; {when})",
                    rate,
                    rate,
                )
            )
    return lines


def autopilot_pod_rate(cpu: str, memory: str) -> float:
    """What Autopilot bills a general-purpose pod per hour, by its requests."""
    return (
        allocatable.parse_cpu(cpu) / 1000 * prices.AUTOPILOT_POD_VCPU_HOUR
        + allocatable.parse_memory(memory) / 2**30 * prices.AUTOPILOT_POD_GIB_HOUR
    )


def _keda_line() -> Line:
    """KEDA's pods stay up while the models sleep (components/platform/keda.py): on Autopilot
    each is billed by its requests. In Standard they run on the system pool, priced above."""
    pods = keda.always_on_requests()
    per_hour = sum(replicas * autopilot_pod_rate(cpu, memory) for _, replicas, cpu, memory in pods)
    count = sum(replicas for _, replicas, _, _ in pods)
    rate = Rate(per_hour, per_hour, per_hour)
    return Line(
        f"KEDA and its HTTP add-on ({count} pods, {_requests_text(pods)}; Autopilot "
        "general-purpose)",
        rate,
        rate,
    )


def _requests_text(pods: Sequence[tuple[str, int, str, str]]) -> str:
    shapes = sorted({(cpu, memory) for _, _, cpu, memory in pods})
    return ", ".join(f"{cpu} CPU / {memory}" for cpu, memory in shapes) + " each"


def money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}/h"


@dataclass(frozen=True)
class Hourly:
    """The stack's estimate as configured, in USD per hour: what the dashboard shows."""

    idle: float
    max: float
    unknown: int
    """Priced items whose price the table lacks (left out of both sums)."""
    price_date: str
    region: str


def hourly(config: StackConfig) -> Hourly | None:
    """Idle and maximum $/h as configured; None for an existing cluster (nothing is bought)."""
    stack = stack_cost(config)
    if stack is None:
        return None
    idle, unknown_idle = stack.total("idle", "configured")
    peak, unknown_max = stack.total("max", "configured")
    return Hourly(idle, peak, max(unknown_idle, unknown_max), prices.PRICE_DATE, config.region)
