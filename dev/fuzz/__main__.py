"""The command line: `python -m dev.fuzz --count 1000 --seed 0 [--out build/fuzz] [--jobs 2]
[--by-mutation] [--min-per-mutation 3]`; exits 1 when a case fails a check, a base is not a valid
stack, or a registered mutation was applied in fewer than --min-per-mutation cases (a short run
that never tried a mutation proves nothing about it)."""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dev import fuzz
from dev.fuzz.bases import base_case, bases
from dev.fuzz.mutations import MUTATIONS
from dev.fuzz.report import print_table, run_in_worker, table, write_report
from dev.fuzz.run import run_render
from tools.engine import ROOT


def check_bases(out: Path) -> list[str]:
    """Bases that do not render as a valid plan unchanged: mutating them proves nothing."""
    broken = []
    for name in bases():
        outcome = run_render(
            base_case(name, random.Random(0)), out / "bases" / name.replace("/", "_")
        )
        if outcome.code not in (0, 1):
            broken.append(f"{name} (exit {outcome.code}, {outcome.crash or outcome.problems[:2]})")
    return broken


def too_rare(results: list[dict[str, Any]], minimum: int) -> list[str]:
    """Registered mutations applied in fewer than `minimum` of the cases, with their counts."""
    applied = Counter(m for r in results for m in r["mutations"])
    return [f"{s.name} ({applied[s.name]})" for s in MUTATIONS if applied[s.name] < minimum]


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the cases, prints the table, writes report.json; 1 when anything failed."""
    parser = argparse.ArgumentParser(
        prog="python -m dev.fuzz",
        description=fuzz.__doc__.splitlines()[0] if fuzz.__doc__ else None,
    )
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "fuzz")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--keep", action="store_true", help="keep passing cases' files too")
    parser.add_argument("--by-mutation", action="store_true", help="also a row per mutation")
    parser.add_argument(
        "--min-per-mutation",
        type=int,
        default=0,
        metavar="N",
        help="fail unless every registered mutation is applied in at least N cases",
    )
    args = parser.parse_args(argv)

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    started = time.perf_counter()
    broken = check_bases(args.out)
    if broken:
        print("bases that are not valid stacks unchanged (their cases are still run):")
        for line in broken:
            print(f"  {line}")
    jobs = [(args.seed, i, str(args.out), args.keep) for i in range(args.count)]
    if args.jobs > 1:
        import multiprocessing

        # spawn, not fork: the parent has grpc threads running after the base renders.
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            results = pool.map(run_in_worker, jobs, chunksize=8)
    else:
        results = [run_in_worker(job) for job in jobs]
    elapsed = time.perf_counter() - started

    report = write_report(args.out, args.seed, args.count, elapsed, results)
    print_table(table(results, "classes"), "class")
    if args.by_mutation:
        print()
        print_table(table(results, "mutations"), "mutation")
    codes = {c: sum(r["code"] == c for r in results) for c in (0, 1, 2, None)}
    print(
        f"\n{args.count} cases in {elapsed:.0f} s (exit 0: {codes[0]}, 1: {codes[1]}, "
        f"2: {codes[2]}, crashed: {codes[None]}); details in {report}"
    )
    rare = too_rare(results, args.min_per_mutation)
    if rare:
        print(
            f"mutations applied in fewer than {args.min_per_mutation} of the {args.count} cases "
            f"(raise --count): {', '.join(rare)}"
        )
    failed = sum(bool(r["failures"]) for r in results)
    return 1 if failed or broken or rare else 0


if __name__ == "__main__":
    sys.exit(main())
