"""ClusterIP's capabilities: reached from inside the cluster only (components/expose/cluster_ip.py
registers it)."""

from __future__ import annotations

from .spec import ExposureSpec

CLUSTER_IP = ExposureSpec(
    name="ClusterIP",
    load_balanced=False,
    public=False,
    in_cluster=True,
    address_type=None,
    refused_on_gke=None,
    refused_on_existing=None,
    refuses_source_ranges=(
        "a ClusterIP Service is reachable only inside the "
        "cluster and has no load balancer to enforce source ranges. Remove "
        "sourceRanges, or use type LoadBalancer or Internal."
    ),
    managed_certificate=False,
    terminates_at_edge=False,
    needs=frozenset(),
)
