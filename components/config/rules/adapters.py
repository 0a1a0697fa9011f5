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

from components.config.context import Context
from components.config.formats import is_vllm_image
from components.config.problems import Problem
from components.config.schema import AdapterSpec, WorkloadSpec

# The flags `adapters` sets: a user's own would be given twice.
FLAGS = ("--enable-lora", "--lora-modules", "--max-loras", "--max-lora-rank", "--max-cpu-loras")
HUB_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")


def mounts(w: WorkloadSpec) -> dict[str, str]:
    """Folders the pod has beyond its image, by the key that makes them."""
    found = {}
    if w.model_cache is not None:
        found[w.model_cache.mount_path.rstrip("/") or "/"] = "modelCache.mountPath"
    if w.cache is not None:
        found[w.cache.path.rstrip("/")] = "cache.path"
    if w.storage is not None:
        found[w.storage.mount_path.rstrip("/")] = "storage.mountPath"
    return found


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
            f"LoRA adapters are served by vLLM; {w.image} is not a vLLM image. Remove adapters, "
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
                f"{adapter.name!r} is already adapters[{seen[adapter.name]}]'s name: each adapter "
                "is asked for by its own name. Rename one.",
            )
        seen.setdefault(adapter.name, n)
        if from_hub(adapter):
            if not HUB_REPO.fullmatch(adapter.path):
                yield Problem(
                    f"{path}[{n}].path",
                    f"{adapter.path!r} is neither a Hugging Face repo id ('org/name') nor an "
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
                f"{adapter.path} is not inside a folder the pod mounts (mounted: {where}); the "
                "image's own files are not adapters. Put the adapter under one of them.",
            )


def vllm_args(w: WorkloadSpec) -> tuple[str, ...]:
    """The flags that serve `adapters`: every adapter fits in one batch (no swapping)."""
    if not w.adapters:
        return ()
    return (
        "--enable-lora",
        "--max-loras",
        str(len(w.adapters)),
        "--max-lora-rank",
        str(w.adapter_max_rank),
        "--lora-modules",
        *(f"{a.name}={a.path}" for a in w.adapters),
    )
