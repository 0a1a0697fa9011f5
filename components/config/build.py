"""The resolved config, built once from the specs and the decisions made about them.

The workload's classes carry their spec (`spec=`) and hold only what is decided, named here next
to the module that decides it (dev/restated.py checks that none copies a schema field). The
platform's classes are also its components' Args, plain types a consumer sets: `from_spec` fills
each field its spec has by the same name.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel

from ..facts import allocatable, catalog
from ..facts.allocatable import Resources
from ..facts.catalog import zones
from . import formats, typed
from .context import Context
from .model import CapacityChoice, Egress, Expose, ModelCache, Probe, Queue, WorkloadConfig
from .platform_model import (
    ClusterConfig,
    ClusterSettings,
    ExistingClusterConfig,
    NodePoolConfig,
    Secret,
    Sharing,
)
from .rules import (
    adapters,
    batch,
    capacity_sources,
    coldstart,
    drivers,
    egress,
    endpoints,
    exposure,
    fallback,
    fit,
    maintenance,
    names,
    network,
    routing,
    streamer,
    vllm,
)
from .rules import cluster as cluster_rules
from .rules.endpoints import AUTO_DOMAIN
from .schema import ClusterSpec, NodePoolSpec, WorkloadSpec
from .variants import kind_spec

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


def from_spec(cls: type[T], spec: BaseModel, /, **decided: Any) -> T:
    """A config dataclass from its spec: each field the spec has by the same name (lists and
    mappings as tuples, mappings sorted), and `decided` for the rest; a schema's Literal string
    becomes the Enum the field names (typed.coerce)."""
    fields = {f.name for f in dataclasses.fields(cls)}
    assert fields >= decided.keys(), decided.keys() - fields
    copied = {
        name: _frozen(getattr(spec, name))
        for name in fields - decided.keys()
        if name in type(spec).model_fields
    }
    hints = typed.annotations(cls)
    return cls(**{name: typed.coerce(hints[name], v) for name, v in {**copied, **decided}.items()})


def _frozen(value: Any) -> Any:
    assert not isinstance(value, BaseModel), "a nested spec is built by its own from_spec"
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    return value


def draft_pool(spec: NodePoolSpec, name: str, ctx: Context) -> NodePoolConfig:
    """The pool as configured; its machine and driver are chosen once its workloads are known."""
    assert spec.gpu.type is not None
    overhead = spec.system_overhead
    return from_spec(
        NodePoolConfig,
        spec,
        name=name,
        gpu_type=spec.gpu.type,
        gpu_count=spec.gpu.count,
        machine_type="",
        # No zones named: the region's zones that offer the GPU rather than GKE's default, the
        # cluster's zones, some of which may not have it. On a pool already deployed this
        # changes node_locations, which GKE updates in place (components/platform/nodepool.py,
        # replacement_settings): the pool is not replaced and keeps its name.
        zones=tuple(spec.zones) or zones.default_zones(spec.gpu.type, ctx.region, ctx.location),
        driver=spec.driver or "default",
        sharing=from_spec(Sharing, spec.sharing) if spec.sharing else None,
        system_overhead=(
            (
                allocatable.parse_cpu(overhead.cpu or "0"),
                allocatable.parse_memory(overhead.memory or "0"),
            )
            if overhead is not None
            else (
                allocatable.GPU_NODE_SYSTEM_OVERHEAD.cpu_millicores,
                allocatable.GPU_NODE_SYSTEM_OVERHEAD.memory_bytes,
            )
        ),
        reservation=capacity_sources.reservation(spec.reservation),
        # Queued provisioning is flex-start's (components/config/rules/batch.py has the source).
        flex_start=spec.flex_start or spec.queued_provisioning,
        image_streaming=coldstart.image_streaming(spec),
        slots_per_node=fit.slots_per_node(spec),
    )


@dataclass(frozen=True)
class WorkloadPlan:
    """What was decided for one workload (loader.py), before its config is built."""

    index: int
    spec: WorkloadSpec
    pool: NodePoolConfig | None
    """Standard: the pool it lands on, with the machine chosen for its pods."""
    requests: Resources
    """Its pods' CPU and memory: as set, else a share of the node (or Autopilot's sizing)."""
    rollout: Literal["surge", "replace"]
    capacity: tuple[CapacityChoice, ...]
    """With fallbacks: its ComputeClass priorities, its own choice first."""


def _model_cache(w: WorkloadSpec, requests: Resources) -> ModelCache | None:
    if w.model_cache is None:
        return None
    mounted_because = streamer.mounted_because(w)
    return from_spec(
        ModelCache,
        w.model_cache,
        spec=w.model_cache,
        mount_path=w.model_cache.mount_path.rstrip("/") or "/",
        mounted_because=mounted_because,
        buffer_bytes=None
        if mounted_because is not None
        else streamer.buffer_bytes(requests.memory_bytes, w.gpu.count),
    )


def _args(w: WorkloadSpec, cache: ModelCache | None, vllm_server: bool) -> tuple[str, ...]:
    """The container's args: the stack file's, with what the model cache and adapters add."""
    args = tuple(w.args)
    if cache is not None and vllm_server and cache.buffer_bytes is not None:
        args = coldstart.vllm_args_for_cache(args, streamer.model_uri(w))
        args += streamer.loader_args(w, cache.buffer_bytes)
    elif cache is not None and vllm_server:
        args = coldstart.vllm_args_for_cache(args, cache.mount_path)
    return args + adapters.vllm_args(w)


def workload(plan: WorkloadPlan, ctx: Context) -> WorkloadConfig:
    w, pool, requests, capacity = plan.spec, plan.pool, plan.requests, plan.capacity
    vllm_server = formats.is_vllm_image(w.image)
    secret = secret_env_values(plan.index, w, ctx)
    cache = _model_cache(w, requests)
    scale = w.autoscale
    args = _args(w, cache, vllm_server)
    return from_spec(
        WorkloadConfig,
        w,
        spec=w,
        # Existing clusters select GPU nodes by nodeSelector only: no GKE accelerator label.
        gpu_type=None if ctx.existing else w.gpu.type,
        # With autoscale: what the Deployment starts with; the HPA owns the count from then on.
        replicas=scale.min_replicas if scale else w.replicas,
        args=args,
        env=tuple(sorted((k, v) for k, v in w.env.items() if k not in secret)),
        secret_values=tuple(sorted((k, Secret(v)) for k, v in w.env.items() if k in secret)),
        probe=_probe(w),
        cpu=w.resources.cpu
        or (None if ctx.existing else allocatable.cpu_quantity(requests.cpu_millicores)),
        memory=w.resources.memory
        or (None if ctx.existing else allocatable.memory_quantity(requests.memory_bytes)),
        expose=_expose(w, ctx),
        run_as_user=egress.run_as_user(w),
        rollout=plan.rollout,
        driver_version=drivers.autopilot_selector(w, ctx.mode),
        node_pool=pool,
        capacity=capacity,
        # Its pods select the workload's ComputeClass (components/service/compute_class.py).
        compute_class=capacity_sources.class_name(w.name) if capacity else None,
        model_cache=cache,
        autoscale_metric=(scale.metric or coldstart.VLLM_QUEUE_METRIC) if scale else None,
        secret_args="workloads" in ctx.secret_keys and ctx.secure_paths is None,
        api_key=exposure.api_key(w),
        egress=from_spec(
            Egress,
            w.egress,
            spec=w.egress,
            internet=egress.internet(w),
            metadata_server=w.model_cache is not None or w.output is not None,
        ),
        requests=requests,
        pod_machine=capacity[0].machine_type if capacity else _pod_machine(w, pool, requests, ctx),
        model=vllm.served_model(args, vllm_server),
        adapters=tuple((a.name, a.path) for a in w.adapters),
        routing=routing.resolve(w),
        queue=Queue(batch.seconds(w.queue.max_run_duration)) if w.queue else None,
    )


def _pod_machine(
    w: WorkloadSpec, pool: NodePoolConfig | None, requests: Resources, ctx: Context
) -> str | None:
    """Autopilot: the node GKE creates for each pod, the smallest machine that holds it."""
    if pool is not None or ctx.existing or w.gpu.type not in catalog.GPU_TYPES:
        return None
    way = catalog.SPOT if w.spot else catalog.ON_DEMAND
    whole = fit.with_sidecar(w, requests)
    machine, _ = fallback.smallest_fitting_machine(w.gpu.type, w.gpu.count, whole, way)
    return machine.name if machine else None


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


def _probe(w: WorkloadSpec) -> Probe | None:
    if w.probe is None or kind_spec(w).completes or not (w.probe.port or w.port):
        return None
    # vLLM answers /health (rules/vllm.py); another server's paths are unknown: TCP.
    path = w.probe.path or (vllm.HEALTH_PATH if formats.is_vllm_image(w.image) else None)
    return Probe(w.probe, path, w.probe.port or w.port or 0)


def _expose(w: WorkloadSpec, ctx: Context) -> Expose | None:
    if w.expose is None:
        return None
    auto = w.expose.domain == AUTO_DOMAIN
    return from_spec(
        Expose,
        w.expose,
        spec=w.expose,
        static_ip=exposure.reserves_address(w, ctx.mode),
        paths=tuple(w.expose.paths) if w.expose.paths is not None else exposure.default_paths(w),
        domain=endpoints.auto_domain(w.name, ctx) if auto else w.expose.domain,
        endpoints=auto,
    )


def cluster(
    spec: ClusterSpec,
    ctx: Context,
    stack: str,
    node_pools: tuple[NodePoolConfig, ...],
    workloads: tuple[WorkloadConfig, ...],
) -> ClusterConfig | ExistingClusterConfig:
    if ctx.existing:
        assert ctx.device_plugin is not None
        return from_spec(
            ExistingClusterConfig,
            spec,
            kubeconfig=cluster_rules.kubeconfig(spec, ctx),
            device_plugin=ctx.device_plugin,
        )
    assert ctx.mode is not None
    # The cluster as a consumer of GkeCluster would give it; ClusterConfig.of fills in the
    # defaults (cloudNat with private nodes, binaryAuthorization in production) for both.
    settings = from_spec(
        ClusterSettings,
        spec,
        mode=ctx.mode,
        name=spec.name or names.cluster_name(stack),
        location=ctx.location,
        system_machine_type=spec.system_pool.machine_type,
        system_nodes=spec.system_pool.nodes,
        auto_provisioning_limits=fallback.auto_provisioning_limits(
            ctx.mode, ctx.location, ctx.region, spec.system_pool, node_pools, workloads
        ),
        network=spec.network or network.DEFAULT_NETWORK,
        maintenance=maintenance.resolve(spec),
    )
    return ClusterConfig.of(
        settings,
        ctx.region,
        system_nodes_total=capacity_sources.system_node_count(
            spec.system_pool.nodes, ctx.location, ctx.region
        ),
    )
