"""Internal: a load balancer reachable from the VPC only."""

from __future__ import annotations

from ..facts.labels import INTERNAL_LB_ANNOTATION
from .base import LoadBalanced
from .internal_spec import INTERNAL


class Internal(LoadBalanced):
    """GKE's internal passthrough Network Load Balancer: a LoadBalancer Service with the annotation
    GKE documents for "all supported versions" ("LoadBalancer Service parameters",
    https://cloud.google.com/kubernetes-engine/docs/concepts/service-load-balancer-parameters,
    checked 2026-11-22). The same page recommends spec.loadBalancerClass
    networking.gke.io/l4-regional-internal only from GKE 1.33.1-gke.1779000 with GKE subsetting,
    and that field is immutable; the annotation works on every cluster version."""

    spec = INTERNAL
    annotations = {INTERNAL_LB_ANNOTATION: "Internal"}
    scope = "internal (VPC-only load balancer)"

    def address_subnetwork(self, subnetwork: str | None) -> str | None:
        """An internal address comes from the subnetwork the load balancer's IP is in."""
        return subnetwork
