"""The NVIDIA driver each workload's image needs, and the driver each pool gets for it.

Which CUDA an image is built for is read, never guessed from a tag's spelling: from the table of
vLLM releases the catalog knows (components/facts/pins.py VLLM_RELEASES, by digest, else by tag),
else from the stack (`workloads[].cudaVersion`). A CUDA 13 build needs an R580 driver, which GKE
installs only with its `latest` driver version (pins.py cites the sources), and a GPU of compute
capability 7.5 or newer. A pool that installs an older driver would start the server and crash it
at its first CUDA call; that is refused here, before anything exists. A vLLM image the table does
not know, with no cudaVersion, is an advisory: the plan cannot tell, and says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ...facts import catalog, pins
from .. import formats
from ..context import Context
from ..problems import Problem
from ..schema import Driver, Mode, NodePoolSpec, WorkloadSpec


@dataclass(frozen=True)
class Cuda:
    """The CUDA version an image is built for, and where the plan read it."""

    version: str
    source: str

    @property
    def needs_r580(self) -> bool:
        return int(self.version.split(".")[0]) >= pins.CUDA_NEEDING_R580


def release(image: str) -> pins.VllmRelease | None:
    """The table's row for an image: by its digest (the bytes a pull gets, whatever the tag or
    registry), else by the tag of a vllm-openai repository (Docker Hub or a mirror)."""
    name, tag, digest = formats.image_parts(image)
    by_digest = [r for r in pins.VLLM_RELEASES if digest and r.digest == digest.lower()]
    if by_digest:
        return by_digest[0]
    if name.rsplit("/", 1)[-1] != "vllm-openai":
        return None
    return next((r for r in pins.VLLM_RELEASES if r.tag == tag), None)


def image_cuda(w: WorkloadSpec, i: int | None = None) -> Cuda | None:
    """The CUDA of the workload's image: the release table's, else its cudaVersion, else None."""
    row = release(w.image)
    if row is not None:
        return Cuda(row.cuda, f"vLLM's {row.tag} image")
    if w.cuda_version is not None:
        return Cuda(
            w.cuda_version, f"workloads[{i}].cudaVersion" if i is not None else "cudaVersion"
        )
    return None


def needs_latest_driver(w: WorkloadSpec) -> bool:
    """An image built for CUDA 13 or newer: it needs R580, GKE's `latest` driver."""
    cuda = image_cuda(w)
    return cuda is not None and cuda.needs_r580


def pool_driver(spec: NodePoolSpec, on_pool: Sequence[WorkloadSpec]) -> Driver:
    """The pool's driver: as set, else `latest` when a workload on it needs R580, else GKE's
    `default`."""
    if spec.driver is not None:
        return spec.driver
    wants_latest = any(needs_latest_driver(w) for w in on_pool)
    return "latest" if wants_latest and spec.image_type == "COS_CONTAINERD" else "default"


def _driver_fix(index: int, spec: NodePoolSpec, driver: Driver, w: WorkloadSpec) -> str:
    cuda12 = (
        f"use the CUDA 12 build {pins.VLLM_IMAGE_CUDA12}" if formats.is_vllm_image(w.image) else ""
    )
    if spec.image_type != "COS_CONTAINERD":
        fix = (
            f"set nodePools[{index}].imageType: COS_CONTAINERD (GKE installs its latest "
            "driver only on COS)"
        )
    elif driver == "installer":
        fix = (
            f"set nodePools[{index}].driver: latest (or remove driver): GKE then installs R580 "
            "and the installer DaemonSet goes"
        )
        cuda12 = f"keep the installer and {cuda12}" if cuda12 else ""
    else:
        fix = f"set nodePools[{index}].driver: latest (or remove driver)"
    return f"{fix}, or {cuda12}" if cuda12 else fix


def pool_problems(
    index: int, spec: NodePoolSpec, driver: Driver, on_pool: Sequence[tuple[int, WorkloadSpec]]
) -> Iterator[Problem]:
    for i, w in on_pool:
        cuda = image_cuda(w, i)
        if cuda is None or not cuda.needs_r580 or driver == "latest":
            continue
        yield Problem(
            f"workloads[{i}].image",
            f"{w.image} is built for CUDA {cuda.version} ({cuda.source}) and needs an "
            f"NVIDIA driver {pins.VLLM_MIN_DRIVER} or newer, but node pool {index} gets GKE's "
            f"{driver!r} driver, which is older: the server would fail at its first CUDA "
            f"call. To fix it, {_driver_fix(index, spec, driver, w)}.",
        )


def workload_problems(i: int, w: WorkloadSpec, ctx: Context) -> list[Problem]:
    """A cudaVersion the release table contradicts; a CUDA 13 image on a GPU too old for it."""
    row = release(w.image)
    if row is not None and w.cuda_version is not None and w.cuda_version != row.cuda:
        return [
            Problem(
                f"workloads[{i}].cudaVersion",
                f"{w.cuda_version!r}, but {w.image} is vLLM's {row.tag} image, a CUDA "
                f"{row.cuda} build ({row.source}). Remove cudaVersion.",
            )
        ]
    cuda = image_cuda(w, i)
    if ctx.existing or cuda is None or not cuda.needs_r580 or w.gpu.type not in catalog.GPU_TYPES:
        return []
    gpu = catalog.lookup(w.gpu.type)
    if gpu.compute_capability == (0, 0) or gpu.compute_capability >= (
        pins.VLLM_MIN_COMPUTE_CAPABILITY
    ):
        return []
    have = ".".join(map(str, gpu.compute_capability))
    need = ".".join(map(str, pins.VLLM_MIN_COMPUTE_CAPABILITY))
    vllm_ok = formats.is_vllm_image(w.image) and gpu.compute_capability >= (7, 0)
    alternative = (
        f"use the CUDA 12 build {pins.VLLM_IMAGE_CUDA12}"
        if vllm_ok
        else "pick a newer GPU, or an image built for CUDA 12"
    )
    return [
        Problem(
            f"workloads[{i}].image",
            f"{w.image} is a CUDA {cuda.version} build ({cuda.source}), which needs a GPU of "
            f"compute capability {need} or newer; {gpu.name} has {have}. To fix it, "
            f"{alternative}.",
        )
    ]


def advisories(workloads: Sequence[tuple[int, WorkloadSpec]]) -> list[str]:
    """vLLM images the release table does not know, with no cudaVersion: the plan cannot tell
    which driver they need, so it says so rather than guess from the tag."""
    return [
        f"workloads[{i}].image: {w.image} is a vLLM server image the plan's table of vLLM "
        "releases does not know (components/facts/pins.py VLLM_RELEASES), so which CUDA it is "
        "built for is unknown and its GPUs get GKE's `default` driver, too old for a CUDA 13 "
        f"build (vLLM v0.20.0 and later, unless tagged -cu12x). Set workloads[{i}].cudaVersion "
        f'to the CUDA the image is built for (e.g. "13.0"), or use {pins.VLLM_IMAGE}.'
        for i, w in workloads
        if formats.is_vllm_image(w.image) and image_cuda(w) is None
    ]


def autopilot_selector(w: WorkloadSpec, mode: Mode | None) -> str | None:
    """Autopilot: the driver version a pod selects (cloud.google.com/gke-gpu-driver-version)."""
    return pins.GKE_DRIVER_FOR_VLLM if mode == "autopilot" and needs_latest_driver(w) else None
