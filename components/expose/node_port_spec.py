"""NodePort's capabilities: served on a port of every node, for existing clusters
(components/expose/node_port.py registers it)."""

from __future__ import annotations

from .spec import ExposureSpec

NODE_PORT = ExposureSpec(
    name="NodePort",
    load_balanced=False,
    public=False,
    in_cluster=False,
    address_type=None,
    refused_on_gke=(
        "NodePort is for existing clusters without a load "
        "balancer; GKE provides LoadBalancers. Remove type."
    ),
    refused_on_existing=None,
    refuses_source_ranges=(
        "only a LoadBalancer enforces source ranges; a "
        "NodePort is open to everything that reaches the nodes. Remove sourceRanges "
        "(restrict access with a firewall in front of the nodes), or use type "
        "LoadBalancer if the cluster has a load balancer implementation."
    ),
    managed_certificate=False,
    terminates_at_edge=False,
    needs=frozenset(),
)
