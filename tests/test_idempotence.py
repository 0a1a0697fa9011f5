"""An offline stand-in for "a second `pulumi up` changes nothing": every shipped stack, rendered
twice in fresh recordings, sends the engine byte-identical requests.

A second `pulumi up` diffs the program's new inputs against the state the first one wrote; an
input that differs from run to run (a timestamp, a name drawn at random, the order of a set)
shows as a change on every run and, when it forces a replacement, replaces the resource each time.
The real-cloud test (.github/workflows/cloud-test.yml) checks the same against GKE with
`pulumi preview --expect-no-changes`.
"""

from __future__ import annotations

import functools
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests import golden
from tools import render
from tools.engine import Registration

STACKS = golden.stacks()


@functools.cache
def _requests(name: str, path: Path, run: int) -> dict[str, str]:
    """URN -> everything the engine receives for it, as canonical JSON: run 1 is the session's
    shared render (tests/shared.py, often made long before, after other stacks ran in the same
    process), run 2 a fresh recording of its own."""
    found: dict[str, str] = {}
    plan = golden.render(name, path) if run == 1 else render.render(name, path)
    for r in plan.recording.resources:
        assert r.urn not in found, f"{r.urn} registered twice"
        found[r.urn] = json.dumps(_request(r), sort_keys=True)
    return found


def _request(r: Registration) -> dict[str, Any]:
    return {
        "inputs": r.inputs,
        "parent": r.parent,
        "provider": r.provider,
        "dependencies": r.dependencies,
        "protect": r.protect,
        "ignoreChanges": r.ignore_changes,
        "customTimeouts": r.custom_timeouts,
        "deleteBeforeReplace": r.delete_before_replace,
        "aliases": r.aliases,
    }


@pytest.mark.parametrize(("name", "path"), STACKS, ids=[name for name, _ in STACKS])
def test_rendering_a_stack_twice_sends_the_engine_the_same_requests(name: str, path: Path) -> None:
    first, second = _requests(name, path, 1), _requests(name, path, 2)
    # The order of registration follows the order in which Outputs resolve, which the engine does
    # not diff (the state is keyed by URN); only the URNs and what each receives must be equal.
    assert sorted(first) == sorted(second), (
        f"{name}: resources registered under other URNs on a second run "
        f"({sorted(set(first) ^ set(second))[:5]}): a URN that changes makes `pulumi up` delete "
        "the resource and create another"
    )
    changed = [urn for urn in first if first[urn] != second[urn]]
    assert not changed, (
        f"{name}: inputs or options differ between two runs of the same stack file, so every "
        f"`pulumi up` would update (or replace) them: {changed[:5]}"
    )


@pytest.mark.parametrize(("name", "path"), STACKS, ids=[name for name, _ in STACKS])
def test_no_input_carries_the_date_of_the_run(name: str, path: Path) -> None:
    today = datetime.now(UTC)
    stamps = {today.strftime("%Y-%m-%d"), today.strftime("%Y%m%d")}
    found = [
        urn
        for urn, request in _requests(name, path, 1).items()
        if any(stamp in request for stamp in stamps)
    ]
    assert not found, (
        f"{name}: inputs hold today's date, so tomorrow's `pulumi up` would change them: {found}"
    )
