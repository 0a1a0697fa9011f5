"""LoadBalancer: a public (external) passthrough load balancer in front of the gate."""

from __future__ import annotations

from .base import LoadBalanced
from .load_balancer_spec import LOAD_BALANCER


class LoadBalancer(LoadBalanced):
    """GKE's external passthrough Network Load Balancer: the stack output externalIp."""

    spec = LOAD_BALANCER
    scope = "public (external load balancer)"
