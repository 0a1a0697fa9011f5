"""The catalog's record types: a machine shape that carries GPUs, and a GKE GPU type."""

from __future__ import annotations

from dataclasses import dataclass, field

# How Compute Engine sells a machine (its "consumption options"): on demand, as Spot VMs, through
# flex-start (Dynamic Workload Scheduler) or only from a reservation. Names follow
# https://cloud.google.com/ai-hypercomputer/docs/consumption-models (checked 2026-11-22).
ON_DEMAND = "on-demand"
SPOT = "spot"
FLEX_START = "flex-start"
RESERVATION = "reservation"
CONSUMPTION_ORDER = (ON_DEMAND, SPOT, FLEX_START, RESERVATION)
ALL_CONSUMPTION = frozenset(CONSUMPTION_ORDER)

# Compute Engine disk types a node's boot disk can be (GKE's --disk-type values, "Configuring a
# custom boot disk", https://cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks).
# GKE's default is pd-balanced (the same page: "By default, GKE uses balanced Persistent Disks in
# version 1.24 or later"); which series take which: components/facts/catalog/machines.py.
PD_STANDARD = "pd-standard"
PD_BALANCED = "pd-balanced"
PD_SSD = "pd-ssd"
HYPERDISK_BALANCED = "hyperdisk-balanced"
PD_BOOT_DISKS = (PD_STANDARD, PD_BALANCED, PD_SSD)


@dataclass(frozen=True)
class MachineType:
    name: str  # "g2-standard-8"
    gpus: int  # GPUs attached to this machine type for this accelerator
    vcpus: int
    memory_gb: float  # Compute Engine GB, which are GiB (2**30 bytes) per its pricing page
    consumption: frozenset[str] = ALL_CONSUMPTION
    """How Compute Engine sells this shape: a subset of CONSUMPTION_ORDER."""
    gpu_share: float = 1.0
    """Share of one physical GPU per attached GPU: 0.125 for a 1/8 vGPU G4 shape, else 1."""
    by_default: bool = True
    """False for shapes GKE takes only when named (fractional vGPU, no-local-SSD and regional
    variants, custom N1): a default machine type is never one of them."""
    custom: bool = False
    """An N1 custom machine type parsed from its name (`n1-custom-4-20480`)."""
    boot_disks: tuple[str, ...] = PD_BOOT_DISKS
    """Disk types its boot disk can be (its machine series'); N1's by default."""
    pd_volumes: bool = True
    """Whether Persistent Disk volumes (GKE's default StorageClass) attach to it."""
    capacity_notes: tuple[tuple[str, str], ...] = ()
    """(way, what the sources say) for ways of buying it that `consumption` allows but no source
    confirms: not refused, and the offline plan flags a pool or priority that buys it so."""

    def capacity_note(self, way: str) -> str | None:
        """What the sources say of buying it `way` (CONSUMPTION_ORDER), when they do not back it."""
        return dict(self.capacity_notes).get(way)

    @property
    def boot_disk_type(self) -> str | None:
        """The boot disk type a node pool must name: None when GKE's default (pd-balanced)
        boots it, else the first type its series takes (hyperdisk-balanced on A3 Ultra, A4,
        A4X, G4)."""
        return None if PD_BALANCED in self.boot_disks else self.boot_disks[0]


@dataclass(frozen=True)
class GpuType:
    name: str  # GKE `--accelerator type=` name, e.g. "nvidia-l4"
    display_name: str  # "NVIDIA L4"
    family: str  # machine family prefix: "n1", "g2", "g4", "a2", "a3", "a4", "a4x"
    machine_types: tuple[MachineType, ...]  # by GPU count, default shapes first, then smallest
    autopilot_counts: tuple[int, ...]  # GPUs per pod on Autopilot; () = not on Autopilot
    mig_partitions: tuple[str, ...]  # () = no MIG
    time_sharing: bool
    mps: bool
    memory_gb: int = 0
    """GPU memory of one GPU, GB as NVIDIA and Google state it."""
    compute_capability: tuple[int, int] = (0, 0)
    """CUDA compute capability (major, minor): decides which CUDA builds run on it."""
    series: tuple[str, ...] = ()
    """Compute Engine machine series that carry it, e.g. ("A3 High", "A3 Edge")."""
    unconfirmed: tuple[str, ...] = field(default=())
    """Facts about this type the sources could not confirm; shown by `python -m tools.gpus`."""

    @property
    def node_counts(self) -> tuple[int, ...]:
        """Sorted distinct GPU counts a Standard node of this type can have."""
        return tuple(sorted({m.gpus for m in self.machine_types}))

    @property
    def consumption(self) -> frozenset[str]:
        """Every way any of its predefined machine shapes is sold."""
        return frozenset().union(*(m.consumption for m in self.machine_types))
