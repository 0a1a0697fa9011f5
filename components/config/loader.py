"""`load`: raw `gke-gpu:*` config -> one StackConfig, or a ConfigError listing every problem."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components import catalog
from components.config import defaults
from components.config.model import (
    ClusterConfig,
    ConfigError,
    ExistingClusterConfig,
    NodePoolConfig,
    StackConfig,
    WorkloadConfig,
)
from components.config.parse import Context, Problems, parse, parse_list
from components.config.rules import (
    capacity_sources,
    coldstart,
    credentials,
    drivers,
    egress,
    exposure,
    fit,
    machines,
    mounts,
    names,
    pools,
    registry,
    sizes,
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


def _kubeconfig_key(cluster: Any) -> str | None:
    """cluster.kubeconfig as written: the name of the key holding the kubeconfig, or (secure:)
    the kubeconfig itself; only ever compared, never shown."""
    value = cluster.get("kubeconfig") if isinstance(cluster, Mapping) else None
    return value if isinstance(value, str) else None


def _referenced_keys(raw: Mapping[str, Any]) -> set[str]:
    """Top-level keys named by cluster.kubeconfig or secretEnv (they get their own message)."""
    found: set[str] = set()
    kubeconfig = _kubeconfig_key(raw.get("cluster"))
    if kubeconfig is not None:
        found.add(kubeconfig)
    for item in raw.get("workloads") or [] if isinstance(raw.get("workloads"), list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("secretEnv"), Mapping):
            found.update(v for v in item["secretEnv"].values() if isinstance(v, str))
    return found


@dataclass
class _Load:
    """One run of `load`, phase by phase; each phase adds to `problems` and never stops early,
    so one run reports every problem."""

    raw: Mapping[str, Any]
    ctx: Context
    stack: str
    project: str | None
    region: str
    hidden: frozenset[str]
    problems: Problems = field(default_factory=Problems)

    def __post_init__(self) -> None:
        self.raw_cluster: Any = self.raw.get("cluster") or {}
        self.mode: Mode | None = _mode(self.raw_cluster)
        self.existing = self.mode == "existing"

    # --- phase 1: the keys themselves ---------------------------------------------------------

    def top_level(self) -> None:
        raw, problems = self.raw, self.problems
        if not self.existing:  # an existing cluster needs no Google Cloud project or region
            problems += names.project_problems(self.project, "gcp:project" in self.hidden)
            problems += names.region_problems(self.region or None, "gcp:region" in self.hidden)
        oversized = sizes.size_problems(raw)
        if oversized:  # nothing else is worth reading (or safe to walk) in such a value
            raise ConfigError([*problems.items, *oversized])
        referenced = _referenced_keys(raw)
        for key in raw:
            if key not in KNOWN_KEYS and key not in referenced:
                problems.add(
                    f"gke-gpu:{key}: unknown key. Known keys: {', '.join(sorted(KNOWN_KEYS))}. "
                    "Check the spelling (secrets for workloads[].secretEnv are set with --secret)."
                )
        # Secrets where none make sense are reported (and their leaves skipped) before parsing,
        # so that the placeholder of a `secure:` count is not also called "not a number".
        for problem in cluster_rules.secret_placement_problems(self.ctx) + [
            p
            for i in range(_count(raw.get("workloads")))
            for p in workloads.secret_placement_problems(i, self.ctx)
        ]:
            problems.own(problem)
            problems.mark_broken(problem.split(": ", 1)[0])
        if isinstance(self.raw_cluster, Mapping) and isinstance(
            self.raw_cluster.get("kubeconfig"), Mapping
        ):
            # A kubeconfig pasted in as YAML: never let a type error echo it (credentials).
            problems.own(
                "cluster.kubeconfig: holds a kubeconfig written out as YAML (not shown here, as "
                "it may hold credentials). Store it as a secret string instead: "
                f"`{cluster_rules.KUBECONFIG_FIX}`."
            )
            problems.mark_broken("cluster.kubeconfig")
            self.raw_cluster = {k: v for k, v in self.raw_cluster.items() if k != "kubeconfig"}

    # --- phase 2: each key's shape, then the cluster -------------------------------------------

    def parse(self) -> None:
        raw, problems, ctx = self.raw, self.problems, self.ctx
        self.cluster = parse(ClusterSpec, self.raw_cluster, "cluster", problems, ctx)
        self.pool_specs = parse_list(NodePoolSpec, raw.get("nodePools"), "nodePools", problems, ctx)
        raw_workloads = raw.get("workloads")
        if raw_workloads is None:
            raw_workloads = defaults.default_workloads(self.mode)
        self.workload_specs = parse_list(WorkloadSpec, raw_workloads, "workloads", problems, ctx)
        self.namespace = raw.get("namespace", defaults.DEFAULT_NAMESPACE)
        # A secret namespace is already reported (top_level, never shown); checking its name
        # would echo the value.
        if not problems.is_broken("namespace"):
            problems += names.namespace_problems(self.namespace)
        self.device_plugin = cluster_rules.device_plugin(
            raw.get("devicePlugin"), self.mode, problems, ctx
        )

    def cluster_rules(self) -> None:
        cluster, mode, problems = self.cluster, self.mode, self.problems
        self.location = (cluster.location if cluster else None) or self.region
        if cluster is not None and self.existing:
            problems += cluster_rules.existing_cluster_problems(
                cluster, dict(self.raw), "cluster.kubeconfig" in problems.broken, self.ctx
            )
        elif cluster is not None and mode is not None:
            problems += cluster_rules.gke_cluster_problems(cluster, mode, self.region, self.ctx)
            problems += machines.system_pool_problems(cluster, mode, self.ctx)
        if cluster is not None and mode is not None:
            problems += exposure.cluster_problems(cluster, mode, self.region, self.ctx)
            problems += cluster_rules.production_problems(
                cluster, mode, self.workload_specs, self.ctx
            )
        if mode in ("autopilot", "existing") and self.raw.get("nodePools"):
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

    # --- phase 3: node pools: names (given, or from the GPU type), then each pool's rules -----

    def pools(self) -> None:
        problems = self.problems
        self.resolved: list[NodePoolConfig] = []
        self.candidates: dict[str, tuple[int, tuple[catalog.MachineType, ...], bool]] = {}
        self.broken_pool_gpus: set[str] = {
            str(item["gpu"].get("type"))
            for item in _items(self.raw.get("nodePools"))
            if isinstance(item, Mapping) and isinstance(item.get("gpu"), Mapping)
        } - {spec.gpu.type for _, spec in self.pool_specs if spec.gpu.type}
        given = {spec.name for _, spec in self.pool_specs if spec.name}
        pool_names: set[str] = set()
        channel = self.cluster.release_channel if self.cluster is not None else None
        for i, spec in self.pool_specs:
            name = spec.name or names.pool_name(spec.gpu.type or "gpu", given | pool_names)
            problems += names.taken(f"nodePools[{i}]", name, pool_names)
            pool_problems, machines = pools.pool_problems(i, spec, self.location, self.region)
            pool_problems += capacity_sources.pool_problems(
                i, spec, machines, self.location, self.region, channel
            )
            pool_problems += coldstart.pool_problems(i, spec, channel)
            machines = capacity_sources.sold_as_wanted(spec, machines)
            problems += pool_problems
            if pool_problems and spec.gpu.type is not None:
                self.broken_pool_gpus.add(spec.gpu.type)
            if not pool_problems and machines and spec.gpu.type and name not in self.candidates:
                pool = pools.resolve_pool(spec, name, self.location, self.region)  # machine: fit()
                extras = {**capacity_sources.pool_extras(spec), **coldstart.pool_settings(spec)}
                self.resolved.append(dataclasses.replace(pool, **extras))
                self.candidates[name] = (i, machines, spec.machine_type is not None)
        specs = self.workload_specs
        all_fallback = bool(specs) and all(w.fallback for _, w in specs)
        if (
            self.mode == "standard"
            and not self.raw.get("nodePools")
            and not problems.items
            and not all_fallback
        ):
            self.broken_pool_gpus.update(w.gpu.type for _, w in specs if w.gpu.type)
            problems.add(
                "nodePools: a Standard cluster needs at least one GPU node pool for its "
                "workloads. Add one, e.g. {name: l4, gpu: {type: nvidia-l4, count: 1}}."
            )

    # --- phase 4: workloads: each one's rules, and the pool it lands on (Standard) ------------

    def workloads(self) -> None:
        problems, mode = self.problems, self.mode
        self.placed: list[tuple[int, WorkloadSpec, NodePoolConfig | None]] = []
        workload_names: set[str] = set()
        for i, w in self.workload_specs:
            problems += names.taken(f"workloads[{i}]", w.name, workload_names)
            w_problems, pool = workloads.workload_problems(
                i, w, mode, self.resolved, self.ctx, frozenset(self.broken_pool_gpus)
            )
            problems += w_problems
            problems += drivers.workload_problems(i, w, mode)
            problems += coldstart.workload_problems(i, w, mode)
            problems += exposure.workload_problems(i, w, mode)
            problems += exposure.static_ip_problems(i, w, self.cluster)
            problems += exposure.gate_problems(i, w, mode)
            problems += egress.workload_problems(i, w, self.ctx)
            problems += credentials.env_problems(i, w, self.ctx)
            problems += credentials.arg_problems(i, w)
            problems += credentials.secret_env_target_problems(
                i, w, _kubeconfig_key(self.raw_cluster)
            )
            problems += mounts.problems(i, w)
            if self.existing:
                problems += workloads.existing_workload_problems(i, w, self.device_plugin)
            self.placed.append((i, w, pool))
        if self.existing:
            self.device_plugin = cluster_rules.plugin_node_terms(
                self.device_plugin,
                [tuple(sorted(w.node_selector.items())) for _, w, _ in self.placed if w.gpu.count],
            )
        problems += names.object_name_problems(
            [(i, w.name, w.kind, w.expose is not None) for i, w, _ in self.placed]
        )

    # --- phase 5: what GKE will schedule: machines, capacity, drivers (rules/fit.py) ----------

    def fit(self) -> None:
        """Each pool's machine: the smallest whose allocatable holds every pod placed on it;
        then the pool's capacity at maxNodes and its driver."""
        specs = dict(self.pool_specs)
        self.fits: dict[str, fit.PoolFit] = {}
        self.final: dict[str, NodePoolConfig] = {}
        for pool in self.resolved:
            index, machines, named = self.candidates[pool.name]
            on_pool = [(i, w) for i, w, p in self.placed if p is pool]
            chosen = fit.choose_machine(pool, index, machines, on_pool, named)
            self.fits[pool.name] = chosen
            self.problems += chosen.problems
            self.problems += fit.capacity_problems(pool, index, chosen, on_pool)
            driver = drivers.pool_driver(specs[index], [w for _, w in on_pool])
            self.problems += drivers.pool_problems(index, specs[index], driver, on_pool)
            self.final[pool.name] = dataclasses.replace(
                pool,
                machine_type=chosen.machine.name,
                driver=driver,
                service_account=self.cluster.node_service_account if self.cluster else None,
            )

    def resolve_workloads(self) -> None:
        mode = self.mode
        self.resolved_workloads: list[WorkloadConfig] = []
        for i, w, p in self.placed:
            pool_fit = self.fits.get(p.name) if p else None
            on_pool = [(j, o) for j, o, q in self.placed if q is p]
            requests = (
                pool_fit.requests[i]
                if pool_fit is not None
                else workloads.default_requests(w, mode)
            )
            capacity_problems, capacity = capacity_sources.workload_problems(i, w, mode, requests)
            self.problems += capacity_problems
            one = workloads.resolve_workload(
                w,
                self.final[p.name] if p else None,
                workloads.secret_env_values(i, w, self.ctx),
                fit.rollout(mode or "autopilot", w, i, p, pool_fit, on_pool),
                requests,
                drivers.autopilot_selector(w, mode),
                self.existing,
            )
            one = dataclasses.replace(
                one,
                secret_args="workloads" in self.ctx.secret_keys and self.ctx.secure_paths is None,
                expose=exposure.resolve_expose(w, mode),
                api_key=exposure.api_key(w),
                run_as_user=egress.run_as_user(w),
                read_only_root_filesystem=w.read_only_root_filesystem,
                egress=egress.resolve(w),
                **coldstart.workload_settings(w),
            )
            if capacity:  # its pods select the workload's ComputeClass (compute_class.py)
                one = dataclasses.replace(
                    one, capacity=capacity, compute_class=capacity_sources.class_name(w.name)
                )
            self.resolved_workloads.append(one)

    # --- the result --------------------------------------------------------------------------

    def result(self) -> StackConfig:
        reported = self.problems.final()
        if reported:
            raise ConfigError(reported)
        cluster, mode = self.cluster, self.mode
        assert cluster is not None and mode is not None and (self.project or self.existing)
        node_pools = tuple(self.final.values())
        built = tuple(self.resolved_workloads)
        repositories, elsewhere = (
            registry.repositories((w.image for w in built), self.project or "")
            if not self.existing
            else ((), [])
        )
        return StackConfig(
            project=self.project or "",
            region=self.region,
            stack=self.stack,
            namespace=self.namespace,
            cluster=ExistingClusterConfig(
                kubeconfig=cluster_rules.kubeconfig(cluster, self.ctx),
                context=cluster.context,
                device_plugin=self.device_plugin,
                production=cluster.production,
            )
            if self.existing
            else ClusterConfig(
                mode=mode,
                name=cluster.name or names.cluster_name(self.stack),
                location=self.location,
                release_channel=cluster.release_channel,
                deletion_protection=cluster.deletion_protection,
                master_authorized_networks=tuple(cluster.master_authorized_networks),
                private_nodes=cluster.private_nodes,
                cloud_nat=(
                    cluster.private_nodes if cluster.cloud_nat is None else cluster.cloud_nat
                ),
                system_machine_type=cluster.system_pool.machine_type,
                system_nodes=cluster.system_pool.nodes,
                auto_provisioning_limits=capacity_sources.auto_provisioning_limits(
                    mode, self.location, self.region, cluster.system_pool, node_pools, built
                ),
                network=cluster.network or exposure.DEFAULT_NETWORK,
                subnetwork=cluster.subnetwork,
                pod_range=cluster.pod_range,
                service_range=cluster.service_range,
                node_service_account=cluster.node_service_account,
                production=cluster.production,
                dataplane_v2=cluster.dataplane_v2,
                dns_endpoint=cluster.dns_endpoint,
                secrets_encryption_key=cluster.secrets_encryption_key,
                binary_authorization=(
                    cluster.production
                    if cluster.binary_authorization is None
                    else cluster.binary_authorization
                ),
            ),
            node_pools=node_pools,
            workloads=built,
            secrets=tuple(sorted({key for w in built for _, key in w.secret_env})),
            image_repositories=repositories,
            advisories=(*coldstart.advisories(built), *elsewhere),
        )


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
    run = _Load(
        raw,
        Context(secret_keys=secret_keys, secure_paths=secure_paths),
        stack,
        project,
        region or "",
        hidden,
    )
    run.problems += list(extra_problems)
    run.top_level()
    run.parse()
    run.cluster_rules()
    run.pools()
    run.workloads()
    run.fit()
    run.resolve_workloads()
    return run.result()
