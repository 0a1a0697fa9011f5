"""Base stacks: the valid stacks every case starts from, with their secure values planted."""

from __future__ import annotations

import copy
import random
from typing import Any

import yaml

from dev.fuzz.case import Case
from dev.fuzz.document import Secure
from dev.fuzz.planted import kubeconfig, token
from tools.engine import ROOT


def with_secure(node: Any, rng: random.Random, key: str = "") -> Any:
    """A parsed stack file's tree with `{secure: ...}` as Secure nodes."""
    if isinstance(node, dict):
        if set(node) == {"secure"}:
            if "kubeconfig" in key:
                text, creds = kubeconfig(rng)
                return Secure(str(node["secure"]), text, creds)
            return Secure(str(node["secure"]), token(rng))
        return {k: with_secure(v, rng, str(k)) for k, v in node.items()}
    if isinstance(node, list):
        return [with_secure(v, rng, key) for v in node]
    return node


def base_stacks() -> dict[str, tuple[str, dict[str, Any]]]:
    """Base name -> (stack name, config), each a valid stack today."""
    from tests.conftest import STANDARD

    files = {
        "dev": ("dev", ROOT / "Pulumi.dev.yaml"),
        "prod": ("prod", ROOT / "Pulumi.prod.yaml"),
        **{
            f"examples/{p.name}": (p.name.removeprefix("Pulumi.").removesuffix(".yaml"), p)
            for p in sorted((ROOT / "examples").glob("Pulumi.*.yaml"))
        },
    }
    found = {
        name: (stack, dict(yaml.safe_load(path.read_text())["config"]))
        for name, (stack, path) in files.items()
    }
    found["STANDARD"] = ("test", copy.deepcopy(STANDARD))
    return found


_BASES: dict[str, tuple[str, dict[str, Any]]] | None = None


def bases() -> dict[str, tuple[str, dict[str, Any]]]:
    """`base_stacks()`, read once per process."""
    global _BASES
    if _BASES is None:
        _BASES = base_stacks()
    return _BASES


def base_case(name: str, rng: random.Random, index: int = 0, cls: str = "base") -> Case:
    """Base `name` unchanged as a case, its secure values planted from `rng`."""
    stack, config = bases()[name]
    return Case(index, name, stack, cls, {"config": with_secure(config, rng)})
