"""Who a Kubernetes workload is to Google Cloud: its Workload Identity Federation principal."""

from __future__ import annotations


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
