"""Capacity the sources do not confirm, flagged in the plan (issue 45): a pool, a ComputeClass
priority or an Autopilot workload's nodes bought a way the catalog allows but Google's pages do
not back (on-demand 8-GPU A3 High; on-demand 1-GPU A3 High) gets a `!` line naming the machine,
the way and what to do. Sources: components/facts/catalog/machines.py CAPACITY_NOTES."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from components.config import StackConfig, load
from components.facts import catalog
from tests.conftest import MINIMAL, ROOT
from tools import summary

H100 = "nvidia-h100-80gb"


def _load(config: dict[str, Any]) -> StackConfig:
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    return load(raw, project=MINIMAL["gcp:project"], region="us-central1", stack="test")


def _multihost(**pool: Any) -> dict[str, Any]:
    """examples/Pulumi.multihost.yaml (two on-demand a3-highgpu-8g), its pool's keys changed (a
    Spot pool's workload Spot too)."""
    document = yaml.safe_load((ROOT / "examples" / "Pulumi.multihost.yaml").read_text())
    config = copy.deepcopy(document["config"])
    config["gke-gpu:nodePools"][0].update(pool)
    config["gke-gpu:workloads"][0]["spot"] = pool.get("spot", False)
    return config


def _flags(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines if line.strip().startswith("! ")]


def test_only_an_on_demand_eight_gpu_a3_high_pool_is_flagged_with_what_to_do() -> None:
    stack = _load(_multihost())
    (flag,) = _flags(summary.pool_lines(stack, stack.node_pools[0]))
    assert flag.startswith("! pool h100: a3-highgpu-8g bought on-demand is not confirmed"), (
        f"no source says Compute Engine sells 8-GPU A3 High on demand: the plan must say so "
        f"before `pulumi up` waits on a node that never comes: {flag}"
    )
    assert "quota" in flag and "reservation (reservation: {name: ...})" in flag, (
        f"the flag must say what to do: check quota, or buy it a documented way: {flag}"
    )
    for pool in ({"spot": True}, {"reservation": {"name": "h100-res"}}):
        stack = _load(_multihost(**pool))
        assert _flags(summary.pool_lines(stack, stack.node_pools[0])) == [], (
            f"{pool}: Spot and reservations are how Google documents buying 8-GPU A3 High: no "
            "warning"
        )


def test_on_demand_one_gpu_a3_high_on_autopilot_says_spot_or_flex_start_only() -> None:
    workload = {
        "name": "llm",
        "image": "app:1.0",
        "gpu": {"type": H100, "count": 1},
        "resources": {"cpu": "4", "memory": "32Gi"},
    }
    config = {**MINIMAL, "gke-gpu:workloads": [workload]}
    stack = _load(config)
    (w,) = stack.workloads
    (flag,) = _flags(summary.workload_lines(stack, w))
    assert "a3-highgpu-1g bought on-demand is not confirmed" in flag, flag
    assert flag.endswith("Spot (spot: true), flex-start (flexStart: true)"), (
        f"Google creates 1-GPU A3 High only as Spot or flex-start: the flag must offer those "
        f"two and no reservation: {flag}"
    )


def test_every_capacity_note_is_on_a_way_the_catalog_lets_a_stack_buy() -> None:
    noted = [
        (m.name, way)
        for gpu in catalog.GPU_TYPES.values()
        for m in gpu.machine_types
        for way, _ in m.capacity_notes
    ]
    assert ("a3-highgpu-8g", catalog.ON_DEMAND) in noted
    for gpu in catalog.GPU_TYPES.values():
        for m in gpu.machine_types:
            for way, _ in m.capacity_notes:
                assert way in m.consumption, (
                    f"{m.name} {way}: the config refuses it already, so the plan's flag would "
                    "never print"
                )
