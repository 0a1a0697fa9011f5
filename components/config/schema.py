"""The raw shape of the `gke-gpu:*` config: types, enums, formats, bounds and unknown keys.

Strict: a boolean is not a number and a number is not a string, as in the engine's JSON (YAML's
`on` is the string "on" under YAML 1.2, and `port: on` must not become port 1). Rules that need
more than one field live in `rules/`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

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
# Who may use GKE's DNS-based control-plane endpoint (components/cluster.py has the source).
DnsEndpoint = Literal["disabled", "external"]
# auto: surge where the pool has a spare GPU at its maximum, else replace (see rules/capacity.py).
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
    )


class GpuSpec(Model):
    type: Annotated[str, StringConstraints(max_length=64)] | None = None
    # 16 is the most GPUs any GKE machine carries (a2-megagpu-16g); the catalog checks the rest.
    count: Annotated[int, Field(ge=1, le=16)] = 1


class SystemPoolSpec(Model):
    machine_type: Annotated[str, _pattern(r"[a-z][-a-z0-9]{0,62}")] = "e2-standard-2"
    nodes: Annotated[int, Field(ge=1, le=10)] = 1


class ClusterSpec(Model):
    mode: Mode = "autopilot"
    name: GkeName | None = None
    location: Annotated[str, StringConstraints(max_length=64)] | None = None
    release_channel: Literal["RAPID", "REGULAR", "STABLE"] = "REGULAR"
    deletion_protection: bool = True
    master_authorized_networks: Annotated[list[str], Field(max_length=100)] = []
    private_nodes: bool = False
    # derived: on with privateNodes (a Cloud NAT for the cluster's subnetwork only); false when
    # a NAT you run already serves that subnetwork.
    cloud_nat: bool | None = None
    system_pool: SystemPoolSpec = SystemPoolSpec()
    kubeconfig: Annotated[str, StringConstraints(max_length=1_000_000)] | None = None
    context: Annotated[str, StringConstraints(min_length=1, max_length=253)] | None = None
    # Your own VPC (rules/exposure.py checks the formats): names or self-links.
    network: NetworkRef | None = None
    subnetwork: NetworkRef | None = None
    pod_range: GceName | None = None
    service_range: GceName | None = None
    node_service_account: Annotated[str, StringConstraints(max_length=254)] | None = None
    dataplane_v2: bool = True  # Standard: GKE Dataplane V2 (NetworkPolicy enforcement)
    # Marks the stack as production for the policy pack (policy/rules/), whatever its name;
    # the config layer holds it to the production rules (rules/cluster.py production_problems).
    production: bool = False
    # GKE's DNS-based control-plane endpoint: `external` admits user traffic from anywhere (IAM
    # decides); `disabled` keeps users off it ("off" would be a YAML 1.1 boolean).
    dns_endpoint: DnsEndpoint = "disabled"
    # Application-layer Secret encryption with this Cloud KMS key (rules/cluster.py checks it).
    secrets_encryption_key: Annotated[str, StringConstraints(max_length=512)] | None = None
    # derived: on in production; the cluster evaluates the project's Binary Authorization policy.
    binary_authorization: bool | None = None


class DevicePluginSharingSpec(Model):
    replicas: Annotated[int, Field(ge=2, le=48)]


class DevicePluginSpec(Model):
    type: DevicePluginType = "static"
    sharing: DevicePluginSharingSpec | None = None
    install_driver: bool | None = None
    # static: the nodes the plugin runs on (default: NVIDIA's GPU node labels and the
    # workloads' own nodeSelectors, rules/cluster.py).
    node_selector: Annotated[dict[str, str], Field(max_length=64)] | None = None
    fail_on_init_error: bool = True


class SharingSpec(Model):
    strategy: Literal["TIME_SHARING", "MPS"]
    max_clients_per_gpu: Annotated[int, Field(ge=2, le=48)] = 2


class ResourcesSpec(Model):
    cpu: CpuQuantity | None = None
    memory: MemoryQuantity | None = None


class WorkloadResourcesSpec(ResourcesSpec):
    ephemeral_storage: MemoryQuantity | None = None  # scratch space in the container filesystem


class ReservationSpec(Model):
    # A Compute Engine reservation name (RFC 1035: lowercase letters, digits, hyphens).
    name: Annotated[str, _pattern(r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?")]


# `any`: consume any matching reservation (ANY_RESERVATION); a mapping names one (rules/capacity).
Reservation = ReservationSpec | Literal["any"]


class FallbackSpec(Model):
    """One alternative to a workload's own GPU choice (rules/capacity_sources.py)."""

    gpu: GpuSpec | None = None  # default: the workload's own gpu
    spot: bool = False
    flex_start: bool = False
    reservation: Reservation | None = None


class NodePoolSpec(Model):
    name: GkeName | None = None
    gpu: GpuSpec
    machine_type: Annotated[str, _pattern(r"[a-z][-a-z0-9]{0,62}")] | None = None
    spot: bool = False
    min_nodes: Annotated[int, Field(ge=0, le=1000)] = 0
    max_nodes: Annotated[int, Field(ge=1, le=1000)] = 1
    min_nodes_reason: LabelValue | None = None
    zones: Annotated[list[Zone], Field(max_length=10)] = []
    image_type: ImageType = "COS_CONTAINERD"
    driver: Driver | None = None  # derived: `latest` for the default image on COS
    sharing: SharingSpec | None = None
    partition_size: Annotated[str, StringConstraints(max_length=16)] | None = None
    system_overhead: ResourcesSpec | None = None
    reservation: Reservation | None = None
    placement: Literal["compact"] | None = None
    flex_start: bool = False
    # Cold start (rules/coldstart.py): GKE image streaming; a disk image of preloaded images.
    image_streaming: bool | None = None  # derived: on with secondaryBootDisk
    secondary_boot_disk: Annotated[str, StringConstraints(max_length=1024)] | None = None


class ProbeSpec(Model):
    # derived: vLLM's /health for a vLLM server, else none (a TCP probe on the port)
    path: Annotated[str, _pattern(r"/[!-~]*"), StringConstraints(max_length=1024)] | None = None
    port: Port | None = None
    startup_seconds: Annotated[int, Field(ge=10, le=7200)] = 1800


class StorageSpec(Model):
    size: MemoryQuantity
    mount_path: AbsolutePath
    storage_class: K8sName | None = None


class CacheSpec(Model):
    size: MemoryQuantity = "30Gi"
    path: AbsolutePath = "/cache"
    storage_class: K8sName | None = None


class ModelCacheSpec(Model):
    """Model weights read from a Cloud Storage bucket (FUSE CSI driver), checked in coldstart.py."""

    bucket: Annotated[str, StringConstraints(max_length=222)]
    path: Annotated[str, StringConstraints(max_length=1024)] | None = None
    mount_path: AbsolutePath = "/models"
    file_cache_size: MemoryQuantity = "30Gi"


class AutoscaleSpec(Model):
    """An HPA on a server metric scraped by Managed Service for Prometheus (coldstart.py)."""

    min_replicas: Annotated[int, Field(ge=1, le=1000)] = 1
    max_replicas: Annotated[int, Field(ge=1, le=1000)]
    metric: Annotated[str, StringConstraints(max_length=200)] | None = None
    target: Annotated[int, Field(ge=1, le=1_000_000)] = 10


class ExposeSpec(Model):
    port: Port = 443
    source_ranges: Annotated[list[str], Field(max_length=100)] = []
    type: ExposeType = "LoadBalancer"
    # derived: on for a TLS load balancer on GKE, whose certificate names the address
    static_ip: bool | None = None
    tls: bool = True
    # More names or addresses for the certificate (existing clusters, NodePort, your own DNS).
    hosts: Annotated[
        list[Annotated[str, StringConstraints(max_length=253)]], Field(max_length=20)
    ] = []
    # The paths the gate forwards (exact, or a prefix ending in "/*"); default per server.
    paths: (
        Annotated[list[Annotated[str, StringConstraints(max_length=256)]], Field(max_length=64)]
        | None
    ) = None


class EgressSpec(Model):
    """Where a workload's pods may connect beyond the cluster's DNS (rules/egress.py)."""

    # derived: on for a vLLM server that downloads its model (Hugging Face Hub) and for a
    # modelCache (Cloud Storage), off otherwise. HTTPS (TCP 443) to public addresses only.
    internet: bool | None = None
    # More destinations, any port: a mirror, a database, your VPC (CIDR blocks).
    destination_ranges: Annotated[list[str], Field(max_length=100)] = []


class WorkloadSpec(Model):
    name: K8sName
    kind: Kind = "Deployment"
    image: Image
    gpu: GpuSpec = GpuSpec(type="nvidia-l4")
    spot: bool = False
    replicas: Annotated[int, Field(ge=0, le=1000)] = 1
    command: Annotated[list[Text], Field(max_length=256)] = []
    args: Annotated[list[Text], Field(max_length=256)] = []
    env: Annotated[dict[str, Text], Field(max_length=256)] = {}
    secret_env: Annotated[dict[str, str], Field(max_length=256)] = {}
    # derived: 8000 for a vLLM server (its default), else none: say where your server listens
    port: Port | None = None
    probe: ProbeSpec | None = ProbeSpec()
    resources: WorkloadResourcesSpec = WorkloadResourcesSpec()
    storage: StorageSpec | None = None
    cache: CacheSpec | None = None
    node_selector: Annotated[dict[str, str], Field(max_length=64)] = {}
    expose: ExposeSpec | None = None
    # derived: defaults.RUN_AS_USER (non-root); the uid and gid every container runs as
    run_as_user: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    read_only_root_filesystem: bool = True  # /tmp and HOME stay writable (emptyDir or cache)
    egress: EgressSpec = EgressSpec()
    backoff_limit: Annotated[int, Field(ge=0, le=100)] = 3
    wait_for_completion: bool = False
    rollout: Rollout = "auto"
    fallback: Annotated[list[FallbackSpec], Field(max_length=10)] = []
    model_cache: ModelCacheSpec | None = None
    autoscale: AutoscaleSpec | None = None
    api_key: bool | None = None  # derived: on for an exposed vLLM server (rules/exposure.py)

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
