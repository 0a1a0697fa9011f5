"""Generates components/config/workload_args.py: the stack file's workload (and node pool, and
the cluster keys a workload's decisions read) as TypedDicts Pulumi's schema analyzer reads, from
the pydantic schema, so GpuServiceArgs restates no schema field (issue 32).

Each model becomes a TypedDict whose snake_case keys camel-case (Pulumi's analyzer, pydantic's
alias generator) to the stack file's keys; a key with a default is NotRequired (unset: the
schema's default applies); a Literal becomes an Enum; a union the analyzer cannot express (a
reservation: `any` or `{name}`) is Any, which the schema then validates; each key's docstring is
the schema's. `python -m tools.args --write` regenerates; tests/test_gpu_service_args.py fails
when the committed file differs.
"""

import inspect
import json
import re
import textwrap
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from components.config.schema import ClusterSpec, NodePoolSpec, WorkloadSpec

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "components" / "config" / "workload_args.py"
COMMAND = "python -m tools.args --write"
LINE_LENGTH = 100  # ruff's (pyproject.toml)
# The cluster keys a workload's decisions read (placement, addresses, versions, the marker).
CLUSTER_KEYS = (
    "mode",
    "name",
    "location",
    "release_channel",
    "network",
    "subnetwork",
    "node_service_account",
    "production",
    "deletion_protection",
)
# (model, the generated type's name, the keys kept; None: all)
ROOTS: tuple[tuple[type[BaseModel], str, str, tuple[str, ...] | None], ...] = (
    (WorkloadSpec, "Workload", "workloads[]", None),
    (NodePoolSpec, "ServiceNodePool", "nodePools[]", None),
    (ClusterSpec, "ServiceCluster", "cluster", CLUSTER_KEYS),
)


@dataclass
class Module:
    """The generated classes, in the order they are first needed (dependencies first)."""

    classes: dict[str, str] = field(default_factory=dict)
    models: dict[str, type[BaseModel]] = field(default_factory=dict)


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-.\s]+", name) if part)


def _member(value: object) -> str:
    """An Enum member's name for a Literal value: `LoadBalancer`, `CacheAware`, `Rank16`."""
    if isinstance(value, int):
        return f"Rank{value}" if value else "Zero"
    text = str(value)
    if text.isupper() or text.islower():
        return _pascal(text.lower()) or "Empty"
    return _pascal(text)


def _doc(text: str | None, indent: str) -> list[str]:
    """The docstring's first paragraph, and its `Default:` line (the schema reference has the
    rest: docs/configuration.md)."""
    if not text:
        return []
    # A class's __doc__ keeps its continuation lines' indentation; a field's description does not.
    paragraphs = inspect.cleandoc(text).split("\n\n")
    kept = [paragraphs[0], *(p for p in paragraphs[1:] if p.startswith("Default:"))]
    body = "\n\n".join(kept).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    width = LINE_LENGTH - len(indent) - 6  # the quotes on the first and last line
    lines = [part for ln in body.splitlines() for part in textwrap.wrap(ln, width) or [""]]
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [
        f'{indent}"""{lines[0]}',
        *[f"{indent}{ln}" if ln else "" for ln in lines[1:]],
        f'{indent}"""',
    ]


def _strip(tp: Any) -> Any:
    """The type without Annotated constraints (the schema checks them)."""
    while get_origin(tp) is typing.Annotated:
        tp = get_args(tp)[0]
    return tp


def _type(tp: Any, name: str, path: str, module: Module) -> tuple[str, bool]:
    """The annotation for `tp`, and whether None is among its values."""
    tp = _strip(tp)
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in get_args(tp) if a is not type(None)]
        nullable = len(members) < len(get_args(tp))
        if len(members) == 1:
            return _type(members[0], name, path, module)[0], nullable
        return "Any", nullable
    if origin is Literal:
        return _enum(name, get_args(tp), module), False
    if origin is list:
        item, _ = _type(get_args(tp)[0], name, path + "[]", module)
        return f"list[{item}]", False
    if origin is dict:
        key, value = get_args(tp)
        assert _strip(key) is str, name
        entry, _ = _type(value, name, path + ".*", module)
        return f"dict[str, {entry}]", False
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _model(tp, name, path, None, module), False
    if tp in (str, int, float, bool):
        return tp.__name__, False
    if tp is Any:
        return "Any", False
    raise TypeError(f"{name}: no analyzer type for {tp!r}")


def _enum(name: str, values: tuple[Any, ...], module: Module) -> str:
    if name not in module.classes:
        lines = [f"class {name}(Enum):"]
        lines += [f"    {_member(v)} = {json.dumps(v)}" for v in values]
        module.classes[name] = "\n".join(lines)
    return name


def _model(
    model: type[BaseModel], name: str, path: str, keys: tuple[str, ...] | None, module: Module
) -> str:
    if name in module.classes:
        assert module.models[name] is model, f"two models named {name}"
        return name
    module.classes[name] = ""  # reserved: its field types are generated first
    module.models[name] = model
    own = model.__dict__.get("__doc__") or f"The stack file's `{path}`."
    lines = [f"class {name}(TypedDict):", *_doc(own, "    ")]
    for key, info in model.model_fields.items():
        if keys is not None and key not in keys:
            continue
        alias = info.alias or key
        annotation, nullable = _type(
            info.annotation, name + _pascal(key), f"{path}.{alias}", module
        )
        if nullable and info.is_required():
            annotation += " | None"
        if not info.is_required():
            annotation = f"NotRequired[{annotation}{' | None' if nullable else ''}]"
        lines += ["", f"    {key}: {annotation}", *_doc(info.description, "    ")]
    module.classes[name] = "\n".join(lines)
    return name


def generate() -> str:
    module = Module()
    for model, name, path, keys in ROOTS:
        _model(model, name, path, keys, module)
    header = [
        f'"""GENERATED by `{COMMAND}` from components/config/schema/: do not edit.',
        "",
        "A GpuService's workload as the stack file's `workloads[]` entry writes it, the node "
        "pools it may",
        "land on as `nodePools[]` entries, and the cluster keys its decisions read: TypedDicts "
        "whose",
        'keys camel-case to the stack file\'s, for Pulumi\'s schema analyzer (tools/args/)."""',
        "",
        "from enum import Enum",
        "from typing import Any, NotRequired, TypedDict",
        "",
    ]
    body = "\n\n\n".join(reversed(list(module.classes.values())))
    return "\n".join(header) + "\n\n" + body + "\n"


def main(argv: list[str]) -> int:
    text = generate()
    if argv[1:] == ["--write"]:
        TARGET.write_text(text)
        return 0
    if TARGET.read_text() != text:
        print(f"{TARGET.relative_to(ROOT)} is stale: run `{COMMAND}`")
        return 1
    return 0
