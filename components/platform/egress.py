"""Egress NetworkPolicy rules for the workload namespace: deny by default, then DNS for every pod
and, per pod kind, only what it needs. Pure functions; the components register the policies.

Enforcement needs a NetworkPolicy implementation: GKE Dataplane V2 (always on in Autopilot,
`cluster.dataplaneV2` in Standard, on by default). On an existing cluster whose network plugin
ignores NetworkPolicy these objects are accepted and do nothing.

A NetworkPolicy selects destinations by address and labels only, never by host name
(kubernetes.io/docs/concepts/services-networking/network-policies). GKE's FQDNNetworkPolicy does
name hosts, but needs GKE Dataplane V2, GKE 1.26.4-gke.500 or later, GKE Enterprise and kube-dns or
Cloud DNS ("Control Pod egress traffic using FQDN network policies",
cloud.google.com/kubernetes-engine/docs/how-to/fqdn-network-policies, checked 2026-11-23), so it
cannot serve every cluster mode here; the Hugging Face Hub and Cloud Storage are therefore
"HTTPS to public addresses" (INTERNET_EXCEPT keeps the cluster, the VPC and the metadata
server out).
"""

from __future__ import annotations

from typing import Any

from ..config.model import Egress
from ..facts.labels import NAMESPACE_NAME_LABEL
from . import keda

# Selects every pod of the namespace and allows no egress: "default deny all egress traffic"
# (kubernetes.io, "Network Policies").
DEFAULT_DENY_EGRESS: dict[str, Any] = {"podSelector": {}, "policyTypes": ["Egress"]}

# DNS on port 53, to any destination. Where a pod's resolver is depends on the cluster: kube-dns
# (or kubeadm's CoreDNS, labelled k8s-app: kube-dns) in kube-system; NodeLocal DNSCache on the
# node (on by default in Autopilot and in Standard from 1.33.1: GKE "Set up NodeLocal DNSCache");
# Cloud DNS for GKE through the node's metadata server, to which NodeLocal DNSCache forwards
# names outside the cluster (same page). Naming one of them breaks the others, and restricting the
# destination buys nothing: the cluster's resolver recurses to the internet for any name anyway.
# The same rule as ahmetb/kubernetes-network-policy-recipes 14-deny-external-egress-traffic.md.
DNS_EGRESS: list[dict[str, Any]] = [
    {"ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}
]

# Public addresses only: everything but the private (RFC 1918), shared (RFC 6598, which GKE
# accepts for pod and Service ranges) and link-local (RFC 3927, the metadata server's
# 169.254.169.254) ranges, so "the internet" reaches neither the cluster, the VPC nor the node's
# credentials.
INTERNET_EXCEPT = (
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",
    "169.254.0.0/16",
)
HTTPS = 443

# The GKE metadata server, from which Workload Identity tokens come (vLLM's streamer, the FUSE
# sidecar): "If you have a strict cluster network policy in place, you must allow egress to the
# following IP addresses and port numbers so your Pod can communicate with the GKE metadata server.
# Allow egress to 169.254.169.252/32 on port 988. For clusters running GKE Dataplane V2, ensure
# that you allowed egress to 169.254.169.254/32 on port 80." (Google, "About Workload Identity
# Federation for GKE", docs.cloud.google.com/kubernetes-engine/docs/concepts/workload-identity,
# "GKE metadata server"; read from a stored copy, 2026-11-29). Exactly those two, nothing more.
METADATA_SERVER: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("169.254.169.254/32", (80,)),
    ("169.254.169.252/32", (988,)),
)


def internet_rule() -> dict[str, Any]:
    return {
        "to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": list(INTERNET_EXCEPT)}}],
        "ports": [{"protocol": "TCP", "port": HTTPS}],
    }


def metadata_rules() -> list[dict[str, Any]]:
    return [
        {
            "to": [{"ipBlock": {"cidr": cidr}}],
            "ports": [{"protocol": "TCP", "port": port} for port in ports],
        }
        for cidr, ports in METADATA_SERVER
    ]


def workload_egress(egress: Egress) -> list[dict[str, Any]]:
    """A workload's own egress rules beyond DNS; empty means it reaches nothing else."""
    rules: list[dict[str, Any]] = []
    if egress.internet:
        rules.append(internet_rule())
    if egress.metadata_server:
        rules += metadata_rules()
    if egress.spec.destination_ranges:
        # Any port: the user named the destination, not the protocol.
        rules.append({"to": [{"ipBlock": {"cidr": c}} for c in egress.spec.destination_ranges]})
    return rules


def gate_egress(model_selector: dict[str, str], model_port: int) -> list[dict[str, Any]]:
    """The gate forwards to the model's pods, on the model's port only. It dials the model's
    ClusterIP Service; the policy sees the pod address behind it ("GKE translates the Service
    virtual IP address (VIP) to backend Pod IP addresses before evaluating network policy
    rules", GKE FQDN network policies page, limitations)."""
    return [
        {
            "to": [{"podSelector": {"matchLabels": dict(model_selector)}}],
            "ports": [{"protocol": "TCP", "port": model_port}],
        }
    ]


def interceptor_peer() -> dict[str, Any]:
    """KEDA's interceptor pods, in the namespace KEDA is installed in (components/platform/
    keda.py); namespaces carry kubernetes.io/metadata.name (Kubernetes sets it on every one)."""
    return {
        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: keda.NAMESPACE}},
        "podSelector": {"matchLabels": dict(keda.INTERCEPTOR_LABELS)},
    }


def interceptor_egress() -> list[dict[str, Any]]:
    """A sleeping model's gate forwards to KEDA's interceptor (its proxy port), which holds the
    request until a replica is ready and forwards it to the model's Service."""
    return [
        {
            "to": [interceptor_peer()],
            "ports": [{"protocol": "TCP", "port": keda.INTERCEPTOR_PORT}],
        }
    ]


def egress_policy_spec(selector: dict[str, str], rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "podSelector": {"matchLabels": dict(selector)},
        "policyTypes": ["Egress"],
        "egress": rules,
    }
