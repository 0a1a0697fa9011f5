"""Key paths in problems: where one starts, one spelling per path, and which paths a list names."""

from __future__ import annotations

import re

# A key path at the start of a problem: segments (namespaced `ns:key` allowed), `.key`,
# `[0]`, quoted user keys (`."a/b"`, `["a/b"]`), alternatives joined by '/', then ': '.
_QUOTED = r"\"[^\"\n]*\"|'[^'\n]*'"
_SEGMENT = rf"(?:[\w][\w.-]*(?::[\w][\w.-]*)?|{_QUOTED})"
_PATH = rf"{_SEGMENT}(?:\.{_SEGMENT}|\[(?:\d+|{_QUOTED})\])*"
_PROBLEM = re.compile(rf"({_PATH}(?:/{_PATH})*):(?: |$)")


def problem_path(problem: str) -> str | None:
    match = _PROBLEM.match(problem)
    return match.group(1) if match else None


def _dotted(path: str) -> str:
    """Quoted keys in brackets as dotted keys: `env["HF TOKEN!"]` -> `env.HF TOKEN!`."""
    return re.sub(r"\[(\"|')(.*?)\1\]", r".\2", path)


def normalize(path: str) -> str:
    """One spelling per path: quotes and brackets around keys removed, `gke-gpu:` dropped."""
    path = re.sub(r"\.(\"|')(.*?)\1", r".\2", _dotted(path))
    return path.removeprefix("gke-gpu:")


def under(path: str, prefix: str) -> bool:
    """`path` is `prefix` or below it ("" is above every path)."""
    path, prefix = normalize(path), normalize(prefix)
    return prefix == "" or path == prefix or path.startswith((prefix + ".", prefix + "["))


def root(path: str) -> str:
    """The first key of a path, namespace kept (`gke-gpu:cluster.name` -> `gke-gpu:cluster`)."""
    path = _dotted(path)
    if path.startswith(('"', "'")):
        return path[1:].split(path[0], 1)[0]
    namespace = re.match(r"[\w.-]+:", path)  # `gke.gpu:cluster`: the namespace may hold dots
    head = namespace.group() if namespace else ""
    return head + re.split(r"[.\[]", path[len(head) :], maxsplit=1)[0]


def reported(problems: list[str], alternatives: tuple[str, ...]) -> bool:
    """Some problem names one of `alternatives` (or a path below it)."""
    paths = [p for p in (problem_path(x) for x in problems) if p]
    named = [q for p in paths for q in [p, *p.split("/")]]
    return any(under(p, alt) for p in named for alt in alternatives)
