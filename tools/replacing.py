"""Which inputs replace a resource when they change: the providers' ForceNew fields.

A replacement deletes the running thing (a cluster, a reserved address, a generated key) even when
its URN is kept. The golden-URN check (tests/golden.py) and the plan's diff against an earlier
plan (tools/plan_diff.py, `python -m tools.render STACK --against OLD/plan.json`) read the same
tables, so what one calls a replacement the other does too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

# Google Cloud: ForceNew in terraform-provider-google (services/container/resource_container_
# {cluster,node_pool}.go, services/compute/resource_compute_{address,router,router_nat}.go at the
# mirror's HEAD, 2026-11-23); IAM members are immutable bindings (every input).
GCP_FORCE_NEW = {
    "gcp:container/cluster:Cluster": (
        "name project location network subnetwork ipAllocationPolicy enableAutopilot "
        "datapathProvider initialNodeCount"
    ),
    "gcp:container/nodePool:NodePool": "name project location cluster initialNodeCount "
    "placementPolicy",
    "gcp:compute/address:Address": "name project region address addressType subnetwork "
    "network purpose networkTier ipVersion prefixLength",
    "gcp:compute/router:Router": "name project region network",
    "gcp:compute/routerNat:RouterNat": "name project region router type endpointTypes "
    "initialNatIps",
    "gcp:serviceaccount/account:Account": "accountId project",
    # services/servicemanagement/resource_endpoints_service.go at 069a33d4: service_name and
    # project are ForceNew (read). The certificate's domains and the map entry's hostname are
    # taken as replacing too (a managed certificate is issued for its names; not read here).
    "gcp:endpoints/service:Service": "serviceName project",
    "gcp:certificatemanager/certificate:Certificate": "name project location managed.domains",
    "gcp:certificatemanager/certificateMapEntry:CertificateMapEntry": "name project map hostname",
}
GCP_DEFAULT = "name project location region"
# Kubernetes: pulumi-kubernetes provider/pkg/provider/diff.go forceNewProperties (commit
# 94977969): metadata.name and .namespace always, and per kind (Secrets and ConfigMaps are
# immutable by default: enableSecretMutable / enableConfigMapMutable are off).
K8S_FORCE_NEW = {
    "kubernetes:apps/v1:Deployment": "spec.selector",
    "kubernetes:apps/v1:DaemonSet": "spec.selector",
    "kubernetes:apps/v1:StatefulSet": "spec.podManagementPolicy spec.revisionHistoryLimit "
    "spec.selector spec.serviceName spec.volumeClaimTemplates",
    "kubernetes:batch/v1:Job": "spec.completions spec.parallelism spec.selector spec.template",
    "kubernetes:core/v1:Secret": "type stringData data",
    "kubernetes:core/v1:ConfigMap": "binaryData data",
    "kubernetes:core/v1:Service": "spec.clusterIP",
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": "roleRef",
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": "roleRef",
    # A new cluster identifier replaces the provider and everything deployed through it.
    "pulumi:providers:kubernetes": "clusterIdentifier",
}
K8S_ALWAYS = ("metadata.name", "metadata.namespace")
# Providers whose every input forces a new resource (nothing of theirs updates in place).
EVERY_INPUT = ("random:", "tls:")


class Registered(Protocol):
    """What the tables need of a resource: a Registration, or a plan.json entry read back."""

    @property
    def type(self) -> str: ...
    @property
    def custom(self) -> bool: ...
    @property
    def inputs(self) -> dict[str, Any]: ...
    @property
    def ignore_changes(self) -> list[str]: ...


def field(inputs: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted input path (None when absent)."""
    value: Any = inputs
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def force_new(type_token: str, inputs: Mapping[str, Any], custom: bool) -> list[str] | None:
    """The input paths whose change replaces a resource of this type (None: a component, which
    nothing replaces)."""
    if type_token.startswith("gcp:"):
        if "iam" in type_token.lower():
            return sorted(inputs)
        return GCP_FORCE_NEW.get(type_token, GCP_DEFAULT).split()
    if type_token.startswith(EVERY_INPUT):
        return sorted(inputs)
    if type_token in K8S_FORCE_NEW or (type_token.startswith("kubernetes:") and custom):
        return [*K8S_ALWAYS, *K8S_FORCE_NEW.get(type_token, "").split()]
    return None


def forcing(paths: Sequence[str], fields: Sequence[str]) -> list[str]:
    """The replacement-forcing fields a set of changed input paths touches: a changed path inside
    a field (spec.selector.matchLabels in spec.selector) or around one (spec, which holds it)."""
    return [
        f
        for f in fields
        if any(p == f or p.startswith(f + ".") or f.startswith(p + ".") for p in paths)
    ]


def physical_name(r: Registered) -> str | None:
    """What the provider replaces the resource over: its name and every replacement-forcing
    input, as JSON (None for components, which the engine keeps by URN only). Inputs the
    resource ignores (ignoreChanges) never reach the provider's diff."""
    fields = force_new(r.type, r.inputs, r.custom)
    if fields is None:
        return None
    kept = [f for f in fields if f not in r.ignore_changes]
    return json.dumps({f: field(r.inputs, f) for f in kept if field(r.inputs, f) is not None})
