"""The resolved config of the platform (cluster, node pools, device plugin), which is also what
the platform's public components take as Args (their Enums: components/config/choices.py).

Plain types only, so Pulumi's schema analyzer reads them (pulumi/provider/experimental/
analyzer.py: str, int, bool, Optional, Sequence, string-keyed Mapping, nested dataclasses and
NamedTuples, Enums; no Literal, no tuple[...] of mixed types, no Union): the schema's Literal
choices are the StrEnums below (each equal to a str of its value, so comparisons with the
schema's strings and every rendered value stay what they were), lists are Sequences (tuples at
run time: frozen and hashable). No `from __future__ import annotations` here: the analyzer and
components/config/typed.py read these annotations as types.

A public component's Args part lists what a consumer sets (`GpuPool`); the loader's resolved
class extends it with what the loader decided (`NodePoolConfig`), narrowing the part's optional
settings to the default it filled in.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import pulumi

from ..facts import catalog
from ..facts.allocatable import Resources
from . import schema
from .choices import (
    ClusterMode,
    DevicePluginKind,
    DnsEndpointAccess,
    GpuDriver,
    GpuSharingStrategy,
    NodeImageType,
    PoolPlacement,
    UpgradeScope,
)


class Secret:
    """A value that came from `secure:` config: never shown, handed on only as a secret Output."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def __repr__(self) -> str:
        return "Secret([secret])"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def output(self) -> pulumi.Output[str]:
        return pulumi.Output.secret(self._value)

    def reveal(self) -> str:
        """The plain value, for a program-side computation that never leaves it (a hash)."""
        return self._value


@dataclass(frozen=True)
class Reservation:
    """Which Compute Engine reservation capacity comes from: one by name, or any (None)."""

    name: str | None
    """The reservation's name (SPECIFIC_RESERVATION: that one only); None: any matching one
    (ANY_RESERVATION)."""

    @property
    def any(self) -> bool:
        return self.name is None


@dataclass(frozen=True)
class MaintenanceWindow:
    """GKE's recurring maintenance window: the first one's start and end (UTC), and its RRULE."""

    start: str
    """When the first window opens, in UTC: `2026-01-03T01:00:00Z`."""
    end: str
    """When the first window closes, in UTC; `end - start` is every window's length."""
    recurrence: str
    """How the window recurs, an RFC 5545 RRULE: `FREQ=WEEKLY;BYDAY=SA,SU` or `FREQ=DAILY`."""


@dataclass(frozen=True)
class MaintenanceExclusion:
    """A period in which GKE holds back the upgrades of `scope`."""

    name: str
    """A name for the exclusion, unique in the list (`black-friday`)."""
    start: str
    """When it begins, in UTC."""
    end: str
    """When it ends, in UTC; after `start`, and at most 30 days later for `NO_UPGRADES`."""
    scope: UpgradeScope
    """What GKE holds back meanwhile: NO_UPGRADES, NO_MINOR_UPGRADES or
    NO_MINOR_OR_NODE_UPGRADES."""


@dataclass(frozen=True)
class Maintenance:
    """cluster.maintenance as resolved: production's default window included."""

    window: MaintenanceWindow | None = None
    """The recurring window in which GKE may upgrade the control plane and the nodes; None: GKE
    picks any time."""
    exclusions: Sequence[MaintenanceExclusion] | None = ()
    """Periods in which GKE does not upgrade (a launch, a sales peak); they need a window.
    Default: none."""


class ProvisioningLimit(NamedTuple):
    """A node auto-provisioning resource limit: `cpu`, `memory` (GB) or a GPU type."""

    resource: str
    """`cpu`, `memory`, or a GPU type (`nvidia-l4`)."""
    maximum: int
    """The most of it all auto-provisioned nodes together may have (cores, GB, GPUs)."""


def _default(model: type, field: str) -> Any:
    """A stack-file key's default, from the schema that describes it once."""
    return model.model_fields[field].default


@dataclass(frozen=True)
class ClusterSettings:
    """A GKE cluster's settings (GkeClusterArgs.cluster); a setting left out (None) takes the
    stack file's default."""

    name: str
    """The cluster's GKE name."""
    mode: ClusterMode | None = None
    """Default: autopilot."""
    location: str | None = None
    """A region (regional cluster) or one of its zones. Default: GkeClusterArgs.region."""
    release_channel: str | None = None
    """RAPID, REGULAR or STABLE. Default: REGULAR."""
    deletion_protection: bool | None = None
    """GKE's deletion protection, and Pulumi's `protect` on what the service stands on.
    Default: true."""
    master_authorized_networks: Sequence[str] | None = None
    """CIDR blocks that may reach the control plane. Default: none (unrestricted)."""
    private_nodes: bool | None = None
    """Nodes without external addresses. Default: false."""
    system_machine_type: str | None = None
    """Standard: the system pool's machine type. Default: e2-standard-2."""
    system_nodes: int | None = None
    """Standard: system pool nodes per zone. Default: 1."""
    auto_provisioning_limits: Sequence[ProvisioningLimit] | None = None
    """Standard: node auto-provisioning resource limits (cpu, memory GB, GPU types) for the
    workloads' ComputeClasses; empty leaves auto-provisioning off."""
    network: str | None = None
    """The VPC network (name or self-link); the project's `default` network unless set."""
    subnetwork: str | None = None
    """The subnetwork (name or self-link); None: GKE picks the network's subnet of the region."""
    pod_range: str | None = None
    """Secondary range name of the subnetwork for pod IPs (None: GKE creates one)."""
    service_range: str | None = None
    """Secondary range name of the subnetwork for Service IPs (None: GKE creates one)."""
    node_service_account: str | None = None
    """An existing node service account (email); None: the stack creates one."""
    production: bool | None = None
    """A production stack (a label on the cluster the policy pack reads). Default: false."""
    cloud_nat: bool | None = None
    """A Cloud NAT (and its router) for the cluster's subnetwork: private nodes reach public
    registries through it. Default: on with private nodes."""
    dataplane_v2: bool | None = None
    """Standard: GKE Dataplane V2, which enforces NetworkPolicy (create-only: changing it
    replaces the cluster). Autopilot always has it. Default: true."""
    dns_endpoint: DnsEndpointAccess | None = None
    """`external`: user traffic may use the DNS-based control-plane endpoint from anywhere (IAM
    decides), and the kubeconfig uses it; `disabled`: the kubeconfig uses the IP endpoint.
    Default: disabled."""
    secrets_encryption_key: str | None = None
    """A Cloud KMS key (projects/P/locations/L/keyRings/R/cryptoKeys/K) that encrypts Secrets
    at the application layer; None: GKE's default encryption at rest only."""
    binary_authorization: bool | None = None
    """The cluster evaluates the project's Binary Authorization policy (which says audit or
    enforce). Default: as `production`."""
    maintenance: Maintenance | None = None
    """When GKE may upgrade the cluster (a window, exclusions); None: at any time."""


@dataclass(frozen=True)
class ClusterConfig(ClusterSettings):
    """The GKE cluster as the loader resolved it (cluster.*): every setting decided."""

    mode: ClusterMode = ClusterMode(_default(schema.ClusterSpec, "mode"))
    location: str = ""
    release_channel: str = _default(schema.ClusterSpec, "release_channel")
    deletion_protection: bool = _default(schema.ClusterSpec, "deletion_protection")
    master_authorized_networks: Sequence[str] = ()
    private_nodes: bool = _default(schema.ClusterSpec, "private_nodes")
    system_machine_type: str = _default(schema.SystemPoolSpec, "machine_type")
    system_nodes: int = _default(schema.SystemPoolSpec, "nodes")
    auto_provisioning_limits: Sequence[ProvisioningLimit] = ()
    network: str = "default"
    production: bool = False
    cloud_nat: bool = False
    dataplane_v2: bool = True
    dns_endpoint: DnsEndpointAccess = DnsEndpointAccess.DISABLED
    binary_authorization: bool = False
    system_nodes_total: int = 0
    """Standard: system_nodes per zone, times the zones a regional cluster spreads them over."""

    @classmethod
    def of(cls, cluster: ClusterSettings, region: str, **decided: Any) -> "ClusterConfig":
        """A cluster's settings with their defaults filled in, and what the loader `decided`
        beyond them; the loader's own resolved cluster as it is."""
        if isinstance(cluster, ClusterConfig):
            return cluster
        given = {k: v for k, v in vars(cluster).items() if v is not None} | decided
        given.setdefault("location", region)
        given.setdefault("cloud_nat", bool(cluster.private_nodes))
        given.setdefault("binary_authorization", bool(cluster.production))
        return cls(**given)


class NodeLabel(NamedTuple):
    """A node label a device plugin's node affinity term requires."""

    key: str
    """The label's key."""
    value: str
    """The value it must have."""


@dataclass(frozen=True)
class DevicePluginSettings:
    """How an existing cluster's GPUs become schedulable as nvidia.com/gpu
    (NvidiaDevicePluginArgs.plugin); a setting left out (None) takes its default."""

    type: DevicePluginKind | None = None
    """static: NVIDIA's device plugin DaemonSet; gpu-operator: the NVIDIA GPU Operator;
    none: the cluster already advertises nvidia.com/gpu. Default: static."""
    sharing_replicas: int | None = None
    """Time-slicing: each physical GPU is advertised as this many nvidia.com/gpu (None: off)."""
    install_driver: bool | None = None
    """gpu-operator: the operator installs the NVIDIA driver (its driver.enabled value).
    Default: true."""
    node_selector_terms: Sequence[Sequence[NodeLabel]] | None = None
    """static: the nodes it runs on, as node affinity terms: any term matches, every label of
    a term must. Give them with static: the stack file's loader derives them (rules/cluster.py),
    a consumer names them."""
    fail_on_init_error: bool | None = None
    """static: the plugin exits when it finds no GPU (NVIDIA's default), so a selected node
    without a working GPU shows up as a crash-looping pod instead of silently. Default: true."""


@dataclass(frozen=True)
class DevicePluginConfig(DevicePluginSettings):
    """The device plugin as the loader resolved it (devicePlugin): every setting decided."""

    type: DevicePluginKind = DevicePluginKind.STATIC
    install_driver: bool = True
    node_selector_terms: Sequence[Sequence[NodeLabel]] = ()
    fail_on_init_error: bool = True

    @classmethod
    def of(cls, plugin: DevicePluginSettings) -> "DevicePluginConfig":
        """A consumer's settings with their defaults filled in (the loader's as they are)."""
        if isinstance(plugin, DevicePluginConfig):
            return plugin
        return cls(**{k: v for k, v in vars(plugin).items() if v is not None})


@dataclass(frozen=True)
class ExistingClusterConfig:
    """A cluster this stack does not manage: only a provider for it is built."""

    kubeconfig: str | Secret | None
    """The kubeconfig itself (a Secret: `cluster.kubeconfig` set with --secret), or the name of
    the secret config key (namespace gke-gpu) holding it (the older indirection)."""
    context: str | None
    """A context of the ambient kubeconfig (KUBECONFIG or ~/.kube/config)."""
    device_plugin: DevicePluginConfig
    mode: Literal["existing"] = "existing"
    production: bool = False
    """cluster.production: the policy pack holds this stack to the production rules."""

    @property
    def name(self) -> str:
        """What the clusterName output shows: the context, or 'existing' for a kubeconfig."""
        return self.context or "existing"


@dataclass(frozen=True)
class Sharing:
    """Several containers on one GPU."""

    strategy: GpuSharingStrategy
    """How the GPU is shared (TIME_SHARING or MPS); a shared GPU serves one GPU per container."""
    max_clients_per_gpu: int
    """Containers one GPU serves at most."""


@dataclass(frozen=True)
class GpuPool:
    """A GPU node pool's settings (GpuNodePoolArgs.pool); a setting left out (None) takes the
    default NodePoolConfig names."""

    name: str
    """The pool's name (its nodes' pool label; its GKE name adds a hash of what replaces it)."""
    gpu_type: str
    """A GKE GPU type, e.g. nvidia-l4."""
    gpu_count: int | None = None
    """GPUs per node. Default: 1."""
    machine_type: str | None = None
    """Default: the smallest machine type that carries the pool's GPUs."""
    spot: bool | None = None
    """Spot VMs. Default: false."""
    min_nodes: int | None = None
    """Nodes the autoscaler keeps, over all zones. Default: 0."""
    max_nodes: int | None = None
    """Nodes the autoscaler may add, over all zones. Default: 1."""
    min_nodes_reason: str | None = None
    """Why the pool keeps nodes when idle (a GCE label on its VMs)."""
    zones: Sequence[str] | None = None
    """The zones its nodes run in. Default: the cluster's (GKE picks)."""
    image_type: NodeImageType | None = None
    """Default: COS_CONTAINERD."""
    driver: GpuDriver | None = None
    """Default: `default` (GKE installs its default driver)."""
    sharing: Sharing | None = None
    """GPU time-sharing or MPS."""
    partition_size: str | None = None
    """A MIG partition size, e.g. 1g.10gb."""
    service_account: str | None = None
    """cluster.nodeServiceAccount when set (a change replaces the pool); None: the stack's own."""
    reservation: Reservation | None = None
    """Consume this reservation (SPECIFIC_RESERVATION), or any (ANY_RESERVATION)."""
    placement: PoolPlacement | None = None
    """`compact`: the nodes close together in one zone. Default: none."""
    flex_start: bool | None = None
    """Flex-start (Dynamic Workload Scheduler) nodes: provisioned when capacity frees up."""
    image_streaming: bool | None = None
    """GKE image streaming (gcfs_config) on the pool's nodes (rules/coldstart.py)."""
    secondary_boot_disk: str | None = None
    """A disk image of preloaded container images, attached in CONTAINER_IMAGE_CACHE mode."""
    queued_provisioning: bool | None = None
    """Nodes only through ProvisioningRequests (flex-start with queued provisioning, Kueue)."""


@dataclass(frozen=True)
class NodePoolConfig(GpuPool):
    """A pool as the loader resolved it: every setting decided, and what it decided from its
    workloads (machine fit, system overhead, the nodes its idle pods hold)."""

    gpu_count: int = 1
    machine_type: str = ""
    spot: bool = False
    min_nodes: int = 0
    max_nodes: int = _default(schema.NodePoolSpec, "max_nodes")
    zones: Sequence[str] = ()
    image_type: NodeImageType = NodeImageType.COS_CONTAINERD
    driver: GpuDriver = GpuDriver.DEFAULT
    flex_start: bool = False
    image_streaming: bool = False
    queued_provisioning: bool = False
    system_overhead: tuple[int, int] = (0, 0)
    """(millicores, bytes) GKE's own DaemonSets request on each node; pods get the rest."""
    slots_per_node: int = 1
    """How many `nvidia.com/gpu: 1` containers one node can serve at once (rules/fit.py)."""
    node_allocatable: Resources = Resources(0, 0)
    """What one node of its machine offers pods (rules/fit.py chose the machine)."""
    room: Resources = Resources(0, 0)
    """What one node leaves for the pool's workload pods, after GKE's system pods."""
    pinned_nodes: int = 0
    """Nodes the idle pods of its workloads hold (their replicas, or the HPA's minimum; a Job's
    pod only while it runs): the autoscaler removes a node only when its pods can move."""

    @classmethod
    def of(cls, pool: GpuPool) -> "NodePoolConfig":
        """A consumer's pool with its defaults filled in (the loader's pools as they are)."""
        if isinstance(pool, NodePoolConfig):
            return pool
        given = {k: v for k, v in vars(pool).items() if v is not None}
        if pool.machine_type is None and pool.gpu_type in catalog.GPU_TYPES:
            machines = catalog.machine_types_for(pool.gpu_type, pool.gpu_count or 1)
            given["machine_type"] = machines[0].name if machines else ""
        return cls(**given)

    @property
    def shared(self) -> bool:
        """A pool whose GPUs serve several containers (time-sharing, MPS or MIG)."""
        return self.sharing is not None or self.partition_size is not None

    @property
    def idle_nodes(self) -> int:
        """What stays up with no traffic: the pinned nodes, and at least minNodes."""
        return max(self.min_nodes, self.pinned_nodes)
