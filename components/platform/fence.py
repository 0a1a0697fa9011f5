"""Fences around a vendored controller: who may reach its pods, and what its account may do.

KEDA (keda_fence.py, issue 30 M4), Kueue (kueue_fence.py) and the LeaderWorkerSet controller
(lws_fence.py, issue 44 N3) each come from upstream's release manifests, unedited; the program
cuts their access as it registers them and closes their namespace to ingress except the doors
listed here. This module holds what the three share: the doors (`Door`, `door_spec`), the default
deny, the NetworkPolicies' registration in order, and the cut of a vendored RBAC rule (`capped`).

Egress is not fenced, as KEDA's is not: each controller calls the API server (an address a
NetworkPolicy can only name as a range that differs by cluster), and KEDA's operator calls the
sources its scalers read.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..manifest import manifest

# Selects every pod of the namespace and admits nothing: "default deny all ingress traffic"
# (kubernetes.io/docs/concepts/services-networking/network-policies, checked 2026-11-22): keda's,
# kueue-system's, lws-system's namespaces and the workloads' (namespace.py). Kubelet's probes still
# pass: traffic from the node a pod runs on is always allowed (same page).
DEFAULT_DENY_INGRESS: dict[str, Any] = {"podSelector": {}, "policyTypes": ["Ingress"]}

# The API server calls admission webhooks and aggregated API servers (KEDA's metrics server,
# Kueue's visibility server). A NetworkPolicy cannot name the API server, and on GKE its calls
# arrive from different sources: the control plane's range on clusters peered with it (Google's
# private-cluster firewall steps open webhook ports from master-ipv4-cidr: cloud.google.com/
# service-mesh/docs/private-cluster-open-port), or the konnectivity agents' pod addresses in
# kube-system where GKE proxies through them (a third-party report, tigera/operator#5212, merged
# 2026-08-18: "On AKS and GKE the apiserver proxies admission calls through those pods"; no Google
# page found saying so). A rule on either source would break on the other, and "every address but
# the pods'" breaks the second. So a port the API server calls admits any source, and only such a
# port: each serves TLS, an aggregated server authenticates its callers and asks the API server
# whether they may read (delegated authn/authz: the system:auth-delegator binding), and a webhook
# only answers admission reviews.
API_SERVER = None
# Managed Service for Prometheus' collector pods (namespace.py COLLECTOR_NAMESPACE,
# COLLECTOR_LABELS): the only metrics collector the stack runs. A controller's metrics port
# admits them and no one else.
COLLECTOR = "managed-prometheus-collector"


@dataclass(frozen=True)
class Door:
    """One way into a controller's namespace: the pods behind `service`, on the container port its
    port `port` forwards to (None: its only port), from `source`: API_SERVER (any address), the
    COLLECTOR, or the pods behind another Service of the namespace, by name."""

    name: str
    service: str
    port: str | None
    source: str | None


def selector(found: Sequence[dict[str, Any]], service: str) -> dict[str, str]:
    """The pods behind a vendored Service: its selector."""
    return dict(_service(found, service)["spec"]["selector"])


def _peers(found: Sequence[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    if source != COLLECTOR:
        return [{"podSelector": {"matchLabels": selector(found, source)}}]
    # Read where it is defined (namespace.py imports this module's DEFAULT_DENY_INGRESS).
    from .namespace import collector_peers

    return collector_peers()


def door_spec(found: Sequence[dict[str, Any]], door: Door) -> dict[str, Any]:
    """The NetworkPolicy spec of a door: its pods, its port, its source."""
    rule: dict[str, Any] = {"ports": [{"protocol": "TCP", "port": target_port(found, door)}]}
    if door.source is not None:  # API_SERVER: any address
        rule["from"] = _peers(found, door.source)
    return {
        "podSelector": {"matchLabels": selector(found, door.service)},
        "policyTypes": ["Ingress"],
        "ingress": [rule],
    }


def _service(found: Sequence[dict[str, Any]], name: str) -> dict[str, Any]:
    (service,) = [o for o in found if o["kind"] == "Service" and o["metadata"]["name"] == name]
    return service


def target_port(found: Sequence[dict[str, Any]], door: Door) -> int:
    """The container port the Service's port forwards to (a number, or a container port's name
    on the pods it selects)."""
    service = _service(found, door.service)
    ports = service["spec"]["ports"]
    (port,) = ports if door.port is None else [p for p in ports if p.get("name") == door.port]
    target = port.get("targetPort", port["port"])
    if isinstance(target, int):
        return target
    labels = service["spec"]["selector"]
    numbers = [
        p["containerPort"]
        for o in found
        if o["kind"] == "Deployment"
        and labels.items() <= o["spec"]["template"]["metadata"]["labels"].items()
        for c in o["spec"]["template"]["spec"]["containers"]
        for p in c.get("ports", [])
        if p.get("name") == target
    ]
    (number,) = numbers
    return number


def register_fence(
    parent: pulumi.Resource,
    prefix: str,
    namespace: str,
    doors: Sequence[tuple[str, dict[str, Any]]],
    after: Sequence[pulumi.Resource],
) -> pulumi.Resource:
    """The doors' NetworkPolicies (name, spec) in `namespace`, then its default deny: last in,
    first out, so the namespace never denies what its doors have not admitted yet. Returns the
    default deny."""
    opened = [
        k8s.networking.v1.NetworkPolicy(
            f"{prefix}-{name}",
            metadata=manifest({"name": name, "namespace": namespace}),
            spec=manifest(spec),
            opts=pulumi.ResourceOptions(parent=parent, depends_on=list(after)),
        )
        for name, spec in doors
    ]
    return k8s.networking.v1.NetworkPolicy(
        f"{prefix}-default-deny-ingress",
        metadata=manifest({"name": "default-deny-ingress", "namespace": namespace}),
        spec=manifest(DEFAULT_DENY_INGRESS),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[*after, *opened]),
    )


# --- RBAC ----------------------------------------------------------------------------------------

RBAC = "rbac.authorization.k8s.io/v1"
Caps = Mapping[tuple[str, str], Collection[str]]


def capped(rules: Sequence[dict[str, Any]], caps: Caps) -> tuple[list[dict[str, Any]], Caps]:
    """`rules` with the verbs on each (apiGroup, resource) in `caps` cut to those (the resource
    dropped where none remain), and what was cut: (apiGroup, resource) -> verbs. A rule is split
    where its resources' verbs now differ; a rule with a wildcard is refused (no cut bounds it)."""
    kept: list[dict[str, Any]] = []
    cut: dict[tuple[str, str], list[str]] = {}
    for rule in rules:
        if "nonResourceURLs" in rule:
            kept.append(rule)
            continue
        groups, verbs = rule.get("apiGroups", []), rule["verbs"]
        if "*" in groups or "*" in verbs or any("*" in r for r in rule.get("resources", [])):
            raise ValueError(f"vendored rule has a wildcard the program does not cut: {rule}")
        split: dict[tuple[str, ...], list[str]] = {}
        for resource in rule.get("resources", []):
            allowed = [v for v in verbs if all(v in caps.get((g, resource), verbs) for g in groups)]
            for group in groups:
                lost = cut.setdefault((group, resource), [])
                lost += [v for v in verbs if v not in allowed and v not in lost]
            if allowed:
                split.setdefault(tuple(allowed), []).append(resource)
        kept += [{**rule, "resources": names, "verbs": list(v)} for v, names in split.items()]
    return kept, {k: tuple(v) for k, v in cut.items() if v}


def rules_for(cut: Caps) -> list[dict[str, Any]]:
    """Rules granting exactly `cut`: (apiGroup, resource) -> verbs, one rule each."""
    return [
        {"apiGroups": [group], "resources": [resource], "verbs": list(verbs)}
        for (group, resource), verbs in cut.items()
    ]


def named(group: str, resource: str, names: Iterable[str], verbs: Iterable[str]) -> dict[str, Any]:
    """A rule on the objects called `names` only (RBAC's resourceNames). Kubernetes cannot scope
    list and watch to a name (kubernetes.io/docs/reference/access-authn-authz/rbac, "Referring to
    resources"), so an informer keeps those on the kind."""
    return {
        "apiGroups": [group],
        "resources": [resource],
        "resourceNames": list(names),
        "verbs": list(verbs),
    }


def namespaced_role(
    name: str, namespace: str, rules: list[dict[str, Any]], account: tuple[str, str]
) -> Iterator[dict[str, Any]]:
    """A Role in `namespace` and its RoleBinding to the service account (namespace, name)."""
    meta = {"name": name, "namespace": namespace}
    yield {"apiVersion": RBAC, "kind": "Role", "metadata": meta, "rules": rules}
    yield {
        "apiVersion": RBAC,
        "kind": "RoleBinding",
        "metadata": dict(meta),
        "roleRef": {"apiGroup": RBAC.split("/")[0], "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "namespace": account[0], "name": account[1]}],
    }
