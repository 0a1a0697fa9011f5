"""Turns a stack's raw config into one frozen, validated StackConfig, or lists every problem."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Literal, TypeVar, get_args

import pulumi
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from pydantic.alias_generators import to_camel

from components import catalog

NAMESPACE = "gke-gpu"

# GKE cluster and node pool names: lowercase letters, digits and hyphens, starting with a letter,
# ending with a letter or digit, at most 40 characters (`gcloud container clusters create --help`).
GKE_NAME = r"^[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?$"
# Workload names also name their Service, so they follow RFC 1035 labels (Kubernetes Service rule).
K8S_NAME = r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$"
# Label values in Kubernetes and GCE: at most 63 of [a-z0-9_-] here (GCE is the stricter one).
LABEL_VALUE = r"^[a-z0-9](?:[-_a-z0-9]{0,61}[a-z0-9])?$"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
CONFIG_KEY = r"^[A-Za-z][A-Za-z0-9_.-]*$"
CPU_QUANTITY = r"^(?:\d+(?:\.\d+)?|\d+m)$"
MEMORY_QUANTITY = r"^\d+(?:\.\d+)?(?:Ki|Mi|Gi|Ti|k|M|G|T)?$"
ZONE = r"^[a-z]+-[a-z]+\d+-[a-z]$"
REGION = r"^[a-z]+-[a-z]+\d+$"

DEFAULT_IMAGE = "vllm/vllm-openai:v0.6.4"
# A small open model (Apache-2.0, no Hugging Face token needed) that fits one L4 with room to spare.
DEFAULT_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"

Mode = Literal["standard", "autopilot", "existing"]
Driver = Literal["default", "latest", "installer"]
ImageType = Literal["COS_CONTAINERD", "UBUNTU_CONTAINERD"]
Kind = Literal["Deployment", "StatefulSet", "Job"]
DevicePluginType = Literal["static", "gpu-operator", "none"]
DEVICE_PLUGIN_TYPES: tuple[DevicePluginType, ...] = get_args(DevicePluginType)
# cluster keys that configure a GKE cluster: on an existing cluster they would do nothing.
GKE_ONLY_CLUSTER_KEYS = (
    "name",
    "location",
    "releaseChannel",
    "deletionProtection",
    "masterAuthorizedNetworks",
    "privateNodes",
    "systemPool",
)
KUBECONFIG_FIX = 'pulumi config set --secret {ns}:{key} "$(cat ~/.kube/config)"'

GkeName = Annotated[str, StringConstraints(pattern=GKE_NAME)]
K8sName = Annotated[str, StringConstraints(pattern=K8S_NAME)]
CpuQuantity = Annotated[str, StringConstraints(pattern=CPU_QUANTITY)]
MemoryQuantity = Annotated[str, StringConstraints(pattern=MEMORY_QUANTITY)]
Zone = Annotated[str, StringConstraints(pattern=ZONE)]
EnvName = Annotated[str, StringConstraints(pattern=ENV_NAME)]
ConfigKey = Annotated[str, StringConstraints(pattern=CONFIG_KEY)]
LabelValue = Annotated[str, StringConstraints(pattern=LABEL_VALUE)]
Port = Annotated[int, Field(ge=1, le=65535)]


class ConfigError(pulumi.RunError):
    """Every problem found in a stack's config; Pulumi prints it without a Python traceback."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        listing = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"{len(problems)} problem(s) in the gke-gpu config; nothing was created:\n{listing}"
        )


# --- the raw shape (pydantic checks types, enums, patterns and unknown keys) ---------------------


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class GpuSpec(_Model):
    type: str | None = None
    count: Annotated[int, Field(ge=1)] = 1


class SystemPoolSpec(_Model):
    machine_type: str = "e2-standard-2"
    nodes: Annotated[int, Field(ge=1, le=10)] = 1


class ClusterSpec(_Model):
    mode: Mode = "autopilot"
    name: GkeName | None = None
    location: str | None = None
    release_channel: Literal["RAPID", "REGULAR", "STABLE"] = "REGULAR"
    deletion_protection: bool = True
    master_authorized_networks: tuple[str, ...] = ()
    private_nodes: bool = False
    system_pool: SystemPoolSpec = SystemPoolSpec()
    kubeconfig: str | None = None
    context: str | None = None


class DevicePluginSharingSpec(_Model):
    replicas: Annotated[int, Field(ge=2)]


class DevicePluginSpec(_Model):
    type: DevicePluginType = "static"
    sharing: DevicePluginSharingSpec | None = None
    install_driver: bool | None = None


class SharingSpec(_Model):
    strategy: Literal["TIME_SHARING", "MPS"]
    max_clients_per_gpu: Annotated[int, Field(ge=2, le=48)] = 2


class NodePoolSpec(_Model):
    name: GkeName
    gpu: GpuSpec
    machine_type: str | None = None
    spot: bool = False
    min_nodes: Annotated[int, Field(ge=0, le=1000)] = 0
    max_nodes: Annotated[int, Field(ge=1, le=1000)] = 1
    min_nodes_reason: LabelValue | None = None
    zones: tuple[Zone, ...] = ()
    image_type: ImageType = "COS_CONTAINERD"
    driver: Driver = "default"
    sharing: SharingSpec | None = None
    partition_size: str | None = None


class ProbeSpec(_Model):
    path: str = "/"
    port: Port | None = None
    startup_seconds: Annotated[int, Field(ge=10, le=7200)] = 1800


class ResourcesSpec(_Model):
    cpu: CpuQuantity = "4"
    memory: MemoryQuantity = "16Gi"


class StorageSpec(_Model):
    size: MemoryQuantity
    mount_path: Annotated[str, StringConstraints(pattern=r"^/")]
    storage_class: K8sName | None = None


class ExposeSpec(_Model):
    port: Port = 80
    source_ranges: tuple[str, ...] = ()
    type: Literal["LoadBalancer", "NodePort"] = "LoadBalancer"


class WorkloadSpec(_Model):
    name: K8sName
    kind: Kind = "Deployment"
    image: Annotated[str, StringConstraints(min_length=1)]
    gpu: GpuSpec = GpuSpec(type="nvidia-l4")
    spot: bool = False
    replicas: Annotated[int, Field(ge=0, le=1000)] = 1
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: dict[EnvName, str] = Field(default_factory=dict)
    secret_env: dict[EnvName, ConfigKey] = Field(default_factory=dict)
    port: Port | None = 8000
    probe: ProbeSpec | None = ProbeSpec()
    resources: ResourcesSpec = ResourcesSpec()
    storage: StorageSpec | None = None
    node_selector: dict[str, str] = Field(default_factory=dict)
    expose: ExposeSpec | None = None
    run_as_user: Annotated[int, Field(ge=1)] | None = None
    backoff_limit: Annotated[int, Field(ge=0, le=100)] = 3
    wait_for_completion: bool = False


def default_workloads(mode: Mode | None = "autopilot") -> list[dict[str, Any]]:
    """The workload a stack gets when it names none: an OpenAI-compatible vLLM server on 1 GPU.

    On GKE it asks for one L4 on Spot; an existing cluster has neither GKE accelerator labels
    nor Spot nodes, so there it asks for one GPU of whatever kind the cluster has.
    """
    gke = mode != "existing"
    workload: dict[str, Any] = {
        "name": "llm",
        "kind": "Deployment",
        "image": DEFAULT_IMAGE,
        "gpu": {"type": "nvidia-l4", "count": 1} if gke else {"count": 1},
        "args": ["--model", DEFAULT_MODEL, "--max-model-len", "4096"],
        "port": 8000,
        "probe": {"path": "/health"},
        "expose": {"port": 80},
    }
    if gke:
        workload["spot"] = True
    return [workload]


# --- the resolved shape (what components receive) ----------------------------------------------


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


@dataclass(frozen=True)
class ExistingClusterConfig:
    """A cluster this stack does not manage: only a provider for it is built."""

    kubeconfig: str | None
    """Name of the secret config key (namespace gke-gpu) holding the cluster's kubeconfig."""
    context: str | None
    """A context of the ambient kubeconfig (KUBECONFIG or ~/.kube/config)."""
    device_plugin: DevicePluginConfig
    mode: Literal["existing"] = "existing"

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

    @property
    def shared(self) -> bool:
        """A pool whose GPUs serve several containers (time-sharing, MPS or MIG)."""
        return self.sharing is not None or self.partition_size is not None


@dataclass(frozen=True)
class Probe:
    path: str
    port: int
    startup_seconds: int


@dataclass(frozen=True)
class Storage:
    size: str
    mount_path: str
    storage_class: str | None


@dataclass(frozen=True)
class Expose:
    port: int
    source_ranges: tuple[str, ...]
    type: Literal["LoadBalancer", "NodePort"]


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
    port: int | None
    probe: Probe | None
    cpu: str
    memory: str
    storage: Storage | None
    node_selector: tuple[tuple[str, str], ...]
    expose: Expose | None
    run_as_user: int | None
    backoff_limit: int
    node_pool: NodePoolConfig | None
    """Standard mode: the node pool this workload is pinned to (the smallest one that fits)."""
    wait_for_completion: bool = False
    """Job only: `pulumi up` waits for the Job to complete (otherwise it returns at creation)."""


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

    @property
    def exposed(self) -> tuple[WorkloadConfig, ...]:
        return tuple(w for w in self.workloads if w.expose is not None)


# --- loading --------------------------------------------------------------------------------

M = TypeVar("M", bound=_Model)


def _path(base: str, loc: tuple[int | str, ...]) -> str:
    out = base
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{to_camel(part) if '_' in part else part}" if out else str(part)
    return out


def _parse(model: type[M], raw: Any, base: str, problems: list[str]) -> M | None:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if p not in ("function-after",))
            path = _path(base, loc)
            value = err.get("input")
            if err["type"] == "extra_forbidden":
                allowed = ", ".join(sorted(f.alias or n for n, f in model.model_fields.items()))
                problems.append(
                    f"{path}: unknown key. Keys allowed in {base}: {allowed}. "
                    "Check the spelling (keys are camelCase)."
                    if len(loc) == 1
                    else f"{path}: unknown key. Check the spelling (keys are camelCase) "
                    "against the config reference in README.md."
                )
            elif err["type"] == "missing":
                problems.append(f"{path}: required but not set. Add it to the stack file.")
            elif err["type"] == "string_pattern_mismatch":
                pattern = str((err.get("ctx") or {}).get("pattern", ""))
                problems.append(f"{path}: {value!r} {_pattern_hint(pattern)}")
            else:
                problems.append(f"{path}: {value!r} is not valid: {err['msg']}.")
    return None


_PATTERN_HINTS: dict[str, str] = {
    GKE_NAME: "is not a valid GKE name: use 1-40 lowercase letters, digits and hyphens, "
    "starting with a letter and ending with a letter or digit (e.g. 'gpu-l4').",
    K8S_NAME: "is not a valid Kubernetes name: use 1-63 lowercase letters, digits and hyphens, "
    "starting with a letter and ending with a letter or digit (e.g. 'llm').",
    LABEL_VALUE: "is not a valid label value: use 1-63 lowercase letters, digits, '-' and '_' "
    "(e.g. 'latency-slo').",
    ENV_NAME: "is not a valid environment variable name: use letters, digits and '_', "
    "not starting with a digit (e.g. 'HF_TOKEN').",
    CONFIG_KEY: "is not a valid config key: name the key you set with "
    "`pulumi config set --secret gke-gpu:<key> ...` (letters, digits, '_', '-', '.').",
    CPU_QUANTITY: "is not a CPU quantity: use cores ('4', '0.5') or millicores ('500m').",
    MEMORY_QUANTITY: "is not a memory quantity: use a number with a binary suffix "
    "('16Gi', '512Mi').",
    ZONE: "is not a zone name: use the form 'us-central1-a'.",
    r"^/": "is not an absolute path: start it with '/' (e.g. '/data').",
}


def _pattern_hint(pattern: str) -> str:
    return _PATTERN_HINTS.get(pattern, f"does not match the pattern {pattern}.")


def _cidr_problems(path: str, values: tuple[str, ...]) -> list[str]:
    problems = []
    for i, value in enumerate(values):
        try:
            ipaddress.ip_network(value, strict=True)
        except ValueError as exc:
            problems.append(
                f"{path}[{i}]: {value!r} is not a CIDR block ({exc}). "
                "Use a network address with a prefix length, e.g. '203.0.113.0/24'."
            )
    return problems


GIB = Decimal(2**30)  # Compute Engine's "GB" of machine memory are GiB
_SUFFIX = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}


def quantity_bytes(quantity: str) -> Decimal:
    """Bytes in a memory quantity already matched by MEMORY_QUANTITY ('16Gi' -> 17179869184)."""
    number = re.match(r"^\d+(?:\.\d+)?", quantity)
    assert number is not None
    return Decimal(number.group()) * _SUFFIX[quantity[number.end() :]]


def quantity_cores(quantity: str) -> Decimal:
    """Cores in a CPU quantity already matched by CPU_QUANTITY ('500m' -> 0.5)."""
    return Decimal(quantity[:-1]) / 1000 if quantity.endswith("m") else Decimal(quantity)


def _gpu_type_problems(path: str, gpu_type: str | None) -> list[str]:
    if gpu_type is None:
        return []
    if gpu_type in catalog.RETIRED:
        return [f"{path}: {gpu_type!r} is no longer offered: {catalog.RETIRED[gpu_type]}."]
    if gpu_type not in catalog.GPU_TYPES:
        known = ", ".join(sorted(catalog.GPU_TYPES))
        return [f"{path}: {gpu_type!r} is not a GKE GPU type. Use one of: {known}."]
    return []


def _choices(values: tuple[int, ...] | tuple[str, ...]) -> str:
    return ", ".join(str(v) for v in values)


def _pool_problems(
    i: int, spec: NodePoolSpec, location: str, region: str
) -> tuple[list[str], tuple[catalog.MachineType, ...]]:
    """Problems of one node pool, and the machine types it may get (smallest first).

    An explicit machineType gives one candidate; none gives every type that carries the GPUs,
    and the loader later picks the smallest that also fits the pool's workloads.
    """
    path = f"nodePools[{i}]"
    problems = _gpu_type_problems(f"{path}.gpu.type", spec.gpu.type)
    if spec.gpu.type is None:
        problems.append(
            f"{path}.gpu.type: required for a GPU node pool. Set it to a GKE GPU type "
            "such as 'nvidia-l4'."
        )
    candidates: tuple[catalog.MachineType, ...] = ()
    if not problems and spec.gpu.type is not None:
        gpu = catalog.lookup(spec.gpu.type)
        if spec.gpu.count not in gpu.node_counts:
            nearest = [c for c in gpu.node_counts if c > spec.gpu.count][:1] or gpu.node_counts[-1:]
            problems.append(
                f"{path}.gpu.count: {spec.gpu.count} GPUs is not a valid count for {gpu.name} "
                f"(allowed: {_choices(gpu.node_counts)}). Set count to {nearest[0]}."
            )
        else:
            machine_type = spec.machine_type
            fitting = catalog.machine_types_for(gpu.name, spec.gpu.count)
            candidates = tuple(m for m in fitting if machine_type in (None, m.name))
            if machine_type is not None and not candidates:
                family = machine_type.split("-")[0]
                why = (
                    f"{machine_type!r} is {family.upper()}, but {gpu.name} runs on "
                    f"{gpu.family.upper()} machine types"
                    if family != gpu.family
                    else f"{machine_type!r} cannot carry {spec.gpu.count} x {gpu.name}"
                )
                problems.append(
                    f"{path}.machineType: {why}. Machine types for "
                    f"{spec.gpu.count} x {gpu.name}: {_choices(tuple(m.name for m in fitting))} "
                    "(or leave machineType unset for the smallest)."
                )
        if spec.sharing is not None:
            supported = gpu.time_sharing if spec.sharing.strategy == "TIME_SHARING" else gpu.mps
            if not supported:
                problems.append(
                    f"{path}.sharing.strategy: {spec.sharing.strategy} is not supported on "
                    f"{gpu.name} by GKE. Remove sharing or pick a GPU type that supports it."
                )
            if spec.partition_size is not None and spec.sharing.strategy == "MPS":
                problems.append(
                    f"{path}.sharing: MPS cannot be combined with MIG partitions on GKE. "
                    "Use TIME_SHARING with partitionSize, or drop partitionSize."
                )
        if spec.partition_size is not None and spec.partition_size not in gpu.mig_partitions:
            allowed = _choices(gpu.mig_partitions) if gpu.mig_partitions else "none (no MIG)"
            problems.append(
                f"{path}.partitionSize: {spec.partition_size!r} is not a MIG partition of "
                f"{gpu.name} (allowed: {allowed}). "
                + (
                    "Pick one of those sizes."
                    if gpu.mig_partitions
                    else "Remove partitionSize or use an A100/H100 pool."
                )
            )
    if spec.min_nodes > spec.max_nodes:
        problems.append(
            f"{path}.minNodes: {spec.min_nodes} is more than maxNodes ({spec.max_nodes}). "
            f"Set minNodes <= maxNodes."
        )
    if spec.driver == "latest" and spec.image_type != "COS_CONTAINERD":
        problems.append(
            f"{path}.driver: 'latest' needs imageType COS_CONTAINERD (GKE installs LATEST "
            f"drivers only on Container-Optimized OS), got {spec.image_type}. Use driver "
            "'default', or 'installer' for Ubuntu."
        )
    for j, zone in enumerate(spec.zones):
        if not zone.startswith(region + "-"):
            problems.append(
                f"{path}.zones[{j}]: {zone!r} is not in the cluster's region {region!r}. "
                f"Use zones of {region} (e.g. '{region}-a')."
            )
        elif location != region and zone != location:
            problems.append(
                f"{path}.zones[{j}]: {zone!r} differs from the zonal cluster's location "
                f"{location!r}. A zonal cluster's pools live in its zone: remove zones or make "
                "the cluster regional."
            )
    if len(set(spec.zones)) != len(spec.zones):
        problems.append(f"{path}.zones: {list(spec.zones)} lists a zone twice. List each once.")
    return problems, candidates


def _fits(w: WorkloadSpec, pool: NodePoolConfig) -> bool:
    if w.gpu.type != pool.gpu_type or w.spot != pool.spot:
        return False
    return w.gpu.count == 1 if pool.shared else w.gpu.count <= pool.gpu_count


def _workload_problems(
    i: int,
    w: WorkloadSpec,
    mode: Mode | None,
    pools: list[NodePoolConfig],
    secret_keys: frozenset[str],
    broken_pool_gpus: frozenset[str] = frozenset(),
) -> tuple[list[str], NodePoolConfig | None]:
    path = f"workloads[{i}]"
    # On an existing cluster gpu.type is rejected outright (_existing_workload_problems).
    problems = [] if mode == "existing" else _gpu_type_problems(f"{path}.gpu.type", w.gpu.type)
    if w.gpu.type is None and mode != "existing":
        problems.append(
            f"{path}.gpu.type: required on GKE (it picks the node's accelerator). "
            "Set it, e.g. 'nvidia-l4'."
        )
    if w.storage is not None and w.kind != "StatefulSet":
        problems.append(
            f"{path}.storage: only a StatefulSet gets a volume claim, and kind is {w.kind}. "
            "Set kind: StatefulSet or remove storage."
        )
    if w.wait_for_completion and w.kind != "Job":
        problems.append(
            f"{path}.waitForCompletion: only a Job completes; a {w.kind} runs until replaced "
            "(`pulumi up` already waits for it to be ready). Remove waitForCompletion."
        )
    if w.expose is not None:
        if w.kind == "Job":
            problems.append(
                f"{path}.expose: a Job runs to completion and cannot serve traffic. "
                "Use kind Deployment or StatefulSet, or remove expose."
            )
        if w.port is None:
            problems.append(f"{path}.expose: the workload has no port to expose. Set port.")
        problems += _cidr_problems(f"{path}.expose.sourceRanges", w.expose.source_ranges)
        if w.expose.type == "NodePort" and mode != "existing":
            problems.append(
                f"{path}.expose.type: NodePort is for existing clusters without a load "
                "balancer; GKE provides LoadBalancers. Remove type."
            )
        elif w.expose.type == "NodePort" and w.expose.source_ranges:
            problems.append(
                f"{path}.expose.sourceRanges: only a LoadBalancer enforces source ranges; a "
                "NodePort is open to everything that reaches the nodes. Remove sourceRanges "
                "(restrict access with a firewall in front of the nodes), or use type "
                "LoadBalancer if the cluster has a load balancer implementation."
            )
    probe_set = "probe" in w.model_fields_set
    if probe_set and w.probe is not None and w.port is None and w.probe.port is None:
        problems.append(
            f"{path}.probe: an HTTP probe needs a port. Set port (or probe.port), or "
            "set probe: null."
        )
    if w.kind == "Job" and w.probe is not None and probe_set:
        problems.append(
            f"{path}.probe: a Job gets no readiness probe (nothing routes traffic to it). "
            "Remove probe."
        )
    for env_name, key in w.secret_env.items():
        if key not in secret_keys:
            problems.append(
                f"{path}.secretEnv.{env_name}: config key {key!r} is not set as a secret "
                "(a value stored in plain text would leak into the stack file and state). "
                f"Run `pulumi config set --secret {NAMESPACE}:{key} <value>`."
            )
    if problems or w.gpu.type is None or mode == "existing":
        return problems, None
    gpu = catalog.lookup(w.gpu.type)
    if mode == "autopilot":
        if not gpu.autopilot_counts:
            offered = tuple(g.name for g in catalog.GPU_TYPES.values() if g.autopilot_counts)
            problems.append(
                f"{path}.gpu.type: {gpu.name} is not in the catalog's Autopilot table "
                f"(components/catalog.py). Use one of {_choices(offered)}, or cluster.mode: "
                "standard with a node pool."
            )
        elif w.gpu.count not in gpu.autopilot_counts:
            problems.append(
                f"{path}.gpu.count: {w.gpu.count} GPUs per pod is not allowed for {gpu.name} on "
                f"Autopilot (allowed: {_choices(gpu.autopilot_counts)}). Set one of those."
            )
        return problems, None
    if mode != "standard":
        return problems, None
    fitting = [p for p in pools if _fits(w, p)]
    if not fitting and w.gpu.type in broken_pool_gpus:
        return problems, None  # the broken pool's own problem says what to fix
    if not fitting:
        want = f"{w.gpu.count} x {w.gpu.type}{' on Spot' if w.spot else ''}"
        have = "; ".join(
            f"{p.name}: {p.gpu_count} x {p.gpu_type}{' Spot' if p.spot else ''}"
            + (" shared (1 GPU per container)" if p.shared else "")
            for p in pools
        )
        problems.append(
            f"{path}.gpu: no node pool fits {want} (pools: {have or 'none'}). Add a node pool "
            "with that GPU type, at least that many GPUs per node and the same spot setting, "
            "or change the workload."
        )
        return problems, None
    # The smallest fitting pool, so a 1-GPU pod never takes a node of a 4-GPU pool.
    pool = min(fitting, key=lambda p: (p.gpu_count, p.name))
    return problems, pool


def _existing_workload_problems(
    i: int, w: WorkloadSpec, plugin: DevicePluginConfig | None
) -> list[str]:
    """Workload settings that mean something only on GKE, and the time-slicing rule."""
    path = f"workloads[{i}]"
    problems: list[str] = []
    if "gpu" in w.model_fields_set and w.gpu.type is not None:
        problems.append(
            f"{path}.gpu.type: {w.gpu.type!r} names a GKE accelerator, but an existing "
            "cluster's nodes carry no GKE labels, so it would select nothing. Remove gpu.type "
            f'and select the GPU nodes with {path}.nodeSelector (e.g. {{gpu: "true"}}).'
        )
    if w.spot:
        problems.append(
            f"{path}.spot: Spot is GKE capacity; an existing cluster has no such nodes to "
            f"select. Remove spot, or select the nodes you mean with {path}.nodeSelector."
        )
    if plugin is not None and plugin.sharing_replicas is not None and w.gpu.count > 1:
        problems.append(
            f"{path}.gpu.count: {w.gpu.count} GPUs, but devicePlugin.sharing time-slices the "
            "GPUs and the plugin fails any container that asks for more than 1 shared GPU "
            "(failRequestsGreaterThanOne). Set gpu.count to 1, or remove devicePlugin.sharing."
        )
    return problems


def _device_plugin_problems(raw: Any, mode: Mode | None) -> tuple[list[str], DevicePluginConfig]:
    """The devicePlugin key: a mode name, or {type, sharing: {replicas}, installDriver}."""
    default = DevicePluginConfig(type="static", sharing_replicas=None, install_driver=True)
    key = f"{NAMESPACE}:devicePlugin"
    if raw is None:
        return [], default
    if mode is not None and mode != "existing":
        return [
            f"devicePlugin: only for cluster.mode 'existing'; GKE runs its own NVIDIA device "
            f"plugin on GPU nodes (share GPUs there with nodePools[].sharing). Remove {key}."
        ], default
    allowed = ", ".join(DEVICE_PLUGIN_TYPES)
    if isinstance(raw, str):
        if raw not in DEVICE_PLUGIN_TYPES:
            return [
                f"devicePlugin: {raw!r} is not a device plugin mode (allowed: {allowed}). "
                "Use static (NVIDIA's device plugin DaemonSet), gpu-operator (the NVIDIA GPU "
                "Operator) or none (the cluster already advertises nvidia.com/gpu)."
            ], default
        raw = {"type": raw}
    problems: list[str] = []
    spec = _parse(DevicePluginSpec, raw, "devicePlugin", problems)
    if spec is None:
        return problems, default
    if spec.type == "none" and spec.sharing is not None:
        problems.append(
            "devicePlugin.sharing: type 'none' deploys nothing, so nothing would time-slice "
            "the GPUs. Configure sharing in the cluster's own device plugin and remove it here, "
            "or use type static or gpu-operator."
        )
    if spec.type != "gpu-operator" and spec.install_driver is not None:
        problems.append(
            f"devicePlugin.installDriver: only the GPU Operator installs drivers, and type is "
            f"{spec.type!r}. Install the driver on the nodes yourself and remove installDriver, "
            "or use type gpu-operator."
        )
    return problems, DevicePluginConfig(
        type=spec.type,
        sharing_replicas=spec.sharing.replicas if spec.sharing else None,
        # The chart's own default (driver.enabled: true): the operator brings the driver.
        install_driver=True if spec.install_driver is None else spec.install_driver,
    )


def _existing_cluster_problems(
    cluster: ClusterSpec, raw: Mapping[str, Any], secret_keys: frozenset[str]
) -> list[str]:
    """cluster.* in existing mode: no GKE settings, and exactly one way to reach the cluster."""
    set_keys = {to_camel(name) for name in cluster.model_fields_set}
    problems = [
        f"cluster.{key}: configures a GKE cluster, but mode 'existing' deploys into a cluster "
        "this stack does not manage, so it would do nothing. Remove it."
        for key in GKE_ONLY_CLUSTER_KEYS
        if key in set_keys
    ]
    named = cluster.kubeconfig is not None and re.match(CONFIG_KEY, cluster.kubeconfig)
    fix = KUBECONFIG_FIX.format(ns=NAMESPACE, key=cluster.kubeconfig if named else "kubeconfig")
    if cluster.kubeconfig is not None and cluster.context is not None:
        problems.append(
            "cluster.kubeconfig/context: set one, not both. kubeconfig names a secret config "
            "key holding the cluster's kubeconfig; context picks a context of the kubeconfig "
            "on the machine that runs Pulumi."
        )
    elif cluster.kubeconfig is None and cluster.context is None:
        problems.append(
            "cluster: mode 'existing' needs to know which cluster to deploy to. Store its "
            f"kubeconfig as a secret (`{fix}`) and set cluster.kubeconfig: kubeconfig, or set "
            "cluster.context to a context of your kubeconfig (`kubectl config get-contexts`). "
            "The current context is never used implicitly: `kubectl config use-context` "
            "changes it, and the next `pulumi up` would deploy to another cluster."
        )
    if cluster.kubeconfig is not None:
        if not re.match(CONFIG_KEY, cluster.kubeconfig):
            # The value is never shown: it may be the kubeconfig itself, credentials included.
            problems.append(
                "cluster.kubeconfig: expects the name of a secret config key (e.g. "
                "'kubeconfig'), not the kubeconfig itself (the value is not shown here, as it "
                f"may hold credentials). Run `{fix}`, set "
                "cluster.kubeconfig: kubeconfig, and remove the plain-text value from the "
                "stack file."
            )
        elif cluster.kubeconfig not in secret_keys:
            where = "is stored in plain text" if cluster.kubeconfig in raw else "is not set"
            problems.append(
                f"cluster.kubeconfig: config key {cluster.kubeconfig!r} {where}; it must be a "
                "secret (a kubeconfig grants access to the cluster, and a plain value would "
                f"sit in the stack file and the state). Run `{fix}`."
            )
    if cluster.context is not None and not cluster.context.strip():
        problems.append(
            "cluster.context: empty. Set it to a context name from `kubectl config "
            "get-contexts`, or use cluster.kubeconfig."
        )
    return problems


def _machine_type_problems(
    pool: NodePoolConfig,
    index: int,
    machines: tuple[catalog.MachineType, ...],
    workloads: list[tuple[int, WorkloadSpec]],
    problems: list[str],
) -> str:
    """The pool's machine type: the smallest candidate whose vCPUs and memory hold every
    workload placed on it (requests compared with capacity; the kubelet reserves a little)."""
    cores = max((quantity_cores(w.resources.cpu) for _, w in workloads), default=Decimal(0))
    memory = max((quantity_bytes(w.resources.memory) for _, w in workloads), default=Decimal(0))
    for machine in machines:
        if machine.vcpus >= cores and Decimal(machine.memory_gb) * GIB >= memory:
            return machine.name
    largest = machines[-1]
    for i, w in workloads:
        for key, wanted, have, unit in (
            ("cpu", quantity_cores(w.resources.cpu), Decimal(largest.vcpus), "vCPUs"),
            ("memory", quantity_bytes(w.resources.memory), Decimal(largest.memory_gb) * GIB, "GiB"),
        ):
            if wanted > have:
                shown = largest.vcpus if key == "cpu" else largest.memory_gb
                problems.append(
                    f"workloads[{i}].resources.{key}: {getattr(w.resources, key)} is more than the "
                    f"{shown} {unit} of {largest.name}, the largest machine type node pool "
                    f"{pool.name!r} (nodePools[{index}]) can have for {pool.gpu_count} x "
                    f"{pool.gpu_type}. Lower the request, or give the pool more GPUs per node."
                    if len(machines) > 1
                    else f"workloads[{i}].resources.{key}: {getattr(w.resources, key)} is more "
                    f"than the {shown} {unit} of {largest.name} in node pool {pool.name!r} "
                    f"(nodePools[{index}].machineType). Lower the request or pick a larger "
                    "machine type (or unset machineType to get the smallest that fits)."
                )
    return largest.name


def load(
    raw: Mapping[str, Any],
    *,
    project: str | None,
    region: str | None,
    stack: str,
    secret_keys: frozenset[str] = frozenset(),
) -> StackConfig:
    """Validate raw `gke-gpu:*` config (keys without the namespace) into a StackConfig.

    Raises ConfigError listing every problem; nothing else in the program runs first.
    """
    problems: list[str] = []
    raw_cluster = raw.get("cluster") or {}
    if isinstance(raw_cluster, dict) and not isinstance(raw_cluster.get("kubeconfig"), str | None):
        # A kubeconfig pasted in as YAML: never let a type error echo it (credentials).
        raw_cluster = {**raw_cluster, "kubeconfig": "(not shown)"}
    # When `cluster` itself is invalid, the mode still drives the other checks if it is readable.
    mode: Mode | None = (
        _valid_mode(raw_cluster.get("mode", "autopilot")) if isinstance(raw_cluster, dict) else None
    )
    existing = mode == "existing"
    if not existing:  # an existing cluster needs no Google Cloud project or region
        if not project:
            problems.append(
                "gcp:project: not set. Run `pulumi config set gcp:project <your-project-id>`."
            )
        if not region:
            problems.append("gcp:region: not set. Run `pulumi config set gcp:region us-central1`.")
        elif not re.match(REGION, region):
            problems.append(f"gcp:region: {region!r} is not a region name (e.g. 'us-central1').")
    region = region or ""
    known = {"cluster", "nodePools", "workloads", "namespace", "devicePlugin"}
    kubeconfig_key = raw_cluster.get("kubeconfig") if isinstance(raw_cluster, dict) else None
    for key in raw:
        if key not in known and key != kubeconfig_key:  # that one gets its own message
            problems.append(
                f"{NAMESPACE}:{key}: unknown key. Known keys: {', '.join(sorted(known))} "
                "(a secret read by workloads[].secretEnv must be set with --secret)."
            )

    cluster = _parse(ClusterSpec, raw_cluster, "cluster", problems)
    pool_specs = _parse_list(NodePoolSpec, raw.get("nodePools"), "nodePools", problems)
    workload_raw = raw.get("workloads")
    workload_specs = _parse_list(
        WorkloadSpec,
        default_workloads(mode) if workload_raw is None else workload_raw,
        "workloads",
        problems,
    )
    namespace = raw.get("namespace", "gke-gpu")
    if not isinstance(namespace, str) or not re.match(K8S_NAME, namespace):
        problems.append(f"{NAMESPACE}:namespace: {namespace!r} {_PATTERN_HINTS[K8S_NAME]}")
    plugin_problems, device_plugin = _device_plugin_problems(raw.get("devicePlugin"), mode)
    problems += plugin_problems

    location = (cluster.location if cluster else None) or region
    if cluster is not None and existing:
        problems += _existing_cluster_problems(cluster, raw, secret_keys)
    if cluster is not None and not existing:
        if cluster.location is not None and not (
            cluster.location == region
            or (re.match(ZONE, cluster.location) and cluster.location.startswith(region + "-"))
        ):
            problems.append(
                f"cluster.location: {cluster.location!r} is neither the region {region!r} nor "
                f"one of its zones. Use {region!r} (regional) or e.g. '{region}-a' (zonal)."
            )
        if (
            mode == "autopilot"
            and cluster.location is not None
            and cluster.location.startswith(region + "-")
        ):
            problems.append(
                f"cluster.location: Autopilot clusters are regional; {cluster.location!r} is a "
                f"zone. Remove location or set it to {region!r}."
            )
        problems += _cidr_problems(
            "cluster.masterAuthorizedNetworks", cluster.master_authorized_networks
        )
        if mode != "existing" and (cluster.kubeconfig is not None or cluster.context is not None):
            problems.append(
                "cluster.kubeconfig/context: only for mode 'existing'; GKE modes build their "
                "own kubeconfig. Remove them."
            )
        if mode == "autopilot" and "system_pool" in cluster.model_fields_set:
            problems.append(
                "cluster.systemPool: Autopilot manages its own nodes. Remove systemPool or use "
                "mode 'standard'."
            )
    if mode in ("autopilot", "existing") and pool_specs:
        problems.append(
            f"nodePools: node pools exist only in Standard clusters, and cluster.mode is "
            f"{mode!r}. "
            + (
                "Autopilot provisions GPU nodes from the workloads' gpu settings: remove "
                "nodePools, or set cluster.mode: standard."
                if mode == "autopilot"
                else "An existing cluster brings its own GPU nodes: remove nodePools and "
                "select those nodes with workloads[].nodeSelector."
            )
        )

    pools: list[NodePoolConfig] = []
    candidates: dict[str, tuple[int, tuple[catalog.MachineType, ...]]] = {}
    broken_pool_gpus: set[str] = set()
    names: set[str] = set()
    for i, spec in enumerate(pool_specs):
        if spec is None:
            continue
        problems += _name_taken(f"nodePools[{i}]", spec.name, names)
        pool_problems, machines = _pool_problems(i, spec, location, region)
        problems += pool_problems
        if pool_problems and spec.gpu.type is not None:
            broken_pool_gpus.add(spec.gpu.type)
        if not pool_problems and machines and spec.gpu.type is not None:
            pools.append(_resolve_pool(spec, machine_type=""))  # chosen below
            candidates[spec.name] = (i, machines)
    for spec, item in zip(pool_specs, raw.get("nodePools") or [], strict=False):
        gpu = item.get("gpu") if spec is None and isinstance(item, dict) else None
        if isinstance(gpu, dict) and isinstance(gpu.get("type"), str):
            broken_pool_gpus.add(gpu["type"])  # its workloads' "no pool fits" would be noise
    if mode == "standard" and not pool_specs and not problems:
        broken_pool_gpus.update(w.gpu.type for w in workload_specs if w and w.gpu.type)
        problems.append(
            "nodePools: a Standard cluster needs at least one GPU node pool for its workloads. "
            "Add one, e.g. {name: l4, gpu: {type: nvidia-l4, count: 1}}."
        )

    placed: list[tuple[int, WorkloadSpec, NodePoolConfig | None]] = []
    workload_names: set[str] = set()
    for i, w in enumerate(workload_specs):
        if w is None:
            continue
        problems += _name_taken(f"workloads[{i}]", w.name, workload_names)
        w_problems, pool = _workload_problems(
            i, w, mode, pools, secret_keys, frozenset(broken_pool_gpus)
        )
        problems += w_problems
        if existing:
            problems += _existing_workload_problems(i, w, device_plugin)
        placed.append((i, w, pool))

    machine_types = {
        pool.name: _machine_type_problems(
            pool, *candidates[pool.name], [(i, w) for i, w, p in placed if p is pool], problems
        )
        for pool in pools
    }
    final = {p.name: dataclasses.replace(p, machine_type=machine_types[p.name]) for p in pools}
    pools = list(final.values())
    workloads = [_resolve_workload(w, final[p.name] if p else None, existing) for _, w, p in placed]

    if problems:
        raise ConfigError(problems)
    assert cluster is not None and mode is not None and (project or existing)
    return StackConfig(
        project=project or "",
        region=region,
        stack=stack,
        namespace=namespace,
        cluster=ExistingClusterConfig(
            kubeconfig=cluster.kubeconfig,
            context=cluster.context,
            device_plugin=device_plugin,
        )
        if existing
        else ClusterConfig(
            mode=mode,
            name=cluster.name or f"gke-gpu-{stack}"[:40].rstrip("-"),
            location=location,
            release_channel=cluster.release_channel,
            deletion_protection=cluster.deletion_protection,
            master_authorized_networks=cluster.master_authorized_networks,
            private_nodes=cluster.private_nodes,
            system_machine_type=cluster.system_pool.machine_type,
            system_nodes=cluster.system_pool.nodes,
        ),
        node_pools=tuple(pools),
        workloads=tuple(workloads),
        secrets=tuple(sorted({key for w in workloads for _, key in w.secret_env})),
    )


def _name_taken(path: str, name: str, seen: set[str]) -> list[str]:
    """Records `name`; a problem when an earlier item of the list already has it."""
    taken = name in seen
    seen.add(name)
    return [f"{path}.name: {name!r} is used twice. Rename one."] if taken else []


def _valid_mode(value: Any) -> Mode | None:
    return value if value in ("standard", "autopilot", "existing") else None


def _parse_list(model: type[M], raw: Any, base: str, problems: list[str]) -> list[M | None]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        problems.append(f"{base}: expected a list, got {type(raw).__name__}. Use a YAML list.")
        return []
    parsed: list[M | None] = []
    for i, item in enumerate(raw):
        result = _parse(model, item, f"{base}[{i}]", problems)
        if result is None and isinstance(item, dict) and isinstance(item.get("gpu"), dict):
            # The item is skipped from here on; still say what is wrong with its GPU type.
            gpu_type = item["gpu"].get("type")
            if isinstance(gpu_type, str):
                problems += _gpu_type_problems(f"{base}[{i}].gpu.type", gpu_type)
        parsed.append(result)
    return parsed


def _resolve_pool(spec: NodePoolSpec, machine_type: str) -> NodePoolConfig:
    assert spec.gpu.type is not None
    return NodePoolConfig(
        name=spec.name,
        gpu_type=spec.gpu.type,
        gpu_count=spec.gpu.count,
        machine_type=machine_type,
        spot=spec.spot,
        min_nodes=spec.min_nodes,
        max_nodes=spec.max_nodes,
        min_nodes_reason=spec.min_nodes_reason,
        zones=spec.zones,
        image_type=spec.image_type,
        driver=spec.driver,
        sharing=(
            Sharing(spec.sharing.strategy, spec.sharing.max_clients_per_gpu)
            if spec.sharing
            else None
        ),
        partition_size=spec.partition_size,
    )


def _resolve_workload(
    w: WorkloadSpec, pool: NodePoolConfig | None, existing: bool = False
) -> WorkloadConfig:
    probe = None
    if w.probe is not None and w.kind != "Job" and (w.probe.port or w.port):
        probe = Probe(w.probe.path, w.probe.port or w.port or 0, w.probe.startup_seconds)
    return WorkloadConfig(
        name=w.name,
        kind=w.kind,
        image=w.image,
        # Existing clusters select GPU nodes by nodeSelector only: no GKE accelerator label.
        gpu_type=None if existing else w.gpu.type,
        gpu_count=w.gpu.count,
        spot=w.spot,
        replicas=w.replicas,
        command=w.command,
        args=w.args,
        env=tuple(sorted(w.env.items())),
        secret_env=tuple(sorted(w.secret_env.items())),
        port=w.port,
        probe=probe,
        cpu=w.resources.cpu,
        memory=w.resources.memory,
        storage=(
            Storage(w.storage.size, w.storage.mount_path, w.storage.storage_class)
            if w.storage
            else None
        ),
        node_selector=tuple(sorted(w.node_selector.items())),
        expose=(Expose(w.expose.port, w.expose.source_ranges, w.expose.type) if w.expose else None),
        run_as_user=w.run_as_user,
        backoff_limit=w.backoff_limit,
        node_pool=pool,
        wait_for_completion=w.wait_for_completion,
    )


def from_pulumi() -> StackConfig:
    """Load the current stack's config from the Pulumi runtime (the engine or the mocks)."""
    from pulumi.runtime import config as runtime_config

    cfg = pulumi.Config(NAMESPACE)
    gcp = pulumi.Config("gcp")
    # The engine hands config over either in-process or through PULUMI_CONFIG; read both.
    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    raw: dict[str, Any] = {}
    secret_keys: set[str] = set()
    for key in sorted(keys):
        ns, _, name = key.partition(":")
        if ns != NAMESPACE:
            continue
        if (
            runtime_config.is_config_secret(key)
            or key in runtime_config.get_config_secret_keys_env()
        ):
            # Never read here: workloads and the existing-cluster provider read them as Outputs.
            secret_keys.add(name)
            continue
        value = cfg.get(name)
        try:
            raw[name] = json.loads(value) if value is not None else None
        except json.JSONDecodeError:
            raw[name] = value  # a plain string such as `devicePlugin: static`
    return load(
        raw,
        project=gcp.get("project"),
        region=gcp.get("region"),
        stack=pulumi.get_stack(),
        secret_keys=frozenset(secret_keys),
    )
