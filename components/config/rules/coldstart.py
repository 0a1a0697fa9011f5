"""Cold-start rules: image streaming, secondary boot disks, the model cache and autoscaling.

A GPU service that scales from zero waits for a node, an image pull and a model download; each
key here removes one of those waits under conditions GKE documents: one that would make the setting
fail is a problem (nothing is created); one under which it works but does not help is an advisory.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pydantic.alias_generators import to_camel

from ...facts import allocatable, pins
from .. import formats
from ..context import Context
from ..model import WorkloadConfig
from ..problems import Problem
from ..schema import AutoscaleSpec, ModelCacheSpec, NodePoolSpec, WorkloadSpec
from ..sleep import scales_on_metric, sleeps
from ..variants import kind_spec, kinds_that
from . import buckets

# --- image streaming ----------------------------------------------------------------------------
# GKE's "Use Image streaming to pull container images" (cloud.google.com/kubernetes-engine/docs/
# how-to/image-streaming; the zh-cn edition read in full, the English edition's opening only;
# checked 2026-11-22), Requirements: the Container File System API is enabled; nodes use
# Container-Optimized OS with containerd ("Autopilot nodes always use this node image"); images
# are stored in Artifact Registry standard or remote repositories (the zh-cn edition adds public
# registries on Docker Hub); a custom node service account needs
# roles/serviceusage.serviceUsageConsumer in the project holding the images (GkeCluster grants it
# in the cluster's project). Limitations: ineligible images are downloaded as before, not
# streamed, so an image elsewhere is an advisory, never a failure. Autopilot: "Autopilot
# clusters automatically use Image streaming to pull eligible images" (same page; the older
# English edition: new Autopilot clusters from GKE 1.25.5-gke.1000).
STREAMING_IMAGE_TYPE = "COS_CONTAINERD"
# Artifact Registry Docker repositories: LOCATION-docker.pkg.dev/PROJECT/REPOSITORY/IMAGE
# (cloud.google.com/artifact-registry/docs/container-concepts, "docker push
# us-west1-docker.pkg.dev/PROJECT/quickstart-docker-repo/quickstart-image:tag1").
ARTIFACT_REGISTRY_HOST = r"[a-z0-9]+(?:-[a-z0-9]+)*-docker\.pkg\.dev"
# An image without a registry host is Docker Hub's (distribution/reference normalize.go).
DOCKER_HUB_HOSTS = ("docker.io", "index.docker.io", "registry-1.docker.io")

# --- secondary boot disks -----------------------------------------------------------------------
# GKE's "Use secondary boot disks to preload data or container images" (cloud.google.com/
# kubernetes-engine/docs/how-to/data-container-image-preloading, zh-cn editions; checked
# 2026-11-22), Requirements: Container-Optimized OS with containerd from 1.30.1-gke.1329000 in
# Standard and Autopilot (the newest edition also lists Ubuntu from 1.35.0-gke.1403000, but it
# keeps requirement 3, "enable Image streaming to use the secondary boot disk feature", and image
# streaming is COS only, so COS is required here); "when you modify the disk image you must
# create a new node pool" (secondary_boot_disks is ForceNew, components/platform/nodepool.py).
# Google's
# own Terraform sample sets gcfs_config { enabled = true } beside CONTAINER_IMAGE_CACHE
# (terraform-google-modules/terraform-docs-samples gke/standard/zonal/secondary-boot-disk/main.tf
# at f5229f30); no cluster-level setting is needed for a disk image in the cluster's project.
SECONDARY_BOOT_DISK_MIN_VERSION = "1.30.1-gke.1329000"
# Compute Engine image names: RFC 1035 labels of at most 63 characters; GKE takes
# global/images/NAME (same project) or projects/PROJECT/global/images/NAME (GKE's page above,
# "--secondary-boot-disk=disk-image=global/images/DISK_IMAGE_NAME").
DISK_IMAGE = (
    r"(?:projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/)?global/images/[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"
)

# --- model cache --------------------------------------------------------------------------------
# Bucket names: rules/buckets.py (Cloud Storage's naming rules).
# The folder becomes the mount option only-dir:<path> inside a comma-separated mountOptions list,
# so a comma would split it into a bogus option.
BUCKET_PATH = r"[A-Za-z0-9_.=@+-]+(?:/[A-Za-z0-9_.=@+-]+)*"
# What the Cloud Storage FUSE sidecar requests next to each pod: GKE's webhook defaults
# (GoogleCloudPlatform/gcs-fuse-csi-driver cmd/webhook/main.go lines 51-55 at 5fcdc04a: CPU request
# 250m, memory request 256Mi; "0" limits keep these requests, pkg/webhook/config.go
# populateResource). The capacity checks (rules/fit.py) count them on every pod with a cache.
FUSE_SIDECAR_MILLICORES = 250
FUSE_SIDECAR_MEMORY_BYTES = 256 * 2**20

# --- autoscaling --------------------------------------------------------------------------------
# Google's LLM inference autoscaling guide recommends the server's queue size ("the number of
# requests waiting to be processed ... maximize throughput and minimize cost within a target
# latency threshold"; cloud.google.com/kubernetes-engine/docs/best-practices/machine-learning/
# inference/autoscaling); vLLM exports it as the gauge vllm:num_requests_waiting (vllm
# vllm/v1/metrics/loggers.py). Target 10 waiting requests per pod is Google's reference value
# (GoogleCloudPlatform/accelerated-platforms use-cases/inferencing/serving/vllm/autoscaling/
# manifests/hpa-vllm-openai-queue-size.yaml at 9320f3b2: averageValue 10).
VLLM_QUEUE_METRIC = "vllm:num_requests_waiting"
# Prometheus metric names (prometheus.io/docs/concepts/data_model): [a-zA-Z_:][a-zA-Z0-9_:]*.
METRIC_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"


def _fullmatch(pattern: str, value: str) -> bool:
    return re.fullmatch(pattern, value, flags=re.ASCII) is not None


def registry_host(image: str) -> str:
    """The registry an image is pulled from; Docker Hub for a reference without a host."""
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def in_artifact_registry(image: str) -> bool:
    return _fullmatch(ARTIFACT_REGISTRY_HOST, registry_host(image))


# --- node pools ---------------------------------------------------------------------------------


def image_streaming(spec: NodePoolSpec) -> bool:
    """On when set, and on by default with a secondary boot disk (which needs it)."""
    if spec.image_streaming is not None:
        return spec.image_streaming
    return spec.secondary_boot_disk is not None


def pool_problems(i: int, spec: NodePoolSpec, ctx: Context) -> Iterator[Problem]:
    path = f"nodePools[{i}]"
    disk = spec.secondary_boot_disk
    if image_streaming(spec) and spec.image_type != STREAMING_IMAGE_TYPE:
        key = "imageStreaming" if spec.image_streaming else "secondaryBootDisk"
        yield Problem(
            f"{path}.{key}",
            f"GKE streams images (and reads preloaded ones) only on "
            f"{STREAMING_IMAGE_TYPE} nodes, and imageType is {spec.image_type}. Set imageType: "
            f"{STREAMING_IMAGE_TYPE}, or remove {key}.",
        )
    if disk is None:
        return
    if not _fullmatch(DISK_IMAGE, disk):
        yield Problem(
            f"{path}.secondaryBootDisk",
            f"{disk!r} is not a Compute Engine disk image. Use "
            "global/images/NAME (this project) or projects/PROJECT/global/images/NAME, the "
            "image Google's gke-disk-image-builder created (docs/cold-starts.md, "
            "'Preloaded images').",
        )
    if spec.image_streaming is False:
        yield Problem(
            f"{path}.imageStreaming",
            "false, but a secondary boot disk in container-image-cache "
            "mode works only with image streaming on (GKE's secondary boot disk requirements). "
            "Remove imageStreaming (it defaults to on with secondaryBootDisk).",
        )
    yield from version_problems(f"{path}.secondaryBootDisk", ctx.channel)


def version_problems(path: str, release_channel: str | None) -> list[Problem]:
    """A channel whose new clusters start below GKE's minimum for secondary boot disks."""
    default = pins.CHANNEL_DEFAULT_VERSION.get(release_channel or "")
    if default is None or pins.gke_version(default) >= pins.gke_version(
        SECONDARY_BOOT_DISK_MIN_VERSION
    ):
        return []
    return [
        Problem(
            f"{path}",
            f"secondary boot disks need GKE {SECONDARY_BOOT_DISK_MIN_VERSION} or later, and "
            f"new clusters on the {release_channel} channel start at {default}. Use a newer "
            "cluster.releaseChannel, or remove secondaryBootDisk.",
        )
    ]


# ComputeClass priorities take storage.secondaryBootDisks from GKE 1.31.2-gke.1105000 (GKE's
# ComputeClass CRD reference, checked 2026-11-23; the field is in the CRD vendored in tools/crds).
CLASS_BOOT_DISK_MIN_VERSION = "1.31.2-gke.1105000"


def class_boot_disk_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """workloads[].secondaryBootDisk: preloaded images for the nodes of its ComputeClass."""
    disk, path = w.secondary_boot_disk, f"workloads[{i}].secondaryBootDisk"
    if disk is None:
        return
    if not w.fallback:
        yield Problem(
            path,
            "applies to the nodes GKE creates from the workload's ComputeClass, and the "
            "workload has no fallback (no ComputeClass). Put it on the node pool "
            "(nodePools[].secondaryBootDisk), or add fallback.",
        )
    if not _fullmatch(DISK_IMAGE, disk):
        yield Problem(
            path,
            f"{disk!r} is not a Compute Engine disk image. Use global/images/NAME (this project) "
            "or projects/PROJECT/global/images/NAME, the image Google's gke-disk-image-builder "
            "created (docs/cold-starts.md, 'Preloaded images').",
        )
    default = pins.CHANNEL_DEFAULT_VERSION.get(ctx.channel or "")
    if default is not None and pins.gke_version(default) < pins.gke_version(
        CLASS_BOOT_DISK_MIN_VERSION
    ):
        yield Problem(
            path,
            f"ComputeClass boot disks need GKE {CLASS_BOOT_DISK_MIN_VERSION} or later, and new "
            f"clusters on the {ctx.channel} channel start at {default}. Use a newer "
            "cluster.releaseChannel, or remove secondaryBootDisk.",
        )


# --- workloads ----------------------------------------------------------------------------------


def workload_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """modelCache and autoscale: on GKE only, each within what GKE and the server take."""
    path = f"workloads[{i}]"
    cache, scale = w.model_cache, w.autoscale
    if ctx.existing:
        if cache is not None:
            yield Problem(
                f"{path}.modelCache",
                "needs GKE (the Cloud Storage FUSE CSI driver and Workload Identity), and this "
                "cluster is an existing one. Remove it.",
            )
        if scale is not None and scales_on_metric(w):
            yield Problem(
                f"{path}.autoscale.minReplicas",
                f"{scale.min_replicas} scales on a Prometheus metric through Managed Service for "
                "Prometheus, which needs GKE, and this cluster is an existing one. Set "
                "minReplicas: 0 (KEDA's HTTP add-on scales on requests, on any cluster) or "
                "remove autoscale.",
            )
        if scale is not None:
            yield from _autoscale_problems(path, w, scale, ctx)
        return
    if cache is not None:
        yield from _model_cache_problems(path, w, cache, ctx)
    if scale is not None:
        yield from _autoscale_problems(path, w, scale, ctx)


def _model_cache_problems(
    path: str, w: WorkloadSpec, cache: ModelCacheSpec, ctx: Context
) -> Iterator[Problem]:
    yield from buckets.bucket_problems(f"{path}.modelCache.bucket", cache.bucket, ctx)
    if cache.path is not None and (
        not _fullmatch(BUCKET_PATH, cache.path) or ".." in cache.path.split("/")
    ):
        yield Problem(
            f"{path}.modelCache.path",
            f"{ctx.show(f'{path}.modelCache.path', cache.path)} is not a folder in the bucket: "
            "use a relative path such as 'Qwen/Qwen2.5-0.5B-Instruct' (no leading '/', no '..', "
            "no commas).",
        )
    if allocatable.parse_memory(cache.file_cache_size) < 2**30:
        yield Problem(
            f"{path}.modelCache.fileCacheSize",
            f"{ctx.show(f'{path}.modelCache.fileCacheSize', cache.file_cache_size)} is too small "
            "for model weights: give the file cache at least 1Gi, more than the model's size "
            "(e.g. '30Gi').",
        )
    taken = {"/dev/shm": "the shared-memory volume"}
    if w.cache is not None:
        taken[w.cache.path] = "cache.path"
    if w.storage is not None:
        taken[w.storage.mount_path] = "storage.mountPath"
    if cache.mount_path.rstrip("/") in taken:
        yield Problem(
            f"{path}.modelCache.mountPath",
            f"{cache.mount_path} is already used by "
            f"{taken[cache.mount_path.rstrip('/')]}. Choose another path, e.g. /models.",
        )


def _autoscale_problems(
    path: str, w: WorkloadSpec, scale: AutoscaleSpec, ctx: Context
) -> Iterator[Problem]:
    if not kind_spec(w).scales:
        yield Problem(
            f"{path}.autoscale",
            f"a {w.kind} runs to completion; only a {kinds_that(lambda k: k.scales)} "
            "scales with load. Remove autoscale.",
        )
    if "replicas" in w.model_fields_set:
        yield Problem(
            f"{path}.replicas",
            "the HorizontalPodAutoscaler sets the replica count between autoscale.minReplicas and "
            "maxReplicas, and a fixed count would fight it on every `pulumi up`. Remove replicas.",
        )
    if scale.min_replicas > scale.max_replicas:
        yield Problem(
            f"{path}.autoscale.minReplicas",
            f"{scale.min_replicas} is more than maxReplicas "
            f"({scale.max_replicas}). Lower minReplicas or raise maxReplicas.",
        )
    if w.port is None:
        yield Problem(
            f"{path}.autoscale",
            "the metric is scraped from the container's port at /metrics, and "
            "the workload has no port. Set port.",
        )
    if sleeps(w):
        yield from _to_zero_problems(path, w, scale)
        return
    for key in ("idle_seconds", "wake_timeout_seconds"):
        if key in scale.model_fields_set:
            yield Problem(
                f"{path}.autoscale.{to_camel(key)}",
                "applies only when the model sleeps (minReplicas: 0); with minReplicas "
                f"{scale.min_replicas} replicas never go to zero. Remove it or set "
                "minReplicas: 0.",
            )
    if scale.metric is None and not formats.is_vllm_image(w.image):
        yield Problem(
            f"{path}.autoscale.metric",
            f"required for the image {ctx.show(f'{path}.image', w.image)}: name its Prometheus "
            f"gauge of queued requests at /metrics (vLLM's is {VLLM_QUEUE_METRIC}).",
        )
    if scale.metric is not None and not _fullmatch(METRIC_NAME, scale.metric):
        yield Problem(
            f"{path}.autoscale.metric",
            f"{ctx.show(f'{path}.autoscale.metric', scale.metric)} is not a Prometheus metric "
            "name: use letters, digits, '_' and ':' (e.g. vllm:num_requests_waiting).",
        )


def _to_zero_problems(path: str, w: WorkloadSpec, scale: AutoscaleSpec) -> Iterator[Problem]:
    """minReplicas 0: requests reach the model only through its gate and KEDA's interceptor,
    which counts them and holds them while a replica starts."""
    if w.expose is None:
        yield Problem(
            f"{path}.autoscale.minReplicas",
            "0 needs expose: a sleeping model is woken by a request that reaches it through the "
            "gate and KEDA's interceptor, which hold it while a replica starts; without expose "
            "nothing reaches it. Add expose (e.g. {port: 443, type: ClusterIP}) or set "
            "minReplicas: 1.",
        )
    if scale.metric is not None:
        yield Problem(
            f"{path}.autoscale.metric",
            "with minReplicas: 0 KEDA's HTTP add-on scales on requests in flight (autoscale."
            "target per replica), not on a Prometheus metric. Remove metric, or set "
            "minReplicas: 1 to scale on it.",
        )


def vllm_args_for_cache(args: tuple[str, ...], target: str) -> tuple[str, ...]:
    """vLLM loads the model from `target` (the mounted bucket folder, or the `gs://` model the
    streamer reads) instead of downloading it.

    A Hugging Face id in `--model` becomes `--served-model-name`, so clients keep asking for the
    same model name (vLLM serves a local or streamed model under its path otherwise). A local or
    `gs://` model is left as the user wrote it.
    """
    result = list(args)
    name: str | None = None

    def hub_id(value: str) -> bool:
        return not value.startswith(("/", "gs://"))

    if result and not result[0].startswith("-"):  # the positional model (rules/vllm.py)
        if hub_id(result[0]):
            name, result[0] = result[0], target
    else:
        for index, arg in enumerate(result):
            if arg == "--model" and index + 1 < len(result):
                if hub_id(result[index + 1]):
                    name, result[index + 1] = result[index + 1], target
                break
            if arg.startswith("--model="):
                value = arg.split("=", 1)[1]
                if hub_id(value):
                    name, result[index] = value, f"--model={target}"
                break
        else:
            result = [target, *result]
    served = any(a == "--served-model-name" or a.startswith("--served-model-name=") for a in args)
    if name is not None and not served:
        result += ["--served-model-name", name]
    return tuple(result)


# --- advisories ---------------------------------------------------------------------------------


def advisories(workloads: tuple[WorkloadConfig, ...]) -> list[str]:
    """Workloads whose image a streaming pool cannot stream: it is downloaded whole instead."""
    found = []
    for w in workloads:
        name, image, pool = w.spec.name, w.spec.image, w.node_pool
        if pool is None or not pool.image_streaming or in_artifact_registry(image):
            continue
        host = registry_host(image)
        hub = (
            " Google's page lists public Docker Hub images as eligible in some editions; "
            "mirroring to Artifact Registry (a remote repository works) makes it certain."
            if host in DOCKER_HUB_HOSTS
            else ""
        )
        found.append(
            f"workloads {name}: node pool {pool.name} streams images, but {image} is pulled "
            f"from {host}, not Artifact Registry (LOCATION-docker.pkg.dev/...); GKE streams only "
            f"Artifact Registry images and downloads the rest whole, as without streaming.{hub}"
        )
    return found
