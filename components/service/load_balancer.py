"""LoadBalancerService: exposes a workload's port (external or internal load balancer, in-cluster
only, or a NodePort), admits only that port with a NetworkPolicy, and reports its address."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from .. import slices
from ..config.rules.names import gce_name
from ..config.schema import ExposeType
from ..expose.base import Exposure, Served, Site
from ..facts.labels import MANAGED_BY_LABEL
from ..manifest import manifest


@dataclass(frozen=True)
class StaticAddress:
    """Where a reserved regional address for the load balancer is created."""

    project: str
    region: str
    name: str
    """The address resource's name (GCE name rules; static_address_name derives it)."""
    subnetwork: str | None = None
    """Internal addresses only: the subnetwork the internal load balancer's IP comes from."""
    protect: bool = False
    """Pulumi `protect`: a protected stack keeps its published address."""


@dataclass(frozen=True)
class LoadBalancerServiceArgs:
    name: str
    namespace: pulumi.Input[str]
    selector: dict[str, str]
    """The pods that serve it: the workload's gate (ApiGate.selector), never written twice."""
    port: int
    target_port: int
    tls: bool = True
    """The gate serves TLS on target_port: the URL is https://."""
    source_ranges: tuple[str, ...] = ()
    type: ExposeType = "LoadBalancer"
    static_address: StaticAddress | None = None
    """Reserve a regional address (LoadBalancer: EXTERNAL, Internal: INTERNAL) for the Service."""
    labels: dict[str, str] = field(default_factory=dict)
    """Extra labels on the Service (the production marker the policy pack reads)."""
    domain: str | None = None
    """expose.domain: served through a Gateway on this name (components/expose/gateway.py)."""
    endpoints: bool = False
    """domain is a Cloud Endpoints name the stack makes (expose.domain: auto)."""
    site: Site | None = None
    """What a Gateway needs beside the Service (with domain)."""


def static_address_name(cluster: str, workload: str) -> str:
    """A Compute Engine address name for a workload's load balancer (config/rules/names.py
    gce_name: an `auto` domain is named alike)."""
    return gce_name(cluster, workload)


def network_policy_ingress(
    exposure: Exposure, target_port: int, site: Site | None = None
) -> list[dict[str, Any]]:
    """The one ingress rule of an exposed workload: its serving port, from where it is served
    (the exposure's `ingress_from`: any source unless it says otherwise).

    A load balancer (external or internal) or a NodePort delivers traffic from outside the cluster,
    so the port is open to any source; GKE enforces loadBalancerSourceRanges at the load balancer's
    firewall ("LoadBalancer Service parameters"). A ClusterIP Service is in-cluster only: the port
    is open to the pods of the workload's own namespace. Kubelet probes are not affected: "traffic
    to and from the node where a Pod is running is always allowed" (kubernetes.io, "Network
    Policies", checked 2026-11-22).
    """
    rule: dict[str, Any] = {"ports": [{"protocol": "TCP", "port": target_port}]}
    sources = exposure.ingress_from()
    if sources is not None:
        rule["from"] = sources
    return [rule, *exposure.extra_ingress(site)]


def service_spec(args: LoadBalancerServiceArgs, exposure: Exposure) -> dict[str, Any]:
    """The Service's spec but a reserved address: its type, the gate's pods, the port, and what
    the exposure adds (a load balancer's source ranges and externalTrafficPolicy: Local,
    components/expose/base.py LoadBalanced)."""
    return {
        "type": exposure.service_type,
        "selector": args.selector,
        "ports": [
            {
                "name": "https" if args.tls else "http",
                "port": args.port,
                "targetPort": args.target_port,
                "protocol": "TCP",
                **exposure.port_extras(args.tls),
            }
        ],
        **exposure.spec_extras(args.source_ranges),
    }


class LoadBalancerService(pulumi.ComponentResource):
    """A workload's Service (LoadBalancer, Internal, ClusterIP or NodePort) and the NetworkPolicy
    that admits its serving port and nothing else."""

    external_ip: pulumi.Output[str | None]
    """The load balancer's IP (external or internal), once the cloud has assigned it."""
    reserved_address: pulumi.Output[str | None]
    """The reserved address (static_address), known before the Service: the certificate's IP."""
    url: pulumi.Output[str | None]
    """https://<address>[:port] (http:// with tls off); the cluster DNS name for ClusterIP; a
    NodePort description."""
    node_port: pulumi.Output[int | None]
    """The port every node serves the Service on (NodePort and LoadBalancer types)."""
    exposure: Exposure
    """How it is reached (its DNS records, for a Gateway)."""

    def __init__(
        self, name: str, args: LoadBalancerServiceArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        # An expose type the registry does not hold is refused before anything is registered.
        exposure = slices.exposure_for(args, args.name, args.endpoints)
        self.exposure = exposure
        super().__init__("gke-gpu:index:LoadBalancerService", name, None, opts)
        spec = service_spec(args, exposure)
        self.reserved_address = pulumi.Output.from_input(None)
        if args.static_address is not None and exposure.address_type is not None:
            address = self._reserve(name, exposure, args.static_address).address
            spec["loadBalancerIP"] = address
            self.reserved_address = address
        labels = {**args.selector, MANAGED_BY_LABEL: "pulumi", **args.labels}
        metadata: dict[str, Any] = {"name": args.name, "namespace": args.namespace}
        annotations = {"annotations": dict(exposure.annotations)} if exposure.annotations else {}
        service = k8s.core.v1.Service(
            f"{name}-service",
            metadata=manifest({**metadata, "labels": labels, **annotations}),
            spec=manifest(spec),
            opts=pulumi.ResourceOptions(
                parent=self,
                custom_timeouts=exposure.timeouts(),
            ),
        )
        # Only the gate's serving port reaches its pods; the namespace's default-deny policy
        # (WorkloadNamespace) turns everything else away.
        k8s.networking.v1.NetworkPolicy(
            f"{name}-netpol",
            metadata=manifest({**metadata, "name": f"{args.name}-ingress", "labels": labels}),
            spec=manifest(
                {
                    "podSelector": {"matchLabels": args.selector},
                    "policyTypes": ["Ingress"],
                    "ingress": network_policy_ingress(exposure, args.target_port, args.site),
                }
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        exposure.register(name, self, self._served(args), args.site)
        self._addresses(args, exposure, service)
        self.register_outputs(
            {
                "external_ip": self.external_ip,
                "reserved_address": self.reserved_address,
                "url": self.url,
                "node_port": self.node_port,
            }
        )

    @staticmethod
    def _served(args: LoadBalancerServiceArgs) -> Served:
        return Served(namespace=args.namespace, service=args.name, port=args.port, tls=args.tls)

    def _addresses(
        self, args: LoadBalancerServiceArgs, exposure: Exposure, service: k8s.core.v1.Service
    ) -> None:
        """Where the Service answers: node_port, and the exposure's external_ip and url."""
        self.node_port = service.spec.apply(
            lambda s: s.ports[0].node_port if s is not None and s.ports else None
        )
        self.external_ip, self.url = exposure.addresses(
            self._served(args), service.status, self.node_port
        )

    def _reserve(self, name: str, exposure: Exposure, where: StaticAddress) -> gcp.compute.Address:
        """A regional address the load balancer keeps across re-created Services.

        The address goes into spec.loadBalancerIP, which both of GKE's L4 controllers read: the
        cloud provider's (kubernetes/cloud-provider-gcp providers/gce/gce_loadbalancer_external.go
        line 110 and gce_loadbalancer_internal.go lines 1074-1075, commit 4e245312, checked
        2026-11-22) and ingress-gce's, which prefers the annotation
        networking.gke.io/load-balancer-ip-addresses and falls back to spec.loadBalancerIP
        (kubernetes/ingress-gce, address.IPv4ToUse). The annotation alone would be ignored by the
        cloud provider's controller, which still serves clusters without GKE subsetting.
        spec.loadBalancerIP is deprecated upstream since Kubernetes 1.24 but still in the 1.35 API.
        """
        return gcp.compute.Address(
            f"{name}-address",
            name=where.name,
            project=where.project,
            region=where.region,
            address_type=exposure.address_type,
            subnetwork=exposure.address_subnetwork(where.subnetwork),
            description="gke-gpu: the load balancer address of a workload (kept across re-creates)",
            opts=pulumi.ResourceOptions(parent=self, protect=where.protect),
        )
