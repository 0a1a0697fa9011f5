"""How a workload is reached: the protocol every expose type (LoadBalancer, Internal, ClusterIP,
NodePort) implements.

An exposure knows its stack-file type name, the Kubernetes Service type and annotations it
registers, whether a load balancer serves it (and so keeps the client's address and may reserve an
address), whom its NetworkPolicy admits, where its URL points, and the offline plan's words for
it. components/slices.py lists them (EXPOSURES); nothing in components/service/ or tools/ decides
by its name.

An exposure module imports components.config, components.facts, components.platform and this
module only (tests/test_layout.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import pulumi

from ..config import Expose
from .spec import ExposureSpec

# A LoadBalancer on GKE takes a few minutes to get an address; Pulumi waits for it.
ADDRESS_TIMEOUT = "20m"


DEFAULT_PORTS = {"https": 443, "http": 80}


def url_for(address: str | None, port: int, tls: bool = True) -> str | None:
    if not address:
        return None
    scheme = "https" if tls else "http"
    host = f"[{address}]" if ":" in address else address
    return f"{scheme}://{host}" if port == DEFAULT_PORTS[scheme] else f"{scheme}://{host}:{port}"


@dataclass(frozen=True)
class Site:
    """What an exposure that registers resources of its own (a Gateway) needs to know of the stack
    and the gate behind it."""

    project: str
    gce_name: str
    """A Compute Engine name for the workload's cloud resources (<cluster>-<workload>)."""
    backend_timeout_seconds: int
    """The longest the gate may stay silent on a request (a held wake included)."""
    health_port: int
    health_path: str
    protect: bool = False
    source_ranges: tuple[str, ...] = ()
    """expose.sourceRanges: only these reach the Gateway (a Cloud Armor policy); none: anyone."""
    production: bool = False
    """cluster.production: its objects carry the marker the policy pack reads."""


@dataclass(frozen=True)
class Served:
    """The gate's Service as LoadBalancerService creates it: what an exposure's register and
    addresses read of it."""

    namespace: pulumi.Input[str]
    service: str
    """The Service's name."""
    port: int
    """The Service's port."""
    tls: bool


class Exposure(ABC):
    """One way a workload's gate is reached: a Service type and what comes with it."""

    spec: ClassVar[ExposureSpec]
    """What it declares of itself, below the config layer (components/expose/<type>_spec.py): its
    name and its capabilities, which the properties below read rather than restate."""
    service_type: ClassVar[str]
    """The Service's spec.type (GKE makes an internal load balancer from a LoadBalancer Service
    with an annotation)."""
    annotations: ClassVar[dict[str, str]] = {}
    """The Service's annotations."""
    client_words: ClassVar[str] = "the address the connection came from"
    """The plan's words for the client address the gate sees."""
    proxy_ranges: ClassVar[tuple[str, ...]] = ()
    """A proxy of the cloud's connects to the gate for every client, from these ranges only, and
    names the client in X-Forwarded-For (a Gateway's Google front ends); empty: clients connect
    to the gate themselves."""
    own_certificate: ClassVar[bool] = False
    """Clients see a certificate of its own (a Gateway's Google-managed one), not the gate's."""
    dns_records: pulumi.Output[list[dict[str, str]]] | None = None
    """The DNS records its name needs (a Gateway's, once registered); None: no name."""

    forwarding_rules: ClassVar[tuple[bool, int]] = (False, 0)
    """(global, how many) forwarding rules the load balancer in front of one workload has (the
    plan's cost); none without a load balancer."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """An exposure whose front end ends the clients' connections (terminates_at_edge) says
        where that front end connects from: the gate's NetworkPolicy admits those ranges alone
        (ingress_from), so without them it would refuse every request the front end forwards."""
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("spec")
        if spec is not None and spec.terminates_at_edge and not cls.proxy_ranges:
            raise TypeError(
                f"{cls.__name__}: its front end ends the clients' connections "
                "(terminates_at_edge), so the gate's NetworkPolicy must admit where it connects "
                "from: declare proxy_ranges (the ranges Google documents for it)"
            )

    @property
    def name(self) -> str:
        """The stack file's `expose.type`."""
        return self.spec.name

    @property
    def load_balanced(self) -> bool:
        """A cloud load balancer serves it."""
        return self.spec.load_balanced

    @property
    def address_type(self) -> str | None:
        """The address type (gcp.compute.Address.address_type) of the regional address it
        reserves with expose.staticIp; None: it has no address to reserve."""
        return self.spec.address_type

    @property
    def public(self) -> bool:
        """Its address is reached from the internet: the stack output externalIp."""
        return self.spec.public

    @property
    def named_by_cluster_dns(self) -> bool:
        """Clients reach it by its cluster DNS name, which the certificate always names."""
        return self.spec.in_cluster

    @property
    def reserves_address(self) -> bool:
        """Whether expose.staticIp reserves a regional address for it."""
        return self.address_type is not None

    def address_subnetwork(self, subnetwork: str | None) -> str | None:
        """The subnetwork its reserved address comes from (an internal address only)."""
        del subnetwork
        return None

    def spec_extras(self, source_ranges: tuple[str, ...]) -> dict[str, Any]:
        """What the Service's spec adds to its type, selector and ports."""
        del source_ranges
        return {}

    def ingress_from(self) -> list[dict[str, Any]] | None:
        """Whom the NetworkPolicy admits to the serving port: the proxy's ranges where a proxy of
        the cloud connects for every client (proxy_ranges), else any source (None)."""
        if not self.proxy_ranges:
            return None
        return [{"ipBlock": {"cidr": cidr}} for cidr in self.proxy_ranges]

    def timeouts(self) -> pulumi.CustomTimeouts | None:
        """The Service's create timeout (None: the provider's)."""
        return None

    def port_extras(self, tls: bool) -> dict[str, Any]:
        """What the Service's port adds to its name, port, targetPort and protocol."""
        del tls
        return {}

    def extra_ingress(self, site: Site | None) -> list[dict[str, Any]]:
        """NetworkPolicy rules beyond the serving port's (a load balancer's health checks)."""
        del site
        return []

    def register(
        self,
        name: str,
        parent: pulumi.Resource,
        served: Served,
        site: Site | None,
    ) -> None:
        """The resources it registers beside the Service (none but for a Gateway), children of
        `parent` (the LoadBalancerService component), named `name`-<what>."""
        del name, parent, served, site

    def plan_lines(self, e: Expose) -> list[str]:
        """The offline plan's lines about its endpoint beyond where_words (a name, its
        certificate and DNS records); none by default."""
        del e
        return []

    @abstractmethod
    def where_words(self, e: Expose, namespace: str) -> str:
        """The plan's words for where it is served and from where."""

    @abstractmethod
    def addresses(
        self,
        served: Served,
        status: pulumi.Output[Any],
        node_port: pulumi.Output[int | None],
    ) -> tuple[pulumi.Output[str | None], pulumi.Output[str | None]]:
        """Its external IP (None but for a load balancer) and its URL (or how to reach it)."""


def first_ingress(status: Any) -> str | None:
    """The LoadBalancer's IP, or its hostname where the implementation gives one instead."""
    ingress = (getattr(getattr(status, "load_balancer", None), "ingress", None) or [None])[0]
    if ingress is None:
        return None
    return getattr(ingress, "ip", None) or getattr(ingress, "hostname", None)


class LoadBalanced(Exposure):
    """A Service of type LoadBalancer: a cloud load balancer in front of the gate's pods."""

    service_type = "LoadBalancer"
    # GKE makes a LoadBalancer Service a passthrough Network Load Balancer (external, or internal
    # with the annotation) whose frontend is one regional forwarding rule (GKE, "Create a backend
    # service-based external load balancer": it creates "Forwarding rule, Regional backend
    # service, Instance group, Health check"; cloud.google.com/load-balancing/docs/internal: "a
    # frontend (the forwarding rule) and a backend").
    forwarding_rules = (False, 1)
    client_words = "the client's own address (externalTrafficPolicy: Local)"
    scope: ClassVar[str]
    """The plan's words for who its load balancer serves."""

    def spec_extras(self, source_ranges: tuple[str, ...]) -> dict[str, Any]:
        """Its source ranges, and the client's address kept.

        A load balancer delivers to the nodes that run a gate pod only, without a second hop that
        would replace the client's address with a node's: `externalTrafficPolicy: Local`
        "preserves the client source IP and avoids a second hop" (kubernetes.io/docs/tasks/
        access-application-cluster/create-external-load-balancer, "Preserving the client source
        IP"), and GKE's passthrough load balancers then health-check each node on the Service's
        healthCheckNodePort, sending only to nodes with a ready pod (cloud.google.com/
        kubernetes-engine/docs/concepts/service-load-balancer, "External traffic policy"). The
        gate thus sees each client's address, which its per-source limit on wrong keys counts
        (components/service/haproxy_limits.py). GKE enforces loadBalancerSourceRanges at the load
        balancer's firewall ("LoadBalancer Service parameters")."""
        extras: dict[str, Any] = {}
        if source_ranges:
            extras["loadBalancerSourceRanges"] = list(source_ranges)
        extras["externalTrafficPolicy"] = "Local"
        return extras

    def timeouts(self) -> pulumi.CustomTimeouts | None:
        return pulumi.CustomTimeouts(create=ADDRESS_TIMEOUT)

    def where_words(self, e: Expose, namespace: str) -> str:
        del namespace
        static = ", reserved static address" if e.static_ip else ""
        ranges = ", ".join(e.spec.source_ranges) or "anywhere"
        return f"{self.scope} port {e.spec.port}{static}, from {ranges}"

    def addresses(
        self,
        served: Served,
        status: pulumi.Output[Any],
        node_port: pulumi.Output[int | None],
    ) -> tuple[pulumi.Output[str | None], pulumi.Output[str | None]]:
        """The address the cloud assigned, and https://<it>[:port]."""
        del node_port
        external_ip = status.apply(first_ingress)
        return external_ip, external_ip.apply(
            lambda address: url_for(address, served.port, served.tls)
        )
