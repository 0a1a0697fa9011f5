"""The model cache (workloads[].modelCache): the bucket mounted read-only into the workload's pods
through the Cloud Storage FUSE CSI driver, and ModelCacheAccess, which lets the workload's
Kubernetes service account read it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pulumi
import pulumi_gcp as gcp

from ..config import Mode, WorkloadConfig
from ..facts.allocatable import parse_memory
from ..facts.identity import workload_identity_principal
from ..facts.labels import (
    FUSE_CPU_LIMIT_ANNOTATION,
    FUSE_MEMORY_LIMIT_ANNOTATION,
    FUSE_VOLUMES_ANNOTATION,
)

# Read-only access to the bucket's objects: storage.objects.get and storage.objects.list, what a
# read-only Cloud Storage FUSE mount with implicit-dirs reads (Cloud Storage predefined roles,
# cloud.google.com/storage/docs/access-control/iam-roles). GKE's FUSE setup page grants bucket
# roles to this principal form ("Configure access to Cloud Storage buckets",
# cloud.google.com/kubernetes-engine/docs/how-to/cloud-storage-fuse-csi-driver-setup; only its
# opening was readable here, checked 2026-11-22); the driver's own example grants
# roles/storage.objectUser, which also writes, for a read-write mount.
BUCKET_READER_ROLE = "roles/storage.objectViewer"
# workloads[].output: read-write, the role the driver's own example grants for a read-write mount
# (above): create, read, list and delete objects, on that bucket only.
BUCKET_WRITER_ROLE = "roles/storage.objectUser"
ROLES = {"reader": BUCKET_READER_ROLE, "writer": BUCKET_WRITER_ROLE}
# storage.buckets.get and storage.objects.list, nothing more (Google's Cloud Storage client,
# StorageRoles.legacyBucketReader: "Grants the following permissions: storage.buckets.get,
# storage.objects.list"): the bucket's metadata the streamer reads, on that bucket only.
BUCKET_METADATA_ROLE = "roles/storage.legacyBucketReader"


@dataclass(frozen=True)
class ModelCacheAccessArgs:
    project: str
    namespace: str
    service_account: str
    """The workload's Kubernetes service account (GpuWorkload creates it, named after it)."""
    bucket: str
    access: Literal["reader", "writer"] = "reader"
    """reader: the model cache (read-only); writer: workloads[].output (read-write)."""
    bucket_metadata: bool = False
    """The reader also reads the bucket's metadata (storage.buckets.get): vLLM's streamer asks
    for the bucket before it lists the model (config/rules/streamer.py has the source)."""
    after: Sequence[pulumi.Resource] = ()
    """The cluster: its workload identity pool (PROJECT.svc.id.goog) exists only once a cluster
    with Workload Identity does, and IAM refuses a principal of a pool that does not exist."""


class ModelCacheAccess(pulumi.ComponentResource):
    """A bucket IAM grant for one workload's Kubernetes service account (Workload Identity)."""

    member: pulumi.Output[str]
    """The principal granted read access to the bucket."""
    ready: list[pulumi.Resource]
    """What the workload waits for: its pods mount the bucket as soon as they start."""

    def __init__(
        self, name: str, args: ModelCacheAccessArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:ModelCacheAccess", name, None, opts)
        # The principal names the project by NUMBER; the config only has its id.
        project = gcp.organizations.get_project_output(
            project_id=args.project, opts=pulumi.InvokeOutputOptions(parent=self)
        )
        self.member = project.number.apply(
            lambda number: workload_identity_principal(
                number or "", args.project, args.namespace, args.service_account
            )
        )
        grant = gcp.storage.BucketIAMMember(
            f"{name}-{args.access}",
            bucket=args.bucket,
            role=ROLES[args.access],
            member=self.member,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.after)),
        )
        self.ready: list[pulumi.Resource] = [grant]
        if args.bucket_metadata:
            self.ready.append(
                gcp.storage.BucketIAMMember(
                    f"{name}-bucket-metadata",
                    bucket=args.bucket,
                    role=BUCKET_METADATA_ROLE,
                    member=self.member,
                    opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.after)),
                )
            )
        self.register_outputs({"member": self.member})


# The pods' side: GKE's Cloud Storage FUSE CSI driver (a GKE add-on) mounts the bucket. Pod
# annotations GKE's sidecar injector acts on, driver name, the sidecar's cache volume name and
# its user: GoogleCloudPlatform/gcs-fuse-csi-driver at 5fcdc04a (2026-08-21; checked 2026-11-22):
# pkg/webhook/mutatingwebhook.go lines 49-56 (the annotations, components/facts/labels.py),
# pkg/webhook/sidecar_spec.go lines 35 and 210-211 (gke-gcsfuse-cache; the sidecar runs as
# 65534:65534), deploy/base/setup/csi_driver.yaml (gcsfuse.csi.storage.gke.io; the driver gets
# the pod's service-account token from the CSIDriver's tokenRequests, not from the pod, so pods
# keep automountServiceAccountToken: false, as the driver's own e2e pods do,
# test/e2e/specs/specs.go line 253).
FUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
FUSE_CACHE_VOLUME = "gke-gcsfuse-cache"
# Standard: "0" leaves the sidecar's CPU and memory limits unset, so gcsfuse may use what the
# node has while it loads the model (Google's vLLM reference deployment, GoogleCloudPlatform/
# accelerated-platforms platforms/gke/base/use-cases/inference-ref-arch/kubernetes-manifests/
# online-inference-gpu/vllm/base/deployment.yaml at 9320f3b2). "You cannot use value "0" ... on
# Autopilot clusters" (gcs-fuse-csi-driver docs/troubleshooting.md line 531), so Autopilot keeps
# GKE's defaults (250m CPU, 256Mi; cmd/webhook/main.go lines 51-54).
FUSE_STANDARD_SIDECAR_ANNOTATIONS = {
    FUSE_CPU_LIMIT_ANNOTATION: "0",
    FUSE_MEMORY_LIMIT_ANNOTATION: "0",
}
# Mount options for loading a model that never changes once written (the same reference
# deployment; its guide, use-cases/inferencing/cost-optimization/gcsfuse/
# AchievingFasterPodStartup.md, measured "more than 7x less latency compared to a basic setup"):
# metadata cached for ever, parallel downloads into the file cache, implicit directories. The
# file cache is capped below its disk's size ("the underlying volume size must be larger than the
# fileCacheCapacity", docs/troubleshooting.md line 671) instead of the reference's -1, because
# here it lives on a disk of fixed size: a PersistentVolume, which the driver's docs recommend on
# Autopilot ("For TPU families or Autopilot, we recommend using Balanced Persistent Disk",
# docs/troubleshooting.md line 667).
FUSE_MOUNT_OPTIONS = (
    "metadata-cache:ttl-secs:-1",
    "metadata-cache:stat-cache-max-size-mb:-1",
    "metadata-cache:type-cache-max-size-mb:-1",
    "metadata-cache:negative-ttl-secs:0",
    "file-cache:cache-file-for-range-read:true",
    "file-cache:enable-parallel-downloads:true",
    "implicit-dirs",
    "file-system:kernel-list-cache-ttl-secs:-1",
)
FILE_CACHE_SHARE = 0.9  # of the cache disk, leaving room for ext4's own metadata


def fuse_mount_options(w: WorkloadConfig) -> str:
    """The bucket mount's options: read-mostly caching tuned for model loading, the file cache
    capped below its disk, and only the model's folder when one is named."""
    assert w.model_cache is not None
    cache_mib = int(parse_memory(w.model_cache.spec.file_cache_size) * FILE_CACHE_SHARE) // 2**20
    options = [*FUSE_MOUNT_OPTIONS, f"file-cache:max-size-mb:{cache_mib}"]
    if w.model_cache.spec.path:
        options.append(f"only-dir:{w.model_cache.spec.path}")
    return ",".join(options)


def mounts_model(w: WorkloadConfig) -> bool:
    """Its model bucket is mounted (Cloud Storage FUSE), not streamed by vLLM."""
    return w.model_cache is not None and not w.model_cache.streams


def model_cache_volumes(w: WorkloadConfig) -> list[dict[str, Any]]:
    """The bucket as a CSI ephemeral volume (read-only), and the disk of its file cache."""
    if w.model_cache is None or not mounts_model(w):
        return []
    bucket = {
        "name": "model",
        "csi": {
            "driver": FUSE_DRIVER,
            "readOnly": True,
            "volumeAttributes": {
                "bucketName": w.model_cache.spec.bucket,
                "mountOptions": fuse_mount_options(w),
                # The pod starts without first listing the bucket (the reference deployment
                # above); a missing grant then shows as a mount error on the pod.
                "skipCSIBucketAccessCheck": "true",
            },
        },
    }
    claim = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": w.model_cache.spec.file_cache_size}},
    }
    cache = {"name": FUSE_CACHE_VOLUME, "ephemeral": {"volumeClaimTemplate": {"spec": claim}}}
    return [bucket, cache]


def output_volumes(w: WorkloadConfig) -> list[dict[str, Any]]:
    """workloads[].output: the results bucket as a read-write CSI ephemeral volume. gcsfuse
    stages each file it writes and uploads it on close (its docs, "Semantics"); the sidecar's
    own staging volume is injected by GKE."""
    if w.spec.output is None:
        return []
    attributes = {"bucketName": w.spec.output.bucket, "mountOptions": "implicit-dirs"}
    return [{"name": "output", "csi": {"driver": FUSE_DRIVER, "volumeAttributes": attributes}}]


def reads_or_writes_a_bucket(w: WorkloadConfig) -> bool:
    """Whether its pods use a bucket (modelCache, output): the workload's own Kubernetes service
    account, which Workload Identity lets use the bucket."""
    return w.model_cache is not None or w.spec.output is not None


def pod_annotations(mode: Mode, w: WorkloadConfig) -> dict[str, str]:
    """GKE injects the Cloud Storage FUSE sidecar only into pods that ask for it: those that
    mount a bucket (a model cache vLLM does not stream, an output bucket)."""
    if not mounts_model(w) and w.spec.output is None:
        return {}
    sidecar = FUSE_STANDARD_SIDECAR_ANNOTATIONS if mode == "standard" else {}
    return {FUSE_VOLUMES_ANNOTATION: "true", **sidecar}
