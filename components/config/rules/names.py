"""Names: derived defaults that are always valid, collisions, reserved namespaces, project ids."""

from __future__ import annotations

import re

from components.config import formats
from components.config.problems import Problem

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


def taken(path: str, name: str, seen: set[str]) -> list[Problem]:
    """Records `name`; a problem when an earlier item of the list already has it."""
    clash = name in seen
    seen.add(name)
    return [Problem(f"{path}.name", f"{name!r} is used twice. Rename one.")] if clash else []


def object_name_problems(workloads: list[tuple[int, str, str, bool, bool]]) -> list[Problem]:
    """Kubernetes objects the workloads create must not share a name within their kind: a
    workload `llm` of kind StatefulSet creates the Service `llm-headless`, an exposed one the
    Service `llm-model` and the Deployment `llm-gate` (its gate), one with cache-aware routing
    the Service `llm-replicas`, which another workload may be called. Items are (index, name,
    kind, exposed, cache-aware)."""
    owners: dict[tuple[str, str], str] = {}
    problems = []
    for i, name, kind, exposed, routed in workloads:
        objects = [(kind, name)] + ([("Service", name)] if exposed else [])
        if kind == "StatefulSet":
            objects.append(("Service", f"{name}-headless"))
        if exposed:
            objects += [("Service", f"{name}-model"), ("Deployment", f"{name}-gate")]
        if routed:
            objects.append(("Service", f"{name}-replicas"))
        for obj in objects:
            other = owners.get(obj)
            if other is not None and other != name:
                problems.append(
                    Problem(
                        f"workloads[{i}].name",
                        f"{name!r} makes a {obj[0]} called {obj[1]!r}, which "
                        f"the workload {other!r} also makes. Rename one of them.",
                    )
                )
            owners.setdefault(obj, name)
    return problems
