"""Mount paths: each path of a container once, and none over the image's system folders.

The API server refuses a pod whose container mounts two volumes at one path (`mountPath: Invalid
value: ...: must be unique`, Kubernetes pkg/apis/core/validation `ValidateVolumeMounts`), so
`pulumi up` would fail at the workload after the cluster and its GPU nodes were created; here it
fails before anything is.

A volume mounted over a system folder (issue 44) hides the image's own programs, libraries or
configuration there; a bucket's objects take their place (`/etc/ld.so.preload`, `/usr/lib/...`),
so whoever may write to the bucket chooses what the container runs, and `/proc`, `/sys`, `/dev`
and `/run` belong to the runtime. The API server takes such paths; they are refused here."""

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
# The system folders no volume is mounted over, nor under (`/lib*`: /lib, /lib32, /lib64, ...).
SYSTEM_FOLDERS = (
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/proc",
    "/sys",
    "/dev",
    "/var/run",
    "/run",
    "/boot",
    "/root",
)
# Where each key's volume goes by default, offered as the fix.
EXAMPLES = {
    "cache.path": "/cache",
    "storage.mountPath": "/data",
    "modelCache.mountPath": "/models",
    "output.mountPath": "/out",
}


def normal(path: str) -> str:
    """`path` as the container sees it: `//etc/`, `/x/../etc` and `/etc/.` are all /etc (POSIX
    normpath keeps a leading `//`, which Linux reads as `/`)."""
    return "/" + posixpath.normpath(path).lstrip("/")


def system_folder(path: str) -> str | None:
    """The system folder `path` is or lies in (`/` for the root itself), else None."""
    path = normal(path)
    if path == "/":
        return "/"
    top = "/" + path.split("/")[1]
    if top.startswith("/lib"):
        return top
    return next((f for f in SYSTEM_FOLDERS if path == f or path.startswith(f + "/")), None)


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
        where, folder = normal(value), system_folder(value)
        if where in taken:
            yield Problem(
                f"{path}.{key}",
                f"{value} is already the mount path of {taken[where]}; a container mounts one "
                "volume per path (the API server refuses the pod). Pick another path.",
            )
        elif folder is not None:
            inside = "the container's root" if folder == "/" else f"in the system folder {folder}"
            yield Problem(
                f"{path}.{key}",
                f"{value} is {inside}: a volume on a system folder hides the image's own "
                "programs, libraries or configuration, and a bucket's objects would take their "
                "place (whoever may write to the bucket would choose what runs). System folders: "
                "/, /etc, /usr, /bin, /sbin, /lib*, /proc, /sys, /dev, /var/run, /run, /boot, "
                f"/root. Mount it in a folder of its own, e.g. {EXAMPLES[key]}.",
            )
        if where not in taken:
            taken[where] = f"{path}.{key}"
