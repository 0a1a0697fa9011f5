"""What every mutation module shares: the case being built, the registry, small tree helpers."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dev.fuzz.case import Case, Mutation


class Doc:
    """The case being built: its config tree and its stack name."""

    def __init__(self, case: Case) -> None:
        self.case = case

    @property
    def cfg(self) -> dict[Any, Any]:
        return self.case.document["config"]

    def mode(self) -> str:
        cluster = self.cluster()
        mode = cluster.get("mode", "autopilot") if cluster is not None else "autopilot"
        return mode if isinstance(mode, str) else "autopilot"

    def gke(self) -> bool:
        return self.mode() in ("standard", "autopilot")

    def region(self) -> str:
        region = self.cfg.get("gcp:region")
        return region if isinstance(region, str) else "us-central1"

    def items(self, key: str) -> list[tuple[int, dict[Any, Any]]]:
        value = self.cfg.get(f"gke-gpu:{key}")
        if not isinstance(value, list):
            return []
        return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]

    def workload(self, rng: random.Random) -> tuple[int, dict[Any, Any]] | None:
        found = self.items("workloads")
        return rng.choice(found) if found else None

    def pool(self, rng: random.Random) -> tuple[int, dict[Any, Any]] | None:
        found = self.items("nodePools") if self.mode() == "standard" else []
        return rng.choice(found) if found else None

    def cluster(self) -> dict[Any, Any] | None:
        cluster = self.cfg.get("gke-gpu:cluster")
        return cluster if isinstance(cluster, dict) else None

    def namespaced_key(self, rng: random.Random) -> str | None:
        """One of the stack's `gke-gpu:` keys, or None when it has none."""
        keys = [k for k in self.cfg if isinstance(k, str) and k.startswith("gke-gpu:")]
        return rng.choice(keys) if keys else None


Mutator = Callable[[random.Random, Doc], Mutation | None]


@dataclass(frozen=True)
class Spec:
    """A registered mutation: its class, its name (the function's, dashed) and when it applies."""

    cls: str
    name: str
    fn: Mutator
    text: bool
    """Applied after every tree mutation (it edits the YAML text or replaces the document)."""
    engine: bool
    """Has an engine form (a config dict), so run_program can take it."""


REGISTERED: list[Spec] = []
"""Every mutation in the order its module defines it (dev.fuzz.mutations orders the modules)."""


def mutation(cls: str, *, text: bool = False, engine: bool = True) -> Callable[[Mutator], Mutator]:
    """Registers the decorated function as a mutation of class `cls`."""

    def register(fn: Mutator) -> Mutator:
        REGISTERED.append(Spec(cls, fn.__name__.replace("_", "-"), fn, text, engine))
        return fn

    return register


def mapping(container: dict[Any, Any], key: str) -> dict[Any, Any] | None:
    """container[key] as a mapping, created when absent; None when it holds something else."""
    if container.get(key) is None:
        container[key] = {}
    value = container[key]
    return value if isinstance(value, dict) else None


def wname(w: dict[Any, Any]) -> str:
    """A workload's name, or "" when it has no string name."""
    name = w.get("name")
    return name if isinstance(name, str) else ""


def count_and_port(i: int, w: dict[Any, Any]) -> list[tuple[str, dict[Any, Any], str]]:
    """Workload `i`'s `gpu.count` and `expose.port` as (path, container, key), where it has them."""
    fields: list[tuple[str, dict[Any, Any], str]] = []
    if isinstance(w.get("gpu"), dict):
        fields.append((f"workloads[{i}].gpu.count", w["gpu"], "count"))
    if isinstance(w.get("expose"), dict):
        fields.append((f"workloads[{i}].expose.port", w["expose"], "port"))
    return fields


def set_one(
    rng: random.Random,
    places: Sequence[tuple[str, Any, Any, Any]],
    make: Callable[[Any], Any] = lambda value: value,
) -> str | None:
    """Sets one of `places`, (path, container, key, value), to `make(value)` and returns its path;
    None when there is no place. `make` runs after the choice, so it may draw from `rng` too."""
    if not places:
        return None
    path, container, key, value = rng.choice(places)
    container[key] = make(value)
    return path
