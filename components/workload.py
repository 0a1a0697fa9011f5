"""GpuWorkload: a Deployment, StatefulSet or Job whose pods get GPUs in any cluster mode."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import egress
from components.allocatable import parse_memory
from components.config import Mode, WorkloadConfig, defaults
from components.config.formats import is_vllm_image
from components.config.rules.exposure import API_KEY_ENV
from components.config.rules.mounts import HOME_PATH, SHM_PATH, TMP_PATH, mounts_home
from components.manifest import manifest
from components.nodepool import gke_pool_name

# GKE node labels (cloud.google.com/kubernetes-engine/docs/how-to/gpus, .../autopilot-gpus,
# .../timesharing-gpus, .../gpus-multi, .../how-to/spot-vms).
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
SPOT_LABEL = "cloud.google.com/gke-spot"
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
DRIVER_VERSION_LABEL = "cloud.google.com/gke-gpu-driver-version"
NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
GPU_RESOURCE = "nvidia.com/gpu"
# GKE taints GPU nodes with nvidia.com/gpu=present:NoSchedule (and Spot nodes may carry
# cloud.google.com/gke-spot=true:NoSchedule); GPU pods tolerate both.
GPU_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},
)
SHARING_LABEL_VALUES = {"TIME_SHARING": "time-sharing", "MPS": "mps"}
SPOT_TOLERATION = {"key": SPOT_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}

# A GPU node that scales up from zero, pulls a multi-GB inference image and loads a model
# takes many minutes: Pulumi waits this long for the workload to become ready.
READY_TIMEOUT = "40m"

# pulumi-kubernetes waits for a Job until its Complete condition is True (provider/pkg/await/
# job.go lines 49-56), so a training Job would hold `pulumi up` for hours. With this annotation
# "true" the provider skips that wait (provider/pkg/await/await.go newLegacyReadyCondition,
# lines 1096-1102, and metadata/overrides.go SkipAwaitLogic, line 40; pulumi/pulumi-kubernetes
# at commit 94977969, checked 2026-11-22).
SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait"

# --- model cache: the Cloud Storage FUSE CSI driver (GKE add-on) ---------------------------------
# Pod annotation GKE's sidecar injector acts on, driver name, the sidecar's cache volume name and
# its user: GoogleCloudPlatform/gcs-fuse-csi-driver at 5fcdc04a (2026-08-21; checked 2026-11-22):
# pkg/webhook/mutatingwebhook.go lines 49-56 (gke-gcsfuse/volumes, gke-gcsfuse/cpu-limit ...),
# pkg/webhook/sidecar_spec.go lines 35 and 210-211 (gke-gcsfuse-cache; the sidecar runs as
# 65534:65534), deploy/base/setup/csi_driver.yaml (gcsfuse.csi.storage.gke.io; the driver gets
# the pod's service-account token from the CSIDriver's tokenRequests, not from the pod, so pods
# keep automountServiceAccountToken: false, as the driver's own e2e pods do,
# test/e2e/specs/specs.go line 253).
FUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
FUSE_VOLUMES_ANNOTATION = "gke-gcsfuse/volumes"
FUSE_CACHE_VOLUME = "gke-gcsfuse-cache"
FUSE_SIDECAR_GID = 65534
# Standard: "0" leaves the sidecar's CPU and memory limits unset, so gcsfuse may use what the
# node has while it loads the model (Google's vLLM reference deployment, GoogleCloudPlatform/
# accelerated-platforms platforms/gke/base/use-cases/inference-ref-arch/kubernetes-manifests/
# online-inference-gpu/vllm/base/deployment.yaml at 9320f3b2). "You cannot use value "0" ... on
# Autopilot clusters" (gcs-fuse-csi-driver docs/troubleshooting.md line 531), so Autopilot keeps
# GKE's defaults (250m CPU, 256Mi; cmd/webhook/main.go lines 51-54).
FUSE_STANDARD_SIDECAR_ANNOTATIONS = {
    "gke-gcsfuse/cpu-limit": "0",
    "gke-gcsfuse/memory-limit": "0",
}
# Mount options for loading a model that never changes once written (the same reference
# deployment; its guide, use-cases/inferencing/cost-optimization/gcsfuse/
# AchievingFasterPodStartup.md, measured "more than 7x less latency compared to a basic setup"):
# metadata cached for ever, parallel downloads into the file cache, implicit directories. The
# file cache is capped below its disk's size ("the underlying volume size must be larger than the
# fileCacheCapacity", docs/troubleshooting.md line 671) instead of the reference's -1, because
# here it lives on a disk of fixed size: a PersistentVolume, which the driver's docs recommend on
# Autopilot ("For TPU families or Autopilot, we recommend using Balanced Persistent Disk",
# docs/troubleshooting.md line 667).
FUSE_MOUNT_OPTIONS = (
    "metadata-cache:ttl-secs:-1",
    "metadata-cache:stat-cache-max-size-mb:-1",
    "metadata-cache:type-cache-max-size-mb:-1",
    "metadata-cache:negative-ttl-secs:0",
    "file-cache:cache-file-for-range-read:true",
    "file-cache:enable-parallel-downloads:true",
    "implicit-dirs",
    "file-system:kernel-list-cache-ttl-secs:-1",
)
FILE_CACHE_SHARE = 0.9  # of the cache disk, leaving room for ext4's own metadata

# --- running as non-root with a read-only root filesystem -----------------------------------------
# Writable places for an image built to run as root: an emptyDir at /tmp, and one for HOME when no
# cache disk holds it. The name is what getpass.getuser() returns (runtime_env).
TMP_VOLUME = "tmp"
HOME_VOLUME = "home"
RUN_AS_NAME = "gke-gpu"


@dataclass(frozen=True)
class GpuWorkloadArgs:
    namespace: pulumi.Input[str]
    mode: Mode
    workload: WorkloadConfig
    secret_values: dict[str, pulumi.Output[str]] | None = None
    """Env var name -> secret value, for `secretEnv` (read from config by the caller)."""
    after: Sequence[pulumi.Resource] = ()
    """What the workload object waits for: its GPU capacity (GKE NodePools and driver
    installer DaemonSets; the device plugin on an existing cluster). Handed to the Deployment,
    StatefulSet or Job itself: a component's `depends_on` does not reach its children
    (pulumi/pulumi sdk/python/lib/pulumi/resource.py lines 992-1004 at commit 1b594989). A
    component listed here stands for its custom descendants (runtime/rpc.py _add_dependency,
    lines 260-334)."""


def selector_labels(name: str) -> dict[str, str]:
    """The labels that tie a workload's pods to its Service: the one source for both."""
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "gke-gpu"}


def workload_labels(name: str) -> dict[str, str]:
    return {**selector_labels(name), "app.kubernetes.io/managed-by": "pulumi"}


def node_selector(mode: Mode, w: WorkloadConfig) -> dict[str, str]:
    """Node labels a GPU pod must match to land on the right GPU capacity in each mode."""
    if w.compute_class is not None:
        # The ComputeClass names the GPU, Spot and driver per priority; a pod pinning one of them
        # too would rule the fallbacks out (Google's GPU sample selects the class alone:
        # kubernetes-engine-samples autoscaling/custom-compute-classes/reservations/
        # deployment-gpu.yaml at 2b503651; google/skills gke-compute-classes: "Do not mix
        # ComputeClass selection with other hard node selectors"). GKE adds the toleration for
        # the class's node taint itself ("GKE will mutate any pod specifying a CC label in a
        # nodeSelector ... with a toleration for the CC node label", the same repository's
        # autoscaling/custom-compute-classes/vap/restrict-toleration.yaml).
        return {COMPUTE_CLASS_LABEL: w.compute_class, **dict(w.node_selector)}
    selector: dict[str, str] = {}
    pool = w.node_pool
    # GKE labels GPU nodes with their accelerator; other clusters use their own labels
    # (workloads[].nodeSelector), so the GKE label would match no node there.
    if w.gpu_type is not None and mode != "existing":
        selector[ACCELERATOR_LABEL] = w.gpu_type
    if mode == "autopilot" and w.spot:
        selector[SPOT_LABEL] = "true"
    if mode == "autopilot" and w.driver_version is not None:
        # Autopilot installs the driver version a pod selects (GKE "choose driver version";
        # components/pins.py has the source): the default image needs `latest`.
        selector[DRIVER_VERSION_LABEL] = w.driver_version
    if mode == "standard" and pool is not None:
        # Pin to the smallest pool that fits: a 1-GPU pod never lands on a 4-GPU node. GKE
        # labels nodes with the pool's GKE name, which changes when the pool is replaced, so a
        # replacement rolls the pods over to the new pool before the old one is deleted.
        selector[NODEPOOL_LABEL] = gke_pool_name(pool)
        if pool.spot:
            selector[SPOT_LABEL] = "true"
        if pool.sharing is not None:
            selector["cloud.google.com/gke-gpu-sharing-strategy"] = SHARING_LABEL_VALUES[
                pool.sharing.strategy
            ]
            selector["cloud.google.com/gke-max-shared-clients-per-gpu"] = str(
                pool.sharing.max_clients_per_gpu
            )
        if pool.partition_size is not None:
            selector["cloud.google.com/gke-gpu-partition-size"] = pool.partition_size
    selector.update(dict(w.node_selector))
    return selector


def awaited(w: WorkloadConfig) -> bool:
    """Whether `pulumi up` waits for the object: always for long-running kinds; for a Job only
    with waitForCompletion (otherwise `up` returns once the Job is created)."""
    return w.kind != "Job" or w.wait_for_completion


def tolerations(mode: Mode, w: WorkloadConfig) -> list[dict[str, str]]:
    if w.gpu_count == 0:
        return []
    result = [dict(t) for t in GPU_TOLERATIONS]
    if (w.spot or any(c.spot for c in w.capacity)) and mode != "existing":
        result.append(dict(SPOT_TOLERATION))
    return result


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
            "failureThreshold": max(1, w.probe.startup_seconds // period),
        },
        "readinessProbe": {**check, "periodSeconds": period, "failureThreshold": 3},
        "livenessProbe": {**check, "periodSeconds": 20, "failureThreshold": 3},
    }


def secret_env_names(w: WorkloadConfig) -> list[str]:
    """Env vars read from the workload's Secret: `secretEnv` keys, env values from `secure:` and
    the generated API key (VLLM_API_KEY, components/apikey.py)."""
    api_key = {API_KEY_ENV} if w.api_key else set()
    return sorted({k for k, _ in w.secret_env} | {k for k, _ in w.secret_values} | api_key)


def container_spec(w: WorkloadConfig, secret_name: pulumi.Input[str] | None) -> dict[str, Any]:
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in w.env] + runtime_env(w)
    env += [
        {"name": k, "valueFrom": {"secretKeyRef": {"name": secret_name, "key": k}}}
        for k in secret_env_names(w)
    ]
    limits: dict[str, str] = {"memory": w.memory} if w.memory else {}
    if w.gpu_count:
        limits[GPU_RESOURCE] = str(w.gpu_count)
    mounts: list[dict[str, Any]] = [
        {"name": "dshm", "mountPath": SHM_PATH},
        *writable_mounts(w),
    ]
    if w.cache is not None:
        mounts.append({"name": "cache", "mountPath": w.cache.path})
    if w.storage is not None:
        mounts.append({"name": "data", "mountPath": w.storage.mount_path})
    if w.model_cache is not None:
        mounts.append({"name": "model", "mountPath": w.model_cache.mount_path, "readOnly": True})
    container: dict[str, Any] = {
        "name": w.name,
        "image": w.image,
        "resources": {
            "requests": {
                k: v
                for k, v in (
                    ("cpu", w.cpu),
                    ("memory", w.memory),
                    ("ephemeral-storage", w.ephemeral_storage),
                )
                if v
            },
            "limits": limits,
        },
        "securityContext": {
            **container_security_context(),
            "readOnlyRootFilesystem": w.read_only_root_filesystem,
        },
        "volumeMounts": mounts,
        **probes(w),
    }
    # Config from outside the stack file (an ESC environment, --config-file) may hold a secret
    # in any leaf of a secret key: fail closed on the free-text ones too (config/source.py).
    text = pulumi.Output.secret if w.secret_args else str
    if w.command:
        container["command"] = [text(c) for c in w.command]
    if w.args:
        container["args"] = [text(a) for a in w.args]
    if env:
        container["env"] = env
    if w.port is not None:
        container["ports"] = [{"name": "http", "containerPort": w.port}]
    return container


def deployment_strategy(w: WorkloadConfig) -> dict[str, Any]:
    """surge: one extra pod at a time, never below the wanted count (the config layer chose it
    only where the pool has a spare GPU at its maximum). replace: one pod down at a time, so a
    rollout never waits for a GPU the pool cannot add; one replica is simply recreated."""
    if w.rollout == "surge":
        return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    if w.max_replicas <= 1:
        return {"type": "Recreate"}
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}


def cache_volumes(w: WorkloadConfig) -> list[dict[str, Any]]:
    """The cache as a generic ephemeral volume: a PVC made and deleted with each pod
    (kubernetes.io/docs/concepts/storage/ephemeral-volumes/#generic-ephemeral-volumes)."""
    if w.cache is None:
        return []
    claim: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": w.cache.size}},
    }
    if w.cache.storage_class:
        claim["storageClassName"] = w.cache.storage_class
    return [{"name": "cache", "ephemeral": {"volumeClaimTemplate": {"spec": claim}}}]


def fuse_mount_options(w: WorkloadConfig) -> str:
    """The bucket mount's options: read-mostly caching tuned for model loading, the file cache
    capped below its disk, and only the model's folder when one is named."""
    assert w.model_cache is not None
    cache_mib = int(parse_memory(w.model_cache.file_cache_size) * FILE_CACHE_SHARE) // 2**20
    options = [*FUSE_MOUNT_OPTIONS, f"file-cache:max-size-mb:{cache_mib}"]
    if w.model_cache.path:
        options.append(f"only-dir:{w.model_cache.path}")
    return ",".join(options)


def model_cache_volumes(w: WorkloadConfig) -> list[dict[str, Any]]:
    """The bucket as a CSI ephemeral volume (read-only), and the disk of its file cache."""
    if w.model_cache is None:
        return []
    bucket = {
        "name": "model",
        "csi": {
            "driver": FUSE_DRIVER,
            "readOnly": True,
            "volumeAttributes": {
                "bucketName": w.model_cache.bucket,
                "mountOptions": fuse_mount_options(w),
                # The pod starts without first listing the bucket (the reference deployment
                # above); a missing grant then shows as a mount error on the pod.
                "skipCSIBucketAccessCheck": "true",
            },
        },
    }
    claim = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": w.model_cache.file_cache_size}},
    }
    cache = {"name": FUSE_CACHE_VOLUME, "ephemeral": {"volumeClaimTemplate": {"spec": claim}}}
    return [bucket, cache]


def pod_annotations(mode: Mode, w: WorkloadConfig) -> dict[str, str]:
    """GKE injects the Cloud Storage FUSE sidecar only into pods that ask for it."""
    if w.model_cache is None:
        return {}
    sidecar = FUSE_STANDARD_SIDECAR_ANNOTATIONS if mode == "standard" else {}
    return {FUSE_VOLUMES_ANNOTATION: "true", **sidecar}


def home(w: WorkloadConfig) -> str:
    """HOME: the cache disk when there is one (vLLM, Triton, FlashInfer and CUDA write their
    caches under ~, and on Autopilot an emptyDir counts against the pod's 1 GiB default
    ephemeral-storage request), else an emptyDir of its own."""
    return w.cache.path if w.cache is not None else HOME_PATH


def writable_mounts(w: WorkloadConfig) -> list[dict[str, str]]:
    """What stays writable under a read-only root filesystem: /tmp, and HOME unless it is the
    cache disk or the workload sets HOME itself."""
    mounts = [{"name": TMP_VOLUME, "mountPath": TMP_PATH}]
    if mounts_home(w.cache is not None, _set_env(w)):
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
    cache_root = w.cache.path if w.cache is not None else f"{HOME_PATH}/.cache"
    wanted = [("HOME", home(w)), ("USER", RUN_AS_NAME), ("XDG_CACHE_HOME", cache_root)]
    if is_vllm_image(w.image) and "XDG_CACHE_HOME" not in given:
        wanted += [
            ("HF_HOME", f"{cache_root}/huggingface"),
            ("VLLM_CACHE_ROOT", f"{cache_root}/vllm"),
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
        ],
        "tolerations": tolerations(mode, w),
    }
    selector = node_selector(mode, w)
    if selector:
        spec["nodeSelector"] = selector
    if w.model_cache is not None:
        # Its own service account, which Workload Identity lets read the bucket (ModelCacheAccess).
        spec["serviceAccountName"] = w.name
    if w.max_replicas > 1 and w.kind != "Job":
        # Replicas prefer different zones, so one zone's outage or stockout leaves the service
        # up; "ScheduleAnyway" never holds a pod back when only one zone has a free GPU.
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": selector_labels(w.name)},
            }
        ]
    if w.kind == "Job":
        spec["restartPolicy"] = "Never"
    return spec


class GpuWorkload(pulumi.ComponentResource):
    """The team's GPU workload with GPU limits, placement, probes, secrets and a tight sandbox."""

    name: pulumi.Output[str]
    """The workload object's name."""
    secret_name: pulumi.Output[str | None]
    """Its Secret (env values from secrets, the API key), if it has one: the gate reads the key."""
    selector: dict[str, str]
    """Labels its pods carry; a Service selects them."""
    port: int | None
    """The container port that serves traffic."""

    def __init__(
        self, name: str, args: GpuWorkloadArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:GpuWorkload", name, None, opts)
        w = args.workload
        labels = workload_labels(w.name)
        self.selector = selector_labels(w.name)
        self.port = w.port
        child = pulumi.ResourceOptions(parent=self)
        metadata = {"name": w.name, "namespace": args.namespace, "labels": labels}

        secret_name: pulumi.Output[str] | None = None
        self.secret_name = pulumi.Output.from_input(None)
        if secret_env_names(w):
            values = args.secret_values or {}
            missing = sorted(k for k in secret_env_names(w) if k not in values)
            if missing:
                raise ValueError(f"GpuWorkloadArgs.secret_values lacks {missing}")
            secret = k8s.core.v1.Secret(
                f"{name}-secret",
                metadata=manifest({**metadata, "name": f"{w.name}-env"}),
                type="Opaque",
                string_data={k: pulumi.Output.secret(values[k]) for k in secret_env_names(w)},
                opts=child,
            )
            secret_name = secret.metadata.name
            self.secret_name = secret_name

        template_metadata: dict[str, Any] = {"labels": labels}
        if pod_annotations(args.mode, w):
            template_metadata["annotations"] = pod_annotations(args.mode, w)
        template = {"metadata": template_metadata, "spec": pod_spec(args.mode, w, secret_name)}
        # An autoscaled workload leaves spec.replicas to its HorizontalPodAutoscaler: a value here
        # would reset the count on every `pulumi up`, or fail it with a server-side apply conflict
        # with kube-controller-manager's "scale" subresource (pulumi/pulumi-kubernetes#2491;
        # Kubernetes: remove spec.replicas when migrating a Deployment to horizontal
        # autoscaling). Without it the object starts at 1 and the HPA raises it to minReplicas.
        replicas = {} if w.autoscale is not None else {"replicas": w.replicas}
        # A model cache is read as the workload's own Kubernetes service account (Workload Identity
        # is granted to it by name); its pods are admitted only once the account exists.
        accounts = (
            [
                k8s.core.v1.ServiceAccount(
                    f"{name}-serviceaccount",
                    metadata=manifest(metadata),
                    automount_service_account_token=False,
                    opts=child,
                )
            ]
            if w.model_cache is not None
            else []
        )
        waits = pulumi.ResourceOptions(
            parent=self,
            # Pods created before their GPUs exist sit Pending (or fail a Job's first try), and
            # destroy must delete them before the pool goes.
            depends_on=[*args.after, *accounts],
            custom_timeouts=(
                pulumi.CustomTimeouts(create=READY_TIMEOUT, update=READY_TIMEOUT)
                if awaited(w)
                else None
            ),
        )
        resource: pulumi.CustomResource
        if w.kind == "Deployment":
            resource = k8s.apps.v1.Deployment(
                f"{name}-deployment",
                metadata=manifest(metadata),
                spec=manifest(
                    {
                        **replicas,
                        "selector": {"matchLabels": self.selector},
                        "strategy": deployment_strategy(w),
                        "template": template,
                    }
                ),
                opts=waits,
            )
        elif w.kind == "StatefulSet":
            headless = k8s.core.v1.Service(
                f"{name}-headless",
                metadata=manifest({**metadata, "name": f"{w.name}-headless"}),
                spec=manifest(
                    {
                        "clusterIP": "None",
                        "selector": self.selector,
                        "ports": [{"name": "http", "port": w.port or 80, "targetPort": "http"}]
                        if w.port
                        else [],
                    }
                ),
                opts=child,
            )
            claims = []
            if w.storage is not None:
                claim_spec: dict[str, Any] = {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": w.storage.size}},
                }
                if w.storage.storage_class:
                    claim_spec["storageClassName"] = w.storage.storage_class
                claims.append({"metadata": {"name": "data"}, "spec": claim_spec})
            resource = k8s.apps.v1.StatefulSet(
                f"{name}-statefulset",
                metadata=manifest(metadata),
                spec=manifest(
                    {
                        **replicas,
                        "serviceName": headless.metadata.name,
                        "selector": {"matchLabels": self.selector},
                        "template": template,
                        "volumeClaimTemplates": claims,
                    }
                ),
                opts=waits,
            )
        else:
            resource = k8s.batch.v1.Job(
                f"{name}-job",
                metadata=manifest(
                    metadata
                    if awaited(w)
                    else {**metadata, "annotations": {SKIP_AWAIT_ANNOTATION: "true"}}
                ),
                spec=manifest({"backoffLimit": w.backoff_limit, "template": template}),
                opts=waits,
            )
        rules = egress.workload_egress(w.egress)
        if rules:
            # The namespace denies egress and admits DNS (WorkloadNamespace); this admits the
            # rest of what the pods need: the model hub, Cloud Storage, the metadata server,
            # workloads[].egress.destinationRanges.
            k8s.networking.v1.NetworkPolicy(
                f"{name}-egress",
                metadata=manifest({**metadata, "name": f"{w.name}-egress"}),
                spec=manifest(egress.egress_policy_spec(self.selector, rules)),
                opts=child,
            )
        if w.kind != "Job" and w.max_replicas > 1:
            # Node upgrades, repairs and scale-downs drain one GPU node at a time; without a
            # budget a drain may evict every replica at once (kubernetes.io/docs/tasks/run-
            # application/configure-pdb). One at a time keeps the service up.
            k8s.policy.v1.PodDisruptionBudget(
                f"{name}-pdb",
                metadata=manifest(metadata),
                spec=manifest({"maxUnavailable": 1, "selector": {"matchLabels": self.selector}}),
                opts=child,
            )
        self.name = resource.metadata.name
        self.register_outputs({"name": self.name, "secret_name": self.secret_name})
