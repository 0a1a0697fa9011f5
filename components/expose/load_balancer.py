"""LoadBalancer: a public (external) passthrough load balancer in front of the gate."""

from __future__ import annotations

from .base import LoadBalanced


class LoadBalancer(LoadBalanced):
    """GKE's external passthrough Network Load Balancer: the stack output externalIp."""

    name = "LoadBalancer"
    address_type = "EXTERNAL"
    public = True
    scope = "public (external load balancer)"
