"""Boot disks and cache disks the machine can take (issue 34's gap): GPU node pools on machines
that boot only from Hyperdisk (A3 Ultra, A4, G4) name `diskType: hyperdisk-balanced`; every
other pool sends no diskType, so GKE keeps its default (pd-balanced) and plans do not change;
a workload's cache on a Persistent Disk class is refused where its machines attach only
Hyperdisk volumes (A3 Ultra, A4, A4X, G4), and the plan names the Hyperdisk class it takes.
Sources: components/facts/catalog/machines.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.config import ConfigError, load
from components.facts import catalog
from tests.conftest import MINIMAL, NODE_POOL, STANDARD, Run
from tools import summary

HYPERDISK = "hyperdisk-balanced"


def _stack(gpu: str, count: int, machine: str | None = None, **workload: Any) -> dict[str, Any]:
    """A Standard stack with one Spot GPU pool of `count` x `gpu` and one workload on it (not a
    vLLM image: the disks are the point here, not how vLLM splits a model over the GPUs)."""
    config = copy.deepcopy(STANDARD)
    pool: dict[str, Any] = {"name": "gpu", "gpu": {"type": gpu, "count": count}, "spot": True}
    if machine is not None:
        pool["machineType"] = machine
    config["gke-gpu:nodePools"] = [{**pool, "maxNodes": 1}]
    workload = {"image": "registry.example/app:1.0", **workload}
    config["gke-gpu:workloads"][0].update(gpu={"type": gpu, "count": count}, **workload)
    return config


def _node_config(run: Run, config: dict[str, Any]) -> dict[str, Any]:
    recording = run(config)
    pools = [
        r.inputs["nodeConfig"]
        for r in recording.of_type(NODE_POOL)
        if r.inputs["nodeConfig"].get("guestAccelerators")
    ]
    assert len(pools) == 1
    return pools[0]


@pytest.mark.parametrize(
    ("gpu", "count", "machine"),
    [
        ("nvidia-h200-141gb", 8, "a3-ultragpu-8g"),
        ("nvidia-b200", 8, "a4-highgpu-8g"),
        ("nvidia-rtx-pro-6000", 1, "g4-standard-48"),
    ],
    ids=["a3-ultra", "a4", "g4"],
)
def test_a_pool_on_a_hyperdisk_only_machine_names_a_hyperdisk_balanced_boot_disk(
    run: Run, gpu: str, count: int, machine: str
) -> None:
    node_config = _node_config(run, _stack(gpu, count))
    assert node_config["machineType"] == machine
    assert node_config.get("diskType") == HYPERDISK, (
        f"{machine} boots only from Hyperdisk Balanced (GKE's autoscaler machine table); a pool "
        f"that leaves the boot disk to GKE's default (pd-balanced) is not guaranteed to create"
    )


@pytest.mark.parametrize(
    ("gpu", "count", "machine"),
    [
        ("nvidia-l4", 1, "g2-standard-4"),
        ("nvidia-tesla-a100", 1, "a2-highgpu-1g"),
        ("nvidia-h100-80gb", 8, "a3-highgpu-8g"),
        ("nvidia-tesla-t4", 1, "n1-custom-4-20480"),
    ],
    ids=["l4", "a100", "h100", "t4-custom"],
)
def test_a_pool_on_a_persistent_disk_machine_sends_no_disk_type(
    run: Run, gpu: str, count: int, machine: str
) -> None:
    node_config = _node_config(run, _stack(gpu, count, machine))
    assert node_config["machineType"] == machine
    assert "diskType" not in node_config, (
        f"{machine} boots from GKE's default pd-balanced: naming a disk type would change the "
        f"plan of every existing stack on it (sent: {node_config.get('diskType')!r})"
    )


def test_every_series_that_cannot_boot_from_pd_balanced_names_a_type_it_can() -> None:
    for gpu in catalog.GPU_TYPES.values():
        for machine in gpu.machine_types:
            disk = machine.boot_disk_type
            if "pd-balanced" in machine.boot_disks:
                assert disk is None, f"{machine.name} boots from GKE's default; send nothing"
            else:
                assert disk in machine.boot_disks, (
                    f"{machine.name} would be given {disk!r}, a boot disk it cannot take"
                )


def _load(config: dict[str, Any]) -> Any:
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    return load(raw, project=MINIMAL["gcp:project"], region="us-central1", stack="t")


def _problems(config: dict[str, Any]) -> list[str]:
    try:
        _load(config)
    except ConfigError as error:
        return error.problems
    return []


@pytest.mark.parametrize(("gpu", "count"), [("nvidia-b200", 8), ("nvidia-l4", 1)])
def test_the_plan_names_the_boot_disk_the_pool_registers(run: Run, gpu: str, count: int) -> None:
    config = _stack(gpu, count)
    sent = _node_config(run, config).get("diskType")
    stack = _load(config)
    words = " ".join(summary.pool_lines(stack, stack.node_pools[0]))
    said = HYPERDISK in words and "boot disk" in words
    assert said == (sent == HYPERDISK), (
        f"the offline plan must say the boot disk the pool registers (sent {sent!r}): {words}"
    )


@pytest.mark.parametrize("storage_class", [None, "standard-rwo", "premium-rwo"])
@pytest.mark.parametrize(
    ("gpu", "count"),
    [("nvidia-h200-141gb", 8), ("nvidia-b200", 8), ("nvidia-rtx-pro-6000", 1)],
    ids=["a3-ultra", "a4", "g4"],
)
def test_a_cache_on_a_persistent_disk_class_is_refused_where_only_hyperdisk_attaches(
    gpu: str, count: int, storage_class: str | None
) -> None:
    cache = {"size": "30Gi"} | ({"storageClass": storage_class} if storage_class else {})
    problems = _problems(_stack(gpu, count, cache=cache))
    refused = [p for p in problems if p.startswith("workloads[0].cache.storageClass")]
    assert refused, (
        f"a {storage_class or 'default'} (Persistent Disk) cache disk never attaches to {gpu} "
        f"machines, so the pod would stay Pending; the config must say so: {problems}"
    )
    assert "hyperdisk-balanced" in refused[0], f"the refusal must name the fix: {refused[0]}"


def test_a_cache_on_a_hyperdisk_class_loads_on_a_hyperdisk_only_machine() -> None:
    cache = {"size": "30Gi", "storageClass": "hyperdisk-balanced"}
    problems = _problems(_stack("nvidia-b200", 8, cache=cache))
    assert not problems, f"a Hyperdisk StorageClass attaches to A4: {problems}"


def test_the_plan_names_the_hyperdisk_class_of_an_a3_ultra_cache() -> None:
    cache = {"size": "300Gi", "storageClass": "hd"}
    stack = _load(_stack("nvidia-h200-141gb", 8, cache=cache))
    words = " ".join(summary.workload_lines(stack, stack.workloads[0]))
    said = (
        "cache disk: StorageClass hd, a Hyperdisk class (NVIDIA H200 141GB machines attach only "
        "Hyperdisk volumes"
    )
    assert said in words, (
        "A3 Ultra takes no Persistent Disk (Google's A3 Ultra limitations): the plan must say "
        f"which class the cache takes and that it must be a Hyperdisk one: {words}"
    )


def test_a_cache_on_the_default_class_still_loads_on_l4() -> None:
    problems = _problems(_stack("nvidia-l4", 1, cache={"size": "30Gi"}))
    assert not problems, f"G2 attaches Persistent Disk volumes: {problems}"


def test_a_b200_on_autopilot_has_a_way_out_that_no_message_sends_in_a_circle() -> None:
    # Found by a new user's review: the cache refusal said "or remove cache", and without a cache
    # the Autopilot rule asked for one, even with resources.ephemeralStorage set.
    from tests.conftest import vllm_workload_problems

    b200 = {"type": "nvidia-b200", "count": 1}
    (cache,) = [
        p for p in vllm_workload_problems(gpu=b200, cache={"size": "300Gi"}) if "storageClass" in p
    ]
    assert "or remove cache" not in cache and "resources.ephemeralStorage" in cache, cache
    scratch = vllm_workload_problems(gpu=b200, resources={"ephemeralStorage": "300Gi"})
    assert not [p for p in scratch if ".cache" in p.split(":")[0]], (
        f"ephemeralStorage holds the weights in the container's filesystem: {scratch}"
    )
    assert [p for p in vllm_workload_problems(gpu=b200) if p.startswith("workloads[0].cache")], (
        "with neither, the 1 GiB default still evicts the download"
    )
