"""Where a GPU workload's pods land: the node labels they select and the taints they tolerate, in
each cluster mode, and how replicas spread over zones."""

from __future__ import annotations

from typing import Any

from .. import slices
from ..config import Mode, NodePoolConfig, WorkloadConfig
from ..facts.labels import (
    ACCELERATOR_LABEL,
    COMPUTE_CLASS_LABEL,
    DRIVER_VERSION_LABEL,
    GPU_PARTITION_SIZE_LABEL,
    GPU_RESOURCE,
    GPU_SHARING_STRATEGY_LABEL,
    MAX_SHARED_CLIENTS_LABEL,
    NODEPOOL_LABEL,
    SPOT_LABEL,
    ZONE_LABEL,
    selector_labels,
)
from ..platform.nodepool import gke_pool_name

# GKE taints GPU nodes with nvidia.com/gpu=present:NoSchedule (and Spot nodes may carry
# cloud.google.com/gke-spot=true:NoSchedule); GPU pods tolerate both.
GPU_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},
)
# The values of GPU_SHARING_STRATEGY_LABEL for each strategy of the GKE API.
SHARING_LABEL_VALUES = {"TIME_SHARING": "time-sharing", "MPS": "mps"}
SPOT_TOLERATION = {"key": SPOT_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}


def node_selector(mode: Mode, w: WorkloadConfig) -> dict[str, str]:
    """Node labels a GPU pod must match to land on the right GPU capacity in each mode."""
    if w.compute_class is not None:
        # The ComputeClass names the GPU, Spot and driver per priority; a pod pinning one of them
        # too would rule the fallbacks out (Google's GPU sample selects the class alone:
        # kubernetes-engine-samples autoscaling/custom-compute-classes/reservations/
        # deployment-gpu.yaml at 2b503651; google/skills gke-compute-classes: "Do not mix
        # ComputeClass selection with other hard node selectors"). GKE adds the toleration for
        # the class's node taint itself ("GKE will mutate any pod specifying a CC label in a
        # nodeSelector ... with a toleration for the CC node label", the same repository's
        # autoscaling/custom-compute-classes/vap/restrict-toleration.yaml).
        return {COMPUTE_CLASS_LABEL: w.compute_class, **dict(sorted(w.spec.node_selector.items()))}
    selector: dict[str, str] = {}
    pool = w.node_pool
    # GKE labels GPU nodes with their accelerator; other clusters use their own labels
    # (workloads[].nodeSelector), so the GKE label would match no node there.
    if w.gpu_type is not None and mode != "existing":
        selector[ACCELERATOR_LABEL] = w.gpu_type
    if mode == "autopilot" and w.spec.spot:
        selector[SPOT_LABEL] = "true"
    if mode == "autopilot" and w.driver_version is not None:
        # Autopilot installs the driver version a pod selects (GKE "choose driver version";
        # components/facts/pins.py has the source): the default image needs `latest`.
        selector[DRIVER_VERSION_LABEL] = w.driver_version
    if mode == "standard" and pool is not None:
        # Pin to the smallest pool that fits: a 1-GPU pod never lands on a 4-GPU node. GKE
        # labels nodes with the pool's GKE name, which changes when the pool is replaced, so a
        # replacement rolls the pods over to the new pool before the old one is deleted.
        selector[NODEPOOL_LABEL] = gke_pool_name(pool)
        if pool.spot:
            selector[SPOT_LABEL] = "true"
        if pool.sharing is not None:
            selector[GPU_SHARING_STRATEGY_LABEL] = SHARING_LABEL_VALUES[pool.sharing.strategy]
            selector[MAX_SHARED_CLIENTS_LABEL] = str(pool.sharing.max_clients_per_gpu)
        if pool.partition_size is not None:
            selector[GPU_PARTITION_SIZE_LABEL] = pool.partition_size
    selector.update(dict(sorted(w.spec.node_selector.items())))
    return selector


def tolerations(mode: Mode, w: WorkloadConfig) -> list[dict[str, str]]:
    """The GPU nodes' taint, and the Spot nodes' where the workload may run on Spot."""
    if w.spec.gpu.count == 0:
        return []
    result = [dict(t) for t in GPU_TOLERATIONS]
    if (w.spec.spot or any(c.spot for c in w.capacity)) and mode != "existing":
        result.append(dict(SPOT_TOLERATION))
    return result


# How a spread is honoured (issue 45: the plan must not promise more). The Kubernetes API,
# TopologySpreadConstraint.whenUnsatisfiable: "ScheduleAnyway tells the scheduler to schedule the
# pod in any location, but giving higher precedence to topologies that would help reduce the
# skew" (k8s.io/api core/v1, as quoted in components/platform/vendor/lws/lws-v0.8.0.yaml). GKE's
# API, NodePoolAutoscaling.LocationPolicy: "ANY policy picks zones that have the highest capacity
# available", and even "BALANCED is a best effort policy that aims to balance the sizes of
# different zones" (google.container.v1, cloud.google.com/dotnet/docs/reference/
# Google.Cloud.Container.V1/latest/Google.Cloud.Container.V1.NodePoolAutoscaling.Types.
# LocationPolicy). GPU pools use ANY (components/platform/nodepool.py: GPUs stock out per zone).
POOL_LOCATION_POLICY = "ANY"


def zone_spread(w: WorkloadConfig) -> list[dict[str, Any]]:
    """Replicas prefer different zones, so one zone's outage or stockout leaves the service up;
    "ScheduleAnyway" never holds a pod back when only one zone has a free GPU (zone_words says
    so in the plan)."""
    return [
        {
            "maxSkew": 1,
            "topologyKey": ZONE_LABEL,
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": selector_labels(w.spec.name)},
        }
    ]


def pool_zone_words(pool: NodePoolConfig) -> str:
    """The plan's words for where a GPU pool's nodes come from, best-effort said as such."""
    if len(pool.zones) == 1:
        return f"zone {pool.zones[0]} only: its outage or stockout stops the pool"
    where = f"zones {', '.join(pool.zones)}" if pool.zones else "the cluster's zones"
    return (
        f"{where}: the autoscaler adds each node in the zone with the most capacity (location "
        f"policy {POOL_LOCATION_POLICY}), not one per zone: all its nodes may be in one zone"
    )


def zone_words(mode: Mode, w: WorkloadConfig) -> str | None:
    """The plan's words for how the replicas spread over zones (zone_spread), None where they
    do not spread (one replica, a Job, a CronJob)."""
    if not (slices.kind_of(w).holds_replicas and w.max_replicas > 1):
        return None
    best_effort = (
        "best-effort (topologySpreadConstraints whenUnsatisfiable: ScheduleAnyway): where one "
        "zone alone has free GPUs they share it, and its outage takes them all"
    )
    pool = w.node_pool
    if mode == "existing":
        return f"replicas prefer nodes of different {ZONE_LABEL} values, {best_effort}"
    if pool is not None and len(pool.zones) == 1:
        return f"replicas all in {pool.zones[0]}, pool {pool.name}'s one zone"
    nodes = f"pool {pool.name}'s nodes come where capacity is" if pool is not None else ""
    return "replicas prefer different zones, " + best_effort + (f"; {nodes}" if nodes else "")
