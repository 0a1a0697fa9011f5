"""The stacks CI deploys: every Pulumi.<stack>.yaml, split into protected and unprotected.

`python -m tools.stacks` prints GitHub Actions outputs (append them to $GITHUB_OUTPUT):

    all=["dev","prod"]
    unprotected=["dev"]
    protected=["prod"]

The deploy workflow runs `pulumi up` on the unprotected stacks first and on the protected ones
only after those succeeded (and after the protected stacks' environment reviewers approved).
A stack is protected when its cluster keeps deletion protection (`cluster.deletionProtection`,
default true, on a GKE cluster) or it is marked `cluster.production`. Adding a stack is adding
its Pulumi.<stack>.yaml (and its GitHub environments, docs/delivery.md): nothing else names it.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.config.source import read_stack_file
from tools.engine import ROOT

# Stack names as the workflows accept them: they end up in environment names, concurrency groups
# and file names, so nothing but lowercase letters, digits and hyphens.
STACK_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


@dataclass(frozen=True)
class Stack:
    name: str
    protected: bool


def _cluster(config: dict[str, Any]) -> dict[str, Any]:
    cluster = config.get("gke-gpu:cluster")
    if isinstance(cluster, str):  # set with `pulumi config set` as JSON text
        try:
            cluster = json.loads(cluster)
        except json.JSONDecodeError:
            return {}
    return cluster if isinstance(cluster, dict) else {}


def is_protected(config: dict[str, Any]) -> bool:
    cluster = _cluster(config)
    if cluster.get("production") is True:
        return True
    if cluster.get("mode") == "existing":
        return False  # no GKE deletion protection: nothing this stack owns is protected
    return cluster.get("deletionProtection", True) is not False


def discover(root: Path = ROOT) -> list[Stack]:
    """Every Pulumi.<stack>.yaml of the project directory, sorted by name."""
    stacks = []
    for path in sorted(root.glob("Pulumi.*.yaml")):
        name = path.name[len("Pulumi.") : -len(".yaml")]
        if not STACK_NAME.fullmatch(name):
            raise ValueError(
                f"{path.name}: stack names are 1-63 lowercase letters, digits and hyphens "
                "(they name GitHub environments and concurrency groups). Rename the file."
            )
        stacks.append(Stack(name, is_protected(read_stack_file(path).config)))
    if not stacks:
        raise ValueError(f"no Pulumi.<stack>.yaml in {root}")
    return stacks


def outputs(stacks: Sequence[Stack]) -> dict[str, str]:
    def names(selected: Sequence[Stack]) -> str:
        return json.dumps([s.name for s in selected], separators=(",", ":"))

    return {
        "all": names(stacks),
        "unprotected": names([s for s in stacks if not s.protected]),
        "protected": names([s for s in stacks if s.protected]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    del argv
    try:
        stacks = discover()
    except Exception as error:  # a stack file CI cannot read stops the run, with its reason
        print(f"::error::{error}", file=sys.stderr)
        return 1
    for key, value in outputs(stacks).items():
        print(f"{key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
