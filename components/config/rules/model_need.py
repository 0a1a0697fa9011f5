"""What a vLLM server's model needs on each GPU (issue 45): its weights split over the parallel
ranks that hold a share, plus the KV cache of one sequence on each GPU.

How vLLM splits them (vllm-project/vllm, the version components/facts/pins.py pins unless said):
  - Weights: tensor parallelism splits every layer over the TP ranks, pipeline parallelism the
    layers over the PP ranks (vllm/config/model.py get_layers_start_end_indices: get_pp_indices);
    data parallelism replicates a dense model whole ("Data parallelism replicates the entire
    model across multiple GPU sets", vLLM's parallelism docs) but shards a mixture of experts'
    experts ("MoE layers will be sharded according to the product of the tensor parallel size
    and data parallel size", --data-parallel-size's help). Prefill context parallelism is
    counted as splitting the weights too: not confirmed, and counting it only lowers the
    estimate.
  - KV cache: each GPU holds its layers' share (1 / PP) and its TP rank's KV heads,
    max(1, num_key_value_heads // tensor_parallel_size) ("We will replicate the KV heads in the
    case where the number of KV heads is smaller than the tensor parallel size so each GPU has
    at least one KV head", vllm/config/model.py get_num_kv_heads; 1 under multi-head latent
    attention, whose latent every rank keeps whole). Decode context parallelism splits it
    further; prefill context parallelism "does not increase the KV-cache shard count" (vLLM's
    engine-args docs for -pcp).
Each GPU must hold its share within --gpu-memory-utilization of its memory. Splitting is never
perfectly even (embeddings, norms, the uneven last pipeline stage), so the busiest GPU needs at
least this average: the figure stays a floor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ...facts import models
from ...facts.model_size import ModelSize
from ..schema import WorkloadSpec
from . import vllm

# Bytes per weight of each dtype or quantization name vLLM takes (--dtype, --quantization).
# mxfp4: 4-bit values and one 8-bit scale per 32 (components/facts/models_more.py).
BYTES = {
    "bf16": 2.0, "bfloat16": 2.0, "fp16": 2.0, "float16": 2.0, "half": 2.0,
    "fp32": 4.0, "float32": 4.0, "float": 4.0,
    "fp8": 1.0, "int8": 1.0, "fbgemm_fp8": 1.0, "compressed-tensors": 1.0,
    "int4": 0.5, "awq": 0.5, "awq_marlin": 0.5, "gptq": 0.5, "gptq_marlin": 0.5,
    "bitsandbytes": 0.5, "modelopt_fp4": 0.5, "fp4": 0.5, "mxfp4": 4.25 / 8,
}  # fmt: skip
DEFAULT_UTILIZATION = 0.9  # vLLM's --gpu-memory-utilization default
FLOOR_TOKENS = 4096
"""The KV floor's sequence when --max-model-len is unset: whether the model fits at all. A model
of the table is then also checked at its own context, vLLM's max_model_len when the flag is
unset: vLLM exits at start when one sequence of it does not fit ("To serve at least one request
with the model's max seq len ...", vllm/v1/core/kv_cache_utils.py
check_enough_kv_cache_memory), so that is refused with the longest --max-model-len that fits."""
# --max-model-len takes "k/m/g/K/M/G in human-readable format. Examples: 1k -> 1000, 1K -> 1024,
# 25.6k -> 25,600" (vllm/config/model.py, ModelConfig.max_model_len).
_LENGTH = re.compile(r"(\d+(?:\.\d+)?)([kmgKMG]?)")
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "K": 2**10, "M": 2**20, "G": 2**30}


@dataclass(frozen=True)
class Split:
    """How the parallel sizes split one replica: TP x PP (x PCP) ranks share its weights; DP
    ranks each hold a copy (of a mixture of experts, a share of the experts)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    pcp: int = 1
    dcp: int = 1

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp * self.pcp

    def weight_shards(self, moe: bool) -> int:
        return self.tp * self.pp * self.pcp * (self.dp if moe else 1)

    def words(self, moe: bool) -> str:
        """The sizes that split the weights, e.g. "4 (tensor) x 2 (pipeline)"."""
        sizes = [("tensor", self.tp), ("pipeline", self.pp), ("prefill-context", self.pcp)]
        sizes += [("data", self.dp)] if moe else []
        return " x ".join(f"{size} ({name})" for name, size in sizes if size > 1)


@dataclass(frozen=True)
class Need:
    model: str
    dtype: str
    weights: float
    """All the weights, bytes."""
    tokens: int
    utilization: float
    size: ModelSize | None
    """The table's row (its KV cache is known); None for a model only `model:` describes."""
    kv_bytes: float = 2.0
    context: int = 0
    """--max-model-len is unset and the table knows the model: its own context, vLLM's default
    max_model_len (0 otherwise)."""

    @property
    def moe(self) -> bool:
        """Whether data parallelism splits the weights: the table's mixtures of experts, and a
        model the table does not know (assumed one: the lower estimate)."""
        return self.size is None or self.size.moe

    def kv(self, split: Split, tokens: int | None = None) -> float:
        """One sequence's KV cache on each GPU, bytes (0 where the table does not know it)."""
        if self.size is None:
            return 0.0
        heads = max(1, self.size.kv_heads // split.tp)
        cached = self.size.cached_tokens(self.tokens if tokens is None else tokens)
        return heads * self.size.head_values * self.kv_bytes * cached / split.pp / split.dcp

    def weights_per_gpu(self, split: Split) -> float:
        return self.weights / split.weight_shards(self.moe)

    def per_gpu(self, split: Split, tokens: int | None = None) -> float:
        return self.weights_per_gpu(split) + self.kv(split, tokens)

    def at(self, dtype: str) -> Need:
        """The same model with its weights in another dtype."""
        return replace(self, dtype=dtype, weights=self.weights / BYTES[self.dtype] * BYTES[dtype])

    def longest(self, split: Split, have: float) -> int:
        """The longest sequence (a multiple of 1024 tokens) whose KV cache fits beside the
        weights on each GPU, up to the model's context."""
        low, high = 0, max(self.context, self.tokens) // 1024
        while low < high:
            middle = (low + high + 1) // 2
            if self.per_gpu(split, middle * 1024) <= have:
                low = middle
            else:
                high = middle - 1
        return low * 1024


def serve_args(w: WorkloadSpec) -> list[str] | None:
    """The `vllm serve` arguments: the image's own entrypoint with `args`, or `command: [vllm,
    serve, ...]`; None under another command (its arguments are not vLLM's to read)."""
    if not w.command or vllm.serves(w.command):
        return vllm.server_args(w.command, w.args)
    return None


_ALIASES = {"-q": "--quantization", "-dcp": "--decode-context-parallel-size"}


def flags(args: list[str]) -> dict[str, str]:
    """Each `--flag value` and `--flag=value`, short forms under their long name (a flag
    followed by another flag has no value: a switch, like --trust-remote-code)."""
    found: dict[str, str] = {}
    index = 0
    while index < len(args):
        flag, value, following = vllm._flag_value(tuple(args), index)
        if flag.startswith("-") and value is not None and not value.startswith("-"):
            found[_ALIASES.get(flag, flag)] = value
            index = following
        else:
            index += 1
    return found


def split_of(args: list[str]) -> Split:
    sizes = dict(vllm.parse(args).sizes)
    dcp = flags(args).get("--decode-context-parallel-size", "")
    return Split(
        sizes.get("tensor", 1),
        sizes.get("pipeline", 1),
        sizes.get("data", 1),
        sizes.get("prefill-context", 1),
        int(dcp) if dcp.isdigit() and int(dcp) > 0 else 1,
    )


def tokens_of(value: str) -> int | None:
    """--max-model-len's value in tokens, or None where vLLM would not read it as a length."""
    match = _LENGTH.fullmatch(value.strip())
    return int(float(match.group(1)) * _SCALE[match.group(2)]) if match else None


def need(w: WorkloadSpec, args: list[str]) -> Need | None:
    """What the model needs, or None where neither the table nor `model:` says."""
    model = vllm.parse(args).model
    found = flags(args)
    size = models.MODELS.get(model or "")
    if size is None and w.model is None:
        return None
    dtype = found.get("--quantization") or found.get("--dtype")
    if dtype not in BYTES:
        dtype = w.model.dtype if w.model is not None else size.dtype if size else "bf16"
    parameters = w.model.parameters if w.model is not None else size.parameters if size else 0
    length = tokens_of(found.get("--max-model-len", ""))
    share = found.get("--gpu-memory-utilization", "")
    utilization = float(share) if re.fullmatch(r"\d*\.?\d+", share) else 0.0
    return Need(
        model or "the model",
        dtype,
        parameters * BYTES[dtype],
        length or FLOOR_TOKENS,
        utilization if 0 < utilization <= 1 else DEFAULT_UTILIZATION,
        size,
        1.0 if found.get("--kv-cache-dtype", "").startswith("fp8") else 2.0,
        size.context if size is not None and length is None else 0,
    )
