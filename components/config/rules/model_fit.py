"""Does the model fit the GPUs a replica gets, as vLLM splits it? (issues 34 and 45)

vLLM loads each GPU's share of the weights, then needs room for at least one sequence of
max_model_len tokens in its KV cache, within --gpu-memory-utilization (default 0.9) of each GPU's
memory, or it exits at start ("The model's max seq len ... is larger than the maximum number of
tokens that can be stored in KV cache"). The shares follow the parallel sizes in the arguments
(rules/model_need.py): a replica's `gpu.count` x `hosts` GPUs help only when the arguments split
the model over them, so GPUs the arguments leave idle are refused here with the flag that uses
them (never added behind the user's back: the arguments are theirs). The sizes come from the
model table (components/facts/models.py) or the stack's `model: {parameters, dtype}`, the dtype
from --quantization / --dtype when set. A model neither knows gets a `!` line at the end of the
plan, never a silent OK. Activations and CUDA graphs take more: this is a floor, so a refusal is
certain and a pass is not a promise.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ...facts import catalog, models
from .. import formats
from ..context import Context
from ..problems import Problem
from ..schema import WorkloadSpec
from . import vllm
from .model_need import BYTES, Need, Split, need, serve_args, split_of

__all__ = ["BYTES", "advisories", "problems", "shapes", "unchecked"]


def _have(gpu: str, utilization: float) -> float:
    """What one GPU of the type gives the model, bytes."""
    return catalog.GPU_TYPES[gpu].memory_gb * 1e9 * utilization


def _gb(value: float) -> str:
    return f"{value / 1e9:,.1f} GB" if value < 9.95e9 else f"{value / 1e9:,.0f} GB"


def problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    if not formats.is_vllm_image(w.image):
        return
    args = vllm.server_args(w.command, w.args)
    split = split_of(args)
    if serve_args(w) is not None and w.hosts == 1:
        yield from _idle_problems(i, w.gpu.count, args, split)
    if ctx.existing or w.gpu.type not in catalog.GPU_TYPES:
        return
    found = need(w, args)
    if found is None or catalog.GPU_TYPES[w.gpu.type].memory_gb == 0:
        return
    # Arguments that do not cover the replica's GPUs are refused (here or by rules/vllm.py); the
    # fit is checked as their fix would split it, so both problems show in one run.
    gpus = w.gpu.count * w.hosts
    shards = split if split.gpus == gpus else Split(tp=w.gpu.count, pp=w.hosts)
    have = _have(w.gpu.type, found.utilization)
    group = f"{w.hosts} x " if w.hosts > 1 else ""
    if found.per_gpu(shards) <= have:
        yield from _context_problems(i, w, found, shards, group)
        return
    yield Problem(
        f"workloads[{i}].gpu",
        f"{found.model} in {found.dtype} needs about {_gb(found.weights)} of weights"
        + (
            f", {_gb(found.weights_per_gpu(shards))} on each GPU split {shards.words(found.moe)}"
            if shards.weight_shards(found.moe) > 1
            else ""
        )
        + ", plus "
        + (
            f"{_gb(found.kv(shards))} of KV cache for one {found.tokens}-token sequence"
            + (" on each GPU" if gpus > 1 else "")
            if found.size is not None
            else "its KV cache (not counted: the model-fit table does not know its layers)"
        )
        + f"; {group}{w.gpu.count} x {w.gpu.type} give {_gb(have * gpus)} at "
        f"--gpu-memory-utilization {found.utilization}"
        + (f", {_gb(have)} each" if gpus > 1 else "")
        + ": vLLM would run out of memory loading it. Shapes that fit: "
        + "; ".join(shapes(w, found, ctx.mode == "autopilot"))
        + ".",
    )


def _idle_problems(i: int, gpus: int, args: list[str], split: Split) -> Iterator[Problem]:
    """GPUs the parallel sizes leave idle: vLLM starts one process per GPU of its world size,
    tensor x pipeline x prefill-context parallel (x data parallel), each on a GPU of its own
    (vllm/config/parallel.py world_size, rules/vllm.py); the pod's other GPUs hold nothing.
    (More processes than GPUs is rules/vllm.py's refusal.)"""
    serve = vllm.parse(args)
    if split.gpus >= gpus or serve.unreadable:
        return
    product = " x ".join(f"{size} ({name})" for name, size in serve.sizes) or "none set"
    others = split.gpus // split.tp
    tp = gpus // others if gpus % others == 0 else 0
    given = dict(serve.sizes).get("tensor") is not None
    fix = (
        f"{'Set' if given else 'Add'} --tensor-parallel-size {tp} {'in' if given else 'to'} args "
        f"(the model split over all {gpus} GPUs)"
        if tp
        else "Make --tensor-parallel-size x --pipeline-parallel-size (x --data-parallel-size) "
        f"equal {gpus}"
    )
    yield Problem(
        f"workloads[{i}].args",
        f"the parallel sizes ({product}) start {split.gpus} vLLM GPU "
        f"{'process' if split.gpus == 1 else 'processes'} and gpu.count is {gpus}: vLLM puts "
        "one process on each GPU of its world size (tensor x pipeline x data parallel), so "
        f"{gpus - split.gpus} of the pod's GPUs would sit idle, paid for, and "
        "the model is not split across them"
        + (": one GPU holds all of it" if split.gpus == 1 else "")
        + f". {fix}, or set gpu.count: {split.gpus}.",
    )


def _context_problems(
    i: int, w: WorkloadSpec, found: Need, shards: Split, group: str
) -> Iterator[Problem]:
    """Without --max-model-len, one sequence of the model's own context must fit too."""
    assert w.gpu.type is not None
    have = _have(w.gpu.type, found.utilization)
    if not found.context or found.per_gpu(shards, found.context) <= have:
        return
    each = " on each GPU" if shards.gpus > 1 else ""
    yield Problem(
        f"workloads[{i}].args",
        f"has no --max-model-len, so vLLM serves {found.model} at its own context of "
        f"{found.context:,} tokens, whose KV cache ({_gb(found.kv(shards, found.context))}"
        f"{each}) does not fit beside {_gb(found.weights_per_gpu(shards))} of weights{each} in "
        f"the {_gb(have)} each of {group}{w.gpu.count} x {w.gpu.type} gives at "
        f'--gpu-memory-utilization {found.utilization}: vLLM would exit at start ("To serve at '
        "least one request with the model's max seq len ...\"). Add --max-model-len "
        f"{found.longest(shards, have)} or less (about the most that fits; activations take "
        "some memory too), or give it GPUs with more memory.",
    )


def _counts(gpu: str, autopilot: bool) -> tuple[int, ...]:
    kind = catalog.GPU_TYPES[gpu]
    return kind.autopilot_counts if autopilot else kind.node_counts


def _split_flags(count: int, hosts: int) -> str:
    """The flags that split a model over `hosts` nodes of `count` GPUs: tensor parallel inside
    a node, pipeline parallel across nodes (how the multihost example runs DeepSeek-R1)."""
    words = [f"--tensor-parallel-size {count}"] if count > 1 else []
    words += [f"--pipeline-parallel-size {hosts}"] if hosts > 1 else []
    return " ".join(words)


def _fits(found: Need, gpu: str, count: int, hosts: int) -> bool:
    return found.per_gpu(Split(tp=count, pp=hosts)) <= _have(gpu, found.utilization)


def shapes(w: WorkloadSpec, found: Need, autopilot: bool) -> list[str]:
    """The smallest shapes that hold it, each with the flags that split the model over them:
    more GPUs of the type, more hosts, another GPU type, a quantized variant."""
    assert w.gpu.type is not None
    gpu, out = w.gpu.type, []
    counts = _counts(gpu, autopilot)
    more = [c for c in counts if _fits(found, gpu, c, w.hosts)]
    if more:
        flags = _split_flags(more[0], w.hosts)
        out.append(f"gpu.count {more[0]} of {gpu}" + (f" with {flags}" if flags else ""))
    elif counts and not autopilot:
        most = max(counts)
        hosts = next((h for h in range(2, 65) if _fits(found, gpu, most, h)), 0)
        if hosts:
            out.append(
                f"gpu.count {most} with hosts: {hosts} (a group of {hosts} nodes; "
                f"{_split_flags(most, hosts)})"
            )
    out += list(_other_types(gpu, found, autopilot))[:3]
    quantized = found.at("fp8")
    if BYTES[found.dtype] > 1 and _fits(quantized, gpu, w.gpu.count, w.hosts):
        out.append(
            f"a quantized variant as it is (--quantization fp8 or an FP8 checkpoint: about "
            f"{_gb(quantized.weights)})"
        )
    return out or ["none on one node; lower --max-model-len or use a quantized variant"]


def _other_types(gpu: str, found: Need, autopilot: bool) -> Iterable[str]:
    fits = []
    for other in catalog.GPU_TYPES.values():
        if other.name == gpu or other.memory_gb == 0:
            continue
        counts = _counts(other.name, autopilot)
        count = next((c for c in counts if _fits(found, other.name, c, 1)), None)
        if count is not None:
            flags = f" ({_split_flags(count, 1)})" if count > 1 else ""
            fits.append((count * other.memory_gb, f"{count} x {other.name}{flags}"))
    return (words for _, words in sorted(fits))


def unchecked(workloads: Iterable[tuple[int, WorkloadSpec]]) -> list[str]:
    """A vLLM server whose model neither the table nor `model:` describes: its fit is not
    checked, and the plan ends saying so (tools/summary.py), with how to declare the size."""
    found = []
    for i, w in workloads:
        if not formats.is_vllm_image(w.image) or w.gpu.type not in catalog.GPU_TYPES:
            continue
        args = vllm.server_args(w.command, w.args)
        model = vllm.parse(args).model
        if model is not None and need(w, args) is None:
            found.append(
                f"workloads[{i}] ({w.name}): model fit not checked: the model-fit table "
                f"(components/facts/models.py) does not know {model}, so whether it fits "
                f"{w.hosts * w.gpu.count} x {w.gpu.type} is unknown. Declare its size with "
                f"workloads[{i}].model.parameters (every parameter, all experts of a mixture of "
                "experts) and .dtype as served, e.g. model: {parameters: 8e9, dtype: bf16}."
            )
    return found


def advisories(workloads: Iterable[tuple[int, WorkloadSpec]]) -> list[str]:
    """Fit not checked (unchecked above); a gated model downloaded with no token."""
    items = list(workloads)
    found = unchecked(items)
    for i, w in items:
        model = vllm.parse(vllm.server_args(w.command, w.args)).model
        if formats.is_vllm_image(w.image) and model and _gated_without_token(model, w):
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
