"""Machine shapes that carry NVIDIA GPUs on GKE: N1 (predefined, custom), accelerator-optimized.

Sources (checked 2026-11-22):
  GKE_MACHINES: Google's GKE cluster autoscaler, Go package
    k8s.io/gke-autoscaling/cluster-autoscaler/pkg/cloudprovider/gke/machinetypes (Copyright 2026;
    code-index file 56690376758): NewMachineTypeInfo(name, vCPUs, memory GB), withGpuOverride(GPU,
    count), withExplicitReqOnly() (GKE takes the shape only when it is named), withDwsDisabled()
    (no flex-start).
  GKE_GPUS: the same package's GPU registry (code-index file 56719078469): maxCpuCount per GPU
    count and machineFamilyForGPU.
  TOOLKIT: GoogleCloudPlatform/cluster-toolkit pkg/config/machine_mappings.json at 10470803
    (machine type -> accelerator; g4-standard-48/96/192/384 carry 1/2/4/8 RTX PRO 6000 and
    g4-standard-6/12/24 are the 1/8, 1/4 and 1/2 "rtx-6000" shapes).
  CONSUMPTION: https://cloud.google.com/ai-hypercomputer/docs/consumption-models (flex-start and
    Spot: "Any GPU machine except A4X"; future reservations: A4X, A4, A3 Ultra) and
    https://cloud.google.com/compute/docs/instances/about-reservation-bound-instances (the
    reservation-bound model creates "A4X Max, A4X, A4, A3 Ultra, A3 Mega, A3 High with 8 GPUs,
    A3 Edge" instances); https://cloud.google.com/cluster-director/docs/choose-consumption-option
    lists on-demand for none of A4X, A4, A3 Ultra, A3 Mega.
  AIH_GPU: Google's "GPU machine types" (AI Hypercomputer), https://docs.cloud.google.com/
    ai-hypercomputer/docs/gpu, a stored copy read 2026-11-29: "When provisioning a3-highgpu-1g,
    a3-highgpu-2g, or a3-highgpu-4g machine types, you must create instances by using Spot VMs or
    Flex-start VMs"; for A3 Ultra and A4, "you must reserve capacity to create instances or
    clusters, use Spot VMs, use Flex-start VMs, or create a resize request in a MIG".
  AIH_LIMITS: the "Limitations" of Google's "Create an AI-optimized instance with A4 or A3 Ultra"
    (https://docs.cloud.google.com/ai-hypercomputer/docs/create/create-vm) and "Create an
    AI-optimized Slurm cluster" (.../create/create-slurm-cluster), stored copies read 2026-11-29:
    for A3 Ultra, A4, A4X and A4X Max alike, "You can't use Persistent Disk (regional or zonal).
    You can only use Google Cloud Hyperdisk"; "A4X Max instances don't support ... Spot VMs,
    Flex-start VMs".
"""

from __future__ import annotations

import re

from .model import (
    ALL_CONSUMPTION,
    FLEX_START,
    HYPERDISK_BALANCED,
    ON_DEMAND,
    PD_BALANCED,
    PD_BOOT_DISKS,
    PD_SSD,
    RESERVATION,
    SPOT,
    MachineType,
)

# Predefined N1 machine types that can take attached GPUs: (name, vCPUs, memory GB).
# Source: GKE_MACHINES (N1 family); the same figures as the N1 tables at
# https://cloud.google.com/compute/docs/general-purpose-machines#n1_machines (standard 3.75 GB,
# highmem 6.5 GB, highcpu 0.9 GB per vCPU). Shared-core f1-micro and g1-small are left out:
# "you can use most N1 machine types except the N1 shared-core"
# (https://cloud.google.com/compute/docs/gpus/about-gpus).
N1_MACHINES: tuple[tuple[str, int, float], ...] = (
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

# GPUs per N1 VM -> most vCPUs the VM may have, per GPU attached to N1. They hold for custom N1
# machine types too: the cap is on the VM's vCPUs, whatever its shape.
# Source: GKE_GPUS maxCpuCount (the limits GKE provisions by); the per-count tables they mirror are
# at https://cloud.google.com/compute/docs/gpus (N1 section). Compute Engine also caps memory per
# count there; that table could not be read, so no memory cap is encoded (unconfirmed, not refused).
N1_MAX_VCPUS: dict[str, dict[int, int]] = {
    "nvidia-tesla-t4": {1: 48, 2: 48, 4: 96},
    "nvidia-tesla-p4": {1: 24, 2: 48, 4: 96},
    "nvidia-tesla-p100": {1: 16, 2: 32, 4: 64},
    "nvidia-tesla-v100": {1: 12, 2: 24, 4: 48, 8: 96},
}

# N1 custom machine types: `custom-<vCPUs>-<memory MB>` (Compute Engine's own spelling, e.g.
# "custom-1-4096" in the API reference) or `n1-custom-...` (what GKE node pools are commonly given,
# e.g. Terraform's google_container_node_pool examples with "n1-custom-6-20480"), `-ext` for
# extended memory. Rules from Google's custom-machine-type helper sample
# (https://cloud.google.com/compute/docs/samples/compute-custom-machine-type-helper-class, which
# cites https://cloud.google.com/compute/docs/general-purpose-machines#custom_machine_types):
# N1 allows 1 or an even number of vCPUs up to 96, memory a multiple of 256 MB, at least 922 MB
# and at most 6656 MB per vCPU, and with -ext up to 624 GB in total.
_CUSTOM_N1 = re.compile(r"^(?:n1-)?custom-(\d+)-(\d+)(-ext)?$")
N1_CUSTOM_MAX_VCPUS = 96
N1_CUSTOM_MEMORY_STEP_MB = 256
N1_CUSTOM_MIN_MB_PER_VCPU = 922
N1_CUSTOM_MAX_MB_PER_VCPU = 6656
N1_CUSTOM_MAX_EXTENDED_MB = 624 * 1024

_ANY = ALL_CONSUMPTION
# A3 Ultra and A4: reservations, flex-start and Spot, no on-demand (CONSUMPTION).
_NO_ON_DEMAND = frozenset({SPOT, FLEX_START, RESERVATION})
# A4X and A4X Max: reservations only (flex-start and Spot exclude A4X; CONSUMPTION).
_RESERVED_ONLY = frozenset({RESERVATION})
# A3 Edge: GKE's autoscaler disables flex-start for it (GKE_MACHINES withDwsDisabled()).
# On-demand for A3 Mega, A3 High 8g and A3 Edge could not be confirmed either way; not refused
# (CAPACITY_NOTES below, which the plan flags).
_NO_FLEX_START = frozenset({ON_DEMAND, SPOT, RESERVATION})

# Ways of buying a shape that its consumption allows (so they are not refused: GKE's own error
# decides) but the sources do not back: the offline plan flags a pool or ComputeClass priority
# that buys the shape so (tools/summary_machines.py). shape -> ((way, what the sources say), ...).
_A3_8G_ON_DEMAND = (  # CONSUMPTION
    (
        ON_DEMAND,
        "Google's reservation-bound instances page lists 8-GPU A3 High and A3 Edge, and no "
        "page read says they are sold on demand",
    ),
)
_A3_MEGA_ON_DEMAND = (  # CONSUMPTION
    (
        ON_DEMAND,
        "A3 Mega is reservation-bound, and Google's Cluster Director page on consumption "
        "options lists no on-demand for it",
    ),
)
_SMALL_A3_HIGH = (
    "Google's GPU machine types page: 1, 2 and 4 GPU A3 High VMs are created as Spot or "
    "flex-start VMs only"
)
_A3_SPOT_OR_FLEX = ((ON_DEMAND, _SMALL_A3_HIGH), (RESERVATION, _SMALL_A3_HIGH))  # AIH_GPU
CAPACITY_NOTES: dict[str, tuple[tuple[str, str], ...]] = {
    **{f"a3-{k}gpu-8g{v}": _A3_8G_ON_DEMAND for k in ("high", "edge") for v in ("", "-nolssd")},
    **{f"a3-megagpu-8g{v}": _A3_MEGA_ON_DEMAND for v in ("", "-nolssd")},
    **{f"a3-highgpu-{n}g{v}": _A3_SPOT_OR_FLEX for n in (1, 2, 4) for v in ("", "-nolssd")},
}

# Accelerator-optimized shapes: (name, GPUs, vCPUs, memory GB, consumption, by_default,
# gpu_share). GPU counts from TOOLKIT and GKE_MACHINES; vCPUs and memory from GKE_MACHINES.
# g2-standard-24: GKE_MACHINES says 23 vCPUs, against the name; the name's 24 is kept.
_Row = tuple[str, int, int, float, frozenset[str], bool, float]
L4_MACHINES: tuple[_Row, ...] = (
    ("g2-standard-4", 1, 4, 16, _ANY, True, 1.0),
    ("g2-standard-8", 1, 8, 32, _ANY, True, 1.0),
    ("g2-standard-12", 1, 12, 48, _ANY, True, 1.0),
    ("g2-standard-16", 1, 16, 64, _ANY, True, 1.0),
    ("g2-standard-32", 1, 32, 128, _ANY, True, 1.0),
    ("g2-standard-24", 2, 24, 96, _ANY, True, 1.0),
    ("g2-standard-48", 4, 48, 192, _ANY, True, 1.0),
    ("g2-standard-96", 8, 96, 384, _ANY, True, 1.0),
)
# G4: the fractional vGPU shapes carry "the same accelerator name & count as the non-frac ones"
# and GKE takes them only when named (GKE_MACHINES, b/481243051). That GKE node pools accept them
# is therefore GKE's own code, but no GKE doc page confirming it could be read: unconfirmed.
RTX_PRO_6000_MACHINES: tuple[_Row, ...] = (
    ("g4-standard-6", 1, 6, 22, _ANY, False, 0.125),
    ("g4-standard-12", 1, 12, 45, _ANY, False, 0.25),
    ("g4-standard-24", 1, 24, 90, _ANY, False, 0.5),
    ("g4-standard-48", 1, 48, 180, _ANY, True, 1.0),
    ("g4-standard-96", 2, 96, 360, _ANY, True, 1.0),
    ("g4-standard-192", 4, 192, 720, _ANY, True, 1.0),
    ("g4-standard-384", 8, 384, 1440, _ANY, True, 1.0),
)
A100_40GB_MACHINES: tuple[_Row, ...] = (
    ("a2-highgpu-1g", 1, 12, 85, _ANY, True, 1.0),
    ("a2-highgpu-2g", 2, 24, 170, _ANY, True, 1.0),
    ("a2-highgpu-4g", 4, 48, 340, _ANY, True, 1.0),
    ("a2-highgpu-8g", 8, 96, 680, _ANY, True, 1.0),
    ("a2-megagpu-16g", 16, 96, 1360, _ANY, True, 1.0),
)
A100_80GB_MACHINES: tuple[_Row, ...] = (
    ("a2-ultragpu-1g", 1, 12, 170, _ANY, True, 1.0),
    ("a2-ultragpu-2g", 2, 24, 340, _ANY, True, 1.0),
    ("a2-ultragpu-4g", 4, 48, 680, _ANY, True, 1.0),
    ("a2-ultragpu-8g", 8, 96, 1360, _ANY, True, 1.0),
    ("a2-ultragpu-1g-nolssd", 1, 12, 170, _ANY, False, 1.0),
    ("a2-ultragpu-2g-nolssd", 2, 24, 340, _ANY, False, 1.0),
    ("a2-ultragpu-4g-nolssd", 4, 48, 680, _ANY, False, 1.0),
    ("a2-ultragpu-8g-nolssd", 8, 96, 1360, _ANY, False, 1.0),
)
# A3 High and A3 Edge carry the same nvidia-h100-80gb; A3 Edge (a3-edgegpu-8g) is an explicit
# choice, never a default, so an 8 x H100 pool still defaults to a3-highgpu-8g.
H100_MACHINES: tuple[_Row, ...] = (
    ("a3-highgpu-1g", 1, 26, 234, _ANY, True, 1.0),
    ("a3-highgpu-2g", 2, 52, 468, _ANY, True, 1.0),
    ("a3-highgpu-4g", 4, 104, 936, _ANY, True, 1.0),
    ("a3-highgpu-8g", 8, 208, 1872, _ANY, True, 1.0),
    ("a3-edgegpu-8g", 8, 208, 1872, _NO_FLEX_START, False, 1.0),
    ("a3-highgpu-1g-nolssd", 1, 26, 234, _ANY, False, 1.0),
    ("a3-highgpu-2g-nolssd", 2, 52, 468, _ANY, False, 1.0),
    ("a3-highgpu-4g-nolssd", 4, 104, 936, _ANY, False, 1.0),
    ("a3-highgpu-8g-nolssd", 8, 208, 1872, _ANY, False, 1.0),
    ("a3-edgegpu-8g-nolssd", 8, 208, 1872, _NO_FLEX_START, False, 1.0),
)
H100_MEGA_MACHINES: tuple[_Row, ...] = (
    ("a3-megagpu-8g", 8, 208, 1872, _ANY, True, 1.0),
    ("a3-megagpu-8g-nolssd", 8, 208, 1872, _ANY, False, 1.0),
)
H200_MACHINES: tuple[_Row, ...] = (
    ("a3-ultragpu-8g", 8, 224, 2952, _NO_ON_DEMAND, True, 1.0),
    ("a3-ultragpu-8g-nolssd", 8, 224, 2952, _NO_ON_DEMAND, False, 1.0),
)
B200_MACHINES: tuple[_Row, ...] = (
    ("a4-highgpu-8g", 8, 224, 3968, _NO_ON_DEMAND, True, 1.0),
    ("a4-highgpu-8g-nolssd", 8, 224, 3968, _NO_ON_DEMAND, False, 1.0),
)
# A4X runs on NVIDIA Grace (Arm) hosts (GKE_MACHINES systemArchitecture Arm64): images must be
# multi-arch. A4X Max (GB300) is a bare-metal shape; projects must be allowlisted for it
# (cluster-toolkit examples/gke-a4x-max-bm/README.md).
GB200_MACHINES: tuple[_Row, ...] = (
    ("a4x-highgpu-4g", 4, 140, 884, _RESERVED_ONLY, True, 1.0),
    ("a4x-highgpu-4g-nolssd", 4, 140, 884, _RESERVED_ONLY, False, 1.0),
)
GB300_MACHINES: tuple[_Row, ...] = (
    ("a4x-maxgpu-4g-metal", 4, 144, 960, _RESERVED_ONLY, True, 1.0),
)


# Boot disk types per machine series: GKE_MACHINES supportedBootDiskTypes per family (the types
# GKE's autoscaler gives the nodes it creates) and, for A3 Ultra, its per-machine
# withSupportedDisksOverride([hyperdisk-balanced]) on a3-ultragpu-8g and -nolssd (BootDiskConfig,
# per the package's machine-config test). N1 and A2 take pd-standard, pd-balanced, pd-ssd; G2
# pd-balanced, pd-ssd; A3 High, Edge and Mega pd-balanced, pd-ssd, hyperdisk-balanced; A3 Ultra,
# A4, A4X (A4X Max too) and G4 only hyperdisk-balanced. Google's own blueprints agree: in
# GoogleCloudPlatform/cluster-toolkit at 1047080 (under examples/), disk_type:
# hyperdisk-balanced is set by gke-a4x/gke-a4x.yaml:242 (GKE), machine-learning/a3-ultragpu-8g/
# a3ultra-slurm-blueprint.yaml:624, a4-highgpu-8g/a4high-slurm-blueprint.yaml:637 and
# ml-slurm-g4.yaml:282 (VMs); its GKE A3 Ultra, A4 and G4 blueprints leave it to GKE (commit
# 3162e7fb, "Use default values for disk type ... in A3U blueprints", removed an explicit
# hyperdisk-balanced). GKE's node pool API default for these series (if it is not pd-balanced)
# is not documented on the pages read, so components/platform/nodepool.py names the type.
G2_BOOT_DISKS = (PD_BALANCED, PD_SSD)
A3_BOOT_DISKS = (PD_BALANCED, PD_SSD, HYPERDISK_BALANCED)
HYPERDISK_BOOT_ONLY = (HYPERDISK_BALANCED,)
# Persistent Disk volumes: GKE_MACHINES supportedAttachDiskTypes lists only Hyperdisk types for
# the A4, A4X and G4 families, so a pd-balanced volume cannot attach there. A3 Ultra takes none
# either: "You can't use Persistent Disk (regional or zonal). You can only use Google Cloud
# Hyperdisk" (AIH_LIMITS, A3 Ultra), though GKE_MACHINES's A3 family list, with no per-machine
# override, includes pd-balanced and pd-ssd; Google's page decides it.
NO_PD_VOLUMES = False


def sort_key(m: MachineType) -> tuple[int, bool, int, float, str]:
    """By GPU count, default shapes before named-only ones, then fewest vCPUs and least memory."""
    return (m.gpus, not m.by_default, m.vcpus, m.memory_gb, m.name)


def n1_machines(gpu: str) -> tuple[MachineType, ...]:
    """Every predefined N1 shape under the vCPU cap of each GPU count of `gpu`."""
    return tuple(
        sorted(
            (
                MachineType(name, count, vcpus, memory)
                for count, max_vcpus in N1_MAX_VCPUS[gpu].items()
                for name, vcpus, memory in N1_MACHINES
                if vcpus <= max_vcpus
            ),
            key=sort_key,
        )
    )


def fixed_machines(
    rows: tuple[_Row, ...],
    boot_disks: tuple[str, ...] = PD_BOOT_DISKS,
    pd_volumes: bool = True,
) -> tuple[MachineType, ...]:
    """The shapes of one machine series, with the boot disks and volumes the series takes."""
    return tuple(
        sorted(
            (
                MachineType(
                    name,
                    gpus,
                    vcpus,
                    memory,
                    consumption,
                    gpu_share=share,
                    by_default=default,
                    boot_disks=boot_disks,
                    pd_volumes=pd_volumes,
                    capacity_notes=CAPACITY_NOTES.get(name, ()),
                )
                for name, gpus, vcpus, memory, consumption, default, share in rows
            ),
            key=sort_key,
        )
    )


def is_custom_name(name: str) -> bool:
    """Whether `name` is spelled like an N1 custom machine type (valid or not)."""
    return _CUSTOM_N1.match(name) is not None


def custom_n1_problem(name: str) -> str | None:
    """Why `name` is not a valid N1 custom machine type, or None when it is one."""
    match = _CUSTOM_N1.match(name)
    if match is None:
        return f"{name!r} is not an N1 custom machine type (n1-custom-<vCPUs>-<memory MB>[-ext])"
    vcpus, memory_mb, extended = int(match[1]), int(match[2]), match[3] is not None
    if vcpus != 1 and (vcpus % 2 or vcpus > N1_CUSTOM_MAX_VCPUS or vcpus < 1):
        return f"N1 custom machine types have 1 or an even number of vCPUs up to 96, not {vcpus}"
    if memory_mb % N1_CUSTOM_MEMORY_STEP_MB:
        return f"N1 custom memory must be a multiple of 256 MB; {memory_mb} MB is not"
    if memory_mb < vcpus * N1_CUSTOM_MIN_MB_PER_VCPU:
        return (
            f"N1 custom machine types need at least {N1_CUSTOM_MIN_MB_PER_VCPU} MB per vCPU "
            f"({vcpus * N1_CUSTOM_MIN_MB_PER_VCPU} MB for {vcpus}); {memory_mb} MB is less"
        )
    if not extended and memory_mb > vcpus * N1_CUSTOM_MAX_MB_PER_VCPU:
        return (
            f"N1 custom machine types hold at most {N1_CUSTOM_MAX_MB_PER_VCPU} MB per vCPU "
            f"({vcpus * N1_CUSTOM_MAX_MB_PER_VCPU} MB for {vcpus}); add -ext for extended memory"
        )
    if memory_mb > N1_CUSTOM_MAX_EXTENDED_MB:
        return f"N1 custom memory is at most 624 GB ({N1_CUSTOM_MAX_EXTENDED_MB} MB)"
    return None


def custom_machine(name: str, gpus: int = 0) -> MachineType | None:
    """The shape of a valid N1 custom machine type (`gpus` attached), or None."""
    match = _CUSTOM_N1.match(name)
    if match is None or custom_n1_problem(name) is not None:
        return None
    return MachineType(
        name, gpus, int(match[1]), int(match[2]) / 1024, by_default=False, custom=True
    )
