"""The Google Cloud roles the deploy identity needs for what a stack registers."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from tools.engine import Recording, Registration

# Which predefined role holds which permission:
# iann0036/iam-dataset@2073fa52ac008a45477aa0b1b4580cd99135bf60:gcp/roles/<role>.json (a dump
# of Google Cloud's predefined roles, 2026-08-22); which permission
# an API method checks: the same commit, gcp/map.json (e.g. a node pool is created by
# container.projects.locations.clusters.nodePools.create, which checks container.clusters.update).
CONTAINER_ADMIN = "roles/container.admin"
"""Clusters and node pools, and the whole Kubernetes API (container.*): container.clusterAdmin
has no Kubernetes object, so the Kubernetes provider would be refused with it."""
NETWORK_ADMIN = "roles/compute.networkAdmin"
PROJECT_IAM_ADMIN = "roles/resourcemanager.projectIamAdmin"
SERVICE_ACCOUNT_ADMIN = "roles/iam.serviceAccountAdmin"
SERVICE_ACCOUNT_USER = "roles/iam.serviceAccountUser"
"""The only predefined role with iam.serviceAccounts.actAs and nothing else to speak of: GKE asks
for it on a user-managed node account (https://cloud.google.com/iam/docs/roles-permissions/
container, Kubernetes Engine Admin); container.admin does not contain actAs."""
STORAGE_ADMIN = "roles/storage.admin"
REGISTRY_ADMIN = "roles/artifactregistry.admin"
"""artifactregistry.repoAdmin lacks artifactregistry.repositories.setIamPolicy."""
UNKNOWN = "unknown"
"""The role of a Need this module has no row for: a test fails on it, CI would get a 403."""

# Types that reach no Google Cloud API: computed locally (random, tls) or engine plumbing.
LOCAL_PACKAGES = ("random", "tls")


@dataclass(frozen=True, order=True)
class Need:
    """A permission the deploy identity must hold, through `role`, on `scope`."""

    role: str
    scope: str
    """What the grant is on: `project P`, `bucket B`, `repository L-docker.pkg.dev/P/R`,
    `service account E`."""
    permission: str
    resources: tuple[str, ...]
    """The registered resources (or invokes) that need it."""
    why: tuple[str, ...] = ()
    grants: tuple[str, ...] = ()
    """For an IAM binding: the roles it grants (what a condition on `role` must allow)."""


def _project(inputs: Mapping[str, Any]) -> str:
    return f"project {inputs.get('project') or inputs.get('projectId') or 'of the provider'}"


def _bucket(inputs: Mapping[str, Any]) -> str:
    return f"bucket {inputs['bucket']}"


def _repository(inputs: Mapping[str, Any]) -> str:
    # The repository's address (Artifact Registry's "LOCATION-docker.pkg.dev/PROJECT/REPOSITORY").
    return (
        f"repository {inputs['location']}-docker.pkg.dev/{inputs['project']}/{inputs['repository']}"
    )


def _bound_account(inputs: Mapping[str, Any]) -> str:
    # serviceAccountId is projects/P/serviceAccounts/EMAIL.
    return f"service account {str(inputs['serviceAccountId']).rsplit('/', 1)[-1]}"


@dataclass(frozen=True)
class Row:
    """What creating one resource type (or calling one invoke) asks of the caller."""

    permissions: tuple[str, ...]
    role: str
    scope: Callable[[Mapping[str, Any]], str]
    why: str
    binds: bool = False
    """An IAM binding: its `role` input is what it grants."""
    pick: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None
    """Which of `permissions` a resource's inputs ask for, when not all of them."""


RESOURCES: dict[str, Row] = {
    "gcp:container/cluster:Cluster": Row(
        ("container.clusters.create",), CONTAINER_ADMIN, _project, "clusters"
    ),
    "gcp:container/nodePool:NodePool": Row(
        ("container.clusters.update",), CONTAINER_ADMIN, _project, "node pools"
    ),
    "gcp:serviceaccount/account:Account": Row(
        ("iam.serviceAccounts.create",), SERVICE_ACCOUNT_ADMIN, _project, "the node account"
    ),
    "gcp:serviceaccount/iAMMember:IAMMember": Row(
        ("iam.serviceAccounts.setIamPolicy",),
        SERVICE_ACCOUNT_ADMIN,
        _bound_account,
        "service account IAM bindings",
        binds=True,
    ),
    "gcp:projects/iAMMember:IAMMember": Row(
        ("resourcemanager.projects.setIamPolicy",),
        PROJECT_IAM_ADMIN,
        _project,
        "project IAM bindings",
        binds=True,
    ),
    "gcp:storage/bucketIAMMember:BucketIAMMember": Row(
        ("storage.buckets.setIamPolicy",),
        STORAGE_ADMIN,
        _bucket,
        "the model cache's reader",
        binds=True,
    ),
    "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember": Row(
        ("artifactregistry.repositories.setIamPolicy",),
        REGISTRY_ADMIN,
        _repository,
        "the node account's image pulls",
        binds=True,
    ),
    "gcp:compute/router:Router": Row(
        ("compute.routers.create",), NETWORK_ADMIN, _project, "Cloud Router"
    ),
    # Cloud NAT is a part of its router: creating one patches the router.
    "gcp:compute/routerNat:RouterNat": Row(
        ("compute.routers.update",), NETWORK_ADMIN, _project, "Cloud NAT"
    ),
    # compute.addresses.insert checks create for an external address, createInternal for an
    # internal one (gcp/map.json lists both); networkAdmin holds both.
    "gcp:compute/address:Address": Row(
        ("compute.addresses.create", "compute.addresses.createInternal"),
        NETWORK_ADMIN,
        _project,
        "reserved addresses",
        pick=lambda inputs: (
            ("compute.addresses.createInternal",)
            if inputs.get("addressType") == "INTERNAL"
            else ("compute.addresses.create",)
        ),
    ),
}

INVOKES: dict[str, Row | None] = {
    # container.admin holds resourcemanager.projects.get (so does compute.viewer).
    "gcp:organizations/getProject:getProject": Row(
        ("resourcemanager.projects.get",), CONTAINER_ADMIN, _project, "the project's number"
    ),
    # Reads the provider's own configuration and token; calls no Google API.
    "gcp:organizations/getClientConfig:getClientConfig": None,
}

KUBERNETES_WHY = "every Kubernetes object"
DNS_ENDPOINT_WHY = "the DNS control-plane endpoint"
ACT_AS_WHY = "nodes run as it"
_WHY_ORDER = [
    *(row.why for row in RESOURCES.values()),
    KUBERNETES_WHY,
    DNS_ENDPOINT_WHY,
    ACT_AS_WHY,
    *(row.why for row in INVOKES.values() if row),
]

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"


def _kubernetes_permission(type_: str) -> str:
    """The GKE permission a Kubernetes object's create checks: container.<resource>.create, or
    container.thirdPartyObjects.create for a custom resource (all in container.admin)."""
    if type_.startswith("kubernetes:helm.sh/"):
        return "container.* (every object the chart renders)"
    _, group_version, kind = type_.split(":")
    group = group_version.rpartition("/")[0]
    if "." in group and not group.endswith(".k8s.io"):
        return "container.thirdPartyObjects.create"
    name = re.sub(r"^[A-Z]+?(?=[A-Z][a-z])|^[A-Z]", lambda m: m.group().lower(), kind)
    plural = name[:-1] + "ies" if name.endswith("y") else name + ("es" if name[-1] == "s" else "s")
    return f"container.{plural}.create"


def _cluster_of(recording: Recording, r: Registration) -> Registration | None:
    """The GKE cluster a Kubernetes object is sent to: its provider waits for that cluster. None
    for an existing cluster, reached with its kubeconfig's own credentials."""
    provider = recording.by_urn(r.provider.rsplit("::", 1)[0]) if r.provider else None
    for urn in provider.dependencies if provider else ():
        dependency = recording.by_urn(urn)
        if dependency is not None and dependency.type == CLUSTER:
            return dependency
    return None


def _node_accounts(r: Registration) -> list[str]:
    """Service accounts a cluster or node pool runs nodes as (the caller needs actAs on each)."""
    configs = [
        r.inputs.get("nodeConfig") or {},
        ((r.inputs.get("clusterAutoscaling") or {}).get("autoProvisioningDefaults")) or {},
    ]
    return sorted({c["serviceAccount"] for c in configs if c.get("serviceAccount")})


class _Raw(NamedTuple):
    role: str
    scope: str
    permission: str
    resource: str
    why: str
    grant: str | None = None


def _unknown(kind: str, token: str, resource: str) -> _Raw:
    return _Raw(UNKNOWN, f"{kind} {token}", UNKNOWN, resource, "no row in tools/permissions.py")


def _resource_needs(recording: Recording, r: Registration) -> Iterator[_Raw]:
    package = r.type.split(":", 1)[0]
    if not r.custom or r.type.startswith("pulumi:") or package in LOCAL_PACKAGES:
        return
    if package == "kubernetes":
        cluster = _cluster_of(recording, r)
        if cluster is not None:
            permission = _kubernetes_permission(r.type)
            scope = _project(cluster.inputs)
            yield _Raw(CONTAINER_ADMIN, scope, permission, r.name, KUBERNETES_WHY)
        return
    row = RESOURCES.get(r.type)
    if row is None:
        yield _unknown("type", r.type, r.name)
        return
    grant = r.inputs.get("role") if row.binds else None
    for permission in row.pick(r.inputs) if row.pick else row.permissions:
        yield _Raw(row.role, row.scope(r.inputs), permission, r.name, row.why, grant)
    if r.type in (CLUSTER, NODE_POOL):
        for account in _node_accounts(r):
            scope = f"service account {account}"
            actas = "iam.serviceAccounts.actAs"
            yield _Raw(SERVICE_ACCOUNT_USER, scope, actas, r.name, ACT_AS_WHY)
    dns = ((r.inputs.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig")) or {}
    if r.type == CLUSTER and dns.get("allowExternalTraffic"):
        # On the DNS endpoint IAM checks container.clusters.connect before the API server.
        connect = "container.clusters.connect"
        yield _Raw(CONTAINER_ADMIN, _project(r.inputs), connect, r.name, DNS_ENDPOINT_WHY)


def _invoke_needs(token: str, args: Mapping[str, Any]) -> Iterator[_Raw]:
    if not token.startswith("gcp:"):
        return
    name = f"{token.rsplit(':', 1)[-1]}({', '.join(map(str, args.values()))})"
    if token not in INVOKES:
        yield _unknown("invoke", token, name)
        return
    row = INVOKES[token]
    if row is None:
        return
    for permission in row.permissions:
        yield _Raw(row.role, row.scope(args), permission, name, row.why)


def _raw_needs(recording: Recording) -> Iterator[_Raw]:
    for r in recording.resources:
        yield from _resource_needs(recording, r)
    for token, args in recording.invokes:
        yield from _invoke_needs(token, args)


def required(recording: Recording) -> list[Need]:
    """Every permission the deploy identity needs for the recorded stack, one Need per role,
    scope and permission, sorted. A type with no row comes back with role UNKNOWN."""
    merged: dict[tuple[str, str, str], tuple[set[str], set[str], set[str]]] = {}
    for role, scope, permission, resource, why, grant in _raw_needs(recording):
        resources, whys, grants = merged.setdefault(
            (role, scope, permission), (set(), set(), set())
        )
        resources.add(resource)
        whys.add(why)
        if grant:
            grants.add(grant)
    return sorted(
        Need(role, scope, permission, tuple(sorted(res)), _ordered(whys), tuple(sorted(grants)))
        for (role, scope, permission), (res, whys, grants) in merged.items()
    )


def _ordered(whys: set[str]) -> tuple[str, ...]:
    return tuple(sorted(whys, key=lambda w: (_WHY_ORDER.index(w) if w in _WHY_ORDER else 99, w)))


def summary_lines(recording: Recording) -> list[str]:
    """The plan's `iam` section: one line per role and scope the deploy identity needs."""
    lines = [
        "  iam       the deploy identity needs, besides the state bucket and the KMS key "
        "(docs/delivery.md, 4. Identities):"
    ]
    grouped: dict[tuple[str, str], list[Need]] = {}
    for need in required(recording):
        grouped.setdefault((need.role, need.scope), []).append(need)
    for (role, scope), needs in grouped.items():
        if role == UNKNOWN:
            names = ", ".join(sorted({n for need in needs for n in need.resources}))
            lines.append(
                f"            ! {scope} ({names}): no row in tools/permissions.py, so the role it "
                "needs is not known here; `pulumi up` from CI may be refused (403)"
            )
            continue
        whys = _ordered({w for need in needs for w in need.why})
        grants = sorted({g for need in needs for g in need.grants})
        limit = f", granting only {', '.join(grants)}" if grants else ""
        lines.append(f"            {role} on {scope}{limit} ({', '.join(whys)})")
    if any(_cluster_of(recording, r) is None for r in recording.kubernetes_objects()):
        lines.append(
            "            Kubernetes objects of the existing cluster: its kubeconfig's credentials "
            "decide (no Google Cloud role derived here)"
        )
    return lines
