"""GKE GPU types: memory, MIG sizes, sharing, Autopilot counts, and the retired ones.

Sources (checked 2026-11-22), besides those of components/facts/catalog/machines.py:
  MIG_GO: GoogleCloudPlatform/container-engine-accelerators pkg/gpu/nvidia/mig/mig.go at
    992db812 (last changed in c591acb4, 2026-05-12): gpuPartitionSizeMaxCount, the partition sizes
    GKE's device plugin accepts. GKE hands the node pool's gpuPartitionSize to it unchanged
    (partition_gpu/partition_gpu.go reads it from /etc/nvidia/gpu_config.json), so its spelling
    ("1g.24gb+me") is the one a node pool takes.
  NVIDIA_MIG: https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-gpus.html (GPU
    memory and compute capability of the MIG-capable GPUs).
  GCE_GPUS: https://cloud.google.com/compute/docs/gpus (GPU models and their memory).
  WARDEN: GKE Autopilot's admission message, May 2025 (https://pastebin.com/cVrwvR2j): "allowed
    values are: [nvidia-a100-80gb, nvidia-h100-80gb, nvidia-h100-mega-80gb, nvidia-h200-141gb,
    nvidia-l4, nvidia-tesla-a100, nvidia-tesla-p100, nvidia-tesla-p4, nvidia-tesla-t4,
    nvidia-tesla-v100]".
  GCA_AUTOPILOT: Autopilot manifests in GoogleCloudPlatform/container-engine-accelerators at
    992db812: gpudirect-rdma/nccl-test-autopilot.yaml (pods with 8 x nvidia-h200-141gb),
    gpudirect-rdma/nccl-test-a4-autopilot.yaml (8 x nvidia-b200),
    gpudirect-tcpxo/nccl-test-latest-autopilot.yaml (8 x nvidia-h100-mega-80gb),
    gpudirect-tcpx/nccl-test-latest-autopilot.yaml (8 x nvidia-h100-80gb),
    nri_device_injector/nri-device-injector-autopilot.yaml (runs on nvidia-rtx-pro-6000 nodes).
"""

from __future__ import annotations

from . import machines as m
from .model import GpuType, MachineType

# One record per GPU type (GPU_TYPES below): its machines, Autopilot counts, MIG sizes, memory
# and compute capability in one place.
#
# autopilot: GPUs per pod that Autopilot accepts. Which types: WARDEN, plus B200 and RTX PRO 6000
# from GCA_AUTOPILOT. The per-pod counts on Google's autopilot-gpus page
# (https://cloud.google.com/kubernetes-engine/docs/how-to/autopilot-gpus) could not be read; the
# counts here are the GPU counts of the type's node shapes (Autopilot places a GPU pod on a node
# of exactly its count), confirmed for 8 x H200, 8 x B200, 8 x H100 and 8 x H100 Mega by
# GCA_AUTOPILOT. GB200 and GB300 on Autopilot are unconfirmed; listed so as not to refuse them.
#
# mig: MIG partition sizes, in MIG_GO's order. MIG_GO groups its sizes under comments naming the
# GPU ("//nvidia-h200-141gb"); H100 Mega takes the H100 sizes (GKE_GPUS lists the same five for
# it). GB300 has no size in MIG_GO, so GKE's device plugin would refuse any: no MIG.
RTX_PRO_6000_MIG = (
    "1g.24gb",
    "1g.24gb+me",
    "1g.24gb+gfx",
    "1g.24gb+me.all",
    "1g.24gb-me",
    "2g.48gb",
    "2g.48gb+gfx",
    "2g.48gb+me.all",
    "2g.48gb-me",
    "4g.96gb",
    "4g.96gb+gfx",
)
H100_MIG = ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "7g.80gb")

# GPU sharing on GKE Standard. Time-sharing: "You can enable GPU time-sharing on all NVIDIA GPU
# models" (https://cloud.google.com/kubernetes-engine/docs/how-to/timesharing-gpus). MPS: "You can
# enable NVIDIA MPS for all NVIDIA Tesla GPU types"
# (https://cloud.google.com/kubernetes-engine/docs/how-to/nvidia-mps-gpus); GKE's docs say "NVIDIA
# Tesla" of all their NVIDIA GPUs, so no type is excluded by either page.
TIME_SHARING = True
MPS = True


def _gpu(
    name: str,
    display_name: str,
    family: str,
    machines: tuple[MachineType, ...],
    *,
    memory_gb: int,
    compute_capability: tuple[int, int],
    series: tuple[str, ...],
    autopilot: tuple[int, ...],
    mig: tuple[str, ...] = (),
    unconfirmed: tuple[str, ...] = (),
) -> GpuType:
    return GpuType(
        name=name,
        display_name=display_name,
        family=family,
        machine_types=machines,
        autopilot_counts=autopilot,
        mig_partitions=mig,
        time_sharing=TIME_SHARING,
        mps=MPS,
        memory_gb=memory_gb,
        compute_capability=compute_capability,
        series=series,
        unconfirmed=(*unconfirmed, *_capacity_unconfirmed(machines)),
    )


def _capacity_unconfirmed(machines: tuple[MachineType, ...]) -> tuple[str, ...]:
    """The ways of buying its shapes the sources do not back (machines.py CAPACITY_NOTES), one
    entry per note: the ways, the shapes (-nolssd variants left out) and what the sources say."""
    ways: dict[str, list[str]] = {}
    shapes: dict[str, list[str]] = {}
    for machine in machines:
        for way, note in machine.capacity_notes:
            if way not in ways.setdefault(note, []):
                ways[note].append(way)
            if not machine.name.endswith("-nolssd") and machine.name not in shapes.get(note, []):
                shapes.setdefault(note, []).append(machine.name)
    return tuple(
        f"{' and '.join(ways[note])} for {', '.join(shapes[note])} ({note})" for note in ways
    )


_N1_UNCONFIRMED = (
    "Compute Engine's memory cap per GPU count on N1 (not encoded)",
    "Autopilot GPUs per pod (from node shapes, not Google's table)",
)

# Names and families per GKE_GPUS machineFamilyForGPU and TOOLKIT. GPU memory: NVIDIA_MIG for the
# MIG-capable GPUs (A100 40/80, H100 80, H200 141, B200 180, GB200 186, RTX PRO 6000 96), GCE_GPUS
# for T4 16, P4 8, P100 16, V100 16 and L4 24; GB300 288 GB per NVIDIA's NIM support matrix
# (https://docs.nvidia.com/nim/bionemo/boltz2/1.8.0/support-matrix.html). Compute capability:
# NVIDIA_MIG for the MIG-capable GPUs; T4 7.5, P4 6.1, P100 6.0, V100 7.0, L4 8.9 per
# https://developer.nvidia.com/cuda-gpus; GB300 10.3 ("B300/GB300 (sm_103)", NVIDIA/Model-Optimizer
# PR 2042).
GPU_TYPES: dict[str, GpuType] = {
    g.name: g
    for g in (
        *(
            _gpu(
                name,
                display_name,
                "n1",
                m.n1_machines(name),
                memory_gb=memory_gb,
                compute_capability=capability,
                series=("N1",),
                autopilot=autopilot,
                unconfirmed=_N1_UNCONFIRMED,
            )
            for name, display_name, memory_gb, capability, autopilot in (
                ("nvidia-tesla-t4", "NVIDIA T4", 16, (7, 5), (1, 2, 4)),
                ("nvidia-tesla-p4", "NVIDIA P4", 8, (6, 1), (1, 2, 4)),
                ("nvidia-tesla-p100", "NVIDIA P100", 16, (6, 0), (1, 2, 4)),
                ("nvidia-tesla-v100", "NVIDIA V100", 16, (7, 0), (1, 2, 4, 8)),
            )
        ),
        _gpu(
            "nvidia-l4",
            "NVIDIA L4",
            "g2",
            m.fixed_machines(m.L4_MACHINES, m.G2_BOOT_DISKS),
            memory_gb=24,
            compute_capability=(8, 9),
            series=("G2",),
            autopilot=(1, 2, 4, 8),
        ),
        _gpu(
            "nvidia-rtx-pro-6000",
            "NVIDIA RTX PRO 6000",
            "g4",
            m.fixed_machines(m.RTX_PRO_6000_MACHINES, m.HYPERDISK_BOOT_ONLY, m.NO_PD_VOLUMES),
            memory_gb=96,
            compute_capability=(12, 0),
            series=("G4",),
            autopilot=(1, 2, 4, 8),
            mig=RTX_PRO_6000_MIG,
            unconfirmed=(
                "GKE node pools on the fractional vGPU shapes g4-standard-6/12/24 (in GKE's "
                "autoscaler as named-only shapes; no GKE doc page read)",
                "MIG sizes with +me/+gfx/-me suffixes on GKE node pools (GKE's device plugin "
                "accepts them)",
                "Autopilot GPUs per pod (from node shapes)",
            ),
        ),
        _gpu(
            "nvidia-tesla-a100",
            "NVIDIA A100 40GB",
            "a2",
            m.fixed_machines(m.A100_40GB_MACHINES),
            memory_gb=40,
            compute_capability=(8, 0),
            series=("A2 Standard",),
            autopilot=(1, 2, 4, 8, 16),
            mig=("1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb"),
            unconfirmed=("Autopilot GPUs per pod (from node shapes)",),
        ),
        _gpu(
            "nvidia-a100-80gb",
            "NVIDIA A100 80GB",
            "a2",
            m.fixed_machines(m.A100_80GB_MACHINES),
            memory_gb=80,
            compute_capability=(8, 0),
            series=("A2 Ultra",),
            autopilot=(1, 2, 4, 8),
            mig=("1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"),
            unconfirmed=("Autopilot GPUs per pod (from node shapes)",),
        ),
        _gpu(
            "nvidia-h100-80gb",
            "NVIDIA H100 80GB",
            "a3",
            m.fixed_machines(m.H100_MACHINES, m.A3_BOOT_DISKS),
            memory_gb=80,
            compute_capability=(9, 0),
            series=("A3 High", "A3 Edge"),
            autopilot=(1, 2, 4, 8),
            mig=H100_MIG,
            unconfirmed=("Autopilot 1, 2 and 4 GPUs per pod (8 confirmed)",),
        ),
        _gpu(
            "nvidia-h100-mega-80gb",
            "NVIDIA H100 80GB Mega",
            "a3",
            m.fixed_machines(m.H100_MEGA_MACHINES, m.A3_BOOT_DISKS),
            memory_gb=80,
            compute_capability=(9, 0),
            series=("A3 Mega",),
            autopilot=(8,),
            mig=H100_MIG,
        ),
        _gpu(
            "nvidia-h200-141gb",
            "NVIDIA H200 141GB",
            "a3",
            m.fixed_machines(m.H200_MACHINES, m.HYPERDISK_BOOT_ONLY, m.NO_PD_VOLUMES),
            memory_gb=141,
            compute_capability=(9, 0),
            series=("A3 Ultra",),
            autopilot=(8,),
            mig=("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
        ),
        _gpu(
            "nvidia-b200",
            "NVIDIA B200",
            "a4",
            m.fixed_machines(m.B200_MACHINES, m.HYPERDISK_BOOT_ONLY, m.NO_PD_VOLUMES),
            memory_gb=180,
            compute_capability=(10, 0),
            series=("A4",),
            autopilot=(8,),
            mig=("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"),
        ),
        _gpu(
            "nvidia-gb200",
            "NVIDIA GB200",
            "a4x",
            m.fixed_machines(m.GB200_MACHINES, m.HYPERDISK_BOOT_ONLY, m.NO_PD_VOLUMES),
            memory_gb=186,
            compute_capability=(10, 0),
            series=("A4X",),
            autopilot=(4,),
            mig=("1g.23gb", "1g.47gb", "2g.47gb", "3g.93gb", "4g.93gb", "7g.186gb"),
            unconfirmed=("GB200 on Autopilot",),
        ),
        _gpu(
            "nvidia-gb300",
            "NVIDIA GB300",
            "a4x",
            m.fixed_machines(m.GB300_MACHINES, m.HYPERDISK_BOOT_ONLY, m.NO_PD_VOLUMES),
            memory_gb=288,
            compute_capability=(10, 3),
            series=("A4X Max",),
            autopilot=(4,),
            unconfirmed=("GB300 on Autopilot",),
        ),
    )
}

# GPU types GKE no longer offers -> advice for the error message.
# Source: K80 "has reached end of support, see https://cloud.google.com/compute/docs/eol/k80-eol"
# (Vertex AI's AcceleratorType reference, https://cloud.google.com/vertex-ai/docs/reference/rest/
# v1/MachineSpec); Google's own samples moved from K80 to T4 for that reason
# (GoogleCloudPlatform/java-docs-samples PR 9342). P4, P100 and V100 are still offered, and
# Autopilot still admits them (WARDEN), so they are not here.
RETIRED: dict[str, str] = {
    "nvidia-tesla-k80": (
        "Compute Engine ended support for NVIDIA K80 GPUs "
        "(https://cloud.google.com/compute/docs/eol/k80-eol); use nvidia-tesla-t4 instead"
    ),
}
