"""A GpuNodePool handed to GpuService as `pool.service_pool` is the pool its pods select (issue 41),
and two GpuServices of one workload name live in one program (issue 41).

GpuService decides its pods' node selector from its `nodePools` entries with the stack's loader
(components/service/placement.py node_selector -> gke_pool_name), and a pool's GKE name hashes
its replacement settings (components/platform/nodepool.py replacement_settings). Each case here
runs a program under the recording engine that creates a GpuNodePool and a GpuService on it, and
compares the NodePool's registered `name` with the label value the workload's pods select. That
the shipped stacks keep their URNs is tests/test_upgrades.py's.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pytest

from components.config import ConfigError, GpuDriver, GpuPool, Sharing
from components.config.choices import GpuSharingStrategy, NodeImageType, PoolPlacement
from components.config.platform_model import Reservation
from components.config.workload_args import (
    ServiceCluster,
    ServiceClusterMode,
    ServiceNodePool,
    Workload,
    WorkloadExposeType,
    WorkloadKind,
)
from components.facts import pins
from components.facts.labels import NODEPOOL_LABEL
from components.platform.certificate import CertificateAuthority, CertificateAuthorityArgs
from components.platform.nodepool import GpuNodePool, GpuNodePoolArgs
from components.service.gpu_service import GpuService, GpuServiceArgs
from tests.package_samples import NODES, PROJECT_ID, REGION, kubernetes
from tools.engine import Recording, Registration, run_program

NODE_POOL = "gcp:container/nodePool:NodePool"
SERVICE = "gke-gpu:index:GpuService"
IN_WORKLOAD = "gke-gpu:index:GpuWorkload$"
ZONE_A, ZONE_C = f"{REGION}-a", f"{REGION}-c"
ACCOUNT = f"gpu-nodes@{PROJECT_ID}.iam.gserviceaccount.com"

# A vLLM server as tests/package_samples.py writes one: the CUDA 13 build the plan knows
# (components/facts/pins.py VLLM_IMAGE, which needs GKE's `latest` driver), or its CUDA 12 build.
VLLM: Workload = {
    "name": "llm",
    "image": pins.VLLM_IMAGE,
    "args": ["Qwen/Qwen2.5-0.5B-Instruct", "--max-model-len", "4096"],
    "gpu": {"type": "nvidia-l4", "count": 1},
    "port": 8000,
    "env": {"LOG_LEVEL": "info"},
}
VLLM_CUDA12: Workload = {**VLLM, "image": pins.VLLM_IMAGE_CUDA12}
# A batch Job that waits in Kueue for a queued-provisioning pool (tests/test_batch.py NIGHTLY).
NIGHTLY: Workload = {
    "name": "nightly",
    "kind": WorkloadKind.Job,
    "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
    "gpu": {"type": "nvidia-l4", "count": 1},
    "port": None,
    "queue": {"max_run_duration": "4h"},
}


def _l4(**settings: Any) -> GpuPool:
    return GpuPool(
        **{"name": "l4", "gpu_type": "nvidia-l4", "gpu_count": 1, "max_nodes": 2, **settings}
    )


def _on(gpu: str, workload: Workload) -> Workload:
    return {**workload, "gpu": {"type": gpu, "count": 1}}


@dataclass(frozen=True)
class Case:
    pool: GpuPool
    workload: Workload = field(default_factory=lambda: VLLM)
    cluster: ServiceCluster = field(default_factory=lambda: ServiceCluster())


LATEST = GpuDriver.LATEST
CASES: dict[str, Case] = {
    "driver-unset-cuda12": Case(_l4(spot=True), {**VLLM_CUDA12, "spot": True}),
    "driver-latest-cuda13": Case(_l4(driver=LATEST)),
    "spot": Case(_l4(driver=LATEST, spot=True), {**VLLM, "spot": True}),
    "time-sharing": Case(
        _l4(driver=LATEST, sharing=Sharing(GpuSharingStrategy.TIME_SHARING, 4), max_nodes=1)
    ),
    "mps": Case(_l4(driver=LATEST, sharing=Sharing(GpuSharingStrategy.MPS, 2))),
    "mig-a100": Case(
        GpuPool(name="a100", gpu_type="nvidia-tesla-a100", driver=LATEST, partition_size="1g.5gb"),
        _on("nvidia-tesla-a100", VLLM),
    ),
    "mig-h100": Case(
        GpuPool(name="h100", gpu_type="nvidia-h100-80gb", driver=LATEST, partition_size="1g.10gb"),
        _on("nvidia-h100-80gb", VLLM),
    ),
    "named-reservation": Case(
        _l4(driver=LATEST, reservation=Reservation("l4-res"), zones=[ZONE_A])
    ),
    "any-reservation": Case(_l4(driver=LATEST, reservation=Reservation(None))),
    "zones": Case(_l4(driver=LATEST, zones=[ZONE_A, ZONE_C])),
    "compact-placement": Case(_l4(driver=LATEST, placement=PoolPlacement.COMPACT, zones=[ZONE_A])),
    "flex-start": Case(_l4(driver=LATEST, flex_start=True)),
    "queued-provisioning": Case(
        _l4(driver=LATEST, flex_start=True, queued_provisioning=True, max_nodes=8), NIGHTLY
    ),
    "ubuntu-driver-unset": Case(_l4(image_type=NodeImageType.UBUNTU_CONTAINERD), VLLM_CUDA12),
    "installer-driver": Case(_l4(driver=GpuDriver.INSTALLER), VLLM_CUDA12),
    "two-gpu-nodes-kept-warm": Case(
        _l4(driver=LATEST, gpu_count=2, min_nodes=1, min_nodes_reason="serving-latency-slo")
    ),
    "image-cache-disk": Case(
        _l4(
            driver=LATEST,
            image_streaming=True,
            secondary_boot_disk=f"projects/{PROJECT_ID}/global/images/vllm-cache",
        )
    ),
    "own-node-account": Case(
        _l4(driver=LATEST, service_account=ACCOUNT), cluster={"node_service_account": ACCOUNT}
    ),
}

# Not placed, on purpose: the issue's pool (Spot L4, driver left out) under a CUDA 13 server.
ISSUE_41 = Case(_l4(spot=True), {**VLLM, "spot": True})
PROGRAMS = {**CASES, "issue-41": ISSUE_41}
# The issue's consumer: the pool restated by hand, its driver left out as the pool left it.
HAND_WRITTEN: ServiceNodePool = {
    "name": "l4",
    "gpu": {"type": "nvidia-l4", "count": 1},
    "spot": True,
    "max_nodes": 2,
}


def build(case: str, hand_written: bool = False) -> None:
    """The program: a GpuNodePool, and a GpuService given the pool as the pool describes itself
    (or, `hand_written`, as a consumer restated it before issue 41)."""
    c = PROGRAMS[case]
    pool = GpuNodePool(
        "gpu",
        GpuNodePoolArgs(
            project=PROJECT_ID,
            location=REGION,
            cluster_name="gpu",
            service_account=NODES,
            pool=c.pool,
        ),
    )
    GpuService(
        "llm",
        GpuServiceArgs(
            workload=c.workload,
            cluster={
                "mode": ServiceClusterMode.Standard,
                "name": "gpu",
                "location": REGION,
                "deletion_protection": False,
                **c.cluster,
            },
            node_pools=[HAND_WRITTEN if hand_written else pool.service_pool],
            kubernetes=kubernetes(),
            project=PROJECT_ID,
            region=REGION,
            waits={"gpu_capacity": [pool.name]},
        ),
    )


def _run(tmp_path: Path, call: str) -> Recording:
    program = tmp_path / "__main__.py"
    program.write_text(f"from tests.test_package_pools_names import build, build_two\n{call}\n")
    return run_program({}, program=program)


def _pod_spec(r: Registration) -> dict[str, Any]:
    spec = r.inputs["spec"]
    template = spec.get("template") or spec["jobTemplate"]["spec"]["template"]
    return template["spec"]


def _placed(recording: Recording) -> tuple[str, str | None]:
    """The GKE name the NodePool registered, and the one the workload's pods select."""
    pool = recording.one(NODE_POOL).inputs["name"]
    (workload,) = [
        r
        for r in recording.resources
        if IN_WORKLOAD in r.urn and {"template", "jobTemplate"} & set(r.inputs.get("spec", {}))
    ]
    return pool, _pod_spec(workload).get("nodeSelector", {}).get(NODEPOOL_LABEL)


@pytest.mark.parametrize("case", CASES)
def test_the_pods_select_the_gke_name_of_the_pool_handed_over(case: str, tmp_path: Path) -> None:
    pool, selected = _placed(_run(tmp_path, f"build({case!r})"))
    assert selected == pool, (
        f"{case}: GpuService's pods select {NODEPOOL_LABEL}={selected!r}, but the GpuNodePool "
        f"registered the GKE pool {pool!r}: no node ever carries that label, so the pods stay "
        "Pending for ever while the pool (and its GPUs, if kept warm) goes unused"
    )


def test_a_cuda13_server_on_a_pool_left_on_gkes_default_driver_is_refused(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError) as refused:
        _run(tmp_path, "build('issue-41')")
    assert "driver: latest" in str(refused.value), (
        "a pool left on GKE's default driver cannot run a CUDA 13 vLLM image: GpuService must "
        "say at preview to set the pool's driver to latest, not start a server that crashes at "
        f"its first CUDA call (or select a pool that does not exist): {refused.value}"
    )


def test_the_hand_written_entry_without_driver_selects_a_pool_that_does_not_exist(
    tmp_path: Path,
) -> None:
    """The issue's bug, as the old way still produces it: the loader gives a CUDA 13 workload's
    pool `latest`, the GpuNodePool `default`, so the hashes differ (what the test above guards)."""
    pool, selected = _placed(_run(tmp_path, "build('issue-41', hand_written=True)"))
    assert selected is not None and selected != pool, (
        f"a restated entry without `driver` must select another pool ({selected!r} vs the "
        f"registered {pool!r}): otherwise the selector test could not catch the pods of issue "
        "41, Pending for ever on a pool that does not exist"
    )


def build_two() -> None:
    """Two exposed services, each its own `llm`, in namespaces team-a and team-b."""
    pool = GpuNodePool(
        "gpu",
        GpuNodePoolArgs(
            project=PROJECT_ID,
            location=REGION,
            cluster_name="gpu",
            service_account=NODES,
            pool=_l4(driver=LATEST, spot=True),
        ),
    )
    ca = CertificateAuthority("ca", CertificateAuthorityArgs("test"))
    provider = kubernetes()
    for name in ("a", "b"):
        workload: Workload = {
            **VLLM,
            "spot": True,
            "expose": {
                "port": 443,
                "type": WorkloadExposeType.LoadBalancer,
                "source_ranges": ["203.0.113.0/24"],
                "keys": ["web"],
            },
            "cache": {"size": "30Gi"},
            "secret_env": {"HF_TOKEN": "hfToken"},
            "autoscale": {"min_replicas": 1, "max_replicas": 2},
        }
        GpuService(
            name,
            GpuServiceArgs(
                workload=workload,
                cluster={
                    "mode": ServiceClusterMode.Standard,
                    "name": "gpu",
                    "location": REGION,
                    "deletion_protection": False,
                },
                node_pools=[pool.service_pool],
                kubernetes=provider,
                project=PROJECT_ID,
                region=REGION,
                namespace=f"team-{name}",
                secrets={"hfToken": pulumi.Output.secret("hf-secret-value")},
                ca={"cert_pem": ca.cert_pem, "private_key_pem": ca.private_key_pem},
                monitored=True,
            ),
        )


def _descendants(recording: Recording, urn: str) -> list[Registration]:
    found: list[Registration] = []
    parents = {urn}
    for r in sorted(recording.resources, key=lambda r: r.urn.count("$")):
        if r.parent in parents:
            found.append(r)
            parents.add(r.urn)
    return found


def test_two_services_of_one_workload_name_register_distinct_urns(tmp_path: Path) -> None:
    recording = _run(tmp_path, "build_two()")
    twice = [urn for urn, n in Counter(r.urn for r in recording.resources).items() if n > 1]
    assert not twice, (
        "two GpuServices of workload `llm` (team-a, team-b) in one program must not register a "
        f"URN twice, or `pulumi up` fails with a duplicate resource URN: {twice}"
    )
    service = {r.name: r.urn for r in recording.of_type(SERVICE)}
    for name in ("a", "b"):
        children = _descendants(recording, service[name])
        assert len(children) > 20, f"GpuService {name!r} registered only {len(children)}"
        foreign = [c.name for c in children if not re.search(rf"(^|-){name}([-/]|$)", c.name)]
        assert not foreign, (
            f"every child of GpuService {name!r} is named after it, so another service of the "
            f"same workload name never takes its URN: {foreign}"
        )


def test_a_service_named_apart_from_its_workload_keeps_its_children_from_0_1_0(
    tmp_path: Path,
) -> None:
    recording = _run(tmp_path, "build_two()")
    service = {r.name: r.urn for r in recording.of_type(SERVICE)}
    children = [c for c in _descendants(recording, service["a"]) if c.parent == service["a"]]
    unaliased = [
        c.name
        for c in children
        if c.name != "a-kubernetes"
        and {"name": c.name.replace("-a", "-llm", 1)}
        not in [{k: v for k, v in alias.items() if k == "name"} for alias in c.aliases]
    ]
    assert not unaliased, (
        "the 0.1.0 library named GpuService's children after the workload (`workload-llm`): a "
        "program that named its service otherwise must find them under an alias, or `pulumi up` "
        f"deletes and recreates them (the model's Deployment, its gate, its keys): {unaliased}"
    )
