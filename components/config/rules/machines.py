"""The system pool's machine type: a general-purpose shape that GKE's own system pods fit on."""

from __future__ import annotations

from ...facts import allocatable
from ...facts.catalog.machines import N1_MACHINES
from ..context import Context
from ..problems import Problem
from ..schema import ClusterSpec

# Sources (read 2026-11-23):
#   GKE_MACHINES: GKE's cluster autoscaler, package machinetypes (the file catalog/machines.py
#     cites): NewMachineTypeInfo(name, vCPUs, memory GB) of the E2, N1, N2 and N2D families.
#     e2-micro, e2-small (E2) and f1-micro, g1-small (N1) are only `otherMachineTypes` there,
#     never auto-provisioned, and "E2 shared core machines show 2 cores in the machine-types API,
#     but their allocatable and price are computed based off of 1 core".
#   GCE: https://cloud.google.com/compute/docs/general-purpose-machines lists the same shapes. Its
#     shared-core sections give the vCPU time each sustains (e2-micro 2 vCPUs at 12.5% each,
#     e2-small at 25%, e2-medium at 50%; f1-micro 0.2 and g1-small 0.5 of one vCPU).
#   F1: GKE refuses f1-micro: "Error 400: Node pools of f1-micro machines are not supported due to
#     insufficient memory" (quoted in github.com/nkoson/gke-tutorial/issues/7), and GKE's cluster
#     architecture page said "f1-micro machines are not supported, because they do not have
#     sufficient memory to run GKE" (quoted in gitlab.com/gitlab-org/gitlab/-/issues/228623).
#     No source said the same of e2-micro, e2-small or g1-small: those are refused here by the
#     rule below, which is this project's, not Google's.
# Other series (N4, C3, C4, T2D, Arm ones) are left out: N4 and C4 boot only from Hyperdisk
# (GKE_MACHINES supportedBootDiskTypes), which the system pool does not ask for; add a series with
# its source once a stack needs it.


def _series(prefix: str, vcpus: tuple[int, ...], gb_per_vcpu: float) -> dict[str, float]:
    return {f"{prefix}-{n}": n * gb_per_vcpu for n in vcpus}


_N2 = (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)
_N2D = (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224)

# Predefined general-purpose machine type -> memory GB (GKE_MACHINES; vCPUs are the name's last
# number). n2-highmem-128 has 864 GB, not 8 per vCPU; GKE_MACHINES gives n2d-highmem-96 786 GB
# where GCE has 768 (8 per vCPU), kept here.
GENERAL_PURPOSE: dict[str, float] = {
    **_series("e2-standard", (2, 4, 8, 16, 32), 4),
    **_series("e2-highmem", (2, 4, 8, 16), 8),
    **_series("e2-highcpu", (2, 4, 8, 16, 32), 1),
    **_series("n2-standard", _N2, 4),
    **_series("n2-highmem", _N2[:-1], 8),
    "n2-highmem-128": 864,
    **_series("n2-highcpu", _N2, 1),
    **_series("n2d-standard", _N2D, 4),
    **_series("n2d-highmem", _N2D[:-2], 8),
    **_series("n2d-highcpu", _N2D, 1),
    **{name: memory_gb for name, _, memory_gb in N1_MACHINES},
}

# Shared-core machine type -> (vCPUs the node counts, per GKE_MACHINES; vCPU time sustained, GCE;
# memory GB).
SHARED_CORE: dict[str, tuple[int, float, float]] = {
    "e2-micro": (1, 0.25, 1),
    "e2-small": (1, 0.5, 2),
    "e2-medium": (1, 1, 4),
    "f1-micro": (1, 0.2, 0.6),
    "g1-small": (1, 0.5, 1.7),
}

# The rule: a system node must sustain at least one whole vCPU. GKE's own DaemonSets on every node
# request about a third of a vCPU (components/facts/allocatable.py), and the system pool also runs
# kube-dns, metrics-server and the konnectivity agents; the scheduler counts a shared-core node
# as a whole core, so below one sustained vCPU those requests are promised CPU the VM does not
# have. e2-medium, GKE's default node machine type ("Cannot use default machine type (e2-medium)
# with GPUs", GKE's error in hashicorp/terraform-provider-google#8387), sustains exactly one.
MIN_SUSTAINED_VCPUS = 1
EXAMPLES = ("e2-standard-2", "e2-standard-4", "e2-medium", "n2-standard-2", "n2d-standard-2")


def _shared_core_problem(name: str) -> str | None:
    vcpus, sustained, memory_gb = SHARED_CORE[name]
    if sustained >= MIN_SUSTAINED_VCPUS:
        return None
    memory = allocatable.node_allocatable(vcpus, memory_gb).memory_bytes // allocatable.MiB
    refused = " GKE itself refuses it (insufficient memory)." if name == "f1-micro" else ""
    return (
        f"a shared-core machine that sustains {sustained:g} of a vCPU and leaves {memory} MiB of "
        f"allocatable memory: too small for GKE's system pods.{refused}"
    )


def system_pool_problems(spec: ClusterSpec, ctx: Context) -> list[Problem]:
    """cluster.systemPool.machineType must be a general-purpose type the system pods fit on
    (Standard only: Autopilot and existing clusters bring their own system nodes)."""
    if ctx.mode != "standard":
        return []
    path = "cluster.systemPool.machineType"
    name = spec.system_pool.machine_type
    shown = ctx.show(path, name)
    fix = f"Set {path} to e.g. {', '.join(EXAMPLES)}."
    if name in GENERAL_PURPOSE:
        return []
    if name in SHARED_CORE:
        why = _shared_core_problem(name)
        return [Problem(path, f"{shown} is {why} {fix}")] if why else []
    series = name.rsplit("-", 1)[0]
    sizes = sorted(int(n.rsplit("-", 1)[1]) for n in GENERAL_PURPOSE if n.startswith(series + "-"))
    if sizes:
        return [
            Problem(
                path,
                f"{shown} is not a predefined machine type ({series} comes with "
                f"{', '.join(map(str, sizes))} vCPUs). {fix}",
            )
        ]
    return [
        Problem(
            path,
            f"{shown} is not one of the general-purpose machine types this project knows (E2, "
            f"N2, N2D and N1 shapes; components/config/rules/machines.py). {fix}",
        )
    ]
