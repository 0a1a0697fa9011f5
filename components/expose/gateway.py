"""Gateway: a workload served on a name (expose.domain, issue 35) through a GKE Gateway, the global
external Application Load Balancer, with a Google-managed certificate, in front of its gate.

What it registers beside the gate's ClusterIP Service (components/service/load_balancer.py):
  - a reserved global address, which the name's A record points at;
  - Certificate Manager: a DNS authorization for the name (its CNAME record proves the name is
    yours, so the certificate is issued before the A record points here and renews on its own),
    a Google-managed certificate, a certificate map and its entry for the name. A certificate map
    is how a global external Gateway takes Certificate Manager certificates: the Gateway's
    annotation `networking.gke.io/certmap` (GKE, "Secure a Gateway",
    cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway: "You cannot use the
    networking.gke.io/certmap annotation with a tls.certificateRefs on the same Gateway");
  - the Gateway (class gke-l7-global-external-managed; an HTTPS listener on 443 and an HTTP one on
    80), an HTTPRoute from the name to the gate's Service, and one that redirects HTTP to HTTPS
    (RequestRedirect, 301);
  - a GCPBackendPolicy whose backend timeout outlasts the gate's longest wait (a held wake), and a
    HealthCheckPolicy that checks the gate's own health port, not the API port (which needs the
    key);
  - with expose.sourceRanges, a Cloud Armor backend security policy that allows only those ranges
    (components/platform/cloud_armor.py), which the GCPBackendPolicy attaches to the backend.

The objects are checked against vendored schemas (tools/crds: Gateway API v1.1.0's standard
CRDs, GKE's policy CRDs; tests/test_gateway.py). With expose.domain: auto, the name is a Cloud
Endpoints one (endpoints_service below).

An exposure module imports components.config, components.facts, components.platform and
expose/base.py only (tests/test_layout.py).
"""

from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from ..config import Expose, defaults
from ..facts.labels import CERTMAP_ANNOTATION, GKE_POLICY_API, PRODUCTION_LABEL
from ..manifest import manifest
from ..platform import cloud_armor
from ..platform.gateway_name import certificate_map as certificate_map_of
from ..platform.gateway_name import endpoints_service, name_lines
from .base import Exposure, Served, Site
from .gateway_spec import GATEWAY
from .spec import ExposureKeys

GATEWAY_CLASS = "gke-l7-global-external-managed"
GATEWAY_API = "gateway.networking.k8s.io/v1"
# Where a global external Application Load Balancer's proxies and health checks connect from,
# for zonal NEG (GCE_VM_IP_PORT) backends, which a GKE Gateway uses: "Health check ranges:
# 35.191.0.0/16, 130.211.0.0/22 ... GFE proxy ranges: Same as health check ranges if the
# backends are instance groups, zonal NEGs (GCE_VM_IP_PORT) ..." (cloud.google.com/
# load-balancing/docs/firewall-rules, "Global external Application Load Balancer").
PROXY_RANGES = ("35.191.0.0/16", "130.211.0.0/22")
# Seconds past the gate's own longest wait, so the load balancer never cuts an answer the gate
# is still waiting for (it answers 504 itself first).
BACKEND_MARGIN_SECONDS = 30
# Google's front end applies the backend service timeout to a request's whole life, not to a gap
# between chunks: "For HTTP traffic, the backend service timeout is the maximum time ... a
# response, including a streamed one, can take"; for a WebSocket, its whole duration, idle or
# not (cloud.google.com/load-balancing/docs/https#timeout-bes, "Backend service timeout", as the
# issue 43 review quotes it; Google's page itself is not in a stored copy here, so the wording is
# unconfirmed). So the policy's timeout is the longest stream the gate allows (its tunnel limit,
# config/defaults.py STREAM_SECONDS), not the gate's longest silence: with the gate's 630 s a
# notebook's kernel connection or a long streamed answer was cut after 10.5 minutes. Google
# advises against more than a day: its front ends restart for maintenance (gcpdiag rule
# lb/BP/2025_002, gcpdiag.dev/rules/lb/BP/2025_002).
# Connection draining: when a gate pod leaves the backends (a rollout: key rotation, a renewed
# certificate), the load balancer lets requests in flight finish for this long, sending it no
# new ones (GCPBackendPolicy connectionDraining.drainingTimeoutSec, "up to one hour",
# gke-gateway-api@fc40d606 networking.gke.io_gcpbackendpolicies.yaml, tools/crds): the gate's
# longest wait and the margin, as long as the gate itself keeps answering after it is told to
# stop (components/service/gate_pod.py termination_grace_seconds).
DRAINING_MAX_SECONDS = 3600
# TLS at the edge: version 1.2 at least, Google's MODERN profile of ciphers (an SSL policy;
# Google's default policy admits TLS 1.0: cloud.google.com/load-balancing/docs/ssl-policies-
# concepts, "the default SSL policy ... COMPATIBLE profile ... minimum TLS version 1.0", as the
# review quotes it). A GCPGatewayPolicy names it for the Gateway (`default.sslPolicy`,
# gke-gateway-api@4a788186 config/crd/networking.gke.io_gcpgatewaypolicies.yaml, tools/crds).
SSL_MIN_TLS = "TLS_1_2"
SSL_PROFILE = "MODERN"
HTTPS_LISTENER = "https"
HTTP_LISTENER = "http"


def gateway_name(workload: str) -> str:
    return f"{workload}-gateway"


def gateway_spec(address_name: str) -> dict[str, Any]:
    """The Gateway: HTTPS on 443 (its certificate from the map the annotation names) and HTTP on
    80 for the redirect, on the reserved global address."""
    return {
        "gatewayClassName": GATEWAY_CLASS,
        "listeners": [
            {"name": HTTPS_LISTENER, "protocol": "HTTPS", "port": 443},
            {"name": HTTP_LISTENER, "protocol": "HTTP", "port": 80},
        ],
        "addresses": [{"type": "NamedAddress", "value": address_name}],
    }


def route_spec(workload: str, domain: str, service: str, port: int) -> dict[str, Any]:
    """HTTPS requests for the name go to the gate's Service, every path (the gate allows)."""
    return {
        "parentRefs": [{"name": gateway_name(workload), "sectionName": HTTPS_LISTENER}],
        "hostnames": [domain],
        "rules": [{"backendRefs": [{"name": service, "port": port}]}],
    }


def redirect_spec(workload: str, domain: str) -> dict[str, Any]:
    """Plain HTTP for the name is answered with a redirect to HTTPS, never forwarded."""
    to_https = {"scheme": "https", "statusCode": 301}
    return {
        "parentRefs": [{"name": gateway_name(workload), "sectionName": HTTP_LISTENER}],
        "hostnames": [domain],
        "rules": [{"filters": [{"type": "RequestRedirect", "requestRedirect": to_https}]}],
    }


def _target(service: str) -> dict[str, Any]:
    return {"group": "", "kind": "Service", "name": service}


def backend_timeout_seconds(site: Site) -> int:
    """What the load balancer allows one request, streamed or upgraded, from start to end."""
    return max(site.backend_timeout_seconds + BACKEND_MARGIN_SECONDS, defaults.STREAM_SECONDS)


def draining_seconds(site: Site) -> int:
    return min(site.backend_timeout_seconds + BACKEND_MARGIN_SECONDS, DRAINING_MAX_SECONDS)


def backend_policy_spec(service: str, site: Site) -> dict[str, Any]:
    """The load balancer's backend timeout (30 s by default, the CRD says): the longest stream;
    connection draining for a gate leaving the backends; with source ranges, the Cloud Armor
    policy by name: `securityPolicy`, "a reference to a GCP Cloud Armor SecurityPolicy resource"
    (GoogleCloudPlatform/gke-gateway-api@fc40d606 config/crd/networking.gke.io_gcpbackendpolicies
    .yaml, spec.default; tools/crds)."""
    default: dict[str, Any] = {
        "timeoutSec": backend_timeout_seconds(site),
        "connectionDraining": {"drainingTimeoutSec": draining_seconds(site)},
    }
    if site.source_ranges:
        default["securityPolicy"] = site.gce_name
    return {"targetRef": _target(service), "default": default}


def gateway_policy_spec(workload: str, site: Site) -> dict[str, Any]:
    """The Gateway's SSL policy (TLS 1.2 and up, MODERN ciphers), by name."""
    target = {"group": "gateway.networking.k8s.io", "kind": "Gateway"}
    return {
        "targetRef": {**target, "name": gateway_name(workload)},
        "default": {"sslPolicy": site.gce_name},
    }


def ssl_policy(name: str, site: Site, child: pulumi.ResourceOptions) -> gcp.compute.SSLPolicy:
    """The SSL policy the Gateway's GCPGatewayPolicy names (a global one: the Gateway's load
    balancer is global)."""
    return gcp.compute.SSLPolicy(
        f"{name}-ssl-policy",
        name=site.gce_name,
        project=site.project,
        min_tls_version=SSL_MIN_TLS,
        profile=SSL_PROFILE,
        description="gke-gpu: TLS 1.2 and up at a workload's Gateway",
        opts=child,
    )


def health_policy_spec(service: str, site: Site) -> dict[str, Any]:
    """The load balancer checks the gate's health port (HAProxy's monitor-uri), which needs no
    key; the API port would answer 401."""
    check = {
        "portSpecification": "USE_FIXED_PORT",
        "port": site.health_port,
        "requestPath": site.health_path,
    }
    return {
        "targetRef": _target(service),
        "default": {"config": {"type": "HTTP", "httpHealthCheck": check}},
    }


class Gateway(Exposure):
    """GKE's global external Gateway on expose.domain, with a Google-managed certificate."""

    spec = GATEWAY
    service_type = "ClusterIP"
    # A global external Application Load Balancer: a forwarding rule names one target (`gcloud
    # compute forwarding-rules create`: one of --target-http-proxy, --target-https-proxy, ...), and
    # the Gateway's HTTPS and HTTP listeners end at a target HTTPS and a target HTTP proxy, so one
    # rule per listener. GKE's Gateway controller is not public code: that it makes no other rule
    # could not be confirmed.
    forwarding_rules = (True, len(gateway_spec("")["listeners"]))
    own_certificate = True
    client_words = (
        "the client's address (the one Google's front end appends, second from the right)"
    )
    proxy_ranges = PROXY_RANGES

    @classmethod
    def on_name(cls, keys: ExposureKeys, endpoints: bool = False) -> "Gateway":
        """The Gateway of keys whose domain picked it (components/config/variants.py exposure_of;
        `endpoints`: the name is a Cloud Endpoints name the stack makes)."""
        assert keys.domain is not None, "the Gateway is picked by expose.domain"
        return cls(keys.domain, endpoints)

    def __init__(self, domain: str, endpoints: bool = False) -> None:
        self.domain = domain
        self.endpoints = endpoints
        """The name is a Cloud Endpoints name the stack makes (expose.domain: auto)."""
        self._address: pulumi.Output[str | None] = pulumi.Output.from_input(None)
        # The records the name needs (its A record, the certificate's CNAME), once registered.
        self.dns_records = None

    def extra_ingress(self, site: Site | None) -> list[dict[str, Any]]:
        """The load balancer's health checks reach the gate's health port."""
        if site is None:
            return []
        ports = [{"protocol": "TCP", "port": site.health_port}]
        return [{"from": self.ingress_from(), "ports": ports}]

    def port_extras(self, tls: bool) -> dict[str, Any]:
        """The load balancer speaks TLS to a gate that serves it (the gate's own certificate,
        which the load balancer does not verify)."""
        return {"appProtocol": "HTTPS" if tls else "HTTP"}

    def where_words(self, e: Expose, namespace: str) -> str:
        del namespace
        ranges = ", ".join(e.spec.source_ranges)
        where = f"from {ranges} only (Cloud Armor; others 403)" if ranges else "from anywhere"
        where = cloud_armor.admits_everyone_words(e.spec.source_ranges) or where
        return (
            f"https://{self.domain} through a GKE Gateway ({GATEWAY_CLASS}, global external "
            f"Application Load Balancer), port 443 (HTTP on 80 redirected), {where}"
            f"{'' if e.spec.tls else '; load balancer to gate in plain HTTP (expose.tls: false)'}"
        )

    def plan_lines(self, e: Expose) -> list[str]:
        """The name, who issues its certificate, the records to create and when it works."""
        return [
            *name_lines(self.domain, self.endpoints),
            *self._edge_lines(),
            *cloud_armor.plan_lines(tuple(e.spec.source_ranges)),
        ]

    def _edge_lines(self) -> list[str]:
        """What Google's load balancer does before the gate: TLS, plain HTTP, its limits."""
        hours = defaults.STREAM_SECONDS / 3600
        return [
            f"            edge: TLS 1.2 and up (SSL policy, {SSL_PROFILE} profile); HTTP on 80 "
            "answered with a redirect by the load balancer itself, never forwarded to the gate; "
            "every answer carries HSTS (browsers keep to HTTPS for the name a year)",
            "            load balancer limits: a request, a streamed answer or a WebSocket ends "
            f"{hours:g} h after it began (the backend timeout counts its whole life, not the "
            "gaps); idle connections to the gate are reused up to 600 s; a gate pod leaving "
            "the backends (a rollout) finishes what it serves first (connection draining)",
        ]

    def addresses(
        self,
        served: Served,
        status: pulumi.Output[Any],
        node_port: pulumi.Output[int | None],
    ) -> tuple[pulumi.Output[str | None], pulumi.Output[str | None]]:
        """The reserved global address, and https://<domain>."""
        del served, status, node_port
        return self._address, pulumi.Output.from_input(f"https://{self.domain}")

    def register(
        self,
        name: str,
        parent: pulumi.Resource,
        served: Served,
        site: Site | None,
    ) -> None:
        assert site is not None, "a Gateway needs its Site"
        child = pulumi.ResourceOptions(parent=parent)
        address = gcp.compute.GlobalAddress(
            f"{name}-global-address",
            name=site.gce_name,
            project=site.project,
            description="gke-gpu: the Gateway address of a workload's name",
            opts=pulumi.ResourceOptions(parent=parent, protect=site.protect),
        )
        self._address = address.address
        if self.endpoints:
            endpoints_service(name, self.domain, site.project, child, address)
        certificate_map, self.dns_records = certificate_map_of(
            name, self.domain, self.endpoints, (site.project, site.gce_name), child, address
        )
        policy = (site.gce_name, site.project, site.source_ranges, site.production, child)
        armor = cloud_armor.allowlist(f"{name}-security-policy", *policy)
        service, port = served.service, served.port
        workload = service
        marker = {"labels": {PRODUCTION_LABEL: "true"}} if site.production else {}
        meta: dict[str, Any] = {"namespace": served.namespace, **marker}
        annotations = {CERTMAP_ANNOTATION: certificate_map.name}
        gateway = k8s.apiextensions.CustomResource(
            f"{name}-gateway",
            api_version=GATEWAY_API,
            kind="Gateway",
            metadata=manifest({**meta, "name": gateway_name(workload), "annotations": annotations}),
            spec=manifest(gateway_spec(site.gce_name)),
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[address]),
        )
        ssl = ssl_policy(name, site, child)
        backend, health = backend_policy_spec(service, site), health_policy_spec(service, site)
        objects = (
            (
                "gateway-policy",
                GKE_POLICY_API,
                "GCPGatewayPolicy",
                gateway_policy_spec(workload, site),
            ),
            ("route", GATEWAY_API, "HTTPRoute", route_spec(workload, self.domain, service, port)),
            ("redirect", GATEWAY_API, "HTTPRoute", redirect_spec(workload, self.domain)),
            ("backend-policy", GKE_POLICY_API, "GCPBackendPolicy", backend),
            ("health-policy", GKE_POLICY_API, "HealthCheckPolicy", health),
        )
        _register_objects(name, parent, meta, workload, objects, gateway, armor, ssl)


def _register_objects(
    name: str,
    parent: pulumi.Resource,
    meta: dict[str, Any],
    workload: str,
    objects: tuple[tuple[str, str, str, dict[str, Any]], ...],
    gateway: pulumi.Resource,
    armor: list[gcp.compute.SecurityPolicy],
    ssl: gcp.compute.SSLPolicy,
) -> None:
    """The routes and policies, after the Gateway; with a Cloud Armor policy, the backend policy
    that names it comes first, and the route waits for it: no request reaches it unfiltered."""
    made: dict[str, pulumi.Resource] = {}
    first = sorted(objects, key=lambda o: bool(armor) and o[0] != "backend-policy")
    for suffix, api_version, kind, spec in first:
        after = [gateway, *(armor if suffix == "backend-policy" else [])]
        after += [ssl] if suffix == "gateway-policy" else []
        if suffix == "route" and armor:
            after.append(made["backend-policy"])
        made[suffix] = k8s.apiextensions.CustomResource(
            f"{name}-{suffix}",
            api_version=api_version,
            kind=kind,
            metadata=manifest({**meta, "name": f"{workload}-{suffix}"}),
            spec=manifest(spec),
            opts=pulumi.ResourceOptions(parent=parent, depends_on=after),
        )
