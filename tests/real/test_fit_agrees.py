"""The plan's fit check and the real scheduler agree at the boundary (issue 40 item 3): on a node
shaped as GKE makes a g2-standard-8 L4 node of the stack's pool (GKE's labels and GPU taint, one
nvidia.com/gpu, the allocatable the catalog computes), a Job requesting exactly the room the plan
computes is bound there, and one MiB more, which the plan refuses, stays Pending with the
scheduler's own reason.

Stand-in, named: the node's allocatable is the room the plan leaves for workload pods (GKE's
allocatable less its system pods on GPU nodes, components/facts/allocatable.py), so GKE's system
DaemonSets are not run beside the workload.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from components.config import ConfigError, load
from components.facts import allocatable, labels
from tests.real import nodes
from tests.real.control_plane import ControlPlane
from tools.engine import run_program
from tools.render import kubernetes_manifests

PROJECT, REGION = "acme-ml-test", "us-central1"
MiB = 2**20
ROOM = allocatable.pod_allocatable(8, 32)  # g2-standard-8: 8 vCPU, 32 GB (components/facts)
FITS_MIB = ROOM.memory_bytes // MiB


def config(memory_mib: int) -> dict[str, Any]:
    """A Standard stack with one L4 pool of g2-standard-8 and one GPU Job asking `memory_mib`."""
    return {
        "cluster": {"mode": "standard", "deletionProtection": False},
        "nodePools": [
            {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1},
             "machineType": "g2-standard-8", "maxNodes": 1},
        ],
        "workloads": [
            {"name": "fit", "kind": "Job", "port": None, "gpu": {"type": "nvidia-l4", "count": 1},
             "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
             "resources": {"cpu": "1", "memory": f"{memory_mib}Mi"}},
        ],
    }  # fmt: skip


def _program(memory_mib: int) -> list[dict[str, Any]]:
    stack = {f"gke-gpu:{k}": v for k, v in config(memory_mib).items()}
    recording = run_program({"gcp:project": PROJECT, "gcp:region": REGION, **stack}, stack="fit")
    pool = next(
        r
        for r in recording.resources
        if r.type == "gcp:container/nodePool:NodePool"
        and r.inputs.get("nodeConfig", {}).get("guestAccelerators")
    )
    return [*kubernetes_manifests(recording), {"gke_pool": pool.inputs["name"]}]


def gke_node(pool_name: str) -> dict[str, Any]:
    """A node of the pool as GKE labels and taints it (components/facts/labels.py cites GKE)."""
    return nodes.node(
        "gke-l4-0",
        labels={
            labels.NODEPOOL_LABEL: pool_name,
            labels.ACCELERATOR_LABEL: "nvidia-l4",
            "node.kubernetes.io/instance-type": "g2-standard-8",
            labels.ZONE_LABEL: f"{REGION}-a",
        },
        cpu=f"{ROOM.cpu_millicores}m",
        memory=str(ROOM.memory_bytes),
        gpus=1,
        taints=[{"key": labels.GPU_RESOURCE, "value": "present", "effect": "NoSchedule"}],
    )


@pytest.fixture(scope="module")
def fitting(plane: ControlPlane) -> Iterator[list[dict[str, Any]]]:
    """The fitting stack's objects, its namespace created and its pool's node added; the
    namespace is deleted afterwards (the other tests' stacks create it themselves)."""
    objects = _program(FITS_MIB)
    pool = objects.pop()["gke_pool"]
    nodes.add(plane, gke_node(pool))
    namespace = next(o for o in objects if o["kind"] == "Namespace")
    plane.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(namespace))
    yield objects
    name = namespace["metadata"]["name"]
    plane.kubectl("delete", "namespace", name, "--wait=true", "--timeout=120s")


def _job(objects: list[dict[str, Any]], name: str, memory_mib: int) -> dict[str, Any]:
    job = copy.deepcopy(next(o for o in objects if o["kind"] == "Job"))
    job["metadata"]["name"] = name
    job["metadata"].pop("annotations", None)
    for container in job["spec"]["template"]["spec"]["containers"]:
        if labels.GPU_RESOURCE in container["resources"].get("limits", {}):
            container["resources"]["requests"]["memory"] = f"{memory_mib}Mi"
            container["resources"]["limits"]["memory"] = f"{memory_mib}Mi"
    return job


def _pod(plane: ControlPlane, namespace: str, job: str) -> dict[str, Any]:
    return plane.wait_for(
        f"a pod of Job {job}",
        lambda: plane.get("pods", "-n", namespace, "-l", f"job-name={job}")["items"],
    )[0]


def _verdict(plane: ControlPlane, namespace: str, job: str) -> tuple[str, str] | None:
    """The node the Job's pod was bound to, or the scheduler's Unschedulable message; None while
    the scheduler has not decided."""
    pod = _pod(plane, namespace, job)
    reasons = [
        c.get("message", "")
        for c in pod["status"].get("conditions", [])
        if c.get("reason") == "Unschedulable"
    ]
    node = pod["spec"].get("nodeName", "")
    return (node, "; ".join(reasons)) if node or reasons else None


def test_the_room_the_plan_computes_is_where_the_scheduler_binds(
    plane: ControlPlane, fitting: list[dict[str, Any]]
) -> None:
    """A Job asking exactly the room the plan says a node leaves is bound to the GPU node."""
    job = _job(fitting, "fits", FITS_MIB)
    namespace = job["metadata"]["namespace"]
    plane.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(job))
    bound, reason = plane.wait_for(
        "the scheduler's verdict", lambda: _verdict(plane, namespace, "fits")
    )
    assert bound == "gke-l4-0", (
        f"the plan said it fits: the scheduler must place it on the pool's node ({reason})"
    )


def test_one_mib_more_is_refused_by_the_plan_and_left_pending_by_the_scheduler(
    plane: ControlPlane, fitting: list[dict[str, Any]]
) -> None:
    """One MiB over the room: the plan refuses the stack at resources.memory, and the real
    scheduler, given the same pod, leaves it Pending for memory: the two agree."""
    with pytest.raises(ConfigError) as refused:
        load(config(FITS_MIB + 1), project=PROJECT, region=REGION, stack="fit")
    assert any("workloads[0].resources.memory" in p for p in refused.value.problems), (
        refused.value.problems
    )
    job = _job(fitting, "too-big", FITS_MIB + 1)
    namespace = job["metadata"]["namespace"]
    plane.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(job))

    bound, reason = plane.wait_for(
        "the scheduler's verdict", lambda: _verdict(plane, namespace, "too-big")
    )
    assert not bound and "Insufficient memory" in reason, (
        f"the plan refused it: the scheduler must leave it Pending for memory ({bound}, {reason})"
    )
