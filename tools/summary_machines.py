"""The offline plan's words on the machines a stack buys: a way of buying one that no source
confirms (a `!` line), and the StorageClass its cache disk takes where only Hyperdisk attaches."""

from __future__ import annotations

from components.config import NodePoolConfig, StackConfig, WorkloadConfig
from components.config.rules.capacity_sources import consumption_of
from components.config.rules.workloads import hyperdisk_only_gpus
from components.facts import catalog

# How a stack file buys a machine each way (the pool's or the fallback priority's keys).
_HOW = {
    catalog.ON_DEMAND: "on-demand (no spot, flexStart or reservation)",
    catalog.SPOT: "Spot (spot: true)",
    catalog.FLEX_START: "flex-start (flexStart: true)",
    catalog.RESERVATION: "a reservation (reservation: {name: ...})",
}


def capacity_line(machine_name: str, way: str, who: str) -> list[str]:
    """A `!` line when the sources do not back buying `machine_name` `way` (catalog.model
    MachineType.capacity_notes); none otherwise, or for a machine the catalog does not know."""
    machine = catalog.machine_type(machine_name)
    note = machine.capacity_note(way) if machine is not None else None
    if machine is None or note is None:
        return []
    documented = [
        _HOW[w]
        for w in catalog.CONSUMPTION_ORDER
        if w in machine.consumption and machine.capacity_note(w) is None
    ]
    return [
        f"            ! {who}: {machine_name} bought {way} is not confirmed ({note}); check "
        "your GPU quota and that your zones have the capacity before relying on it, or buy it "
        f"the documented way: {', '.join(documented)}"
    ]


def pool_capacity_lines(pool: NodePoolConfig) -> list[str]:
    """The pool's `!` line, if its machine bought its way is not confirmed."""
    way = consumption_of(pool.spot, pool.flex_start, pool.reservation)
    return capacity_line(pool.machine_type, way, f"pool {pool.name}")


def workload_capacity_lines(w: WorkloadConfig) -> list[str]:
    """The `!` lines of the nodes GKE creates for a workload without a pool: each ComputeClass
    priority's, else Autopilot's node for the pod (a pool's workloads: pool_capacity_lines)."""
    if w.node_pool is not None:
        return []
    if w.capacity:
        return [
            line
            for n, c in enumerate(w.capacity, 1)
            for line in capacity_line(
                c.machine_type,
                consumption_of(c.spot, c.flex_start, c.reservation),
                f"priority {n} of workload {w.spec.name}",
            )
        ]
    if w.pod_machine is None:
        return []
    way = consumption_of(w.spec.spot, False, None)
    return capacity_line(w.pod_machine, way, f"workload {w.spec.name}'s nodes")


def cache_class_lines(config: StackConfig, w: WorkloadConfig) -> list[str]:
    """The StorageClass a named cache disk takes; where the workload's machines attach only
    Hyperdisk volumes (A3 Ultra, A4, A4X, G4), that it is a Hyperdisk class and why (the config
    refuses GKE's Persistent Disk classes there: rules/workloads.py cache_disk_problems)."""
    cache = w.spec.cache
    if cache is None or cache.storage_class is None:
        return []
    line = f"            cache disk: StorageClass {cache.storage_class}"
    gpus = hyperdisk_only_gpus(w.spec) if config.cluster.mode != "existing" else []
    if gpus:
        line += (
            f", a Hyperdisk class ({', '.join(gpus)} machines attach only Hyperdisk volumes; it "
            "must exist before the pods start)"
        )
    return [line]
