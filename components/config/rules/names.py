"""Names: derived defaults that are always valid, collisions, reserved namespaces, project ids."""

from __future__ import annotations

import hashlib
import re

from ...facts.labels import GATE_NAME_LABEL
from ...kinds.spec import KindSpec
from .. import formats
from ..context import HIDDEN
from ..model import NAMESPACE
from ..problems import Problem

# Namespaces Kubernetes and GKE manage themselves: Kubernetes' own `kube-` namespaces and
# `default`, and GKE's managed namespaces (cloud.google.com/kubernetes-engine/docs/concepts/
# autopilot-security#built-in-security: "GKE-managed namespaces", e.g. gke-managed-system,
# gmp-system, gmp-public). A workload namespace there would be refused by Autopilot and would
# mix the team's GPU workloads with cluster components elsewhere.
# Also the namespaces this program installs cluster components into, with policies of their own
# (components/platform/keda.py, metrics_adapter.py): a workload namespace there would be a second
# Namespace object of the same name, and its default-deny egress would cut the operators off.
RESERVED_NAMESPACES = (
    "default",
    "gmp-system",
    "gmp-public",
    "gke-gmp-system",
    "keda",
    "custom-metrics",
)
RESERVED_PREFIXES = ("kube-", "gke-managed-", "gke-system")


def gke_name(text: str, limit: int = 40) -> str:
    """A valid GKE name made from any text (a stack name like `Prod_EU` -> `prod-eu`)."""
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if not name or not name[0].isalpha():
        name = f"g-{name}" if name else "g"
    return name[:limit].rstrip("-")


def gce_name(cluster: str, workload: str) -> str:
    """A Compute Engine name (1-63 lowercase letters, digits, '-') for a workload's cloud
    resources (its reserved address, certificate, Endpoints name): unique per cluster and
    workload, shortened with a hash when too long."""
    name = f"{cluster}-{workload}"
    if len(name) <= 63:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:54].rstrip('-')}-{digest}"


def cluster_name(stack: str) -> str:
    return gke_name(f"gke-gpu-{stack}")


def pool_name(gpu_type: str, taken: set[str]) -> str:
    """A pool's default name from its GPU type (`nvidia-tesla-t4` -> `t4`), unique in the stack."""
    base = gke_name(re.sub(r"^nvidia-(?:tesla-)?", "", gpu_type), limit=30)
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def namespace_problems(namespace: object) -> list[Problem]:
    key = "gke-gpu:namespace"
    if not isinstance(namespace, str) or not formats.matches(formats.K8S_NAME, namespace):
        shown = formats.show(namespace) if isinstance(namespace, str) else "that value"
        return [Problem(key, f"{shown} {formats.hint(formats.K8S_NAME)}")]
    if namespace in RESERVED_NAMESPACES or namespace.startswith(RESERVED_PREFIXES):
        return [
            Problem(
                key,
                f"{namespace!r} is reserved for Kubernetes, GKE and the components this program "
                "installs (KEDA, the metrics adapter). Use a "
                "namespace of your own (the default is 'gke-gpu').",
            )
        ]
    return []


def project_problems(project: str | None, secret: bool = False) -> list[Problem]:
    if not project:
        return [
            Problem(
                "gcp:project", "not set. Run `pulumi config set gcp:project <your-project-id>`."
            )
        ]
    if not formats.matches(formats.PROJECT_ID, project):
        shown = "(a secret, not shown)" if secret else formats.show(project)
        return [Problem("gcp:project", f"{shown} {formats.hint(formats.PROJECT_ID)}")]
    return []


def region_problems(region: str | None, secret: bool = False) -> list[Problem]:
    if not region:
        return [Problem("gcp:region", "not set. Run `pulumi config set gcp:region us-central1`.")]
    if not formats.matches(formats.REGION, region):
        shown = "(a secret, not shown)" if secret else formats.show(region)
        return [Problem("gcp:region", f"{shown} is not a region name (e.g. 'us-central1').")]
    return []


def taken(path: str, name: str, seen: set[str], hidden: bool = False) -> list[Problem]:
    """Records `name`; a problem when an earlier item of the list already has it (`hidden`: the
    name may be a secret, so it is not shown)."""
    clash = name in seen
    seen.add(name)
    shown = HIDDEN if hidden else repr(name)
    return [Problem(f"{path}.name", f"{shown} is used twice. Rename one.")] if clash else []


# The namespace's own objects: components/platform/namespace.py names its NetworkPolicies from
# here, components/service/monitoring.py its alert rules ConfigMap (existing clusters).
DENY_INGRESS_POLICY = "default-deny-ingress"
DENY_EGRESS_POLICY = "default-deny-egress"
ALLOW_DNS_POLICY = "allow-dns"
ALERT_RULES_CONFIG_MAP = f"{NAMESPACE}-alerts"
NAMESPACE_OBJECTS = {
    ("NetworkPolicy", DENY_INGRESS_POLICY): "the namespace's default-deny ingress policy",
    ("NetworkPolicy", DENY_EGRESS_POLICY): "the namespace's default-deny egress policy",
    ("NetworkPolicy", ALLOW_DNS_POLICY): "the namespace's DNS policy",
    ("ConfigMap", ALERT_RULES_CONFIG_MAP): "the stack's alert rules",
}
# Label values other objects select on, which a workload's pods would carry as their
# app.kubernetes.io/name (components/facts/labels.py selector_labels): the gate's, which KEDA's
# interceptor admits from the workload namespace (components/platform/keda.py) and the policy pack
# reads to find the Services in front of a gate.
RESERVED_LABEL_VALUES = {
    GATE_NAME_LABEL: "the app.kubernetes.io/name label of every gate's pods: the workload's pods "
    "would carry it and be admitted where only gates are (KEDA's interceptor, which wakes and "
    "serves every sleeping model without its key)",
}


def workload_objects(
    name: str, kind: KindSpec, exposed: bool, routed: bool
) -> list[tuple[str, str]]:
    """(kind, name) of every object in the namespace a workload may make (components/service/
    workload.py, autoscaler.py, scale_to_zero.py, load_balancer.py, gate.py, gate_metrics.py;
    components/platform/namespace.py its scrape policy; its kind's own, KindSpec.object_suffix
    and namespace_objects); tests/test_labels.py holds this to what is registered."""
    objects = [
        (kind.object_kind, name + kind.object_suffix),
        ("Secret", f"{name}-env"),
        ("ServiceAccount", name),
        ("NetworkPolicy", f"{name}-egress"),
        ("NetworkPolicy", f"{name}-metrics-scrape"),
        ("PodDisruptionBudget", name),
        ("HorizontalPodAutoscaler", name),
        ("PodMonitoring", name),
        ("HTTPScaledObject", name),
    ]
    objects += [(object_kind, name + suffix) for object_kind, suffix in kind.namespace_objects]
    if exposed:
        objects += [
            ("Service", name),
            ("NetworkPolicy", f"{name}-ingress"),
            ("ConfigMap", f"{name}-gate"),
            ("Deployment", f"{name}-gate"),
            ("PodDisruptionBudget", f"{name}-gate"),
            ("NetworkPolicy", f"{name}-gate-egress"),
            ("PodMonitoring", f"{name}-gate"),
            ("NetworkPolicy", f"{name}-gate-metrics-scrape"),
            ("Secret", f"{name}-gate-tls"),
            ("Service", f"{name}-model"),
            ("NetworkPolicy", f"{name}-from-gate"),
        ]
    if routed:
        objects.append(("Service", f"{name}-replicas"))
    return objects


def object_name_problems(
    workloads: list[tuple[int, str, KindSpec, bool, bool]], hidden: bool = False
) -> list[Problem]:
    """Kubernetes objects the workloads create must not share a name within their kind, with one
    another or with the namespace's own objects, and a workload's name must not be a label value
    the program reserves: a workload `llm` of kind StatefulSet creates the Service `llm-headless`,
    an exposed one the Service `llm-model` and the Deployment `llm-gate` (its gate), one with
    cache-aware routing the Service `llm-replicas`, which another workload may be called; one
    called `default-deny` the NetworkPolicy `default-deny-egress`, the namespace's own. Items are
    (index, name, kind, exposed, cache-aware); `hidden`: names may be secrets, so none is shown
    (the other workload is named by its index)."""
    owners: dict[tuple[str, str], tuple[int, str]] = {}
    problems = [
        Problem(f"workloads[{i}].name", f"{name!r} is reserved: it is {why}. Rename the workload.")
        for i, name, *_ in workloads
        if (why := RESERVED_LABEL_VALUES.get(name)) is not None
    ]
    reported: set[tuple[int, str]] = set()
    for i, name, kind, exposed, routed in workloads:
        for obj in workload_objects(name, kind, exposed, routed):
            j, other = owners.get(obj, (i, name))
            own = NAMESPACE_OBJECTS.get(obj)
            clash = own if own is not None else other if other != name else None
            if clash is not None and (i, clash) not in reported:
                reported.add((i, clash))
                problems.append(_clash(i, name, obj, own, (j, other), hidden))
            owners.setdefault(obj, (i, name))
    return problems


def _clash(
    i: int, name: str, obj: tuple[str, str], own: str | None, other: tuple[int, str], hidden: bool
) -> Problem:
    """workloads[i] makes `obj`, which the namespace (`own`) or the workload `other` makes too."""
    kind, called = obj
    made = f"a {kind}" if hidden else f"a {kind} called {called!r}"
    who = f"workloads[{other[0]}]" if hidden else f"the workload {other[1]!r}"
    what = f"which is {own}" if own is not None else f"which {who} also makes"
    fix = "the workload" if own is not None else "one of them"
    return Problem(
        f"workloads[{i}].name",
        f"{HIDDEN if hidden else repr(name)} makes {made}, {what}. Rename {fix}.",
    )
