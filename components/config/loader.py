"""`load`: raw `gke-gpu:*` config -> one StackConfig, or a ConfigError listing every problem."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from components import catalog
from components.config import defaults
from components.config.model import (
    ClusterConfig,
    ConfigError,
    ExistingClusterConfig,
    NodePoolConfig,
    StackConfig,
)
from components.config.parse import Context, Problems, parse, parse_list
from components.config.rules import (
    capacity_sources,
    coldstart,
    drivers,
    exposure,
    fit,
    names,
    pools,
    workloads,
)
from components.config.rules import cluster as cluster_rules
from components.config.schema import MODES, ClusterSpec, Mode, NodePoolSpec, WorkloadSpec
from components.config.source import KNOWN_KEYS


def _mode(raw_cluster: Any) -> Mode | None:
    """The mode drives the other checks even when `cluster` itself has problems."""
    if not isinstance(raw_cluster, Mapping):
        return None
    value = raw_cluster.get("mode", "autopilot")
    return next((m for m in MODES if m == value), None)


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _count(value: Any) -> int:
    return len(value) if isinstance(value, list) else 0


def _referenced_keys(raw: Mapping[str, Any]) -> set[str]:
    """Top-level keys named by cluster.kubeconfig or secretEnv (they get their own message)."""
    found: set[str] = set()
    cluster = raw.get("cluster")
    if isinstance(cluster, Mapping) and isinstance(cluster.get("kubeconfig"), str):
        found.add(cluster["kubeconfig"])
    for item in raw.get("workloads") or [] if isinstance(raw.get("workloads"), list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("secretEnv"), Mapping):
            found.update(v for v in item["secretEnv"].values() if isinstance(v, str))
    return found


def load(
    raw: Mapping[str, Any],
    *,
    project: str | None,
    region: str | None,
    stack: str,
    secret_keys: frozenset[str] = frozenset(),
    secure_paths: frozenset[str] | None = frozenset(),
    extra_problems: tuple[str, ...] = (),
    hidden: frozenset[str] = frozenset(),
) -> StackConfig:
    """Validate raw `gke-gpu:*` config (keys without the namespace) into a StackConfig.

    `secret_keys` are the top-level keys the engine marked secret; `secure_paths` the paths of
    the `secure:` leaves (None: unknown, so every value of a secret key counts as secret);
    `hidden` the other namespaces' secret keys (`gcp:project`), whose values are never shown.
    Raises ConfigError listing every problem; nothing else in the program runs first.
    """
    ctx = Context(secret_keys=secret_keys, secure_paths=secure_paths)
    problems = Problems()
    problems += list(extra_problems)
    raw_cluster = raw.get("cluster") or {}
    mode = _mode(raw_cluster)
    existing = mode == "existing"
    if not existing:  # an existing cluster needs no Google Cloud project or region
        problems += names.project_problems(project, "gcp:project" in hidden)
        problems += names.region_problems(region, "gcp:region" in hidden)
    region = region or ""
    referenced = _referenced_keys(raw)
    for key in raw:
        if key not in KNOWN_KEYS and key not in referenced:
            problems.add(
                f"gke-gpu:{key}: unknown key. Known keys: {', '.join(sorted(KNOWN_KEYS))}. "
                "Check the spelling (secrets for workloads[].secretEnv are set with --secret)."
            )
    # Secrets where none make sense are reported (and their leaves skipped) before parsing, so
    # that the placeholder of a `secure:` count is not also called "not a number".
    for problem in cluster_rules.secret_placement_problems(ctx) + [
        p
        for i in range(_count(raw.get("workloads")))
        for p in workloads.secret_placement_problems(i, ctx)
    ]:
        problems.own(problem)
        problems.mark_broken(problem.split(": ", 1)[0])

    if isinstance(raw_cluster, Mapping) and isinstance(raw_cluster.get("kubeconfig"), Mapping):
        # A kubeconfig pasted in as YAML: never let a type error echo it (credentials).
        problems.own(
            "cluster.kubeconfig: holds a kubeconfig written out as YAML (not shown here, as it "
            "may hold credentials). Store it as a secret string instead: "
            f"`{cluster_rules.KUBECONFIG_FIX}`."
        )
        problems.mark_broken("cluster.kubeconfig")
        raw_cluster = {k: v for k, v in raw_cluster.items() if k != "kubeconfig"}
    cluster = parse(ClusterSpec, raw_cluster, "cluster", problems, ctx)
    pool_specs = parse_list(NodePoolSpec, raw.get("nodePools"), "nodePools", problems, ctx)
    raw_workloads = raw.get("workloads")
    if raw_workloads is None:
        raw_workloads = defaults.default_workloads(mode)
    workload_specs = parse_list(WorkloadSpec, raw_workloads, "workloads", problems, ctx)
    namespace = raw.get("namespace", defaults.DEFAULT_NAMESPACE)
    problems += names.namespace_problems(namespace)
    device_plugin = cluster_rules.device_plugin(raw.get("devicePlugin"), mode, problems, ctx)

    location = (cluster.location if cluster else None) or region
    if cluster is not None and existing:
        problems += cluster_rules.existing_cluster_problems(
            cluster, dict(raw), "cluster.kubeconfig" in problems.broken, ctx
        )
    elif cluster is not None and mode is not None:
        problems += cluster_rules.gke_cluster_problems(cluster, mode, region, ctx)
    if cluster is not None and mode is not None:
        problems += exposure.cluster_problems(cluster, mode, region, ctx)
    if mode in ("autopilot", "existing") and raw.get("nodePools"):
        problems.add(
            f"nodePools: node pools exist only in Standard clusters, and cluster.mode is "
            f"{mode!r}. "
            + (
                "Autopilot provisions GPU nodes from the workloads' gpu settings: remove "
                "nodePools, or set cluster.mode: standard."
                if mode == "autopilot"
                else "An existing cluster brings its own GPU nodes: remove nodePools and "
                "select those nodes with workloads[].nodeSelector."
            )
        )

    # Node pools: names (given, or derived from the GPU type), then each pool's own rules.
    resolved: list[NodePoolConfig] = []
    candidates: dict[str, tuple[int, tuple[catalog.MachineType, ...], bool]] = {}
    broken_pool_gpus: set[str] = {
        str(item["gpu"].get("type"))
        for item in _items(raw.get("nodePools"))
        if isinstance(item, Mapping) and isinstance(item.get("gpu"), Mapping)
    } - {spec.gpu.type for _, spec in pool_specs if spec.gpu.type}
    given = {spec.name for _, spec in pool_specs if spec.name}
    pool_names: set[str] = set()
    for i, spec in pool_specs:
        name = spec.name or names.pool_name(spec.gpu.type or "gpu", given | pool_names)
        problems += names.taken(f"nodePools[{i}]", name, pool_names)
        pool_problems, machines = pools.pool_problems(i, spec, location, region)
        channel = cluster.release_channel if cluster is not None else None
        pool_problems += capacity_sources.pool_problems(
            i, spec, machines, location, region, channel
        )
        pool_problems += coldstart.pool_problems(i, spec, channel)
        machines = capacity_sources.sold_as_wanted(spec, machines)
        problems += pool_problems
        if pool_problems and spec.gpu.type is not None:
            broken_pool_gpus.add(spec.gpu.type)
        if not pool_problems and machines and spec.gpu.type and name not in candidates:
            pool = pools.resolve_pool(spec, name, machine_type="")  # machine chosen below
            extras = {**capacity_sources.pool_extras(spec), **coldstart.pool_settings(spec)}
            resolved.append(dataclasses.replace(pool, **extras))
            candidates[name] = (i, machines, spec.machine_type is not None)
    all_fallback = bool(workload_specs) and all(w.fallback for _, w in workload_specs)
    if mode == "standard" and not raw.get("nodePools") and not problems.items and not all_fallback:
        broken_pool_gpus.update(w.gpu.type for _, w in workload_specs if w.gpu.type)
        problems.add(
            "nodePools: a Standard cluster needs at least one GPU node pool for its workloads. "
            "Add one, e.g. {name: l4, gpu: {type: nvidia-l4, count: 1}}."
        )

    # Workloads: each one's own rules, and the pool it lands on (Standard).
    placed = []
    workload_names: set[str] = set()
    for i, w in workload_specs:
        problems += names.taken(f"workloads[{i}]", w.name, workload_names)
        w_problems, pool = workloads.workload_problems(
            i, w, mode, resolved, ctx, frozenset(broken_pool_gpus)
        )
        problems += w_problems
        problems += drivers.workload_problems(i, w, mode)
        problems += coldstart.workload_problems(i, w, mode)
        problems += exposure.workload_problems(i, w, mode)
        problems += exposure.static_ip_problems(i, w, cluster)
        if existing:
            problems += workloads.existing_workload_problems(i, w, device_plugin)
        placed.append((i, w, pool))
    problems += names.object_name_problems([(i, w.name, w.kind) for i, w, _ in placed])

    pool_specs_by_index = dict(pool_specs)
    # Each pool's machine: the smallest whose allocatable holds every pod placed on it; then the
    # pool's capacity at maxNodes and each workload's rollout on it.
    fits: dict[str, fit.PoolFit] = {}
    final: dict[str, NodePoolConfig] = {}
    for pool in resolved:
        index, machines, named = candidates[pool.name]
        on_pool = [(i, w) for i, w, p in placed if p is pool]
        fits[pool.name] = chosen = fit.choose_machine(pool, index, machines, on_pool, named)
        problems += chosen.problems
        problems += fit.capacity_problems(pool, index, chosen, on_pool)
        spec = pool_specs_by_index[index]
        driver = drivers.pool_driver(spec, [w for _, w in on_pool])
        problems += drivers.pool_problems(index, spec, driver, on_pool)
        final[pool.name] = dataclasses.replace(
            pool, machine_type=chosen.machine.name, driver=driver
        )
    resolved_workloads = []
    for i, w, p in placed:
        pool_fit = fits.get(p.name) if p else None
        on_pool = [(j, o) for j, o, q in placed if q is p]
        requests = (
            pool_fit.requests[i] if pool_fit is not None else workloads.default_requests(w, mode)
        )
        capacity_problems, capacity = capacity_sources.workload_problems(i, w, mode, requests)
        problems += capacity_problems
        one = workloads.resolve_workload(
            w,
            final[p.name] if p else None,
            workloads.secret_env_values(i, w, ctx),
            fit.rollout(mode or "autopilot", w, i, p, pool_fit, on_pool),
            requests,
            drivers.autopilot_selector(w, mode),
            existing,
        )
        resolved_workloads.append(
            dataclasses.replace(
                one,
                expose=exposure.resolve_expose(w),
                api_key=exposure.api_key(w),
                **coldstart.workload_settings(w),
            )
        )
        if capacity:  # its pods select the workload's ComputeClass (components/compute_class.py)
            resolved_workloads[-1] = dataclasses.replace(
                resolved_workloads[-1],
                capacity=capacity,
                compute_class=capacity_sources.class_name(w.name),
            )

    reported = problems.final()
    if reported:
        raise ConfigError(reported)
    assert cluster is not None and mode is not None and (project or existing)
    node_pools = tuple(final.values())
    return StackConfig(
        project=project or "",
        region=region,
        stack=stack,
        namespace=namespace,
        cluster=ExistingClusterConfig(
            kubeconfig=cluster_rules.kubeconfig(cluster, ctx),
            context=cluster.context,
            device_plugin=device_plugin,
            production=cluster.production,
        )
        if existing
        else ClusterConfig(
            mode=mode,
            name=cluster.name or names.cluster_name(stack),
            location=location,
            release_channel=cluster.release_channel,
            deletion_protection=cluster.deletion_protection,
            master_authorized_networks=tuple(cluster.master_authorized_networks),
            private_nodes=cluster.private_nodes,
            system_machine_type=cluster.system_pool.machine_type,
            system_nodes=cluster.system_pool.nodes,
            auto_provisioning_limits=capacity_sources.auto_provisioning_limits(
                mode, location, region, cluster.system_pool, node_pools, resolved_workloads
            ),
            network=cluster.network or exposure.DEFAULT_NETWORK,
            subnetwork=cluster.subnetwork,
            pod_range=cluster.pod_range,
            service_range=cluster.service_range,
            node_service_account=cluster.node_service_account,
            production=cluster.production,
            dataplane_v2=cluster.dataplane_v2,
        ),
        node_pools=node_pools,
        workloads=tuple(resolved_workloads),
        secrets=tuple(sorted({key for w in resolved_workloads for _, key in w.secret_env})),
        advisories=tuple(coldstart.advisories(tuple(resolved_workloads))),
    )
