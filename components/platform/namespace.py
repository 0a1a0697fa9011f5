"""WorkloadNamespace: the Kubernetes namespace the GPU workloads and their Services live in, closed
to inbound and outbound traffic except what each workload and gate admits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..config.rules import names
from ..facts.labels import (
    APP_NAME_LABEL,
    NAMESPACE_NAME_LABEL,
    POD_SECURITY_AUDIT_LABEL,
    POD_SECURITY_ENFORCE_LABEL,
    POD_SECURITY_WARN_LABEL,
    selector_labels,
)
from ..manifest import manifest
from . import egress
from .keda_fence import DEFAULT_DENY_INGRESS

# Pod Security "restricted" is enforced: every pod the program creates here (workloads, gates,
# and GKE's injected Cloud Storage FUSE sidecar, whose securityContext "follows Restricted Pod
# Security Standard": GoogleCloudPlatform/gcs-fuse-csi-driver pkg/webhook/sidecar_spec.go at
# 01870a9d) passes it; tests/test_posture.py checks each control on every shipped stack (Kubernetes
# Pod Security Admission labels, kubernetes.io/docs/concepts/security/pod-security-admission).
POD_SECURITY_LABELS = {
    POD_SECURITY_ENFORCE_LABEL: "restricted",
    POD_SECURITY_WARN_LABEL: "restricted",
    POD_SECURITY_AUDIT_LABEL: "restricted",
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
    gate then admits what it needs (components/platform/egress.py)."""
    scraped: tuple[tuple[str, int], ...] = ()
    """(workload, port) whose /metrics Managed Service for Prometheus scrapes (autoscale): the
    collector pods of namespace gmp-system are admitted to that port (all of it: see
    scrape_ingress)."""


# Managed Service for Prometheus runs its collectors in namespace gmp-system (GKE's managed
# collection: the gmp-system/collector service account, cloud.google.com/stackdriver/docs/
# managed-prometheus), selected by its name (NAMESPACE_NAME_LABEL), as pods of the DaemonSet
# `collector` labelled app.kubernetes.io/name: collector: its selector, which the chart marks
# "DO NOT MODIFY - label selectors are immutable" (GoogleCloudPlatform/prometheus-engine@15c6f724
# charts/operator/templates/collector.yaml; @21ebe0f9 _helpers.tpl
# "prometheus-engine.collector.selectorLabels"), and the label Google's own PodMonitoring of the
# collectors selects (cloud.google.com/stackdriver/docs/managed-prometheus/exporters/prometheus).
# The rule-evaluator, the operator and anything else in gmp-system are not admitted.
COLLECTOR_NAMESPACE = "gmp-system"
COLLECTOR_LABELS = {APP_NAME_LABEL: "collector"}
# On Autopilot Google runs Managed Service for Prometheus in its own managed namespace,
# gke-gmp-system, not gmp-system (issue 45: GoogleCloudPlatform/ai-on-gke at cf87c749, as the
# review cites it): a policy admitting only gmp-system starved every Autopilot stack's metrics
# (the error alert never fired, the dashboard's model tiles stayed empty). Autopilot refuses to
# create or change anything in its managed namespaces ("GKE Warden authz [denied by
# managed-namespaces-limitation]" for kube-system, gke-gmp-system, gke-managed-*), so any pod
# there is Google's: the namespace is admitted whole, because the collectors' pod labels there
# are not confirmed here. Admitted in both modes: on Standard the namespace holds no collector
# (gmp-system does), and a pod there needs rights in a GKE-reserved namespace.
AUTOPILOT_COLLECTOR_NAMESPACE = "gke-gmp-system"


def collector_peers() -> list[dict[str, object]]:
    """NetworkPolicy peers for Managed Prometheus' collectors: gmp-system's collector pods
    (Standard), and GKE's managed gke-gmp-system (Autopilot)."""
    return [
        {
            "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: COLLECTOR_NAMESPACE}},
            "podSelector": {"matchLabels": dict(COLLECTOR_LABELS)},
        },
        {
            "namespaceSelector": {
                "matchLabels": {NAMESPACE_NAME_LABEL: AUTOPILOT_COLLECTOR_NAMESPACE}
            }
        },
    ]


# Every pod of the namespace may resolve names (components/platform/egress.py DNS_EGRESS).
ALLOW_DNS = {"podSelector": {}, "policyTypes": ["Egress"], "egress": egress.DNS_EGRESS}


def scrape_ingress(port: int) -> list[dict[str, object]]:
    """The server's port, from Managed Prometheus' collector pods only (namespace AND pod labels
    in one peer). A NetworkPolicy cannot filter paths: the collectors reach the whole port, which
    serves vLLM's API as well as /metrics (vLLM mounts /metrics on the API's own app,
    vllm-project/vllm@02a69ad2 vllm/entrypoints/serve/instrumentator/metrics.py attach_router)."""
    return [{"from": collector_peers(), "ports": [{"protocol": "TCP", "port": port}]}]


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
        if args.deny_ingress:  # GKE Dataplane V2 enforces it: Autopilot, Standard by GkeCluster
            self._policy(
                name, "deny-ingress", namespace, names.DENY_INGRESS_POLICY, DEFAULT_DENY_INGRESS
            )
        if args.deny_egress:
            self._policy(
                name, "deny-egress", namespace, names.DENY_EGRESS_POLICY, egress.DEFAULT_DENY_EGRESS
            )
            self._policy(name, "allow-dns", namespace, names.ALLOW_DNS_POLICY, ALLOW_DNS)
        for workload, port in args.scraped if args.deny_ingress else ():
            # An autoscaled workload's HPA scales on a metric the collectors scrape from its pods;
            # default deny would starve it (a ClusterIP or unexposed workload admits no one else).
            self._policy(
                name,
                f"scrape-{workload}",
                namespace,
                f"{workload}-metrics-scrape",
                {
                    "podSelector": {"matchLabels": selector_labels(workload)},
                    "policyTypes": ["Ingress"],
                    "ingress": scrape_ingress(port),
                },
            )
        self.name = namespace.metadata.name
        self.register_outputs({"name": self.name})

    def _policy(
        self,
        name: str,
        suffix: str,
        namespace: k8s.core.v1.Namespace,
        policy: str,
        spec: dict[str, Any],
    ) -> None:
        """A NetworkPolicy in the namespace; created in it only once it exists (the Namespace's
        own name Output)."""
        k8s.networking.v1.NetworkPolicy(
            f"{name}-{suffix}",
            metadata=manifest({"name": policy, "namespace": namespace.metadata.name}),
            spec=manifest(dict(spec)),
            opts=pulumi.ResourceOptions(parent=self),
        )
