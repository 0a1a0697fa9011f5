"""Pod rules: GPU limits and node selection, pods that reach the node or run as root, images."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .props import (
    ACCELERATOR_LABEL,
    GPU_RESOURCE,
    Context,
    _get,
    _is_false,
    _is_true,
    _known_str,
    _mapping,
    _quantity,
    _sequence,
    _show,
    containers,
    kubernetes_kind,
    object_label,
    pod_spec,
)

# System DaemonSets that must run privileged on the host to install drivers or expose GPUs.
SYSTEM_NAMESPACE = "kube-system"
PRIVILEGED_DAEMONSET_PREFIXES = (
    "nvidia-driver-installer",  # Google's driver installer (components/platform/driver.py)
    "nvidia-device-plugin",  # NVIDIA's device plugin, for clusters not managed by GKE
)

# The one capability a container may add back. Kubernetes Pod Security Standards, Restricted,
# "Capabilities (v1.22+)": "Containers must drop ALL capabilities, and are only permitted to add
# back the NET_BIND_SERVICE capability" (kubernetes.io/docs/concepts/security/
# pod-security-standards). Compared exactly, as Pod Security admission does (kubernetes/kubernetes
# @422c8fc5 staging/src/k8s.io/pod-security-admission/policy/check_capabilities_restricted.go).
ALLOWED_ADDED_CAPABILITIES = ("NET_BIND_SERVICE",)

_DIGEST = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$")


def _gpu_limit(container: Mapping[str, Any]) -> object:
    return _get(container, "resources", "limits", GPU_RESOURCE)


def _sets_gpus(value: object) -> bool:
    """A GPU limit or request that asks for GPUs: present and not zero (unparsable counts)."""
    return value is not None and _quantity(value) != 0


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
# (components/platform/metrics_adapter.py) is `FROM gcr.io/distroless/static` and serves on port 443
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
