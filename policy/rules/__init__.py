"""The gke-gpu policy rules as plain functions, shared by the CrossGuard pack, tests and tools."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .gateway import gateways_restricted_in_prod
from .pods import (
    PRIVILEGED_DAEMONSET_PREFIXES,
    SYSTEM_NAMESPACE,
    gpu_containers_set_gpu_limits,
    gpu_workloads_select_gpu_capacity,
    image_problem,
    no_latest_or_untagged_images,
    no_privileged_pods,
)
from .pools import gpu_node_pools_scale_to_zero
from .production import (
    BINAUTHZ_ENFORCE,
    SECURITY_POSTURE_ON,
    alerts_notify_someone_in_prod,
    binary_authorization_in_prod,
    control_plane_restricted_in_prod,
    dataplane_v2_in_prod,
    deletion_protection_in_prod,
    endpoints_use_tls_in_prod,
    load_balancers_restricted_in_prod,
    private_nodes_in_prod,
    production_marker_kept,
    secrets_encrypted_in_prod,
    security_posture_in_prod,
)
from .props import (
    ACCELERATOR_LABEL,
    GPU_RESOURCE,
    MIN_NODES_REASON_LABEL,
    PRODUCTION_CLUSTER_LABEL,
    PRODUCTION_ENV,
    PRODUCTION_LABEL,
    Context,
    every_pod,
    is_production,
    pod_spec,
)
from .ranges import MIN_PREFIX_IPV4, MIN_PREFIX_IPV6, source_range_problems

__all__ = [
    "ACCELERATOR_LABEL",
    "BINAUTHZ_ENFORCE",
    "GPU_RESOURCE",
    "MIN_NODES_REASON_LABEL",
    "MIN_PREFIX_IPV4",
    "MIN_PREFIX_IPV6",
    "PRIVILEGED_DAEMONSET_PREFIXES",
    "PRODUCTION_CLUSTER_LABEL",
    "PRODUCTION_CONFIG_SCHEMA",
    "PRODUCTION_ENV",
    "PRODUCTION_LABEL",
    "RULES",
    "SECURITY_POSTURE_ON",
    "SYSTEM_NAMESPACE",
    "Context",
    "Rule",
    "Violation",
    "evaluate",
    "image_problem",
    "is_production",
    "pack_config",
    "pod_spec",
    "source_range_problems",
    "stack_from_urn",
]

# This package imports nothing outside the standard library: the pack's own venv holds only
# pulumi-policy, and the tests and the offline plan tool call the rules without it.

Enforcement = Literal["mandatory", "advisory"]

# The pack config property each production rule takes. Pulumi's policy pack config holds one object
# per policy name, validated against that policy's configSchema, with the schema's defaults filled
# in (pulumi/pulumi@18817b60 pkg/resource/analyzer/config.go: parsePolicyPackConfig,
# ReconcilePolicyPackConfig), so a run without --policy-pack-config gets production: false.
PRODUCTION_CONFIG_SCHEMA: dict[str, dict[str, object]] = {
    "production": {
        "type": "boolean",
        "default": False,
        "description": f"The stack is production ({PRODUCTION_ENV}=true in its GitHub "
        "environment).",
    }
}


Check = Callable[[str, Mapping[str, Any], Context], list[str]]


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    enforcement: Enforcement
    check: Check
    production: bool = False
    """A production rule: it takes the pack config's `production` property (pack_config)."""


@dataclass(frozen=True)
class Violation:
    rule: str
    enforcement: Enforcement
    message: str


def stack_from_urn(urn: str) -> str:
    """The stack name in a URN ("urn:pulumi:prod::gke-gpu::type::name" -> "prod")."""
    head = urn.split("::", 1)[0]
    return head.split(":", 2)[2] if head.count(":") >= 2 else ""


RULES: tuple[Rule, ...] = (
    Rule(
        "gpu-containers-set-gpu-limits",
        "Containers that use GPUs set resources.limits[nvidia.com/gpu].",
        "mandatory",
        every_pod(gpu_containers_set_gpu_limits),
    ),
    Rule(
        "gpu-workloads-select-gpu-capacity",
        "Pods with a GPU limit select GPU nodes (nodeSelector or nodeAffinity).",
        "advisory",
        every_pod(gpu_workloads_select_gpu_capacity),
    ),
    Rule(
        "no-privileged-pods",
        "No privileged containers, privilege escalation, host namespaces, hostPath volumes, host "
        "ports, added capabilities (but NET_BIND_SERVICE) or root users, except the kube-system "
        "NVIDIA driver installer and device plugin DaemonSets.",
        "mandatory",
        every_pod(no_privileged_pods),
    ),
    Rule(
        "no-latest-or-untagged-images",
        "Every container image has a tag other than latest, or a digest.",
        "mandatory",
        every_pod(no_latest_or_untagged_images),
    ),
    Rule(
        "load-balancers-restricted-in-prod",
        "Public LoadBalancer Services of production stacks set loadBalancerSourceRanges, each at "
        "most a /16 (IPv4) or /48 (IPv6), together not every address.",
        "mandatory",
        load_balancers_restricted_in_prod,
        production=True,
    ),
    Rule(
        "gateways-restricted-in-prod",
        "The Gateways of production stacks (expose.domain) name a Cloud Armor policy in their "
        "GCPBackendPolicy, and production Cloud Armor policies allow only source ranges of at "
        "most a /16 (IPv4) or /48 (IPv6), together not every address, and deny the rest.",
        "mandatory",
        gateways_restricted_in_prod,
        production=True,
    ),
    Rule(
        "gpu-node-pools-scale-to-zero",
        "GPU node pools scale to zero, or say why they stay warm (gke-gpu-min-nodes-reason).",
        "advisory",
        gpu_node_pools_scale_to_zero,
    ),
    Rule(
        "endpoints-use-tls-in-prod",
        "Endpoints of production stacks serve HTTPS (no expose.tls: false).",
        "mandatory",
        endpoints_use_tls_in_prod,
        production=True,
    ),
    Rule(
        "deletion-protection-in-prod",
        "Production GKE clusters keep deletionProtection on.",
        "mandatory",
        deletion_protection_in_prod,
        production=True,
    ),
    Rule(
        "private-nodes-in-prod",
        "Production GKE clusters have private nodes (privateClusterConfig.enablePrivateNodes).",
        "mandatory",
        private_nodes_in_prod,
        production=True,
    ),
    Rule(
        "control-plane-restricted-in-prod",
        "Production GKE clusters list authorized networks, each at most a /16 (IPv4) or /48 "
        "(IPv6), and do not admit all Google Cloud public addresses.",
        "mandatory",
        control_plane_restricted_in_prod,
        production=True,
    ),
    Rule(
        "secrets-encrypted-in-prod",
        "Production GKE clusters encrypt Secrets with a Cloud KMS key (databaseEncryption).",
        "mandatory",
        secrets_encrypted_in_prod,
        production=True,
    ),
    Rule(
        "dataplane-v2-in-prod",
        "Production GKE Standard clusters run GKE Dataplane V2 (datapathProvider: "
        "ADVANCED_DATAPATH), which enforces the NetworkPolicies.",
        "mandatory",
        dataplane_v2_in_prod,
        production=True,
    ),
    Rule(
        "binary-authorization-in-prod",
        "Production GKE clusters enforce Binary Authorization.",
        "advisory",
        binary_authorization_in_prod,
        production=True,
    ),
    Rule(
        "security-posture-in-prod",
        "Production GKE clusters turn GKE's security posture on (BASIC or ENTERPRISE).",
        "advisory",
        security_posture_in_prod,
        production=True,
    ),
    Rule(
        "alerts-notify-someone-in-prod",
        "A production stack's alert policies name notification channels.",
        "advisory",
        alerts_notify_someone_in_prod,
        production=True,
    ),
    Rule(
        "production-marker-kept",
        f"Stacks production per {PRODUCTION_ENV} keep cluster.production: true in their stack "
        "file.",
        "mandatory",
        production_marker_kept,
        production=True,
    ),
)


def evaluate(
    resource_type: str, props: Mapping[str, Any], stack: str, production: bool = False
) -> list[Violation]:
    """Every rule's violations for one resource, in RULES order.

    `production`: what the pack config says (pack_config); the resource's own marker counts
    either way.
    """
    context = Context(stack, production)
    return [
        Violation(rule.name, rule.enforcement, message)
        for rule in RULES
        for message in rule.check(resource_type, props, context)
    ]


def pack_config(production: bool) -> dict[str, dict[str, object]]:
    """The policy pack config (`pulumi preview --policy-pack-config <file>`) of a stack.

    Pulumi's format: one object per policy name holding that policy's config properties
    (pulumi/pulumi pkg/resource/analyzer/config.go parsePolicyPackConfig at 18817b60). Every
    production rule gets `production`, which the pack hands to it (policy/__main__.py).
    """
    return {rule.name: {"production": production} for rule in RULES if rule.production}
