"""GKE GPU catalog: GPU types, the machine types that carry them, sharing, Autopilot, how sold.

The facts and their sources live in `machines.py` (machine shapes, N1 custom rules, consumption)
and `gpus.py` (GPU types, MIG sizes, Autopilot counts, retired types); `table.py` renders them for
docs/gpus.md and `python -m tools.gpus`. Everything here is a plain function of those tables.
"""

from __future__ import annotations

from .gpus import GPU_TYPES, RETIRED
from .machines import N1_MAX_VCPUS, custom_machine, custom_n1_problem, is_custom_name
from .model import (
    ALL_CONSUMPTION,
    CONSUMPTION_ORDER,
    FLEX_START,
    ON_DEMAND,
    RESERVATION,
    SPOT,
    GpuType,
    MachineType,
)
from .table import gpu_rows, readme_table

__all__ = [
    "ALL_CONSUMPTION",
    "CONSUMPTION_ORDER",
    "FLEX_START",
    "GPU_TYPES",
    "N1_MAX_VCPUS",
    "ON_DEMAND",
    "RESERVATION",
    "RETIRED",
    "SPOT",
    "GpuType",
    "MachineType",
    "custom_machine",
    "gpu_rows",
    "lookup",
    "machine_for",
    "machine_problem",
    "machine_type",
    "machine_types_for",
    "readme_table",
    "smallest_machine_type",
]


def lookup(name: str) -> GpuType:
    """The GPU type called `name`; KeyError saying why when GKE does not offer it."""
    if name in GPU_TYPES:
        return GPU_TYPES[name]
    if name in RETIRED:
        raise KeyError(f"{name} is retired: {RETIRED[name]}")
    raise KeyError(f"{name} is not a GKE GPU type; known types: {', '.join(sorted(GPU_TYPES))}")


def machine_types_for(gpu: str, count: int) -> tuple[MachineType, ...]:
    """Predefined shapes a default may pick for `count` of `gpu`, smallest (vCPUs, memory) first.

    Shapes GKE takes only when named (fractional vGPU, -nolssd, A3 Edge) and N1 custom types are
    left out; `machine_for` accepts those when a user names them.
    """
    return tuple(m for m in lookup(gpu).machine_types if m.gpus == count and m.by_default)


def smallest_machine_type(gpu: str, count: int) -> MachineType:
    """The machine type with fewest vCPUs, then least memory, carrying `count` of `gpu`."""
    fitting = machine_types_for(gpu, count)
    if not fitting:
        allowed = ", ".join(str(c) for c in lookup(gpu).node_counts)
        raise ValueError(f"no machine type carries {count} x {gpu} (GPUs per node: {allowed})")
    return fitting[0]


def machine_type(name: str) -> MachineType | None:
    """The first catalog entry named `name`, else the parsed N1 custom type, else None.

    An N1 type appears once per GPU count, so its `gpus` is only that first entry's count; use
    `machine_for` to ask about a given GPU and count.
    """
    for gpu in GPU_TYPES.values():
        for machine in gpu.machine_types:
            if machine.name == name:
                return machine
    return custom_machine(name)


def machine_for(gpu: str, count: int, machine_name: str) -> MachineType | None:
    """The shape of `machine_name` carrying `count` x `gpu`, or None when it cannot.

    Accepts every predefined shape (named-only ones included) and N1 custom machine types within
    Compute Engine's custom rules and the vCPU cap of `count` GPUs on N1.
    """
    if machine_problem(gpu, count, machine_name) is not None:
        return None
    for machine in lookup(gpu).machine_types:
        if machine.name == machine_name and machine.gpus == count:
            return machine
    return custom_machine(machine_name, count)


def machine_problem(gpu: str, count: int, machine_name: str) -> str | None:
    """Why `machine_name` cannot carry `count` x `gpu` (one sentence), or None when it can."""
    kind = lookup(gpu)
    if any(m.name == machine_name and m.gpus == count for m in kind.machine_types):
        return None
    family = "n1" if is_custom_name(machine_name) else machine_name.split("-")[0]
    if family != kind.family:
        return (
            f"{machine_name!r} is {family.upper()}, but {gpu} runs on "
            f"{kind.family.upper()} machine types"
        )
    if family == "n1":
        return _n1_problem(gpu, count, machine_name)
    named = sorted({m.gpus for m in kind.machine_types if m.name == machine_name})
    if named:
        return f"{machine_name!r} carries {', '.join(map(str, named))} x {gpu}, not {count}"
    return f"{machine_name!r} is not a machine type GKE offers with {gpu}"


def _n1_problem(gpu: str, count: int, machine_name: str) -> str | None:
    if count not in N1_MAX_VCPUS[gpu]:
        counts = ", ".join(str(c) for c in N1_MAX_VCPUS[gpu])
        return f"N1 VMs take {counts} x {gpu}, not {count}"
    shape = custom_machine(machine_name, count) if is_custom_name(machine_name) else None
    if is_custom_name(machine_name) and shape is None:
        return custom_n1_problem(machine_name)
    if shape is None:
        shape = next((m for m in GPU_TYPES[gpu].machine_types if m.name == machine_name), None)
    if shape is None:
        return f"{machine_name!r} is not an N1 machine type that takes GPUs"
    cap = N1_MAX_VCPUS[gpu][count]
    if shape.vcpus > cap:
        return (
            f"{count} x {gpu} allows at most {cap} vCPUs on N1; {machine_name!r} has {shape.vcpus}"
        )
    return None
