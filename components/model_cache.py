"""ModelCacheAccess: lets one workload's Kubernetes service account read its model bucket."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

# Read-only access to the bucket's objects: storage.objects.get and storage.objects.list, what a
# read-only Cloud Storage FUSE mount with implicit-dirs reads (Cloud Storage predefined roles,
# cloud.google.com/storage/docs/access-control/iam-roles). GKE's FUSE setup page grants bucket
# roles to this principal form ("Configure access to Cloud Storage buckets",
# cloud.google.com/kubernetes-engine/docs/how-to/cloud-storage-fuse-csi-driver-setup; only its
# opening was readable here, checked 2026-11-22); the driver's own example grants
# roles/storage.objectUser, which also writes, for a read-write mount.
BUCKET_READER_ROLE = "roles/storage.objectViewer"


def workload_identity_principal(
    project_number: str, project: str, namespace: str, service_account: str
) -> str:
    """The IAM principal of a Kubernetes service account under Workload Identity Federation for
    GKE, granted directly (no Google service account in between): principal://iam.googleapis.com/
    projects/NUMBER/locations/global/workloadIdentityPools/PROJECT.svc.id.goog/subject/ns/NS/sa/KSA
    (GoogleCloudPlatform/gcs-fuse-csi-driver examples/gcsfuse-profiles/README.md at 5fcdc04a;
    GoogleCloudPlatform/accelerated-platforms platforms/gke/base/core/workloads/
    custom_metrics_adapter/iam.tf at 9320f3b2)."""
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
        f"workloadIdentityPools/{project}.svc.id.goog/subject/ns/{namespace}/sa/{service_account}"
    )


@dataclass(frozen=True)
class ModelCacheAccessArgs:
    project: str
    namespace: str
    service_account: str
    """The workload's Kubernetes service account (GpuWorkload creates it, named after it)."""
    bucket: str
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
            f"{name}-reader",
            bucket=args.bucket,
            role=BUCKET_READER_ROLE,
            member=self.member,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.after)),
        )
        self.ready = [grant]
        self.register_outputs({"member": self.member})
