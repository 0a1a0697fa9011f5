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
CLUSTER_ADMIN = "roles/container.clusterAdmin"
"""Clusters and node pools, and the DNS endpoint: container.clusters.{create,update,delete,get,
list,connect}, container.operations.{get,list} and resourcemanager.projects.get, and no
Kubernetes object (gcp/roles/container.clusterAdmin.json). container.admin would add every
Kubernetes object of every cluster in the project (Secrets included) through IAM; the objects come
from KUBERNETES_RBAC instead, bound in the stack's own cluster only."""
KUBERNETES_RBAC = "clusterrole/cluster-admin"
"""Kubernetes RBAC, not IAM: a ClusterRoleBinding of the deploy identity (a Google service account
is the Kubernetes user named by its email) to cluster-admin, in its own cluster. GKE allows a
request that either IAM or RBAC allows ("Authorize actions in clusters using role-based access
control", https://cloud.google.com/kubernetes-engine/docs/how-to/role-based-access-control).
cluster-admin, not a narrower role: the program creates ClusterRoles and their bindings (the
metrics adapter's), which RBAC allows only to holders of every permission granted, or of
escalate and bind."""
NETWORK_ROLE = "projects/PROJECT_ID/roles/gkeGpuNetwork"
"""A custom role with exactly NETWORK_PERMISSIONS, instead of compute.networkAdmin (965
permissions: every network, firewall, route and peering of the project)."""
PROJECT_IAM_ADMIN = "roles/resourcemanager.projectIamAdmin"
SERVICE_ACCOUNT_ADMIN = "roles/iam.serviceAccountAdmin"
SERVICE_ACCOUNT_USER = "roles/iam.serviceAccountUser"
"""The only predefined role with iam.serviceAccounts.actAs and nothing else to speak of: GKE asks
for it on a user-managed node account (https://cloud.google.com/iam/docs/roles-permissions/
container, Kubernetes Engine Admin); container.admin does not contain actAs."""
STORAGE_ADMIN = "roles/storage.admin"
REGISTRY_ADMIN = "roles/artifactregistry.admin"
"""artifactregistry.repoAdmin lacks artifactregistry.repositories.setIamPolicy."""
MONITORING_EDITOR = "roles/monitoring.editor"
"""Read-write access to the Cloud Monitoring API ("Control access with IAM", cloud.google.com/
monitoring/access-control, Predefined roles): dashboards (monitoring.dashboards.*), alert
policies (monitoring.alertPolicies.*) and notification channels (monitoring.notificationChannels.*,
the permission names of cloud.google.com/iam/docs/roles-permissions/monitoring). Narrower
predefined roles per kind (dashboard, alert policy, notification channel editors) would do too;
their names were not confirmed here."""
UNKNOWN = "unknown"
"""The role of a Need this module has no row for: a test fails on it, CI would get a 403."""

# What the Terraform provider behind pulumi-gcp calls for each network resource, and what each call
# checks. Calls: hashicorp/terraform-provider-google@e03b7622a26cf4e878f90bdccaca6aa3d03a7999,
# google/services/compute/: resource_compute_router.go (POST, GET, PATCH, DELETE on the router),
# resource_compute_router_nat.go (a NAT is a part of its router: GET the router, PATCH it, also to
# delete), resource_compute_address.go (POST, GET, DELETE; POST setLabels when the address has
# labels, which pulumi-gcp's attribution label may add: unconfirmed), and compute_operation.go
# (QueryOp: every regional call is waited for with GET regions/R/operations/O). Checks:
# iann0036/iam-dataset@2073fa52ac008a45477aa0b1b4580cd99135bf60:gcp/map.json (compute.routers.insert
# -> routers.create; routers.patch -> routers.get + routers.update; addresses.insert -> addresses.
# create or createInternal; addresses.delete -> addresses.delete or deleteInternal;
# regionOperations.get -> regionOperations.get). compute.subnetworks.use for an internal address
# in a subnetwork is not in map.json; it is taken from Google's "Reserve a static internal IP"
# requirements and is unconfirmed here.
_OPERATIONS = ("compute.regionOperations.get",)
ROUTER_PERMISSIONS = (
    "compute.routers.create",
    "compute.routers.get",
    "compute.routers.update",
    "compute.routers.delete",
    *_OPERATIONS,
)
NAT_PERMISSIONS = ("compute.routers.get", "compute.routers.update", *_OPERATIONS)
EXTERNAL_ADDRESS_PERMISSIONS = (
    "compute.addresses.create",
    "compute.addresses.get",
    "compute.addresses.delete",
    "compute.addresses.setLabels",
    *_OPERATIONS,
)
INTERNAL_ADDRESS_PERMISSIONS = (
    "compute.addresses.createInternal",
    "compute.addresses.get",
    "compute.addresses.deleteInternal",
    "compute.addresses.setLabels",
    "compute.subnetworks.use",
    *_OPERATIONS,
)
NETWORK_PERMISSIONS = tuple(
    sorted(
        {
            *ROUTER_PERMISSIONS,
            *NAT_PERMISSIONS,
            *EXTERNAL_ADDRESS_PERMISSIONS,
            *INTERNAL_ADDRESS_PERMISSIONS,
        }
    )
)
"""NETWORK_ROLE's permissions: docs/delivery.md's `gcloud iam roles create gkeGpuNetwork`."""

# Types that reach no Google Cloud API: computed locally (random, tls) or engine plumbing.
LOCAL_PACKAGES = ("random", "tls")


@dataclass(frozen=True, order=True)
class Need:
    """A permission the deploy identity must hold, through `role`, on `scope`."""

    role: str
    scope: str
    """What the grant is on: `project P`, `bucket B`, `repository L-docker.pkg.dev/P/R`,
    `service account E`, or `cluster C` (a Kubernetes RBAC binding in that cluster)."""
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
        ("container.clusters.create",), CLUSTER_ADMIN, _project, "clusters"
    ),
    "gcp:container/nodePool:NodePool": Row(
        ("container.clusters.update",), CLUSTER_ADMIN, _project, "node pools"
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
    "gcp:compute/router:Router": Row(ROUTER_PERMISSIONS, NETWORK_ROLE, _project, "Cloud Router"),
    "gcp:compute/routerNat:RouterNat": Row(NAT_PERMISSIONS, NETWORK_ROLE, _project, "Cloud NAT"),
    # The components reserve regional addresses only (components/service/load_balancer.py,
    # _reserve), never
    # global ones (compute.globalAddresses.*).
    "gcp:compute/address:Address": Row(
        EXTERNAL_ADDRESS_PERMISSIONS,
        NETWORK_ROLE,
        _project,
        "reserved addresses",
        pick=lambda inputs: (
            INTERNAL_ADDRESS_PERMISSIONS
            if inputs.get("addressType") == "INTERNAL"
            else EXTERNAL_ADDRESS_PERMISSIONS
        ),
    ),
    "gcp:monitoring/dashboard:Dashboard": Row(
        ("monitoring.dashboards.create",), MONITORING_EDITOR, _project, "the dashboard"
    ),
    "gcp:monitoring/alertPolicy:AlertPolicy": Row(
        ("monitoring.alertPolicies.create",), MONITORING_EDITOR, _project, "alert policies"
    ),
    "gcp:monitoring/notificationChannel:NotificationChannel": Row(
        ("monitoring.notificationChannels.create",),
        MONITORING_EDITOR,
        _project,
        "the alerts' email channels",
    ),
}


INVOKES: dict[str, Row | None] = {
    # container.clusterAdmin holds resourcemanager.projects.get (so does compute.viewer).
    "gcp:organizations/getProject:getProject": Row(
        ("resourcemanager.projects.get",), CLUSTER_ADMIN, _project, "the project's number"
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
    """The RBAC verb and resource a Kubernetes object's create asks for (cluster-admin has all)."""
    if type_.startswith("kubernetes:helm.sh/"):
        return "create every object the chart renders"
    _, group_version, kind = type_.split(":")
    group = group_version.rpartition("/")[0]
    name = re.sub(r"^[A-Z]+?(?=[A-Z][a-z])|^[A-Z]", lambda m: m.group().lower(), kind).lower()
    plural = name[:-1] + "ies" if name.endswith("y") else name + ("es" if name[-1] == "s" else "s")
    if group in ("", "core"):
        return f"create {plural}"
    return f"create {plural}.{group}"


def _cluster_scope(inputs: Mapping[str, Any]) -> str:
    return f"cluster {inputs.get('name') or 'of the stack'}"


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
            scope = _cluster_scope(cluster.inputs)
            yield _Raw(KUBERNETES_RBAC, scope, permission, r.name, KUBERNETES_WHY)
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
        yield _Raw(CLUSTER_ADMIN, _project(r.inputs), connect, r.name, DNS_ENDPOINT_WHY)


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
