"""`pulumi up`, `up` again and `destroy` of the existing-cluster stack examples/Pulumi.kubeadm.yaml
through the real engine and the real Kubernetes provider, against a real API server whose
scheduler places the workload's pods on nodes shaped as the stack's GPU nodes (issue 40 item 3).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.real import engine, nodes
from tests.real.control_plane import ControlPlane

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "gke-gpu"
DEVICE_PLUGIN = "nvidia-device-plugin-daemonset"  # devicePlugin: static, in kube-system


def kubeadm_config() -> dict[str, Any]:
    """examples/Pulumi.kubeadm.yaml's config, without the kubeconfig placeholder (the test sets the
    real one as a secret, as the example's comment tells a user to)."""
    config = yaml.safe_load((ROOT / "examples" / "Pulumi.kubeadm.yaml").read_text())["config"]
    cluster = dict(config["gke-gpu:cluster"])
    cluster.pop("kubeconfig")
    return {**config, "gke-gpu:cluster": cluster}


@pytest.fixture(scope="module")
def gpu_nodes(plane: ControlPlane) -> list[str]:
    """A kubeadm cluster's nodes as the example describes them: one GPU node labelled gpu=true
    with one nvidia.com/gpu, and a CPU-only node the GPU workload must not land on."""
    gpu = nodes.node("gpu-0", labels={"gpu": "true"}, cpu="8", memory="32Gi", gpus=1)
    cpu = nodes.node("cpu-0", labels={}, cpu="4", memory="16Gi")
    nodes.add(plane, gpu, cpu)
    return ["gpu-0", "cpu-0"]


def _objects_left(plane: ControlPlane) -> list[str]:
    """What the stack created that the API server still holds: its namespace (and so everything
    in it) and the device plugin's DaemonSet in kube-system."""
    left = []
    for args in (("namespace", NAMESPACE), ("daemonset", DEVICE_PLUGIN, "-n", "kube-system")):
        out = plane.kubectl("get", *args, "-o", "name", check=False)
        if "NotFound" not in out:
            left.append(out.strip())
    return left


def test_up_twice_then_destroy_on_a_real_api_server(
    plane: ControlPlane, gpu_nodes: list[str], pulumi_env: dict[str, str], tmp_path: Path
) -> None:
    """A user's first `pulumi up` creates the stack, a second one changes nothing (no perpetual
    diff), the Job's pod is bound by the real scheduler to the GPU node, and `pulumi destroy`
    leaves nothing of the stack in the cluster."""
    stack = engine.stack(
        "kubeadm",
        kubeadm_config(),
        {"gke-gpu:cluster.kubeconfig": plane.kubeconfig.read_text()},
        tmp_path / "project",
        pulumi_env,
    )
    first = stack.up(on_output=print)
    created = engine.changes(first.summary)
    assert created.get("create", 0) >= 5 and set(created) == {"create"}, (
        f"the first up should only create the stack's resources: {created}"
    )

    pods = plane.wait_for(
        "the vector-add Job's pod bound to a node",
        lambda: [
            p for p in plane.get("pods", "-n", NAMESPACE, "-l", "job-name=vector-add")["items"]
            if p["spec"].get("nodeName")
        ],
    )  # fmt: skip
    assert {p["spec"]["nodeName"] for p in pods} == {"gpu-0"}, (
        "the scheduler must place the GPU Job on the node with gpu=true and a free nvidia.com/gpu"
    )

    second = stack.up(on_output=print)
    assert engine.changes(second.summary) == {}, (
        f"a second up with nothing changed must change nothing: {second.summary.resource_changes}"
    )

    stack.destroy(on_output=print)
    try:
        plane.wait_for("nothing of the stack left", lambda: not _objects_left(plane), timeout=120)
    except AssertionError:
        pytest.fail(f"destroy must leave nothing of the stack behind: {_objects_left(plane)}")
