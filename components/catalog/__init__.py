"""GKE GPU catalog: GPU types, the machine types that carry them, and GKE sharing support."""

from dataclasses import dataclass

# Where the facts come from. Google's doc pages hold most of these tables deep in long pages that
# could not be read in full, so several numbers come from Google's own source code that GKE runs:
#   GKE_MACHINES: Google LLC, GKE cluster autoscaler, Go package
#     k8s.io/gke-autoscaling/cluster-autoscaler/pkg/cloudprovider/gke/machinetypes
#     (machine family registry: NewMachineTypeInfo(name, vCPUs, memory GB) per machine type).
#   GKE_GPUS: the same package's GPU registry (RegisterGpu: maxCpuCount per GPU count,
#     partitionSizes per GPU type, machineFamilyForGPU).
#   TOOLKIT: GoogleCloudPlatform/cluster-toolkit, modules/internal/gpu-definition/main.tf
#     (accelerator_machines: machine type -> GPU type and count).
#   DEVICE_PLUGIN: GoogleCloudPlatform/container-engine-accelerators, pkg/gpu/nvidia/mig/mig.go
#     (gpuPartitionSizeMaxCount: the MIG partition sizes GKE's device plugin accepts).


@dataclass(frozen=True)
class MachineType:
    name: str  # "g2-standard-8"
    gpus: int  # GPUs attached to this machine type for this accelerator
    vcpus: int
    memory_gb: float  # Compute Engine GB, which are GiB (2**30 bytes) per its pricing page


@dataclass(frozen=True)
class GpuType:
    name: str  # GKE `--accelerator type=` name, e.g. "nvidia-l4"
    display_name: str  # "NVIDIA L4"
    family: str  # machine family prefix: "n1", "g2", "a2", "a3", "a4"
    machine_types: tuple[MachineType, ...]  # by GPU count, then smallest (vCPUs, memory) first
    autopilot_counts: tuple[int, ...]  # GPUs per pod on Autopilot; () = not on Autopilot
    mig_partitions: tuple[str, ...]  # () = no MIG
    time_sharing: bool
    mps: bool

    @property
    def node_counts(self) -> tuple[int, ...]:
        """Sorted distinct GPU counts a Standard node of this type can have."""
        return tuple(sorted({m.gpus for m in self.machine_types}))


# Predefined N1 machine types that can take attached GPUs: (name, vCPUs, memory GB).
# Source: GKE_MACHINES (N1 family); the same figures as the N1 tables at
# https://cloud.google.com/compute/docs/general-purpose-machines#n1_machines and the ratios stated
# at https://cloud.google.com/compute/docs/machine-types (standard 3.75 GB, highmem 6.5 GB per
# vCPU). Shared-core f1-micro and g1-small are left out because "you can use most N1 machine
# types except the N1 shared-core" (https://cloud.google.com/compute/docs/gpus/about-gpus).
_N1_MACHINES: tuple[tuple[str, int, float], ...] = (
    ("n1-standard-1", 1, 3.75),
    ("n1-standard-2", 2, 7.5),
    ("n1-standard-4", 4, 15),
    ("n1-standard-8", 8, 30),
    ("n1-standard-16", 16, 60),
    ("n1-standard-32", 32, 120),
    ("n1-standard-64", 64, 240),
    ("n1-standard-96", 96, 360),
    ("n1-highmem-2", 2, 13),
    ("n1-highmem-4", 4, 26),
    ("n1-highmem-8", 8, 52),
    ("n1-highmem-16", 16, 104),
    ("n1-highmem-32", 32, 208),
    ("n1-highmem-64", 64, 416),
    ("n1-highmem-96", 96, 624),
    ("n1-highcpu-2", 2, 1.8),
    ("n1-highcpu-4", 4, 3.6),
    ("n1-highcpu-8", 8, 7.2),
    ("n1-highcpu-16", 16, 14.4),
    ("n1-highcpu-32", 32, 28.8),
    ("n1-highcpu-64", 64, 57.6),
    ("n1-highcpu-96", 96, 86.4),
)

# GPUs per N1 VM -> most vCPUs the VM may have, for each GPU attached to N1.
# Source: GKE_GPUS maxCpuCount (the limits GKE itself provisions by); the per-count tables they
# mirror are at https://cloud.google.com/compute/docs/gpus (N1 section). Compute Engine also caps
# memory per count there; that table could not be read in full, so no memory cap is encoded (for
# P100 with 4 GPUs the page's limits differ by zone; the 64 vCPUs here are GKE's figure).
_N1_MAX_VCPUS: dict[str, dict[int, int]] = {
    "nvidia-tesla-t4": {1: 48, 2: 48, 4: 96},
    "nvidia-tesla-p4": {1: 24, 2: 48, 4: 96},
    "nvidia-tesla-p100": {1: 16, 2: 32, 4: 64},
    "nvidia-tesla-v100": {1: 12, 2: 24, 4: 48, 8: 96},
}

# Accelerator-optimized machine types: (name, GPUs, vCPUs, memory GB); the GPU comes with the VM.
# Sources: GPU counts from TOOLKIT; vCPUs and memory from GKE_MACHINES. Rows also seen on Google's
# pages: g2-standard-4 (1 GPU, 4 vCPUs, 16 GB), g2-standard-8 (1, 8, 32) and a3-highgpu-8g
# (8 GPUs, 208 vCPUs, 1872 GB) at https://cloud.google.com/compute/docs/gpus; full tables at
# https://cloud.google.com/compute/docs/accelerator-optimized-machines.
# g2-standard-24: GKE_MACHINES says 23 vCPUs, against the name; the name's 24 is kept.
_L4_MACHINES: tuple[tuple[str, int, int, float], ...] = (
    ("g2-standard-4", 1, 4, 16),
    ("g2-standard-8", 1, 8, 32),
    ("g2-standard-12", 1, 12, 48),
    ("g2-standard-16", 1, 16, 64),
    ("g2-standard-32", 1, 32, 128),
    ("g2-standard-24", 2, 24, 96),
    ("g2-standard-48", 4, 48, 192),
    ("g2-standard-96", 8, 96, 384),
)
_A100_40GB_MACHINES: tuple[tuple[str, int, int, float], ...] = (
    ("a2-highgpu-1g", 1, 12, 85),
    ("a2-highgpu-2g", 2, 24, 170),
    ("a2-highgpu-4g", 4, 48, 340),
    ("a2-highgpu-8g", 8, 96, 680),
    ("a2-megagpu-16g", 16, 96, 1360),
)
_A100_80GB_MACHINES: tuple[tuple[str, int, int, float], ...] = (
    ("a2-ultragpu-1g", 1, 12, 170),
    ("a2-ultragpu-2g", 2, 24, 340),
    ("a2-ultragpu-4g", 4, 48, 680),
    ("a2-ultragpu-8g", 8, 96, 1360),
)
_H100_MACHINES: tuple[tuple[str, int, int, float], ...] = (
    ("a3-highgpu-1g", 1, 26, 234),
    ("a3-highgpu-2g", 2, 52, 468),
    ("a3-highgpu-4g", 4, 104, 936),
    ("a3-highgpu-8g", 8, 208, 1872),
)
_H100_MEGA_MACHINES: tuple[tuple[str, int, int, float], ...] = (("a3-megagpu-8g", 8, 208, 1872),)
_H200_MACHINES: tuple[tuple[str, int, int, float], ...] = (("a3-ultragpu-8g", 8, 224, 2952),)
_B200_MACHINES: tuple[tuple[str, int, int, float], ...] = (("a4-highgpu-8g", 8, 224, 3968),)

# GPUs per pod that Autopilot accepts.
# Source for which types run on Autopilot: GKE's own Warden rejection text "supported values are:
# [nvidia-a100-80gb, nvidia-tesla-a100, nvidia-tesla-t4]" (GKE, 2023, quoted in
# github.com/substratusai/helm/issues/8); nvidia-l4 per
# https://cloud.google.com/kubernetes-engine/docs/how-to/autopilot-gpus#request-gpus (cited in
# GoogleCloudPlatform/kubernetes-engine-samples PR 1040); H100 (A3 High and A3 Mega) because
# https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx sends
# Autopilot users of those machines to an Autopilot variant of the page.
# The counts are the GPU counts per node GKE provisions for each type (GKE_GPUS maxCpuCount keys),
# since the quantity table on the autopilot-gpus page could not be read.
# Not confirmed on Autopilot, so () below: nvidia-h200-141gb and nvidia-b200. P4, P100 and V100
# were absent from the Warden list above.
_AUTOPILOT_COUNTS: dict[str, tuple[int, ...]] = {
    "nvidia-tesla-t4": (1, 2, 4),
    "nvidia-l4": (1, 2, 4, 8),
    "nvidia-tesla-a100": (1, 2, 4, 8, 16),
    "nvidia-a100-80gb": (1, 2, 4, 8),
    "nvidia-h100-80gb": (1, 2, 4, 8),
    "nvidia-h100-mega-80gb": (8,),
}

# MIG partition sizes per GPU type, smallest first.
# Source: https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi lists the GPUs with
# MIG on GKE (A100 40GB, A100 80GB, H100 80GB, H200 141GB, and in its newest version B200); its
# size table could not be read, so sizes are those both GKE_GPUS (partitionSizes) and
# DEVICE_PLUGIN accept. Left out: 4g.71gb (H200) and 4g.90gb (B200), which the device plugin
# accepts but GKE's autoscaler registry does not list. H100 Mega's sizes are from GKE_GPUS; the
# MIG page names only "NVIDIA H100 (80GB)".
_MIG_PARTITIONS: dict[str, tuple[str, ...]] = {
    "nvidia-tesla-a100": ("1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb"),
    "nvidia-a100-80gb": ("1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"),
    "nvidia-h100-80gb": ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "7g.80gb"),
    "nvidia-h100-mega-80gb": ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "7g.80gb"),
    "nvidia-h200-141gb": ("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "7g.141gb"),
    "nvidia-b200": ("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "7g.180gb"),
}

# GPU sharing on GKE Standard. Time-sharing: "You can enable GPU time-sharing on all NVIDIA GPU
# models" (https://cloud.google.com/kubernetes-engine/docs/how-to/timesharing-gpus).
# MPS: "You can enable NVIDIA MPS for all NVIDIA Tesla GPU types"
# (https://cloud.google.com/kubernetes-engine/docs/how-to/nvidia-mps-gpus). GKE's docs use
# "NVIDIA Tesla" for all their NVIDIA GPUs (the same page asks for "NVIDIA Tesla GPU" quota), so
# every type here is marked as supporting MPS; no GPU type is excluded by either page.
_TIME_SHARING = True
_MPS = True

# GPU types GKE no longer offers -> advice for the error message.
# Source: K80 "has reached end of support, see https://cloud.google.com/compute/docs/eol/k80-eol"
# (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/MachineSpec); Google's own samples
# moved from K80 to T4 for that reason (GoogleCloudPlatform/java-docs-samples PR 9342). The exact
# end date and any other replacement on the EOL page could not be confirmed, so neither is stated.
# P4, P100 and V100 are still listed as available, so they are not here.
RETIRED: dict[str, str] = {
    "nvidia-tesla-k80": (
        "Compute Engine ended support for NVIDIA K80 GPUs "
        "(https://cloud.google.com/compute/docs/eol/k80-eol); use nvidia-tesla-t4 instead"
    ),
}


def _sorted(machines: list[MachineType]) -> tuple[MachineType, ...]:
    return tuple(sorted(machines, key=lambda m: (m.gpus, m.vcpus, m.memory_gb, m.name)))


def _n1(gpu: str) -> tuple[MachineType, ...]:
    return _sorted(
        [
            MachineType(name, count, vcpus, memory)
            for count, max_vcpus in _N1_MAX_VCPUS[gpu].items()
            for name, vcpus, memory in _N1_MACHINES
            if vcpus <= max_vcpus
        ]
    )


def _fixed(rows: tuple[tuple[str, int, int, float], ...]) -> tuple[MachineType, ...]:
    return _sorted([MachineType(name, gpus, vcpus, memory) for name, gpus, vcpus, memory in rows])


def _gpu(name: str, display_name: str, family: str, machines: tuple[MachineType, ...]) -> GpuType:
    return GpuType(
        name=name,
        display_name=display_name,
        family=family,
        machine_types=machines,
        autopilot_counts=_AUTOPILOT_COUNTS.get(name, ()),
        mig_partitions=_MIG_PARTITIONS.get(name, ()),
        time_sharing=_TIME_SHARING,
        mps=_MPS,
    )


# Names and display names per https://cloud.google.com/compute/docs/gpus; families per GKE_GPUS
# machineFamilyForGPU.
GPU_TYPES: dict[str, GpuType] = {
    g.name: g
    for g in (
        _gpu("nvidia-tesla-t4", "NVIDIA T4", "n1", _n1("nvidia-tesla-t4")),
        _gpu("nvidia-tesla-p4", "NVIDIA P4", "n1", _n1("nvidia-tesla-p4")),
        _gpu("nvidia-tesla-p100", "NVIDIA P100", "n1", _n1("nvidia-tesla-p100")),
        _gpu("nvidia-tesla-v100", "NVIDIA V100", "n1", _n1("nvidia-tesla-v100")),
        _gpu("nvidia-l4", "NVIDIA L4", "g2", _fixed(_L4_MACHINES)),
        _gpu("nvidia-tesla-a100", "NVIDIA A100 40GB", "a2", _fixed(_A100_40GB_MACHINES)),
        _gpu("nvidia-a100-80gb", "NVIDIA A100 80GB", "a2", _fixed(_A100_80GB_MACHINES)),
        _gpu("nvidia-h100-80gb", "NVIDIA H100 80GB", "a3", _fixed(_H100_MACHINES)),
        _gpu("nvidia-h100-mega-80gb", "NVIDIA H100 80GB Mega", "a3", _fixed(_H100_MEGA_MACHINES)),
        _gpu("nvidia-h200-141gb", "NVIDIA H200 141GB", "a3", _fixed(_H200_MACHINES)),
        _gpu("nvidia-b200", "NVIDIA B200", "a4", _fixed(_B200_MACHINES)),
    )
}


def lookup(name: str) -> GpuType:
    """The GPU type called `name`; KeyError saying why when GKE does not offer it."""
    if name in GPU_TYPES:
        return GPU_TYPES[name]
    if name in RETIRED:
        raise KeyError(f"{name} is retired: {RETIRED[name]}")
    raise KeyError(f"{name} is not a GKE GPU type; known types: {', '.join(sorted(GPU_TYPES))}")


def machine_types_for(gpu: str, count: int) -> tuple[MachineType, ...]:
    """Machine types that carry exactly `count` of `gpu`, smallest (vCPUs, memory) first."""
    return tuple(m for m in lookup(gpu).machine_types if m.gpus == count)


def smallest_machine_type(gpu: str, count: int) -> MachineType:
    """The machine type with fewest vCPUs, then least memory, carrying `count` of `gpu`."""
    fitting = machine_types_for(gpu, count)
    if not fitting:
        allowed = ", ".join(str(c) for c in lookup(gpu).node_counts)
        raise ValueError(f"no machine type carries {count} x {gpu} (GPUs per node: {allowed})")
    return fitting[0]


def machine_type(name: str) -> MachineType | None:
    """The first catalog entry named `name`; an N1 type appears once per GPU count, so its `gpus`
    is only that first entry's count."""
    for gpu in GPU_TYPES.values():
        for machine in gpu.machine_types:
            if machine.name == name:
                return machine
    return None
