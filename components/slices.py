"""The one list of variants everything iterates (issue 32): how a workload runs (KINDS).

Code that differs by kind asks the kind (`kind_of(w).awaited(w)`), never compares its name; a
kind the registry does not hold is refused here rather than handled as another.
"""

from __future__ import annotations

from components.config import WorkloadConfig
from components.kinds.base import Kind
from components.kinds.deployment import Deployment
from components.kinds.job import Job
from components.kinds.statefulset import StatefulSet

KINDS: dict[str, Kind] = {k.name: k for k in (Deployment(), StatefulSet(), Job())}


def kind_of(w: WorkloadConfig) -> Kind:
    """The kind `w` runs as; a ValueError naming the kinds there are when it is none of them."""
    kind = KINDS.get(w.kind)
    if kind is None:
        raise ValueError(
            f"workload {w.name!r}: kind {w.kind!r} is not one the program can register; the kinds "
            f"are {', '.join(KINDS)} (components/slices.py KINDS: add a module under "
            "components/kinds/ to add one)"
        )
    return kind
