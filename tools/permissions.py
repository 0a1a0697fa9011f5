"""The Google Cloud roles the deploy identity needs for what a stack registers."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from tools.engine import Recording, Registration
from tools.iam_roles import (
    ALERT_POLICY_EDITOR,
    BUCKET_IAM_PERMISSIONS,
    BUCKET_IAM_ROLE,
    CLOUD_ARMOR_PERMISSIONS,
    CLOUD_ARMOR_ROLE,
    CLUSTER_ADMIN,
    CONTAINER_ADMIN,
    DASHBOARD_EDITOR,
    ENDPOINTS_DELETE,
    ENDPOINTS_PERMISSIONS,
    ENDPOINTS_ROLE,
    EXTERNAL_ADDRESS_PERMISSIONS,
    GATEWAY_ROLE,
    GATEWAY_TYPES,
    INTERNAL_ADDRESS_PERMISSIONS,
    KUBERNETES_RBAC,
    NAT_PERMISSIONS,
    NETWORK_ROLE,
    NOTIFICATION_CHANNEL_EDITOR,
    PROJECT_IAM_ADMIN,
    REGISTRY_IAM_PERMISSIONS,
    REGISTRY_IAM_ROLE,
    ROUTER_PERMISSIONS,
    SERVICE_ACCOUNT_ADMIN,
    SERVICE_ACCOUNT_CREATOR,
    SERVICE_ACCOUNT_DELETER,
    SERVICE_ACCOUNT_USER,
    USE_DNS_AUTHORIZATION,
)

if TYPE_CHECKING:
    from tools.stacks import Deployment

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


def _created_account(inputs: Mapping[str, Any]) -> str:
    # The email Google gives a user-managed account: ACCOUNT_ID@PROJECT.iam.gserviceaccount.com.
    return f"service account {inputs['accountId']}@{inputs['project']}.iam.gserviceaccount.com"


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
    more: tuple[Row, ...] = ()
    """What the same resource asks for on another scope (the node account: created on the
    project, deleted on itself)."""


def _policy(kind: str) -> tuple[str, ...]:
    """An IAM member resource reads the policy and writes it back (tools/iam_roles.py)."""
    return (f"{kind}.getIamPolicy", f"{kind}.setIamPolicy")


def _named(held: tuple[str, ...], inputs: Mapping[str, Any]) -> tuple[str, ...]:
    """`use` on each DNS authorization a certificate names (a Cloud Endpoints name's: none)."""
    named = (inputs.get("managed") or {}).get("dnsAuthorizations")
    return tuple(p for p in held if named or p != USE_DNS_AUTHORIZATION)


def _endpoints(inputs: Mapping[str, Any]) -> tuple[str, ...]:
    """`pulumi destroy` deletes the service unless its deletionPolicy is ABANDON."""
    kept = inputs.get("deletionPolicy") == "ABANDON"
    return tuple(p for p in ENDPOINTS_PERMISSIONS if not kept or p != ENDPOINTS_DELETE)


RESOURCES: dict[str, Row] = {
    "gcp:container/cluster:Cluster": Row(
        ("container.clusters.create",), CLUSTER_ADMIN, _project, "clusters"
    ),
    "gcp:container/nodePool:NodePool": Row(
        ("container.clusters.update",), CLUSTER_ADMIN, _project, "node pools"
    ),
    # Created on the project, deleted through a grant on the account itself: never the
    # project-wide roles/iam.serviceAccountAdmin (tools/iam_roles.py has the sources).
    "gcp:serviceaccount/account:Account": Row(
        ("iam.serviceAccounts.create", "iam.serviceAccounts.get"),
        SERVICE_ACCOUNT_CREATOR,
        _project,
        "the node account",
        more=(
            Row(
                ("iam.serviceAccounts.delete",),
                SERVICE_ACCOUNT_DELETER,
                _created_account,
                "deleting the node account at destroy",
            ),
        ),
    ),
    "gcp:serviceaccount/iAMMember:IAMMember": Row(
        _policy("iam.serviceAccounts"),
        SERVICE_ACCOUNT_ADMIN,
        _bound_account,
        "service account IAM bindings",
        binds=True,
    ),
    "gcp:projects/iAMMember:IAMMember": Row(
        _policy("resourcemanager.projects"),
        PROJECT_IAM_ADMIN,
        _project,
        "project IAM bindings",
        binds=True,
    ),
    "gcp:storage/bucketIAMMember:BucketIAMMember": Row(
        BUCKET_IAM_PERMISSIONS, BUCKET_IAM_ROLE, _bucket, "the model cache's reader", binds=True
    ),
    "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember": Row(
        REGISTRY_IAM_PERMISSIONS,
        REGISTRY_IAM_ROLE,
        _repository,
        "the node account's image pulls",
        binds=True,
    ),
    "gcp:compute/router:Router": Row(ROUTER_PERMISSIONS, NETWORK_ROLE, _project, "Cloud Router"),
    "gcp:compute/routerNat:RouterNat": Row(NAT_PERMISSIONS, NETWORK_ROLE, _project, "Cloud NAT"),
    # The components reserve regional addresses only (components/service/load_balancer.py,
    # _reserve), never global ones (compute.globalAddresses.*).
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
    # expose.domain (components/expose/): the Gateway's global address, SSL policy and
    # Google-managed certificate, through one custom role (tools/iam_roles.py has the sources).
    **{
        token: Row(held, GATEWAY_ROLE, _project, why, pick=partial(_named, held))
        for token, (why, held) in GATEWAY_TYPES.items()
    },
    # expose.domain with sourceRanges: the Cloud Armor policy (tools/iam_roles.py has the sources).
    "gcp:compute/securityPolicy:SecurityPolicy": Row(
        CLOUD_ARMOR_PERMISSIONS,
        CLOUD_ARMOR_ROLE,
        _project,
        "the Gateway's Cloud Armor policy (expose.sourceRanges)",
    ),
    # expose.domain: auto, the Cloud Endpoints name (tools/iam_roles.py has the sources).
    "gcp:endpoints/service:Service": Row(
        ENDPOINTS_PERMISSIONS,
        ENDPOINTS_ROLE,
        _project,
        "the Cloud Endpoints name of an expose.domain: auto",
        pick=_endpoints,
    ),
    "gcp:monitoring/dashboard:Dashboard": Row(
        ("monitoring.dashboards.create",), DASHBOARD_EDITOR, _project, "the dashboard"
    ),
    "gcp:monitoring/alertPolicy:AlertPolicy": Row(
        ("monitoring.alertPolicies.create",), ALERT_POLICY_EDITOR, _project, "alert policies"
    ),
    "gcp:monitoring/notificationChannel:NotificationChannel": Row(
        ("monitoring.notificationChannels.create",),
        NOTIFICATION_CHANNEL_EDITOR,
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

# A binding whose purpose its granted role tells apart from the type's: workloads[].output's
# writer (components/service/model_cache.py BUCKET_WRITER_ROLE).
BY_GRANT = {
    ("gcp:storage/bucketIAMMember:BucketIAMMember", "roles/storage.objectUser"): (
        "an output bucket's writer"
    ),
}
KUBERNETES_WHY = "every Kubernetes object"
DNS_ENDPOINT_WHY = "the DNS control-plane endpoint"
ACT_AS_WHY = "nodes run as it"
_WHY_ORDER = [
    *(r.why for row in RESOURCES.values() for r in (row, *row.more)),
    KUBERNETES_WHY,
    DNS_ENDPOINT_WHY,
    ACT_AS_WHY,
    *(row.why for row in INVOKES.values() if row),
    *BY_GRANT.values(),
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


def cluster_of(recording: Recording, r: Registration) -> Registration | None:
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


def _resource_needs(recording: Recording, r: Registration, fresh_cluster: bool) -> Iterator[_Raw]:
    package = r.type.split(":", 1)[0]
    if not r.custom or r.type.startswith("pulumi:") or package in LOCAL_PACKAGES:
        return
    if package == "kubernetes":
        cluster = cluster_of(recording, r)
        if cluster is not None:
            permission = _kubernetes_permission(r.type)
            if fresh_cluster:  # no RBAC binding made by hand exists in a cluster made this run
                scope = _project(cluster.inputs)
                yield _Raw(CONTAINER_ADMIN, scope, permission, r.name, KUBERNETES_WHY)
            else:
                scope = _cluster_scope(cluster.inputs)
                yield _Raw(KUBERNETES_RBAC, scope, permission, r.name, KUBERNETES_WHY)
        return
    row = RESOURCES.get(r.type)
    if row is None:
        yield _unknown("type", r.type, r.name)
        return
    grant = r.inputs.get("role") if row.binds else None
    why = BY_GRANT.get((r.type, str(grant)), row.why)
    for permission in row.pick(r.inputs) if row.pick else row.permissions:
        yield _Raw(row.role, row.scope(r.inputs), permission, r.name, why, grant)
    for more in row.more:
        for permission in more.permissions:
            yield _Raw(more.role, more.scope(r.inputs), permission, r.name, more.why)
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


def _raw_needs(recording: Recording, fresh_cluster: bool) -> Iterator[_Raw]:
    raws = [
        *(raw for r in recording.resources for raw in _resource_needs(recording, r, fresh_cluster)),
        *(raw for token, args in recording.invokes for raw in _invoke_needs(token, args)),
    ]
    for raw in raws:
        # container.admin holds every permission of container.clusterAdmin: one role, not two.
        yield (
            raw._replace(role=CONTAINER_ADMIN)
            if fresh_cluster and raw.role == CLUSTER_ADMIN
            else raw
        )


def required(recording: Recording, deployment: Deployment | None = None) -> list[Need]:
    """Every permission the deploy identity needs for the recorded stack, one Need per role,
    scope and permission, sorted. A type with no row comes back with role UNKNOWN. A stack whose
    every CI run creates its cluster anew (`deployment.fresh_cluster`) gets its Kubernetes
    objects through CONTAINER_ADMIN on the project instead of an RBAC binding in the cluster."""
    fresh = deployment is not None and deployment.fresh_cluster
    merged: dict[tuple[str, str, str], tuple[set[str], set[str], set[str]]] = {}
    for role, scope, permission, resource, why, grant in _raw_needs(recording, fresh):
        resources, whys, grants = merged.setdefault(
            (role, scope, permission), (set(), set(), set())
        )
        resources.add(resource)
        whys.add(why)
        if grant:
            grants.add(grant)
    return sorted(
        Need(role, scope, permission, tuple(sorted(res)), ordered(whys), tuple(sorted(grants)))
        for (role, scope, permission), (res, whys, grants) in merged.items()
    )


def ordered(whys: set[str]) -> tuple[str, ...]:
    return tuple(sorted(whys, key=lambda w: (_WHY_ORDER.index(w) if w in _WHY_ORDER else 99, w)))
