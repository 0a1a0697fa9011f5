"""Does the model fit the GPUs a replica gets? Weights plus a KV-cache floor against the memory
of `gpu.count` x `hosts` GPUs (issue 34).

vLLM loads the weights, then needs room for at least one sequence of max_model_len tokens in its
KV cache, within --gpu-memory-utilization (default 0.9) of each GPU's memory, or it exits at
start ("The model's max seq len ... is larger than the maximum number of tokens that can be
stored in KV cache"). The check uses the model table (components/facts/models.py) or the stack's
`model: {parameters, dtype}`; the dtype from --quantization / --dtype when set. A model neither
knows gets an advisory in the plan, never a silent OK. Activations and CUDA graphs take more:
this is a floor, so a refusal is certain and a pass is not a promise.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ...facts import catalog, models
from .. import formats
from ..context import Context
from ..problems import Problem
from ..schema import WorkloadSpec
from . import vllm

# Bytes per weight of each dtype or quantization name vLLM takes (--dtype, --quantization).
BYTES = {
    "bf16": 2.0, "bfloat16": 2.0, "fp16": 2.0, "float16": 2.0, "half": 2.0,
    "fp32": 4.0, "float32": 4.0, "float": 4.0,
    "fp8": 1.0, "int8": 1.0, "fbgemm_fp8": 1.0, "compressed-tensors": 1.0,
    "int4": 0.5, "awq": 0.5, "awq_marlin": 0.5, "gptq": 0.5, "gptq_marlin": 0.5,
    "bitsandbytes": 0.5, "modelopt_fp4": 0.5, "fp4": 0.5,
}  # fmt: skip
DEFAULT_UTILIZATION = 0.9  # vLLM's --gpu-memory-utilization default
FLOOR_TOKENS = 4096
"""The KV floor's sequence when --max-model-len is unset: whether the model fits at all. A model
of the table is then also checked at its own context, vLLM's max_model_len when the flag is
unset: vLLM exits at start when one sequence of it does not fit ("To serve at least one request
with the model's max seq len ...", vllm/v1/core/kv_cache_utils.py
check_enough_kv_cache_memory), so that is refused with the longest --max-model-len that fits."""


@dataclass(frozen=True)
class Need:
    model: str
    dtype: str
    weights: float
    kv: float
    tokens: int
    utilization: float
    kv_per_token: float = 0.0
    context: int = 0
    """--max-model-len is unset and the table knows the model: its own context, vLLM's default
    max_model_len (0 otherwise)."""

    @property
    def total(self) -> float:
        return self.weights + self.kv

    def at(self, dtype: str) -> float:
        """The total with the weights in another dtype."""
        return self.weights / BYTES[self.dtype] * BYTES[dtype] + self.kv


def _flags(args: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    index = 0
    while index < len(args):
        flag, value, following = vllm._flag_value(tuple(args), index)
        if flag.startswith("-") and value is not None:
            found[{"-q": "--quantization"}.get(flag, flag)] = value
            index = following
        else:
            index += 1
    return found


def need(w: WorkloadSpec) -> Need | None:
    """What the model needs, or None where neither the table nor `model:` says."""
    args = [*w.command[2:], *w.args] if list(w.command[:2]) == ["vllm", "serve"] else list(w.args)
    model = vllm.parse(args).model
    flags = _flags(args)
    size = models.MODELS.get(model or "")
    if size is None and w.model is None:
        return None
    dtype = flags.get("--quantization") or flags.get("--dtype")
    if dtype not in BYTES:
        dtype = w.model.dtype if w.model is not None else size.dtype if size else "bf16"
    parameters = w.model.parameters if w.model is not None else size.parameters if size else 0
    length = flags.get("--max-model-len", "")
    tokens = int(length) if length.isdigit() else FLOOR_TOKENS
    context = size.context if size is not None and not length.isdigit() else 0
    kv_bytes = 1.0 if flags.get("--kv-cache-dtype", "").startswith("fp8") else 2.0
    per_token = size.kv_bytes_per_token(kv_bytes) if size is not None else 0.0
    utilization = flags.get("--gpu-memory-utilization", "")
    share = float(utilization) if utilization.replace(".", "", 1).isdigit() else None
    return Need(
        model or "the model", dtype, parameters * BYTES[dtype], per_token * tokens, tokens,
        share if share and 0 < share <= 1 else DEFAULT_UTILIZATION, per_token, context,
    )  # fmt: skip


def _usable(gpu: str, count: int, hosts: int, utilization: float) -> float:
    return catalog.GPU_TYPES[gpu].memory_gb * 1e9 * count * hosts * utilization


def _gb(value: float) -> str:
    return f"{value / 1e9:,.0f} GB"


def problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    if ctx.existing or not formats.is_vllm_image(w.image) or w.gpu.type not in catalog.GPU_TYPES:
        return
    found = need(w)
    if found is None or catalog.GPU_TYPES[w.gpu.type].memory_gb == 0:
        return
    have = _usable(w.gpu.type, w.gpu.count, w.hosts, found.utilization)
    group = f"{w.hosts} x " if w.hosts > 1 else ""
    if found.total <= have:
        yield from _context_problems(i, w, found, have, group)
        return
    yield Problem(
        f"workloads[{i}].gpu",
        f"{found.model} in {found.dtype} needs about {_gb(found.weights)} of weights plus "
        + (
            f"{_gb(found.kv)} of KV cache for one {found.tokens}-token sequence"
            if found.kv
            else "its KV cache (not counted: the model-fit table does not know its layers)"
        )
        + f"; {group}"
        f"{w.gpu.count} x {w.gpu.type} give {_gb(have)} at --gpu-memory-utilization "
        f"{found.utilization}: vLLM would run out of memory loading it. Shapes that fit: "
        + "; ".join(shapes(w, found, ctx.mode == "autopilot"))
        + ".",
    )


def _context_problems(
    i: int, w: WorkloadSpec, found: Need, have: float, group: str
) -> Iterator[Problem]:
    """Without --max-model-len, one sequence of the model's own context must fit too."""
    full = found.weights + found.kv_per_token * found.context
    if not found.context or full <= have:
        return
    fitting = int((have - found.weights) / found.kv_per_token) // 1024 * 1024
    yield Problem(
        f"workloads[{i}].args",
        f"has no --max-model-len, so vLLM serves {found.model} at its own context of "
        f"{found.context:,} tokens, whose KV cache ({_gb(full - found.weights)}) does not fit "
        f"beside {_gb(found.weights)} of weights in the {_gb(have)} {group}{w.gpu.count} x "
        f"{w.gpu.type} give at --gpu-memory-utilization {found.utilization}: vLLM would exit at "
        'start ("To serve at least one request with the model\'s max seq len ..."). Add '
        f"--max-model-len {fitting} or less (about the most that fits; activations take some "
        "memory too), or give it GPUs with more memory.",
    )


def _counts(gpu: str, autopilot: bool) -> tuple[int, ...]:
    kind = catalog.GPU_TYPES[gpu]
    return kind.autopilot_counts if autopilot else kind.node_counts


def shapes(w: WorkloadSpec, found: Need, autopilot: bool) -> list[str]:
    """The smallest shapes that hold it: more GPUs of the type, more hosts, another GPU type, a
    quantized variant."""
    assert w.gpu.type is not None
    gpu, util, out = w.gpu.type, found.utilization, []
    counts = _counts(gpu, autopilot)
    more = [c for c in counts if _usable(gpu, c, w.hosts, util) >= found.total]
    if more:
        out.append(f"gpu.count {more[0]} of {gpu}")
    elif counts and not autopilot:
        most = max(counts)
        hosts = next((h for h in range(2, 65) if _usable(gpu, most, h, util) >= found.total), 0)
        if hosts:
            out.append(f"gpu.count {most} with hosts: {hosts} (a group of {hosts} nodes)")
    out += list(_other_types(gpu, found, autopilot))[:3]
    if BYTES[found.dtype] > 1 and found.at("fp8") <= _usable(gpu, w.gpu.count, w.hosts, util):
        out.append(
            f"a quantized variant as it is (--quantization fp8 or an FP8 checkpoint: about "
            f"{_gb(found.at('fp8'))})"
        )
    return out or ["none on one node; lower --max-model-len or use a quantized variant"]


def _other_types(gpu: str, found: Need, autopilot: bool) -> Iterable[str]:
    fits = []
    for other in catalog.GPU_TYPES.values():
        if other.name == gpu or other.memory_gb == 0:
            continue
        counts = [c for c in _counts(other.name, autopilot) if c * other.memory_gb > 0]
        count = next(
            (c for c in counts if _usable(other.name, c, 1, found.utilization) >= found.total),
            None,
        )
        if count is not None:
            fits.append((count * other.memory_gb, f"{count} x {other.name}"))
    return (words for _, words in sorted(fits))


def advisories(workloads: Iterable[tuple[int, WorkloadSpec]]) -> list[str]:
    """A vLLM server whose model neither the table nor `model:` describes: unchecked, said so;
    a gated model downloaded with no token: said so."""
    found = []
    for i, w in workloads:
        if not formats.is_vllm_image(w.image) or w.gpu.type not in catalog.GPU_TYPES:
            continue
        model = vllm.parse(list(w.args)).model
        if model is not None and need(w) is None:
            found.append(
                f"workloads[{i}] ({w.name}): whether {model} fits {w.hosts * w.gpu.count} x "
                f"{w.gpu.type} is not checked: the model-fit table (components/facts/models.py) "
                "does not know it; set `model: {parameters: ..., dtype: ...}` to have it checked."
            )
        if model is not None and _gated_without_token(model, w):
            found.append(
                f"workloads[{i}] ({w.name}): {model} is gated on the Hugging Face Hub (its license "
                "must be accepted by the account whose token downloads it), and the workload sets "
                "no HF_TOKEN: the download would fail. Set secretEnv: {HF_TOKEN: hfToken} and the "
                "token with `pulumi config set --secret gke-gpu:hfToken <token>` (docs/secrets.md)."
            )
    return found


def _gated_without_token(model: str, w: WorkloadSpec) -> bool:
    if not model.startswith(models.GATED_ORGANIZATIONS) or w.model_cache is not None:
        return False
    names = {*w.env, *w.secret_env}
    return not names.intersection(models.TOKEN_ENV) and "--hf-token" not in " ".join(w.args)
