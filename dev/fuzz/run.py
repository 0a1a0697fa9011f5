"""Running a case: the offline plan on its stack file, or the program under the recording engine."""

from __future__ import annotations

import contextlib
import io
import json
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from dev.fuzz.case import Case


@dataclass
class Outcome:
    """How one run ended, and everything it printed or wrote."""

    code: int | None
    """0 plan, 1 findings, 2 config error; None for a crash."""
    crash: str | None
    problems: list[str]
    """The `  - ` lines of a config error, without the marker."""
    output: str
    """Everything printed or written, to search for secrets."""
    resources: list[dict[str, Any]]
    """Registered resources: type, name, inputs (secrets masked)."""
    registered: int = 0


class CaseTimeout(Exception):
    """A case that gave no outcome in time (counted as a crash)."""


@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"no outcome after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _captured(stdout: io.StringIO, stderr: io.StringIO, seconds: int) -> Iterator[None]:
    """Output into `stdout` and `stderr`, and an end after `seconds`."""
    with _deadline(seconds), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        yield


def _escaped(exc: BaseException) -> str:
    """An exception that escaped, as the report shows the crash."""
    return f"{type(exc).__name__}: {exc}"[:500]


def run_render(case: Case, workdir: Path, timeout: int = 60) -> Outcome:
    """`python -m tools.render` on the case's stack file, in-process."""
    from tools import render

    workdir.mkdir(parents=True, exist_ok=True)
    stack_file = workdir / f"Pulumi.{case.stack}.yaml"
    stack_file.write_text(case.text)
    out = workdir / "out"
    stdout, stderr = io.StringIO(), io.StringIO()
    code: int | None = None
    crash: str | None = None
    argv = [case.stack, "--stack-file", str(stack_file), "--out", str(out)]
    try:
        with _captured(stdout, stderr, timeout):
            code = render.main(argv)
    except SystemExit as exc:  # argparse's parser.error
        code = exc.code if isinstance(exc.code, int) else None
        if code is None:
            crash = f"SystemExit({exc.code!r})"
    except BaseException as exc:  # noqa: BLE001 - counting every escape is the point
        crash = _escaped(exc)
    if code not in (0, 1, 2) and crash is None:
        crash = f"exit code {code!r}"
        code = None
    written = ""
    resources: list[dict[str, Any]] = []
    if out.exists():
        for path in sorted(out.rglob("*")):
            if path.is_file():
                written += path.read_text(errors="replace")
        plan = out / "plan.json"
        if plan.exists():
            with contextlib.suppress(ValueError):
                resources = json.loads(plan.read_text()).get("resources", [])
    err = stderr.getvalue()
    return Outcome(
        code=code,
        crash=crash,
        problems=[line[4:] for line in err.splitlines() if line.startswith("  - ")]
        if code == 2
        else [],
        output=stdout.getvalue() + err + written,
        resources=resources,
    )


def run_engine(
    config: dict[str, Any],
    secret_keys: tuple[str, ...],
    stack: str,
    stack_file: Path | None = None,
) -> Outcome:
    """The program under the recording engine, in-process, as `pulumi up` would hand it config;
    `stack_file`: the Pulumi.<stack>.yaml the program may read beside it (a missing path: none)."""
    from components.config import ConfigError
    from tools import engine

    registered: list[str] = []

    class Counting(engine.RecordingMonitor):
        def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
            if request.type != "pulumi:pulumi:Stack":
                registered.append(request.type)
            return super().RegisterResource(request)

    stdout, stderr = io.StringIO(), io.StringIO()
    code: int | None = None
    crash: str | None = None
    problems: list[str] = []
    text = ""
    resources: list[dict[str, Any]] = []
    try:
        with (
            _captured(stdout, stderr, 60),
            mock.patch.object(engine, "RecordingMonitor", Counting),
        ):
            recording = engine.run_program(
                config, stack=stack, secret_keys=secret_keys, stack_file=stack_file
            )
        code = 0
        resources = [
            {"type": r.type, "name": r.name, "inputs": r.inputs, "outputs": r.outputs}
            for r in recording.resources
        ]
        outputs = {
            k: v for k, v in recording.stack_outputs.items() if k not in recording.secret_outputs
        }
        text = json.dumps([resources, outputs, recording.invokes], default=str)
    except ConfigError as exc:
        code = 2
        problems = [str(p) for p in exc.problems]
        text = str(exc) + "\n" + "\n".join(problems)
    except BaseException as exc:  # noqa: BLE001 - counting every escape is the point
        crash = _escaped(exc)
    return Outcome(
        code=code,
        crash=crash,
        problems=problems,
        output=text + stdout.getvalue() + stderr.getvalue(),
        resources=resources,
        registered=len(registered),
    )
