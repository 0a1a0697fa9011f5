"""Kueue: the queue a Job with `queue` waits in until GKE grants all its nodes at once.

Installed from upstream's release manifests, vendored unedited in components/platform/vendor/
kueue/ (its README names the tag, commit and checksum). A queued Job carries the LocalQueue's
name (QUEUE_NAME_LABEL) and starts suspended; Kueue admits it against the ClusterQueue's quota,
then its AdmissionCheck has Kueue create a ProvisioningRequest of class
queued-provisioning.gke.io for every pod at once. GKE's autoscaler grants it on a pool with queued
provisioning (components/platform/nodepool.py) when capacity frees up, and Kueue unsuspends the
Job. The objects follow Google's own setup (GoogleCloudPlatform/cluster-toolkit at 1047080, its
example gke-consumption-options/dws-flex-start-queued-provisioning: dws-queues.yaml.tftpl and
sample-job.yaml), at the API version Kueue 0.19 stores (kueue.x-k8s.io/v1beta2).

Facts read from Kueue's source at v0.19.2 (kubernetes-sigs/kueue@8eab6877):
  - annotations prefixed `provreq.kueue.x-k8s.io/` on a Job are passed to its
    ProvisioningRequest as parameters (pkg/controller/constants/constants.go line 56,
    pkg/controller/admissionchecks/provisioning/provisioning.go line 129); GKE reads
    `maxRunDurationSeconds` there (cluster-toolkit sample-job.yaml; Kueue's own
    site/static/examples/provisioning/sample-job.yaml);
  - without `manageJobsWithoutQueueName` (off in the vendored config) Kueue leaves every Job
    without the queue label alone, so the stack's other workloads are not touched.
The controller image is pinned by digest (IMAGE; its source beside it), the release's tag kept.
Its access is cut to what it calls for the stack (pod and Job writes only in the stack's
namespace, Secret writes only on its certificate's), `kueue-system` enforces Pod Security
`restricted`, and the namespace admits the API server to the webhooks and the visibility API,
Managed Prometheus' collectors to the metrics port, nothing else (components/platform/
kueue_fence.py).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..config import NodePoolConfig
from ..facts.labels import GPU_RESOURCE, NAMESPACE_NAME_LABEL, QUEUE_NAME, QUEUED_TAINT
from ..manifest import manifest
from . import kueue_fence
from .fence import door_spec, register_fence
from .keda import POD_SECURITY_LABELS, load, register

VENDOR = Path(__file__).parent / "vendor" / "kueue"
RELEASE = VENDOR / "kueue-0.19.2.yaml"
# The controller image: the release names it by tag (RELEASE_IMAGE); the program runs it by
# digest, since a tag can be moved. The digest is the one Kueue's release of v0.19.2 recorded for
# the staging image (kubernetes-sigs/kueue issue 14323 "Release v0.19.2", its /wait-for-images
# log of 2026-08-20 15:09 UTC: "Image \"us-central1-docker.pkg.dev/k8s-staging-images/kueue/
# kueue:v0.19.2@sha256:8a77be2d...\" is available."), which kubernetes/k8s.io PR 9856 "Kueue:
# Promote v0.19.2" (merged 2026-08-20, "Part of kubernetes-sigs/kueue#14323") copies to
# registry.k8s.io under the same digest: the promoter copies by digest (images.yaml maps digests
# to tags; e.g. v0.16.9: PR 9551's sha256:35237193... is what kueue issue 11360's
# `wait_for_images.sh --prod` read from registry.k8s.io/kueue/kueue). Not read from
# registry.k8s.io here: `crane digest registry.k8s.io/kueue/kueue:v0.19.2` confirms it.
RELEASE_IMAGE = "registry.k8s.io/kueue/kueue:v0.19.2"
IMAGE = f"{RELEASE_IMAGE}@sha256:8a77be2df3d441d1a99b60eb1625c835b5f4feda5db02ece26818cf2a30c4d86"
API_VERSION = "kueue.x-k8s.io/v1beta2"
# What a queued Job carries (Kueue's "kueue.x-k8s.io/queue-name" label; cluster-toolkit
# sample-job.yaml) and the annotation its ProvisioningRequest reads its run length from.
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
MAX_RUN_ANNOTATION = "provreq.kueue.x-k8s.io/maxRunDurationSeconds"
# The ProvisioningRequest class GKE serves with queued-provisioning pools, and the controller
# name of Kueue's ProvisioningRequest admission check (dws-queues.yaml.tftpl).
PROVISIONING_CLASS = "queued-provisioning.gke.io"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
# GKE taints queued-provisioning nodes so only pods meant for them land there (cluster-toolkit
# modules/compute/gke-node-pool/main.tf lines 68-76: "GKE automatically applies the taint";
# its gke-tpu-7x README tolerates it, "Tolerations (Mandatory)").
QUEUED_TAINT_TOLERATION = {
    "key": QUEUED_TAINT,
    "operator": "Equal",
    "value": "true",
    "effect": "NoSchedule",
}
# The names of the stack's queue objects: one flavor, one ClusterQueue, one LocalQueue.
QUEUE = QUEUE_NAME
# A node's ephemeral storage for the quota: GKE's boot disk default, 100 GB (pulumi-gcp 10.2.0
# NodePoolNodeConfigArgs.disk_size_gb: "Defaults to 100GB"); the program sets no other size.
NODE_DISK_BYTES = 100 * 10**9


# Kueue's webhooks on workload objects (pods, Deployments, StatefulSets, Jobs, ...: those with a
# namespaceSelector in the release) fail closed (`failurePolicy: Fail`) in every namespace but
# kube-system and kueue-system, so while its controller is down or not yet started no pod of the
# stack (a gate, KEDA, a model server) could be created. They act only on objects that carry the
# queue label (without manageJobsWithoutQueueName, off in the vendored config); this selector
# sends them nothing else. Kueue's own objects (ClusterQueue, Workload, ...) keep theirs.
QUEUED_ONLY = {"matchExpressions": [{"key": QUEUE_NAME_LABEL, "operator": "Exists"}]}
WEBHOOK_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


def objects() -> list[dict[str, Any]]:
    """The release's objects as the program registers them: its workload webhooks limited to
    queued objects (QUEUED_ONLY), its controller image pinned by digest (IMAGE), its namespace
    labelled and its access cut (kueue_fence); the rest unchanged."""
    release = load(RELEASE)
    return [kueue_fence.least_privilege(_adjusted(copy.deepcopy(obj)), release) for obj in release]


def _adjusted(obj: dict[str, Any]) -> dict[str, Any]:
    if obj["kind"] == "Namespace":
        obj["metadata"].setdefault("labels", {}).update(POD_SECURITY_LABELS)
    if obj["kind"] == "Deployment":
        for container in obj["spec"]["template"]["spec"]["containers"]:
            if container["image"] != RELEASE_IMAGE:
                raise ValueError(
                    f"vendored Kueue image {container['image']} is not {RELEASE_IMAGE}, the one "
                    "IMAGE pins by digest: pin the new release's digest in kueue.IMAGE"
                )
            container["image"] = IMAGE
    if obj["kind"] in WEBHOOK_KINDS:
        for webhook in obj["webhooks"]:
            if webhook.get("namespaceSelector"):
                webhook["objectSelector"] = copy.deepcopy(QUEUED_ONLY)
    return obj


def _arguments(obj: dict[str, Any]) -> dict[str, Any]:
    """The object with its top-level fields named as pulumi_kubernetes' classes take them
    (`aggregationRule` -> `aggregation_rule`); keda.register maps the rest."""
    return {
        re.sub(r"(?<!^)([A-Z])", r"_\1", k).lower() if k not in ("apiVersion", "roleRef") else k: v
        for k, v in obj.items()
    }


def quota(pools: Sequence[NodePoolConfig]) -> dict[str, int]:
    """The ClusterQueue's nominal quota: what the queued-provisioning pools hold at maxNodes, so
    Kueue admits no more than GKE could grant (GPUs, and the CPU, memory and disk their nodes
    leave for pods)."""
    queued = [p for p in pools if p.queued_provisioning]
    return {
        "cpu": sum(p.max_nodes * p.room.cpu_millicores for p in queued),
        "memory": sum(p.max_nodes * p.room.memory_bytes for p in queued),
        GPU_RESOURCE: sum(p.max_nodes * p.gpu_count for p in queued),
        "ephemeral-storage": sum(p.max_nodes * NODE_DISK_BYTES for p in queued),
    }


def queue_objects(namespace: str, pools: Sequence[NodePoolConfig]) -> list[dict[str, Any]]:
    """ResourceFlavor, ProvisioningRequestConfig, AdmissionCheck, ClusterQueue (admitting the
    stack's namespace only) and the namespace's LocalQueue, as dws-queues.yaml.tftpl has them."""
    limits = quota(pools)
    quantities = {
        "cpu": f"{limits['cpu']}m",
        "memory": str(limits["memory"]),
        GPU_RESOURCE: str(limits[GPU_RESOURCE]),
        "ephemeral-storage": str(limits["ephemeral-storage"]),
    }
    meta = {"name": QUEUE}
    return [
        {"kind": "ResourceFlavor", "metadata": meta, "spec": {}},
        {
            "kind": "ProvisioningRequestConfig",
            "metadata": meta,
            "spec": {
                "provisioningClassName": PROVISIONING_CLASS,
                "managedResources": [GPU_RESOURCE],
            },
        },
        {
            "kind": "AdmissionCheck",
            "metadata": meta,
            "spec": {
                "controllerName": PROVISIONING_CONTROLLER,
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "ProvisioningRequestConfig",
                    "name": QUEUE,
                },
            },
        },
        {
            "kind": "ClusterQueue",
            "metadata": meta,
            "spec": {
                "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}},
                "resourceGroups": [
                    {
                        "coveredResources": list(quantities),
                        "flavors": [
                            {
                                "name": QUEUE,
                                "resources": [
                                    {"name": k, "nominalQuota": v} for k, v in quantities.items()
                                ],
                            }
                        ],
                    }
                ],
                "admissionChecksStrategy": {"admissionChecks": [{"name": QUEUE}]},
            },
        },
        {
            "kind": "LocalQueue",
            "metadata": {"name": QUEUE, "namespace": namespace},
            "spec": {"clusterQueue": QUEUE},
        },
    ]


@dataclass(frozen=True)
class KueueArgs:
    after: list[pulumi.Resource]
    """What must exist first (the cluster)."""
    namespace: pulumi.Resource
    """The workloads' namespace: the LocalQueue lives there."""
    namespace_name: str
    pools: tuple[NodePoolConfig, ...]


class Kueue(pulumi.ComponentResource):
    """Kueue 0.19.2 in `kueue-system`, and the stack's queue for queued-provisioning pools."""

    ready: list[pulumi.Resource]
    """What a queued Job waits for: the queue objects (which wait for Kueue's controller)."""

    def __init__(self, name: str, args: KueueArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gke-gpu:index:Kueue", name, None, opts)
        stages: list[pulumi.Resource] = []
        deployments: list[pulumi.Resource] = []
        release = objects()
        # The namespace and CRDs; then RBAC, config, Services and webhooks; then the controller.
        # Destroy runs in reverse, so the controller still runs while its objects go.
        for stage in range(3):
            waits = [*args.after, *stages]
            found = [o for o in release if _stage(o) == stage]
            registered = [
                register(_arguments(o), pulumi.ResourceOptions(parent=self, depends_on=waits))
                for o in found
            ]
            deployments += [
                r for o, r in zip(found, registered, strict=True) if o["kind"] == "Deployment"
            ]
            if stage == 1:  # Kueue's pod and Job writes, in the stack's namespace (kueue_fence)
                registered += self._workload_role(args, waits)
            stages = [*stages, *registered]
        doors = [(door.name, door_spec(release, door)) for door in kueue_fence.DOORS]
        register_fence(self, name, kueue_fence.NAMESPACE, doors, after=stages)
        # Kueue's webhooks validate its objects: they wait for its controller.
        self.ready = [
            k8s.apiextensions.CustomResource(
                f"{name}-{obj['kind'].lower()}",
                api_version=API_VERSION,
                kind=obj["kind"],
                metadata=manifest(obj["metadata"]),
                spec=manifest(obj["spec"]),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*deployments, args.namespace]),
            )
            for obj in queue_objects(args.namespace_name, args.pools)
        ]
        self.register_outputs({})

    def _workload_role(
        self, args: KueueArgs, waits: list[pulumi.Resource]
    ) -> list[pulumi.CustomResource]:
        """The Role holding Kueue's writes on pods and Jobs in the stack's namespace, and its
        binding: before the controller starts, after the namespace exists."""
        options = pulumi.ResourceOptions(parent=self, depends_on=[*waits, args.namespace])
        return [
            register(_arguments(obj), options)
            for obj in kueue_fence.workload_role(load(RELEASE), args.namespace_name)
        ]


def _stage(obj: dict[str, Any]) -> int:
    if obj["kind"] in ("Namespace", "CustomResourceDefinition"):
        return 0
    return 2 if obj["kind"] == "Deployment" else 1
