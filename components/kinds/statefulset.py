"""A StatefulSet: replicas with stable names and a data disk each (workloads[].storage)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..config import WorkloadConfig
from ..manifest import claim_spec, manifest
from .base import Kind, Request, replicas
from .statefulset_spec import STATEFULSET


def data_claims(w: WorkloadConfig) -> list[dict[str, Any]]:
    """A StatefulSet's volumeClaimTemplates: one data disk per pod (workloads[].storage)."""
    if w.spec.storage is None:
        return []
    spec = claim_spec(w.spec.storage.size, w.spec.storage.storage_class)
    return [{"metadata": {"name": "data"}, "spec": spec}]


# What Kubernetes does with the claims of a StatefulSet's volumeClaimTemplates when the StatefulSet
# is deleted or scaled down: persistentVolumeClaimRetentionPolicy, stable (GA) in Kubernetes 1.32
# (kubernetes/website@36968e86:content/en/docs/reference/command-line-tools-reference/feature-gates/
# StatefulSetAutoDeletePVC.md: alpha 1.23, beta and on by default 1.27, stable 1.32;
# https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/#persistentvolumeclaim-retention:
# "The default policy of Retain causes PVCs to not be affected by StatefulSet deletion. The Delete
# policy causes those PVCs to be deleted."). Not a force-new field of pulumi-kubernetes
# (tests/golden.py K8S_FORCE_NEW): setting or changing it updates the StatefulSet in place. A
# scaled-down pod's disk is kept (whenScaled Retain) for the pod that comes back with it.
def claim_retention(w: WorkloadConfig) -> dict[str, dict[str, str]]:
    if w.spec.storage is None:
        return {}
    policy = {"whenDeleted": w.spec.storage.retention, "whenScaled": "Retain"}
    return {"persistentVolumeClaimRetentionPolicy": policy}


class StatefulSet(Kind):
    spec = STATEFULSET
    pod_spec_path = ("spec", "template", "spec")
    # StatefulSet RollingUpdate has no surge: each pod is deleted, then recreated, from the
    # highest ordinal down (Kubernetes StatefulSet docs, "Rolling Updates").
    rollout_words = (
        "one pod at a time, deleted then recreated, highest ordinal first (a StatefulSet never "
        "surges)"
    )

    def disks_at_destroy(self, w: WorkloadConfig) -> str | None:
        """The plan's words for what becomes of the claims' disks, from what data_claims and
        claim_retention register."""
        storage = w.spec.storage
        if storage is None:
            return None
        deleted = (
            "kept and still billed, for a StatefulSet of the same name to mount again"
            if storage.retention == "Retain"
            else "deleted with it, data and all"
        )
        return (
            f"one {storage.size} disk per pod (claims data-{w.spec.name}-0, -1, ...), kept when "
            f"scaled down; when the StatefulSet is deleted (workload removed or replaced): "
            f"{deleted} (storage.retention: {storage.retention}). `pulumi destroy` deletes the "
            "namespace and the claims in it; their StorageClass's reclaimPolicy then decides "
            "(GKE's own classes: Delete, not guaranteed while the cluster itself is being "
            "deleted: check Compute Engine disks after a destroy)"
        )

    def register(self, request: Request) -> k8s.apps.v1.StatefulSet:
        """The StatefulSet, its headless Service, and a data disk per pod (workloads[].storage)."""
        w = request.workload
        headless = k8s.core.v1.Service(
            f"{request.name}-headless",
            metadata=manifest({**request.metadata, "name": f"{w.spec.name}-headless"}),
            spec=manifest(
                {
                    "clusterIP": "None",
                    "selector": request.selector,
                    "ports": [{"name": "http", "port": w.spec.port or 80, "targetPort": "http"}]
                    if w.spec.port
                    else [],
                }
            ),
            opts=pulumi.ResourceOptions(parent=request.parent),
        )
        return k8s.apps.v1.StatefulSet(
            f"{request.name}-statefulset",
            metadata=manifest(self.object_metadata(w, request.metadata)),
            spec=manifest(
                {
                    **replicas(w),
                    "serviceName": headless.metadata.name,
                    "selector": {"matchLabels": request.selector},
                    "template": request.template,
                    "volumeClaimTemplates": data_claims(w),
                    **claim_retention(w),
                }
            ),
            opts=request.waits,
        )
