"""`python -m tools.gpus`: print the GPU catalog (every GKE GPU type, or one with --type).

Exit 0 with the catalog; 2 when --type names a GPU GKE does not offer (the message says why and,
for a retired type, what replaces it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from components.facts import catalog
from components.facts.catalog import GpuType, MachineType

EXIT_OK, EXIT_UNKNOWN = 0, 2


def _counts(values: tuple[int, ...]) -> str:
    return ", ".join(map(str, values)) or "-"


def summary_lines() -> list[str]:
    """One line per GPU type: what a user compares first."""
    rows = [("type", "memory", "GPUs/node", "Autopilot GPUs/pod", "MIG", "sold")]
    rows += [
        (
            gpu.name,
            f"{gpu.memory_gb} GB",
            _counts(gpu.node_counts),
            _counts(gpu.autopilot_counts) if gpu.autopilot_counts else "no",
            f"{len(gpu.mig_partitions)} sizes" if gpu.mig_partitions else "no",
            row[-1],
        )
        for gpu, row in zip(catalog.GPU_TYPES.values(), catalog.gpu_rows(), strict=True)
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.append("")
    lines.append("Details and machine shapes: python -m tools.gpus --type <type>")
    return lines


def _machine_line(m: MachineType) -> str:
    gpus = f"1/{round(1 / m.gpu_share)} GPU" if m.gpu_share < 1 else f"{m.gpus} GPU"
    ways = ", ".join(w for w in catalog.CONSUMPTION_ORDER if w in m.consumption)
    named = "  (only when named)" if not m.by_default else ""
    return f"  {m.name:<24} {gpus:<9} {m.vcpus:>4} vCPUs {m.memory_gb:>8g} GB  {ways}{named}"


def detail_lines(gpu: GpuType) -> list[str]:
    """Everything the catalog knows about one GPU type."""
    major, minor = gpu.compute_capability
    lines = [
        f"{gpu.name}: {gpu.display_name}, {gpu.memory_gb} GB, compute capability {major}.{minor}",
        f"  series: {', '.join(gpu.series)}",
        f"  GPUs per node (Standard): {_counts(gpu.node_counts)}",
        "  GPUs per pod (Autopilot): "
        + (_counts(gpu.autopilot_counts) if gpu.autopilot_counts else "not on Autopilot"),
        f"  MIG partition sizes: {', '.join(gpu.mig_partitions) or 'none'}",
        f"  time-sharing: {'yes' if gpu.time_sharing else 'no'}; MPS: {'yes' if gpu.mps else 'no'}",
        "",
        "machine types:",
    ]
    if gpu.family == "n1":
        caps = catalog.N1_MAX_VCPUS[gpu.name]
        lines += [
            "  any predefined N1 type or N1 custom type (n1-custom-<vCPUs>-<memory MB>[-ext]) "
            "within the vCPU cap:",
            *(f"  {count} GPU: up to {cap} vCPUs" for count, cap in caps.items()),
        ]
    else:
        lines += [_machine_line(m) for m in gpu.machine_types]
    if gpu.unconfirmed:
        lines += ["", "not confirmed by the sources (allowed, not refused):"]
        lines += [f"  - {note}" for note in gpu.unconfirmed]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gpus", description=__doc__)
    parser.add_argument("--type", help="one GPU type, e.g. nvidia-l4")
    parser.add_argument(
        "--markdown", action="store_true", help="docs/gpus.md's GPU table (Markdown)"
    )
    args = parser.parse_args(argv)
    if args.markdown:
        print(catalog.readme_table(), end="")
        return EXIT_OK
    if args.type is None:
        print("\n".join(summary_lines()))
        return EXIT_OK
    try:
        gpu = catalog.lookup(args.type)
    except KeyError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return EXIT_UNKNOWN
    print("\n".join(detail_lines(gpu)))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
