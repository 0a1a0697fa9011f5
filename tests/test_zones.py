"""Zones and machines: GPU pools run only in zones that offer their GPU; the system pool's
machine type is one GKE's system pods fit on."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.config import ConfigError, StackConfig, load
from components.config.context import Context
from components.config.rules import machines
from components.config.schema import ClusterSpec
from components.facts import catalog
from components.facts.catalog import zones
from tests.conftest import DEPLOYMENT, NODE_POOL, STANDARD, Run
from tools import summary


def _load(raw: dict[str, Any], region: str = "us-central1") -> StackConfig:
    return load(raw, project="acme-ml", region=region, stack="dev")


def _problems(raw: dict[str, Any], region: str = "us-central1") -> list[str]:
    with pytest.raises(ConfigError) as info:
        _load(raw, region)
    return info.value.problems


def _pool(
    gpu: str = "nvidia-l4", cluster: dict[str, Any] | None = None, **pool: Any
) -> dict[str, Any]:
    return {
        "cluster": {"mode": "standard", **(cluster or {})},
        "nodePools": [{"name": "gpu", "gpu": {"type": gpu, "count": 1}, **pool}],
        "workloads": [{"name": "app", "image": "app:1.0", "gpu": {"type": gpu}}],
    }


def _system(machine_type: str) -> ClusterSpec:
    return ClusterSpec.model_validate(
        {"mode": "standard", "systemPool": {"machineType": machine_type}}
    )


# --- zones a pool names --------------------------------------------------------------------


def test_a_zone_the_region_does_not_have_is_refused_with_the_regions_zones() -> None:
    (problem,) = _problems(_pool(zones=["us-central1-z"]))
    assert problem.startswith(
        "nodePools[0].zones[0]: 'us-central1-z' is not a zone of us-central1"
    ), "a typo in a zone must be caught before GKE rejects the pool halfway through `pulumi up`"
    assert "us-central1-a, us-central1-b, us-central1-c, us-central1-f" in problem, (
        "the user needs the zones that do exist to fix it"
    )


def test_a_zone_without_the_pools_gpu_is_refused_with_the_zones_that_have_it() -> None:
    # us-central1-f has T4, P100 and V100 but no L4 (SkyPilot catalog,
    # components/facts/catalog/zones.py)
    (problem,) = _problems(_pool(zones=["us-central1-f"]))
    assert problem.startswith("nodePools[0].zones[0]: us-central1-f does not offer nvidia-l4"), (
        "a pool in a zone without its GPU never gets a node, and the workload waits forever"
    )
    assert "us-central1-a, us-central1-b, us-central1-c" in problem, (
        "the message must name the zones of the region that do have the GPU"
    )


def test_every_bad_zone_of_a_pool_is_reported_at_once() -> None:
    problems = _problems(_pool(zones=["us-central1-z", "us-central1-f"]))
    assert [p.split(": ", 1)[0] for p in problems] == [
        "nodePools[0].zones[0]",
        "nodePools[0].zones[1]",
    ], "fixing one zone per run of `pulumi preview` wastes the user's time"


def test_a_zonal_cluster_in_a_zone_without_the_gpu_is_refused() -> None:
    problems = _problems(_pool(cluster={"location": "us-central1-f"}))
    assert any(
        p.startswith("nodePools[0].gpu.type: the zonal cluster's zone 'us-central1-f' does not")
        and "us-central1-a" in p
        for p in problems
    ), f"a zonal cluster's pools can only run in its zone, which has no L4: {problems}"


def test_a_region_without_the_gpu_in_any_zone_is_refused_with_regions_that_have_it() -> None:
    problems = _problems(_pool(), region="europe-north1")
    assert any(
        p.startswith("nodePools[0].gpu.type: nvidia-l4 is not offered in any zone of europe-north1")
        and "asia-east1" in p
        for p in problems
    ), f"no zone of the region can ever give the pool a node; say where the GPU is: {problems}"


def test_a_gpu_known_only_per_region_is_refused_only_outside_those_regions() -> None:
    pro = "nvidia-rtx-pro-6000"
    assert zones.gpu_zones(pro, "us-central1") is None, "no zone-level data for RTX PRO 6000"
    config = _load(_pool(pro, machineType="g4-standard-48", zones=["us-central1-f"]))
    assert config.node_pools[0].zones == ("us-central1-f",), (
        "where the zones are unconfirmed, a zone the user chose must not be refused"
    )
    problems = _problems(_pool(pro, machineType="g4-standard-48"), region="europe-west3")
    assert any(p.startswith(f"nodePools[0].gpu.type: {pro} is not offered") for p in problems), (
        f"a region the GPU is not offered in at all is still refused: {problems}"
    )


# --- zones a pool gets when it names none --------------------------------------------------


def test_a_regional_pool_without_zones_runs_in_the_zones_that_offer_its_gpu(run: Run) -> None:
    recording = run(copy.deepcopy(STANDARD))
    (pool,) = [
        r for r in recording.of_type(NODE_POOL) if r.inputs["nodeConfig"].get("guestAccelerators")
    ]
    assert pool.inputs["nodeLocations"] == ["us-central1-a", "us-central1-b", "us-central1-c"], (
        "GKE's default puts a regional pool in every zone of the cluster, us-central1-f "
        "included, which has no L4"
    )


def test_a_pool_without_zones_is_left_to_gke_where_the_gpus_zones_are_unknown() -> None:
    assert zones.default_zones("nvidia-rtx-pro-6000", "us-central1", "us-central1") == (), (
        "without zone data the program must not guess zones; GKE picks as before"
    )
    assert zones.default_zones("nvidia-l4", "us-central1", "us-central1-c") == ("us-central1-c",)


# --- what the plan promises about zones (issue 45) -------------------------------------------


def _spread(replicas: int = 2, zones_: list[str] | None = None) -> dict[str, Any]:
    """STANDARD with `replicas` of the model server on a pool of 4 L4 nodes over `zones_`."""
    config = copy.deepcopy(STANDARD)
    config["gke-gpu:nodePools"][0].update(
        maxNodes=4, zones=zones_ or ["us-central1-a", "us-central1-b"]
    )
    config["gke-gpu:workloads"][0]["replicas"] = replicas
    return config


def _loaded(config: dict[str, Any]) -> StackConfig:
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    return _load(raw)


def test_a_pool_over_two_zones_is_said_to_take_its_nodes_where_capacity_is(run: Run) -> None:
    config = _spread()
    (pool,) = [
        r for r in run(config).of_type(NODE_POOL) if r.inputs["nodeConfig"].get("guestAccelerators")
    ]
    policy = pool.inputs["autoscaling"]["locationPolicy"]
    loaded = _loaded(config)
    words = " ".join(summary.pool_lines(loaded, loaded.node_pools[0]))
    assert f"location policy {policy}" in words and "all its nodes may be in one zone" in words, (
        f"the pool asks GKE for {policy} (zones with the most capacity): a plan that lists two "
        f"zones without saying so promises a spread GKE does not make: {words}"
    )


def test_replicas_spread_over_zones_are_said_to_be_best_effort(run: Run) -> None:
    config = _spread()
    pod = run(config).served(DEPLOYMENT).inputs["spec"]["template"]["spec"]
    (constraint,) = pod["topologySpreadConstraints"]
    loaded = _loaded(config)
    (line,) = [
        line for line in summary.workload_lines(loaded, loaded.workloads[0]) if "zones:" in line
    ]
    assert constraint["whenUnsatisfiable"] == "ScheduleAnyway" and "best-effort" in line, (
        "the pods only prefer different zones (ScheduleAnyway): the plan must say a zone's "
        f"outage can take every replica: {line}"
    )
    assert "ScheduleAnyway" in line, "the plan names the setting a reviewer can look up"


def test_replicas_on_a_one_zone_pool_are_said_to_share_that_zone() -> None:
    loaded = _loaded(_spread(zones_=["us-central1-a"]))
    words = " ".join(summary.workload_lines(loaded, loaded.workloads[0]))
    pool_words = " ".join(summary.pool_lines(loaded, loaded.node_pools[0]))
    assert "replicas all in us-central1-a" in words and "best-effort" not in words, (
        f"a one-zone pool cannot spread replicas at all; the plan must not suggest it: {words}"
    )
    assert "zone us-central1-a only" in pool_words, pool_words


# --- the tables -----------------------------------------------------------------------------


def test_every_gpu_zone_is_a_known_zone_of_a_known_region() -> None:
    unknown = {gpu: [z for z in zs if z not in zones.ZONES] for gpu, zs in zones.GPU_ZONES.items()}
    assert not any(unknown.values()), f"a refreshed table must stay consistent: {unknown}"
    regions_only = {r for rs in zones.GPU_REGIONS_ONLY.values() for r in rs}
    assert regions_only <= set(zones.REGION_ZONES), "region-level data names unknown regions"


def test_every_gke_gpu_type_has_zone_or_region_data() -> None:
    missing = [gpu for gpu in catalog.GPU_TYPES if zones.gpu_regions(gpu) is None]
    assert not missing, (
        f"a new GPU type needs a row in components/facts/catalog/zones.py: {missing}"
    )


# --- the system pool's machine type --------------------------------------------------------


@pytest.mark.parametrize("machine_type", ["banana", "g1-small"])
def test_a_system_pool_machine_gke_system_pods_do_not_fit_on_is_refused(
    machine_type: str,
) -> None:
    (problem,) = map(
        str, machines.system_pool_problems(_system(machine_type), Context(mode="standard"))
    )
    assert problem.startswith(f"cluster.systemPool.machineType: '{machine_type}' is "), (
        "GKE would fail to create the pool, or its system pods would not fit on the node"
    )
    assert "e2-standard-2" in problem, "the message must say what to use instead"


def test_the_default_system_pool_machine_and_e2_medium_are_accepted() -> None:
    for machine_type in ("e2-standard-2", "e2-medium", "n2d-standard-4", "n1-standard-2"):
        assert (
            machines.system_pool_problems(_system(machine_type), Context(mode="standard")) == []
        ), f"{machine_type} is a machine GKE's own docs and defaults use for system nodes"


def test_the_system_pool_rule_applies_only_to_standard_clusters() -> None:
    assert machines.system_pool_problems(_system("banana"), Context(mode="autopilot")) == [], (
        "Autopilot has no system pool of ours; cluster.systemPool is reported there on its own"
    )
