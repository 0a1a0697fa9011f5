"""Ordering and lifecycle, asserted on what the engine receives (the recorded registrations)."""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from components.config import ConfigError, NodePoolConfig, Sharing
from components.config.formats import GKE_NAME
from components.platform.nodepool import gke_pool_name
from tests import shared
from tests.conftest import (
    DAEMONSET,
    DEPLOYMENT,
    MINIMAL,
    NAMESPACE,
    NODE_POOL,
    PROVIDER,
    ROOT,
    Run,
)
from tools.engine import Recording, RecordingMonitor, run_program

JOB = "kubernetes:batch/v1:Job"
ROUTER = "gcp:compute/router:Router"
ROUTER_NAT = "gcp:compute/routerNat:RouterNat"
STACK = "pulumi:pulumi:Stack"


def _gpu_pool(recording: Recording) -> Any:
    (pool,) = [
        r for r in recording.of_type(NODE_POOL) if r.inputs["nodeConfig"].get("guestAccelerators")
    ]
    return pool


def _node_selector(recording: Recording) -> dict[str, str]:
    selector: dict[str, str] = recording.served(DEPLOYMENT).inputs["spec"]["template"]["spec"][
        "nodeSelector"
    ]
    return selector


# --- ordering is data passed to the resource that waits -------------------------------------


def test_a_components_depends_on_does_not_reach_its_children(tmp_path: Path) -> None:
    # Why ordering is handed to the children (GpuNodePoolArgs.after, GpuWorkloadArgs.after):
    # pulumi/pulumi sdk/python/lib/pulumi/resource.py lets a child inherit its parent's protect
    # and providers, never its depends_on.
    program = tmp_path / "program.py"
    program.write_text(
        "import pulumi\n"
        "from pulumi_kubernetes.core.v1 import ConfigMap\n"
        "first = ConfigMap('first')\n"
        "component = pulumi.ComponentResource('test:index:Box', 'box', None,\n"
        "    pulumi.ResourceOptions(depends_on=[first]))\n"
        "ConfigMap('child', opts=pulumi.ResourceOptions(parent=component))\n"
    )
    recording = run_program({}, program=program)
    first = recording.named("first").urn
    assert first in recording.named("box").dependencies, "the component itself records it"
    assert first not in recording.named("child").dependencies, (
        "if the SDK ever passes a component's depends_on to its children, `after` can go"
    )


def test_gpu_node_pool_waits_for_the_system_pool(prod: Recording) -> None:
    system = prod.named("gke-system")
    assert system.urn in _gpu_pool(prod).dependencies, (
        "GPU pool must wait for the system pool: GKE taints GPU nodes nvidia.com/gpu only when "
        "a non-GPU pool exists, and untainted GPU nodes take any pod"
    )


def test_deployment_waits_for_its_gpu_node_pool(prod: Recording) -> None:
    assert _gpu_pool(prod).urn in prod.served(DEPLOYMENT).dependencies, (
        "pods created before their pool sit Pending past the timeout, and destroy would delete "
        "the pool while pods still run on it"
    )


def test_deployment_waits_for_the_driver_installer(run: Run, standard: dict[str, Any]) -> None:
    standard["gke-gpu:nodePools"][0].update(driver="installer")
    recording = run(standard)
    installer = recording.one(DAEMONSET)
    assert installer.urn in recording.served(DEPLOYMENT).dependencies, (
        "a GPU pod scheduled before the driver is installed fails to start its CUDA runtime"
    )


def test_objects_in_the_namespace_wait_for_it(prod: Recording) -> None:
    assert prod.one(NAMESPACE).urn in prod.served(DEPLOYMENT).dependencies, (
        "a Deployment applied before its namespace exists is rejected by the API server"
    )


# --- the GKE provider keeps state when the cluster is unreachable ----------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_gke_provider_never_drops_state_for_an_unreachable_cluster(stack: str) -> None:
    provider = shared.recording(stack).one(PROVIDER).inputs
    assert "deleteUnreachable" not in provider, (
        "with deleteUnreachable an off-VPN refresh drops every Kubernetes object from state "
        "(pulumi-kubernetes#2489: opt-in, PULUMI_K8S_DELETE_UNREACHABLE=true per run)"
    )


# --- GPU pool replacements create the new pool first -----------------------------------------


def _pool(**changes: Any) -> NodePoolConfig:
    base = NodePoolConfig(
        name="l4",
        gpu_type="nvidia-l4",
        gpu_count=1,
        machine_type="g2-standard-8",
        spot=True,
        min_nodes=0,
        max_nodes=2,
        min_nodes_reason=None,
        zones=(),
        image_type="COS_CONTAINERD",
        driver="default",
        sharing=None,
        partition_size=None,
    )
    return dataclasses.replace(base, **changes)


@pytest.mark.parametrize(
    "pool",
    [
        _pool(),
        _pool(name="a" * 40),
        _pool(name="a" * 30 + "-" + "b" * 9),  # truncation lands right after a hyphen
        _pool(sharing=Sharing("TIME_SHARING", 48), partition_size="1g.10gb"),
    ],
)
def test_gke_pool_name_is_a_valid_gke_name_and_stable(pool: NodePoolConfig) -> None:
    name = gke_pool_name(pool)
    assert re.fullmatch(GKE_NAME, name), f"GKE refuses the pool name {name!r}"
    assert name == gke_pool_name(copy.deepcopy(pool)), "a name that varies replaces the pool"


def test_gke_pool_name_is_pinned_across_releases() -> None:
    # A golden value: any change to what is hashed, or how, renames (so replaces) every
    # deployed GPU pool. Change it only with a release note saying so.
    assert gke_pool_name(_pool()) == "l4-9952a056", "the hash of a pool's settings moved"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            {"gpu": {"type": "nvidia-tesla-t4", "count": 1}},
            "guest_accelerator.type is ForceNew",
        ),
        ({"driver": "latest"}, "gpu_driver_installation_config is ForceNew"),
        ({"spot": False}, "spot is ForceNew"),
        ({"sharing": {"strategy": "TIME_SHARING", "maxClientsPerGpu": 2}}, "sharing is ForceNew"),
    ],
)
def test_a_replacing_change_renames_the_pool_and_moves_the_workload(
    run: Run, standard: dict[str, Any], change: dict[str, Any], reason: str
) -> None:
    before = run(copy.deepcopy(standard))
    standard["gke-gpu:nodePools"][0].update(change)
    workload = standard["gke-gpu:workloads"][0]
    if "gpu" in change:
        workload["gpu"] = change["gpu"]
    if "spot" in change:
        workload["spot"] = change["spot"]
    after = run(standard)
    old, new = _gpu_pool(before).inputs["name"], _gpu_pool(after).inputs["name"]
    assert old != new, (
        f"{reason}: with the same GKE name the replacement must delete the old pool first"
    )
    assert _node_selector(after)["cloud.google.com/gke-nodepool"] == new, (
        "the workload must select the new pool, so its rollout moves the pods over"
    )


@pytest.mark.parametrize(
    "change",
    [{"maxNodes": 3}, {"minNodes": 1, "minNodesReason": "warm"}, {"machineType": "g2-standard-12"}],
)
def test_an_in_place_change_keeps_the_pool_name(
    run: Run, standard: dict[str, Any], change: dict[str, Any]
) -> None:
    before = run(copy.deepcopy(standard))
    standard["gke-gpu:nodePools"][0].update(change)
    after = run(standard)
    assert _gpu_pool(after).inputs["name"] == _gpu_pool(before).inputs["name"], (
        "GKE updates autoscaling and machine type in place; a new name would replace the pool"
    )


@pytest.fixture
def delete_before_replace(monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[bool, bool]]:
    """Resource name -> (deleteBeforeReplace, deleteBeforeReplaceDefined) as sent to the engine.
    Through monkeypatch, so the `run` fixture runs the program afresh (tests/conftest.py)."""
    seen: dict[str, tuple[bool, bool]] = {}
    original = RecordingMonitor.RegisterResource

    def spy(self: RecordingMonitor, request: Any) -> Any:
        seen[request.name] = (request.deleteBeforeReplace, request.deleteBeforeReplaceDefined)
        return original(self, request)

    monkeypatch.setattr(RecordingMonitor, "RegisterResource", spy)
    return seen


def test_gpu_pool_replacement_creates_the_new_pool_before_deleting_the_old(
    run: Run, standard: dict[str, Any], delete_before_replace: dict[str, tuple[bool, bool]]
) -> None:
    pool = _gpu_pool(run(standard))
    assert pool.delete_before_replace is False
    assert delete_before_replace[pool.name] == (False, True), (
        "an explicit false is needed: the bridge asks for delete-before-replace whenever a "
        "name is set, which would drain every GPU node before the new pool exists"
    )


# --- Jobs do not block `pulumi up` unless asked -------------------------------------------------


def _job_config(**fields: Any) -> dict[str, Any]:
    job = {
        "name": "train",
        "kind": "Job",
        "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
        "port": None,
        **fields,
    }
    return {**MINIMAL, "gke-gpu:workloads": [job]}


def test_a_job_does_not_block_pulumi_up_by_default(run: Run) -> None:
    job = run(_job_config()).one(JOB)
    assert job.inputs["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}, (
        "without skipAwait `pulumi up` waits until the Job completes: hours for training"
    )
    assert job.custom_timeouts == {}, "a Job nobody waits for needs no wait timeout"


def test_wait_for_completion_makes_pulumi_up_wait_for_the_job(run: Run) -> None:
    job = run(_job_config(waitForCompletion=True)).one(JOB)
    assert "annotations" not in job.inputs["metadata"], "the user asked `up` to wait"
    assert job.custom_timeouts["create"] == "40m", "a GPU node from zero takes minutes"


def test_wait_for_completion_on_a_deployment_is_refused(run: Run) -> None:
    config = _job_config(waitForCompletion=True)
    config["gke-gpu:workloads"][0].update(kind="Deployment", port=8000)
    with pytest.raises(ConfigError, match=r"workloads\[0\]\.waitForCompletion: only a Job"):
        run(config)


# --- protected stacks protect what the service stands on ---------------------------------------


@pytest.mark.parametrize(
    ("type_", "name"),
    [
        (NODE_POOL, "pool-l4-pool"),
        (NODE_POOL, "gke-system"),
        (ROUTER, "gke-router"),
        (ROUTER_NAT, "gke-nat"),
        (NAMESPACE, "namespace-namespace"),
    ],
)
def test_protected_stack_protects_pools_nat_and_namespace(
    prod: Recording, type_: str, name: str
) -> None:
    resource = prod.named(name)
    assert resource.type == type_ and resource.protect, (
        f"`pulumi destroy --skip-preview` deletes every unprotected resource before it stops "
        f"at the protected cluster: {name} would go and the service with it"
    )


def test_unprotected_stack_protects_nothing(run: Run, standard: dict[str, Any]) -> None:
    protected = [r.name for r in run(standard).resources if r.protect]
    assert protected == [], f"deletionProtection: false must let destroy delete {protected}"


# --- every resource sits inside a component -------------------------------------------------


def _stack_children(recording: Recording) -> list[str]:
    """Custom resources whose parent is the stack (a URN's type is its second-last part)."""
    return [r.name for r in recording.resources if r.custom and r.parent.split("::")[-2] == STACK]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_no_resource_hangs_off_the_stack(stack: str) -> None:
    recording = shared.recording(stack)
    assert recording.of_type("gke-gpu:index:WorkloadNamespace"), "the namespace has a component"
    assert _stack_children(recording) == [], "every resource sits inside a component"


def test_no_resource_hangs_off_the_stack_on_an_existing_cluster() -> None:
    recording = shared.render("kubeadm", ROOT / "examples" / "Pulumi.kubeadm.yaml").recording
    assert recording.of_type(DAEMONSET), "the device plugin is part of this plan"
    assert _stack_children(recording) == [], "every resource sits inside a component"


# --- docs ------------------------------------------------------------------------------------


def test_readme_explains_teardown_of_a_protected_stack() -> None:
    readme = (ROOT / "docs" / "deletion-protection.md").read_text()
    for text, why in [
        ("pulumi config set --path gke-gpu:cluster.deletionProtection false", "lift it"),
        ("--skip-preview", "what protect does without a preview"),
        ("PULUMI_K8S_DELETE_UNREACHABLE=true", "a cluster deleted out of band"),
    ]:
        assert text in readme, f"docs/deletion-protection.md must show `{text}`: {why}"


@pytest.mark.parametrize("example", ["kubeadm", "operator"])
def test_example_copies_the_stack_file_before_stack_init(example: str) -> None:
    comments = (ROOT / "examples" / f"Pulumi.{example}.yaml").read_text()
    copy_at = comments.find(f"cp examples/Pulumi.{example}.yaml Pulumi.{example}.yaml")
    init_at = comments.find("pulumi stack init")
    assert 0 <= copy_at < init_at, (
        "`stack init --secrets-provider` writes the stack's key into Pulumi.<stack>.yaml; "
        "a copy made afterwards overwrites it and no secret can be read"
    )


def test_naming_another_node_service_account_renames_the_gpu_pool(
    run: Run, standard: dict[str, Any]
) -> None:
    before = run(copy.deepcopy(standard))
    standard["gke-gpu:cluster"]["nodeServiceAccount"] = (
        "gpu-test-nodes@acme-ml-test.iam.gserviceaccount.com"
    )
    after = run(standard)

    def gpu_pool_name(recording: Recording) -> str:
        (pool,) = [
            r
            for r in recording.of_type(NODE_POOL)
            if r.inputs["nodeConfig"].get("guestAccelerators")
        ]
        return pool.inputs["name"]

    assert gpu_pool_name(after) != gpu_pool_name(before), (
        "service_account forces a replacement: under the same GKE name the new pool would "
        "collide with the old one, which is deleted only after it"
    )


def test_a_workload_that_stops_autoscaling_takes_its_replica_count_back_by_force(
    run: Run, standard: dict[str, Any]
) -> None:
    """Issue 31: the HPA (or KEDA) owns spec.replicas in the cluster after it scaled the
    workload; the next `up` with a fixed count sends spec.replicas, and server-side apply refuses
    it as a conflict unless forced."""
    standard["gke-gpu:nodePools"][0]["maxNodes"] = 3
    (workload,) = standard["gke-gpu:workloads"]
    autoscaled = copy.deepcopy(standard)
    autoscaled["gke-gpu:workloads"] = [
        {**workload, "autoscale": {"minReplicas": 1, "maxReplicas": 2}}
    ]
    before = run(autoscaled).named("workload-llm-deployment").inputs
    assert "replicas" not in before["spec"]
    assert "pulumi.com/patchForce" not in before["metadata"].get("annotations", {}), (
        "an autoscaled workload sends no replica count: nothing to take over"
    )
    standard["gke-gpu:workloads"] = [{**workload, "replicas": 2}]
    after = run(standard).named("workload-llm-deployment").inputs
    assert after["spec"]["replicas"] == 2
    assert after["metadata"].get("annotations", {}).get("pulumi.com/patchForce") == "true", (
        "the HPA's field manager still owns spec.replicas: without the force `pulumi up` fails "
        "with a server-side apply conflict when the workload goes back to a fixed count"
    )
