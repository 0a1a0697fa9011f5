"""The report: each case run and judged as a report.json entry, and the per-class table."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from dev.fuzz.case import CLASSES
from dev.fuzz.generate import case_for
from dev.fuzz.judge import COLUMNS, judge
from dev.fuzz.run import run_render

# The table's titles for COLUMNS, in that order.
HEADERS = (
    "crashes",
    "leaks",
    "pathless",
    "bad accepted",
    "unreported",
    "good rejected",
    "wrong plan",
)


def run_case(seed: int, index: int, out: Path, keep: bool) -> dict[str, Any]:
    """Case `index` rendered and judged, as its report.json entry; its files kept if it failed."""
    case = case_for(seed, index)
    workdir = out / "cases" / f"{index:05d}"
    started = time.perf_counter()
    outcome = run_render(case, workdir)
    verdict = judge(case, outcome)
    failures = verdict.failures()
    if not failures and not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return {
        "index": index,
        "base": case.base,
        "stack": case.stack,
        "classes": case.classes,
        "mutations": [m.name for m in case.mutations],
        "expectedInvalid": case.invalid,
        "code": outcome.code,
        "seconds": round(time.perf_counter() - started, 3),
        "failures": failures,
        "problems": outcome.problems[:20],
    }


def run_in_worker(job: tuple[int, int, str, bool]) -> dict[str, Any]:
    """`run_case` for a worker process (one picklable argument)."""
    seed, index, out, keep = job
    return run_case(seed, index, Path(out), keep)


def table(results: list[dict[str, Any]], group: str) -> list[list[str]]:
    """A row per class or mutation (`group`: "classes" or "mutations") and a total: how many
    cases, and how many of them failed each check."""
    width = 1 + len(COLUMNS)
    keys = CLASSES if group == "classes" else sorted({m for r in results for m in r[group]})
    rows = {key: [0] * width for key in [*keys, "total"]}
    for r in results:
        for key in [*sorted(set(r[group])), "total"]:
            row = rows.setdefault(key, [0] * width)
            row[0] += 1
            for n, column in enumerate(COLUMNS, start=1):
                row[n] += bool(r["failures"].get(column))
    return [[key, *map(str, row)] for key, row in rows.items()]


def print_table(rows: list[list[str]], first: str) -> None:
    """The rows under a header line, the first column (titled `first`) left-aligned."""
    header = [first, "cases", *HEADERS]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    for row in [header, *rows]:
        print(
            "  ".join(
                str(x).rjust(w) if n else str(x).ljust(w)
                for n, (x, w) in enumerate(zip(row, widths, strict=True))
            )
        )


def write_report(out: Path, seed: int, count: int, seconds: float, results: list[Any]) -> Path:
    """report.json: the run's seed, count and time, and every case's entry."""
    path = out / "report.json"
    path.write_text(
        json.dumps({"seed": seed, "count": count, "seconds": seconds, "cases": results}, indent=1)
        + "\n"
    )
    return path
