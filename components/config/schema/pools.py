"""`gke-gpu:nodePools`: GPU node pools, their sharing, reservations and fallbacks."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from .base import (
    CpuQuantity,
    Driver,
    GkeName,
    ImageType,
    LabelValue,
    MemoryQuantity,
    Model,
    Zone,
    _pattern,
)
from .cluster import (
    GpuSpec,
)


class SharingSpec(Model):
    strategy: Literal["TIME_SHARING", "MPS"]
    """How the GPU is shared; a shared GPU serves one GPU per container."""
    max_clients_per_gpu: Annotated[int, Field(ge=2, le=48)] = 2
    """Containers sharing one GPU."""


class ResourcesSpec(Model):
    cpu: CpuQuantity | None = None
    """CPU: cores (`4`, `0.5`) or millicores (`500m`)."""
    memory: MemoryQuantity | None = None
    """Memory, e.g. `16Gi`."""


class WorkloadResourcesSpec(ResourcesSpec):
    ephemeral_storage: MemoryQuantity | None = None
    """Ephemeral-storage request: scratch space in the container's filesystem.

    Model weights belong on `cache`.
    """


class ReservationSpec(Model):
    # A Compute Engine reservation name (RFC 1035: lowercase letters, digits, hyphens).
    name: Annotated[str, _pattern(r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?")]
    """The Compute Engine reservation's name (SPECIFIC_RESERVATION: that one only)."""


# `any`: consume any matching reservation (ANY_RESERVATION); a mapping names one (rules/capacity).
Reservation = ReservationSpec | Literal["any"]


class FallbackSpec(Model):
    """One alternative to a workload's own GPU choice (rules/capacity_sources.py)."""

    gpu: GpuSpec | None = None
    """A different GPU for this alternative (counts as for the workload's `gpu`).

    Default: the workload's `gpu`

    `type`: Another GKE accelerator for this alternative.
    Default: the workload's

    `count`: GPUs per pod for it.
    Default: the workload's
    """
    spot: bool = False
    """This alternative on Spot VMs (`{spot: false}`: the same GPU on demand)."""
    flex_start: bool = False
    """This alternative through flex-start (not with `spot`)."""
    reservation: Reservation | None = None
    """This alternative from a reservation: `any` or `{name: ...}` (not with `spot`/`flexStart`)."""


class NodePoolSpec(Model):
    name: GkeName | None = None
    """Node pool name.

    GKE's name for the pool is this plus a hash of the settings that replace it (`l4-94a4e7a0`).

    Default: from the GPU type (`l4`, `t4`, `h100-80gb`; `-2`, `-3` when taken)
    """
    gpu: GpuSpec
    """The GPUs of each node.

    `type`: GKE accelerator name, e.g. `nvidia-l4` (see the [GPU catalog](gpus.md),
    `python -m tools.gpus`).
    Default: required

    `count`: GPUs per node; the allowed counts depend on the type.
    """
    machine_type: Annotated[str, _pattern(r"[a-z][-a-z0-9]{0,62}")] | None = None
    """Machine type of the nodes: of the GPU's family, carrying the count.

    Unset: the smallest that carries the GPUs **and** holds the CPU/memory requests of the
    workloads placed on the pool (see [What fits on a node](node-sizing.md)).

    Default: smallest valid
    """
    spot: bool = False
    """Spot VMs (cheaper, can be preempted)."""
    min_nodes: Annotated[int, Field(ge=0, le=1000)] = 0
    """Autoscaling minimum, all zones together."""
    max_nodes: Annotated[int, Field(ge=1, le=1000)] = 1
    """Autoscaling maximum, all zones together."""
    min_nodes_reason: LabelValue | None = None
    """Why a pool stays warm (a label value, e.g. `serving-latency-slo`).

    The policy pack asks for it when `minNodes > 0`.
    """
    zones: Annotated[list[Zone], Field(max_length=10)] = []
    """Zones of the cluster's region for the pool's nodes.

    Each must offer the GPU; a zonal cluster's pools live in its zone.

    Default: the region's zones that offer the GPU (a zonal cluster: its zone)
    """
    image_type: ImageType = "COS_CONTAINERD"
    """Node image: Container-Optimized OS or Ubuntu."""
    # derived: rules/drivers.py pool_driver.
    driver: Driver | None = None
    """NVIDIA driver: `default` and `latest` (COS only) GKE installs; `installer`: Google's
    installer DaemonSet.

    Default: `latest` on COS when a workload on the pool runs an image built for CUDA 13 (a vLLM
    release the plan knows, or its `cudaVersion`), else `default`
    """
    sharing: SharingSpec | None = None
    """GPU sharing: several containers on one GPU (time-sharing or MPS)."""
    partition_size: Annotated[str, StringConstraints(max_length=16)] | None = None
    """MIG partition, e.g. `1g.10gb` (A100, H100, H200, B200, ...).

    The sizes each GPU offers are in the [GPU catalog](gpus.md).
    """
    system_overhead: ResourcesSpec | None = None
    """What GKE's own DaemonSets request on each GPU node; pods get the node's allocatable less
    this.

    See [What fits on a node](node-sizing.md). A key left out of a `systemOverhead` that is set
    counts as 0.

    `cpu`: CPU requested by GKE's DaemonSets per GPU node.
    Default: `597m`

    `memory`: Memory requested by GKE's DaemonSets per GPU node.
    Default: `800Mi`
    """
    reservation: Reservation | None = None
    """Consume a Compute Engine reservation: `{name: my-res}` only that one, `any` any matching one.

    `{name: ...}` takes nodes from that reservation only (SPECIFIC_RESERVATION; it must be in one
    of the pool's zones); `any` from any matching one, else on demand (ANY_RESERVATION). Not with
    `spot` or `flexStart`. Machines sold only through reservations (GB200, GB300) need it, or
    `flexStart`/`spot` where sold so (see [Getting GPUs](getting-gpus.md)).
    """
    placement: Literal["compact"] | None = None
    """`compact`: the nodes close together in one zone.

    One entry in `zones`, or a zonal cluster; A100, L4, H100 (and H200/B200), at most 1,500
    nodes.
    """
    flex_start: bool = False
    """Flex-start (Dynamic Workload Scheduler) nodes.

    Created when capacity frees up, for up to 7 days each, at a discount; needs `minNodes: 0`, no
    `spot`, no `reservation`.
    """
    queued_provisioning: bool = False
    """Nodes only for Jobs with `queue`: GKE grants them all at once through a
    ProvisioningRequest (flex-start with queued provisioning) and removes them after the run.

    Flex-start VMs; needs `minNodes: 0`, no `spot`, no `reservation`, no `placement`.
    """
    # Cold start (rules/coldstart.py): GKE image streaming; a disk image of preloaded images.
    image_streaming: bool | None = None
    """GKE image streaming (`gcfsConfig`): containers start before their image is fully pulled.

    COS only; streams Artifact Registry images only (others: an advisory, pulled as before). See
    [Cold starts](cold-starts.md).

    Default: `false` (`true` with `secondaryBootDisk`)
    """
    secondary_boot_disk: Annotated[str, StringConstraints(max_length=1024)] | None = None
    """A disk image of preloaded container images, attached in `CONTAINER_IMAGE_CACHE` mode.

    `global/images/NAME` or `projects/P/global/images/NAME`; build it with Google's
    gke-disk-image-builder ([Cold starts](cold-starts.md)). Changing it replaces the pool.
    """
