"""`load`: raw `gke-gpu:*` config -> one StackConfig, or a ConfigError listing every problem.

Each step is a function of what the steps before it produced; all add to one Problems and none
stops early, so one run reports every problem:
1. the keys themselves: project and region, sizes, unknown keys, and secrets where none make
   sense, whose values are skipped, so never shown (keys.py);
2. each key parsed (keys.py, parse.py): whatever parses is checked further, and what the rules
   say about a broken value is left out, as its own problem already says what to fix;
3. the rules: the cluster's, then POOL_RULES for each node pool and WORKLOAD_RULES for each
   workload, each `(index, spec, context) -> problems` in the module of what it protects, then
   the monitoring's (rules/monitoring.py);
4. the decisions, each made once: the pool each workload lands on, each pool's machine, driver
   and idle nodes, each workload's requests, rollout and capacity; then the configs the
   components, the summary and the cost read (build.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..facts import catalog
from . import build, keys
from .context import Context
from .model import Specs, StackConfig, WorkloadConfig
from .platform_model import NodePoolConfig
from .problems import ConfigError, Problem, Problems
from .rules import (
    adapters,
    batch,
    buckets,
    capacity_sources,
    coldstart,
    credentials,
    drivers,
    egress,
    endpoints,
    exposure,
    fallback,
    fit,
    hosts,
    images,
    machines,
    maintenance,
    model_fit,
    monitoring,
    mounts,
    names,
    network,
    placement,
    pools,
    production,
    registry,
    remote_code,
    routing,
    streamer,
    workloads,
)
from .rules import cluster as cluster_rules
from .schema import ClusterSpec, NodePoolSpec, WorkloadSpec
from .schema.monitoring import MonitoringSpec
from .variants import kind_spec

S = TypeVar("S")
Rule = Callable[[int, S, Context], Iterable[Problem]]

# The rules of one node pool and of one workload, in the order their problems are listed.
POOL_RULES: tuple[Rule[NodePoolSpec], ...] = (
    pools.pool_problems,
    capacity_sources.pool_problems,
    coldstart.pool_problems,
    batch.pool_problems,
)
WORKLOAD_RULES: tuple[Rule[WorkloadSpec], ...] = (
    workloads.basic_problems,
    workloads.expose_problems,
    workloads.probe_problems,
    workloads.env_problems,
    workloads.selector_problems,
    workloads.cache_disk_problems,
    placement.autopilot_problems,
    placement.placement_problems,
    drivers.workload_problems,
    coldstart.workload_problems,
    streamer.problems,
    coldstart.class_boot_disk_problems,
    exposure.workload_problems,
    network.static_ip_problems,
    exposure.gate_problems,
    exposure.sleep_without_key_problems,
    endpoints.consumer_problems,
    endpoints.domain_problems,
    egress.workload_problems,
    credentials.env_problems,
    credentials.arg_problems,
    credentials.secret_env_target_problems,
    credentials.api_key_length_problems,
    remote_code.problems,
    mounts.problems,
    adapters.problems,
    routing.problems,
    workloads.existing_workload_problems,
    batch.workload_problems,
    hosts.problems,
    model_fit.problems,
)


@dataclass(frozen=True)
class Draft:
    """A node pool without problems of its own, before its machine is chosen."""

    index: int
    spec: NodePoolSpec
    config: NodePoolConfig
    machines: tuple[catalog.MachineType, ...]
    """Its candidate machines that Compute Engine sells the way the pool buys them."""


Placed = list[tuple[int, WorkloadSpec, NodePoolConfig | None]]


def load(
    raw: Mapping[str, Any],
    *,
    project: str | None,
    region: str | None,
    stack: str,
    secret_keys: frozenset[str] = frozenset(),
    secure_paths: frozenset[str] | None = frozenset(),
    extra_problems: tuple[Problem, ...] = (),
    hidden: frozenset[str] = frozenset(),
) -> StackConfig:
    """Validate raw `gke-gpu:*` config (keys without the namespace) into a StackConfig.

    `secret_keys` are the top-level keys the engine marked secret; `secure_paths` the paths of
    the `secure:` leaves (None: unknown, so every value of a secret key counts as secret);
    `hidden` the other namespaces' secret keys (`gcp:project`), whose values are never shown.
    Raises ConfigError listing every problem; nothing else in the program runs first.
    """
    problems = Problems(list(extra_problems))
    raw_cluster = raw.get("cluster") or {}
    ctx = Context(
        secret_keys,
        secure_paths,
        mode=keys.mode(raw_cluster),
        region=region or "",
        project=project or "",
        kubeconfig_key=keys.kubeconfig_key(raw_cluster),
        secret_lengths=keys.secret_lengths(raw),
    )
    kept, raw_cluster = keys.check(raw, ctx, project, hidden, problems)
    parsed = keys.parse_all(kept, raw_cluster, ctx, problems)
    ctx = dataclasses.replace(
        ctx,
        cluster=parsed.cluster,
        cluster_name=(parsed.cluster.name if parsed.cluster else None) or names.cluster_name(stack),
        location=(parsed.cluster.location if parsed.cluster else None) or ctx.region,
        device_plugin=cluster_rules.device_plugin(raw.get("devicePlugin"), ctx, problems),
    )
    problems += _cluster_problems(raw, parsed, ctx, problems)
    decided, node_pools, ctx = decide(raw, parsed, ctx, problems)
    if parsed.monitoring is not None:
        problems += monitoring.problems(parsed.monitoring, ctx)
    reported = problems.final()
    if reported:
        raise ConfigError(reported)
    built = tuple(build.workload(plan, ctx) for plan in decided)
    return _stack(parsed, ctx, project, stack, tuple(node_pools.values()), built)


def decide(
    raw: Mapping[str, Any], parsed: keys.Parsed, ctx: Context, problems: Problems
) -> tuple[list[build.WorkloadPlan], dict[str, NodePoolConfig], Context]:
    """Steps 3 and 4 for the pools and workloads: their rules, then what is decided for each
    (the stack's load, and a GpuService's own Args: components/config/one_workload.py)."""
    drafts, broken = _pools(raw, parsed, ctx, problems)
    ctx = dataclasses.replace(
        ctx, pools=tuple(d.config for d in drafts), broken_pool_gpus=frozenset(broken)
    )
    placed = _workloads(parsed, ctx, problems)
    if ctx.existing and ctx.device_plugin is not None:
        selectors = [tuple(sorted(w.node_selector.items())) for _, w, _ in placed if w.gpu.count]
        plugin = cluster_rules.plugin_node_terms(ctx.device_plugin, selectors)
        ctx = dataclasses.replace(ctx, device_plugin=plugin)
    node_pools, fits = _fit(drafts, placed, parsed.cluster, problems)
    return _decide(placed, node_pools, fits, ctx, problems), node_pools, ctx


def _cluster_problems(
    raw: Mapping[str, Any], parsed: keys.Parsed, ctx: Context, problems: Problems
) -> list[Problem]:
    cluster, mode = parsed.cluster, ctx.mode
    found: list[Problem] = []
    if cluster is not None and mode is not None:
        if ctx.existing:
            given = "cluster.kubeconfig" in problems.broken
            found += cluster_rules.existing_cluster_problems(cluster, dict(raw), given, ctx)
        else:
            found += cluster_rules.gke_cluster_problems(cluster, ctx)
            found += maintenance.problems(cluster, ctx)
            found += machines.system_pool_problems(cluster, ctx)
        found += network.cluster_problems(cluster, ctx)
        found += production.cluster_problems(cluster, parsed.workloads, ctx)
    if mode in ("autopilot", "existing") and raw.get("nodePools"):
        found.append(
            Problem(
                "nodePools",
                f"node pools exist only in Standard clusters, and cluster.mode is {mode!r}. "
                + (
                    "Autopilot provisions GPU nodes from the workloads' gpu settings: remove "
                    "nodePools, or set cluster.mode: standard."
                    if mode == "autopilot"
                    else "An existing cluster brings its own GPU nodes: remove nodePools and "
                    "select those nodes with workloads[].nodeSelector."
                ),
            )
        )
    return found


def _pools(
    raw: Mapping[str, Any], parsed: keys.Parsed, ctx: Context, problems: Problems
) -> tuple[list[Draft], set[str]]:
    """Each pool's name (given, or from its GPU type) and rules; the pools without problems of
    their own, and the GPU types of the others (no workload is sent looking for those)."""
    drafts: list[Draft] = []
    broken = {
        str(item["gpu"].get("type"))
        for item in keys.items(raw.get("nodePools"))
        if isinstance(item, Mapping) and isinstance(item.get("gpu"), Mapping)
    } - {spec.gpu.type for _, spec in parsed.pools if spec.gpu.type}
    given = {spec.name for _, spec in parsed.pools if spec.name}
    seen: set[str] = set()
    for i, spec in parsed.pools:
        name = spec.name or names.pool_name(spec.gpu.type or "gpu", given | seen)
        problems += names.taken(
            f"nodePools[{i}]", name, seen, ctx.is_secret(f"nodePools[{i}].name")
        )
        found = [problem for rule in POOL_RULES for problem in rule(i, spec, ctx)]
        problems += found
        if found and spec.gpu.type is not None:
            broken.add(spec.gpu.type)
        sold = capacity_sources.sold_as_wanted(spec, pools.machine_candidates(spec))
        if not found and sold and spec.gpu.type and name not in {d.config.name for d in drafts}:
            drafts.append(Draft(i, spec, build.draft_pool(spec, name, ctx), sold))
    specs = parsed.workloads
    all_fallback = bool(specs) and all(w.fallback for _, w in specs)
    if (
        ctx.mode == "standard"
        and not raw.get("nodePools")
        and not problems.found
        and not all_fallback
    ):
        broken.update(w.gpu.type for _, w in specs if w.gpu.type)
        problems += [
            Problem(
                "nodePools",
                "a Standard cluster needs at least one GPU node pool for its "
                "workloads. Add one, e.g. {name: l4, gpu: {type: nvidia-l4, count: 1}}.",
            )
        ]
    return drafts, broken


def _workloads(parsed: keys.Parsed, ctx: Context, problems: Problems) -> Placed:
    """Each workload's rules, and the pool it lands on (Standard)."""
    placed: Placed = []
    seen: set[str] = set()
    for i, w in parsed.workloads:
        secret = ctx.is_secret(f"workloads[{i}].name")
        problems += names.taken(f"workloads[{i}]", w.name, seen, secret)
        problems += [problem for rule in WORKLOAD_RULES for problem in rule(i, w, ctx)]
        placed.append((i, w, placement.pool_for(i, w, ctx)))
    problems += names.object_name_problems(
        [
            (
                i,
                w.name,
                kind_spec(w),
                w.expose is not None,
                routing.resolve(w) == routing.CACHE_AWARE,
            )
            for i, w, _ in placed
        ],
        hidden=any(ctx.is_secret(f"workloads[{i}].name") for i, _, _ in placed),
    )
    problems += endpoints.shared_domain_problems(parsed.workloads, ctx)
    problems += buckets.shared_bucket_problems(parsed.workloads, ctx)
    return placed


def _fit(
    drafts: list[Draft], placed: Placed, cluster: ClusterSpec | None, problems: Problems
) -> tuple[dict[str, NodePoolConfig], dict[str, fit.PoolFit]]:
    """Each pool's machine: the smallest whose allocatable holds every pod placed on it; then
    the pool's capacity at maxNodes and its driver (rules/fit.py, rules/drivers.py)."""
    node_pools: dict[str, NodePoolConfig] = {}
    fits: dict[str, fit.PoolFit] = {}
    for d in drafts:
        on_pool = [(i, w) for i, w, p in placed if p is d.config]
        named = d.spec.machine_type is not None
        chosen = fit.choose_machine(d.config, d.index, d.machines, on_pool, named)
        problems += chosen.problems
        problems += fit.capacity_problems(d.config, d.index, chosen, on_pool)
        driver = drivers.pool_driver(d.spec, [w for _, w in on_pool])
        problems += drivers.pool_problems(d.index, d.spec, driver, on_pool)
        fits[d.config.name] = chosen
        node_pools[d.config.name] = dataclasses.replace(
            d.config,
            machine_type=chosen.machine.name,
            driver=driver,
            service_account=cluster.node_service_account if cluster else None,
            node_allocatable=fit.node_allocatable(d.config, chosen.machine),
            room=chosen.room,
            pinned_nodes=fit.pinned_nodes(d.config, on_pool),
        )
    return node_pools, fits


def _decide(
    placed: Placed,
    node_pools: dict[str, NodePoolConfig],
    fits: dict[str, fit.PoolFit],
    ctx: Context,
    problems: Problems,
) -> list[build.WorkloadPlan]:
    """Each workload's final pool, requests, rollout and capacity (its fallbacks' priorities)."""
    decided: list[build.WorkloadPlan] = []
    for i, w, pool in placed:
        pool_fit = fits.get(pool.name) if pool else None
        requests = (
            pool_fit.requests[i]
            if pool_fit is not None
            else placement.default_requests(w, ctx.mode)
        )
        found, capacity = fallback.plan(i, w, ctx, requests)
        problems += found
        on_pool = [(j, other) for j, other, p in placed if p is pool]
        rollout = fit.rollout(ctx.mode or "autopilot", w, i, pool, pool_fit, on_pool)
        final = node_pools[pool.name] if pool else None
        decided.append(build.WorkloadPlan(i, w, final, requests, rollout, capacity))
    return decided


def _stack(
    parsed: keys.Parsed,
    ctx: Context,
    project: str | None,
    stack: str,
    node_pools: tuple[NodePoolConfig, ...],
    built: tuple[WorkloadConfig, ...],
) -> StackConfig:
    assert parsed.cluster is not None and (project or ctx.existing)
    repositories, elsewhere = (
        registry.repositories((w.spec.image for w in built), project or "")
        if not ctx.existing
        else ((), [])
    )
    return StackConfig(
        project=project or "",
        region=ctx.region,
        stack=stack,
        namespace=parsed.namespace,
        cluster=build.cluster(parsed.cluster, ctx, stack, node_pools, built),
        node_pools=node_pools,
        workloads=built,
        secrets=tuple(sorted({key for w in built for key in w.spec.secret_env.values()})),
        image_repositories=repositories,
        advisories=(
            *coldstart.advisories(built),
            *elsewhere,
            *([] if ctx.existing else drivers.advisories(parsed.workloads)),
            *production.advisories(parsed.cluster, ctx),
            *exposure.advisories(parsed.workloads),
            *model_fit.advisories(parsed.workloads),
            *images.advisories(parsed.workloads, ctx.existing),
            *buckets.advisories(parsed.workloads, project or "", parsed.namespace),
        ),
        monitoring=parsed.monitoring or MonitoringSpec(),
        specs=Specs(
            parsed.cluster,
            tuple(spec for _, spec in parsed.pools),
            tuple(spec for _, spec in parsed.workloads),
        ),
    )
