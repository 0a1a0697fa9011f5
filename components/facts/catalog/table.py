"""The catalog as a table: docs/gpus.md's GPU table and `python -m tools.gpus`."""

from __future__ import annotations

from itertools import groupby

from .gpus import GPU_TYPES
from .machines import N1_MAX_VCPUS
from .model import CONSUMPTION_ORDER, RESERVATION, GpuType, MachineType

HEADERS = (
    "GPU type",
    "machine types (GPUs per node)",
    "GPU memory",
    "Autopilot GPUs per pod",
    "MIG partition sizes",
    "sharing",
    "how it is sold",
)
_CONSUMPTION_LABELS = {"on-demand": "on-demand", "spot": "Spot", "flex-start": "flex-start"}


def _shapes(gpu: GpuType) -> str:
    if gpu.name in N1_MAX_VCPUS:
        caps = "; ".join(f"{c}: up to {v} vCPUs" for c, v in N1_MAX_VCPUS[gpu.name].items())
        return f"N1 predefined or custom ({caps})"
    defaults = [m for m in gpu.machine_types if m.by_default]
    parts = [
        f"{', '.join(m.name for m in group)} ({count})"
        for count, group in groupby(defaults, key=lambda m: m.gpus)
    ]
    named = [m for m in gpu.machine_types if not m.by_default and not m.name.endswith("-nolssd")]
    if named:
        parts.append("named only: " + ", ".join(_named(m) for m in named))
    if any(m.name.endswith("-nolssd") for m in gpu.machine_types):
        parts.append("-nolssd variants")
    return "; ".join(parts)


def _named(m: MachineType) -> str:
    if m.gpu_share < 1:
        return f"{m.name} (1/{round(1 / m.gpu_share)} GPU)"
    return f"{m.name} ({m.gpus})"


def _sold(gpu: GpuType) -> str:
    ways = frozenset().union(*(m.consumption for m in gpu.machine_types if m.by_default))
    if ways == {RESERVATION}:
        return "reservation only"
    return ", ".join(_CONSUMPTION_LABELS.get(w, w) for w in CONSUMPTION_ORDER if w in ways)


def _sharing(gpu: GpuType) -> str:
    return (
        ", ".join(name for name, on in (("time-sharing", gpu.time_sharing), ("MPS", gpu.mps)) if on)
        or "none"
    )


def gpu_rows(gpus: list[GpuType] | None = None) -> list[tuple[str, ...]]:
    """One row of HEADERS' columns per GPU type, in catalog order."""
    return [
        (
            f"`{gpu.name}` ({gpu.display_name})",
            _shapes(gpu),
            f"{gpu.memory_gb} GB",
            ", ".join(map(str, gpu.autopilot_counts)) or "not on Autopilot",
            ", ".join(gpu.mig_partitions) or "no MIG",
            _sharing(gpu),
            _sold(gpu),
        )
        for gpu in (gpus if gpus is not None else list(GPU_TYPES.values()))
    ]


def readme_table() -> str:
    """docs/gpus.md's GPU table and its list of unconfirmed facts, as Markdown."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(row) + " |" for row in gpu_rows()]
    lines += [
        "",
        "Not confirmed by the sources (allowed, not refused; GKE's own error decides):",
        "",
    ]
    lines += [
        f"- `{gpu.name}`: {'; '.join(gpu.unconfirmed)}"
        for gpu in GPU_TYPES.values()
        if gpu.unconfirmed
    ]
    return "\n".join(lines) + "\n"
