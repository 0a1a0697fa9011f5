"""Reading a resource's props: the shared names, tolerant readers and the production marker."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

# `props` are a resource's inputs as the engine sees them (camelCase keys). Under CrossGuard they
# are read-only proxies (a Mapping and a Sequence, not dict and list) that raise when a value the
# engine does not know yet during preview is read; CrossGuard then reports that the policy could
# not run for that resource. So the rules test for Mapping/Sequence, never dict/list, and read a
# value only when a decision needs it.

# The label, annotation and resource names the rules read: the same names and values as in
# components/facts/labels.py, which tests/test_labels.py checks. They are repeated because
# components/
# needs pulumi_gcp and the pack's venv does not.
GPU_RESOURCE = "nvidia.com/gpu"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
MIN_NODES_REASON_LABEL = "gke-gpu-min-nodes-reason"
APP_NAME_LABEL = "app.kubernetes.io/name"
INTERNAL_LB_ANNOTATION = "networking.gke.io/load-balancer-type"
# The app.kubernetes.io/name of the gate's pods: every exposed endpoint selects them.
GATE_NAME_LABEL = "gke-gpu-gate"
# The production marker: the Kubernetes label on exposed Services, the GCE label on the cluster.
PRODUCTION_LABEL = "gke-gpu/production"
PRODUCTION_CLUSTER_LABEL = "gke-gpu-production"

# (API group, kind) -> where the pod spec sits in the object. Matching on group and kind, not on
# the API version, keeps older versions (batch/v1beta1 CronJob, extensions/v1beta1) covered.
POD_SPEC_PATHS: dict[tuple[str, str], tuple[str, ...]] = {
    ("core", "Pod"): ("spec",),
    ("apps", "Deployment"): ("spec", "template", "spec"),
    ("apps", "StatefulSet"): ("spec", "template", "spec"),
    ("apps", "DaemonSet"): ("spec", "template", "spec"),
    ("apps", "ReplicaSet"): ("spec", "template", "spec"),
    ("extensions", "Deployment"): ("spec", "template", "spec"),
    ("extensions", "DaemonSet"): ("spec", "template", "spec"),
    ("extensions", "ReplicaSet"): ("spec", "template", "spec"),
    ("batch", "Job"): ("spec", "template", "spec"),
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
    # kubernetes-sigs/lws v1: the workers' template; the leader's is OTHER_POD_SPEC_PATHS'.
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): (
        "spec",
        "leaderWorkerTemplate",
        "workerTemplate",
        "spec",
    ),
}
# Types with a second pod template (a LeaderWorkerSet's leader): the pod rules check it too
# (every_pod), as if it sat at POD_SPEC_PATHS' place.
OTHER_POD_SPEC_PATHS: dict[tuple[str, str], tuple[str, ...]] = {
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): (
        "spec",
        "leaderWorkerTemplate",
        "leaderTemplate",
        "spec",
    ),
}
CONTAINER_LISTS = (
    ("initContainers", "init container"),
    ("containers", "container"),
    ("ephemeralContainers", "ephemeral container"),
)
SERVICE_TYPE = "kubernetes:core/v1:Service"
NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"
CLUSTER_TYPE = "gcp:container/cluster:Cluster"
ALERT_POLICY_TYPE = "gcp:monitoring/alertPolicy:AlertPolicy"
# The GitHub environment variable that makes a stack production whatever its stack file says
# (environments <stack> and <stack>-preview; docs/delivery.md). tools/stacks.py policy-config turns
# it into the pack config (pack_config), which a pull request cannot change.
PRODUCTION_ENV = "GKE_GPU_PRODUCTION"


@dataclass(frozen=True)
class Context:
    """What a rule knows besides the resource itself."""

    stack: str
    """The stack's name (from the resource's URN); used in messages only, never to decide."""
    production: bool = False
    """The pack config says the stack is production (PRODUCTION_ENV in its GitHub environment)."""


# --- reading props ---------------------------------------------------------------------------


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sequence(value: object) -> Sequence[Any]:
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return value
    return ()


def _get(value: object, *path: str) -> Any:
    """The value at `path` under nested mappings, or None where a level is missing."""
    for key in path:
        value = _mapping(value).get(key)
    return value


def _known(value: object, *path: str) -> Any:
    """A value used only to word a message; None where unset or not known yet.

    CrossGuard raises on a value computed during preview (e.g. a namespace created in the same
    run); a name in a message is not worth failing the whole check for.
    """
    try:
        return _get(value, *path)
    except Exception:
        return None


def _known_str(value: object, *path: str) -> str | None:
    found = _known(value, *path)
    return found if isinstance(found, str) and found else None


def _quantity(value: object) -> Decimal | None:
    """A plain Kubernetes quantity ("1", 2, 1.0) as a number; None where it is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return Decimal(str(value).strip())
    except InvalidOperation:
        return None


def _show(value: object) -> str:
    """A number as written in config: the engine passes every number as a float (1.0 -> "1")."""
    number = _quantity(value)
    if number is not None and number == number.to_integral_value():
        return str(int(number))
    return str(value)


def _is_true(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _is_false(value: object) -> bool:
    return value is False or (isinstance(value, str) and value.lower() == "false")


def kubernetes_kind(resource_type: str) -> tuple[str, str] | None:
    """("apps", "Deployment") for "kubernetes:apps/v1:Deployment"; None for other providers."""
    parts = resource_type.split(":")
    if len(parts) != 3 or parts[0] != "kubernetes":
        return None
    return parts[1].split("/")[0], parts[2]


def pod_spec(resource_type: str, props: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod spec of any pod-bearing Kubernetes type (CronJob: jobTemplate.spec.template)."""
    kind = kubernetes_kind(resource_type)
    path = POD_SPEC_PATHS.get(kind) if kind else None
    if path is None:
        return None
    return _mapping(_get(props, *path))


def _placed(props: Mapping[str, Any], path: tuple[str, ...], value: Any) -> Mapping[str, Any]:
    """`props` with `value` at `path`, copying only the mappings along it."""
    if not path:
        return value
    return {**props, path[0]: _placed(_mapping(props.get(path[0])), path[1:], value)}


def pod_views(resource_type: str, props: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """`props`, and for a type with a second pod template (OTHER_POD_SPEC_PATHS) a view of it
    with that template where pod_spec looks."""
    kind = kubernetes_kind(resource_type)
    if kind is None or kind not in OTHER_POD_SPEC_PATHS:
        return [props]
    other = _get(props, *OTHER_POD_SPEC_PATHS[kind])
    if other is None:
        return [props]
    return [props, _placed(props, POD_SPEC_PATHS[kind], other)]


def every_pod(
    check: Callable[[str, Mapping[str, Any], Any], list[str]],
) -> Callable[[str, Mapping[str, Any], Any], list[str]]:
    """A pod rule run on each pod template of the object (pod_views), each message once."""

    @functools.wraps(check)
    def checked(resource_type: str, props: Mapping[str, Any], context: Any) -> list[str]:
        found = [
            m
            for view in pod_views(resource_type, props)
            for m in check(resource_type, view, context)
        ]
        return list(dict.fromkeys(found))

    return checked


def containers(pod: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(label, container) for every container of a pod, init and ephemeral ones included."""
    for key, role in CONTAINER_LISTS:
        for i, container in enumerate(_sequence(pod.get(key))):
            name = _known_str(container, "name")
            yield (f'{role} "{name}"' if name else f"{role} #{i}"), _mapping(container)


def object_label(resource_type: str, props: Mapping[str, Any]) -> str:
    """How messages name an object: "Deployment gke-gpu/llm", 'node pool "l4"'."""
    if resource_type == NODE_POOL_TYPE:
        return f'node pool "{_known_str(props, "name") or "(auto-named)"}"'
    if resource_type == CLUSTER_TYPE:
        return f'cluster "{_known_str(props, "name") or "(auto-named)"}"'
    kind = resource_type.rsplit(":", 1)[-1]
    name = _known_str(props, "metadata", "name") or "(auto-named)"
    namespace = _known_str(props, "metadata", "namespace")
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def is_marked_production(resource_type: str, props: Mapping[str, Any]) -> bool:
    """Whether the resource carries the production marker its stack file asked for.

    gke-gpu writes `cluster.production: true` onto what it creates: the Kubernetes label
    gke-gpu/production on the Services it exposes, the GCE label gke-gpu-production on the GKE
    cluster and the user label of the same name on its alert policies.
    """
    if resource_type == CLUSTER_TYPE:
        return _is_true(_get(props, "resourceLabels", PRODUCTION_CLUSTER_LABEL))
    if resource_type == ALERT_POLICY_TYPE:
        return _is_true(_get(props, "userLabels", PRODUCTION_CLUSTER_LABEL))
    return _is_true(_get(props, "metadata", "labels", PRODUCTION_LABEL))


def is_production(resource_type: str, props: Mapping[str, Any], configured: bool = False) -> bool:
    """Whether the resource belongs to a production stack: its own marker, or the pack config.

    The marker comes from the stack file, which a pull request can edit; the pack config comes
    from the GitHub environment (PRODUCTION_ENV), which it cannot. Either one is enough, so
    dropping `cluster.production` from a production stack file weakens no rule (and
    production-marker-kept reports it). The stack's name plays no part.
    """
    return configured or is_marked_production(resource_type, props)


def _production_reason(resource_type: str, props: Mapping[str, Any]) -> str:
    """Why the resource counts as production, for messages: its marker, else the pack config."""
    if is_marked_production(resource_type, props):
        label = PRODUCTION_CLUSTER_LABEL if resource_type == CLUSTER_TYPE else PRODUCTION_LABEL
        return f'{label}: "true", from cluster.production'
    return f"{PRODUCTION_ENV}=true in the stack's GitHub environment"
