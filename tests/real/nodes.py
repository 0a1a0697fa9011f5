"""Node objects for the local control plane, shaped as a stack's nodes would be: labels, taints,
capacity and allocatable, with KWOK's annotation so that KWOK plays their kubelet (keeps them
Ready, runs the pods bound to them)."""

from __future__ import annotations

import json
from typing import Any

from tests.real.control_plane import ControlPlane

KWOK_ANNOTATION = {"kwok.x-k8s.io/node": "fake"}


def node(
    name: str,
    *,
    labels: dict[str, str],
    cpu: str,
    memory: str,
    gpus: int = 0,
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """A Node with `gpus` x nvidia.com/gpu (as NVIDIA's device plugin advertises them) and the
    given allocatable CPU and memory; capacity equals allocatable (the test needs no reserve)."""
    resources = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"}
    if gpus:
        resources["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": KWOK_ANNOTATION,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
                **labels,
            },
        },
        "spec": {"taints": taints or []},
        "status": {"capacity": resources, "allocatable": resources},
    }


def add(plane: ControlPlane, *nodes: dict[str, Any]) -> None:
    """Creates the nodes and waits until KWOK has made each Ready (its node-initialize stage)."""
    for item in nodes:
        status = item["status"]
        plane.kubectl("apply", "-f", "-", stdin=json.dumps(item))
        # A client cannot set status on create: capacity goes in through the status subresource.
        plane.kubectl(
            "patch", "node", item["metadata"]["name"], "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": status}),
        )  # fmt: skip

    def ready() -> bool:
        listed = plane.get("nodes")["items"]
        names = {n["metadata"]["name"] for n in nodes}
        return all(
            any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
            for n in listed
            if n["metadata"]["name"] in names and n["status"].get("conditions")
        ) and names <= {n["metadata"]["name"] for n in listed if n["status"].get("conditions")}

    plane.wait_for("nodes Ready (KWOK's node-initialize stage)", ready, timeout=60)
