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

from ..config import Expose
from ..facts.labels import CERTMAP_ANNOTATION, GKE_POLICY_API, PRODUCTION_LABEL
from ..manifest import manifest
from ..platform import cloud_armor
from .base import Exposure, Served, Site

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
HTTPS_LISTENER = "https"
HTTP_LISTENER = "http"


def gateway_name(workload: str) -> str:
    return f"{workload}-gateway"


def _from_proxies() -> list[dict[str, Any]]:
    return [{"ipBlock": {"cidr": cidr}} for cidr in PROXY_RANGES]


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


def backend_policy_spec(service: str, site: Site) -> dict[str, Any]:
    """The load balancer's backend timeout (30 s by default, the CRD says) past the gate's; with
    source ranges, the Cloud Armor policy by name: `securityPolicy`, "a reference to a GCP Cloud
    Armor SecurityPolicy resource" (GoogleCloudPlatform/gke-gateway-api@fc40d606
    config/crd/networking.gke.io_gcpbackendpolicies.yaml, spec.default; tools/crds)."""
    timeout = site.backend_timeout_seconds + BACKEND_MARGIN_SECONDS
    default: dict[str, Any] = {"timeoutSec": timeout}
    if site.source_ranges:
        default["securityPolicy"] = site.gce_name
    return {"targetRef": _target(service), "default": default}


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

    name = "Gateway"
    service_type = "ClusterIP"
    load_balanced = True
    public = True
    own_certificate = True
    client_words = (
        "the client's address (the one Google's front end appends, second from the right)"
    )
    proxy_ranges = PROXY_RANGES

    def __init__(self, domain: str, endpoints: bool = False) -> None:
        self.domain = domain
        self.endpoints = endpoints
        """The name is a Cloud Endpoints name the stack makes (expose.domain: auto)."""
        self._address: pulumi.Output[str | None] = pulumi.Output.from_input(None)
        # The records the name needs (its A record, the certificate's CNAME), once registered.
        self.dns_records = None

    def ingress_from(self) -> list[dict[str, Any]] | None:
        """Only the load balancer's proxies reach the gate's serving port."""
        return _from_proxies()

    def extra_ingress(self, site: Site | None) -> list[dict[str, Any]]:
        """The load balancer's health checks reach the gate's health port."""
        if site is None:
            return []
        ports = [{"protocol": "TCP", "port": site.health_port}]
        return [{"from": _from_proxies(), "ports": ports}]

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
        return [*self._name_lines(), *cloud_armor.plan_lines(tuple(e.spec.source_ranges))]

    def _name_lines(self) -> list[str]:
        if self.endpoints:
            head = [
                f"            endpoint: https://{self.domain} (Cloud Endpoints, made by the "
                "stack; its DNS record points at the Gateway's reserved global address); "
                "certificate issued by Google (Certificate Manager, Google-managed, load "
                "balancer authorization), renewed by Google",
                "            DNS records to create: none (Cloud Endpoints serves the name's A "
                "record)",
                "            ! an Endpoints name stays reserved 30 days after its service is "
                "deleted: `pulumi destroy` leaves the service (deletionPolicy ABANDON) so the "
                "next `pulumi up` reuses it; if it was deleted, run `gcloud endpoints services "
                f"undelete {self.domain}` before `pulumi up`",
            ]
            when = "once the name resolves to the Gateway"
        else:
            head = [
                f"            endpoint: https://{self.domain}; certificate issued by Google "
                "(Certificate Manager, Google-managed, DNS authorization), renewed by Google",
                "            DNS records to create at your DNS provider (values: `pulumi stack "
                f"output dnsRecords` after `pulumi up`): A {self.domain} -> the Gateway's "
                f"reserved global address; CNAME _acme-challenge.{self.domain} -> the DNS "
                "authorization's target",
            ]
            when = "after the CNAME resolves"
        return [
            *head,
            f"            certificate active: {when}, Google issues it (how long it takes is not "
            "stated here: a live `up` shows it); until it is ACTIVE, "
            f"https://{self.domain} fails",
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
            endpoints_service(name, self.domain, site, child, address)
        certificate_map = self._certificate(name, site, child, address)
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
        backend, health = backend_policy_spec(service, site), health_policy_spec(service, site)
        objects = (
            ("route", GATEWAY_API, "HTTPRoute", route_spec(workload, self.domain, service, port)),
            ("redirect", GATEWAY_API, "HTTPRoute", redirect_spec(workload, self.domain)),
            ("backend-policy", GKE_POLICY_API, "GCPBackendPolicy", backend),
            ("health-policy", GKE_POLICY_API, "HealthCheckPolicy", health),
        )
        _register_objects(name, parent, meta, workload, objects, gateway, armor)

    def _certificate(
        self,
        name: str,
        site: Site,
        child: pulumi.ResourceOptions,
        address: gcp.compute.GlobalAddress,
    ) -> gcp.certificatemanager.CertificateMap:
        """The Google-managed certificate for the name, in a map: proven by DNS authorization
        for your name; for a Cloud Endpoints name, whose zone only Google writes (no CNAME can be
        added), by load balancer authorization: Google checks that the name resolves to the
        load balancer the certificate is attached to (Certificate Manager, "Domain
        authorization", cloud.google.com/certificate-manager/docs/domain-authorization; not read
        in a stored source, so unconfirmed here)."""
        authorizations: list[pulumi.Input[str]] = []
        if not self.endpoints:
            authorization = gcp.certificatemanager.DnsAuthorization(
                f"{name}-dns-authorization",
                name=site.gce_name,
                project=site.project,
                domain=self.domain,
                opts=child,
            )
            authorizations.append(authorization.id)
            challenge: pulumi.Input[Any] = authorization.dns_resource_records
        else:
            challenge = []
        certificate = gcp.certificatemanager.Certificate(
            f"{name}-certificate",
            name=site.gce_name,
            project=site.project,
            managed=gcp.certificatemanager.CertificateManagedArgs(
                domains=[self.domain], dns_authorizations=authorizations or None
            ),
            opts=child,
        )
        certificate_map = gcp.certificatemanager.CertificateMap(
            f"{name}-certificate-map", name=site.gce_name, project=site.project, opts=child
        )
        gcp.certificatemanager.CertificateMapEntry(
            f"{name}-certificate-map-entry",
            name=site.gce_name,
            project=site.project,
            map=certificate_map.name,
            hostname=self.domain,
            certificates=[certificate.id],
            opts=child,
        )
        self.dns_records = pulumi.Output.all(address.address, challenge).apply(
            lambda v: _records(self.domain, v[0], v[1])
        )
        return certificate_map


def _records(domain: str, address: str | None, challenge: Any) -> list[dict[str, str]]:
    records = [{"name": domain, "type": "A", "data": address or "(the Gateway's address)"}]
    for record in challenge or []:
        get = record.get if isinstance(record, dict) else lambda k, r=record: getattr(r, k, None)
        records.append(
            {"name": str(get("name")), "type": str(get("type")), "data": str(get("data"))}
        )
    return records


def openapi_config(domain: str, address: str) -> str:
    """The Endpoints service's OpenAPI document: the name, and (x-google-endpoints) the address
    its DNS record points at ("Configuring DNS on the cloud.goog domain",
    cloud.google.com/endpoints/docs/openapi/cloud-goog-dns-configure: `x-google-endpoints: - name:
    ... target: IP_ADDRESS`). The one path describes the API; no Endpoints proxy runs, so it
    checks nothing: the gate does."""
    return (
        f'swagger: "2.0"\ninfo:\n  title: "{domain}"\n  version: "1.0.0"\nhost: "{domain}"\n'
        f'x-google-endpoints:\n  - name: "{domain}"\n    target: "{address}"\n'
        'schemes:\n  - "https"\npaths:\n  /v1/models:\n    get:\n      operationId: "models"\n'
        '      responses:\n        200:\n          description: "the models served"\n'
    )


# What `pulumi destroy` does to the Endpoints service: leave it. A deleted managed service is
# disabled for 30 days and "While the managed service is in the disabled state, Service Management
# doesn't allow the creation of another managed service with the same name" (Cloud Endpoints,
# "Restoring a managed service", cloud.google.com/endpoints/docs/openapi/restore-managed-service),
# so a stack destroyed and brought up again within 30 days could not have its name back. Left in
# place, the next `pulumi up` finds it and rolls out its config again: the provider's create
# looks the service up and creates it only when the lookup fails, "if it does, it will be reused"
# (hashicorp/terraform-provider-google@36e138ea google/services/servicemanagement/
# resource_endpoints_service.go, resourceEndpointsServiceCreate). deletion_policy "ABANDON":
# "remove the resource from Terraform management without updating or deleting the resource in
# the API" (pulumi_gcp 9.x/10.x endpoints/service.py).
ENDPOINTS_DELETION_POLICY = "ABANDON"


def endpoints_service(
    name: str,
    domain: str,
    site: Site,
    child: pulumi.ResourceOptions,
    address: gcp.compute.GlobalAddress,
) -> gcp.endpoints.Service:
    """The Cloud Endpoints service that names the Gateway's address: `domain` resolves to it."""
    return gcp.endpoints.Service(
        f"{name}-endpoints",
        service_name=domain,
        project=site.project,
        openapi_config=address.address.apply(lambda a: openapi_config(domain, a)),
        deletion_policy=ENDPOINTS_DELETION_POLICY,
        opts=child,
    )


def _register_objects(
    name: str,
    parent: pulumi.Resource,
    meta: dict[str, Any],
    workload: str,
    objects: tuple[tuple[str, str, str, dict[str, Any]], ...],
    gateway: pulumi.Resource,
    armor: list[gcp.compute.SecurityPolicy],
) -> None:
    """The routes and policies, after the Gateway; with a Cloud Armor policy, the backend policy
    that names it comes first, and the route waits for it: no request reaches it unfiltered."""
    made: dict[str, pulumi.Resource] = {}
    first = sorted(objects, key=lambda o: bool(armor) and o[0] != "backend-policy")
    for suffix, api_version, kind, spec in first:
        after = [gateway, *(armor if suffix == "backend-policy" else [])]
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
