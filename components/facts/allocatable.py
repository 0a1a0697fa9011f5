"""What a pod can ask for on GKE: node allocatable, GPU-node system pods, default requests,
Kubernetes quantities, ephemeral storage and Autopilot's GPU request rules."""

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal

from . import catalog

# Where the facts come from (all checked 2026-11-22):
#   GKE_DOCS: https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes
#     ("Node allocatable resources"): GKE reserves CPU and memory in tiers plus a 100 MiB eviction
#     threshold. Only the page's opening could be read here (public code citing it quotes the
#     tiers verbatim), so the numbers are those of Google's code (GKE_CA), checked on real nodes.
#   GKE_CA: GKE's cluster autoscaler (Google LLC, 2026), Go package k8s.io/gke-autoscaling/
#     cluster-autoscaler/pkg/cloudprovider/gke, PredictKubeReserved{Memory,CpuMillicores,
#     EphemeralStorage}: the documented tiers, with one twist kept on purpose: "Duplicating an
#     upstream bug treating GB as 1000*MiB (we need to predict the end result accurately)".
#   GCE_CA: kubernetes/autoscaler cluster-autoscaler/cloudprovider/gce/gce_reserved.go at
#     0be995deb5071097a4d7b846e9ee9746821b6e87: memory the kernel keeps (the node's capacity is
#     below the VM's memory), the OS share of the boot disk, eviction defaults (100 MiB memory, 10%
#     of the node filesystem). GKE_CA falls back to these same functions.
#   OBSERVED: github.com/2i2c-org/infrastructure/issues/2121 (GKE 1.25 nodes, capacity and
#     allocatable of n2-highmem-4/16/64 with 100 GB boot disks); tests/test_allocatable.py checks
#     the formulas below against those nodes.

KiB, MiB, GiB = 2**10, 2**20, 2**30
OsImage = Literal["cos", "ubuntu"]
Number = Decimal | int | float  # vCPUs and GiB as the catalog or the user wrote them


@dataclass(frozen=True)
class Resources:
    """CPU and memory, exact: whole millicores and bytes."""

    cpu_millicores: int
    memory_bytes: int

    def __sub__(self, other: "Resources") -> "Resources":
        cpu, memory = self.cpu_millicores, self.memory_bytes
        return Resources(cpu - other.cpu_millicores, memory - other.memory_bytes)

    def fits_in(self, other: "Resources") -> bool:
        """True when these requests fit in `other` (an allocatable) in both dimensions."""
        left = other - self
        return left.cpu_millicores >= 0 and left.memory_bytes >= 0


# GKE kube-reserved tiers, (lower bound, marginal rate): CPU in millicores, memory in MiB with
# GKE's 1000-MiB "GB" (GKE_CA memoryBrackets and cpuReservedMillicores; GKE_DOCS lists the same
# rates: 6% of the first core, 1% of the next, 0.5% of the next 2, 0.25% above 4; 25% of the first
# 4 GB of memory, 20% of the next 4, 10% of the next 8, 6% of the next 112, 2% above 128 GB).
_CPU_TIERS = ((0, 600), (1000, 100), (2000, 50), (4000, 25))  # rates in 1/10000
_MEMORY_TIERS_MIB = ((0, 2500), (4000, 2000), (8000, 1000), (16000, 600), (128000, 200))
_MEMORY_MINIMUM_MIB = 255  # nodes of at most 1000 MiB reserve this flat amount (GKE_CA)
_IMAGE_STREAMING_FACTOR = Fraction(4, 100)  # image streaming adds 4% of each tier (GKE_CA, GCFS)
_HIGH_MAX_PODS_EXTRA_MILLICORES = 400  # kubelet reserves more above 110 pods per node (GKE_CA)
EVICTION_MEMORY_BYTES = 100 * MiB  # kubelet evictionHard memory.available (GKE_DOCS, GCE_CA)
EVICTION_NODEFS_RATIO = Fraction(1, 10)  # evictionHard nodefs.available: 10% (GCE_CA)


def _tiered(capacity: int, tiers: tuple[tuple[int, int], ...]) -> Fraction:
    bounds = [lower for lower, _ in tiers[1:]] + [max(capacity, tiers[-1][0])]
    pairs = zip(tiers, bounds, strict=True)
    return Fraction(
        sum(max(0, min(capacity, top) - low) * rate for (low, rate), top in pairs), 10000
    )


def _millicores(vcpus: Number) -> int:
    millicores = int(Decimal(str(vcpus)) * 1000)
    if millicores <= 0:
        raise ValueError(f"a node needs more than 0 vCPUs, got {vcpus}")
    return millicores


def _physical_bytes(memory_gib: Number) -> int:
    # Compute Engine's "GB" of memory are GiB (see catalog.MachineType); VMs have whole MiB.
    mib = int(Decimal(str(memory_gib)) * 1024)
    if mib <= 0:
        raise ValueError(f"a node needs more than 0 GiB of memory, got {memory_gib}")
    return mib * MiB


def kube_reserved(
    vcpus: Number,
    memory_gib: Number,
    *,
    image_streaming: bool = False,
    max_pods_per_node: int = 110,
) -> Resources:
    """What GKE reserves for the kubelet and the OS from a node of this shape (GKE_CA)."""
    cpu = math.floor(_tiered(_millicores(vcpus), _CPU_TIERS))
    if max_pods_per_node > 110:
        cpu += _HIGH_MAX_PODS_EXTRA_MILLICORES
    mib = _physical_bytes(memory_gib) // MiB
    if mib <= 1000:
        return Resources(cpu, _MEMORY_MINIMUM_MIB * MiB)
    reserved = math.floor(_tiered(mib, _MEMORY_TIERS_MIB))
    if image_streaming:
        reserved += math.floor(_tiered(mib, _MEMORY_TIERS_MIB) * _IMAGE_STREAMING_FACTOR)
    return Resources(cpu, reserved * MiB)


def kernel_reserved_bytes(memory_gib: Number, os_image: OsImage = "cos") -> int:
    """Memory the Linux kernel keeps before the kubelet counts capacity: an estimate Google's
    autoscaler makes "statistically" (GCE_CA CalculateKernelReserved); off by a few MiB on real
    nodes, which the system-pod margin below absorbs."""
    physical = _physical_bytes(memory_gib)
    reserved = physical // 64 + 16 * MiB
    if physical > 3 * GiB:
        reserved += 64 * MiB  # software IO TLB
    if physical <= 8 * GiB:
        reserved += 8 * MiB
    reserved += math.floor(min(Decimal("0.00175") * physical, Decimal(248 * MiB)))
    return reserved + (4 * MiB if os_image == "ubuntu" else 0)


def node_capacity(vcpus: Number, memory_gib: Number, os_image: OsImage = "cos") -> Resources:
    """Capacity as the kubelet reports it: the VM's CPUs, its memory less the kernel's."""
    memory = _physical_bytes(memory_gib) - kernel_reserved_bytes(memory_gib, os_image)
    return Resources(_millicores(vcpus), memory)


def node_allocatable(
    vcpus: Number,
    memory_gib: Number,
    *,
    os_image: OsImage = "cos",
    image_streaming: bool = False,
    max_pods_per_node: int = 110,
) -> Resources:
    """Node allocatable on GKE Standard: capacity - kube-reserved - eviction threshold, as GKE's
    autoscaler computes it for a new node (GKE_CA BuildNodeFromMigSpec)."""
    reserved = kube_reserved(
        vcpus, memory_gib, image_streaming=image_streaming, max_pods_per_node=max_pods_per_node
    )
    eviction = Resources(0, EVICTION_MEMORY_BYTES)
    return node_capacity(vcpus, memory_gib, os_image) - reserved - eviction


# GKE's own DaemonSets on a GPU node of a Standard cluster like ours (COS, GKE-installed driver,
# Workload Identity, Cloud Logging/Monitoring, Managed Prometheus): (name, CPU m, MiB, source).
# No Google page lists these requests; they are OBSERVATIONS of real GKE clusters published on
# GitHub (file ids of the code index used for this project, read 2026-11-22):
#   D1 = `kubectl describe node` of a GKE node (id 69336947): fluentbit-gke 100m/200Mi,
#        gke-metrics-agent 8m/100Mi, kube-proxy 100m/0, pdcsi-node 10m/20Mi.
#   D2 = per-DaemonSet CPU requests of a GKE cluster, 2026 (id 45190347259): fluentbit-gke 105m,
#        gke-metrics-agent 19m, netd 8m, gke-metadata-server 100m, dcgm-exporter 100m, gmp
#        collector 5m, nvidia-gpu-device-plugin-* 55m (containers only).
#   D3 = `kubectl describe node` line of nvidia-gpu-device-plugin-small-cos (id 14386115256):
#        150m/80Mi. 150m is its driver-installer init container: a pod's effective request is the
#        larger of its biggest init container and the sum of its containers, for its whole life
#        (kubernetes.io/docs/concepts/workloads/pods/init-containers, "Resource sharing within
#        containers"), as in GoogleCloudPlatform/container-engine-accelerators
#        nvidia-driver-installer/cos/daemonset-preloaded.yaml (init containers request cpu 0.15).
# ESTIMATE marks memory no source gave: Autopilot's documented default for a DaemonSet container
# without requests, 100 MiB (autopilot-resource-requests, "Default resource requests"), stands in.
# The larger of two observations is kept. Override per pool when your node runs more (or less).
_GPU_NODE_DAEMONSETS: tuple[tuple[str, int, int, str], ...] = (
    ("kube-proxy", 100, 0, "D1, D2"),
    ("fluentbit-gke", 105, 200, "D2 CPU, D1 memory"),
    ("gke-metrics-agent", 19, 100, "D2 CPU, D1 memory"),
    ("pdcsi-node", 10, 20, "D1, D2"),
    ("netd", 8, 100, "D2 CPU, memory ESTIMATE"),
    ("gke-metadata-server", 100, 100, "D2 CPU, memory ESTIMATE"),
    ("nvidia-gpu-device-plugin", 150, 80, "D3"),
    ("dcgm-exporter", 100, 100, "D2 CPU, memory ESTIMATE"),
    ("gmp-system/collector", 5, 100, "D2 CPU, memory ESTIMATE"),
)
GPU_NODE_SYSTEM_OVERHEAD = Resources(
    sum(cpu for _, cpu, _, _ in _GPU_NODE_DAEMONSETS),
    sum(mib for _, _, mib, _ in _GPU_NODE_DAEMONSETS) * MiB,
)


def pod_allocatable(
    vcpus: Number,
    memory_gib: Number,
    overhead: Resources = GPU_NODE_SYSTEM_OVERHEAD,
    *,
    os_image: OsImage = "cos",
    image_streaming: bool = False,
) -> Resources:
    """What workload pods can request on one GPU node: allocatable less GKE's system pods."""
    left = node_allocatable(vcpus, memory_gib, os_image=os_image, image_streaming=image_streaming)
    left -= overhead
    return Resources(max(0, left.cpu_millicores), max(0, left.memory_bytes))


# Derived requests take 95% of the room above, never all of it. That room is an estimate: the
# kernel's share is a statistical guess (GCE_CA; GKE's autoscaler reads a per-node-version table
# instead, GKE_CA GkeReserved.CalculateKernelReserved), four DaemonSets' memory is an ESTIMATE, and
# GKE adds or resizes its own DaemonSets with node versions and features. A pod sized to 100% of
# it stays Pending on a node whose real room is a MiB smaller, and a LeaderWorkerSet group whose
# pods are sized so never starts. 5% is the cluster autoscaler's own tolerance for that room:
# "MaxFreeDifferenceRatio describes how free resources (allocatable - daemon and system pods) can
# differ between groups in the same NodeGroupSet", DefaultMaxFreeDifferenceRatio = 0.05
# (kubernetes/autoscaler@01ea19e57fda25c4de7b12e65bbe99b41dcd5b64:cluster-autoscaler/config/
# autoscaling_options.go): nodes whose room differs by up to 5% count as the same shape. It is a
# tolerance, not a measurement of GKE's DaemonSets; what it covers is named above. Requests set in
# `resources` may still use the whole room (rules/fit.py checks them against it).
DERIVED_SHARE = Fraction(95, 100)


def with_headroom(room: Resources) -> Resources:
    """The part of a node's room that derived requests take: DERIVED_SHARE of it."""
    return Resources(
        math.floor(room.cpu_millicores * DERIVED_SHARE),
        math.floor(room.memory_bytes * DERIVED_SHARE),
    )


def default_requests(
    pod_allocatable: Resources, gpus_per_node: int, gpus_per_pod: int, headroom: bool = True
) -> Resources:
    """A GPU pod's share of the node by its GPUs, of the room less its headroom (DERIVED_SHARE;
    the whole room without `headroom`), rounded down (whole millicores, whole MiB), so that
    gpus_per_node // gpus_per_pod such pods fit on one node together with room to spare."""
    if not 0 < gpus_per_pod <= gpus_per_node:
        raise ValueError(f"{gpus_per_pod} GPUs per pod do not fit a node of {gpus_per_node} GPUs")
    room = with_headroom(pod_allocatable) if headroom else pod_allocatable
    cpu = room.cpu_millicores * gpus_per_pod // gpus_per_node
    memory = room.memory_bytes * gpus_per_pod // gpus_per_node
    return Resources(cpu, memory // MiB * MiB)


# Kubernetes quantities, per k8s.io/apimachinery/pkg/api/resource/quantity.go: <signedNumber> then
# a binary suffix (Ki..Ei), a decimal exponent (e3, E-2) or a decimal suffix (m, "", k, M..E);
# more than 3 decimal places are "rounded up (E.g.: 0.1m will rounded up to 1m.)".
_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))([eE][+-]?\d+|[KMGTPE]i|[mkMGTPE])?")
_SUFFIXES: dict[str, Fraction] = {"": Fraction(1), "m": Fraction(1, 1000)}
_SUFFIXES |= {s: Fraction(1000**p) for p, s in enumerate("kMGTPE", 1)}
_SUFFIXES |= {f"{s}i": Fraction(1024**p) for p, s in enumerate("KMGTPE", 1)}
_BINARY_DOWN = tuple((f"{s}i", 1024**p) for p, s in reversed(list(enumerate("KMGTPE", 1))))


def _quantity(q: str) -> Fraction:
    match = _QUANTITY.fullmatch(q.strip())
    if match is None:
        raise ValueError(f"{q!r} is not a Kubernetes quantity (e.g. 500m, 4, 16Gi, 1e9)")
    number, suffix = Fraction(Decimal(match[1])), match[2] or ""
    if suffix not in _SUFFIXES:  # a decimal exponent, "e3" or "E-2"
        exponent = int(suffix[1:])
        if abs(exponent) > 30:
            raise ValueError(f"{q!r} is out of the range Kubernetes accepts")
        return number * Fraction(10) ** exponent
    return number * _SUFFIXES[suffix]


def parse_cpu(q: str) -> int:
    """Millicores of a CPU quantity ('500m' -> 500, '2' -> 2000), rounded up like Kubernetes."""
    return math.ceil(_quantity(q) * 1000)


def parse_memory(q: str) -> int:
    """Bytes of a memory quantity ('16Gi', '1G', '128974848'), rounded up like Kubernetes."""
    return math.ceil(_quantity(q))


def cpu_quantity(millicores: int) -> str:
    """'4' for whole cores, else '3920m'."""
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def memory_quantity(memory_bytes: int) -> str:
    """The largest exact binary unit: '12Gi', '12700Mi', else plain bytes."""
    for suffix, size in _BINARY_DOWN:
        if memory_bytes and memory_bytes % size == 0:
            return f"{memory_bytes // size}{suffix}"
    return str(memory_bytes)


# Ephemeral storage on Standard. Boot disk: 100 GB unless set ("If unspecified, the default disk
# size is 100GB", https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig
# diskSizeGb), pd-balanced since GKE 1.24
# (https://cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks). GB here are GiB.
# Allocatable = (disk - OS share) - kube-reserved - 10% eviction: OS share per image from GCE_CA
# CalculateOSReservedEphemeralStorage; kube-reserved = min(50% of disk, 6 GiB + 35% of disk,
# 100 GiB) in whole GiB (GKE_CA PredictKubeReservedEphemeralStorage; GKE_DOCS has a "Local
# ephemeral storage reservation" section, not readable here). 100 GB give ~43.8 GiB (OBSERVED).
BOOT_DISK_DEFAULT_GB = 100
_OS_DISK_SHARE: dict[str, tuple[Decimal, Decimal]] = {  # (share of the disk, fixed GiB)
    "cos": (Decimal("0.015635"), Decimal("4.148")),
    "ubuntu": (Decimal("0.03083"), Decimal("0.171")),
}


def node_ephemeral_allocatable(
    boot_disk_gb: int = BOOT_DISK_DEFAULT_GB, os_image: OsImage = "cos"
) -> int:
    """Bytes of ephemeral storage all pods on one node may request together."""
    if boot_disk_gb <= 0:
        raise ValueError(f"a boot disk needs more than 0 GB, got {boot_disk_gb}")
    physical = boot_disk_gb * GiB
    share, fixed = _OS_DISK_SHARE[os_image]
    os_reserved = math.ceil(share * physical) + math.ceil(fixed * GiB)
    os_reserved += min(100 * MiB, math.ceil(Decimal("0.001") * physical))  # over-provisioning
    capacity = physical - os_reserved
    kube_gib = min(boot_disk_gb // 2, 6 + int(Decimal("0.35") * boot_disk_gb), 100)
    return capacity - kube_gib * GiB - math.floor(capacity * EVICTION_NODEFS_RATIO)


# A design estimate, not a Google figure: room in a model server's own filesystem for the default
# small model's weights (a few GiB), the download's temporary copies and vLLM/torch.compile caches
# under ~/.cache, with headroom. Image layers are not charged to the pod (they sit in the node's
# image store) but share the boot disk: pods per node x this <= node_ephemeral_allocatable.
DEFAULT_MODEL_CACHE = "30Gi"


# Autopilot. Documented (https://cloud.google.com/kubernetes-engine/docs/concepts/autopilot-
# resource-requests, "Default resource requests", read in its zh-CN version): every non-DaemonSet
# container gets a 1 GiB ephemeral-storage request when it sets none; the Accelerator compute
# class, which runs GPU Pods, has no default CPU or memory requests; requests below a minimum are
# raised to it, above a maximum rejected (page opening). Its per-GPU minimum/maximum table could
# not be read here, so nothing is clamped to it or refused on it. GKE Warden messages quoted on
# GitHub reject "ephemeral-storage ... higher than the Autopilot maximum of '10Gi'" (compute
# class not stated): a model cache on Autopilot belongs in a generic ephemeral volume (a PVC, not
# counted as ephemeral storage), not in an ephemeral-storage request.
# What the project's default model server asks per GPU when the user sets no resources: the
# default workload's 4 CPU and 16Gi (docs/configuration.md). A project choice, not a Google
# figure; Autopilot sizes the node from the requests ("Autopilot uses the resource requests
# that you specify ... to configure the nodes", same page), and raises anything below its minimum.
AUTOPILOT_REQUEST_PER_GPU = Resources(4000, 16 * GiB)


# Existing clusters: their nodes are not known here, so a pod that sets no memory gets a stated
# request rather than none. Under node memory pressure the kubelet evicts first "BestEffort or
# Burstable pods where the usage exceeds requests" (kubernetes.io/docs/concepts/scheduling-
# eviction/node-pressure-eviction, "Pod selection for kubelet eviction"): with no request, any use
# exceeds it. The figure is KServe's default memory request for a model server container that
# sets none, 2Gi (kserve/website@5c3d641d8a7919f7faa431e95f8d36a2aa5304a2:docs/admin-guide/
# configurations.md, "Default Memory Request"): a floor small enough for any GPU node, not a
# measure of what the pod uses (a pod using more is still among the first evicted; the plan says
# so). Unlike KServe's it comes with no limit (components/service/pod.py), so a pod that runs
# today with more memory is not OOM-killed by the upgrade.
EXISTING_MEMORY_REQUEST_BYTES = 2 * GiB


def autopilot_default_requests(gpu_type: str, count: int) -> Resources:
    """Requests for an Autopilot GPU pod that sets none: AUTOPILOT_REQUEST_PER_GPU per GPU, no
    more than DERIVED_SHARE of what the largest machine carrying `count` such GPUs leaves."""
    machines = catalog.machine_types_for(gpu_type, count)
    if not machines:
        raise ValueError(f"no machine type carries {count} x {gpu_type}")
    largest = max(machines, key=lambda m: (m.vcpus, m.memory_gb))
    room = with_headroom(pod_allocatable(largest.vcpus, largest.memory_gb))
    cpu = min(AUTOPILOT_REQUEST_PER_GPU.cpu_millicores * count, room.cpu_millicores // 1000 * 1000)
    memory = min(AUTOPILOT_REQUEST_PER_GPU.memory_bytes * count, room.memory_bytes // GiB * GiB)
    return Resources(cpu, memory)
