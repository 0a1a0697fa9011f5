"""Problems in a stack's config, each with its key path as data."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pulumi


@dataclass(frozen=True)
class Problem:
    """One problem: the key path it is about (`workloads[0].gpu.count`, `gcp:project`) and what
    is wrong there and how to fix it. Shown as `path: message`."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def under(path: str, base: str) -> bool:
    """`path` is `base` or a key path inside it."""
    return path == base or path.startswith((base + ".", base + "["))


class ConfigError(pulumi.RunError):
    """Every problem found in a stack's config; Pulumi prints it without a Python traceback."""

    def __init__(
        self, problems: Sequence[Problem | str], where: str = "the gke-gpu config"
    ) -> None:
        self.problems = [str(p) for p in problems]
        # Each problem at its key path, for a caller that reports them one by one (the
        # package's provider: components/serve/provider.py).
        self.details = [p if isinstance(p, Problem) else Problem("(inputs)", p) for p in problems]
        listing = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{len(problems)} problem(s) in {where}; nothing was created:\n{listing}")


@dataclass
class Problems:
    """Problems found so far, and the key paths whose own (parse) problem is already reported:
    problems of the rules about a path inside those are follow-ups, left out."""

    found: list[Problem] = field(default_factory=list)
    broken: set[str] = field(default_factory=set)
    kept: set[Problem] = field(default_factory=set)

    def __iadd__(self, problems: Iterable[Problem]) -> Problems:
        self.found.extend(problems)
        return self

    def own(self, problem: Problem, broken: bool = True) -> None:
        """A problem with a value itself (its type, its place): kept even under a broken path,
        and (`broken`) what the rules say about the value is left out."""
        self.kept.add(problem)
        self.found.append(problem)
        if broken:
            self.broken.add(problem.path)

    def is_broken(self, path: str) -> bool:
        return any(under(path, b) for b in self.broken)

    def final(self) -> list[Problem]:
        """Every problem once, in the stack file's order, without follow-ups."""
        seen: set[Problem] = set()
        result = []
        for problem in self.found:
            if problem in seen or (problem not in self.kept and self.is_broken(problem.path)):
                continue
            seen.add(problem)
            result.append(problem)
        return sorted(result, key=lambda p: _by_path(p.path))


_SECTIONS = (
    "gcp:",
    "gke-gpu:",
    "cluster",
    "devicePlugin",
    "nodePools",
    "workloads",
    "monitoring",
)


def _by_path(path: str) -> tuple[int, int]:
    """The stack file's order: section, then item index."""
    section = next((i for i, s in enumerate(_SECTIONS) if path.startswith(s)), len(_SECTIONS))
    index = re.match(r"[A-Za-z]+\[(\d+)\]", path)
    return (section, int(index.group(1)) if index else -1)
