"""Where a workload's pods run: the Standard pool it lands on, or what Autopilot accepts."""

from __future__ import annotations

from ...facts import allocatable, catalog
from ...facts.allocatable import Resources
from ..context import Context
from ..platform_model import NodePoolConfig
from ..problems import Problem
from ..schema import Mode, WorkloadSpec
from ..variants import kind_spec
from . import fit
from .pools import choices, gpu_type_problems


def fits(w: WorkloadSpec, pool: NodePoolConfig, queued: bool = True) -> bool:
    """Whether `w`'s pods land on `pool`: its GPU, Spot, and (with `queued`) whether it waits in
    a queue, as a queued-provisioning pool serves queued Jobs only (rules/batch.py)."""
    if w.gpu.type != pool.gpu_type or w.spot != pool.spot:
        return False
    if queued and pool.queued_provisioning != (w.queue is not None):
        return False
    return w.gpu.count == 1 if pool.shared else w.gpu.count <= pool.gpu_count


def _gpu_known(i: int, w: WorkloadSpec, ctx: Context) -> bool:
    """A GKE workload whose GPU type is one the catalog has (else that is its problem)."""
    return (
        not ctx.existing
        and w.gpu.type is not None
        and not gpu_type_problems(f"workloads[{i}].gpu.type", w.gpu.type)
    )


def pool_for(i: int, w: WorkloadSpec, ctx: Context) -> NodePoolConfig | None:
    """Standard: the smallest pool that fits, so a 1-GPU pod never takes a node of a 4-GPU pool
    (none for a fallback: it runs on its ComputeClass's own pools)."""
    if ctx.mode != "standard" or w.fallback or not _gpu_known(i, w, ctx):
        return None
    fitting = [p for p in ctx.pools if fits(w, p)]
    return min(fitting, key=lambda p: (p.gpu_count, p.name)) if fitting else None


def autopilot_problems(i: int, w: WorkloadSpec, ctx: Context) -> list[Problem]:
    """The GPU counts and requests Autopilot accepts."""
    if ctx.mode != "autopilot" or not _gpu_known(i, w, ctx):
        return []
    assert w.gpu.type is not None
    path = f"workloads[{i}]"
    gpu = catalog.lookup(w.gpu.type)
    if not gpu.autopilot_counts:
        offered = tuple(g.name for g in catalog.GPU_TYPES.values() if g.autopilot_counts)
        return [
            Problem(
                f"{path}.gpu.type",
                f"{gpu.name} is not in the catalog's Autopilot table "
                "(components/facts/catalog/gpus.py GPU_TYPES). Use one of "
                f"{choices(offered)}, or cluster.mode: standard with a node pool.",
            )
        ]
    if w.gpu.count not in gpu.autopilot_counts:
        return [
            Problem(
                f"{path}.gpu.count",
                f"{w.gpu.count} GPUs per pod is not allowed for {gpu.name} on "
                f"Autopilot (allowed: {choices(gpu.autopilot_counts)}). Set one of those.",
            )
        ]
    return autopilot_request_problems(path, w)


def placement_problems(i: int, w: WorkloadSpec, ctx: Context) -> list[Problem]:
    """Standard: a workload without a fallback needs a pool that fits it."""
    if ctx.mode != "standard" or w.fallback or not _gpu_known(i, w, ctx) or pool_for(i, w, ctx):
        return []
    if w.gpu.type in ctx.broken_pool_gpus:
        return []  # the broken pool's own problem says what to fix
    if any(fits(w, p, queued=False) for p in ctx.pools):
        return [_queued_mismatch(i, w, ctx)]
    want = f"{w.gpu.count} x {w.gpu.type}{' on Spot' if w.spot else ''}"
    have = "; ".join(
        f"{p.name}: {p.gpu_count} x {p.gpu_type}{' Spot' if p.spot else ''}"
        + (" shared (1 GPU per container)" if p.shared else "")
        for p in ctx.pools
    )
    return [
        Problem(
            f"workloads[{i}].gpu",
            f"no node pool fits {want} (pools: {have or 'none'}). Add a node pool "
            "with that GPU type, at least that many GPUs per node and the same spot setting, "
            "or change the workload." + _hosts_hint(w, ctx),
        )
    ]


def _queued_mismatch(i: int, w: WorkloadSpec, ctx: Context) -> Problem:
    """A pool fits but for queueing: a queued Job on a pool without queuedProvisioning, or
    another workload on a pool that has it (whose nodes come only through a
    ProvisioningRequest, which only Kueue makes for a queued Job)."""
    pools = ", ".join(p.name for p in ctx.pools if fits(w, p, queued=False))
    if w.queue is not None:
        return Problem(
            f"workloads[{i}].queue",
            f"a queued Job's nodes come through a ProvisioningRequest, and its pool ({pools}) "
            "does not take one. Set queuedProvisioning: true on that pool (or add one with it), "
            "or remove queue.",
        )
    fix = (
        "Add queue: {maxRunDuration: ...} to wait for those nodes (to cap the run's length "
        "alone, activeDeadline needs no queue), or add a pool without queuedProvisioning."
        if kind_spec(w).completes and not w.spot
        else "Add a pool without queuedProvisioning."
    )
    return Problem(
        f"workloads[{i}].gpu",
        f"the pool that has this GPU ({pools}) has queuedProvisioning: true: its nodes come only "
        f"for a queued Job, so this workload would wait for ever. {fix}",
    )


def _hosts_hint(w: WorkloadSpec, ctx: Context) -> str:
    """Where pools of the type exist but none has that many GPUs per node, a bigger pool is not
    the only way: a replica may span nodes (`hosts`, issue 34)."""
    counts = [p.gpu_count for p in ctx.pools if p.gpu_type == w.gpu.type]
    if not counts or w.gpu.count <= max(counts):
        return ""
    most = max(counts)
    return (
        f" For a model bigger than one node, keep gpu.count at {most} (a node's GPUs) and set "
        f"hosts: {-(-w.gpu.count * w.hosts // most)}: each replica becomes a group of nodes."
    )


def autopilot_request_problems(path: str, w: WorkloadSpec) -> list[Problem]:
    """Autopilot places a GPU pod on a node of its GPU type and count, so it refuses requests no
    such node can hold ("60 vCPU with one T4": no N1 machine with one T4 has that many).

    Google publishes per-GPU minimum and maximum requests ("Resource requests in Autopilot",
    GPU section); that table could not be read here (only the page's first part is stored,
    checked 2026-11-23), so the maximum is derived instead: the allocatable, less GKE's own pods,
    of the largest machine carrying the GPUs (components/facts/catalog,
    components/facts/allocatable.py).
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
        Problem(
            f"{path}.resources",
            f"{w.resources.cpu or '-'} CPU / {w.resources.memory or '-'} memory per pod, but no "
            f"node with {w.gpu.count} x {w.gpu.type} holds that: Autopilot rejects the pod. "
            f"Allowed at most about {max_cpu // 100 / 10:g} CPU and {max_memory // 2**30}Gi "
            f"memory together (the largest such node, {largest.name}, less GKE's reservations; "
            "Google's own table may allow less). Lower the requests, or ask for more GPUs per pod.",
        )
    ]


def default_requests(w: WorkloadSpec, mode: Mode | None) -> Resources:
    """Requests of a workload not on a Standard pool: Autopilot's sizing for its GPUs (see
    components/facts/allocatable.py); on an existing cluster, whose nodes' size is unknown, no
    CPU and the stated memory floor (EXISTING_MEMORY_REQUEST_BYTES, a request without a limit:
    components/service/pod.py), which the plan names with the key that replaces it."""
    share = Resources(0, 0)
    if mode == "existing":
        share = Resources(0, allocatable.EXISTING_MEMORY_REQUEST_BYTES)
    elif w.gpu.type in catalog.GPU_TYPES:
        try:
            share = allocatable.autopilot_default_requests(w.gpu.type, w.gpu.count)
        except ValueError:  # no machine carries that count: its own problem says so
            share = fit.UNSIZED_DEFAULT
    return fit.requests(w, share)
