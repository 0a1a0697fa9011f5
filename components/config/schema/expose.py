"""`workloads[].expose`: how a workload is reached (the gate behind a load balancer, or a Gateway on
a domain) and who may reach it (source ranges, keys per consumer)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from .. import formats
from .base import ExposeType, Model, Port, _pattern


class ExposeSpec(Model):
    port: Port = 443
    """Service port."""
    source_ranges: Annotated[list[str], Field(max_length=100)] = []
    """CIDRs allowed to reach the load balancer (`LoadBalancer`, `Internal`); empty allows any.

    With `domain`, a Cloud Armor policy on the Gateway's backend allows only these (others get
    403). A public one without them is refused in production stacks, by the config and the
    policy pack. IPv6 ranges alone are refused on the clusters the stack builds: the Gateway's
    and the load balancers' addresses are IPv4, so no client could connect.
    """
    type: ExposeType = "LoadBalancer"
    """`LoadBalancer` (public), `Internal` (VPC only), `ClusterIP` (in-cluster only), `NodePort`
    (existing clusters).

    See [Exposure and security](security.md).
    """
    # derived: rules/exposure.py reserves_address (the certificate names the address).
    static_ip: bool | None = None
    """Reserve a regional address (external or internal) for the load balancer.

    The URL then survives a re-created Service; on by default with `tls` on GKE (the certificate
    names the address).

    Default: `tls` (GKE load balancers)
    """
    tls: bool = True
    """HTTPS through the gate, with a certificate from the stack's own CA (output `caCertificate`).

    `false` serves plain HTTP and is refused in production stacks by the policy pack.
    """
    hosts: Annotated[
        list[Annotated[str, StringConstraints(max_length=253)]], Field(max_length=20)
    ] = []
    """More IP addresses or DNS names the certificate is valid for.

    An existing cluster's load balancer or node address, `NodePort`, your own DNS name.
    """
    # derived: rules/exposure.py default_paths.
    paths: (
        Annotated[list[Annotated[str, StringConstraints(max_length=256)]], Field(max_length=64)]
        | None
    ) = None
    """The paths the gate forwards: exact, or a prefix ending in `/*` (not `/` or `/*`).

    Default: vLLM: its OpenAI-compatible API (see [Exposure and security](security.md)); other
    images: `/v1/*`
    """
    websockets: bool = False
    """Let WebSocket connections through the gate (a notebook's kernels, a web UI's live updates).

    The upgrade request needs the key and an allowed path like any other; the connection may then
    stay quiet for an hour. Off: every upgrade is refused (400).
    """
    domain: Annotated[str, _pattern(formats.DOMAIN), StringConstraints(max_length=253)] | None = (
        None
    )
    """Serve the endpoint on this name through a GKE Gateway with a Google-managed certificate.

    `auto`: a free name, `<workload>.endpoints.<project>.cloud.goog` (Cloud Endpoints). Clients
    need no CA (`url` is `https://<domain>`); the plan prints the DNS records to create. The gate
    stays behind the Gateway (key and path allowlist). Global external (`type: LoadBalancer`) on
    Autopilot. One workload per name: a name another workload has (written, or its `auto` name)
    is refused, and so is a name under `cloud.goog` written out (use `auto`). See
    [Exposure and security](security.md).
    """
    keys: Annotated[list[Annotated[str, _pattern(formats.CONSUMER)]], Field(max_length=20)] = []
    """A key per consumer: each name gets its own generated key (secret output
    `apiKeys.<workload>.<consumer>`), which the gate accepts and logs by name.

    Removing a name revokes that key alone. The server then gets the workload's own key from the
    gate, never a consumer's. Needs the generated key (`apiKey`). Empty: one key (`apiKey`).
    See [Day-2 operations](day-2.md).
    """
