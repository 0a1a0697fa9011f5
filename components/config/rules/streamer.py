"""workloads[].modelCache, streamed: vLLM reads the weights straight from Cloud Storage with its
Run:ai Model Streamer instead of through a Cloud Storage FUSE mount (issue 46).

Read in vLLM v0.29.0 (the release's sdist on PyPI, vllm-0.29.0.tar.gz):
  - vllm/model_executor/model_loader/runai_streamer_loader.py: `--load-format runai_streamer`;
    line 34 allows exactly three `--model-loader-extra-config` keys (distributed, concurrency,
    memory_limit), lines 62-72 take memory_limit as bytes (an int, -1 for none) and set it as
    RUNAI_STREAMER_MEMORY_LIMIT; safetensors only (lines 113-116: "Cannot find any safetensors
    model weights" otherwise).
  - vllm/transformers_utils/runai_utils.py line 16: a `gs://` model is streamed; vllm/config/
    model.py lines 1066-1115 copy its config and tokenizer files into VLLM_ASSETS_CACHE
    (envs.py lines 932-936: $XDG_CACHE_HOME or ~/.cache, /vllm/assets), which is writable in
    every pod (HOME and the cache disk: components/service/pod.py).
Read in run-ai/runai-model-streamer at 0.15.9 (f73a19ac):
  - its env-vars page (src/env-vars.md lines 36-46) and requests_iterator.py line 14: the CPU
    buffer the weights are staged in defaults to 40 GB ("40000000000"), more than a small GPU
    node's memory; concurrency defaults to 8 reads on object storage (lines 3-15).
  - its usage page (src/usage.md lines 201-217): credentials from the metadata server on GKE
    (Workload Identity), so the pod's own Kubernetes service account reads, as with the mount.
  - py/runai_model_streamer_gcs/runai_model_streamer_gcs/files/files.py lines 47 and 68 call
    get_bucket, which needs storage.buckets.get: beyond roles/storage.objectViewer, so a streamed
    bucket also grants roles/storage.legacyBucketReader (components/service/model_cache.py).
Google's reference architecture streams the same way (GoogleCloudPlatform/accelerated-platforms
at 9320f3b2, inference-ref-arch .../vllm-native-cache-offloading/single-tier/base/
deployment.yaml lines 33-47: `--model=gs://...`, `--load-format=runai_streamer`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from fractions import Fraction

from ...facts import pins
from .. import formats
from ..context import Context
from ..problems import Problem
from ..schema import WorkloadSpec
from . import adapters, drivers, vllm

# The staging buffer the pod gives the streamer: a quarter of its memory, the rest left to vLLM's
# own processes (their imports, the tokenizer, the CUDA context), split between the pod's GPU
# processes, each of which stages its own (the loader sets the limit per process,
# runai_streamer_loader.py lines 62-73). The share is this project's choice, not a figure of the
# streamer's; never above the streamer's own default. With several GPUs the ranks also split the
# reading between them (`distributed`, weight_utils.py lines 1001-1019), as Google's reference
# architecture asks (`--model-loader-extra-config={"distributed":true}`).
BUFFER_SHARE = Fraction(1, 4)
STREAMER_DEFAULT_BUFFER_BYTES = 40_000_000_000
LOAD_FORMAT = "runai_streamer"


def mounted_because(w: WorkloadSpec) -> str | None:
    """Why the workload's model bucket is mounted rather than streamed (the plan's words), or
    None when vLLM streams it. For a workload with modelCache."""
    cache = w.model_cache
    assert cache is not None, "a workload with modelCache"
    release = drivers.release(w.image)
    if cache.stream is False:
        return "modelCache.stream: false"
    if not formats.is_vllm_image(w.image):
        return "the streamer is vLLM's own loader, and the image is not a vLLM server"
    if release is None or release.tag not in pins.STREAMER_GCS_TAGS:
        tag = release.tag if release else w.image.split("@")[0].rpartition(":")[2]
        tag = f"vLLM {tag}" if tag else "this vLLM image"
        confirmed = ", ".join(sorted(pins.STREAMER_GCS_TAGS))
        return (
            f"{tag} is not an image its Cloud Storage backend is confirmed in ({confirmed}: "
            f"{pins.STREAMER_GCS_SOURCE})"
        )
    if any(not adapters.from_hub(a) for a in w.adapters):
        return "an adapter is read from modelCache.mountPath, which only the mount has"
    args = vllm.server_args(w.command, w.args)
    if _given(args, "--load-format"):
        return "args set --load-format"
    mount = cache.mount_path.rstrip("/") or "/"
    values = [a.split("=", 1)[1] if a.startswith("--") and "=" in a else a for a in args]
    if any(v == mount or v.startswith(f"{mount}/") for v in values):
        return "args read files from modelCache.mountPath, which only the mount has"
    if not cache.path:
        return (
            "modelCache.path is not set: the streamer would copy every file of the whole bucket "
            "but the weights at each start; set the model's folder"
        )
    return None


def _given(args: list[str], flag: str) -> bool:
    """Whether `args` set `flag`, in either spelling vLLM takes (`--load-format`, `--load_format`),
    as one item or `--flag=value`."""
    spellings = (flag, flag.replace("-", "_").replace("__", "--", 1))
    return any(a in spellings or a.startswith(tuple(f"{s}=" for s in spellings)) for a in args)


def streams(w: WorkloadSpec) -> bool:
    """Whether vLLM streams the workload's model from its bucket (no FUSE mount, no sidecar)."""
    return w.model_cache is not None and mounted_because(w) is None


def problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """modelCache.stream: true where the streamer cannot run; a gs:// model outside the bucket the
    pod may read."""
    if w.model_cache is None:
        return
    bucket = f"gs://{w.model_cache.bucket}/"
    args = vllm.server_args(w.command, w.args)
    outside = [a for a in args if "gs://" in a and bucket not in f"{a}/"]
    if outside and formats.is_vllm_image(w.image):
        yield Problem(
            f"workloads[{i}].args",
            f"name {ctx.show(f'workloads[{i}].args', outside[0])}, a model in another bucket than "
            f"modelCache.bucket ({w.model_cache.bucket}), and "
            "the pod may read only that one (Workload Identity is granted on it alone). Set "
            "modelCache.bucket to the model's bucket and modelCache.path to its folder.",
        )
    if w.model_cache.stream is not True:
        return
    why = mounted_because(w)
    if why is not None:
        yield Problem(
            f"workloads[{i}].modelCache.stream",
            f"true, but vLLM cannot stream this model: {why}. Remove stream (the bucket is then "
            "mounted through Cloud Storage FUSE), or use the pinned vLLM image.",
        )


def model_uri(w: WorkloadSpec) -> str:
    """The bucket's copy of the model, `gs://bucket/path`: what vLLM streams, and where the plan
    says a mounted one is read from."""
    cache = w.model_cache
    assert cache is not None
    return f"gs://{cache.bucket}/{cache.path or ''}".rstrip("/")


def buffer_bytes(memory_bytes: int, processes: int = 1) -> int:
    """Each GPU process's streamer buffer in a pod of `memory_bytes` with `processes` of them
    (BUFFER_SHARE of the pod split between them, at most the streamer's default each)."""
    share = int(memory_bytes * BUFFER_SHARE) // max(1, processes)
    return min(STREAMER_DEFAULT_BUFFER_BYTES, share)


def loader_args(w: WorkloadSpec, buffer: int) -> tuple[str, ...]:
    """The flags that stream the weights through a CPU buffer of `buffer` bytes per process,
    split between the ranks of a pod with several GPUs; a loader config of the args' own is
    kept, not overridden."""
    flags: tuple[str, ...] = ("--load-format", LOAD_FORMAT)
    if _given(vllm.server_args(w.command, w.args), "--model-loader-extra-config"):
        return flags
    extra: dict[str, object] = {"memory_limit": buffer}
    if w.gpu.count > 1:
        extra["distributed"] = True
    return (*flags, "--model-loader-extra-config", json.dumps(extra, separators=(",", ":")))
