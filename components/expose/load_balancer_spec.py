"""LoadBalancer's capabilities: a public passthrough load balancer (components/expose/
load_balancer.py registers it)."""

from __future__ import annotations

from .spec import ExposureSpec

LOAD_BALANCER = ExposureSpec(
    name="LoadBalancer",
    load_balanced=True,
    public=True,
    in_cluster=False,
    address_type="EXTERNAL",
    refused_on_gke=None,
    refused_on_existing=None,
    refuses_source_ranges=None,
    managed_certificate=False,
    terminates_at_edge=False,
    needs=frozenset(),
)
