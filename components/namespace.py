"""WorkloadNamespace: the Kubernetes namespace the GPU workloads and their Services live in, closed
to inbound and outbound traffic except what each workload and gate admits."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components import egress
from components.manifest import manifest
from components.workload import selector_labels

# Pod Security "restricted" is enforced: every pod the program creates here (workloads, gates,
# and GKE's injected Cloud Storage FUSE sidecar, whose securityContext "follows Restricted Pod
# Security Standard": GoogleCloudPlatform/gcs-fuse-csi-driver pkg/webhook/sidecar_spec.go at
# 01870a9d) passes it; tests/test_posture.py checks each control on every shipped stack (Kubernetes
# Pod Security Admission labels, kubernetes.io/docs/concepts/security/pod-security-admission).
POD_SECURITY_LABELS = {
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/warn": "restricted",
    "pod-security.kubernetes.io/audit": "restricted",
}


@dataclass(frozen=True)
class WorkloadNamespaceArgs:
    name: str
    """The namespace's Kubernetes name (config key gke-gpu:namespace)."""
    protect: bool = False
    """Pulumi `protect`: deleting a namespace deletes everything in it, so a protected stack
    (cluster.deletionProtection) protects it too."""
    deny_ingress: bool = True
    """A default-deny ingress NetworkPolicy: nothing reaches the namespace's pods unless another
    policy admits it (each exposed workload's LoadBalancerService admits its serving port)."""
    deny_egress: bool = True
    """A default-deny egress NetworkPolicy and one admitting DNS for every pod; each workload and
    gate then admits what it needs (components/egress.py)."""
    scraped: tuple[tuple[str, int], ...] = ()
    """(workload, port) whose /metrics Managed Service for Prometheus scrapes (autoscale): the
    collectors in namespace gmp-system are admitted to that port."""


# Selects every pod of the namespace and admits nothing: "default deny all ingress traffic"
# (kubernetes.io/docs/concepts/services-networking/network-policies, checked 2026-11-22).
# Enforced by GKE Dataplane V2: on in Autopilot, turned on for Standard by GkeCluster.
DEFAULT_DENY_INGRESS = {"podSelector": {}, "policyTypes": ["Ingress"]}
# Managed Service for Prometheus runs its collectors in namespace gmp-system (GKE's managed
# collection: the gmp-system/collector service account, cloud.google.com/stackdriver/docs/
# managed-prometheus). Kubernetes labels every namespace with kubernetes.io/metadata.name, which
# "Targeting a Namespace by its name" in the NetworkPolicy docs selects on.
COLLECTOR_NAMESPACE = "gmp-system"


def scrape_ingress(port: int) -> list[dict[str, object]]:
    """The metrics port, from the Prometheus collectors' namespace only."""
    selector = {"matchLabels": {"kubernetes.io/metadata.name": COLLECTOR_NAMESPACE}}
    return [
        {"from": [{"namespaceSelector": selector}], "ports": [{"protocol": "TCP", "port": port}]}
    ]


class WorkloadNamespace(pulumi.ComponentResource):
    """The workloads' namespace, with Pod Security Admission labels and default-deny ingress and
    egress."""

    name: pulumi.Output[str]
    """The namespace's name; objects placed in it depend on the Namespace through this Output."""

    def __init__(
        self, name: str, args: WorkloadNamespaceArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:WorkloadNamespace", name, None, opts)
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=manifest({"name": args.name, "labels": dict(POD_SECURITY_LABELS)}),
            # Releases before this component registered the Namespace at the root as "namespace":
            # without the alias an upgrade of such a stack deletes it and everything in it.
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                aliases=[pulumi.Alias(name="namespace", parent=pulumi.ROOT_STACK_RESOURCE)],
            ),
        )
        if args.deny_ingress:
            k8s.networking.v1.NetworkPolicy(
                f"{name}-deny-ingress",
                # The Namespace's own name Output: created in it only once it exists.
                metadata=manifest(
                    {"name": "default-deny-ingress", "namespace": namespace.metadata.name}
                ),
                spec=manifest(dict(DEFAULT_DENY_INGRESS)),
                opts=pulumi.ResourceOptions(parent=self),
            )
        if args.deny_egress:
            k8s.networking.v1.NetworkPolicy(
                f"{name}-deny-egress",
                metadata=manifest(
                    {"name": "default-deny-egress", "namespace": namespace.metadata.name}
                ),
                spec=manifest(dict(egress.DEFAULT_DENY_EGRESS)),
                opts=pulumi.ResourceOptions(parent=self),
            )
            k8s.networking.v1.NetworkPolicy(
                f"{name}-allow-dns",
                metadata=manifest({"name": "allow-dns", "namespace": namespace.metadata.name}),
                spec=manifest(
                    {"podSelector": {}, "policyTypes": ["Egress"], "egress": egress.DNS_EGRESS}
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        for workload, port in args.scraped if args.deny_ingress else ():
            # An autoscaled workload's HPA scales on a metric the collectors scrape from its pods;
            # default deny would starve it (a ClusterIP or unexposed workload admits no one else).
            k8s.networking.v1.NetworkPolicy(
                f"{name}-scrape-{workload}",
                metadata=manifest(
                    {"name": f"{workload}-metrics-scrape", "namespace": namespace.metadata.name}
                ),
                spec=manifest(
                    {
                        "podSelector": {"matchLabels": selector_labels(workload)},
                        "policyTypes": ["Ingress"],
                        "ingress": scrape_ingress(port),
                    }
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.name = namespace.metadata.name
        self.register_outputs({"name": self.name})
