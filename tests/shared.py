"""Renders shared by the whole test session: each stack file is planned once per process.

Rendering a stack runs the whole program under the recording engine (about a second a stack on
one core), and a dozen test modules read the same shipped stacks. `render` and `main` keep the
first result for a stack file's name, path and exact bytes, and hand every caller its own copy:
a test may change what it gets without another test seeing it. A test that needs a fresh run
(tests/test_idempotence.py compares two) calls tools.render itself.

Each pytest-xdist worker is its own process: a render is also kept on disk, in the folder the
test session's controller names in GKE_GPU_SHARED_RENDERS (tests/conftest.py), so a stack one
worker has planned is read, not planned again, by the others; a worker that asks for a render
another is making waits for it (a lock per render).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import hashlib
import io
import json
import os
import pickle
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from tools import render as _render
from tools.engine import ROOT, Recording, run_program

_OUT = Path(tempfile.mkdtemp(prefix="gke-gpu-shared-"))
atexit.register(shutil.rmtree, _OUT, ignore_errors=True)
_RENDER = _render.render  # main() runs with `render` below in its place


SHARED_FOLDER = "GKE_GPU_SHARED_RENDERS"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def _on_disk(make: Any) -> Any:
    """`make(*args) -> bytes`, kept in the session's shared folder under a digest of its name and
    arguments: made by the first process that asks, read by the rest. Without the folder (a
    process outside a test session), made here. An exception is raised, not kept."""

    @functools.wraps(make)
    def shared(*args: Any) -> bytes:
        folder = os.environ.get(SHARED_FOLDER)
        if not folder or not Path(folder).is_dir():
            return make(*args)
        key = hashlib.sha256(repr((make.__name__, args)).encode()).hexdigest()
        kept = Path(folder) / f"{key}.pickle"
        with open(Path(folder) / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if kept.is_file():
                return kept.read_bytes()
            made = make(*args)
            partial = kept.with_suffix(".partial")
            partial.write_bytes(made)
            partial.replace(kept)
            return made

    return shared


@functools.cache
@_on_disk
def _plan(stack: str, path: Path, digest: str) -> bytes:
    del digest  # part of the key only: an edited file is a new render
    return pickle.dumps(_RENDER(stack, path))


def render(stack: str, stack_file: Path | None = None) -> _render.Plan:
    """tools.render.render(stack, stack_file), run once per stack file; a fresh copy each call.
    A config error is raised again on every call (it is not kept)."""
    path = (stack_file or ROOT / f"Pulumi.{stack}.yaml").resolve()
    return pickle.loads(_plan(stack, path, _digest(path)))


@dataclass(frozen=True)
class Printed:
    """What `python -m tools.render` returned and printed."""

    code: int
    out: str
    err: str


@functools.cache
def _main(argv: tuple[str, ...], digest: str) -> tuple[Printed, Path]:
    del digest
    out_dir = Path(tempfile.mkdtemp(dir=_OUT))
    stdout, stderr = io.StringIO(), io.StringIO()
    # main() plans through tools.render.render: the shared render of the same stack file serves.
    with (
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        mock.patch.object(_render, "render", render),
    ):
        code = _render.main([*argv, "--out", str(out_dir)])
    return Printed(code, stdout.getvalue(), stderr.getvalue()), out_dir


def main(argv: Sequence[str], out: Path) -> Printed:
    """tools.render.main([*argv, "--out", out]), run once per argv and stack file: the artifacts
    are copied into `out` (the caller's own directory), the printed text is returned."""
    args = tuple(argv)
    # Every stack file the arguments may name (a bare render plans dev): an edit is a new run.
    read = [Path(a) for a in args] + [ROOT / f"Pulumi.{a}.yaml" for a in (*args, "dev")]
    digest = "".join(_digest(p) for p in read)
    printed, out_dir = _main(args, digest)
    out.mkdir(parents=True, exist_ok=True)
    for item in out_dir.iterdir():
        shutil.copy2(item, out / item.name)
    return printed


@functools.cache
@_on_disk
def _recording(stack: str, digest: str) -> bytes:
    del digest
    from tests.conftest import stack_config

    return pickle.dumps(run_program(stack_config(stack), stack=stack))


def recording(stack: str) -> Recording:
    """run_program(stack_config(stack), stack=stack) for a root stack (dev, prod): the program
    run on the stack's `config:` block as written, once per process; a fresh copy each call."""
    return pickle.loads(_recording(stack, _digest(ROOT / f"Pulumi.{stack}.yaml")))


@functools.cache
@_on_disk
def _run(key: str) -> bytes:
    config, stack, secret_keys = json.loads(key)
    return pickle.dumps(run_program(config, stack=stack, secret_keys=tuple(secret_keys)))


def run(
    config: Mapping[str, Any], stack: str = "test", secret_keys: Sequence[str] = ()
) -> Recording:
    """run_program(config, stack=..., secret_keys=...), once per distinct config in a process; a
    fresh copy each call. A config error is raised again on every call (it is not kept). Not for a
    test that patches the program (tests/conftest.py's `run` runs those afresh)."""
    try:
        key = json.dumps([config, stack, list(secret_keys)], sort_keys=True)
    except (TypeError, ValueError, RecursionError):  # not plain data: run it as it is
        return run_program(config, stack=stack, secret_keys=tuple(secret_keys))
    return pickle.loads(_run(key))
