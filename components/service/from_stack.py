"""The stack file's front end for GpuService: each workload of the loaded config, and what it
stands on from the platform, as the GpuServiceArgs a Python or a TypeScript program would write.

The config layer has validated and decided everything already; what it decided for the stack as
a whole and a GpuService cannot decide alone is written into the entries: each pool's machine
and driver (they depend on every workload on the pool), the cluster's name (from the stack's),
and a workload's `rollout: auto` (the room for a surge pod depends on the pool's other pods).
"""

from typing import Any, cast

import pulumi

from ..config import NAMESPACE, ExistingClusterConfig, StackConfig, WorkloadConfig
from ..config.one_workload import Resolved
from ..config.schema import WorkloadSpec
from ..config.workload_args import ServiceCluster, ServiceNodePool, Workload
from ..platform import Platform, watched
from .gpu_service import GpuServiceArgs, GpuServiceWaits


def service_args(
    config: StackConfig, platform: Platform
) -> list[tuple[str, GpuServiceArgs, Resolved]]:
    """(name, args, decided) of each workload's GpuService, in the stack file's order: `decided`
    is the workload as the loader decided it, which the service takes instead of deciding the
    Args again (each workload is decided once)."""
    specs = config.specs
    assert specs is not None, "a config from the loader"
    cluster = specs.cluster
    if not isinstance(config.cluster, ExistingClusterConfig):
        # As the Args write them (_cluster): the name and location the stack decided.
        named = {"name": config.cluster.name, "location": config.cluster.location}
        cluster = cluster.model_copy(update=named)
    pairs = zip(specs.workloads, config.workloads, strict=True)
    return [
        (w.spec.name, _args(spec, w, config, platform), Resolved(w, cluster)) for spec, w in pairs
    ]


def _args(
    spec: WorkloadSpec, w: WorkloadConfig, config: StackConfig, platform: Platform
) -> GpuServiceArgs:
    secrets = pulumi.Config(NAMESPACE)
    args = GpuServiceArgs(
        workload=_workload(spec, w),
        cluster=_cluster(config),
        kubernetes=platform.cluster.provider,
        node_pools=_pools(config),
        project=config.project,
        region=config.region,
        namespace=config.namespace,
        secrets={key: secrets.require_secret(key) for _, key in sorted(w.spec.secret_env.items())},
        env_secrets=[env for env, _ in w.secret_values],
        secret_args=w.secret_args,
        monitored=watched(config),
        waits=_waits(platform),
    )
    if platform.ca is not None:
        args["ca"] = {
            "cert_pem": platform.ca.cert_pem,
            "private_key_pem": platform.ca.private_key_pem,
        }
    return args


def _workload(spec: WorkloadSpec, w: WorkloadConfig) -> Workload:
    entry: dict[str, Any] = spec.model_dump(exclude_unset=True)
    if spec.rollout == "auto":
        entry["rollout"] = w.rollout
    return cast(Workload, entry)


def _cluster(config: StackConfig) -> ServiceCluster:
    assert config.specs is not None
    kept = ServiceCluster.__annotations__.keys()
    entry = {
        k: v for k, v in config.specs.cluster.model_dump(exclude_unset=True).items() if k in kept
    }
    if not isinstance(config.cluster, ExistingClusterConfig):
        entry.update(name=config.cluster.name, location=config.cluster.location)
    return cast(ServiceCluster, entry)


def _pools(config: StackConfig) -> list[ServiceNodePool]:
    assert config.specs is not None
    entries = []
    for spec, pool in zip(config.specs.node_pools, config.node_pools, strict=True):
        entry = spec.model_dump(exclude_unset=True)
        entry.update(name=pool.name, machine_type=pool.machine_type, driver=pool.driver)
        entries.append(cast(ServiceNodePool, entry))
    return entries


def _waits(platform: Platform) -> GpuServiceWaits:
    """Each readiness as outputs of the platform's resources (their URNs)."""
    return GpuServiceWaits(
        namespace=[platform.namespace.name],
        gpu_capacity=[r.urn for r in platform.capacity],
        cluster=[platform.cluster.urn],
        keda=[r.urn for r in platform.keda.ready] if platform.keda else [],
        metrics_adapter=[r.urn for r in platform.metrics_adapter.ready]
        if platform.metrics_adapter
        else [],
        kueue=[r.urn for r in platform.kueue.ready] if platform.kueue else [],
        lws=[r.urn for r in platform.lws.ready] if platform.lws else [],
    )
