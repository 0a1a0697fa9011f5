"""The resolved config the components receive: frozen, typed, every default filled in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pulumi

from components.config.rules.registry import Repository
from components.config.schema import (
    DevicePluginType,
    DnsEndpoint,
    Driver,
    ExclusionScope,
    ExposeType,
    Kind,
    Mode,
)
from components.facts.allocatable import Resources

NAMESPACE = "gke-gpu"


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

    @property
    def any(self) -> bool:
        return self.name is None


@dataclass(frozen=True)
class CapacityChoice:
    """One entry of a workload's ComputeClass priorities (rules/fallback.py)."""

    gpu_type: str
    gpu_count: int
    spot: bool
    flex_start: bool
    reservation: Reservation | None
    machine_type: str
    """The smallest machine of the GPU whose allocatable holds the pod (what GKE creates)."""
    driver_version: Literal["default", "latest"]


@dataclass(frozen=True)
class MaintenanceWindow:
    """GKE's recurring maintenance window: the first one's start and end (UTC), and its RRULE."""

    start: str
    end: str
    recurrence: str


@dataclass(frozen=True)
class MaintenanceExclusion:
    """A period in which GKE holds back the upgrades of `scope`."""

    name: str
    start: str
    end: str
    scope: ExclusionScope


@dataclass(frozen=True)
class Maintenance:
    """cluster.maintenance as resolved: production's default window included."""

    window: MaintenanceWindow | None
    exclusions: tuple[MaintenanceExclusion, ...] = ()


@dataclass(frozen=True)
class ClusterConfig:
    mode: Mode
    name: str
    location: str
    release_channel: str
    deletion_protection: bool
    master_authorized_networks: tuple[str, ...]
    private_nodes: bool
    system_machine_type: str
    system_nodes: int
    auto_provisioning_limits: tuple[tuple[str, int], ...] = ()
    """Standard: node auto-provisioning resource limits (cpu, memory GB, GPU types) for the
    workloads' ComputeClasses; empty leaves auto-provisioning off."""
    network: str = "default"
    """The VPC network (name or self-link); the project's `default` network unless set."""
    subnetwork: str | None = None
    """The subnetwork (name or self-link); None: GKE picks the network's subnet of the region."""
    pod_range: str | None = None
    """Secondary range name of the subnetwork for pod IPs (None: GKE creates one)."""
    service_range: str | None = None
    """Secondary range name of the subnetwork for Service IPs (None: GKE creates one)."""
    node_service_account: str | None = None
    """An existing node service account (email); None: the stack creates one."""
    production: bool = False
    """cluster.production: the policy pack holds this stack to the production rules."""
    cloud_nat: bool = False
    """A Cloud NAT (and its router) for the cluster's subnetwork: private nodes reach public
    registries through it. False with public nodes, or when a NAT of yours serves the subnet."""
    dataplane_v2: bool = True
    """Standard: GKE Dataplane V2, which enforces NetworkPolicy (create-only: changing it
    replaces the cluster). Autopilot always has it."""
    dns_endpoint: DnsEndpoint = "disabled"
    """`external`: user traffic may use the DNS-based control-plane endpoint from anywhere (IAM
    decides), and the kubeconfig uses it; `disabled`: the kubeconfig uses the IP endpoint."""
    secrets_encryption_key: str | None = None
    """A Cloud KMS key (projects/P/locations/L/keyRings/R/cryptoKeys/K) that encrypts Secrets
    at the application layer; None: GKE's default encryption at rest only."""
    binary_authorization: bool = False
    """The cluster evaluates the project's Binary Authorization policy (which says audit or
    enforce); on in production unless asked otherwise."""
    system_nodes_total: int = 0
    """Standard: system_nodes per zone, times the zones a regional cluster spreads them over."""
    maintenance: Maintenance | None = None
    """When GKE may upgrade the cluster (a window, exclusions); None: at any time."""


@dataclass(frozen=True)
class DevicePluginConfig:
    """How an existing cluster's GPUs become schedulable as nvidia.com/gpu."""

    type: DevicePluginType
    """static: NVIDIA's device plugin DaemonSet; gpu-operator: the NVIDIA GPU Operator;
    none: the cluster already advertises nvidia.com/gpu."""
    sharing_replicas: int | None
    """Time-slicing: each physical GPU is advertised as this many nvidia.com/gpu (None: off)."""
    install_driver: bool
    """gpu-operator: the operator installs the NVIDIA driver (its driver.enabled value)."""
    node_selector_terms: tuple[tuple[tuple[str, str], ...], ...] = ()
    """static: the nodes it runs on, as node affinity terms: any term matches, every label of
    a term must. Empty only before the loader fills it in (rules/cluster.py)."""
    fail_on_init_error: bool = True
    """static: the plugin exits when it finds no GPU (NVIDIA's default), so a selected node
    without a working GPU shows up as a crash-looping pod instead of silently."""


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
    strategy: Literal["TIME_SHARING", "MPS"]
    max_clients_per_gpu: int


@dataclass(frozen=True)
class NodePoolConfig:
    name: str
    gpu_type: str
    gpu_count: int
    machine_type: str
    spot: bool
    min_nodes: int
    max_nodes: int
    min_nodes_reason: str | None
    zones: tuple[str, ...]
    image_type: str
    driver: Driver
    sharing: Sharing | None
    partition_size: str | None
    system_overhead: tuple[int, int] = (0, 0)
    """(millicores, bytes) GKE's own DaemonSets request on each node; pods get the rest."""
    service_account: str | None = None
    """cluster.nodeServiceAccount when set (a change replaces the pool); None: the stack's own."""
    reservation: Reservation | None = None
    """Consume this reservation (SPECIFIC_RESERVATION), or any (ANY_RESERVATION)."""
    placement: Literal["compact"] | None = None
    flex_start: bool = False
    """Flex-start (Dynamic Workload Scheduler) nodes: provisioned when capacity frees up."""
    image_streaming: bool = False
    """GKE image streaming (gcfs_config) on the pool's nodes (rules/coldstart.py)."""
    secondary_boot_disk: str | None = None
    """A disk image of preloaded container images, attached in CONTAINER_IMAGE_CACHE mode."""
    slots_per_node: int = 1
    """How many `nvidia.com/gpu: 1` containers one node can serve at once (rules/fit.py)."""
    node_allocatable: Resources = Resources(0, 0)
    """What one node of its machine offers pods (rules/fit.py chose the machine)."""
    room: Resources = Resources(0, 0)
    """What one node leaves for the pool's workload pods, after GKE's system pods."""
    pinned_nodes: int = 0
    """Nodes the idle pods of its workloads hold (their replicas, or the HPA's minimum; a Job's
    pod only while it runs): the autoscaler removes a node only when its pods can move."""

    @property
    def shared(self) -> bool:
        """A pool whose GPUs serve several containers (time-sharing, MPS or MIG)."""
        return self.sharing is not None or self.partition_size is not None

    @property
    def idle_nodes(self) -> int:
        """What stays up with no traffic: the pinned nodes, and at least minNodes."""
        return max(self.min_nodes, self.pinned_nodes)


@dataclass(frozen=True)
class Probe:
    path: str | None
    """An HTTP GET path; None: a TCP connection to the port (nothing is known of the server's
    paths, and a GET on `/` may answer 404 for ever)."""
    port: int
    startup_seconds: int

    @property
    def describe(self) -> str:
        how = f"HTTP GET {self.path}" if self.path else "TCP connect"
        return f"{how} on port {self.port} (startup up to {self.startup_seconds}s)"


@dataclass(frozen=True)
class Storage:
    size: str
    mount_path: str
    storage_class: str | None
    retention: Literal["Retain", "Delete"] = "Retain"
    """The claims' fate when the StatefulSet is deleted (persistentVolumeClaimRetentionPolicy)."""


@dataclass(frozen=True)
class Cache:
    """A per-pod disk for model weights and compile caches: a generic ephemeral volume (a
    PersistentVolumeClaim created and deleted with the pod), so a multi-GB download counts
    against no node's ephemeral storage (Autopilot's default request is 1 GiB)."""

    size: str
    path: str
    storage_class: str | None


@dataclass(frozen=True)
class ModelCache:
    """Model weights read from a Cloud Storage bucket through the Cloud Storage FUSE CSI driver,
    as the workload's own Kubernetes service account (Workload Identity Federation for GKE)."""

    bucket: str
    path: str | None
    """The folder in the bucket holding the model (the mount's only-dir); None: the bucket."""
    mount_path: str
    file_cache_size: str
    """A per-pod disk for Cloud Storage FUSE's file cache (the sidecar's gke-gcsfuse-cache)."""


@dataclass(frozen=True)
class Autoscale:
    """An HPA on a server metric (Managed Service for Prometheus), or, with min_replicas 0,
    KEDA's HTTP add-on (requests in flight; scales to zero, holds the first request)."""

    min_replicas: int
    max_replicas: int
    metric: str
    """The Prometheus gauge the server exports at /metrics, e.g. vllm:num_requests_waiting."""
    target: int
    """Per pod: the metric's average (HPA) or requests in flight (KEDA) that adds a replica."""
    idle_seconds: int = 900
    wake_timeout_seconds: int = 1800


@dataclass(frozen=True)
class Expose:
    port: int
    source_ranges: tuple[str, ...]
    type: ExposeType
    static_ip: bool = False
    """A reserved regional address, so the URL survives a re-created Service."""
    tls: bool = True
    """The gate serves HTTPS (the stack's own CA signs its certificate)."""
    hosts: tuple[str, ...] = ()
    """Extra names and addresses the certificate is valid for."""
    paths: tuple[str, ...] = ()
    """What the gate forwards: exact paths, or prefixes ending in "/*"
    (components/service/haproxy.py)."""
    websockets: bool = False
    """The gate lets WebSocket upgrades through (to the allowed paths, with the key)."""


@dataclass(frozen=True)
class Egress:
    """Where a workload's pods may connect, beyond DNS (components/platform/egress.py builds the
    policy)."""

    internet: bool = False
    """HTTPS (TCP 443) to public addresses: the Hugging Face Hub, Cloud Storage."""
    metadata_server: bool = False
    """The GKE metadata server (Workload Identity tokens): a modelCache's FUSE sidecar."""
    destination_ranges: tuple[str, ...] = ()
    """workloads[].egress.destinationRanges: more destinations, any port."""


@dataclass(frozen=True)
class WorkloadConfig:
    name: str
    kind: Kind
    image: str
    gpu_type: str | None
    gpu_count: int
    spot: bool
    replicas: int
    command: tuple[str, ...]
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    secret_env: tuple[tuple[str, str], ...]
    """Env var -> name of a secret top-level config key (the `secretEnv` indirection)."""
    secret_values: tuple[tuple[str, Secret], ...]
    """Env var -> secret value: env values that came from `secure:` (nested secrets)."""
    port: int | None
    probe: Probe | None
    cpu: str | None
    """None only on an existing cluster without resources.cpu: its nodes' size is unknown, so
    nothing is assumed (the pod is scheduled by its GPU alone)."""
    memory: str | None
    storage: Storage | None
    cache: Cache | None
    node_selector: tuple[tuple[str, str], ...]
    expose: Expose | None
    run_as_user: int | None
    """The uid and gid of every container (defaults.RUN_AS_USER unless runAsUser is set)."""
    backoff_limit: int
    wait_for_completion: bool
    """Job: `pulumi up` waits until it completes (otherwise it only creates it)."""
    rollout: Literal["surge", "replace"]
    """surge: one extra pod at a time (a spare GPU exists); replace: one pod down at a time."""
    driver_version: str | None
    """Autopilot: the GKE driver version its nodes must have (None: GKE's default)."""
    node_pool: NodePoolConfig | None
    """Standard mode: the node pool this workload is pinned to (the smallest one that fits)."""
    capacity: tuple[CapacityChoice, ...] = ()
    """With `fallback`: its ComputeClass priorities, the workload's own choice first."""
    compute_class: str | None = None
    """With `fallback`: the name of its ComputeClass (the pods select it)."""
    secondary_boot_disk: str | None = None
    """With `fallback`: preloaded images for its ComputeClass's nodes (every priority)."""
    model_cache: ModelCache | None = None
    autoscale: Autoscale | None = None
    ephemeral_storage: str | None = None
    """resources.ephemeralStorage: scratch space requested in the container's filesystem."""
    secret_args: bool = False
    """The engine marked `workloads` secret and the stack file cannot prove which leaves were
    (an ESC import, another --config-file): command and args are sent as secrets too."""
    api_key: bool = False
    """The server is protected by a generated API key (env VLLM_API_KEY; rules/exposure.py)."""
    read_only_root_filesystem: bool = True
    """The container's root filesystem is read-only; /tmp and HOME are volumes."""
    egress: Egress = Egress()
    """What its pods may reach besides the cluster's DNS (default deny otherwise)."""
    requests: Resources = Resources(0, 0)
    """Each pod's CPU and memory requests (cpu and memory; none unset on an existing cluster)."""
    pod_machine: str | None = None
    """Without a node pool on GKE: the machine of the node GKE creates for each pod (the first
    ComputeClass priority's, or Autopilot's smallest that holds the pod, its sidecar included)."""
    model: str | None = None
    """The model a vLLM server serves: its served name, else its model argument (rules/vllm.py)."""
    adapters: tuple[tuple[str, str], ...] = ()
    """LoRA adapters (name, path) vLLM serves next to the model (rules/adapters.py)."""
    routing: Literal["cache-aware", "round-robin"] = "round-robin"
    """cache-aware: the gate routes by prompt prefix and load to each replica (rules/routing.py)."""
    hosts: int = 1
    """Nodes per replica: more than 1 makes each replica a LeaderWorkerSet group of this many pods,
    each with gpu_count GPUs (components/kinds/leaderworkerset.py)."""

    @property
    def max_replicas(self) -> int:
        """Replicas at the most: the HPA's maxReplicas when autoscaled (capacity, rollouts)."""
        return self.autoscale.max_replicas if self.autoscale else self.replicas

    @property
    def max_pods(self) -> int:
        """Pods at once at the most: a Job runs one."""
        return 1 if self.kind == "Job" else self.max_replicas * self.hosts

    @property
    def idle_pods(self) -> int:
        """Pods it keeps up with no traffic (the HPA's minimum); a Job's only while it runs."""
        return 0 if self.kind == "Job" else self.replicas * self.hosts


@dataclass(frozen=True)
class MonitoringConfig:
    """`monitoring`: the stack's dashboard and alerts (components/service/monitoring.py)."""

    dashboard: bool = True
    alerts: bool = True
    gpu_idle_seconds: int = 3600
    """A GPU under 1% utilisation this long, its node running, fires the idle alert."""
    error_rate_percent: int = 5
    """Aborted or failed requests above this share over 5 minutes fire the error alert."""
    pending_seconds: int = 900
    """A pod unschedulable this long (waiting for GPU capacity) fires the pending alert."""
    notification_channels: tuple[str, ...] = ()
    """Existing channels by resource name (projects/P/notificationChannels/ID)."""
    emails: tuple[str, ...] = ()
    """Addresses the stack creates an email channel for."""


@dataclass(frozen=True)
class StackConfig:
    project: str
    """gcp:project; empty in existing mode, which creates no Google Cloud resource."""
    region: str
    """gcp:region; empty in existing mode."""
    stack: str
    namespace: str
    cluster: ClusterConfig | ExistingClusterConfig
    node_pools: tuple[NodePoolConfig, ...]
    workloads: tuple[WorkloadConfig, ...]
    secrets: tuple[str, ...] = field(default=())
    """Config keys (namespace gke-gpu) that hold secrets the workloads read."""
    image_repositories: tuple[Repository, ...] = field(default=())
    """Artifact Registry repositories of the cluster's project the workloads' images come from:
    the node service account is granted reader on each (rules/registry.py)."""
    advisories: tuple[str, ...] = field(default=())
    """Settings that work but do not do what they promise (e.g. image streaming of an image
    outside Artifact Registry): shown by `pulumi up` (a warning) and the offline plan."""
    monitoring: MonitoringConfig = field(default=MonitoringConfig())
    """The dashboard and alerts (on by default)."""

    @property
    def production(self) -> bool:
        """cluster.production: the policy pack holds the stack to its production rules."""
        return self.cluster.production

    @property
    def exposed(self) -> tuple[WorkloadConfig, ...]:
        return tuple(w for w in self.workloads if w.expose is not None)
