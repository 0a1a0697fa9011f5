"""A Gateway's name (expose.domain): its Google-managed certificate in a certificate map, the DNS
records a name of your own needs, and, for `domain: auto`, the Cloud Endpoints service that makes
the name (components/expose/gateway.py registers them; `where`: the project and the Compute Engine
name of the workload's cloud resources)."""

from typing import Any

import pulumi
import pulumi_gcp as gcp


def name_lines(domain: str, endpoints: bool) -> list[str]:
    """The plan's lines on the name: who makes it, who issues its certificate, the records to
    create, what `pulumi destroy` leaves, and when it works."""
    if endpoints:
        head = [
            f"            endpoint: https://{domain} (Cloud Endpoints, made by the "
            "stack; its DNS record points at the Gateway's reserved global address); "
            "certificate issued by Google (Certificate Manager, Google-managed, load "
            "balancer authorization), renewed by Google",
            "            DNS records to create: none (Cloud Endpoints serves the name's A record)",
            "            ! `pulumi destroy` deletes the Endpoints service with the address: "
            "the name stops resolving (no name is left pointing at a released address), and "
            "stays reserved to this project 30 days: to `pulumi up` again within them, first "
            f"run `gcloud endpoints services undelete {domain}`",
        ]
        when = "once the name resolves to the Gateway"
    else:
        head = [
            f"            endpoint: https://{domain}; certificate issued by Google "
            "(Certificate Manager, Google-managed, DNS authorization), renewed by Google",
            "            DNS records to create at your DNS provider (values: `pulumi stack "
            f"output dnsRecords` after `pulumi up`): A {domain} -> the Gateway's "
            f"reserved global address; CNAME _acme-challenge.{domain} -> the DNS "
            "authorization's target",
        ]
        when = "after the CNAME resolves"
    return [
        *head,
        f"            certificate active: {when}, Google issues it (how long it takes is not "
        "stated here: a live `up` shows it); until it is ACTIVE, "
        f"https://{domain} fails",
    ]


def certificate_map(
    name: str,
    domain: str,
    endpoints: bool,
    where: tuple[str, str],
    child: pulumi.ResourceOptions,
    address: gcp.compute.GlobalAddress,
) -> tuple[gcp.certificatemanager.CertificateMap, pulumi.Output[list[dict[str, str]]]]:
    """The Google-managed certificate for the name, in a map: proven by DNS authorization
    for your name; for a Cloud Endpoints name, whose zone only Google writes (no CNAME can be
    added), by load balancer authorization: Google checks that the name resolves to the
    load balancer the certificate is attached to (Certificate Manager, "Domain
    authorization", cloud.google.com/certificate-manager/docs/domain-authorization; not read
    in a stored source, so unconfirmed here)."""
    project, gce_name = where
    authorizations: list[pulumi.Input[str]] = []
    if not endpoints:
        authorization = gcp.certificatemanager.DnsAuthorization(
            f"{name}-dns-authorization",
            name=gce_name,
            project=project,
            domain=domain,
            opts=child,
        )
        authorizations.append(authorization.id)
        challenge: pulumi.Input[Any] = authorization.dns_resource_records
    else:
        challenge = []
    certificate = gcp.certificatemanager.Certificate(
        f"{name}-certificate",
        name=gce_name,
        project=project,
        managed=gcp.certificatemanager.CertificateManagedArgs(
            domains=[domain], dns_authorizations=authorizations or None
        ),
        opts=child,
    )
    certificate_map = gcp.certificatemanager.CertificateMap(
        f"{name}-certificate-map", name=gce_name, project=project, opts=child
    )
    gcp.certificatemanager.CertificateMapEntry(
        f"{name}-certificate-map-entry",
        name=gce_name,
        project=project,
        map=certificate_map.name,
        hostname=domain,
        certificates=[certificate.id],
        opts=child,
    )
    records = pulumi.Output.all(address.address, challenge).apply(
        lambda v: _records(domain, v[0], v[1])
    )
    return certificate_map, records


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


# What `pulumi destroy` does to the Endpoints service: delete it, with the address it names. Left
# in place (deletion_policy ABANDON, before issue 43), the name kept pointing at the address the
# stack released: whoever is given that address next could have a certificate issued for the
# name by load balancer authorization and serve under it. Deleted, the name stops resolving; it
# is disabled for 30 days, and "While the managed service is in the disabled state, Service
# Management doesn't allow the creation of another managed service with the same name" (Cloud
# Endpoints, "Restoring a managed service", cloud.google.com/endpoints/docs/openapi/
# restore-managed-service): an `up` of the same stack within them first runs `gcloud endpoints
# services undelete NAME`, which the plan says. Only this project can make a name under
# endpoints.<project>.cloud.goog, so no one else takes it meanwhile. deletion_policy "DELETE":
# the provider deletes the service (pulumi_gcp 10.x endpoints/service.py).
ENDPOINTS_DELETION_POLICY = "DELETE"


def endpoints_service(
    name: str,
    domain: str,
    project: str,
    child: pulumi.ResourceOptions,
    address: gcp.compute.GlobalAddress,
) -> gcp.endpoints.Service:
    """The Cloud Endpoints service that names the Gateway's address: `domain` resolves to it."""
    return gcp.endpoints.Service(
        f"{name}-endpoints",
        service_name=domain,
        project=project,
        openapi_config=address.address.apply(lambda a: openapi_config(domain, a)),
        deletion_policy=ENDPOINTS_DELETION_POLICY,
        opts=child,
    )
