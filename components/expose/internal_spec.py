"""Internal's capabilities: a load balancer reachable from the VPC only (components/expose/
internal.py registers it)."""

from __future__ import annotations

from .spec import ExposureSpec

INTERNAL = ExposureSpec(
    name="Internal",
    load_balanced=True,
    public=False,
    in_cluster=False,
    address_type="INTERNAL",
    refused_on_gke=None,
    refused_on_existing=(
        "Internal makes GKE's internal passthrough load balancer, "
        "which an existing cluster does not have. Use LoadBalancer (with your "
        "cluster's load balancer implementation), ClusterIP or NodePort."
    ),
    refuses_source_ranges=None,
    managed_certificate=False,
    terminates_at_edge=False,
    needs=frozenset(),
)
