"""Config too big or too deep for what it becomes: checked on the values as the engine hands
them over, so config from a Pulumi ESC environment or `--config-file` is held to the same bounds
as a stack file (components/config/yaml_guard.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .. import formats
from ..problems import Problem
from ..yaml_guard import DEEP, MAX_DEPTH

# What one workload's config may add up to. Its secret env values become one Kubernetes Secret,
# limited to 1 MiB ("Individual Secrets are limited to 1MiB in size",
# https://kubernetes.io/docs/concepts/configuration/secret/#restriction-data-size), and its
# plain ones a Deployment that etcd stores only under its --max-request-bytes (1.5 MiB default,
# https://etcd.io/docs/v3.5/dev-guide/limit/).
MAX_ITEM_BYTES = 1024 * 1024


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), default=str))


def _largest_leaf(path: str, value: Any) -> str:
    """The path of the biggest value inside `value`, following the biggest child down."""
    while isinstance(value, Mapping | list) and value:
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        key, value = max(items, key=lambda kv: _size(kv[1]))
        path = formats.join(path, key)
    return path


def _too_deep(value: Any) -> bool:
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(item, Mapping):
            stack += [(v, depth + 1) for v in item.values()]
        elif isinstance(item, list):
            stack += [(v, depth + 1) for v in item]
    return False


# Items per list key. One stack serves one service (a few workloads and pools); the offline plan
# takes ~20 ms per workload, so a list of thousands would stall CI for minutes.
MAX_ITEMS = {"workloads": 50, "nodePools": 50}


def size_problems(raw: Mapping[str, Any]) -> list[Problem]:
    """Each top-level key (and each list item) over MAX_ITEM_BYTES or MAX_DEPTH, named by path.
    Sizes are never shown with values: a big value may be a secret."""
    problems = []
    for key, value in raw.items():
        limit = MAX_ITEMS.get(key)
        if limit is not None and isinstance(value, list) and len(value) > limit:
            problems.append(
                Problem(
                    key,
                    f"{len(value)} entries, over the {limit} one stack may hold (one stack "
                    "serves one service). Split them over stacks.",
                )
            )
            continue
        if _too_deep(value):
            problems.append(Problem(key, DEEP))
            continue
        items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
        for i, item in items:
            size = _size(item)
            if size <= MAX_ITEM_BYTES:
                continue
            path = key if i is None else formats.join(key, i)
            problems.append(
                Problem(
                    _largest_leaf(path, item),
                    f"{path} adds up to {size / 2**20:.1f} MiB, over "
                    f"the {MAX_ITEM_BYTES // 2**20} MiB a Kubernetes Secret may hold (and near the "
                    "1.5 MiB etcd accepts for one object). Config holds settings, not data: move "
                    "large values into the image, a bucket (modelCache) or a volume.",
                )
            )
    return problems
