"""The Gateway's capabilities: a workload served on a name (expose.domain) through GKE's global
external Application Load Balancer (components/expose/gateway.py registers it). A stack file
picks it with expose.domain, not expose.type, so it is not one of the stack file's types: one
function maps the keys to it (components/config/variants.py exposure_of)."""

from __future__ import annotations

from ..facts.controllers import Controller
from .spec import ExposureSpec

GATEWAY = ExposureSpec(
    name="Gateway",
    load_balanced=True,
    public=True,
    in_cluster=False,
    # Its address is a global one the exposure reserves itself, whatever expose.staticIp says.
    address_type=None,
    refused_on_gke=None,
    refused_on_existing=(
        "needs GKE's Gateway API, which the stack turns on for the clusters it builds "
        "(Standard: the standard channel; Autopilot has it) but cannot on an existing "
        "cluster. Remove domain, or build the cluster with the stack."
    ),
    # A Cloud Armor policy admits only the source ranges (components/platform/cloud_armor.py).
    refuses_source_ranges=None,
    managed_certificate=True,
    terminates_at_edge=True,
    needs=frozenset({Controller.GATEWAY_API}),
)
