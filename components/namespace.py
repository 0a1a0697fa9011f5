"""WorkloadNamespace: the Kubernetes namespace the GPU workloads and their Services live in."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.manifest import manifest

# GPU pods here run in a restricted sandbox; baseline is enforced so that images that insist on
# root still start, and restricted violations are reported (Kubernetes Pod Security Admission
# labels, kubernetes.io/docs/concepts/security/pod-security-admission).
POD_SECURITY_LABELS = {
    "pod-security.kubernetes.io/enforce": "baseline",
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


class WorkloadNamespace(pulumi.ComponentResource):
    """The workloads' namespace, with Pod Security Admission labels."""

    name: pulumi.Output[str]
    """The namespace's name; objects placed in it depend on the Namespace through this Output."""

    def __init__(
        self, name: str, args: WorkloadNamespaceArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:WorkloadNamespace", name, None, opts)
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=manifest({"name": args.name, "labels": dict(POD_SECURITY_LABELS)}),
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )
        self.name = namespace.metadata.name
        self.register_outputs({"name": self.name})
