"""The resolved config the components receive: frozen, typed, every default filled in.

The platform's part (cluster, pools, device plugin) is components/config/platform_model.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..facts.allocatable import Resources
from ..facts.controllers import Controller
from .platform_model import (
    ClusterConfig,
    ExistingClusterConfig,
    NodePoolConfig,
    Reservation,
    Secret,
)
from .rules.registry import Repository
from .schema import ClusterSpec, NodePoolSpec, WorkloadSpec
from .schema.disks import ModelCacheSpec
from .schema.expose import ExposeSpec
from .schema.monitoring import MonitoringSpec
from .schema.workloads import EgressSpec, ProbeSpec
from .variants import exposure_of, kind_spec

NAMESPACE = "gke-gpu"


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
class Probe:
    """The startup, readiness and liveness probes as decided; the keys as written are `spec`'s."""

    spec: ProbeSpec
    """workloads[i].probe as parsed, defaults applied (startupSeconds)."""
    path: str | None
    """An HTTP GET path; None: a TCP connection to the port (nothing is known of the server's
    paths, and a GET on `/` may answer 404 for ever)."""
    port: int
    """probe.port, else the workload's port."""

    @property
    def describe(self) -> str:
        how = f"HTTP GET {self.path}" if self.path else "TCP connect"
        return f"{how} on port {self.port} (startup up to {self.spec.startup_seconds}s)"


@dataclass(frozen=True)
class ModelCache:
    """Model weights read from a Cloud Storage bucket, streamed by vLLM (Run:ai Model Streamer) or
    through the Cloud Storage FUSE CSI driver, as the workload's own Kubernetes service account
    (Workload Identity Federation for GKE)."""

    spec: ModelCacheSpec
    """workloads[i].modelCache as parsed, defaults applied: bucket, path, fileCacheSize."""
    mount_path: str
    """modelCache.mountPath without a trailing slash (what vLLM is given as its model)."""
    mounted_because: str | None = None
    """Why the bucket is mounted rather than streamed (rules/streamer.py); None: streamed."""
    buffer_bytes: int | None = None
    """Streamed: each GPU process's streamer CPU staging buffer, sized to the pod (rules/
    streamer.py)."""

    @property
    def streams(self) -> bool:
        """vLLM streams the weights from the bucket: no mount, no FUSE sidecar."""
        return self.mounted_because is None


@dataclass(frozen=True)
class Queue:
    """workloads[].queue: the Job waits in the stack's Kueue queue and its nodes come through a
    ProvisioningRequest (flex-start with queued provisioning), held at most max_run_seconds."""

    max_run_seconds: int


@dataclass(frozen=True)
class Expose:
    """What was decided of a workload's expose; the keys as written are `spec`'s."""

    spec: ExposeSpec
    """workloads[i].expose as parsed (schema/expose.py), defaults applied."""
    static_ip: bool = False
    """A reserved regional address, so the URL survives a re-created Service (expose.staticIp,
    else rules/exposure.py reserves_address)."""
    paths: tuple[str, ...] = ()
    """What the gate forwards: exact paths, or prefixes ending in "/*" (expose.paths, else
    rules/exposure.py default_paths; components/service/haproxy.py)."""
    domain: str | None = None
    """Served through a GKE Gateway on this name (issue 35); `auto` is resolved to the Cloud
    Endpoints name (rules/endpoints.py endpoints_name)."""
    endpoints: bool = False
    """domain is a Cloud Endpoints name the stack makes (expose.domain: auto)."""

    @property
    def type(self) -> str:
        """expose.type: with `domain`, the keys variants.exposure_of picks the exposure by."""
        return self.spec.type


@dataclass(frozen=True)
class Egress:
    """Where a workload's pods may connect, beyond DNS (components/platform/egress.py builds the
    policy)."""

    spec: EgressSpec = EgressSpec()
    """workloads[i].egress as parsed, defaults applied (destinationRanges)."""
    internet: bool = False
    """HTTPS (TCP 443) to public addresses: egress.internet, else on for a server that downloads
    its model (rules/egress.py)."""
    metadata_server: bool = False
    """The GKE metadata server (Workload Identity tokens): a modelCache's reader (vLLM's
    streamer, or the FUSE sidecar) and an output bucket's."""


@dataclass(frozen=True)
class WorkloadConfig:
    """A workload as decided: its spec (the stack file's keys, defaults applied) and what the
    loader decided from it, the cluster and its pools (components/config/build.py). A key read
    as written is read from `spec`; a field here is one the loader computed."""

    spec: WorkloadSpec
    """workloads[i] as parsed (schema/workloads.py), defaults applied; frozen."""
    gpu_type: str | None
    """gpu.type on GKE; None on an existing cluster (its GPU nodes are chosen by nodeSelector)."""
    replicas: int
    """What the workload starts with: autoscale.minReplicas when autoscaled, else replicas."""
    args: tuple[str, ...]
    """The stack file's args and what the model cache and adapters add (rules/coldstart.py,
    rules/adapters.py)."""
    env: tuple[tuple[str, str], ...]
    """The plain env values, sorted; those that came from `secure:` are secret_values."""
    secret_values: tuple[tuple[str, Secret], ...]
    """Env var -> secret value: env values that came from `secure:` (nested secrets)."""
    probe: Probe | None
    """Its probes, their path and port decided (None for a Job, or without a port)."""
    cpu: str | None
    """None only on an existing cluster without resources.cpu: its nodes' size is unknown, so
    nothing is assumed (the pod is scheduled by its GPU alone)."""
    memory: str | None
    """resources.memory, else sized from the node (None on an existing cluster)."""
    expose: Expose | None
    """What was decided of its expose (None: not exposed)."""
    run_as_user: int | None
    """The uid and gid of every container (defaults.RUN_AS_USER unless runAsUser is set)."""
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
    model_cache: ModelCache | None = None
    """Its modelCache, the mount path normalised."""
    autoscale_metric: str | None = None
    """With autoscale: the Prometheus gauge the server exports at /metrics that the HPA reads,
    autoscale.metric else vLLM's queue (rules/coldstart.py VLLM_QUEUE_METRIC)."""
    secret_args: bool = False
    """The engine marked `workloads` secret and the stack file cannot prove which leaves were
    (an ESC import, another --config-file): command and args are sent as secrets too."""
    api_key: bool = False
    """The server is protected by a generated API key (env VLLM_API_KEY; rules/exposure.py)."""
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
    queue: Queue | None = None
    """A Job that waits in the stack's Kueue queue for queued-provisioning nodes."""

    @property
    def max_replicas(self) -> int:
        """Replicas at the most: the HPA's maxReplicas when autoscaled (capacity, rollouts)."""
        scale = self.spec.autoscale
        return scale.max_replicas if scale else self.replicas

    @property
    def max_pods(self) -> int:
        """Pods at once at the most: a kind that holds replicas its maximum replicas, each `hosts`
        pods (a replica over several nodes); any other (a Job) runs `parallelism` (one by
        default)."""
        return (
            self.max_replicas * self.spec.hosts
            if kind_spec(self.spec).holds_replicas
            else (self.spec.parallelism or 1)
        )

    @property
    def idle_pods(self) -> int:
        """Pods it keeps up with no traffic (the HPA's minimum); a kind that holds no replicas (a
        Job) has pods only while it runs."""
        return self.replicas * self.spec.hosts if kind_spec(self.spec).holds_replicas else 0

    @property
    def needs(self) -> frozenset[Controller]:
        """The controllers the platform runs for it: what its kind and its exposure declare they
        need, and Kueue for a Job that waits in the queue (`queue`: a key, not a variant)."""
        exposure = exposure_of(self.expose) if self.expose is not None else None
        return (
            kind_spec(self.spec).needs
            | (exposure.needs if exposure is not None else frozenset())
            | ({Controller.KUEUE} if self.queue is not None else frozenset())
        )


@dataclass(frozen=True)
class Specs:
    """The stack file's cluster, node pools and workloads as parsed (schema models, defaults
    applied): what the stack's front end hands each GpuService as its Args
    (components/service/from_stack.py)."""

    cluster: ClusterSpec
    node_pools: tuple[NodePoolSpec, ...]
    workloads: tuple[WorkloadSpec, ...]


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
    monitoring: MonitoringSpec = field(default_factory=MonitoringSpec)
    """`monitoring` as parsed, defaults applied: the dashboard and alerts (on by default)."""
    specs: Specs | None = None
    """The specs the config was decided from (None: a config built by hand, in tests)."""

    @property
    def production(self) -> bool:
        """cluster.production: the policy pack holds the stack to its production rules."""
        return self.cluster.production

    @property
    def needs(self) -> frozenset[Controller]:
        """The controllers and add-ons components/platform runs: those the stack's workloads
        need (WorkloadConfig.needs), never read off a key or a variant's name."""
        return frozenset[Controller]().union(*(w.needs for w in self.workloads))

    @property
    def exposed(self) -> tuple[WorkloadConfig, ...]:
        return tuple(w for w in self.workloads if w.expose is not None)
