"""What a pod requests when the stack sets no `resources` (issue 45): on GKE Standard a share of
95% of its node's room, never all of it; on an existing cluster, whose nodes are unknown, a stated
memory floor with no limit instead of no request at all; and the plan says which and why."""

from __future__ import annotations

import copy
from typing import Any

from components.config import StackConfig, load
from components.facts import allocatable, catalog
from tests import shared
from tests.conftest import DEPLOYMENT, ROOT, Run
from tools import summary

JOB = "kubernetes:batch/v1:Job"
LWS = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"

EXISTING: dict[str, Any] = {
    "gke-gpu:cluster": {"mode": "existing", "context": "lab"},
    "gke-gpu:workloads": [
        {
            "name": "vector-add",
            "kind": "Job",
            "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
            "gpu": {"count": 1},
            "port": None,
            "nodeSelector": {"gpu": "true"},
        }
    ],
}


def _existing(**resources: str) -> dict[str, Any]:
    config = copy.deepcopy(EXISTING)
    if resources:
        config["gke-gpu:workloads"][0]["resources"] = resources
    return config


def _loaded(config: dict[str, Any]) -> StackConfig:
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    return load(raw, project=None, region=None, stack="lab")


def _resources(run: Run, config: dict[str, Any]) -> dict[str, Any]:
    return run(config).one(JOB).inputs["spec"]["template"]["spec"]["containers"][0]["resources"]


# --- existing clusters ---------------------------------------------------------------------------


def test_an_existing_clusters_pod_without_memory_requests_2gi_with_no_limit(run: Run) -> None:
    resources = _resources(run, _existing())
    assert resources["requests"].get("memory") == "2Gi", (
        "a pod with no memory request is the first the kubelet evicts under memory pressure "
        f"(held-out kubeadm and GPU Operator stacks had none): {resources}"
    )
    assert "memory" not in resources["limits"], (
        "a stated floor must not become a limit: a pod that used more before the upgrade would be "
        "OOM-killed after it"
    )
    assert "cpu" not in resources["requests"], "CPU is not assumed on nodes nobody described"


def test_memory_set_on_an_existing_cluster_replaces_the_floor_and_the_plan_says_so(
    run: Run,
) -> None:
    resources = _resources(run, _existing(memory="1Gi"))
    assert resources["requests"]["memory"] == resources["limits"]["memory"] == "1Gi", (
        "resources.memory is what the user measured: it is the request and the limit, not 2Gi"
    )
    loaded = _loaded(_existing(memory="1Gi"))
    (line,) = [x for x in summary.workload_lines(loaded, loaded.workloads[0]) if "requests" in x]
    assert "1Gi memory (request and limit)" in line and "stated floor" not in line, (
        f"the plan must show the memory the stack set, not call it unset: {line}"
    )


def test_the_plan_names_the_memory_floor_and_the_key_that_replaces_it() -> None:
    loaded = _loaded(_existing())
    (line,) = [x for x in summary.workload_lines(loaded, loaded.workloads[0]) if "requests" in x]
    assert "2Gi memory, a stated floor with no limit" in line, (
        f"the reviewer must see what the pod asks for on nodes the plan cannot see: {line}"
    )
    assert "set resources.memory to what it uses" in line and "no CPU" in line, (
        f"and how to replace the assumption: {line}"
    )


# --- GKE Standard: headroom ---------------------------------------------------------------------


def test_the_multihost_examples_pods_leave_5_percent_of_their_node_free() -> None:
    """The multihost example sets no resources: its pods asked for 100% of an estimated room, so
    a node whose real room is a MiB smaller would leave the whole group Pending."""
    plan = shared.render("multihost", ROOT / "examples" / "Pulumi.multihost.yaml")
    (group,) = plan.recording.of_type(LWS)
    template = group.inputs["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    requests = template["spec"]["containers"][0]["resources"]["requests"]
    machine = catalog.machine_for("nvidia-h100-80gb", 8, "a3-highgpu-8g")
    assert machine is not None
    room = allocatable.pod_allocatable(machine.vcpus, machine.memory_gb)
    cpu, memory = (
        allocatable.parse_cpu(requests["cpu"]),
        allocatable.parse_memory(requests["memory"]),
    )
    assert cpu <= room.cpu_millicores * 95 // 100, (
        f"derived CPU {requests['cpu']} must leave 5% of the {room.cpu_millicores}m room free"
    )
    assert memory <= room.memory_bytes * 95 // 100, (
        f"derived memory {requests['memory']} must leave 5% of the room free"
    )
    assert plan.config is not None
    words = " ".join(summary.workload_lines(plan.config, plan.config.workloads[0]))
    assert "sized from 95% of it" in words, f"and the plan says so: {words}"


def test_the_plan_says_derived_requests_keep_5_percent_of_the_room_free(run: Run) -> None:
    config = {
        "gcp:project": "acme-ml-test",
        "gcp:region": "us-central1",
        "gke-gpu:cluster": {"mode": "standard"},
        "gke-gpu:nodePools": [
            {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8"}
        ],
        "gke-gpu:workloads": [
            {"name": "llm", "image": "vllm/vllm-openai:v0.6.4", "gpu": {"type": "nvidia-l4"}}
        ],
    }
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    loaded = load(raw, project="acme-ml-test", region="us-central1", stack="test")
    (line,) = [
        x for x in summary.workload_lines(loaded, loaded.workloads[0]) if "a node leaves" in x
    ]
    assert "sized from 95% of it: 5% stays free" in line, (
        f"the plan must say why the pod asks for less than the node leaves: {line}"
    )
    pod = run(config).served(DEPLOYMENT).inputs["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["requests"]["memory"] == allocatable.memory_quantity(
        loaded.workloads[0].requests.memory_bytes
    ), "the plan's figure is the one sent"


def test_a_jobs_derived_requests_keep_the_whole_room_so_an_upgrade_re_runs_no_job(
    run: Run,
) -> None:
    """A Job's pod template is immutable: had its derived requests shrunk to 95%, every shipped
    Job that sets no resources (a fine-tune on flex-start among them) would be replaced, so run
    again, by this upgrade. Its requests keep the whole room; a Deployment beside it leaves 5%."""
    pool = {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "machineType": "g2-standard-8"}
    config = {
        "gcp:project": "acme-ml-test",
        "gcp:region": "us-central1",
        "gke-gpu:cluster": {"mode": "standard"},
        "gke-gpu:nodePools": [pool],
        "gke-gpu:workloads": [
            {
                "name": "tune",
                "kind": "Job",
                "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
                "gpu": {"type": "nvidia-l4"},
                "port": None,
            }
        ],
    }
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    loaded = load(raw, project="acme-ml-test", region="us-central1", stack="test")
    machine = catalog.machine_for("nvidia-l4", 1, "g2-standard-8")
    assert machine is not None
    room = allocatable.pod_allocatable(machine.vcpus, machine.memory_gb)
    job = loaded.workloads[0].requests
    assert job.memory_bytes == room.memory_bytes // allocatable.MiB * allocatable.MiB, (
        f"a Job's derived memory must stay the whole room ({room.memory_bytes}), got {job}"
    )
    words = " ".join(summary.workload_lines(loaded, loaded.workloads[0]))
    assert "sized from all of it" in words and "does not re-run it" in words, words
    resources = _resources(run, config)
    assert resources["requests"]["memory"] == allocatable.memory_quantity(job.memory_bytes), (
        "the plan's figure is the one sent"
    )
