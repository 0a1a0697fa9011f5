"""GPUs you can actually get: fallbacks (a ComputeClass), reservations, compact placement,
flex-start, and what a stack costs per hour. Tests run on the recording engine's requests."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from components.config import ConfigError, StackConfig, load
from components.config.rules import capacity_sources
from components.facts import pins
from components.facts.catalog import price_table, prices
from components.platform.nodepool import gke_pool_name
from tests import shared
from tests.conftest import CLUSTER, DEPLOYMENT, MINIMAL, NODE_POOL, ROOT, Run, stack_config
from tools import cost as costs
from tools import render
from tools.engine import Recording

COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
L4, T4 = "nvidia-l4", "nvidia-tesla-t4"
REGION = "us-central1"

WORKLOAD: dict[str, Any] = {
    "name": "llm",
    "image": "vllm/vllm-openai:v0.29.0",
    "gpu": {"type": L4, "count": 1},
    "spot": True,
    "fallback": [{"spot": False}, {"gpu": {"type": T4, "count": 1}, "spot": True}],
    "cache": {"size": "30Gi"},
    "resources": {"cpu": "4", "memory": "16Gi"},
    "expose": {"port": 443},
}


def _stack(mode: str = "autopilot", **workload: Any) -> dict[str, Any]:
    return {
        **MINIMAL,
        "gke-gpu:cluster": {"mode": mode, "deletionProtection": False},
        "gke-gpu:workloads": [{**copy.deepcopy(WORKLOAD), **workload}],
    }


def _raw(config: dict[str, Any]) -> dict[str, Any]:
    return {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}


def _load(config: dict[str, Any]) -> StackConfig:
    return load(_raw(config), project="acme-ml-test", region=REGION, stack="test")


def _problems(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        _load(config)
    return info.value.problems


def _pool_stack(**pool: Any) -> dict[str, Any]:
    return {
        **MINIMAL,
        "gke-gpu:cluster": {"mode": "standard", "deletionProtection": False},
        "gke-gpu:nodePools": [
            {"name": "l4", "gpu": {"type": L4, "count": 1}, "maxNodes": 2, **pool}
        ],
        "gke-gpu:workloads": [
            {
                "name": "job",
                "kind": "Job",
                "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
                "gpu": {"type": pool.get("gpu", {}).get("type", L4), "count": 1},
                "spot": pool.get("spot", False),
                "port": None,
            }
        ],
    }


def _spec(recording: Recording) -> dict[str, Any]:
    spec: dict[str, Any] = recording.one(COMPUTE_CLASS).inputs["spec"]
    return spec


def _node_pool(recording: Recording) -> dict[str, Any]:
    pools = [
        r for r in recording.of_type(NODE_POOL) if r.inputs["nodeConfig"].get("guestAccelerators")
    ]
    assert len(pools) == 1
    return pools[0].inputs


# --- fallbacks: one ComputeClass per workload --------------------------------------------------


@pytest.fixture(scope="module")
def autopilot_fallback() -> Recording:
    from tools.engine import run_program

    return run_program(_stack(), stack="test")


def test_autopilot_fallback_becomes_one_compute_class_with_its_three_priorities_in_order(
    autopilot_fallback: Recording,
) -> None:
    priorities = _spec(autopilot_fallback)["priorities"]
    assert [(p["gpu"]["type"], p["gpu"]["count"], p["spot"]) for p in priorities] == [
        (L4, 1, True),
        (L4, 1, False),
        (T4, 1, True),
    ], "GKE tries the priorities in order: the workload's own choice first, then its fallbacks"
    assert [p["machineType"] for p in priorities] == [
        "g2-standard-8",
        "g2-standard-8",
        "n1-standard-8",
    ], "each priority names the smallest machine whose allocatable holds the 4 CPU / 16Gi pod"
    assert {p["gpu"]["driverVersion"] for p in priorities} == {"latest"}, (
        "the CUDA 13 vLLM image needs GKE's latest driver on every fallback too"
    )


def test_compute_class_moves_pods_back_and_never_scales_up_without_a_gpu(
    autopilot_fallback: Recording,
) -> None:
    spec = _spec(autopilot_fallback)
    assert spec["activeMigration"] == {"optimizeRulePriority": True}, (
        "when Spot L4s return, GKE must move the pods back off the dearer fallback"
    )
    assert spec["whenUnsatisfiable"] == "DoNotScaleUp", (
        "with no priority available a GPU pod must stay Pending, not land on a GPU-less node"
    )
    assert spec["nodePoolAutoCreation"] == {"enabled": True}, (
        "on Standard, GKE creates the class's node pools itself only when this is enabled"
    )


def test_workload_with_fallback_selects_its_class_and_pins_no_single_gpu(
    autopilot_fallback: Recording,
) -> None:
    name = autopilot_fallback.one(COMPUTE_CLASS).inputs["metadata"]["name"]
    pod = autopilot_fallback.served(DEPLOYMENT).inputs["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/compute-class": name}, (
        "a pod pinning an accelerator, Spot or driver label as well could never use a fallback"
    )
    assert {t["key"] for t in pod["tolerations"]} >= {"nvidia.com/gpu", "cloud.google.com/gke-spot"}


def test_workload_waits_for_its_compute_class(autopilot_fallback: Recording) -> None:
    compute_class = autopilot_fallback.one(COMPUTE_CLASS)
    deployment = autopilot_fallback.served(DEPLOYMENT)
    assert compute_class.urn in deployment.dependencies, (
        "pods created before their ComputeClass match no node rule and sit Pending"
    )


def test_compute_class_is_valid_against_the_vendored_crd_schema(
    autopilot_fallback: Recording,
) -> None:
    manifest = render.kubernetes_manifests(autopilot_fallback)
    classes = [m for m in manifest if m["kind"] == "ComputeClass"]
    assert classes and render.schema_problems(classes, render.DEFAULT_KUBERNETES_VERSION) == [], (
        "GKE's API server rejects a ComputeClass that its CRD schema does not accept"
    )
    broken = copy.deepcopy(classes[0])
    broken["spec"]["priorities"][0]["gpus"] = broken["spec"]["priorities"][0].pop("gpu")
    assert render.schema_problems([broken], render.DEFAULT_KUBERNETES_VERSION), (
        "a misspelled priority field must fail the plan, as the real CRD would refuse it"
    )


def test_compute_class_name_avoids_the_reserved_prefixes_and_fits_a_label() -> None:
    assert capacity_sources.class_name("gke-llm") == "gpu-gke-llm"
    long = capacity_sources.class_name("a" * 63)
    assert len(long) <= 63 and long.startswith("gpu-"), (
        "GKE refuses class names starting with gke/autopilot; the selector value is a label"
    )


@pytest.fixture(scope="module")
def standard_fallback() -> Recording:
    from tools.engine import run_program

    return run_program(_stack("standard"), stack="test")


def test_standard_fallback_turns_on_node_auto_provisioning_for_every_gpu_it_may_use(
    standard_fallback: Recording,
) -> None:
    autoscaling = standard_fallback.one(CLUSTER).inputs["clusterAutoscaling"]
    assert autoscaling["enabled"] is True
    limits = {r["resourceType"]: r["maximum"] for r in autoscaling["resourceLimits"]}
    assert set(limits) == {"cpu", "memory", L4, T4}, (
        "GKE creates no node whose GPU type has no auto-provisioning limit"
    )
    # One pod at a time plus one surge pod, on g2-standard-8 (8 vCPU, 32 GB) or n1-standard-8
    # (8 vCPU, 30 GB); the system pool: 3 zones x 1 e2-standard-2 (2 vCPU, <= 16 GB).
    assert limits[L4] == 2 and limits[T4] == 2
    assert limits["cpu"] == 2 * 8 + 3 * 2 and limits["memory"] >= 2 * 32 + 3 * 8, (
        "the limits cap every node in the cluster: too low and GKE stops adding GPU nodes"
    )
    defaults = autoscaling["autoProvisioningDefaults"]
    assert defaults["serviceAccount"] and defaults["shieldedInstanceConfig"]["enableSecureBoot"]


def test_standard_fallback_needs_no_node_pool(standard_fallback: Recording) -> None:
    assert not [
        r for r in standard_fallback.of_type(NODE_POOL) if r.inputs.get("name") != "system"
    ], "GKE creates the class's node pools itself; a GPU pool of ours would sit unused"


def test_a_stack_without_fallback_leaves_node_auto_provisioning_off(run: Run) -> None:
    recording = run(stack_config("prod"), stack="prod")
    assert "clusterAutoscaling" not in recording.one(CLUSTER).inputs, (
        "auto-provisioning lets GKE create node pools of any shape: only with a ComputeClass"
    )


def test_flex_start_and_reservation_fallbacks_render_their_provisioning(run: Run) -> None:
    config = _stack(
        fallback=[
            {"reservation": {"name": "l4-res"}},
            {"reservation": "any"},
            {"flexStart": True},
        ]
    )
    priorities = _spec(run(config))["priorities"]
    assert priorities[1]["reservations"] == {
        "affinity": "Specific",
        "specific": [{"name": "l4-res"}],
    }
    assert priorities[2]["reservations"] == {"affinity": "AnyBestEffort"}
    assert priorities[3]["flexStart"]["enabled"] and "spot" not in priorities[3], (
        "flex-start is not Spot: the CRD rejects a priority with both"
    )
    assert priorities[3]["flexStart"]["nodeRecycling"] == {"leadTimeSeconds": 3600}, (
        "a flex-start node is replaced an hour before it ends, as Google's GPU classes do"
    )


@pytest.mark.parametrize(
    ("fallback", "mode", "path", "words"),
    [
        (
            [{"gpu": {"type": T4, "count": 3}}],
            "autopilot",
            "fallback[0].gpu.count",
            "allowed: 1, 2, 4",
        ),
        ([{"gpu": {"type": "nvidia-a9000"}}], "autopilot", "fallback[0].gpu.type", "not a GKE GPU"),
        (
            [{"gpu": {"type": L4, "count": 3}}],
            "standard",
            "fallback[0].gpu.count",
            "allowed: 1, 2, 4, 8",
        ),
        ([{"flexStart": True, "spot": True}], "autopilot", "fallback[0].flexStart", "Spot"),
        ([{"reservation": "any", "spot": True}], "autopilot", "fallback[0].reservation", "Spot"),
        ([{"spot": True}], "autopilot", "fallback[0]", "repeats"),
        ([{"gpu": {"type": "nvidia-tesla-v100"}}], "autopilot", "fallback[0].gpu.type", "too old"),
        (
            [{"gpu": {"type": "nvidia-h200-141gb", "count": 8}}],
            "autopilot",
            "fallback[0]",
            "not sold on demand",
        ),
    ],
)
def test_each_fallback_is_validated_like_the_workloads_own_gpu(
    fallback: list[dict[str, Any]], mode: str, path: str, words: str
) -> None:
    problems = _problems(_stack(mode, fallback=fallback))
    assert any(p.startswith(f"workloads[0].{path}:") and words in p for p in problems), problems


def test_a_fallback_whose_machines_cannot_hold_the_pod_is_refused() -> None:
    problems = _problems(
        _stack(
            resources={"cpu": "40", "memory": "100Gi"},
            gpu={"type": L4, "count": 4},
            fallback=[{"gpu": {"type": T4, "count": 1}, "spot": True}],
        )
    )
    assert any(p.startswith("workloads[0].fallback[0].gpu:") and "n1-" in p for p in problems), (
        "a pod bigger than every node of a fallback would stay Pending on that fallback"
    )


def test_fallback_on_an_existing_cluster_is_refused() -> None:
    config = {
        "gke-gpu:cluster": {"mode": "existing", "context": "lab"},
        "gke-gpu:workloads": [
            {
                "name": "job",
                "kind": "Job",
                "image": "a:1",
                "gpu": {"count": 1},
                "port": None,
                "fallback": [{"spot": False}],
            }
        ],
    }
    problems = _problems(config)
    assert any(p.startswith("workloads[0].fallback:") for p in problems), problems


# --- node pools: reservations, compact placement, flex-start ---------------------------------


def test_a_pool_with_a_named_reservation_consumes_only_that_reservation(run: Run) -> None:
    pool = _node_pool(run(_pool_stack(reservation={"name": "l4-res"}, zones=["us-central1-a"])))
    assert pool["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["l4-res"],
    }


def test_a_pool_with_any_reservation_falls_back_to_on_demand(run: Run) -> None:
    pool = _node_pool(run(_pool_stack(reservation="any")))
    assert pool["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "ANY_RESERVATION"
    }


def test_a_pool_of_reservation_only_machines_without_a_reservation_is_refused() -> None:
    problems = _problems(_pool_stack(gpu={"type": "nvidia-gb200", "count": 4}))
    assert any(
        p.startswith("nodePools[0]:") and "not sold on demand" in p and "reservation" in p
        for p in problems
    ), problems
    assert not [
        p
        for p in _problems_or_none(
            _pool_stack(gpu={"type": "nvidia-gb200", "count": 4}, reservation={"name": "gb200-res"})
        )
        if p.startswith("nodePools[0]:")
    ], "with a reservation the same pool is valid"


def _problems_or_none(config: dict[str, Any]) -> list[str]:
    try:
        _load(config)
    except ConfigError as error:
        return error.problems
    return []


def test_a_spot_pool_cannot_consume_a_reservation() -> None:
    problems = _problems(_pool_stack(spot=True, reservation="any"))
    assert any(p.startswith("nodePools[0].reservation:") for p in problems), problems


def test_compact_placement_renders_a_compact_policy_in_one_zone(run: Run) -> None:
    pool = _node_pool(run(_pool_stack(placement="compact", zones=["us-central1-a"])))
    assert pool["placementPolicy"] == {"type": "COMPACT"}


@pytest.mark.parametrize(
    ("pool", "path", "words"),
    [
        ({"zones": ["us-central1-a", "us-central1-b"]}, "nodePools[0].zones", "single zone"),
        ({}, "nodePools[0].zones", "single zone"),
        (
            {"zones": ["us-central1-a"], "gpu": {"type": T4, "count": 1}},
            "nodePools[0].placement",
            "not nvidia-tesla-t4",
        ),
        ({"zones": ["us-central1-a"], "flexStart": True}, "nodePools[0].placement", "A3 Ultra"),
    ],
)
def test_compact_placement_only_where_gke_offers_it(
    pool: dict[str, Any], path: str, words: str
) -> None:
    problems = _problems(_pool_stack(placement="compact", **pool))
    assert any(p.startswith(f"{path}:") and words in p for p in problems), problems


def test_flex_start_pool_renders_flex_start_nodes_without_reservations_or_repair(run: Run) -> None:
    pool = _node_pool(run(_pool_stack(flexStart=True)))
    assert pool["nodeConfig"]["flexStart"] is True
    assert pool["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert pool["management"]["autoRepair"] is False, "Google's node-pool module requires it"
    assert pool["autoscaling"]["locationPolicy"] == "ANY"


@pytest.mark.parametrize(
    ("pool", "path"),
    [
        ({"spot": True}, "nodePools[0].flexStart"),
        ({"minNodes": 1}, "nodePools[0].minNodes"),
        ({"reservation": "any"}, "nodePools[0].reservation"),
    ],
)
def test_flex_start_constraints_are_checked(pool: dict[str, Any], path: str) -> None:
    problems = _problems(_pool_stack(flexStart=True, **pool))
    assert any(p.startswith(f"{path}:") for p in problems), problems


def test_flex_start_version_is_checked_against_the_channels_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert pins.gke_version(pins.CHANNEL_DEFAULT_VERSION["REGULAR"]) >= pins.gke_version(
        capacity_sources.FLEX_START_MIN_GKE
    ), "the REGULAR channel's default version must run flex-start GPU pools"
    monkeypatch.setitem(pins.CHANNEL_DEFAULT_VERSION, "REGULAR", "1.31.5-gke.100")
    problems = _problems(_pool_stack(flexStart=True))
    assert any(p.startswith("nodePools[0].flexStart:") and "1.32.2" in p for p in problems)


def test_pools_without_the_new_settings_keep_their_gke_names() -> None:
    config = _load(stack_config("prod"))
    own_account = dataclasses.replace(config.node_pools[0], service_account=None)
    assert gke_pool_name(own_account) == "l4-8c5e3ab4", (
        "a changed name replaces the pool: a pool without the new settings keeps its name"
    )
    reserved = dataclasses.replace(config.node_pools[0], flex_start=True)
    assert gke_pool_name(reserved) != gke_pool_name(config.node_pools[0]), (
        "turning flex-start on replaces the pool under a new name, created before the old goes"
    )


# --- cost ------------------------------------------------------------------------------------


def test_price_table_names_its_regions_date_and_sources() -> None:
    text = Path(price_table.__file__).read_text()
    assert {"us-central1", "europe-west4"} <= set(prices.PRICE_REGIONS), (
        "teams outside us-central1 need their own region's figures, not a warning"
    )
    assert prices.PRICE_DATE == "2026-07-30"
    for source in ("Cyclenerd/google-cloud-pricing-cost-calculator", "skypilot-catalog"):
        assert source in text, "every figure in the table must say where it comes from"


def test_an_n1_node_is_its_host_plus_its_gpus_and_unknown_prices_stay_unknown() -> None:
    us = "us-central1"
    assert prices.node_price("n1-standard-8", T4, 1, False, us) == pytest.approx(0.379998 + 0.35)
    # Custom N1: 4 vCPU and 20 GiB at the custom SKUs' rates, plus the T4 (price_table.py).
    custom = 4 * 0.03319155 + 20 * 0.004446 + 0.35
    assert prices.node_price("n1-custom-4-20480", T4, 1, False, us) == pytest.approx(custom), (
        "seed 003's custom T4 machine was the whole point of its cost savings"
    )
    assert prices.node_price("g1-small", None, 0, False, us) == pytest.approx(0.0257)
    assert prices.node_price("n1-standard-8", T4, 1, False, "me-central2") is None, (
        "a region without a table is unknown, never priced as us-central1"
    )
    assert prices.node_price("g2-standard-8", None, 0, False, "europe-west4") != (
        prices.node_price("g2-standard-8", None, 0, False, us)
    ), "europe-west4 has its own figures"


@pytest.mark.parametrize("spot", [False, True])
def test_a_custom_n1_machine_in_compute_engines_own_spelling_is_priced_with_its_gpu(
    spot: bool,
) -> None:
    us = "us-central1"
    vcpu, gib, spot_vcpu, spot_gib = price_table.REGION_N1_CUSTOM[us]
    t4 = price_table.REGION_GPU_PRICES[us][T4][1 if spot else 0]
    host = 4 * (spot_vcpu if spot else vcpu) + 16 * (spot_gib if spot else gib)
    for name in ("custom-4-16384", "n1-custom-4-16384"):
        assert prices.node_price(name, T4, 1, spot, us) == pytest.approx(host + t4), (
            f"{name} is an N1 VM: Compute Engine bills its T4 apart from the host, so leaving "
            "the GPU out shows under half the real price"
        )


def test_a_pool_on_a_custom_n1_machine_costs_its_host_and_its_gpu_in_the_plan() -> None:
    config = {
        **MINIMAL,
        "gke-gpu:cluster": {"mode": "standard", "deletionProtection": False},
        "gke-gpu:nodePools": [
            {"name": "t4", "gpu": {"type": T4, "count": 1}, "machineType": "custom-4-16384"}
        ],
        "gke-gpu:workloads": [
            {"name": "app", "image": "app:1.0", "gpu": {"type": T4}, "resources": {"cpu": "2"}}
        ],
    }
    cost = costs.stack_cost(_load(config))
    assert cost is not None
    (line,) = [line for line in cost.lines if line.name.startswith("pool t4")]
    vcpu, gib, _, _ = price_table.REGION_N1_CUSTOM[REGION]
    t4 = price_table.REGION_GPU_PRICES[REGION][T4][0]
    assert line.max.on_demand == pytest.approx(4 * vcpu + 16 * gib + t4), (
        "the plan's hourly figure for a custom T4 pool must include the T4"
    )


def _totals(stack: str) -> dict[tuple[str, str], float]:
    cost = costs.stack_cost(_load(stack_config(stack)))
    assert cost is not None
    return {
        (attr, which): cost.total(attr, which)[0]
        for attr in ("idle", "max")
        for which in ("configured", "on_demand", "spot")
    }


def test_dev_sleeps_at_the_cluster_fee_and_its_cpu_pods_and_peaks_at_one_spot_l4() -> None:
    totals = _totals("dev")
    # dev's model sleeps when idle (autoscale.minReplicas 0): idle counts no GPU node, only the
    # pods that stay up, billed by their requests (never Spot): the gate's two (100m, 128Mi)
    # and KEDA's seven (100m, 100Mi: two interceptors, its operator, metrics server, webhooks,
    # the add-on's operator and scaler). At max its pod (3 CPU, 10Gi) holds the smallest L4
    # machine, which Autopilot prices.
    # Its LoadBalancer Service's one regional forwarding rule runs idle and at max alike.
    on_demand, spot = price_table.REGION_MACHINE_PRICES["us-central1"]["g2-standard-4"]
    fee = prices.CLUSTER_FEE_PER_HOUR
    gates = 2 * (0.1 * prices.AUTOPILOT_POD_VCPU_HOUR + 0.125 * prices.AUTOPILOT_POD_GIB_HOUR)
    keda = 7 * (0.1 * prices.AUTOPILOT_POD_VCPU_HOUR + 100 / 1024 * prices.AUTOPILOT_POD_GIB_HOUR)
    rule = price_table.REGION_FORWARDING_RULES["us-central1"][0]
    up = fee + gates + keda + rule
    assert totals[("idle", "configured")] == pytest.approx(up)
    assert totals[("idle", "configured")] <= 0.17, (
        "issue 21: a sleeping dev stack costs about the cluster fee plus its CPU pods and its "
        "load balancer's forwarding rule"
    )
    assert totals[("idle", "on_demand")] == pytest.approx(up), (
        "Spot or not, a sleeping model holds no GPU node"
    )
    assert totals[("max", "configured")] == pytest.approx(up + (spot or 0))
    assert totals[("max", "on_demand")] == pytest.approx(up + (on_demand or 0))


def test_prod_idles_at_the_two_l4_nodes_its_replicas_hold_and_four_at_max() -> None:
    totals = _totals("prod")
    table = price_table.REGION_MACHINE_PRICES["us-central1"]
    node = table["g2-standard-8"][0] or 0
    system = 3 * (table["e2-standard-2"][0] or 0)
    fee = prices.CLUSTER_FEE_PER_HOUR + price_table.REGION_FORWARDING_RULES["us-central1"][0]
    assert totals[("idle", "configured")] == pytest.approx(fee + system + 2 * node), (
        "prod's two replicas each hold an L4 node whatever minNodes says: idle is two nodes"
    )
    assert totals[("max", "configured")] == pytest.approx(fee + system + 4 * node)


def test_render_prints_idle_and_max_costs_with_the_price_date(tmp_path: Path) -> None:
    printed = shared.main(["dev"], tmp_path)
    assert printed.code == render.EXIT_OK
    out = printed.out
    assert f"list prices of {prices.PRICE_DATE}" in out
    assert "as configured: idle $0.17/h, max $0.57/h" in out, out
    assert "workload llm (g2-standard-4 per pod): idle $0.00/h, max $0.40/h" in out, (
        "a sleeping model's GPU node is not part of the idle cost, and is at max"
    )


def test_a_flex_start_pool_prints_an_unknown_price_not_zero(tmp_path: Path) -> None:
    stack = ROOT / "examples" / "Pulumi.flex-start.yaml"
    printed = shared.main(["flex-start", "--stack-file", str(stack)], tmp_path)
    assert printed.code == 0
    out = printed.out
    assert "max $0.30/h + 1 unknown" in out, "an unknown price must not read as free"
    assert "pool l4-flex (idle 0, max 2 x g2-standard-8): idle $0.00/h, max unknown" in out, out


# flex-start: test_a_flex_start_pool_prints_an_unknown_price_not_zero renders it clean (the same
# command, the same exit code asserted) before it reads the prices.
@pytest.mark.parametrize("name", ["fallback", "reservation", "compact"])
def test_every_getting_gpus_example_renders_clean(name: str, tmp_path: Path) -> None:
    stack = ROOT / "examples" / f"Pulumi.{name}.yaml"
    assert shared.main([name, "--stack-file", str(stack)], tmp_path).code == 0


def test_an_autoscaled_autopilot_workload_idles_at_min_replicas_and_peaks_at_max() -> None:
    config = load(
        {
            "workloads": [
                {
                    "name": "llm",
                    "image": "vllm/vllm-openai:v0.29.0",
                    "gpu": {"type": "nvidia-l4", "count": 1},
                    "cache": {"size": "30Gi"},
                    "autoscale": {"minReplicas": 1, "maxReplicas": 3},
                }
            ]
        },
        project="acme-ml-dev",
        region="us-central1",
        stack="dev",
    )
    (line,) = [x for x in costs.stack_cost(config).lines if x.name.startswith("workload")]
    assert line.max.configured == pytest.approx(3 * line.idle.configured), (
        "the HPA may run 3 pods: the stack's max cost is 3 nodes, its idle cost 1"
    )


STANDARD_FALLBACK = """config:
  gcp:project: acme-ml-dev
  gcp:region: us-central1
  gke-gpu:cluster: {mode: standard, deletionProtection: false}
  gke-gpu:workloads:
    - name: llm
      image: us-docker.pkg.dev/acme-ml-dev/mirror/vllm-openai:v0.29.0
      gpu: {type: nvidia-l4, count: 1}
      spot: true
      fallback: [{spot: false}]
      args: [--model, Qwen/Qwen2.5-0.5B-Instruct]
      cache: {size: 30Gi}
      autoscale: {minReplicas: 1, maxReplicas: 6}
      expose: {port: 443, sourceRanges: [203.0.113.0/24]}
"""


def test_a_standard_stack_with_only_fallback_workloads_renders_its_plan(tmp_path: Path) -> None:
    stack_file = tmp_path / "Pulumi.sf.yaml"
    stack_file.write_text(STANDARD_FALLBACK)
    code = render.main(["sf", "--stack-file", str(stack_file), "--out", str(tmp_path / "out")])
    assert code == render.EXIT_OK, "the plan (and its summary) must not crash on a ComputeClass"


def test_auto_provisioning_limits_cover_the_autoscalers_maximum(tmp_path: Path) -> None:
    stack_file = tmp_path / "Pulumi.sf.yaml"
    stack_file.write_text(STANDARD_FALLBACK)
    plan = render.render("sf", stack_file)
    cluster = plan.recording.one(CLUSTER).inputs
    limits = {
        r["resourceType"]: r["maximum"] for r in cluster["clusterAutoscaling"]["resourceLimits"]
    }
    assert limits["nvidia-l4"] >= 6, (
        "the HPA may run 6 pods of one L4 each: a lower cap leaves replicas Pending"
    )


def test_a_compute_class_machine_holds_the_pod_and_its_fuse_sidecar() -> None:
    config = load(
        {
            "workloads": [
                {
                    "name": "llm",
                    "image": "vllm/vllm-openai:v0.29.0",
                    "gpu": {"type": "nvidia-l4", "count": 1},
                    "resources": {"cpu": "3", "memory": "12Gi"},
                    "modelCache": {"bucket": "acme-models", "stream": False},
                    "fallback": [{"spot": True}],
                }
            ]
        },
        project="acme-ml-dev",
        region="us-central1",
        stack="dev",
    )
    first = config.workloads[0].capacity[0]
    assert first.machine_type != "g2-standard-4", (
        "g2-standard-4 leaves 12.20 GiB for pods; 12Gi plus the FUSE sidecar's 256Mi does not "
        "fit, and a ComputeClass with DoNotScaleUp would leave the pod Pending forever"
    )


def test_auto_provisioned_gpu_pools_upgrade_without_a_surge_node(
    standard_fallback: Recording,
) -> None:
    defaults = standard_fallback.one(CLUSTER).inputs["clusterAutoscaling"][
        "autoProvisioningDefaults"
    ]
    assert defaults["upgradeSettings"] == {
        "strategy": "SURGE",
        "maxSurge": 0,
        "maxUnavailable": 1,
    }, (
        "the auto-provisioning limits hold the workloads at their maximum and no more: a node "
        "upgrade that waits for a surge GPU node beyond them never finishes"
    )
