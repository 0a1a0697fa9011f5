"""A queued Job through the real engine and the real Kubernetes provider against a real API server
(issue 45): created suspended; once Kueue has admitted it, `pulumi refresh` and `preview` show no
change, and an `up` that changes the Job (its time cap) updates it in place without a conflict
with Kueue and without suspending it again.

The program is GpuWorkload, the component that registers the Job and its options
(components/kinds/job.py), under a Kubernetes provider for the local control plane; not
__main__.py, because `queue` needs a Standard GKE cluster (rules/batch.py refuses it on an
existing one) and nothing here reaches Google Cloud. Kueue itself is not installed: its controller
is an image, and no container runs here (KWOK stands in for the kubelets). Its admission is the
request Kueue 0.19.2 sends (kubernetes-sigs/kueue@8eab6877): a JSON merge patch
(pkg/util/client/client.go createPatch, client.MergeFrom) from its job controller
(pkg/controller/jobs/job/job_controller.go RunWithPodSetsInfo: spec.suspend false; podset.Merge
of the ProvisioningRequest check's two pod annotations, provisioning/controller.go
podSetUpdates, named as CHANGELOG-0.14.md lists them) under the field manager the API server
derives from Kueue's user agent, "kueue/<version> ..." (pkg/util/useragent).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from pulumi import automation as auto

from components.config import WorkloadConfig, load
from components.service.workload import GpuWorkload, GpuWorkloadArgs
from tests.real import engine
from tests.real.control_plane import ControlPlane

NAMESPACE = "queued-job"
KUEUE_MANAGER = "kueue"
ADMITTED_ANNOTATIONS = {
    "autoscaling.x-k8s.io/consume-provisioning-request": "nightly-provreq-1",
    "autoscaling.x-k8s.io/provisioning-class-name": "queued-provisioning.gke.io",
}


def queued(cap: str) -> WorkloadConfig:
    """A queued Job with a time cap, as a Standard stack with a queued-provisioning pool loads it
    (every rule applied)."""
    raw = {
        "cluster": {"mode": "standard", "deletionProtection": False},
        "nodePools": [
            {
                "name": "l4q",
                "gpu": {"type": "nvidia-l4", "count": 1},
                "machineType": "g2-standard-8",
                "maxNodes": 2,
                "queuedProvisioning": True,
            }
        ],
        "workloads": [
            {
                "name": "nightly",
                "kind": "Job",
                "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
                "gpu": {"type": "nvidia-l4", "count": 1},
                "port": None,
                "queue": {"maxRunDuration": "4h"},
                "activeDeadline": cap,
            }
        ],
    }
    config = load(raw, project="acme-ml-test", region="us-central1", stack="queued")
    return config.workloads[0]


def program(kubeconfig: str, cap: str) -> Callable[[], None]:
    """The queued Job's workload, registered as GpuService registers it, in its own namespace."""

    def run() -> None:
        provider = k8s.Provider("plane", kubeconfig=kubeconfig)
        namespace = k8s.core.v1.Namespace(
            "namespace",
            metadata={"name": NAMESPACE},
            opts=pulumi.ResourceOptions(provider=provider),
        )
        GpuWorkload(
            "workload-nightly",
            GpuWorkloadArgs(
                namespace=namespace.metadata.name, mode="standard", workload=queued(cap)
            ),
            opts=pulumi.ResourceOptions(providers=[provider]),
        )

    return run


def admit(plane: ControlPlane) -> None:
    """What Kueue's job controller sends on admission."""
    patch = {
        "spec": {
            "suspend": False,
            "template": {"metadata": {"annotations": ADMITTED_ANNOTATIONS}},
        }
    }
    plane.kubectl(
        "patch", "job", "nightly", "-n", NAMESPACE, "--type=merge",
        f"--field-manager={KUEUE_MANAGER}", "-p", json.dumps(patch),
    )  # fmt: skip


def _job(plane: ControlPlane) -> dict[str, Any]:
    return plane.get("job", "nightly", "-n", NAMESPACE, "--show-managed-fields")


def _suspend_managers(job: dict[str, Any]) -> set[str]:
    """The field managers that hold spec.suspend."""
    return {
        entry["manager"]
        for entry in job["metadata"].get("managedFields", [])
        if "f:suspend" in entry.get("fieldsV1", {}).get("f:spec", {})
    }


def test_an_up_after_kueue_admitted_a_queued_job_leaves_it_running(
    plane: ControlPlane, pulumi_env: dict[str, str], tmp_path: Path
) -> None:
    kubeconfig = plane.kubeconfig.read_text()
    stack = engine.stack(
        "queued", {}, {}, tmp_path / "project", pulumi_env, program(kubeconfig, "4h")
    )
    try:
        first = stack.up(on_output=print)
        assert set(engine.changes(first.summary)) == {"create"}
        created = _job(plane)
        assert created["spec"]["suspend"] is True, "a queued Job waits for Kueue to admit it"
        assert created["spec"]["activeDeadlineSeconds"] == 4 * 3600

        admit(plane)
        plane.wait_for(
            "the Job controller to start the admitted Job",
            lambda: _job(plane).get("status", {}).get("startTime"),
        )

        stack.refresh(on_output=print)
        try:
            preview = stack.preview(on_output=print, diff=True)
        except auto.CommandError as error:
            pytest.fail(f"a preview after Kueue's admission must not touch the Job: {error}")
        assert engine.changes_of(preview.change_summary) == {}, (
            "after Kueue admitted the Job, the stack has not changed: a preview that would "
            f"update it would suspend the running Job again: {preview.change_summary}"
        )

        second = stack.up(on_output=print, program=program(kubeconfig, "3h"))
        assert engine.changes(second.summary) == {"update": 1}, (
            f"a new time cap is an in-place update of the Job: {second.summary.resource_changes}"
        )
        job = _job(plane)
        assert job["spec"]["activeDeadlineSeconds"] == 3 * 3600
        assert job["spec"]["suspend"] is False, "the up must not suspend the admitted Job again"
        assert _suspend_managers(job) == {KUEUE_MANAGER}, (
            "Pulumi must not take spec.suspend back from Kueue, or Kueue's next write conflicts"
        )
        annotations = job["spec"]["template"]["metadata"].get("annotations", {})
        assert ADMITTED_ANNOTATIONS.items() <= annotations.items(), (
            "the ProvisioningRequest's annotations Kueue put on the pods' template must stay"
        )
    finally:
        stack.destroy(on_output=print)
