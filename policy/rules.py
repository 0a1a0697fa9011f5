"""The gke-gpu policy rules as plain functions, shared by the CrossGuard pack, tests and tools."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

# This module imports nothing outside the standard library: the pack's own venv holds only
# pulumi-policy, and the tests and the offline plan tool call the rules without it.
#
# `props` are a resource's inputs as the engine sees them (camelCase keys). Under CrossGuard they
# are read-only proxies (a Mapping and a Sequence, not dict and list) that raise when a value the
# engine does not know yet during preview is read; CrossGuard then reports that the policy could
# not run for that resource. So the rules test for Mapping/Sequence, never dict/list, and read a
# value only when a decision needs it.

Enforcement = Literal["mandatory", "advisory"]
Check = Callable[[str, Mapping[str, Any], str], list[str]]

# The same names as in components/ (workload.py, nodepool.py); tests/test_policy.py checks that
# they agree. They are repeated because components/ needs pulumi_gcp and the pack's venv does not.
GPU_RESOURCE = "nvidia.com/gpu"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
MIN_NODES_REASON_LABEL = "gke-gpu-min-nodes-reason"

# System DaemonSets that must run privileged on the host to install drivers or expose GPUs.
SYSTEM_NAMESPACE = "kube-system"
PRIVILEGED_DAEMONSET_PREFIXES = (
    "nvidia-driver-installer",  # Google's driver installer (components/driver.py)
    "nvidia-device-plugin",  # NVIDIA's device plugin, for clusters not managed by GKE
)

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
}
CONTAINER_LISTS = (
    ("initContainers", "init container"),
    ("containers", "container"),
    ("ephemeralContainers", "ephemeral container"),
)
SERVICE_TYPE = "kubernetes:core/v1:Service"
# The production marker (components: __main__.py production_labels, cluster.py PRODUCTION_LABEL).
PRODUCTION_LABEL = "gke-gpu/production"
PRODUCTION_CLUSTER_LABEL = "gke-gpu-production"
INTERNAL_LB_ANNOTATION = "networking.gke.io/load-balancer-type"
INTERNAL_LB_CLASS = "networking.gke.io/l4-regional-internal"
NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"
CLUSTER_TYPE = "gcp:container/cluster:Cluster"

_DIGEST = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$")


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    enforcement: Enforcement
    check: Check


@dataclass(frozen=True)
class Violation:
    rule: str
    enforcement: Enforcement
    message: str


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


def stack_from_urn(urn: str) -> str:
    """The stack name in a URN ("urn:pulumi:prod::gke-gpu::type::name" -> "prod")."""
    head = urn.split("::", 1)[0]
    return head.split(":", 2)[2] if head.count(":") >= 2 else ""


def is_production(resource_type: str, props: Mapping[str, Any]) -> bool:
    """Whether the resource belongs to a production stack, by the stack's own marker.

    gke-gpu writes `cluster.production: true` onto what it creates: the Kubernetes label
    gke-gpu/production on Services, the GCE label gke-gpu-production on the GKE cluster. The stack's
    name plays no part: the prod stack file rendered under any other name is held to the same rules.
    """
    if resource_type == CLUSTER_TYPE:
        return _is_true(_get(props, "resourceLabels", PRODUCTION_CLUSTER_LABEL))
    return _is_true(_get(props, "metadata", "labels", PRODUCTION_LABEL))


def _is_internal_load_balancer(service: Mapping[str, Any]) -> bool:
    """GKE's internal passthrough load balancer: the annotation, or the load balancer class
    ("LoadBalancer Service parameters", cloud.google.com/kubernetes-engine/docs/concepts/
    service-load-balancer-parameters, checked 2026-11-22)."""
    annotations = _mapping(_get(service, "metadata", "annotations"))
    return (
        annotations.get(INTERNAL_LB_ANNOTATION) == "Internal"
        or _get(service, "spec", "loadBalancerClass") == INTERNAL_LB_CLASS
    )


def _gpu_limit(container: Mapping[str, Any]) -> object:
    return _get(container, "resources", "limits", GPU_RESOURCE)


def _sets_gpus(value: object) -> bool:
    """A GPU limit or request that asks for GPUs: present and not zero (unparsable counts)."""
    return value is not None and _quantity(value) != 0


# --- the rules ---------------------------------------------------------------------------------


def gpu_containers_set_gpu_limits(
    resource_type: str, props: Mapping[str, Any], stack: str
) -> list[str]:
    """GPU containers set resources.limits["nvidia.com/gpu"]. Mandatory.

    Kubernetes hands out GPUs (an extended resource) only through limits; a request without a
    limit, or one that differs from the limit, is rejected by the API server, and a pod pinned to
    GPU nodes without any GPU limit holds a costly GPU node while its containers see no GPU.
    A pod that selects GPU nodes needs the limit on at least one container, not on each: a
    sidecar next to the GPU container needs no GPU. Mandatory because none of these can work.
    """
    pod = pod_spec(resource_type, props)
    if pod is None:
        return []
    label = object_label(resource_type, props)
    problems: list[str] = []
    limited = False
    for where, container in containers(pod):
        limit = _gpu_limit(container)
        request = _get(container, "resources", "requests", GPU_RESOURCE)
        limited = limited or _sets_gpus(limit)
        if _sets_gpus(request) and limit is None:
            problems.append(
                f"{label}: {where} requests {_show(request)} {GPU_RESOURCE} but sets no "
                f'resources.limits["{GPU_RESOURCE}"]; Kubernetes allocates GPUs only through '
                "limits and rejects a GPU request without one. Set the limit to the GPU count "
                "(gke-gpu sets it from workloads[].gpu.count)."
            )
        elif request is not None and limit is not None and _quantity(request) != _quantity(limit):
            problems.append(
                f"{label}: {where} requests {_show(request)} {GPU_RESOURCE} but limits it to "
                f"{_show(limit)}; Kubernetes requires a GPU request to equal the limit. Drop the "
                "request or make it equal to the limit."
            )
    accelerator = _get(pod, "nodeSelector", ACCELERATOR_LABEL)
    # A container that requests GPUs without a limit was reported above; once is enough.
    if accelerator is not None and not limited and not problems:
        names = ", ".join(where for where, _ in containers(pod)) or "none"
        problems.append(
            f"{label}: the pod selects GPU nodes (nodeSelector {ACCELERATOR_LABEL}: "
            f'{accelerator}) but no container sets resources.limits["{GPU_RESOURCE}"] '
            f"({names}), so it would occupy a GPU node without getting a GPU. Set the limit on "
            "the container that uses the GPU (gke-gpu: workloads[].gpu.count of 1 or more)."
        )
    return problems


def gpu_workloads_select_gpu_capacity(
    resource_type: str, props: Mapping[str, Any], stack: str
) -> list[str]:
    """A pod with a GPU limit selects GPU nodes (a nodeSelector or nodeAffinity). Advisory.

    On GKE the cloud.google.com/gke-accelerator selector is what tells Autopilot and the cluster
    autoscaler which GPU to provision; without any selector the pod waits Pending or lands on the
    wrong GPU type. Any selector or node affinity is accepted, because existing clusters label
    GPU nodes their own way (gpu=true, nvidia.com/gpu.present). Advisory because a cluster whose
    every node has GPUs needs no selector at all.
    """
    pod = pod_spec(resource_type, props)
    if pod is None:
        return []
    gpu_containers = [where for where, c in containers(pod) if _sets_gpus(_gpu_limit(c))]
    if not gpu_containers:
        return []
    if _mapping(pod.get("nodeSelector")) or _get(pod, "affinity", "nodeAffinity") is not None:
        return []
    return [
        f"{object_label(resource_type, props)}: {', '.join(gpu_containers)} "
        f"{'has' if len(gpu_containers) == 1 else 'have'} a {GPU_RESOURCE} limit but the pod "
        "sets no nodeSelector or nodeAffinity, so nothing says which GPU nodes it needs. Add "
        f"nodeSelector {ACCELERATOR_LABEL}: <gpu type> (gke-gpu sets it from workloads[].gpu.type; "
        "on an existing cluster set workloads[].nodeSelector to the label its GPU nodes carry)."
    ]


def _allowlisted_system_daemonset(resource_type: str, props: Mapping[str, Any]) -> bool:
    # Exact namespace and kind: the same name anywhere else is just a look-alike.
    if kubernetes_kind(resource_type) not in (("apps", "DaemonSet"), ("extensions", "DaemonSet")):
        return False
    name = _get(props, "metadata", "name")
    return (
        _get(props, "metadata", "namespace") == SYSTEM_NAMESPACE
        and isinstance(name, str)
        and name.startswith(PRIVILEGED_DAEMONSET_PREFIXES)
    )


def no_privileged_pods(resource_type: str, props: Mapping[str, Any], stack: str) -> list[str]:
    """No privileged containers, privilege escalation or host namespaces. Mandatory.

    Each of these hands a container root on the node, and with it every other tenant's data and
    GPUs. Only the system DaemonSets that must touch the host are allowed: DaemonSets in
    kube-system named nvidia-driver-installer* (Google's driver installer) or
    nvidia-device-plugin* (NVIDIA's device plugin). The GPU Operator ships as a Helm release,
    which is not a pod type and is not checked here. Mandatory: gke-gpu's own workloads never
    need any of it.
    """
    pod = pod_spec(resource_type, props)
    if pod is None:
        return []
    found: list[str] = [
        f"the pod sets {field}: true"
        for field in ("hostPID", "hostNetwork", "hostIPC")
        if _is_true(pod.get(field))
    ]
    for where, container in containers(pod):
        context = _mapping(container.get("securityContext"))
        found += [
            f"{where} sets securityContext.{field}: true"
            for field in ("privileged", "allowPrivilegeEscalation")
            if _is_true(context.get(field))
        ]
    if not found or _allowlisted_system_daemonset(resource_type, props):
        return []
    label = object_label(resource_type, props)
    return [
        f"{label}: {item}, which gives it root on the node. Remove it; only DaemonSets in "
        f"{SYSTEM_NAMESPACE} named {' or '.join(p + '*' for p in PRIVILEGED_DAEMONSET_PREFIXES)} "
        "may run privileged."
        for item in found
    ]


def image_problem(image: str) -> str | None:
    """Why an image reference is not pinned, or None when it has a digest or a non-latest tag."""
    name, _, digest = image.partition("@")
    if digest:
        return None if _DIGEST.match(digest) else f"has a malformed digest {digest!r}"
    # The tag follows the last ':' of the last path part, so a registry port is not a tag.
    _, _, tag = name.rpartition("/")[2].partition(":")
    if not tag:
        return "has no tag (Kubernetes pulls :latest)"
    if tag == "latest":
        return 'uses the tag "latest"'
    return None


def no_latest_or_untagged_images(
    resource_type: str, props: Mapping[str, Any], stack: str
) -> list[str]:
    """Every container image has a tag other than latest, or a digest. Mandatory.

    :latest (or no tag) changes under a running service: a node that scales up pulls a different
    image than the one tested, and a rollback has nothing to roll back to. Tags like the driver
    installer's preloaded ":fixed" images count as pinned. Mandatory because pinning costs one
    edit of workloads[].image.
    """
    pod = pod_spec(resource_type, props)
    if pod is None:
        return []
    label = object_label(resource_type, props)
    problems: list[str] = []
    for where, container in containers(pod):
        image = container.get("image")
        if not isinstance(image, str) or not image:
            continue  # the API server rejects a container without an image on its own
        problem = image_problem(image)
        if problem is not None:
            problems.append(
                f'{label}: {where} image "{image}" {problem}: what runs can change without a '
                "deploy. Pin a version tag or a digest (gke-gpu: workloads[].image, e.g. "
                "vllm/vllm-openai:v0.29.0)."
            )
    return problems


def load_balancers_restricted_in_prod(
    resource_type: str, props: Mapping[str, Any], stack: str
) -> list[str]:
    """A production stack's public LoadBalancer lists the source ranges it accepts, none open to
    all. Mandatory.

    Without spec.loadBalancerSourceRanges (or with 0.0.0.0/0 or ::/0) a GPU inference endpoint
    is open to the whole internet: anyone can spend the GPUs and reach the model. Only Services
    of production stacks are checked (the gke-gpu/production label, see is_production), so dev
    can stay reachable for quick tests; an internal load balancer is reachable from the VPC only.
    Mandatory because an open production endpoint is a cost and data exposure, not a style issue.
    """
    if resource_type != SERVICE_TYPE or not is_production(resource_type, props):
        return []
    spec = _mapping(props.get("spec"))
    if spec.get("type") != "LoadBalancer" or _is_internal_load_balancer(props):
        return []
    label = object_label(resource_type, props)
    fix = "Set workloads[].expose.sourceRanges to the CIDR ranges of your clients"
    where = f'a production stack ({PRODUCTION_LABEL}: "true")'
    ranges = _sequence(spec.get("loadBalancerSourceRanges"))
    if not ranges:
        return [
            f"{label}: a public LoadBalancer in {where} sets no loadBalancerSourceRanges, so it "
            f"accepts traffic from the whole internet. {fix}, or use expose.type: Internal."
        ]
    problems: list[str] = []
    for cidr in ranges:
        try:
            everyone = ipaddress.ip_network(str(cidr).strip(), strict=False).prefixlen == 0
        except ValueError:
            continue  # not a CIDR at all: the API server rejects it with a clearer message
        if everyone:
            problems.append(
                f"{label}: a public LoadBalancer in {where} allows {cidr} in "
                f"loadBalancerSourceRanges, which is every address. {fix}, without {cidr}."
            )
    return problems


# The gate's pods (components/gate.py GATE_NAME_LABEL): every exposed endpoint selects them.
GATE_NAME_LABEL = "gke-gpu-gate"


def endpoints_use_tls_in_prod(
    resource_type: str, props: Mapping[str, Any], stack: str
) -> list[str]:
    """A production stack's endpoints serve HTTPS. Mandatory.

    Every exposed workload is served by its gate; with expose.tls: false the gate serves plain
    HTTP and the Service's port is named "http": the API key, prompts and completions then cross
    the network in clear (CIS GKE benchmark 5.6.8, "Consider encrypting traffic"). Only Services
    of production stacks that select a gate are checked.
    """
    if resource_type != SERVICE_TYPE or not is_production(resource_type, props):
        return []
    spec = _mapping(props.get("spec"))
    if _mapping(spec.get("selector")).get("app.kubernetes.io/name") != GATE_NAME_LABEL:
        return []
    plain = [
        _show(_mapping(port).get("port"))
        for port in _sequence(spec.get("ports"))
        if _mapping(port).get("name") != "https"
    ]
    if not plain:
        return []
    label = object_label(resource_type, props)
    return [
        f"{label}: serves plain HTTP on port {', '.join(plain)} in a production stack "
        f'({PRODUCTION_LABEL}: "true"): the API key and prompts would cross the network in clear. '
        "Remove workloads[].expose.tls: false."
    ]


def gpu_node_pools_scale_to_zero(
    resource_type: str, props: Mapping[str, Any], stack: str
) -> list[str]:
    """A GPU node pool scales to zero, or records why it stays warm. Advisory.

    An idle GPU node bills by the hour. A pool passes when its autoscaling minimum
    (totalMinNodeCount or minNodeCount; unset counts as 0, the API default) is 0, or when it has
    no autoscaling and a node count of 0, or when nodeConfig.resourceLabels carries
    gke-gpu-min-nodes-reason (gke-gpu writes it from nodePools[].minNodesReason). Advisory
    because a warm pool is a legitimate latency choice; the rule asks that it be a stated one.
    """
    if resource_type != NODE_POOL_TYPE:
        return []
    node_config = _mapping(props.get("nodeConfig"))
    accelerators = _sequence(node_config.get("guestAccelerators"))
    if not accelerators:
        return []
    # Read directly, not through _known_str: a reason not known yet must not pass as "no reason".
    reason = _get(node_config, "resourceLabels", MIN_NODES_REASON_LABEL)
    if isinstance(reason, str) and reason:
        return []
    autoscaling = props.get("autoscaling")
    if isinstance(autoscaling, Mapping):
        mins = ("totalMinNodeCount", "minNodeCount")
        key = next((k for k in mins if autoscaling.get(k) is not None), None)
        minimum = autoscaling.get(key) if key else 0
        if _quantity(minimum) == 0:
            return []
        keeps = f"keeps {_show(minimum)} or more GPU nodes running (autoscaling.{key})"
    else:
        sizes = ("nodeCount", "initialNodeCount")
        key = next((k for k in sizes if props.get(k) is not None), None)
        if key is None:
            keeps = "has no autoscaling and no node count of 0"
        elif _quantity(props.get(key)) == 0:
            return []
        else:
            keeps = f"has no autoscaling and a fixed {key} of {_show(props.get(key))}"
    gpus = ", ".join(
        f"{_show(_known(a, 'count') or 1)} x {_known_str(a, 'type') or 'GPU'}" for a in accelerators
    )
    return [
        f"{object_label(resource_type, props)} ({gpus}) {keeps}, so idle GPUs keep billing, and "
        f"no {MIN_NODES_REASON_LABEL} label says why. Set nodePools[].minNodes: 0 or "
        "minNodesReason (e.g. serving-latency-slo)."
    ]


def deletion_protection_in_prod(
    resource_type: str, props: Mapping[str, Any], stack: str
) -> list[str]:
    """A production GKE cluster keeps deletionProtection on. Mandatory.

    With it off, a `pulumi destroy` or a change that replaces the cluster deletes it and every
    workload, volume and address on it. Unset passes: the GCP provider defaults
    deletionProtection to true. Production is the cluster's own marker (the GCE label
    gke-gpu-production, from cluster.production), not the stack's name. Mandatory because the
    loss cannot be undone.
    """
    if resource_type != CLUSTER_TYPE or not is_production(resource_type, props):
        return []
    if not _is_false(props.get("deletionProtection")):
        return []
    return [
        f"{object_label(resource_type, props)} is marked production ({PRODUCTION_CLUSTER_LABEL}, "
        "from cluster.production) but sets deletionProtection: false, so a destroy or "
        "replacement deletes it with every workload on it. Set cluster.deletionProtection: true "
        f"in Pulumi.{stack or '<stack>'}.yaml (or leave it unset: it defaults to true)."
    ]


RULES: tuple[Rule, ...] = (
    Rule(
        "gpu-containers-set-gpu-limits",
        "Containers that use GPUs set resources.limits[nvidia.com/gpu].",
        "mandatory",
        gpu_containers_set_gpu_limits,
    ),
    Rule(
        "gpu-workloads-select-gpu-capacity",
        "Pods with a GPU limit select GPU nodes (nodeSelector or nodeAffinity).",
        "advisory",
        gpu_workloads_select_gpu_capacity,
    ),
    Rule(
        "no-privileged-pods",
        "No privileged containers, privilege escalation or host namespaces, except the "
        "kube-system NVIDIA driver installer and device plugin DaemonSets.",
        "mandatory",
        no_privileged_pods,
    ),
    Rule(
        "no-latest-or-untagged-images",
        "Every container image has a tag other than latest, or a digest.",
        "mandatory",
        no_latest_or_untagged_images,
    ),
    Rule(
        "load-balancers-restricted-in-prod",
        "Public LoadBalancer Services of production stacks (label gke-gpu/production) set "
        "loadBalancerSourceRanges, none open to all.",
        "mandatory",
        load_balancers_restricted_in_prod,
    ),
    Rule(
        "gpu-node-pools-scale-to-zero",
        "GPU node pools scale to zero, or say why they stay warm (gke-gpu-min-nodes-reason).",
        "advisory",
        gpu_node_pools_scale_to_zero,
    ),
    Rule(
        "endpoints-use-tls-in-prod",
        "Endpoints of stacks marked production serve HTTPS (no expose.tls: false).",
        "mandatory",
        endpoints_use_tls_in_prod,
    ),
    Rule(
        "deletion-protection-in-prod",
        "GKE clusters marked production (label gke-gpu-production) keep deletionProtection on.",
        "mandatory",
        deletion_protection_in_prod,
    ),
)


def evaluate(resource_type: str, props: Mapping[str, Any], stack: str) -> list[Violation]:
    """Every rule's violations for one resource, in RULES order."""
    return [
        Violation(rule.name, rule.enforcement, message)
        for rule in RULES
        for message in rule.check(resource_type, props, stack)
    ]
