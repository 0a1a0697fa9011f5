"""LoadBalancerService: exposes a workload's port (external or internal load balancer, in-cluster
only, or a NodePort), admits only that port with a NetworkPolicy, and reports its address."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.config.rules.exposure import LOAD_BALANCED
from components.config.schema import ExposeType
from components.facts.labels import INTERNAL_LB_ANNOTATION, MANAGED_BY_LABEL
from components.manifest import manifest

# A LoadBalancer on GKE takes a few minutes to get an address; Pulumi waits for it.
ADDRESS_TIMEOUT = "20m"

# GKE's internal passthrough Network Load Balancer: the Service annotation GKE documents for "all
# supported versions" ("LoadBalancer Service parameters",
# https://cloud.google.com/kubernetes-engine/docs/concepts/service-load-balancer-parameters,
# checked 2026-11-22). The same page recommends spec.loadBalancerClass
# networking.gke.io/l4-regional-internal only from GKE 1.33.1-gke.1779000 with GKE subsetting,
# and that field is immutable; the annotation works on every cluster version.
INTERNAL_ANNOTATION = {INTERNAL_LB_ANNOTATION: "Internal"}
# Address types of a reserved regional address (gcp.compute.Address.address_type).
ADDRESS_TYPES: dict[str, str] = {"LoadBalancer": "EXTERNAL", "Internal": "INTERNAL"}


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


DEFAULT_PORTS = {"https": 443, "http": 80}


def url_for(address: str | None, port: int, tls: bool = True) -> str | None:
    if not address:
        return None
    scheme = "https" if tls else "http"
    host = f"[{address}]" if ":" in address else address
    return f"{scheme}://{host}" if port == DEFAULT_PORTS[scheme] else f"{scheme}://{host}:{port}"


def in_cluster_url(service: str, namespace: str, port: int, tls: bool = True) -> str:
    """How pods reach a ClusterIP Service: its cluster DNS name (Kubernetes "DNS for Services and
    Pods": <service>.<namespace>.svc.cluster.local)."""
    return url_for(f"{service}.{namespace}.svc.cluster.local", port, tls) or ""


def first_ingress(status: Any) -> str | None:
    """The LoadBalancer's IP, or its hostname where the implementation gives one instead."""
    ingress = (getattr(getattr(status, "load_balancer", None), "ingress", None) or [None])[0]
    if ingress is None:
        return None
    return getattr(ingress, "ip", None) or getattr(ingress, "hostname", None)


def node_port_endpoint(namespace: str, service: str, node_port: int | None = None) -> str:
    """How to reach a NodePort Service: no address is known, any node's address serves it."""
    if node_port is not None:
        return f"NodePort {node_port} on any node's address"
    return (
        "the NodePort assigned by the cluster, on any node's address "
        f"(`kubectl -n {namespace} get service {service}` shows it)"
    )


def static_address_name(cluster: str, workload: str) -> str:
    """A Compute Engine address name (1-63 lowercase letters, digits, '-') for a workload's load
    balancer: unique per cluster and workload, shortened with a hash when too long."""
    name = f"{cluster}-{workload}"
    if len(name) <= 63:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:54].rstrip('-')}-{digest}"


def network_policy_ingress(type_: ExposeType, target_port: int) -> list[dict[str, Any]]:
    """The one ingress rule of an exposed workload: its serving port, from where it is served.

    A load balancer (external or internal) or a NodePort delivers traffic from outside the cluster,
    so the port is open to any source; GKE enforces loadBalancerSourceRanges at the load balancer's
    firewall ("LoadBalancer Service parameters"). A ClusterIP Service is in-cluster only: the port
    is open to the pods of the workload's own namespace. Kubelet probes are not affected: "traffic
    to and from the node where a Pod is running is always allowed" (kubernetes.io, "Network
    Policies", checked 2026-11-22).
    """
    rule: dict[str, Any] = {"ports": [{"protocol": "TCP", "port": target_port}]}
    if type_ == "ClusterIP":
        rule["from"] = [{"podSelector": {}}]
    return [rule]


def service_spec(args: LoadBalancerServiceArgs) -> dict[str, Any]:
    """The Service's spec but a reserved address: type, the gate's pods, the port, the sources.

    A load balancer delivers to the nodes that run a gate pod only, without a second hop that
    would replace the client's address with a node's: `externalTrafficPolicy: Local` "preserves
    the client source IP and avoids a second hop" (kubernetes.io/docs/tasks/
    access-application-cluster/create-external-load-balancer, "Preserving the client source IP"),
    and GKE's passthrough load balancers then health-check each node on the Service's
    healthCheckNodePort, sending only to nodes with a ready pod (cloud.google.com/
    kubernetes-engine/docs/concepts/service-load-balancer, "External traffic policy"). The gate
    thus sees each client's address, which its per-source limit on wrong keys counts
    (haproxy_limits.py). Its two pods are spread over nodes (gate.py), so two nodes serve, and a
    drain moves traffic to the other as the pod's readiness drops.
    """
    load_balanced = args.type in LOAD_BALANCED
    spec: dict[str, Any] = {
        # GKE makes an internal load balancer from a LoadBalancer Service with the annotation.
        "type": "LoadBalancer" if load_balanced else args.type,
        "selector": args.selector,
        "ports": [
            {
                "name": "https" if args.tls else "http",
                "port": args.port,
                "targetPort": args.target_port,
                "protocol": "TCP",
            }
        ],
    }
    if args.source_ranges and load_balanced:
        spec["loadBalancerSourceRanges"] = list(args.source_ranges)
    if load_balanced:
        spec["externalTrafficPolicy"] = "Local"
    return spec


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

    def __init__(
        self, name: str, args: LoadBalancerServiceArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:LoadBalancerService", name, None, opts)
        load_balanced = args.type in LOAD_BALANCED
        spec = service_spec(args)
        self.reserved_address = pulumi.Output.from_input(None)
        if args.static_address is not None and load_balanced:
            address = self._reserve(name, args.type, args.static_address).address
            spec["loadBalancerIP"] = address
            self.reserved_address = address
        labels = {**args.selector, MANAGED_BY_LABEL: "pulumi", **args.labels}
        metadata: dict[str, Any] = {"name": args.name, "namespace": args.namespace}
        annotations = {"annotations": dict(INTERNAL_ANNOTATION)} if args.type == "Internal" else {}
        service = k8s.core.v1.Service(
            f"{name}-service",
            metadata=manifest({**metadata, "labels": labels, **annotations}),
            spec=manifest(spec),
            opts=pulumi.ResourceOptions(
                parent=self,
                custom_timeouts=(
                    pulumi.CustomTimeouts(create=ADDRESS_TIMEOUT) if load_balanced else None
                ),
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
                    "ingress": network_policy_ingress(args.type, args.target_port),
                }
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self._addresses(args, service)
        self.register_outputs(
            {
                "external_ip": self.external_ip,
                "reserved_address": self.reserved_address,
                "url": self.url,
                "node_port": self.node_port,
            }
        )

    def _addresses(self, args: LoadBalancerServiceArgs, service: k8s.core.v1.Service) -> None:
        """Where the Service answers: node_port, external_ip and url, by Service type."""
        port, tls = args.port, args.tls
        self.node_port = service.spec.apply(
            lambda s: s.ports[0].node_port if s is not None and s.ports else None
        )
        if args.type in LOAD_BALANCED:
            self.external_ip = service.status.apply(first_ingress)
            self.url = self.external_ip.apply(lambda address: url_for(address, port, tls))
        elif args.type == "ClusterIP":
            self.external_ip = pulumi.Output.from_input(None)
            self.url = pulumi.Output.from_input(args.namespace).apply(
                lambda ns, svc=args.name: in_cluster_url(svc, ns, port, tls)
            )
        else:
            self.external_ip = pulumi.Output.from_input(None)
            self.url = pulumi.Output.all(args.namespace, self.node_port).apply(
                lambda v, svc=args.name: node_port_endpoint(v[0], svc, v[1])
            )

    def _reserve(self, name: str, type_: ExposeType, where: StaticAddress) -> gcp.compute.Address:
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
        internal = type_ == "Internal"
        return gcp.compute.Address(
            f"{name}-address",
            name=where.name,
            project=where.project,
            region=where.region,
            address_type=ADDRESS_TYPES[type_],
            subnetwork=where.subnetwork if internal else None,
            description="gke-gpu: the load balancer address of a workload (kept across re-creates)",
            opts=pulumi.ResourceOptions(parent=self, protect=where.protect),
        )
