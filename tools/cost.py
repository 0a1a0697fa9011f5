"""The offline plan's cost lines: the stack's hourly estimate (components/service/cost.py), in
the summary's words, idle and at maximum scale, as configured, all on-demand and all Spot."""

from __future__ import annotations

from collections.abc import Iterable

from components.config import NodePoolConfig, StackConfig, WorkloadConfig
from components.facts.catalog import prices
from components.service.cost import (
    Rate,
    StackCost,
    how,
    money,
    pool_rate,
    stack_cost,
)


def pool_line(pool: NodePoolConfig, region: str) -> str:
    """The summary's line on what one node of the pool costs, and the pool idle and at most."""
    rate, idle = pool_rate(pool, region), pool.idle_nodes
    return (
        f"            cost per node {money(rate.configured)} ({how(pool.spot, pool.flex_start)}; "
        f"on-demand {money(rate.on_demand)}, Spot {money(rate.spot)}): idle "
        f"{money((rate * idle).configured)} ({idle} node(s): minNodes {pool.min_nodes}, "
        f"{pool.pinned_nodes} held by replicas), max {money((rate * pool.max_nodes).configured)}"
    )


def total_text(cost: StackCost, attr: str, which: str) -> str:
    known, unknown = cost.total(attr, which)
    return f"${known:,.2f}/h" + (f" + {unknown} unknown" if unknown else "")


def fallback_rates(w: WorkloadConfig, region: str) -> Iterable[tuple[str, Rate]]:
    for choice in w.capacity:
        bought = how(choice.spot, choice.flex_start)
        if choice.reservation is not None:
            bought += f", reservation {choice.reservation.name or 'any'}"
        label = f"{choice.gpu_count} x {choice.gpu_type} on {choice.machine_type} ({bought})"
        yield label, pool_rate(choice, region)


def summary_lines(config: StackConfig) -> list[str]:
    """Hourly cost at idle and at maximum scale: as configured, all on-demand and all Spot."""
    stack = stack_cost(config)
    if stack is None:
        return ["  cost      not priced: an existing cluster's nodes are not bought by this stack"]
    lines = [
        f"  cost      an estimate from {config.region} list prices of {prices.PRICE_DATE} "
        "(components/facts/catalog/price_table.py; refresh it there)"
    ]
    for which, label in (
        ("configured", "as configured"),
        ("on_demand", "all on-demand"),
        ("spot", "all Spot"),
    ):
        lines.append(
            f"            {label}: idle {total_text(stack, 'idle', which)}, "
            f"max {total_text(stack, 'max', which)}"
        )
    for line in stack.lines:
        lines.append(
            f"              {line.name}: idle {money(line.idle.configured)}, "
            f"max {money(line.max.configured)}"
        )
    if config.region not in prices.PRICE_REGIONS:
        lines.append(
            f"            no price table for {config.region} (priced: "
            f"{', '.join(prices.PRICE_REGIONS)}): its machines show as unknown"
        )
    lines.append(
        "            not included: disks, the data load balancers process (per GiB), Cloud NAT, "
        "egress, Autopilot's premium, flex-start prices, Managed Prometheus samples (the metrics "
        "the dashboard and alerts read), sustained-use or committed-use discounts"
    )
    return lines
