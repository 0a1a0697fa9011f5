"""A GPU workload's pod template: its container (resources, env, mounts, probes), its volumes and
a restricted sandbox (non-root, read-only root filesystem, no service-account token), placed by
components/service/placement.py."""

from __future__ import annotations

from typing import Any

import pulumi

from .. import slices
from ..config import Mode, WorkloadConfig, defaults
from ..config.formats import is_vllm_image
from ..config.rules.exposure import API_KEY_ENV
from ..config.rules.fit import keeps_whole_room
from ..config.rules.mounts import HOME_PATH, SHM_PATH, TMP_PATH, mounts_home
from ..facts.allocatable import DERIVED_SHARE, memory_quantity
from ..facts.labels import GPU_RESOURCE, workload_labels
from ..manifest import claim_spec
from .model_cache import (
    model_cache_volumes,
    mounts_model,
    output_volumes,
    pod_annotations,
    reads_or_writes_a_bucket,
)
from .placement import node_selector, tolerations, zone_spread

# --- running as non-root with a read-only root filesystem -----------------------------------------
# Writable places for an image built to run as root: an emptyDir at /tmp, and one for HOME when no
# cache disk holds it. The name is what getpass.getuser() returns (runtime_env).
TMP_VOLUME = "tmp"
HOME_VOLUME = "home"
RUN_AS_NAME = "gke-gpu"


def container_security_context() -> dict[str, Any]:
    """Restricted: no privilege escalation, no Linux capabilities, default seccomp profile."""
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def run_as(w: WorkloadConfig) -> int:
    """The workload's uid and gid: workloads[].runAsUser, else the non-root default."""
    return defaults.RUN_AS_USER if w.run_as_user is None else w.run_as_user


def pod_security_context(w: WorkloadConfig) -> dict[str, Any]:
    """Pod Security "restricted" at the pod level: a non-root uid named explicitly (the vLLM and
    CUDA images name none and so run as root; Jupyter's docker-stacks run as 1000), so the
    kubelet's runAsNonRoot check passes without reading the image. fsGroup makes every volume
    that supports ownership management (the cache disk, the data disk, emptyDirs) group-writable
    and is a supplemental group of every container, the injected Cloud Storage FUSE sidecar
    (65534) included, which writes its file cache to the cache disk."""
    uid = run_as(w)
    return {
        "runAsNonRoot": True,
        "runAsUser": uid,
        "runAsGroup": uid,
        "fsGroup": uid,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def probes(w: WorkloadConfig) -> dict[str, Any]:
    """Startup probe covers the model load; readiness/liveness then watch the served path."""
    if w.probe is None:
        return {}
    check: dict[str, Any] = (
        {"httpGet": {"path": w.probe.path, "port": w.probe.port}}
        if w.probe.path is not None
        else {"tcpSocket": {"port": w.probe.port}}
    )
    period = 10
    return {
        "startupProbe": {
            **check,
            "periodSeconds": period,
            "failureThreshold": max(1, w.probe.spec.startup_seconds // period),
        },
        "readinessProbe": {**check, "periodSeconds": period, "failureThreshold": 3},
        "livenessProbe": {**check, "periodSeconds": 20, "failureThreshold": 3},
    }


def secret_env_names(w: WorkloadConfig) -> list[str]:
    """Env vars read from the workload's Secret: `secretEnv` keys, env values from `secure:` and
    the generated API key (VLLM_API_KEY, components/service/apikey.py)."""
    api_key = {API_KEY_ENV} if w.api_key else set()
    return sorted({*w.spec.secret_env} | {k for k, _ in w.secret_values} | api_key)


def container_spec(w: WorkloadConfig, secret_name: pulumi.Input[str] | None) -> dict[str, Any]:
    """The workload's one container: image, resources, sandbox, mounts, probes, command, env."""
    container: dict[str, Any] = {
        "name": w.spec.name,
        "image": w.spec.image,
        "resources": container_resources(w),
        "securityContext": {
            **container_security_context(),
            "readOnlyRootFilesystem": w.spec.read_only_root_filesystem,
        },
        "volumeMounts": container_mounts(w),
        **probes(w),
    }
    # Config from outside the stack file (an ESC environment, --config-file) may hold a secret
    # in any leaf of a secret key: fail closed on the free-text ones too (config/source.py).
    text = pulumi.Output.secret if w.secret_args else str
    if w.spec.command:
        container["command"] = [text(c) for c in w.spec.command]
    if w.args:
        container["args"] = [text(a) for a in w.args]
    env = container_env(w, secret_name)
    if env:
        container["env"] = env
    if w.spec.port is not None:
        container["ports"] = [{"name": "http", "containerPort": w.spec.port}]
    return container


def container_resources(w: WorkloadConfig) -> dict[str, Any]:
    """Requests as configured; limits on memory and the GPUs. An existing cluster's pod that sets
    no memory requests the stated floor (rules/placement.py default_requests) with no limit: its
    nodes are unknown, and a limit would OOM-kill a pod that runs today with more."""
    limits: dict[str, str] = {"memory": w.memory} if w.memory else {}
    if w.spec.gpu.count:
        limits[GPU_RESOURCE] = str(w.spec.gpu.count)
    memory = w.memory or (
        memory_quantity(w.requests.memory_bytes) if w.requests.memory_bytes else None
    )
    requests = {
        k: v
        for k, v in (
            ("cpu", w.cpu),
            ("memory", memory),
            ("ephemeral-storage", w.spec.resources.ephemeral_storage),
        )
        if v
    }
    return {"requests": requests, "limits": limits}


def headroom_words(w: WorkloadConfig) -> str:
    """The plan's words for requests sized from a node's room: the share they leave free."""
    unset = [k for k in ("cpu", "memory") if getattr(w.spec.resources, k) is None]
    if not unset:
        return ""
    if keeps_whole_room(w.spec):
        return (
            f" ({' and '.join(unset)} sized from all of it: a Job's template cannot change in "
            "place, so it keeps the share it had, and an upgrade of the program does not re-run it)"
        )
    share = float(DERIVED_SHARE * 100)
    return (
        f" ({' and '.join(unset)} sized from {share:g}% of it: {100 - share:g}% stays free "
        "for what the estimate may miss, the cluster autoscaler's own tolerance for a node's room)"
    )


def unsized_requests(w: WorkloadConfig) -> str:
    """The plan's words for a pod on an existing cluster (its nodes unknown here) that leaves CPU
    or memory unset: what it requests, what was assumed for it, and the key that replaces that."""
    words = [f"{w.spec.gpu.count} x GPU per pod"]
    if w.memory:
        words.append(f"{w.memory} memory (request and limit)")
    else:
        floor = memory_quantity(w.requests.memory_bytes)
        words.append(
            f"{floor} memory, a stated floor with no limit (KServe's default request; the "
            f"cluster's nodes are not known here): a pod using more than {floor} is still among "
            "the first evicted under memory pressure, so set resources.memory to what it uses "
            "(it becomes the request and the limit)"
        )
    words.append(f"{w.cpu} CPU" if w.cpu else "no CPU (set resources.cpu to reserve some)")
    return "; ".join(words)


def container_env(w: WorkloadConfig, secret_name: pulumi.Input[str] | None) -> list[dict[str, Any]]:
    """Plain env, then the runtime's (HOME, USER, cache roots), then values from the Secret."""
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in w.env] + runtime_env(w)
    env += [
        {"name": k, "valueFrom": {"secretKeyRef": {"name": secret_name, "key": k}}}
        for k in secret_env_names(w)
    ]
    return env


def container_mounts(w: WorkloadConfig) -> list[dict[str, Any]]:
    """Shared memory, the writable places, and the cache, data and model volumes it has."""
    mounts: list[dict[str, Any]] = [
        {"name": "dshm", "mountPath": SHM_PATH},
        *writable_mounts(w),
    ]
    if w.spec.cache is not None:
        mounts.append({"name": "cache", "mountPath": w.spec.cache.path})
    if w.spec.storage is not None:
        mounts.append({"name": "data", "mountPath": w.spec.storage.mount_path})
    if w.model_cache is not None and mounts_model(w):
        mounts.append({"name": "model", "mountPath": w.model_cache.mount_path, "readOnly": True})
    if w.spec.output is not None:
        mounts.append({"name": "output", "mountPath": w.spec.output.mount_path})
    return mounts


def cache_volumes(w: WorkloadConfig) -> list[dict[str, Any]]:
    """The cache as a generic ephemeral volume: a PVC made and deleted with each pod
    (kubernetes.io/docs/concepts/storage/ephemeral-volumes/#generic-ephemeral-volumes)."""
    if w.spec.cache is None:
        return []
    claim = claim_spec(w.spec.cache.size, w.spec.cache.storage_class)
    return [{"name": "cache", "ephemeral": {"volumeClaimTemplate": {"spec": claim}}}]


def home(w: WorkloadConfig) -> str:
    """HOME: the pod's persistent volume when it has one (`storage`, a StatefulSet's claim: a
    notebook's ~/.local, ~/.jupyter and ~/.cache then survive a restart, issue 45); else the cache
    disk (vLLM, Triton, FlashInfer and CUDA write their caches under ~, and on Autopilot an
    emptyDir counts against the pod's 1 GiB default ephemeral-storage request); else an emptyDir
    of its own. The volume's root, not a folder in it: a HOME that does not exist breaks programs
    that write a file straight into it (git's ~/.gitconfig), and the root exists and is the
    pod's group's (fsGroup, pod_security_context)."""
    if w.spec.storage is not None:
        return w.spec.storage.mount_path
    return w.spec.cache.path if w.spec.cache is not None else HOME_PATH


def cache_root(w: WorkloadConfig) -> str | None:
    """XDG_CACHE_HOME: the cache disk when there is one, else ~/.cache (on the persistent volume
    with the rest of HOME when there is one); None when the workload sets HOME itself and has no
    cache disk, so the caches follow its own HOME (the program's HOME folder is not mounted
    then, and under a read-only root filesystem nothing could be written there)."""
    if w.spec.cache is not None:
        return w.spec.cache.path
    if "HOME" in _set_env(w):
        return None
    return f"{home(w).rstrip('/')}/.cache"


def caches_on(w: WorkloadConfig) -> str:
    """The plan's words for where the pod's caches (and a server's downloaded weights) land."""
    if w.spec.cache is not None:
        return f"a {w.spec.cache.size} per-pod disk at {w.spec.cache.path}"
    if {"HOME", "XDG_CACHE_HOME"} & _set_env(w):
        return "where the workload's own HOME or XDG_CACHE_HOME says"
    if w.spec.storage is not None:
        return f"its persistent volume at {cache_root(w)} (kept across restarts)"
    return "the container's filesystem (the node's boot disk)"


def home_words(w: WorkloadConfig) -> str | None:
    """The plan's words for HOME when it is on the pod's persistent volume, else None."""
    if w.spec.storage is None or "HOME" in _set_env(w):
        return None
    return (
        f"HOME is {home(w)}, its persistent volume: what lands in ~ (~/.local, ~/.jupyter, "
        "~/.cache, shell history) survives a restart"
    )


def writable_mounts(w: WorkloadConfig) -> list[dict[str, str]]:
    """What stays writable under a read-only root filesystem: /tmp, and an emptyDir for HOME
    unless HOME is a disk of the pod's (persistent volume, cache disk) or set by the workload."""
    mounts = [{"name": TMP_VOLUME, "mountPath": TMP_PATH}]
    if home(w) == HOME_PATH and mounts_home(w.spec.cache is not None, _set_env(w)):
        mounts.append({"name": HOME_VOLUME, "mountPath": HOME_PATH})
    return mounts


def writable_volumes(w: WorkloadConfig) -> list[dict[str, Any]]:
    return [{"name": m["name"], "emptyDir": {}} for m in writable_mounts(w)]


def _set_env(w: WorkloadConfig) -> set[str]:
    return {k for k, _ in w.env} | set(secret_env_names(w))


def runtime_env(w: WorkloadConfig) -> list[dict[str, str]]:
    """HOME, USER and the cache roots, for an image that expects to run as root with HOME=/root
    (vLLM's image has no USER instruction: vllm-project/vllm docker/Dockerfile at dead20ba).
    A variable the workload sets itself is left alone, and a cache root is derived from
    XDG_CACHE_HOME when only that is set.

    - HOME: what os.path.expanduser("~") reads first (Python os.path docs); a uid without a
      passwd entry would otherwise get "/".
    - USER: getpass.getuser() returns it before looking the uid up in /etc/passwd, which fails
      for a uid the image does not know (Python getpass docs); vLLM 0.29 calls it for its
      FlashAttention CuTe cache (vllm/vllm_flash_attn/cute/cache_utils.py line 46) and torch
      for its default inductor cache (/tmp/torchinductor_<user>).
    - XDG_CACHE_HOME: vLLM's get_default_cache_root (vllm/envs.py lines 328-332 of the 0.29.0
      wheel), huggingface_hub's HF_HOME default and Triton/FlashInfer/outlines follow it or ~.
    - HF_HOME (model downloads, $XDG_CACHE_HOME/huggingface by default) and VLLM_CACHE_ROOT
      (torch.compile, Inductor and Triton caches: vllm/envs.py lines 693-698, and
      vllm/compilation/compiler_interface.py lines 475-480 point TORCHINDUCTOR_CACHE_DIR and
      TRITON_CACHE_DIR under it) are set explicitly for a vLLM server, so the plan shows where
      weights land. VLLM_CONFIG_ROOT (usage stats, ~/.config/vllm, envs.py lines 684-689) and
      VLLM_RPC_BASE_PATH (tempfile.gettempdir(), envs.py line 711) land in HOME and /tmp."""
    given = _set_env(w)
    caches = cache_root(w)
    wanted = [("HOME", home(w)), ("USER", RUN_AS_NAME)]
    if caches is not None:
        wanted.append(("XDG_CACHE_HOME", caches))
    if caches is not None and is_vllm_image(w.spec.image) and "XDG_CACHE_HOME" not in given:
        wanted += [
            ("HF_HOME", f"{caches}/huggingface"),
            ("VLLM_CACHE_ROOT", f"{caches}/vllm"),
        ]
    return [{"name": k, "value": v} for k, v in wanted if k not in given]


def pod_spec(
    mode: Mode, w: WorkloadConfig, secret_name: pulumi.Input[str] | None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "securityContext": pod_security_context(w),
        "containers": [container_spec(w, secret_name)],
        # PyTorch/NCCL use shared memory beyond the container runtime's 64 MB default.
        "volumes": [
            {"name": "dshm", "emptyDir": {"medium": "Memory"}},
            *writable_volumes(w),
            *cache_volumes(w),
            *model_cache_volumes(w),
            *output_volumes(w),
        ],
        "tolerations": tolerations(mode, w),
    }
    selector = node_selector(mode, w)
    if selector:
        spec["nodeSelector"] = selector
    if reads_or_writes_a_bucket(w):
        # Its own service account, which Workload Identity lets use the bucket (ModelCacheAccess).
        spec["serviceAccountName"] = w.spec.name
    kind = slices.kind_of(w)
    if w.max_replicas > 1 and kind.holds_replicas:
        spec["topologySpreadConstraints"] = zone_spread(w)
    if kind.restart_policy is not None:
        spec["restartPolicy"] = kind.restart_policy
    return spec


def pod_template(
    mode: Mode, w: WorkloadConfig, secret_name: pulumi.Input[str] | None
) -> dict[str, Any]:
    """The pod template of the Deployment, StatefulSet or Job: labels, annotations, spec."""
    metadata: dict[str, Any] = {"labels": workload_labels(w.spec.name)}
    if pod_annotations(mode, w):
        metadata["annotations"] = pod_annotations(mode, w)
    return {"metadata": metadata, "spec": pod_spec(mode, w, secret_name)}
