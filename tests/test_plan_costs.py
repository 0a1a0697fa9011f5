"""What the plan's cost counts beyond the machines (issue 45): the forwarding rules of the load
balancers in front of the workloads, idle and at max, and price rows for every A2 Ultra shape
and the 2-GPU G4 shape. Sources: components/facts/catalog/price_table.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.config import StackConfig, load
from components.facts.catalog import price_table, prices
from components.service import cost
from tests.conftest import MINIMAL, STANDARD, stack_config
from tools import cost as cost_lines

REGION = "us-central1"
FIRST_FIVE, EACH_MORE = price_table.REGION_FORWARDING_RULES[REGION]


def _load(config: dict[str, Any], region: str = REGION) -> StackConfig:
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    return load(raw, project=MINIMAL["gcp:project"], region=region, stack="test")


def _exposed(*exposes: dict[str, Any]) -> dict[str, Any]:
    """The Standard test stack with one workload per `expose` (llm0, llm1, ...)."""
    config = copy.deepcopy(STANDARD)
    config["gke-gpu:nodePools"][0]["maxNodes"] = len(exposes) + 1
    (workload,) = config["gke-gpu:workloads"]
    config["gke-gpu:workloads"] = [
        {**copy.deepcopy(workload), "name": f"llm{n}", "expose": expose}
        for n, expose in enumerate(exposes)
    ]
    return config


def _rule_line(config: StackConfig) -> cost.Line:
    stack = cost.stack_cost(config)
    assert stack is not None
    lines = [line for line in stack.lines if line.name.startswith("load balancer forwarding")]
    assert len(lines) == 1, (
        f"the load balancers' forwarding rules must be one priced line of the cost: {lines}"
    )
    return lines[0]


def test_dev_pays_its_load_balancers_forwarding_rule_idle_and_awake() -> None:
    line = _rule_line(_load(stack_config("dev")))
    assert line.idle.configured == pytest.approx(FIRST_FIVE), (
        "dev's LoadBalancer Service is a passthrough Network Load Balancer whose forwarding rule "
        "Google bills by the hour, also while the model sleeps"
    )
    assert line.max.configured == line.idle.configured, "a forwarding rule costs the same awake"
    assert "in us-central1 (1, for llm" in line.name, line.name


@pytest.mark.parametrize("type_", ["LoadBalancer", "Internal"])
def test_each_load_balancer_service_is_one_regional_rule_under_one_minimum_charge(
    type_: str,
) -> None:
    balanced = [{"port": 443, "type": type_} for _ in range(3)]
    line = _rule_line(_load(_exposed(*balanced, {"port": 8000, "type": "ClusterIP"})))
    assert "(3, for llm0, llm1, llm2;" in line.name, (
        f"one rule per load-balanced workload, none for the in-cluster one (llm3): {line.name}"
    )
    assert line.idle.configured == pytest.approx(FIRST_FIVE), (
        "Google bills up to five forwarding rules of a region as one minimum charge, not each"
    )


def test_a_gateway_is_two_global_forwarding_rules() -> None:
    line = _rule_line(_load(_exposed({"port": 443, "domain": "llm.acme.example"})))
    assert "global (2, for llm0" in line.name, (
        f"a Gateway's HTTPS and HTTP listeners are two global forwarding rules: {line.name}"
    )
    assert line.max.configured == pytest.approx(price_table.GLOBAL_FORWARDING_RULES[0])


def test_rules_past_five_add_each_and_an_unpriced_region_stays_unknown() -> None:
    assert prices.forwarding_rules_price(1, REGION) == prices.forwarding_rules_price(5, REGION)
    assert prices.forwarding_rules_price(7, REGION) == pytest.approx(FIRST_FIVE + 2 * EACH_MORE), (
        "each forwarding rule past the first five adds its own hourly charge"
    )
    assert prices.forwarding_rules_price(0, REGION) == 0.0
    assert prices.forwarding_rules_price(1, "me-central2") is None, (
        "a region without a figure is unknown, never us-central1's"
    )


def test_the_plan_no_longer_calls_load_balancers_not_included() -> None:
    (words,) = [
        line for line in cost_lines.summary_lines(_load(stack_config("dev"))) if "not incl" in line
    ]
    assert "load balancers," not in words, f"their forwarding rules are counted now: {words}"
    assert "the data load balancers process (per GiB)" in words, (
        f"the per-GiB data processing is still left out, and the plan must say so: {words}"
    )


@pytest.mark.parametrize(
    ("gpu", "count", "machine", "times"),
    [
        ("nvidia-a100-80gb", 2, "a2-ultragpu-2g", 2),
        ("nvidia-a100-80gb", 4, "a2-ultragpu-4g", 4),
        ("nvidia-rtx-pro-6000", 2, "g4-standard-96", 2),
    ],
)
def test_a_pool_of_every_a2_ultra_and_two_gpu_g4_shape_is_priced(
    gpu: str, count: int, machine: str, times: int
) -> None:
    one = "a2-ultragpu-1g" if machine.startswith("a2") else "g4-standard-48"
    for spot in (False, True):
        price = prices.node_price(machine, gpu, count, spot, REGION)
        single = prices.node_price(one, gpu, 1, spot, REGION)
        assert price is not None and single is not None, (
            f"a {machine} pool printed 'cost per node unknown' though the table's source prices it"
        )
        assert price == pytest.approx(times * single), (
            f"{machine} is {times} x {one} in Google's catalog (the table's source)"
        )
