"""The NVIDIA driver each workload's image needs, and the driver each pool gets for it.

The default image (components/facts/pins.py VLLM_IMAGE) is a CUDA 13 build: it needs an R580 driver,
which GKE installs only with its `latest` driver version (pins.py cites the sources), and a GPU
of compute capability 7.5 or newer. A pool that installs the `default` driver would start the
server and crash it at its first CUDA call; that is refused here, before anything exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from components.config import formats
from components.config.context import Context
from components.config.problems import Problem
from components.config.schema import Driver, Mode, NodePoolSpec, WorkloadSpec
from components.facts import catalog, pins

# vLLM's unsuffixed vllm-openai tags are CUDA 13 builds from v0.20.0 on (vllm-project/vllm PR 39878,
# cited in components/facts/pins.py); `-cu12x` tags are the CUDA 12 builds.
_VLLM_TAG = re.compile(r"v(\d+)\.(\d+)\.\d+(?:\.post\d+)?")


def needs_latest_driver(w: WorkloadSpec) -> bool:
    """A vLLM OpenAI server image that is a CUDA 13 build, from Docker Hub or any mirror."""
    match = _VLLM_TAG.fullmatch(formats.vllm_tag(w.image) or "")
    return match is not None and (int(match.group(1)), int(match.group(2))) >= (0, 20)


def pool_driver(spec: NodePoolSpec, on_pool: Sequence[WorkloadSpec]) -> Driver:
    """The pool's driver: as set, else `latest` when a workload on it needs R580, else GKE's
    `default`."""
    if spec.driver is not None:
        return spec.driver
    wants_latest = any(needs_latest_driver(w) for w in on_pool)
    return "latest" if wants_latest and spec.image_type == "COS_CONTAINERD" else "default"


def pool_problems(
    index: int, spec: NodePoolSpec, driver: Driver, on_pool: Sequence[tuple[int, WorkloadSpec]]
) -> Iterator[Problem]:
    for i, w in on_pool:
        if not needs_latest_driver(w) or driver == "latest":
            continue
        if spec.image_type != "COS_CONTAINERD":
            fix = (
                f"set nodePools[{index}].imageType: COS_CONTAINERD (GKE installs its latest "
                f"driver only on COS), or use the CUDA 12 build {pins.VLLM_IMAGE_CUDA12}"
            )
        else:
            fix = f"set nodePools[{index}].driver: latest (or remove driver)"
        yield Problem(
            f"workloads[{i}].image",
            f"{w.image} is built for CUDA {pins.VLLM_CUDA} and needs an "
            f"NVIDIA driver {pins.VLLM_MIN_DRIVER} or newer, but node pool {index} gets GKE's "
            f"{driver!r} driver, which is older: the server would fail at its first CUDA "
            f"call. To fix it, {fix}.",
        )


def workload_problems(i: int, w: WorkloadSpec, ctx: Context) -> list[Problem]:
    """The default image on a GPU too old for its CUDA build."""
    if ctx.existing or not needs_latest_driver(w) or w.gpu.type not in catalog.GPU_TYPES:
        return []
    gpu = catalog.lookup(w.gpu.type)
    if gpu.compute_capability == (0, 0) or gpu.compute_capability >= (
        pins.VLLM_MIN_COMPUTE_CAPABILITY
    ):
        return []
    have = ".".join(map(str, gpu.compute_capability))
    need = ".".join(map(str, pins.VLLM_MIN_COMPUTE_CAPABILITY))
    alternative = (
        f"use the CUDA 12 build {pins.VLLM_IMAGE_CUDA12}"
        if gpu.compute_capability >= (7, 0)
        else "pick a newer GPU (vLLM needs compute capability 7.0 or newer)"
    )
    return [
        Problem(
            f"workloads[{i}].image",
            f"{w.image} is a CUDA {pins.VLLM_CUDA} build, which needs a GPU of compute capability "
            f"{need} or newer; {gpu.name} has {have}. To fix it, {alternative}.",
        )
    ]


def autopilot_selector(w: WorkloadSpec, mode: Mode | None) -> str | None:
    """Autopilot: the driver version a pod selects (cloud.google.com/gke-gpu-driver-version)."""
    return pins.GKE_DRIVER_FOR_VLLM if mode == "autopilot" and needs_latest_driver(w) else None
