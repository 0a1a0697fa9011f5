"""The raw shape of the `gke-gpu:*` config: types, enums, formats, bounds and unknown keys.

Strict: a boolean is not a number and a number is not a string, as in the engine's JSON (YAML's
`on` is the string "on" under YAML 1.2, and `port: on` must not become port 1). Rules that need
more than one field live in `rules/`.

This is also the one description of every key users read: each field's docstring is its
documentation, from which `python -m tools.reference --write` generates docs/configuration.md and
the key list in Pulumi.yaml. In a docstring the first paragraph is a one-line summary (Pulumi.yaml
shows it) and later paragraphs add detail; a paragraph `Default: ...` names a default the schema
cannot show (derived, or applied by the rules); a paragraph opening with a key in backticks
(`` `type`: ... ``, with its own optional `Default:` line) describes that key of a nested model
where it means more than the nested model's own docstring says. Docstrings are Markdown, their
links relative to docs/.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic.alias_generators import to_camel

from components.config import formats
from components.config.rules import vllm

# vLLM's OpenAI server's own default port (rules/vllm.py has the source).
VLLM_PORT = vllm.DEFAULT_PORT
Mode = Literal["standard", "autopilot", "existing"]
MODES: tuple[Mode, ...] = get_args(Mode)
Driver = Literal["default", "latest", "installer"]
ImageType = Literal["COS_CONTAINERD", "UBUNTU_CONTAINERD"]
Kind = Literal["Deployment", "StatefulSet", "Job"]
DevicePluginType = Literal["static", "gpu-operator", "none"]
DEVICE_PLUGIN_TYPES: tuple[DevicePluginType, ...] = get_args(DevicePluginType)
# LoadBalancer: external passthrough load balancer; Internal: GKE's internal passthrough load
# balancer (reachable from the VPC only); ClusterIP: no load balancer, in-cluster only; NodePort:
# existing clusters without a load balancer implementation (rules/exposure.py).
ExposeType = Literal["LoadBalancer", "Internal", "ClusterIP", "NodePort"]
# Who may use GKE's DNS-based control-plane endpoint (components/platform/cluster.py has the
# source).
DnsEndpoint = Literal["disabled", "external"]
# auto: surge where the pool has a spare GPU at its maximum, else replace (see rules/fit.py).
Rollout = Literal["auto", "surge", "replace"]


def _pattern(pattern: str) -> StringConstraints:
    # pydantic matches with Rust's regex, where `$` is the end of the text (no trailing newline).
    return StringConstraints(pattern=f"^(?:{pattern})$")


GkeName = Annotated[str, _pattern(formats.GKE_NAME)]
K8sName = Annotated[str, _pattern(formats.K8S_NAME)]
CpuQuantity = Annotated[str, _pattern(formats.CPU_QUANTITY)]
MemoryQuantity = Annotated[str, _pattern(formats.MEMORY_QUANTITY)]
Zone = Annotated[str, _pattern(formats.ZONE)]
LabelValue = Annotated[str, _pattern(formats.LABEL_VALUE)]
Image = Annotated[str, _pattern(formats.IMAGE), StringConstraints(max_length=512)]
AbsolutePath = Annotated[str, _pattern(formats.ABSOLUTE_PATH), StringConstraints(max_length=1024)]
Text = Annotated[str, StringConstraints(max_length=4096)]
Port = Annotated[int, Field(ge=1, le=65535)]
NetworkRef = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
GceName = Annotated[str, StringConstraints(min_length=1, max_length=63)]


class Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=False,
        extra="forbid",
        frozen=True,
        strict=True,
        hide_input_in_errors=True,
        # Documentation only: each field's docstring becomes its description (tools/reference.py).
        use_attribute_docstrings=True,
    )


class GpuSpec(Model):
    type: Annotated[str, StringConstraints(max_length=64)] | None = None
    """GKE accelerator name, e.g. `nvidia-l4` (`python -m tools.gpus` lists them)."""
    # 16 is the most GPUs any GKE machine carries (a2-megagpu-16g); the catalog checks the rest.
    count: Annotated[int, Field(ge=1, le=16)] = 1
    """How many GPUs; the allowed counts depend on the type."""


class SystemPoolSpec(Model):
    machine_type: Annotated[str, _pattern(r"[a-z][-a-z0-9]{0,62}")] = "e2-standard-2"
    """Machine type of the system pool's nodes (a general-purpose shape, checked)."""
    nodes: Annotated[int, Field(ge=1, le=10)] = 1
    """System nodes per zone of the cluster."""


class ClusterSpec(Model):
    mode: Mode = "autopilot"
    """The kind of cluster: GKE `standard` or `autopilot`, created here, or an `existing` one.

    `existing` deploys onto a cluster this stack does not manage and creates nothing in Google
    Cloud (see [Existing GPU clusters](existing-clusters.md)).
    """
    name: GkeName | None = None
    """GKE cluster name.

    Default: `gke-gpu-<stack>`, made a valid GKE name (`Prod_EU` -> `gke-gpu-prod-eu`)
    """
    location: Annotated[str, StringConstraints(max_length=64)] | None = None
    """The region (regional cluster) or one of its zones (zonal cluster, Standard only).

    Default: `gcp:region`
    """
    release_channel: Literal["RAPID", "REGULAR", "STABLE"] = "REGULAR"
    """GKE release channel of the cluster."""
    deletion_protection: bool = True
    """GKE's deletion protection on the cluster and Pulumi's `protect` on what the service stands
    on; `false` lets `pulumi destroy` delete the cluster.

    See [Deletion protection and teardown](deletion-protection.md).
    """
    master_authorized_networks: Annotated[list[str], Field(max_length=100)] = []
    """CIDRs allowed to reach the control plane; empty allows any.

    With them, the IP endpoint accepts only those ranges (and not, as GKE otherwise allows, any
    Google Cloud VM's public address). A list that adds up to every address (`0.0.0.0/0`, two
    `/1`s) is refused: it restricts nothing.
    """
    private_nodes: bool = False
    """Nodes without public IPs; adds Cloud NAT so that they can pull public images."""
    # derived: on with privateNodes (rules/cluster.py nat_problems).
    cloud_nat: bool | None = None
    """A Cloud NAT (and router) for the cluster's subnetwork only, never the rest of the network.

    `false` when a NAT of yours already serves that subnetwork; `true` with public nodes is
    refused (it would serve nothing). With your own `network`, set `subnetwork`.

    Default: `privateNodes`
    """
    system_pool: SystemPoolSpec = SystemPoolSpec()
    """Standard: the node pool for pods that need no GPU (GKE's own, the gates).

    Refused on Autopilot, which manages its own nodes.
    """
    kubeconfig: Annotated[str, StringConstraints(max_length=1_000_000)] | None = None
    """`existing` only: the cluster's kubeconfig, set as a secret.

    `pulumi config set --path --secret 'gke-gpu:cluster.kubeconfig' "$(cat ~/.kube/config)"`
    (or the name of a secret top-level key holding it); a kubeconfig in plain text is refused.
    Exactly one of `kubeconfig` and `context`.
    """
    context: Annotated[str, StringConstraints(min_length=1, max_length=253)] | None = None
    """`existing` only: a context of the kubeconfig on the machine that runs Pulumi.

    Exactly one of `kubeconfig` and `context`; the current context is never used implicitly.
    """
    # Your own VPC (rules/exposure.py checks the formats): names or self-links.
    network: NetworkRef | None = None
    """Your own VPC network, by name or self-link (`projects/P/global/networks/N`).

    Cloud NAT's router lives in it. Changing it replaces the cluster.

    Default: `default` (the project's default network)
    """
    subnetwork: NetworkRef | None = None
    """Its subnetwork in the cluster's region, by name or self-link; needs `network`.

    Changing it replaces the cluster.

    Default: none (GKE picks)
    """
    pod_range: GceName | None = None
    """Secondary range name of `subnetwork` for pod IPs (VPC-native).

    Changing it replaces the cluster.

    Default: none (GKE creates the range)
    """
    service_range: GceName | None = None
    """Secondary range name of `subnetwork` for Service IPs (VPC-native).

    Changing it replaces the cluster.

    Default: none (GKE creates the range)
    """
    node_service_account: Annotated[str, StringConstraints(max_length=254)] | None = None
    """An existing service account (email) for the nodes.

    The deploy identity then needs only `roles/iam.serviceAccountUser` on it
    ([delivery](delivery.md)).

    Default: created by the stack
    """
    dataplane_v2: bool = True  # rules/exposure.py GKE_NETWORK_KEYS: refused in mode existing
    """Standard: GKE Dataplane V2, which enforces the NetworkPolicies (Autopilot always has it).

    Create-only: turning it on for a cluster created without it **replaces the cluster** (a
    protected one refuses); set `false` to keep such a cluster (NetworkPolicies are then not
    enforced).
    """
    # Marks the stack as production for the policy pack (policy/rules/), whatever its name;
    # the config layer holds it to the production rules (rules/cluster.py production_problems).
    production: bool = False
    """Holds the stack to the production rules, in the config and the policy pack.

    The policy pack's rules (public LoadBalancers restricted, deletion protection on) apply
    whatever the stack is called, and so do the config's, before anything is created:
    `privateNodes: true`; `masterAuthorizedNetworks` set, each range /16 or narrower (IPv6 /48);
    `secretsEncryptionKey` set; `binaryAuthorization` not `false`; every public `LoadBalancer` on
    HTTPS with `sourceRanges` of /16 or narrower that do not add up to the internet.
    """
    # GKE's DNS-based control-plane endpoint ("off" would be a YAML 1.1 boolean).
    dns_endpoint: DnsEndpoint = "disabled"
    """Who may use GKE's DNS-based control-plane endpoint; with `external` the kubeconfig uses it.

    `external` admits user traffic from anywhere, checked by IAM (`container.clusters.connect`),
    and the kubeconfig uses it (CI on hosted runners behind `masterAuthorizedNetworks`);
    `disabled` keeps users off it, and the kubeconfig uses the IP endpoint, so with
    `masterAuthorizedNetworks` set `pulumi up` runs from inside those ranges. In-place update.
    """
    # Application-layer Secret encryption with this Cloud KMS key (rules/cluster.py checks it).
    secrets_encryption_key: Annotated[str, StringConstraints(max_length=512)] | None = None
    """A Cloud KMS key that encrypts Kubernetes Secrets at the application layer.

    `projects/P/locations/L/keyRings/R/cryptoKeys/K`, in the cluster's region; GKE's service
    agent needs `roles/cloudkms.cryptoKeyEncrypterDecrypter` on it ([delivery](delivery.md),
    *Production cluster keys*). Required in production. In-place update; removing it later does
    not decrypt.
    """
    # derived: on in production (rules/cluster.py).
    binary_authorization: bool | None = None
    """The cluster evaluates the project's Binary Authorization policy.

    Whether that audits (dry run) or enforces is the project policy's own setting, made once by
    the bootstrap. `false` is refused in production. In-place update.

    Default: `production`
    """


class DevicePluginSharingSpec(Model):
    replicas: Annotated[int, Field(ge=2, le=48)]
    """Time-slicing: each GPU is advertised this many times; workloads then ask `gpu.count: 1`."""


class DevicePluginSpec(Model):
    type: DevicePluginType = "static"
    """What advertises the GPUs (`nvidia.com/gpu`) to Kubernetes.

    `static`: NVIDIA's device plugin DaemonSet v0.20.0 in kube-system; `gpu-operator`: NVIDIA GPU
    Operator Helm chart v26.7.0 in namespace `gpu-operator`; `none`: the cluster already
    advertises `nvidia.com/gpu`.
    """
    sharing: DevicePluginSharingSpec | None = None
    """Time-slicing: each GPU shared by several pods (`static` and `gpu-operator`)."""
    install_driver: bool | None = None
    """`gpu-operator` only: the operator installs the NVIDIA driver (`driver.enabled`).

    Default: `true`
    """
    # static: the nodes the plugin runs on (rules/cluster.py plugin_node_terms).
    node_selector: Annotated[dict[str, str], Field(max_length=64)] | None = None
    """`static` only: the labels of the nodes the plugin runs on.

    Default: any node with one of the labels NVIDIA's own chart requires
    (`feature.node.kubernetes.io/pci-10de.present=true`,
    `feature.node.kubernetes.io/cpu-model.vendor_id=NVIDIA`, `nvidia.com/gpu.present=true`) or
    with a GPU workload's `nodeSelector`; never the CPU nodes
    """
    fail_on_init_error: bool = True
    """`static` only: the plugin exits on a selected node without a usable GPU.

    Its pod then restarts, so a broken node is visible; `false` leaves it waiting there.
    """


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

    Default: `latest` on COS when a workload on the pool runs a vLLM image that needs it (a CUDA
    13 build), else `default`
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


class ProbeSpec(Model):
    # derived: rules/workloads.py (vLLM's /health for a vLLM server, else a TCP probe).
    path: Annotated[str, _pattern(r"/[!-~]*"), StringConstraints(max_length=1024)] | None = None
    """HTTP path of the startup, readiness and liveness probes.

    Default: vLLM: `/health`; other images: none (a TCP probe on the port)
    """
    port: Port | None = None
    """Probe port.

    Default: `port`
    """
    startup_seconds: Annotated[int, Field(ge=10, le=7200)] = 1800
    """How long the model may take to load before liveness applies."""


class StorageSpec(Model):
    size: MemoryQuantity
    """Volume claim size, e.g. `100Gi`."""
    mount_path: AbsolutePath
    """Where the volume is mounted."""
    storage_class: K8sName | None = None
    """StorageClass of the claim.

    Default: the cluster's default
    """


class CacheSpec(Model):
    size: MemoryQuantity = "30Gi"
    """Size of the per-pod disk."""
    path: AbsolutePath = "/cache"
    """Where it is mounted."""
    storage_class: K8sName | None = None
    """StorageClass of the per-pod disk.

    Default: the cluster's default
    """


class ModelCacheSpec(Model):
    """Model weights read from a Cloud Storage bucket (FUSE CSI driver), checked in coldstart.py."""

    bucket: Annotated[str, StringConstraints(max_length=222)]
    """The bucket holding the model (its name alone, without `gs://`)."""
    path: Annotated[str, StringConstraints(max_length=1024)] | None = None
    """The model's folder in the bucket (`only-dir`), e.g. `Qwen/Qwen2.5-0.5B-Instruct`.

    Default: the whole bucket
    """
    mount_path: AbsolutePath = "/models"
    """Where it appears in the container.

    A vLLM workload's model (its first argument; `--model` is deprecated in vLLM) is pointed
    there and its old value kept as `--served-model-name`.
    """
    file_cache_size: MemoryQuantity = "30Gi"
    """Per-pod disk for Cloud Storage FUSE's file cache (parallel downloads land here).

    Make it larger than the model.
    """


class AutoscaleSpec(Model):
    """An HPA on a server metric scraped by Managed Service for Prometheus (coldstart.py)."""

    min_replicas: Annotated[int, Field(ge=1, le=1000)] = 1
    """HPA minimum."""
    max_replicas: Annotated[int, Field(ge=1, le=1000)]
    """HPA maximum; the capacity checks and rollouts count this many pods."""
    metric: Annotated[str, StringConstraints(max_length=200)] | None = None
    """The Prometheus gauge the server exports at `/metrics` (required for other images).

    Default: `vllm:num_requests_waiting` for vLLM images
    """
    target: Annotated[int, Field(ge=1, le=1_000_000)] = 10
    """Average value of the metric per pod above which a replica is added."""


class ExposeSpec(Model):
    port: Port = 443
    """Service port."""
    source_ranges: Annotated[list[str], Field(max_length=100)] = []
    """CIDRs allowed to reach the load balancer (`LoadBalancer`, `Internal`); empty allows any.

    A public one without them is refused in production stacks, by the config and the policy pack.
    """
    type: ExposeType = "LoadBalancer"
    """`LoadBalancer` (public), `Internal` (VPC only), `ClusterIP` (in-cluster only), `NodePort`
    (existing clusters).

    See [Exposure and security](security.md).
    """
    # derived: rules/exposure.py reserves_address (the certificate names the address).
    static_ip: bool | None = None
    """Reserve a regional address (external or internal) for the load balancer.

    The URL then survives a re-created Service; on by default with `tls` on GKE (the certificate
    names the address).

    Default: `tls` (GKE load balancers)
    """
    tls: bool = True
    """HTTPS through the gate, with a certificate from the stack's own CA (output `caCertificate`).

    `false` serves plain HTTP and is refused in production stacks by the policy pack.
    """
    hosts: Annotated[
        list[Annotated[str, StringConstraints(max_length=253)]], Field(max_length=20)
    ] = []
    """More IP addresses or DNS names the certificate is valid for.

    An existing cluster's load balancer or node address, `NodePort`, your own DNS name.
    """
    # derived: rules/exposure.py default_paths.
    paths: (
        Annotated[list[Annotated[str, StringConstraints(max_length=256)]], Field(max_length=64)]
        | None
    ) = None
    """The paths the gate forwards: exact, or a prefix ending in `/*` (not `/` or `/*`).

    Default: vLLM: its OpenAI-compatible API (see [Exposure and security](security.md)); other
    images: `/v1/*`
    """


class EgressSpec(Model):
    """Where a workload's pods may connect beyond the cluster's DNS (rules/egress.py)."""

    # derived: rules/egress.py.
    internet: bool | None = None
    """HTTPS (TCP 443) to public addresses (everything but RFC 1918, `100.64.0.0/10` and
    link-local).

    Default: on for a vLLM server that downloads its model from the Hugging Face Hub and for
    `modelCache` (Cloud Storage); off for everything else
    """
    destination_ranges: Annotated[list[str], Field(max_length=100)] = []
    """More CIDRs the pods may reach, any port (a model mirror, a database, `0.0.0.0/0` for all).

    Without them a pod reaches DNS only (plus what `internet` and `modelCache` add).
    """


class WorkloadSpec(Model):
    name: K8sName
    """Kubernetes name, also the Service's."""
    kind: Kind = "Deployment"
    """What runs the pods."""
    image: Image
    """Container image with a tag or digest."""
    gpu: GpuSpec = GpuSpec(type="nvidia-l4")
    """The GPUs each pod gets.

    `type`: The GPU type the pod runs on; GKE only (existing clusters select GPU nodes with
    `nodeSelector`).

    `count`: GPUs per pod (Autopilot allows per-type counts).
    """
    spot: bool = False
    """Run on Spot capacity (GKE only; Standard: needs a Spot pool)."""
    replicas: Annotated[int, Field(ge=0, le=1000)] = 1
    """Pods (Deployment, StatefulSet)."""
    command: Annotated[list[Text], Field(max_length=256)] = []
    """Container command.

    Default: the image's
    """
    args: Annotated[list[Text], Field(max_length=256)] = []
    """Container arguments.

    A literal value after a credential flag (`--api-key sk-...`) is refused: reference an env
    value instead (`--hf-token=$(HF_TOKEN)`).

    Default: the image's
    """
    env: Annotated[dict[str, Text], Field(max_length=256)] = {}
    """Environment variables; values set with `--path --secret` go into a Kubernetes Secret.

    A plain value named like a credential is refused (see [Secrets](secrets.md)).
    """
    secret_env: Annotated[dict[str, str], Field(max_length=256)] = {}
    """Env var name -> secret top-level config key (older form of a secret `env` value)."""
    # derived: 8000 for a vLLM server (its default), else none: say where your server listens
    port: Port | None = None
    """Container port serving HTTP; `null` for none.

    Only a vLLM server's port is known without being told.

    Default: vLLM: its `--port` or `8000`; other images: none
    """
    probe: ProbeSpec | None = ProbeSpec()
    """The startup, readiness and liveness probes; `null` for none.

    The plan prints each workload's probe. A Job gets none, and without a port there is none.
    """
    resources: WorkloadResourcesSpec = WorkloadResourcesSpec()
    """What each pod requests.

    `cpu`: CPU request.
    Default: sized from the node (Standard, Autopilot); none on an existing cluster

    `memory`: Memory request and limit.
    Default: sized from the node (Standard, Autopilot); none on an existing cluster
    """
    storage: StorageSpec | None = None
    """StatefulSet only: a volume claim per pod."""
    cache: CacheSpec | None = None
    """A per-pod disk for model weights and compile caches (a generic ephemeral volume).

    Created and deleted with the pod; `HOME` and `XDG_CACHE_HOME` point at it (Hugging Face,
    vLLM, Triton and FlashInfer follow them). Required for vLLM on Autopilot, whose default
    ephemeral storage is 1 GiB.

    Default: none (the default workload: `{size: 30Gi}`)
    """
    node_selector: Annotated[dict[str, str], Field(max_length=64)] = {}
    """Extra node labels to match.

    Existing clusters: their GPU nodes' label, e.g. `{gpu: "true"}`.
    """
    expose: ExposeSpec | None = None
    """A Service in front of the workload, through its gate (Deployment, StatefulSet).

    Default: none: not exposed (the default workload: `{port: 443}`)
    """
    # derived: defaults.RUN_AS_USER (non-root); the uid and gid every container runs as
    run_as_user: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    """The uid and gid every container runs as (`runAsNonRoot: true`, `fsGroup` the same).

    The workload namespace enforces Pod Security `restricted`, so root is refused. Jupyter's
    docker-stacks images: `1000` (their `jovyan`).

    Default: `10001`
    """
    read_only_root_filesystem: bool = True
    """The container's root filesystem is read-only; `/tmp` and `HOME` stay writable.

    `/tmp` is an emptyDir and `HOME` is the cache disk (`cache`) or an emptyDir at
    `/home/gke-gpu`. `false` for an image that writes elsewhere (e.g. `pip install --user` is
    fine, writing into `/app` is not).
    """
    egress: EgressSpec = EgressSpec()
    """Where the pods may connect beyond the cluster's DNS (egress is denied otherwise)."""
    backoff_limit: Annotated[int, Field(ge=0, le=100)] = 3
    """Job retries."""
    wait_for_completion: bool = False
    """Job only: `pulumi up` waits until the Job completes (and fails if it fails).

    By default it returns once the Job is created.
    """
    rollout: Rollout = "auto"
    """How a change rolls out: an extra pod first (`surge`) or a pod down first (`replace`).

    `surge`: one extra pod at a time, never below `replicas` (needs a spare GPU); `replace`: one
    pod down at a time (`Recreate` for one replica). `auto` surges only where the pool has a spare
    GPU at `maxNodes` (Autopilot: always), and replaces on existing clusters. A StatefulSet never
    surges: Kubernetes replaces its pods one at a time, highest ordinal first.
    """
    fallback: Annotated[list[FallbackSpec], Field(max_length=10)] = []
    """Alternatives GKE tries in order when the workload's own `gpu`/`spot` has no capacity.

    They become one ComputeClass (see [Getting GPUs](getting-gpus.md)); GKE only.
    """
    model_cache: ModelCacheSpec | None = None
    """Model weights from a Cloud Storage bucket, mounted read-only; GKE only.

    Mounted through the Cloud Storage FUSE CSI driver as the workload's own Kubernetes service
    account (Workload Identity). See [Cold starts](cold-starts.md).
    """
    autoscale: AutoscaleSpec | None = None
    """Replicas that follow load: an HPA on a server metric (Deployment, StatefulSet; GKE only).

    Not with `replicas`. See [Cold starts](cold-starts.md).
    """
    api_key: bool | None = None  # derived: rules/exposure.py api_key
    """Generate an API key, pass it to the server as `VLLM_API_KEY` and export it.

    The key comes from the workload's Secret; the secret outputs `apiKey` / `apiKeys` hold it.
    Other servers read the env var or take `$(VLLM_API_KEY)` in `args`. Not for a Job, nor for a
    workload that sets its own key.

    Default: on for an exposed vLLM server that sets no key of its own
    """

    @model_validator(mode="before")
    @classmethod
    def _derived_port(cls, data: Any) -> Any:
        """A vLLM server listens on 8000 unless told otherwise (rules/vllm.py); any other image's
        port is unknown, so none is assumed (no HTTP probe, nothing to expose)."""
        if isinstance(data, dict) and "port" not in data:
            image = data.get("image")
            port = None
            if isinstance(image, str) and formats.is_vllm_image(image):
                args = data.get("args")
                given = (
                    vllm.parse([a for a in args if isinstance(a, str)]).port
                    if isinstance(args, list)
                    else None
                )
                port = given or VLLM_PORT
            return {**data, "port": port}
        return data


def aliases(model: type[Model]) -> list[str]:
    """The camelCase keys a model accepts, as the user writes them."""
    return sorted(field.alias or name for name, field in model.model_fields.items())


# --- documentation only ------------------------------------------------------------------------


class StackKey(NamedTuple):
    """A top-level key of a stack file, for the reference (the loader reads each one itself)."""

    key: str
    type: str
    doc: str  # as a field's docstring: summary, detail, `Default:`
    model: type[Model] | None = None  # the schema of its value, or of each item of a list
    pattern: str | None = None  # the format of a plain string value (formats.*)


STACK_KEYS: tuple[StackKey, ...] = (
    StackKey(
        "gcp:project",
        "string",
        """Google Cloud project of the cluster (not needed with `cluster.mode: existing`).

        Default: required
        """,
        pattern=formats.PROJECT_ID,
    ),
    StackKey(
        "gcp:region",
        "string",
        """Region of the cluster, e.g. `us-central1` (not needed with `cluster.mode: existing`).

        Default: required
        """,
        pattern=formats.REGION,
    ),
    StackKey(
        "gke-gpu:cluster",
        "object",
        """The cluster: GKE Standard or Autopilot, created by the stack, or an existing one.

        Default: `{}`: every key's default (an Autopilot cluster)
        """,
        ClusterSpec,
    ),
    StackKey(
        "gke-gpu:nodePools",
        "list of objects",
        """Standard only: the GPU node pools, each autoscaled from `minNodes` to `maxNodes`.

        A workload with `fallback`s needs no pool: GKE creates its class's pools itself.

        Default: none (a Standard cluster needs one, unless every workload has `fallback`s)
        """,
        NodePoolSpec,
    ),
    StackKey(
        "gke-gpu:workloads",
        "list of objects",
        """The GPU workloads: Deployments, StatefulSets or Jobs, each with its Service and gate.

        Default: one vLLM server on 1 L4 Spot GPU, exposed over HTTPS on port 443 behind its
        gate and a generated API key (below)
        """,
        WorkloadSpec,
    ),
    StackKey(
        "gke-gpu:devicePlugin",
        "string or object",
        """Existing clusters only: what advertises their GPUs to Kubernetes.

        A string is the `type` alone (`static`, `gpu-operator`, `none`). GKE runs its own NVIDIA
        device plugin on GPU nodes, so the key is refused with the other modes.

        Default: `static`
        """,
        DevicePluginSpec,
    ),
    StackKey(
        "gke-gpu:namespace",
        "string",
        """Kubernetes namespace for the workloads.

        `default`, `kube-*` and GKE-managed namespaces are refused.

        Default: `gke-gpu`
        """,
        pattern=formats.K8S_NAME,
    ),
)
