"""Where GPUs come from: fallbacks (a ComputeClass), reservations, compact placement, flex-start.

Sources (each rule below names the one it encodes; all checked 2026-11-22):
  CRD: GKE's ComputeClass CRD schema, vendored in tools/crds/cloud.google.com_v1_ComputeClass.json
    (datreeio/CRDs-catalog at 7b1e26ef); its CEL rules include "Flex Start provisioning model is
    incompatible with Spot".
  CCC: https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes:
    custom ComputeClasses in Autopilot and Standard from 1.30.3-gke.1451000; GKE falls back to
    the next priority when one has no capacity and, with active migration, moves workloads back
    to a more preferred one when its capacity returns.
  TOOLKIT: GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool/main.tf at 1047080
    (Google's own node-pool module), its preconditions: "enable_flex_start requires
    reservation_affinity.consume_reservation_type to be 'NO_RESERVATION'", "Both enable_flex_start
    and spot consumption option cannot be set to true at the same time", "enable_flex_start needs
    node auto_repair set to false", "Spot consumption option only works with reservation_affinity
    consume_reservation_type NO_RESERVATION", "Compact placement is only available for node pools
    operating in a single zone", "Compact placement with DWS Flex start is only supported for A3
    Ultra, A4, and H4D machine types".
  DWS: https://cloud.google.com/kubernetes-engine/docs/concepts/dws (read in its zh-CN version):
    flex-start for GPUs needs "GKE 1.32.2-gke.1652000 or later"; flex-start VMs run "up to 7
    days".
  COMPACT: https://cloud.google.com/kubernetes-engine/docs/how-to/compact-placement: compact
    placement is "Available only with A100, L4, and H100 GPUs" and "for Pods grouped on up to
    1,500 nodes" (its Autopilot section; the Standard section could not be read here).
  NAP: https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning ("Any
    resource limits that you set for the cluster when you enable node auto-provisioning also
    apply to the node pools that GKE creates for ComputeClasses") and pulumi-gcp 10.2.0
    ClusterClusterAutoscalingArgs: "Resource limits for cpu and memory must be defined to enable
    node auto-provisioning for GKE Standard" and they "apply to node pool autoscaling in addition
    to node auto-provisioning", so they cover every pool, not only the auto-created ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

from ...facts import catalog, pins
from ..context import Context
from ..platform_model import Reservation
from ..problems import Problem
from ..schema import NodePoolSpec, ReservationSpec
from .pools import choices, machine_candidates

# DWS: the oldest GKE version whose GPU node pools take flex-start.
FLEX_START_MIN_GKE = "1.32.2-gke.1652000"
# COMPACT names A100, L4 and H100; TOOLKIT allows compact placement with flex-start on A3 Ultra
# (H200) and A4 (B200), so those two take it as well.
COMPACT_GPUS = frozenset(
    {
        "nvidia-tesla-a100",
        "nvidia-a100-80gb",
        "nvidia-l4",
        "nvidia-h100-80gb",
        "nvidia-h100-mega-80gb",
        "nvidia-h200-141gb",
        "nvidia-b200",
    }
)
COMPACT_FLEX_START_GPUS = frozenset({"nvidia-h200-141gb", "nvidia-b200"})  # TOOLKIT
# COMPACT groups up to 1,500 nodes; schema.NodePoolSpec caps maxNodes at 1,000, so no pool can
# exceed it and no rule is needed.
# ComputeClass names may not start with these (CCC, "Limitations"); the program's prefix avoids
# them for any workload name. A label value is at most 63 characters.
CLASS_PREFIX = "gpu-"
LABEL_VALUE_MAX = 63
# GKE spreads a regional cluster's node pools over three zones by default
# (https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters: "the default node
# pool ... nine nodes (three per zone) ... across three zones").
REGIONAL_DEFAULT_ZONES = 3


def system_node_count(nodes_per_zone: int, location: str, region: str) -> int:
    """The system pool's nodes in all: its node_count is per zone, and a regional cluster
    spreads it over REGIONAL_DEFAULT_ZONES zones."""
    return nodes_per_zone * (1 if location != region else REGIONAL_DEFAULT_ZONES)


def consumption_of(spot: bool, flex_start: bool, reservation: object) -> str:
    """How a pool or priority buys its VMs, in the catalog's words (catalog.model)."""
    if flex_start:
        return catalog.FLEX_START
    if spot:
        return catalog.SPOT
    if reservation is not None:
        return catalog.RESERVATION
    return catalog.ON_DEMAND


def sold_text(machines: Sequence[catalog.MachineType]) -> str:
    ways = frozenset().union(*(m.consumption for m in machines)) if machines else frozenset()
    return ", ".join(w for w in catalog.CONSUMPTION_ORDER if w in ways) or "nothing"


def reservation(value: ReservationSpec | str | None) -> Reservation | None:
    if value is None:
        return None
    return Reservation(None if isinstance(value, str) else value.name)


def class_name(workload: str) -> str:
    """The workload's ComputeClass: `gpu-<workload>`, shortened with a hash past 63 chars."""
    name = CLASS_PREFIX + workload
    if len(name) <= LABEL_VALUE_MAX:
        return name
    digest = hashlib.sha256(workload.encode()).hexdigest()[:8]
    return f"{name[: LABEL_VALUE_MAX - 9].rstrip('-')}-{digest}"


# --- node pools ---------------------------------------------------------------------------------


def sold_as_wanted(
    spec: NodePoolSpec, machines: Sequence[catalog.MachineType]
) -> tuple[catalog.MachineType, ...]:
    """The candidate machines Compute Engine sells the way the pool buys them."""
    way = consumption_of(spec.spot, spec.flex_start, spec.reservation)
    return tuple(m for m in machines if way in m.consumption)


def pool_problems(i: int, spec: NodePoolSpec, ctx: Context) -> Iterator[Problem]:
    """Reservation, compact placement and flex-start rules of one node pool."""
    path = f"nodePools[{i}]"
    channel, machines = ctx.channel, machine_candidates(spec)
    if spec.flex_start and spec.spot:
        yield Problem(
            f"{path}.flexStart",
            "flex-start and Spot are two different ways to buy the VMs, and "
            "GKE takes one per pool (cluster-toolkit gke-node-pool: 'Both enable_flex_start "
            "and spot ... cannot be set to true'). Remove spot or flexStart.",
        )
    if spec.flex_start and spec.reservation is not None:
        yield Problem(
            f"{path}.reservation",
            "flex-start nodes never consume a reservation (their "
            "reservation affinity must be NO_RESERVATION). Remove reservation, or flexStart.",
        )
    elif spec.spot and spec.reservation is not None:
        yield Problem(
            f"{path}.reservation",
            "Spot VMs do not consume reservations (a Spot pool's "
            "reservation affinity must be NO_RESERVATION). Remove reservation, or spot.",
        )
    if spec.flex_start and spec.min_nodes > 0:
        yield Problem(
            f"{path}.minNodes",
            "flex-start nodes are created only when a pod waits for them and capacity frees up; a "
            "pool cannot keep any warm. Set minNodes: 0 (or drop flexStart for a warm pool).",
        )
    if spec.flex_start and channel in pins.CHANNEL_DEFAULT_VERSION:
        default = pins.CHANNEL_DEFAULT_VERSION[channel]
        if pins.gke_version(default) < pins.gke_version(FLEX_START_MIN_GKE):
            yield Problem(
                f"{path}.flexStart",
                f"flex-start GPU pools need GKE {FLEX_START_MIN_GKE} or later, and the {channel} "
                f"channel creates clusters at {default}. Use a newer channel.",
            )
    if spec.placement == "compact":
        yield from _compact_problems(path, spec, ctx.location, ctx.region)
    if machines and spec.gpu.type is not None:
        way = consumption_of(spec.spot, spec.flex_start, spec.reservation)
        if not sold_as_wanted(spec, machines):
            names = ", ".join(sorted({m.name for m in machines}))
            yield Problem(
                path,
                f"{names} ({spec.gpu.type}) is not sold {way_text(way)} by Compute Engine (sold "
                f"as: {sold_text(machines)}). Set reservation: {{name: <your reservation>}} (or "
                "reservation: any), flexStart: true, or spot: true, whichever you have.",
            )


def way_text(way: str) -> str:
    return {
        catalog.ON_DEMAND: "on demand",
        catalog.SPOT: "as Spot VMs",
        catalog.FLEX_START: "through flex-start",
        catalog.RESERVATION: "from reservations",
    }[way]


def _compact_problems(
    path: str, spec: NodePoolSpec, location: str, region: str
) -> Iterator[Problem]:
    zonal_cluster = location != region
    if not zonal_cluster and len(spec.zones) != 1:
        yield Problem(
            f"{path}.zones",
            f"compact placement puts the pool's nodes close together in one zone "
            f"(cluster-toolkit: 'only available for node pools operating in a single zone'); "
            f"this pool spans {len(spec.zones) or 'all the cluster'}'s zones. List one zone, "
            f"e.g. zones: [{region}-a].",
        )
    if spec.gpu.type is not None and spec.gpu.type not in COMPACT_GPUS:
        offered = choices(tuple(sorted(COMPACT_GPUS)))
        yield Problem(
            f"{path}.placement",
            f"GKE offers compact placement with {offered} GPUs, not "
            f"{spec.gpu.type}. Remove placement, or use one of those GPU types.",
        )
    elif spec.flex_start and spec.gpu.type not in COMPACT_FLEX_START_GPUS:
        yield Problem(
            f"{path}.placement",
            "compact placement with flex-start is only supported on A3 Ultra "
            "and A4 machines (nvidia-h200-141gb, nvidia-b200). Remove placement or flexStart.",
        )
