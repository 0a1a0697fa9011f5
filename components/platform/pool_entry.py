"""A GpuNodePool as GpuService reads a pool: the `nodePools[]` entry whose placement lands the
service's pods on exactly that pool (issue 41: one pool, one description).

GpuService decides its workload's pool, and the pool's GKE name its pods select, from
`nodePools[]` entries with the stack's loader (components/config/loader.py); the pool's GKE name
hashes the settings that replace it (components/platform/nodepool.py gke_pool_name). An entry a
consumer wrote again by hand could leave a setting to a default the loader decides otherwise
(the driver: `default` for the pool, `latest` for a CUDA 13 workload), so its pods would select
a pool that does not exist. `GpuNodePool.service_pool` is the entry with every such setting the
pool has written out, so the hash is the pool's (tests/test_package_pools_names.py holds the two
equal). Not carried: the nodes' service account, which the pool hashes from its own
`serviceAccount` and GpuService from `cluster.nodeServiceAccount` (no `nodePools[]` key holds
it): leave both unset, or set both to the same account (docs/package.md).
"""

from typing import Any

from ..config import NodePoolConfig
from ..config.workload_args import (
    ServiceNodePool,
    ServiceNodePoolDriver,
    ServiceNodePoolImageType,
    ServiceNodePoolPlacement,
    ServiceNodePoolSharing,
    ServiceNodePoolSharingStrategy,
)


def service_pool(pool: NodePoolConfig) -> ServiceNodePool:
    """The `nodePools[]` entry of a pool, its defaults filled in as the pool has them."""
    entry = ServiceNodePool(
        name=pool.name,
        gpu={"type": pool.gpu_type, "count": pool.gpu_count},
        spot=pool.spot,
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        image_type=ServiceNodePoolImageType(str(pool.image_type)),
        driver=ServiceNodePoolDriver(str(pool.driver)),
        flex_start=pool.flex_start,
        queued_provisioning=pool.queued_provisioning,
        image_streaming=pool.image_streaming,
    )
    optional: dict[str, Any] = {
        "machine_type": pool.machine_type or None,
        "min_nodes_reason": pool.min_nodes_reason,
        "zones": list(pool.zones) or None,
        "sharing": _sharing(pool),
        "partition_size": pool.partition_size,
        "reservation": _reservation(pool),
        "placement": ServiceNodePoolPlacement(str(pool.placement)) if pool.placement else None,
        "secondary_boot_disk": pool.secondary_boot_disk,
    }
    entry.update({k: v for k, v in optional.items() if v is not None})  # type: ignore[typeddict-item]
    return entry


def _sharing(pool: NodePoolConfig) -> ServiceNodePoolSharing | None:
    if pool.sharing is None:
        return None
    return ServiceNodePoolSharing(
        strategy=ServiceNodePoolSharingStrategy(str(pool.sharing.strategy)),
        max_clients_per_gpu=pool.sharing.max_clients_per_gpu,
    )


def _reservation(pool: NodePoolConfig) -> Any:
    if pool.reservation is None:
        return None
    return "any" if pool.reservation.name is None else {"name": pool.reservation.name}
