"""An endpoint's clients (issue 35): a key per consumer (expose.keys)."""

from __future__ import annotations

from collections.abc import Iterator

from components.config.context import Context
from components.config.problems import Problem
from components.config.rules.exposure import api_key
from components.config.schema import WorkloadSpec


def consumer_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """expose.keys: each name once, and the generated key the gate hands the server behind it."""
    del ctx
    e = w.expose
    if e is None or not e.keys:
        return
    path = f"workloads[{i}].expose.keys"
    seen: set[str] = set()
    for j, name in enumerate(e.keys):
        if name in seen:
            yield Problem(
                f"{path}[{j}]",
                f"{name!r} is listed twice; each consumer gets one key, named once. Remove the "
                "second entry.",
            )
        seen.add(name)
    if not api_key(w):
        yield Problem(
            path,
            "gives each consumer a key the gate checks, in place of the workload's generated key, "
            "which the gate then sends the server; but this workload has no generated key "
            "(apiKey is false, or it sets its own VLLM_API_KEY). Remove keys, or let the stack "
            "generate the key (remove apiKey: false and the workload's own key).",
        )
