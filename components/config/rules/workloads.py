"""Workload rules: GPUs per mode, placement on pools, exposure, probes, env and secrets."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from components import allocatable, catalog
from components.allocatable import Resources
from components.config import formats
from components.config.model import (
    NAMESPACE,
    Cache,
    DevicePluginConfig,
    NodePoolConfig,
    Probe,
    Secret,
    Storage,
    WorkloadConfig,
)
from components.config.parse import Context
from components.config.rules import fit, vllm
from components.config.rules.pools import choices, cidr_problems, gpu_type_problems
from components.config.schema import Mode, WorkloadSpec

# Node labels the program sets itself to place GPU pods (GKE's docs: how-to/gpus, autopilot-gpus,
# timesharing-gpus, gpus-multi, spot-vms, custom compute classes). A user's nodeSelector with one
# of these keys would silently move the pod off the capacity the program chose for it.
PROGRAM_SELECTORS = (
    "cloud.google.com/gke-accelerator",
    "cloud.google.com/gke-accelerator-count",
    "cloud.google.com/gke-nodepool",
    "cloud.google.com/gke-spot",
    "cloud.google.com/gke-gpu-sharing-strategy",
    "cloud.google.com/gke-max-shared-clients-per-gpu",
    "cloud.google.com/gke-gpu-partition-size",
    "cloud.google.com/gke-gpu-driver-version",
    "cloud.google.com/compute-class",
)
# Upper bounds no single GPU pod can exceed on any GKE machine (a4x/a3-ultragpu are the largest
# shapes, below 1,000 vCPUs and 16 TiB); larger values are typos, not requests.
MAX_CPU = Decimal(1000)
MAX_MEMORY = Decimal(16 * 2**40)


def _quantity_problems(path: str, cpu: str | None, memory: str | None) -> list[str]:
    problems = []
    if cpu is not None:
        cores = formats.quantity_cores(cpu)
        if cores <= 0 or cores > MAX_CPU:
            problems.append(
                f"{path}.cpu: {cpu!r} is out of range: request more than 0 and at most "
                f"{MAX_CPU} cores."
            )
    if memory is not None:
        size = formats.quantity_bytes(memory)
        if size < 2**20 or size > MAX_MEMORY:
            problems.append(
                f"{path}.memory: {memory!r} is out of range: request at least 1Mi and at most "
                "16Ti (and mind the suffix: '16Gi', not '16')."
            )
    return problems


def env_problems(i: int, w: WorkloadSpec, ctx: Context) -> list[str]:
    path = f"workloads[{i}]"
    problems = []
    for key in (*w.env, *w.secret_env):
        if not formats.matches(formats.ENV_NAME, key):
            problems.append(f"{formats.join(path + '.env', key)}: {formats.hint(formats.ENV_NAME)}")
    for key in set(w.env) & set(w.secret_env):
        problems.append(
            f"{formats.join(path + '.env', key)}: also set in secretEnv. Keep one of them."
        )
    for env_name, key in w.secret_env.items():
        where = formats.join(path + ".secretEnv", env_name)
        if not formats.matches(formats.CONFIG_KEY, key):
            problems.append(f"{where}: {formats.show(key)} {formats.hint(formats.CONFIG_KEY)}")
        elif key not in ctx.secret_keys:
            problems.append(
                f"{where}: config key {key!r} is not set as a secret (a value stored in plain "
                "text would leak into the stack file and state). Run `pulumi config set "
                f"--path --secret '{NAMESPACE}:workloads[{i}].env.{env_name}' <value>` instead "
                f"(or `pulumi config set --secret {NAMESPACE}:{key} <value>`)."
            )
    return problems


def selector_problems(i: int, w: WorkloadSpec, mode: Mode | None) -> list[str]:
    path = f"workloads[{i}].nodeSelector"
    problems = []
    for key, value in w.node_selector.items():
        where = formats.join(path, key)
        if not formats.matches(formats.LABEL_KEY, key) or len(key) > 317:
            problems.append(f"{where}: {formats.hint(formats.LABEL_KEY)}")
        elif key in PROGRAM_SELECTORS and mode != "existing":
            problems.append(
                f"{where}: the program sets this node label itself (from gpu, spot and the node "
                "pool), and overriding it would move the pod off its GPU capacity. Remove it "
                "and set gpu/spot instead."
            )
        if not formats.matches(formats.K8S_LABEL_VALUE, value):
            problems.append(
                f"{where}: {formats.show(value)} {formats.hint(formats.K8S_LABEL_VALUE)}"
            )
    return problems


def secret_placement_problems(i: int, ctx: Context) -> list[str]:
    """`secure:` makes sense only for env values: elsewhere the value would reach the cluster
    in plain text (an image, a count), so it is refused, naming the key path only."""
    if ctx.secure_paths is None or "workloads" not in ctx.secret_keys:
        return []
    base = f"workloads[{i}]"
    problems = []
    for path in sorted(ctx.secure_paths):
        if not path.startswith((base + ".", base + "[")) and path != base:
            continue
        rest = path[len(base) :]
        if rest.startswith(".env.") or rest.startswith(".env["):
            continue
        problems.append(
            f"{path}: a secret (`secure:`) here makes no sense: this value is sent to the "
            "cluster in plain text. Store it without --secret; only env values can be secret."
        )
    return problems


def fits(w: WorkloadSpec, pool: NodePoolConfig) -> bool:
    if w.gpu.type != pool.gpu_type or w.spot != pool.spot:
        return False
    return w.gpu.count == 1 if pool.shared else w.gpu.count <= pool.gpu_count


def workload_problems(
    i: int,
    w: WorkloadSpec,
    mode: Mode | None,
    pools: list[NodePoolConfig],
    ctx: Context,
    broken_pool_gpus: frozenset[str] = frozenset(),
) -> tuple[list[str], NodePoolConfig | None]:
    path = f"workloads[{i}]"
    # On an existing cluster gpu.type is rejected outright (existing_workload_problems).
    gpu_problems = [] if mode == "existing" else gpu_type_problems(f"{path}.gpu.type", w.gpu.type)
    problems = list(gpu_problems)
    problems += _quantity_problems(f"{path}.resources", w.resources.cpu, w.resources.memory)
    if w.cache is not None:
        problems += [
            p.replace(".memory:", ".size:")
            for p in _quantity_problems(f"{path}.cache", None, w.cache.size)
        ]
    if w.storage is not None:
        problems += [
            p.replace(".memory:", ".size:")
            for p in _quantity_problems(f"{path}.storage", None, w.storage.size)
        ]
    if w.resources.ephemeral_storage is not None:
        problems += [
            p.replace(".memory:", ".ephemeralStorage:")
            for p in _quantity_problems(f"{path}.resources", None, w.resources.ephemeral_storage)
        ]
    if _serves_a_model(w):
        problems += vllm.problems(
            path, [*w.command[2:], *w.args] if _is_serve(w) else list(w.args), w.gpu.count, w.port
        )
    if w.wait_for_completion and w.kind != "Job":
        problems.append(
            f"{path}.waitForCompletion: only a Job completes; a {w.kind} is waited for until "
            "it is ready anyway. Remove waitForCompletion."
        )
    if w.gpu.type is None and mode != "existing":
        problems.append(
            f"{path}.gpu.type: required on GKE (it picks the node's accelerator). "
            "Set it, e.g. 'nvidia-l4'."
        )
    if mode == "autopilot" and w.cache is None and w.model_cache is None and _serves_a_model(w):
        problems.append(
            f"{path}.cache: the model server downloads its weights into the container's "
            "filesystem, and Autopilot requests 1 GiB of ephemeral storage for it by default "
            "(autopilot-resource-requests): the pod would be evicted mid-download. Add "
            "cache: {size: 30Gi} (a per-pod disk for the weights)."
        )
    if w.storage is not None and w.kind != "StatefulSet":
        problems.append(
            f"{path}.storage: only a StatefulSet gets a volume claim, and kind is {w.kind}. "
            "Set kind: StatefulSet or remove storage."
        )
    if w.expose is not None:
        if w.kind == "Job":
            problems.append(
                f"{path}.expose: a Job runs to completion and cannot serve traffic. "
                "Use kind Deployment or StatefulSet, or remove expose."
            )
        if w.port is None:
            problems.append(
                f"{path}.expose: the workload has no port to expose (only a vLLM server's "
                "port, 8000, is known without being told). Set port to where the server listens."
            )
        problems += cidr_problems(f"{path}.expose.sourceRanges", w.expose.source_ranges, ctx)
        if w.expose.type == "NodePort" and mode != "existing":
            problems.append(
                f"{path}.expose.type: NodePort is for existing clusters without a load "
                "balancer; GKE provides LoadBalancers. Remove type."
            )
        elif w.expose.type == "NodePort" and w.expose.source_ranges:
            problems.append(
                f"{path}.expose.sourceRanges: only a LoadBalancer enforces source ranges; a "
                "NodePort is open to everything that reaches the nodes. Remove sourceRanges "
                "(restrict access with a firewall in front of the nodes), or use type "
                "LoadBalancer if the cluster has a load balancer implementation."
            )
    probe_set = "probe" in w.model_fields_set
    if probe_set and w.probe is not None and w.port is None and w.probe.port is None:
        problems.append(
            f"{path}.probe: an HTTP probe needs a port. Set port (or probe.port), or "
            "set probe: null."
        )
    if w.kind == "Job" and w.probe is not None and probe_set:
        problems.append(
            f"{path}.probe: a Job gets no readiness probe (nothing routes traffic to it). "
            "Remove probe."
        )
    problems += env_problems(i, w, ctx)
    problems += selector_problems(i, w, mode)
    if gpu_problems or w.gpu.type is None or mode == "existing":
        return problems, None
    gpu = catalog.lookup(w.gpu.type)
    if mode == "autopilot":
        if not gpu.autopilot_counts:
            offered = tuple(g.name for g in catalog.GPU_TYPES.values() if g.autopilot_counts)
            problems.append(
                f"{path}.gpu.type: {gpu.name} is not in the catalog's Autopilot table "
                "(components/catalog/gpus.py AUTOPILOT_COUNTS). Use one of "
                f"{choices(offered)}, or cluster.mode: standard with a node pool."
            )
        elif w.gpu.count not in gpu.autopilot_counts:
            problems.append(
                f"{path}.gpu.count: {w.gpu.count} GPUs per pod is not allowed for {gpu.name} on "
                f"Autopilot (allowed: {choices(gpu.autopilot_counts)}). Set one of those."
            )
        else:
            problems += autopilot_request_problems(path, w)
        return problems, None
    if mode != "standard" or w.fallback:  # a fallback runs on its ComputeClass's own pools
        return problems, None
    fitting = [p for p in pools if fits(w, p)]
    if not fitting and w.gpu.type in broken_pool_gpus:
        return problems, None  # the broken pool's own problem says what to fix
    if not fitting:
        want = f"{w.gpu.count} x {w.gpu.type}{' on Spot' if w.spot else ''}"
        have = "; ".join(
            f"{p.name}: {p.gpu_count} x {p.gpu_type}{' Spot' if p.spot else ''}"
            + (" shared (1 GPU per container)" if p.shared else "")
            for p in pools
        )
        problems.append(
            f"{path}.gpu: no node pool fits {want} (pools: {have or 'none'}). Add a node pool "
            "with that GPU type, at least that many GPUs per node and the same spot setting, "
            "or change the workload."
        )
        return problems, None
    # The smallest fitting pool, so a 1-GPU pod never takes a node of a 4-GPU pool.
    pool = min(fitting, key=lambda p: (p.gpu_count, p.name))
    return problems, pool


def _is_serve(w: WorkloadSpec) -> bool:
    """`command: [vllm, serve, ...]`: the arguments after `serve` count too."""
    return list(w.command[:2]) == ["vllm", "serve"]


def autopilot_request_problems(path: str, w: WorkloadSpec) -> list[str]:
    """Autopilot places a GPU pod on a node of its GPU type and count, so it refuses requests no
    such node can hold ("60 vCPU with one T4": no N1 machine with one T4 has that many).

    Google publishes per-GPU minimum and maximum requests ("Resource requests in Autopilot",
    GPU section); that table could not be read here (only the page's first part is stored,
    checked 2026-11-23), so the maximum is derived instead: the allocatable, less GKE's own pods,
    of the largest machine carrying the GPUs (components/catalog, components/allocatable.py).
    Google's own maximum may be lower; it is never higher, as the pod must fit a node.
    """
    assert w.gpu.type is not None
    machines = catalog.machine_types_for(w.gpu.type, w.gpu.count)
    if not machines or (w.resources.cpu is None and w.resources.memory is None):
        return []
    rooms = [(allocatable.pod_allocatable(m.vcpus, m.memory_gb), m) for m in machines]
    side = fit.sidecar(w)
    cpu = allocatable.parse_cpu(w.resources.cpu) + side.cpu_millicores if w.resources.cpu else 0
    memory = (
        allocatable.parse_memory(w.resources.memory) + side.memory_bytes
        if w.resources.memory
        else 0
    )
    if any(Resources(cpu, memory).fits_in(room) for room, _ in rooms):
        return []
    max_cpu = max(room.cpu_millicores for room, _ in rooms)
    max_memory = max(room.memory_bytes for room, _ in rooms)
    largest = max(rooms, key=lambda rm: (rm[0].cpu_millicores, rm[0].memory_bytes))[1]
    return [
        f"{path}.resources: {w.resources.cpu or '-'} CPU / {w.resources.memory or '-'} memory "
        f"per pod, but no node with {w.gpu.count} x {w.gpu.type} holds that: Autopilot rejects "
        f"the pod. Allowed at most about {max_cpu // 100 / 10:g} CPU and "
        f"{max_memory // 2**30}Gi memory together (the largest such node, "
        f"{largest.name}, less GKE's reservations; Google's own table may allow less). Lower "
        "the requests, or ask for more GPUs per pod."
    ]


def existing_workload_problems(
    i: int, w: WorkloadSpec, plugin: DevicePluginConfig | None
) -> list[str]:
    """Workload settings that mean something only on GKE, and the time-slicing rule."""
    path = f"workloads[{i}]"
    problems: list[str] = []
    if "gpu" in w.model_fields_set and w.gpu.type is not None:
        problems.append(
            f"{path}.gpu.type: {w.gpu.type!r} names a GKE accelerator, but an existing "
            "cluster's nodes carry no GKE labels, so it would select nothing. Remove gpu.type "
            f'and select the GPU nodes with {path}.nodeSelector (e.g. {{gpu: "true"}}).'
        )
    if w.spot:
        problems.append(
            f"{path}.spot: Spot is GKE capacity; an existing cluster has no such nodes to "
            f"select. Remove spot, or select the nodes you mean with {path}.nodeSelector."
        )
    if plugin is not None and plugin.sharing_replicas is not None and w.gpu.count > 1:
        problems.append(
            f"{path}.gpu.count: {w.gpu.count} GPUs, but devicePlugin.sharing time-slices the "
            "GPUs and the plugin fails any container that asks for more than 1 shared GPU "
            "(failRequestsGreaterThanOne). Set gpu.count to 1, or remove devicePlugin.sharing."
        )
    return problems


def _serves_a_model(w: WorkloadSpec) -> bool:
    """vLLM's OpenAI server, which fetches `--model` from Hugging Face at start."""
    return formats.is_vllm_image(w.image)


def default_requests(w: WorkloadSpec, mode: Mode | None) -> Resources:
    """Requests of a workload not on a Standard pool: Autopilot's sizing for its GPUs (see
    components/allocatable.py); nothing on an existing cluster (its nodes' size is unknown:
    the summary asks for resources instead of assuming a GKE machine)."""
    share = Resources(0, 0)
    if mode != "existing" and w.gpu.type in catalog.GPU_TYPES:
        try:
            share = allocatable.autopilot_default_requests(w.gpu.type, w.gpu.count)
        except ValueError:  # no machine carries that count: its own problem says so
            share = fit.UNSIZED_DEFAULT
    return Resources(
        allocatable.parse_cpu(w.resources.cpu) if w.resources.cpu else share.cpu_millicores,
        allocatable.parse_memory(w.resources.memory) if w.resources.memory else share.memory_bytes,
    )


def secret_env_values(i: int, w: WorkloadSpec, ctx: Context) -> set[str]:
    """Env vars whose value came from `secure:`. The engine only says that `workloads` holds a
    secret somewhere; without the stack file every env value is treated as one."""
    if "workloads" not in ctx.secret_keys:
        return set()
    base = f"workloads[{i}].env"
    return {
        key
        for key in w.env
        if ctx.secure_paths is None or formats.join(base, key) in ctx.secure_paths
    }


def resolve_workload(
    w: WorkloadSpec,
    pool: NodePoolConfig | None,
    secret_env: set[str],
    rollout: Literal["surge", "replace"],
    requests: Resources,
    driver_version: str | None,
    existing: bool = False,
) -> WorkloadConfig:
    probe = None
    if w.probe is not None and w.kind != "Job" and (w.probe.port or w.port):
        # vLLM answers /health (rules/vllm.py); another server's paths are unknown: TCP.
        path = w.probe.path or (vllm.HEALTH_PATH if _serves_a_model(w) else None)
        probe = Probe(path, w.probe.port or w.port or 0, w.probe.startup_seconds)
    return WorkloadConfig(
        name=w.name,
        kind=w.kind,
        image=w.image,
        # Existing clusters select GPU nodes by nodeSelector only: no GKE accelerator label.
        gpu_type=None if existing else w.gpu.type,
        gpu_count=w.gpu.count,
        spot=w.spot,
        replicas=w.replicas,
        command=tuple(w.command),
        args=tuple(w.args),
        env=tuple(sorted((k, v) for k, v in w.env.items() if k not in secret_env)),
        secret_env=tuple(sorted(w.secret_env.items())),
        secret_values=tuple(sorted((k, Secret(v)) for k, v in w.env.items() if k in secret_env)),
        port=w.port,
        probe=probe,
        cpu=w.resources.cpu
        or (None if existing else allocatable.cpu_quantity(requests.cpu_millicores)),
        memory=w.resources.memory
        or (None if existing else allocatable.memory_quantity(requests.memory_bytes)),
        cache=Cache(w.cache.size, w.cache.path, w.cache.storage_class) if w.cache else None,
        storage=(
            Storage(w.storage.size, w.storage.mount_path, w.storage.storage_class)
            if w.storage
            else None
        ),
        node_selector=tuple(sorted(w.node_selector.items())),
        expose=None,  # the loader sets it: exposure.resolve_expose (defaults depend on the mode)
        run_as_user=w.run_as_user,
        backoff_limit=w.backoff_limit,
        wait_for_completion=w.wait_for_completion,
        rollout=rollout,
        driver_version=driver_version,
        node_pool=pool,
        ephemeral_storage=w.resources.ephemeral_storage,
    )
