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
# The GitHub environment variable that makes a stack production whatever its stack file says
# (environments <stack> and <stack>-preview; docs/delivery.md). tools/stacks.py policy-config turns
# it into the pack config (pack_config), which a pull request cannot change.
PRODUCTION_ENV = "GKE_GPU_PRODUCTION"
# The pack config property each production rule takes. Pulumi's policy pack config holds one object
# per policy name, validated against that policy's configSchema, with the schema's defaults filled
# in (pulumi/pulumi@18817b60 pkg/resource/analyzer/config.go: parsePolicyPackConfig,
# ReconcilePolicyPackConfig), so a run without --policy-pack-config gets production: false.
PRODUCTION_CONFIG_SCHEMA: dict[str, dict[str, object]] = {
    "production": {
        "type": "boolean",
        "default": False,
        "description": f"The stack is production ({PRODUCTION_ENV}=true in its GitHub "
        "environment).",
    }
}

# The widest source range a production stack may admit: a LoadBalancer source range or a cluster
# authorized network. The config layer (components/config) refuses wider ones with the same numbers.
MIN_PREFIX_IPV4 = 16
MIN_PREFIX_IPV6 = 48
MIN_PREFIX = {4: MIN_PREFIX_IPV4, 6: MIN_PREFIX_IPV6}
_IPV4_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# The one capability a container may add back. Kubernetes Pod Security Standards, Restricted,
# "Capabilities (v1.22+)": "Containers must drop ALL capabilities, and are only permitted to add
# back the NET_BIND_SERVICE capability" (kubernetes.io/docs/concepts/security/
# pod-security-standards). Compared exactly, as Pod Security admission does (kubernetes/kubernetes
# @422c8fc5 staging/src/k8s.io/pod-security-admission/policy/check_capabilities_restricted.go).
ALLOWED_ADDED_CAPABILITIES = ("NET_BIND_SERVICE",)
# pulumi-gcp 10.2.0 Cluster inputs (container/_inputs.py): ClusterBinaryAuthorizationArgs.
# evaluation_mode "Valid values are `DISABLED` and `PROJECT_SINGLETON_POLICY_ENFORCE`";
# ClusterSecurityPostureConfigArgs.mode "Available options include `DISABLED`, `BASIC`, and
# `ENTERPRISE`"; ClusterDatabaseEncryptionArgs.state "`ENCRYPTED` or `DECRYPTED`".
BINAUTHZ_ENFORCE = "PROJECT_SINGLETON_POLICY_ENFORCE"
SECURITY_POSTURE_ON = ("BASIC", "ENTERPRISE")

_DIGEST = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$")


@dataclass(frozen=True)
class Context:
    """What a rule knows besides the resource itself."""

    stack: str
    """The stack's name (from the resource's URN); used in messages only, never to decide."""
    production: bool = False
    """The pack config says the stack is production (PRODUCTION_ENV in its GitHub environment)."""


Check = Callable[[str, Mapping[str, Any], Context], list[str]]


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    enforcement: Enforcement
    check: Check
    production: bool = False
    """A production rule: it takes the pack config's `production` property (pack_config)."""


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


def is_marked_production(resource_type: str, props: Mapping[str, Any]) -> bool:
    """Whether the resource carries the production marker its stack file asked for.

    gke-gpu writes `cluster.production: true` onto what it creates: the Kubernetes label
    gke-gpu/production on the Services it exposes, the GCE label gke-gpu-production on the GKE
    cluster.
    """
    if resource_type == CLUSTER_TYPE:
        return _is_true(_get(props, "resourceLabels", PRODUCTION_CLUSTER_LABEL))
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


def _unmapped(
    network: Network,
) -> Network:
    """An IPv4-mapped IPv6 range (::ffff:a.b.c.d/n) as the IPv4 range it names."""
    if isinstance(network, ipaddress.IPv6Network) and network.subnet_of(_IPV4_MAPPED):
        address = network.network_address.ipv4_mapped
        assert address is not None  # inside ::ffff:0:0/96
        return ipaddress.IPv4Network((address, network.prefixlen - 96))
    return network


def _covers_every_address(networks: Sequence[Network]) -> bool:
    """Whether the networks together are 0.0.0.0/0 or ::/0 (collapse_addresses takes one family)."""
    v4 = [n for n in networks if isinstance(n, ipaddress.IPv4Network)]
    v6 = [n for n in networks if isinstance(n, ipaddress.IPv6Network)]
    collapsed = [*ipaddress.collapse_addresses(v4), *ipaddress.collapse_addresses(v6)]
    return any(n.prefixlen == 0 for n in collapsed)


def source_range_problems(ranges: Sequence[object]) -> list[str]:
    """What lets too many clients in through a list of CIDR ranges, each as "<ranges>, <why>".

    A range may be at most /MIN_PREFIX_IPV4 wide (IPv4) or /MIN_PREFIX_IPV6 (IPv6), and the
    ranges together may not cover every address of a family (two /1s are 0.0.0.0/0 in two
    pieces). An IPv4-mapped IPv6 range counts as the IPv4 range it names. Something that is not
    a CIDR range (address/prefix) is a problem too: nobody can tell what it admits.
    """
    problems: list[str] = []
    parsed: list[tuple[str, Network]] = []
    for value in ranges:
        text = value.strip() if isinstance(value, str) else ""
        try:
            # A bare address is no CIDR to Kubernetes either (net.ParseCIDR needs the prefix).
            network = _unmapped(ipaddress.ip_network(text, strict=False)) if "/" in text else None
        except ValueError:
            network = None
        if network is None:
            problems.append(
                f"{value!r}, which is not a CIDR range (address/prefix, e.g. 203.0.113.0/24)"
            )
            continue
        parsed.append((text, network))
        minimum = MIN_PREFIX[network.version]
        if network.prefixlen == 0:
            problems.append(f"{text}, which is every IPv{network.version} address")
        elif network.prefixlen < minimum:
            problems.append(
                f"{text}, wider than a /{minimum}, the widest range production admits for "
                f"IPv{network.version}"
            )
    for version in MIN_PREFIX:
        family = [(text, n) for text, n in parsed if n.version == version]
        networks = [n for _, n in family]
        if len(networks) < 2 or any(n.prefixlen == 0 for n in networks):
            continue  # a single /0 is reported above, on its own
        if _covers_every_address(networks):
            names = ", ".join(text for text, _ in family)
            problems.append(f"{names}, which together cover every IPv{version} address")
    return problems


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
    resource_type: str, props: Mapping[str, Any], context: Context
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
    resource_type: str, props: Mapping[str, Any], context: Context
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


# Google's own components that run as their image's user (root, no runAsNonRoot), deployed from
# Google's manifest unchanged: (namespace, Deployment). The custom metrics adapter
# (components/metrics_adapter.py) is `FROM gcr.io/distroless/static` and serves on port 443
# (GoogleCloudPlatform/k8s-stackdriver custom-metrics-stackdriver-adapter/Dockerfile and
# deploy/production/adapter_new_resource_model.yaml). Only the non-root control is waived for
# it, in its own namespace: privilege, host access and capabilities are still refused.
ROOT_ALLOWED_DEPLOYMENTS = (("custom-metrics", "custom-metrics-stackdriver-adapter"),)


def _google_image_running_as_its_user(resource_type: str, props: Mapping[str, Any]) -> bool:
    if kubernetes_kind(resource_type) != ("apps", "Deployment"):
        return False
    where = (_known_str(props, "metadata", "namespace"), _known_str(props, "metadata", "name"))
    return where in ROOT_ALLOWED_DEPLOYMENTS


# What each kind of node access risks, and how to fix it (no_privileged_pods), said once.
_TAKEOVER = "a compromised container could take over the node and every GPU tenant on it"
_ROOT = "root in a container is one kernel bug away from root on the node and its GPU tenants"
_CAPABILITY = "each widens what a compromised container can do to the node's kernel"
_HOST_PORT = "it answers on the node's own address, around its Service and source ranges"
_FIX_REMOVE = "Remove it."
_FIX_NON_ROOT = (
    "Run it as a non-root user: set workloads[].runAsUser to the image's non-root uid (gke-gpu "
    "then sets runAsNonRoot: true), or securityContext.runAsNonRoot: true with a non-root image."
)
_FIX_USER = "Set a non-zero uid (gke-gpu: workloads[].runAsUser)."
_FIX_HOST_PATH = "Use an emptyDir, a ConfigMap or a PersistentVolumeClaim instead."
_FIX_HOST_PORT = "Remove hostPort and reach the pod through its Service."
_FIX_CAPABILITIES = f"Add none but {', '.join(ALLOWED_ADDED_CAPABILITIES)}, and drop ALL."


@dataclass(frozen=True)
class _NodeAccess:
    what: str
    risk: str
    fix: str


def _node_access(pod: Mapping[str, Any]) -> list[_NodeAccess]:
    """Each setting of a pod that reaches its node or runs as root."""
    found = [
        _NodeAccess(f"the pod sets {field}: true", _TAKEOVER, _FIX_REMOVE)
        for field in ("hostPID", "hostNetwork", "hostIPC")
        if _is_true(pod.get(field))
    ]
    for i, volume in enumerate(_sequence(pod.get("volumes"))):
        if _get(volume, "hostPath") is not None:
            name = _known_str(volume, "name") or f"#{i}"
            path = _known_str(volume, "hostPath", "path") or "a path"
            what = f'volume "{name}" mounts {path} from the node (hostPath)'
            found.append(_NodeAccess(what, _TAKEOVER, _FIX_HOST_PATH))
    pod_context = _mapping(pod.get("securityContext"))
    if _quantity(pod_context.get("runAsUser")) == 0:
        found.append(_NodeAccess("the pod sets securityContext.runAsUser: 0", _ROOT, _FIX_USER))
    for where, container in containers(pod):
        context = _mapping(container.get("securityContext"))
        found += [
            _NodeAccess(f"{where} sets securityContext.{field}: true", _TAKEOVER, _FIX_REMOVE)
            for field in ("privileged", "allowPrivilegeEscalation")
            if _is_true(context.get(field))
        ]
        found += [
            _NodeAccess(
                f"{where} binds hostPort {_show(port['hostPort'])}", _HOST_PORT, _FIX_HOST_PORT
            )
            for port in map(_mapping, _sequence(container.get("ports")))
            if port.get("hostPort") is not None and _quantity(port.get("hostPort")) != 0
        ]
        added = [
            str(c)
            for c in _sequence(_get(context, "capabilities", "add"))
            if c not in ALLOWED_ADDED_CAPABILITIES
        ]
        if added:
            what = f"{where} adds the capabilities {', '.join(added)}"
            found.append(_NodeAccess(what, _CAPABILITY, _FIX_CAPABILITIES))
        if _quantity(context.get("runAsUser")) == 0:
            what = f"{where} sets securityContext.runAsUser: 0"
            found.append(_NodeAccess(what, _ROOT, _FIX_USER))
        # The container's own setting overrides the pod's (Kubernetes SecurityContext).
        non_root = context.get("runAsNonRoot")
        if non_root is None:
            non_root = pod_context.get("runAsNonRoot")
        if not _is_true(non_root):
            setting = "runAsNonRoot: false" if _is_false(non_root) else "no runAsNonRoot"
            what = f"{where} has {setting}, so the image's own user (often root) runs it"
            found.append(_NodeAccess(what, _ROOT, _FIX_NON_ROOT))
    return found


def no_privileged_pods(resource_type: str, props: Mapping[str, Any], context: Context) -> list[str]:
    """No pod that reaches into its node or runs as root. Mandatory.

    Refused: privileged containers, privilege escalation, the node's namespaces (hostPID,
    hostNetwork, hostIPC), hostPath volumes, host ports, added capabilities other than
    NET_BIND_SERVICE, runAsUser 0 (pod or container), and a container without runAsNonRoot: true
    (its own or the pod's). These are Kubernetes' Pod Security Standards: Baseline's controls
    that reach the node, and Restricted's non-root and capability controls
    (kubernetes.io/docs/concepts/security/pod-security-standards). Each hands a container the
    node, or root one kernel bug away from it, and with it every other tenant's data and GPUs.

    Everywhere, not only in production: a dev cluster's GPU nodes, node service account and
    project are as real as production's, gke-gpu sets runAsNonRoot on its workloads itself, and
    pods carry no production marker to tell them apart. Only the system DaemonSets that must
    touch the host are allowed: DaemonSets in kube-system named nvidia-driver-installer*
    (Google's driver installer) or nvidia-device-plugin* (NVIDIA's device plugin). The GPU
    Operator ships as a Helm release, which is not a pod type and is not checked here.
    """
    pod = pod_spec(resource_type, props)
    if pod is None:
        return []
    found = _node_access(pod)
    if _google_image_running_as_its_user(resource_type, props):
        found = [access for access in found if access.fix != _FIX_NON_ROOT]
    if not found or _allowlisted_system_daemonset(resource_type, props):
        return []
    label = object_label(resource_type, props)
    allowed = " or ".join(p + "*" for p in PRIVILEGED_DAEMONSET_PREFIXES)
    return [
        f"{label}: {access.what}: {access.risk}. {access.fix} Only DaemonSets in "
        f"{SYSTEM_NAMESPACE} named {allowed} may reach the node."
        for access in found
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
    resource_type: str, props: Mapping[str, Any], context: Context
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
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production stack's public LoadBalancer admits only narrow, listed source ranges.
    Mandatory.

    Without spec.loadBalancerSourceRanges a GPU inference endpoint is open to the whole internet:
    anyone can spend the GPUs and reach the model. So is it with 0.0.0.0/0, with two /1s, or with
    a range so wide it names no client: each range may be at most a /16 (IPv4) or /48 (IPv6)
    (source_range_problems). Only Services of production stacks are checked (is_production), so
    dev can stay reachable for quick tests; an internal load balancer is reachable from the VPC
    only. Mandatory because an open production endpoint is a cost and data exposure.
    """
    if resource_type != SERVICE_TYPE or not is_production(resource_type, props, context.production):
        return []
    spec = _mapping(props.get("spec"))
    if spec.get("type") != "LoadBalancer" or _is_internal_load_balancer(props):
        return []
    label = object_label(resource_type, props)
    fix = "Set workloads[].expose.sourceRanges to the CIDR ranges of your clients"
    where = (
        f"a public LoadBalancer in a production stack ({_production_reason(resource_type, props)})"
    )
    ranges = _sequence(spec.get("loadBalancerSourceRanges"))
    if not ranges:
        return [
            f"{label}: {where} sets no loadBalancerSourceRanges, so it accepts traffic from the "
            f"whole internet. {fix}, or use expose.type: Internal."
        ]
    return [
        f"{label}: {where}: loadBalancerSourceRanges allows {problem}. {fix} (each at most a "
        f"/{MIN_PREFIX_IPV4} for IPv4, /{MIN_PREFIX_IPV6} for IPv6)."
        for problem in source_range_problems(ranges)
    ]


# The gate's pods (components/gate.py GATE_NAME_LABEL): every exposed endpoint selects them.
GATE_NAME_LABEL = "gke-gpu-gate"


def endpoints_use_tls_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production stack's endpoints serve HTTPS. Mandatory.

    Every exposed workload is served by its gate; with expose.tls: false the gate serves plain
    HTTP and the Service's port is named "http": the API key, prompts and completions then cross
    the network in clear (CIS GKE benchmark 5.6.8, "Consider encrypting traffic"). Only Services
    of production stacks that select a gate are checked.
    """
    if resource_type != SERVICE_TYPE or not is_production(resource_type, props, context.production):
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
        f"({_production_reason(resource_type, props)}): the API key and prompts would cross the "
        "network in clear. Remove workloads[].expose.tls: false."
    ]


def gpu_node_pools_scale_to_zero(
    resource_type: str, props: Mapping[str, Any], context: Context
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


def _production_cluster(resource_type: str, props: Mapping[str, Any], context: Context) -> bool:
    return resource_type == CLUSTER_TYPE and is_production(resource_type, props, context.production)


def _cluster_is_production(props: Mapping[str, Any]) -> str:
    """The start of a production cluster's message: 'cluster "gpu-prod" is production (...)'."""
    reason = _production_reason(CLUSTER_TYPE, props)
    return f"{object_label(CLUSTER_TYPE, props)} is production ({reason})"


def deletion_protection_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster keeps deletionProtection on. Mandatory.

    With it off, a `pulumi destroy` or a change that replaces the cluster deletes it and every
    workload, volume and address on it. Unset passes: the GCP provider defaults
    deletionProtection to true. Mandatory because the loss cannot be undone.
    """
    if not _production_cluster(resource_type, props, context):
        return []
    if not _is_false(props.get("deletionProtection")):
        return []
    return [
        f"{_cluster_is_production(props)} but sets deletionProtection: false, so a destroy or "
        "replacement deletes it with every workload on it. Set cluster.deletionProtection: true "
        f"in Pulumi.{context.stack or '<stack>'}.yaml (or leave it unset: it defaults to true)."
    ]


def private_nodes_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster's nodes have no public IP address. Mandatory.

    The cluster-wide switch is privateClusterConfig.enablePrivateNodes (what components/cluster.py
    sets from cluster.privateNodes). pulumi-gcp 10.2.0's Cluster has no cluster-wide
    networkConfig.defaultEnablePrivateNodes input (only node pools' networkConfig.
    enablePrivateNodes; container/_inputs.py), so that is the field read. A GPU node with a public
    address is one firewall rule away from the internet, hostPorts and NodePorts included.
    """
    if not _production_cluster(resource_type, props, context):
        return []
    if _is_true(_get(props, "privateClusterConfig", "enablePrivateNodes")):
        return []
    return [
        f"{_cluster_is_production(props)} but its nodes get public IP addresses "
        "(privateClusterConfig.enablePrivateNodes is not true): every GPU node is one firewall "
        "rule away from the internet. Set cluster.privateNodes: true (gke-gpu then adds a Cloud "
        "NAT so the nodes can still pull public images)."
    ]


def control_plane_restricted_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster's control plane admits only narrow authorized networks. Mandatory.

    masterAuthorizedNetworksConfig.cidrBlocks must list ranges, each at most a /16 (IPv4) or
    /48 (IPv6) and together not every address (source_range_problems), and
    gcpPublicCidrsAccessEnabled must not be true: it lets every Google Cloud public address in,
    any other customer's VM included (pulumi-gcp 10.2.0 ClusterMasterAuthorizedNetworksConfigArgs:
    "Whether Kubernetes master is accessible via Google Compute Engine Public IPs"). Without
    them a leaked credential works from anywhere. CI reaches such a cluster through its
    DNS-based endpoint, where IAM decides (components/cluster.py).
    """
    if not _production_cluster(resource_type, props, context):
        return []
    start = _cluster_is_production(props)
    fix = (
        f"Set cluster.masterAuthorizedNetworks to your office or VPN ranges (each at most a "
        f"/{MIN_PREFIX_IPV4} for IPv4, /{MIN_PREFIX_IPV6} for IPv6)."
    )
    authorized = _mapping(props.get("masterAuthorizedNetworksConfig"))
    blocks = _sequence(authorized.get("cidrBlocks"))
    problems: list[str] = []
    if not blocks:
        problems.append(
            f"{start} but lists no authorized networks (masterAuthorizedNetworksConfig."
            "cidrBlocks), so its control plane accepts connections from any address and a leaked "
            f"credential works from anywhere. {fix}"
        )
    problems += [
        f"{start}, but masterAuthorizedNetworksConfig.cidrBlocks allows {problem}. {fix}"
        for problem in source_range_problems([_get(block, "cidrBlock") for block in blocks])
    ]
    if _is_true(authorized.get("gcpPublicCidrsAccessEnabled")):
        problems.append(
            f"{start} but sets masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled: true, "
            "which lets every Google Cloud public address reach its control plane, any other "
            "customer's VM included. Remove it."
        )
    return problems


def secrets_encrypted_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster encrypts Kubernetes Secrets with a Cloud KMS key. Mandatory.

    databaseEncryption.state ENCRYPTED with a keyName ("Name of CloudKMS key to use for the
    encryption of secrets in etcd", GKE API DatabaseEncryption.keyName; pulumi-gcp 10.2.0
    ClusterDatabaseEncryptionArgs). The Secrets hold the generated API keys and the gate's TLS
    key; with the stack's own key, disabling or destroying the key revokes them, and every
    decryption is in the key's audit log.
    """
    if not _production_cluster(resource_type, props, context):
        return []
    encryption = _mapping(props.get("databaseEncryption"))
    state = encryption.get("state")
    if state == "ENCRYPTED":
        key = encryption.get("keyName")
        if isinstance(key, str) and key.strip():
            return []
        what = "sets databaseEncryption.state: ENCRYPTED without a keyName"
    elif state is None:
        what = "sets no databaseEncryption"
    else:
        what = f"sets databaseEncryption.state: {state}"
    return [
        f"{_cluster_is_production(props)} but {what}, so its Secrets (the API keys, the gate's "
        "TLS key) are not encrypted with a key the stack controls. Set databaseEncryption to "
        "{state: ENCRYPTED, keyName: <Cloud KMS key>} (gke-gpu: cluster.secretsEncryptionKey: "
        "projects/<project>/locations/<region>/keyRings/<ring>/cryptoKeys/<key>, a key GKE's "
        "service agent may use)."
    ]


def binary_authorization_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster enforces Binary Authorization. Advisory.

    binaryAuthorization.evaluationMode PROJECT_SINGLETON_POLICY_ENFORCE (or the deprecated
    enabled: true) makes GKE check every image against the project's Binary Authorization policy.
    Advisory: what it admits is that project policy, which lives outside this stack; turning the
    mode on is worth it only together with a policy that names your registries or attestors.
    """
    if not _production_cluster(resource_type, props, context):
        return []
    authorization = _mapping(props.get("binaryAuthorization"))
    mode = authorization.get("evaluationMode")
    if mode == BINAUTHZ_ENFORCE or _is_true(authorization.get("enabled")):
        return []
    return [
        f"{_cluster_is_production(props)} but does not enforce Binary Authorization "
        f"(binaryAuthorization.evaluationMode: {mode or 'unset'}), so any image that can be "
        f"pulled can run in it. Set evaluationMode: {BINAUTHZ_ENFORCE}, with a project policy "
        "that admits only your registries or attested images."
    ]


def security_posture_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster turns GKE's security posture on. Advisory.

    securityPostureConfig.mode BASIC or ENTERPRISE: GKE audits the workloads' configuration and
    reports findings. Advisory because it reports and blocks nothing, and a cluster that leaves the
    mode unset gets GKE's default (not confirmed here for every GKE version).
    """
    if not _production_cluster(resource_type, props, context):
        return []
    mode = _get(props, "securityPostureConfig", "mode")
    if mode in SECURITY_POSTURE_ON:
        return []
    setting = f"sets mode: {mode}" if mode else "sets no mode"
    return [
        f"{_cluster_is_production(props)} but {setting} in securityPostureConfig"
        ", so GKE's security posture findings (workload configuration audit) are off or left "
        "to GKE's default. Set securityPostureConfig.mode: BASIC (or ENTERPRISE)."
    ]


def _marked_kind(resource_type: str, props: Mapping[str, Any]) -> str | None:
    """What carries the production marker: the GKE cluster, and each Service gke-gpu exposes."""
    if resource_type == CLUSTER_TYPE:
        return f'the GCE label {PRODUCTION_CLUSTER_LABEL}: "true"'
    if resource_type != SERVICE_TYPE:
        return None
    spec = _mapping(props.get("spec"))
    gate = _mapping(spec.get("selector")).get("app.kubernetes.io/name") == GATE_NAME_LABEL
    public = spec.get("type") == "LoadBalancer" and not _is_internal_load_balancer(props)
    return f'the label {PRODUCTION_LABEL}: "true"' if gate or public else None


def production_marker_kept(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A stack its GitHub environment calls production keeps cluster.production. Mandatory.

    Production is decided twice: by the stack file (cluster.production, which a pull request can
    drop) and by PRODUCTION_ENV in the stack's GitHub environments (which it cannot). When the
    pack config says production but the cluster, or a Service gke-gpu exposes, lacks the marker,
    the stack file has stopped saying what the stack is. The production rules still apply (the
    config is enough), but a preview anywhere else would treat the stack as dev. Mandatory: it
    costs one line to restore, and turning a stack non-production is an admin's change to the
    GitHub environments, not a pull request's.
    """
    if not context.production:
        return []
    marker = _marked_kind(resource_type, props)
    if marker is None or is_marked_production(resource_type, props):
        return []
    stack = context.stack or "<stack>"
    return [
        f"{object_label(resource_type, props)}: stack {stack} is production per its GitHub "
        f"environment variable {PRODUCTION_ENV}=true, but its stack file dropped "
        f"cluster.production: true, so it lacks {marker}. The production rules still hold it "
        f"here; a preview without the pack config would not. Set cluster.production: true again "
        f"in Pulumi.{stack}.yaml. To make the stack non-production on purpose, a repository admin "
        f"first removes {PRODUCTION_ENV} from its GitHub environments {stack} and {stack}-preview."
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
        "No privileged containers, privilege escalation, host namespaces, hostPath volumes, host "
        "ports, added capabilities (but NET_BIND_SERVICE) or root users, except the kube-system "
        "NVIDIA driver installer and device plugin DaemonSets.",
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
        "Public LoadBalancer Services of production stacks set loadBalancerSourceRanges, each at "
        "most a /16 (IPv4) or /48 (IPv6), together not every address.",
        "mandatory",
        load_balancers_restricted_in_prod,
        production=True,
    ),
    Rule(
        "gpu-node-pools-scale-to-zero",
        "GPU node pools scale to zero, or say why they stay warm (gke-gpu-min-nodes-reason).",
        "advisory",
        gpu_node_pools_scale_to_zero,
    ),
    Rule(
        "endpoints-use-tls-in-prod",
        "Endpoints of production stacks serve HTTPS (no expose.tls: false).",
        "mandatory",
        endpoints_use_tls_in_prod,
        production=True,
    ),
    Rule(
        "deletion-protection-in-prod",
        "Production GKE clusters keep deletionProtection on.",
        "mandatory",
        deletion_protection_in_prod,
        production=True,
    ),
    Rule(
        "private-nodes-in-prod",
        "Production GKE clusters have private nodes (privateClusterConfig.enablePrivateNodes).",
        "mandatory",
        private_nodes_in_prod,
        production=True,
    ),
    Rule(
        "control-plane-restricted-in-prod",
        "Production GKE clusters list authorized networks, each at most a /16 (IPv4) or /48 "
        "(IPv6), and do not admit all Google Cloud public addresses.",
        "mandatory",
        control_plane_restricted_in_prod,
        production=True,
    ),
    Rule(
        "secrets-encrypted-in-prod",
        "Production GKE clusters encrypt Secrets with a Cloud KMS key (databaseEncryption).",
        "mandatory",
        secrets_encrypted_in_prod,
        production=True,
    ),
    Rule(
        "binary-authorization-in-prod",
        "Production GKE clusters enforce Binary Authorization.",
        "advisory",
        binary_authorization_in_prod,
        production=True,
    ),
    Rule(
        "security-posture-in-prod",
        "Production GKE clusters turn GKE's security posture on (BASIC or ENTERPRISE).",
        "advisory",
        security_posture_in_prod,
        production=True,
    ),
    Rule(
        "production-marker-kept",
        f"Stacks production per {PRODUCTION_ENV} keep cluster.production: true in their stack "
        "file.",
        "mandatory",
        production_marker_kept,
        production=True,
    ),
)


def evaluate(
    resource_type: str, props: Mapping[str, Any], stack: str, production: bool = False
) -> list[Violation]:
    """Every rule's violations for one resource, in RULES order.

    `production`: what the pack config says (pack_config); the resource's own marker counts
    either way.
    """
    context = Context(stack, production)
    return [
        Violation(rule.name, rule.enforcement, message)
        for rule in RULES
        for message in rule.check(resource_type, props, context)
    ]


def pack_config(production: bool) -> dict[str, dict[str, object]]:
    """The policy pack config (`pulumi preview --policy-pack-config <file>`) of a stack.

    Pulumi's format: one object per policy name holding that policy's config properties
    (pulumi/pulumi pkg/resource/analyzer/config.go parsePolicyPackConfig at 18817b60). Every
    production rule gets `production`, which the pack hands to it (policy/__main__.py).
    """
    return {rule.name: {"production": production} for rule in RULES if rule.production}
