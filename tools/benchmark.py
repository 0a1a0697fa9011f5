"""Times the offline plan against the cost of importing the Pulumi SDKs, in one run.

`python -m tools.benchmark [--runs N]` measures, each as the median of N fresh processes:
- floor: `import pulumi, pulumi_gcp, pulumi_kubernetes` (the packages load their modules lazily,
  so this imports almost none of the resource classes);
- sdk floor: the same plus the SDK modules the program registers resources from;
- render of the dev stack, and of a generated Standard stack with 8 GPU pools and 40 exposed
  workloads (`tools.benchmark --write-large FILE` writes that stack file).
It prints each time and its ratio to both floors.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from tools.engine import ROOT

FLOOR = "import pulumi, pulumi_gcp, pulumi_kubernetes"
SDK_FLOOR = (
    FLOOR + "; import pulumi_gcp.container, pulumi_gcp.serviceaccount, pulumi_gcp.projects, "
    "pulumi_kubernetes.core.v1, pulumi_kubernetes.apps.v1, pulumi_kubernetes.batch.v1"
)
LARGE_POOLS = 8
LARGE_WORKLOADS = 40


def large_stack() -> dict[str, Any]:
    """8 GPU pools and 40 exposed workloads: a big team's Standard cluster."""
    shapes = [("nvidia-l4", 1), ("nvidia-l4", 2), ("nvidia-l4", 4), ("nvidia-tesla-t4", 1)]
    pools = []
    for i in range(LARGE_POOLS):
        gpu, count = shapes[i % len(shapes)]
        pools.append(
            {
                "name": f"pool-{i}",
                "gpu": {"type": gpu, "count": count},
                "spot": i >= len(shapes),
                "maxNodes": 4,
                "zones": ["us-central1-a", "us-central1-b"],
            }
        )
    workloads = []
    for i in range(LARGE_WORKLOADS):
        gpu, count = shapes[i % len(shapes)]
        workloads.append(
            {
                "name": f"svc-{i}",
                "image": "vllm/vllm-openai:v0.6.4",
                "gpu": {"type": gpu, "count": count},
                "spot": (i // len(shapes)) % 2 == 1,
                "resources": {"cpu": "2", "memory": "8Gi"},
                "probe": {"path": "/health"},
                "expose": {"port": 80, "sourceRanges": ["203.0.113.0/24"]},
            }
        )
    return {
        "config": {
            "gcp:project": "acme-ml-bench",
            "gcp:region": "us-central1",
            "gke-gpu:cluster": {"mode": "standard", "deletionProtection": False},
            "gke-gpu:nodePools": pools,
            "gke-gpu:workloads": workloads,
        }
    }


def _time(argv: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.benchmark")
    parser.add_argument("--runs", type=int, default=5, help="processes per measurement")
    parser.add_argument("--write-large", type=Path, help="write the large stack file and exit")
    args = parser.parse_args(argv)
    if args.write_large:
        args.write_large.write_text(yaml.safe_dump(large_stack(), sort_keys=False))
        return 0
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        large = Path(tmp) / "Pulumi.large.yaml"
        large.write_text(yaml.safe_dump(large_stack(), sort_keys=False))
        render = [python, "-m", "tools.render"]
        times = {
            "floor": _time([python, "-c", FLOOR], args.runs),
            "sdk floor": _time([python, "-c", SDK_FLOOR], args.runs),
            "render dev": _time([*render, "dev", "--out", f"{tmp}/dev"], args.runs),
            "render large": _time(
                [*render, "large", "--stack-file", str(large), "--out", f"{tmp}/large"], args.runs
            ),
        }
    floor, sdk = times["floor"], times["sdk floor"]
    print(
        f"median of {args.runs} processes each; large = {LARGE_POOLS} pools, "
        f"{LARGE_WORKLOADS} exposed workloads"
    )
    for name, seconds in times.items():
        print(
            f"  {name:13} {seconds:6.3f} s  {seconds / floor:5.2f}x floor  "
            f"{seconds / sdk:5.2f}x sdk floor"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
