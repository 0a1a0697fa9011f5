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
