"""`workloads[].storage`, `cache` and `modelCache`: the disks and buckets the pods mount."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from .base import AbsolutePath, K8sName, MemoryQuantity, Model


class StorageSpec(Model):
    size: MemoryQuantity
    """Volume claim size, e.g. `100Gi`."""
    mount_path: AbsolutePath
    """Where the volume is mounted; not in a system folder (`/etc`, `/usr`, `/lib*`, ...)."""
    storage_class: K8sName | None = None
    """StorageClass of the claim.

    Default: the cluster's default
    """
    retention: Literal["Retain", "Delete"] = "Retain"
    """What happens to the pods' disks when the StatefulSet is deleted (the workload removed or
    replaced): `Retain` keeps them (billed) for a StatefulSet of the same name to mount again;
    `Delete` deletes them with it.

    The StatefulSet's `persistentVolumeClaimRetentionPolicy.whenDeleted` (Kubernetes 1.32 GA; a
    scaled-down pod's disk is kept either way). `pulumi destroy` deletes the namespace, and the
    claims with it, whatever this says. See [Day 2](day-2.md).
    """


class CacheSpec(Model):
    size: MemoryQuantity = "30Gi"
    """Size of the per-pod disk."""
    path: AbsolutePath = "/cache"
    """Where it is mounted; not in a system folder (`/etc`, `/usr`, `/lib*`, ...)."""
    storage_class: K8sName | None = None
    """StorageClass of the per-pod disk. On A3 Ultra, A4, A4X and G4 machines, which attach only
    Hyperdisk volumes, a class with parameters.type hyperdisk-balanced (see GPUs, "Boot disks and
    cache disks").

    Default: the cluster's default
    """


class ModelCacheSpec(Model):
    """Model weights read from a Cloud Storage bucket (FUSE CSI driver), checked in coldstart.py."""

    bucket: Annotated[str, StringConstraints(max_length=222)]
    """The bucket holding the model (its name alone, without `gs://`), named as Cloud Storage
    names buckets."""
    path: Annotated[str, StringConstraints(max_length=1024)] | None = None
    """The model's folder in the bucket (`only-dir`), e.g. `Qwen/Qwen2.5-0.5B-Instruct`.

    Default: the whole bucket
    """
    mount_path: AbsolutePath = "/models"
    """Mounted bucket: where it appears in the container; not in a system folder (`/etc`, `/usr`,
    `/lib*`, ...).

    A vLLM workload's model (its first argument; `--model` is deprecated in vLLM) is pointed
    there (streamed: at `gs://bucket/path`) and its old value kept as `--served-model-name`.
    """
    file_cache_size: MemoryQuantity = "30Gi"
    """Mounted bucket: per-pod disk for Cloud Storage FUSE's file cache (parallel downloads land
    here).

    Make it larger than the model.
    """
    # derived: rules/streamer.py mounted_because.
    stream: bool | None = None
    """vLLM streams the weights (safetensors) from the bucket with its Run:ai Model Streamer
    (`--load-format runai_streamer`, `gs://` model) instead of reading a Cloud Storage FUSE mount.

    `false`: mount the bucket at `mountPath` (weights in another format, or files the server
    reads from the mount). `true`: refused where the streamer cannot run, with the reason.

    Default: streamed for a vLLM image the streamer is confirmed in (`vllm/vllm-openai:v0.29.0`)
    with `path` set and no adapter or argument reading files under `mountPath`; mounted
    otherwise, the plan says why
    """
