"""What vLLM's OpenAI server will do with a workload's arguments: which model, on how many GPUs,
on which port, and where it reports health.

Read from the vLLM 0.29.0 wheel on PyPI (vllm-0.29.0-cp38-abi3-manylinux_2_28_x86_64.whl, read
2026-11-23), the version components/facts/pins.py pins:
  - vllm/entrypoints/launchers/cli_args.py: `model_tag` is the first positional argument
    ("The model tag to serve"), `port: int = 8000`.
  - vllm/utils/argparse_utils.py lines 271-283: `--model` still works, with the warning "The
    `--model` option will be removed in a future version".
  - vllm/config/parallel.py lines 865-869: world_size = pipeline_parallel_size *
    tensor_parallel_size * prefill_context_parallel_size; lines 955-963: with more than one
    process it raises "World size (N) is larger than the number of available GPUs (M) in this
    node" when the node has fewer GPUs; line 580 world_size_across_dp = world_size *
    data_parallel_size, the processes one pod starts, each holding a GPU of its own.
  - vllm/engine/arg_utils.py lines 1070-1137: the flags and their short forms (-tp, -pp, -dp,
    -pcp).
  - GET /health answers 200 once the engine is up (503 when it died): the probe path.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..problems import Problem

HEALTH_PATH = "/health"
DEFAULT_PORT = 8000
# Parallel sizes that multiply into the GPUs one pod's processes take.
PARALLEL_FLAGS = {
    "--tensor-parallel-size": "tensor",
    "-tp": "tensor",
    "--pipeline-parallel-size": "pipeline",
    "-pp": "pipeline",
    "--prefill-context-parallel-size": "prefill-context",
    "-pcp": "prefill-context",
    "--data-parallel-size": "data",
    "-dp": "data",
}


@dataclass(frozen=True)
class ServeArgs:
    """The parts of `vllm serve` arguments the plan needs; sizes default to vLLM's 1."""

    model: str | None
    sizes: tuple[tuple[str, int], ...]
    port: int | None
    unreadable: tuple[str, ...]
    """Flags whose value is not a positive integer (vLLM would refuse them at start)."""

    @property
    def gpus(self) -> int:
        total = 1
        for _, size in self.sizes:
            total *= size
        return total


def serves(command: Sequence[str]) -> bool:
    """`command: [vllm, serve, ...]`: the arguments after `serve` are the server's too."""
    return list(command[:2]) == ["vllm", "serve"]


def server_args(command: Sequence[str], args: Sequence[str]) -> list[str]:
    """The arguments the vLLM server reads: `args` after the image's own entrypoint, or after
    `command: [vllm, serve, ...]`'s own."""
    return [*command[2:], *args] if serves(command) else list(args)


def _flag_value(args: tuple[str, ...], index: int) -> tuple[str, str | None, int]:
    """(flag, value, next index) for `--flag value` and `--flag=value`."""
    arg = args[index]
    if "=" in arg and arg.startswith("-"):
        flag, value = arg.split("=", 1)
        return flag, value, index + 1
    value = args[index + 1] if index + 1 < len(args) else None
    return arg, value, index + 2


def parse(args: tuple[str, ...] | list[str]) -> ServeArgs:
    items = tuple(args)
    model = items[0] if items and not items[0].startswith("-") else None
    sizes: dict[str, int] = {}
    port: int | None = None
    unreadable: list[str] = []
    index = 1 if model is not None else 0
    while index < len(items):
        arg = items[index]
        if not arg.startswith("-"):
            index += 1
            continue
        flag, value, following = _flag_value(items, index)
        if flag in PARALLEL_FLAGS or flag == "--port":
            number = int(value) if value is not None and value.isdigit() else 0
            if number < 1:
                unreadable.append(flag)
            elif flag == "--port":
                port = number
            else:
                sizes[PARALLEL_FLAGS[flag]] = number
            index = following
        elif flag == "--model":
            model = value
            index = following
        else:
            index += 1
    return ServeArgs(model, tuple(sorted(sizes.items())), port, tuple(unreadable))


def served_model(args: tuple[str, ...], vllm_server: bool) -> str | None:
    """The model a server serves under: --served-model-name, else (vLLM) its model argument."""
    if "--served-model-name" in args[:-1]:
        return args[args.index("--served-model-name") + 1]
    return parse(args).model if vllm_server else None


def problems(
    path: str,
    args: list[str],
    gpus: int,
    port: int | None,
    hosts: int = 1,
    most_per_node: int = 16,
) -> Iterator[Problem]:
    """A vLLM server's arguments against its pod: GPUs for its parallel sizes, and its port.

    With `hosts` > 1 the replica is a group of that many pods of `gpus` GPUs each, and vLLM's
    native multi-node mode splits the world size over them (vllm/config/parallel.py
    `local_world_size = world_size // nnodes_within_dp`, vllm-project/vllm@00193b82): the
    parallel sizes must then cover the group exactly, or a node's ranks find no GPU or leave
    GPUs idle."""
    serve = parse(args)
    yield from [
        Problem(
            f"{path}.args", f"{flag} needs a positive whole number; vLLM refuses anything else."
        )
        for flag in serve.unreadable
    ]
    product = " x ".join(f"{size} ({name})" for name, size in serve.sizes) or "1"
    if hosts > 1 and serve.gpus != gpus * hosts:
        yield Problem(
            f"{path}.args",
            f"the parallel sizes {product} make {serve.gpus} GPU processes, and the group has "
            f"hosts x gpu.count = {hosts} x {gpus} = {gpus * hosts} GPUs: vLLM starts "
            f"{serve.gpus} // {hosts} processes on each node. Make the product of "
            "--tensor-parallel-size, --pipeline-parallel-size (and --data-parallel-size) equal "
            f"{gpus * hosts}, e.g. --tensor-parallel-size {gpus} --pipeline-parallel-size {hosts}.",
        )
    elif serve.gpus > gpus * hosts:
        yield Problem(
            f"{path}.args",
            f"the parallel sizes {product} need {serve.gpus} GPUs in the pod, and "
            f'gpu.count is {gpus}: vLLM exits at start ("World size ({serve.gpus}) is larger '
            f'than the number of available GPUs ({gpus}) in this node"). '
            + _more_gpus(serve.gpus, gpus, most_per_node),
        )
    if serve.port is not None and port is not None and serve.port != port:
        yield Problem(
            f"{path}.args",
            f"--port {serve.port} differs from port {port}: the probes and the Service would "
            f"knock on a port nobody listens on. Set port: {serve.port}, or drop --port.",
        )


def _more_gpus(wanted: int, gpus: int, most_per_node: int) -> str:
    """The fix for too few GPUs: more per pod where one node of the type holds them
    (`most_per_node`), else more nodes per replica (`hosts`), never a gpu.count no machine has
    (issue 34)."""
    if wanted <= most_per_node:
        return f"Set gpu.count to {wanted}, or lower the parallel sizes."
    hosts = -(-wanted // gpus)
    return (
        f"No GKE node has {wanted} GPUs: spread the replica over nodes with hosts: {hosts} "
        f"(a LeaderWorkerSet group of {hosts} x {gpus} GPUs; then make the parallel sizes "
        f"multiply to {hosts * gpus}), or lower the parallel sizes."
    )
