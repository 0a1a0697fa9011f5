"""LoRA adapters (workloads[].adapters): what vLLM 0.29.0 accepts and how the server is told.

Read from the vLLM 0.29.0 wheel (vllm-0.29.0-cp38-abi3-manylinux_2_28_x86_64.whl, read
2026-11-23), the version components/facts/pins.py pins:
  - vllm/engine/arg_utils.py: `--enable-lora`, `--max-loras` (adapters in one batch, default 1),
    `--max-lora-rank` (choices 1, 8, 16, 32, 64, 128, 256, 320, 512; default 16);
    vllm/config/lora.py: `max_cpu_loras` defaults to max_loras.
  - vllm/entrypoints/openai/cli_args.py, LoRAParserAction: each `--lora-modules` value is
    `name=path` or one JSON object; the `name=path` form cannot hold a comma.
  - vllm/lora/utils.py get_adapter_absolute_path: a path that is not absolute and does not exist
    is a Hugging Face repo id, downloaded with snapshot_download.
  - vllm/entrypoints/openai/models/serving.py: GET /v1/models lists each adapter with `id` its
    name and `parent` the base model; a request picks one with `"model": NAME`.
  - vllm/lora/punica_wrapper and layers: max_loras x max_lora_rank buffers per LoRA layer are
    reserved at load time, out of the memory the KV cache would otherwise take.
Runtime loading (/v1/load_lora_adapter) stays off: it needs VLLM_ALLOW_RUNTIME_LORA_UPDATING, and
the gate does not forward that path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..context import Context
from ..formats import is_vllm_image
from ..problems import Problem
from ..schema import AdapterSpec, WorkloadSpec

# The flags `adapters` sets: a user's own would be given twice.
FLAGS = ("--enable-lora", "--lora-modules", "--max-loras", "--max-lora-rank", "--max-cpu-loras")
HUB_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")


def mounts(w: WorkloadSpec) -> dict[str, str]:
    """Folders that hold files when vLLM starts: the model bucket only. `cache` is a disk made
    empty with each pod, and `storage` is empty on a replica's first start, so an adapter there
    is missing when vLLM loads its `--lora-modules` and the server exits."""
    if w.model_cache is None:
        return {}
    return {w.model_cache.mount_path.rstrip("/") or "/": "modelCache.mountPath"}


def from_hub(adapter: AdapterSpec) -> bool:
    return not adapter.path.startswith("/")


def problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    if not w.adapters:
        if "adapter_max_rank" in w.model_fields_set:
            yield Problem(
                f"workloads[{i}].adapterMaxRank",
                "applies only to adapters, and the workload has none. Remove it.",
            )
        return
    path = f"workloads[{i}].adapters"
    if not is_vllm_image(w.image):
        yield Problem(
            path,
            f"LoRA adapters are served by vLLM; the image "
            f"{ctx.show(f'workloads[{i}].image', w.image)} is not a vLLM image. Remove adapters, "
            "or pass the server's own flags in args.",
        )
        return
    given = sorted({a.split("=", 1)[0] for a in w.args if a.split("=", 1)[0] in FLAGS})
    if given:
        yield Problem(
            f"workloads[{i}].args",
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} set from adapters; "
            "remove them from args.",
        )
    seen: dict[str, int] = {}
    folders = mounts(w)
    for n, adapter in enumerate(w.adapters):
        if adapter.name in seen:
            yield Problem(
                f"{path}[{n}].name",
                f"{ctx.show(f'{path}[{n}].name', adapter.name)} is already "
                f"adapters[{seen[adapter.name]}]'s name: each adapter "
                "is asked for by its own name. Rename one.",
            )
        seen.setdefault(adapter.name, n)
        if from_hub(adapter):
            if not HUB_REPO.fullmatch(adapter.path):
                yield Problem(
                    f"{path}[{n}].path",
                    f"{ctx.show(f'{path}[{n}].path', adapter.path)} is neither a Hugging Face "
                    "repo id ('org/name') nor an "
                    "absolute folder in the pod (e.g. /models/adapters/sql).",
                )
            continue
        parts = adapter.path.rstrip("/").split("/")
        inside = any(
            adapter.path.rstrip("/").startswith(mount + "/") for mount in folders if mount != "/"
        )
        if ".." in parts or not inside:
            where = ", ".join(f"{m} ({k})" for m, k in folders.items()) or "none: set modelCache"
            yield Problem(
                f"{path}[{n}].path",
                f"{adapter.path} is not inside the model bucket's folder (mounted: {where}), the "
                "one folder that holds files when vLLM starts (cache and storage disks start "
                "empty; the image's own files are not adapters). Upload the adapter to the "
                "bucket under modelCache.mountPath, or name a Hugging Face repo id.",
            )


# GPU slots x rank that vLLM may reserve for LoRA buffers at load. Each slot holds A and B
# matrices of `rank` columns for every LoRA layer, so its size grows with rank and with the
# model's width and depth: about 80 MB at rank 16 for a 7B model (28 layers, hidden 3584), 2.6 GB
# at rank 512 (an estimate from those shapes, not a figure from vLLM's docs). A budget of 128
# keeps the buffers near 1 GB for a 7B model however rank and count are chosen: 8 adapters of
# rank 16 share one batch, one of rank 128 or more is on the GPU at a time.
LORA_RANK_BUDGET = 128


def gpu_slots(w: WorkloadSpec) -> int:
    """Adapters in one batch (`--max-loras`): all of them while the buffers stay in budget."""
    return min(len(w.adapters), max(1, LORA_RANK_BUDGET // w.adapter_max_rank))


def vllm_args(w: WorkloadSpec) -> tuple[str, ...]:
    """The flags that serve `adapters`: as many in one batch as the budget allows, the others
    kept in CPU memory (`--max-cpu-loras`) and swapped in when asked for."""
    if not w.adapters:
        return ()
    slots = gpu_slots(w)
    on_cpu = ("--max-cpu-loras", str(len(w.adapters))) if slots < len(w.adapters) else ()
    return (
        "--enable-lora",
        "--max-loras",
        str(slots),
        *on_cpu,
        "--max-lora-rank",
        str(w.adapter_max_rank),
        "--lora-modules",
        *(f"{a.name}={a.path}" for a in w.adapters),
    )
