"""GpuComputeClass: a GKE custom ComputeClass that lists where a workload's GPUs may come from.

GKE tries the priorities in order when it creates a node for a pending pod and falls back to the
next when one has no capacity (a Spot stockout, a reservation used up); with active migration
it moves the pods back to a more preferred priority once that capacity returns
(https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes, checked
2026-11-22). Field names and shapes: GKE's ComputeClass CRD, vendored with its source in
tools/crds/cloud.google.com_v1_ComputeClass.json, and the reference at
https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass. The layout follows
Google's own GPU classes (GoogleCloudPlatform/accelerated-platforms
platforms/gke/base/core/custom_compute_class/templates/manifests/gpu/l4-24gb/
custom-compute-gpu-l4-24gb-s8-x1.yaml at 9320f3b2: a `gpu` block with type, count and
driverVersion, a machineType, `spot`, `flexStart`, `reservations`, activeMigration and
nodePoolAutoCreation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..config import CapacityChoice, WorkloadConfig
from ..facts.labels import PART_OF, PART_OF_LABEL, WORKLOAD_LABEL
from ..platform.nodepool import CONTAINER_IMAGE_CACHE

API_VERSION = "cloud.google.com/v1"
KIND = "ComputeClass"
# The CRD requires whenUnsatisfiable. DoNotScaleUp: when no priority has capacity the pod stays
# Pending (and says why) rather than landing on a node without the GPU it asks for.
WHEN_UNSATISFIABLE = "DoNotScaleUp"
# The node label a pod selects a ComputeClass by (the same page, and the GPU Deployment of
# GoogleCloudPlatform/kubernetes-engine-samples autoscaling/custom-compute-classes/reservations/
# deployment-gpu.yaml at 2b503651, which selects nothing else).
# Reservations: Specific names one (optionally shared from another project, not used here);
# AnyBestEffort consumes any matching reservation and otherwise creates on-demand VMs (CRD enum
# Specific | AnyBestEffort | None; accelerated-platforms uses AnyBestEffort the same way).
SPECIFIC, ANY_BEST_EFFORT = "Specific", "AnyBestEffort"


# Fallback nodes start as fast as the primary pool's. Image streaming in nodePoolConfig, as
# Google's GPU classes set it (accelerated-platforms custom-compute-gpu-l4-24gb-s8-x1.yaml, above,
# since 1f1c1943); the workload's preloaded-image disk (secondaryBootDisk) in each priority's
# storage.secondaryBootDisks {diskImageName, project, mode} (the vendored CRD; GKE's ComputeClass
# reference: GKE 1.31.2-gke.1105000 or later); flex-start nodes recycled an hour before they end,
# as the same templates do (nodeRecycling.leadTimeSeconds: 3600; a flex-start VM runs at most 7
# days, cloud.google.com/kubernetes-engine/docs/concepts/dws).
IMAGE_STREAMING = {"imageStreaming": {"enabled": True}}
FLEX_RECYCLE_LEAD_SECONDS = 3600


def secondary_boot_disk(image: str, project: str) -> dict[str, str]:
    """`global/images/NAME` or `projects/P/global/images/NAME` as the CRD's fields."""
    parts = image.split("/")
    owner = parts[1] if parts[0] == "projects" else project
    return {"diskImageName": parts[-1], "project": owner, "mode": CONTAINER_IMAGE_CACHE}


# No storage.bootDiskType (the CRD's enum: pd-balanced, pd-standard, pd-ssd, hyperdisk-balanced):
# GKE's autoscaler gives the nodes it creates for a priority its machine's default boot disk,
# hyperdisk-balanced on A3 Ultra (withDefaultDiskOverride), A4, A4X and G4 (defaultDiskType),
# from the machine table components/facts/catalog/machines.py cites (GKE_MACHINES).
def priority(choice: CapacityChoice, boot_disk: dict[str, str] | None = None) -> dict[str, Any]:
    """One entry of spec.priorities: GPU, machine and how the VM is bought."""
    rule: dict[str, Any] = {
        "machineType": choice.machine_type,
        "gpu": {
            "type": choice.gpu_type,
            "count": choice.gpu_count,
            "driverVersion": choice.driver_version,
        },
    }
    if choice.flex_start:
        # Flex-start nodes are not Spot (CRD rule "Flex Start provisioning model is incompatible
        # with Spot"), so `spot` is left out.
        rule["flexStart"] = {
            "enabled": True,
            "nodeRecycling": {"leadTimeSeconds": FLEX_RECYCLE_LEAD_SECONDS},
        }
    else:
        rule["spot"] = choice.spot
    if choice.reservation is not None:
        rule["reservations"] = (
            {"affinity": ANY_BEST_EFFORT}
            if choice.reservation.any
            else {"affinity": SPECIFIC, "specific": [{"name": choice.reservation.name}]}
        )
    if boot_disk is not None:
        rule["storage"] = {"secondaryBootDisks": [boot_disk]}
    return rule


def compute_class_spec(w: WorkloadConfig, project: str) -> dict[str, Any]:
    """The ComputeClass spec: the workload's own choice first, then its fallbacks in order."""
    disk = (
        secondary_boot_disk(w.spec.secondary_boot_disk, project)
        if w.spec.secondary_boot_disk
        else None
    )
    return {
        "description": (
            f"GPUs for workload {w.spec.name} (gke-gpu): its own choice, then fallbacks."
        ),
        "priorities": [priority(c, disk) for c in w.capacity],
        "nodePoolConfig": IMAGE_STREAMING,
        # Move pods back to a more preferred priority when its capacity returns.
        "activeMigration": {"optimizeRulePriority": True},
        # Standard: GKE creates node pools for the class itself (the CRD's default is false);
        # Autopilot creates every node anyway.
        "nodePoolAutoCreation": {"enabled": True},
        "whenUnsatisfiable": WHEN_UNSATISFIABLE,
    }


@dataclass(frozen=True)
class GpuComputeClassArgs:
    workload: WorkloadConfig
    """A workload with `capacity` (config `fallback`); its compute_class names the class."""
    project: str = ""
    """The cluster's project: where a `global/images/NAME` boot disk image lives."""


class GpuComputeClass(pulumi.ComponentResource):
    """The ComputeClass a workload's pods select: its GPU priorities, with fallbacks."""

    name: str
    """The ComputeClass's name (cluster-scoped); pods select it with COMPUTE_CLASS_LABEL."""
    resources: list[pulumi.Resource]
    """What the workload waits for (GpuWorkloadArgs.after): the ComputeClass object."""

    def __init__(
        self, name: str, args: GpuComputeClassArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:GpuComputeClass", name, None, opts)
        w = args.workload
        if w.compute_class is None or not w.capacity:
            raise ValueError(
                f"GpuComputeClassArgs: workload {w.spec.name} has no fallback priorities"
            )
        compute_class = k8s.apiextensions.CustomResource(
            f"{name}-class",
            api_version=API_VERSION,
            kind=KIND,
            metadata={
                "name": w.compute_class,
                "labels": {PART_OF_LABEL: PART_OF, WORKLOAD_LABEL: w.spec.name},
            },
            spec=compute_class_spec(w, args.project),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.name = w.compute_class
        self.resources = [compute_class]
        self.register_outputs({"name": self.name})
