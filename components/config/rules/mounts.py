"""Mount paths: each path of a container once. The API server refuses a pod whose container mounts
two volumes at one path (`mountPath: Invalid value: ...: must be unique`, Kubernetes
pkg/apis/core/validation `ValidateVolumeMounts`), so `pulumi up` would fail at the workload after
the cluster and its GPU nodes were created; here it fails before anything is."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator

from ..context import Context
from ..problems import Problem
from ..schema import WorkloadSpec

# Paths the program mounts in workload containers itself (components/service/workload.py): shared
# memory
# for the model server, and what stays writable under the read-only root filesystem.
SHM_PATH = "/dev/shm"
TMP_PATH = "/tmp"
HOME_PATH = "/home/gke-gpu"
PROGRAM_MOUNTS = {
    SHM_PATH: "the shared-memory volume the program mounts for the model server",
    TMP_PATH: "the writable /tmp the program mounts (the root filesystem is read-only)",
}


def mounts_home(has_cache: bool, env_names: Iterable[str]) -> bool:
    """Whether the program mounts an emptyDir at HOME_PATH: HOME is the cache disk when there is
    one, and a workload that sets HOME itself keeps it (components/service/workload.py)."""
    return not has_cache and "HOME" not in env_names


def problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    path = f"workloads[{i}]"
    taken = dict(PROGRAM_MOUNTS)
    if mounts_home(w.cache is not None, {*w.env, *w.secret_env}):
        taken[HOME_PATH] = "the writable HOME the program mounts (the root filesystem is read-only)"
    for key, value in (
        ("cache.path", w.cache.path if w.cache else None),
        ("storage.mountPath", w.storage.mount_path if w.storage else None),
        ("modelCache.mountPath", w.model_cache.mount_path if w.model_cache else None),
        ("output.mountPath", w.output.mount_path if w.output else None),
    ):
        if value is None:
            continue
        normal = posixpath.normpath(value)
        if normal in taken:
            yield Problem(
                f"{path}.{key}",
                f"{value} is already the mount path of {taken[normal]}; a container mounts one "
                "volume per path (the API server refuses the pod). Pick another path.",
            )
        else:
            taken[normal] = f"{path}.{key}"
