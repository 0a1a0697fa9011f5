"""The real-cloud test's judgements (.github/workflows/cloud-test.yml), on `pulumi preview --json`.

    python -m tools.cloud_test [--summary FILE] no-changes preview.json
    python -m tools.cloud_test [--summary FILE] workload-only preview.json
    python -m tools.cloud_test [--summary FILE] report up=success smoke=failure ...

`no-changes`: a second `pulumi up` would change nothing (every step `same`). `workload-only`: a
config edit of one workload changes only resources inside a GpuService component (its URN's type
chain holds `gke-gpu:index:GpuService`), never the cluster, the platform or KEDA. Each writes a
Markdown section to `--summary` (the job's $GITHUB_STEP_SUMMARY) and exits 1 on failure.

The input is the document `pulumi preview --json` prints (pulumi/pulumi sdk/go/common/display/
json.go, PreviewDigest: `steps[]` with `op`, `urn`, `oldState`, `newState`, `diffReasons`,
`replaceReasons`, `detailedDiff`; `diagnostics[]` with `severity` and `message`;
`changeSummary`, a count per op; `duration`). Step ops are pulumi/pulumi pkg/resource/deploy
step.go's StepOp labels (`same`, `create`, `update`, `delete`, `replace`, `create-replacement`,
`delete-replaced`, `read`, `refresh`, `import`, ...).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WORKLOAD_COMPONENT = "gke-gpu:index:GpuService"
# The sandbox stack (.github/cloud-test/Pulumi.cloud-test.yaml) and the config edit the workflow
# makes to it (`pulumi config set --path EDIT_KEY <run id>`): one more environment variable of
# the workload, which reaches its Deployment and nothing else (tests/test_cloud_test.py checks
# that offline, the workflow against GKE).
SANDBOX_STACK = "cloud-test"
EDIT_KEY = "gke-gpu:workloads[0].env.CLOUD_TEST_RUN"
# Ops that change nothing: `same`, and reads of existing resources (a `get`, a refresh).
UNCHANGED_OPS = frozenset({"same", "read", "refresh"})


@dataclass(frozen=True)
class Step:
    op: str
    urn: str
    diff: tuple[str, ...] = ()
    """The properties that differ (diffReasons, or replaceReasons for a replacement)."""

    @property
    def type_chain(self) -> list[str]:
        """The resource's type and its parents' types, outermost first (the URN's third part,
        `parent$...$type`)."""
        return self.urn.split("::")[2].split("$")

    @property
    def type(self) -> str:
        return self.type_chain[-1]

    @property
    def name(self) -> str:
        return self.urn.split("::", 3)[3]


@dataclass
class Preview:
    steps: list[Step]
    change_summary: dict[str, int]
    errors: list[str] = field(default_factory=list)
    """Diagnostics of severity `error`: the preview itself failed."""

    @property
    def changes(self) -> list[Step]:
        return [s for s in self.steps if s.op not in UNCHANGED_OPS]

    @property
    def counted_changes(self) -> dict[str, int]:
        return {op: n for op, n in self.change_summary.items() if op not in UNCHANGED_OPS and n}


def parse(text: str) -> Preview:
    """A `pulumi preview --json` document; ValueError when the text is not one."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not the JSON `pulumi preview --json` prints: {error}") from None
    if not isinstance(document, dict):
        raise ValueError("not the JSON `pulumi preview --json` prints: not an object")
    steps = [_step(s) for s in document.get("steps") or []]
    errors = [
        str(d.get("message", "")).strip()
        for d in document.get("diagnostics") or []
        if isinstance(d, dict) and d.get("severity") == "error"
    ]
    summary = {str(k): int(v) for k, v in (document.get("changeSummary") or {}).items()}
    return Preview(steps, summary, errors)


def _step(raw: Any) -> Step:
    if not isinstance(raw, dict) or "op" not in raw or "urn" not in raw:
        raise ValueError(f"a preview step without op and urn: {str(raw)[:200]}")
    reasons = raw.get("replaceReasons") or raw.get("diffReasons") or []
    return Step(op=str(raw["op"]), urn=str(raw["urn"]), diff=tuple(map(str, reasons)))


@dataclass(frozen=True)
class Verdict:
    title: str
    passed: bool
    lines: list[str]

    def markdown(self) -> str:
        mark = "passed" if self.passed else "FAILED"
        return "\n".join([f"### {self.title}: {mark}", "", *self.lines, ""]) + "\n"


def no_changes(preview: Preview) -> Verdict:
    """A second `pulumi up` must change nothing: any step but `same` is an input the program does
    not reproduce (a timestamp, a random name) or state GKE rewrote."""
    title = "Second `pulumi up` changes nothing"
    if preview.errors:
        return Verdict(title, False, ["The preview failed:", "", *_quoted(preview.errors)])
    changes = preview.changes
    if not changes and not preview.counted_changes:
        return Verdict(title, True, [f"{len(preview.steps)} step(s), every one `same`."])
    return Verdict(
        title,
        False,
        [
            "`pulumi preview` right after `pulumi up` still wants to change these: each is an "
            "input the program does not send the same way twice, or a value GKE rewrites.",
            "",
            *_table(changes),
            *_counts(preview.counted_changes),
        ],
    )


def workload_only(preview: Preview, component: str = WORKLOAD_COMPONENT) -> Verdict:
    """A config edit of a workload changes resources inside its GpuService only."""
    title = "A workload's config edit changes only the workload"
    if preview.errors:
        return Verdict(title, False, ["The preview failed:", "", *_quoted(preview.errors)])
    changes = preview.changes
    outside = [s for s in changes if component not in s.type_chain]
    if not changes:
        return Verdict(
            title,
            False,
            [
                "The edit changed nothing, so it proved nothing: the config key set before this "
                "preview did not reach any resource. Check the `pulumi config set` step."
            ],
        )
    if outside:
        return Verdict(
            title,
            False,
            [
                f"{len(outside)} of {len(changes)} change(s) are outside `{component}`: a "
                "workload's edit reaches the cluster, the platform or KEDA, so an ordinary model "
                "change would disturb what every other workload stands on.",
                "",
                *_table(outside),
            ],
        )
    return Verdict(
        title,
        True,
        [f"{len(changes)} change(s), all inside `{component}`:", "", *_table(changes)],
    )


def report(outcomes: Sequence[tuple[str, str]]) -> Verdict:
    """The run's steps and their outcomes (success, failure, cancelled, skipped): every step is
    required, so one skipped (an earlier one failed) is no pass either."""
    passed = bool(outcomes) and all(outcome == "success" for _, outcome in outcomes)
    lines = ["| step | outcome |", "| --- | --- |"]
    lines += [f"| {name} | {outcome or 'not run'} |" for name, outcome in outcomes]
    return Verdict("Real-cloud test", passed, lines)


def _table(steps: Sequence[Step]) -> list[str]:
    rows = ["| op | type | name | what differs |", "| --- | --- | --- | --- |"]
    rows += [
        f"| {s.op} | `{s.type}` | `{s.name}` | {', '.join(f'`{d}`' for d in s.diff) or '-'} |"
        for s in steps
    ]
    return rows


def _counts(counts: dict[str, int]) -> list[str]:
    if not counts:
        return []
    return ["", "changeSummary: " + ", ".join(f"{op} {n}" for op, n in sorted(counts.items()))]


def _quoted(messages: Sequence[str]) -> list[str]:
    return ["```text", *messages, "```"]


def _emit(verdict: Verdict, summary: Path | None) -> int:
    text = verdict.markdown()
    print(text)
    if summary is not None:
        with summary.open("a", encoding="utf-8") as out:
            out.write(text)
    return 0 if verdict.passed else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.cloud_test", description=__doc__)
    parser.add_argument("--summary", type=Path, help="append the Markdown verdict to this file")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("no-changes", "workload-only"):
        commands.add_parser(name).add_argument("preview", type=Path)
    commands.add_parser("report").add_argument("outcomes", nargs="*", metavar="STEP=OUTCOME")
    args = parser.parse_args(argv)
    if args.command == "report":
        pairs = [tuple(item.split("=", 1)) for item in args.outcomes if "=" in item]
        return _emit(report([(name, outcome) for name, outcome in pairs]), args.summary)
    try:
        preview = parse(args.preview.read_text())
    except (OSError, ValueError) as error:
        title = "Preview" if args.command == "no-changes" else "Workload edit"
        return _emit(Verdict(title, False, [f"No preview to judge: {error}"]), args.summary)
    verdict = no_changes(preview) if args.command == "no-changes" else workload_only(preview)
    return _emit(verdict, args.summary)


if __name__ == "__main__":
    sys.exit(main())
