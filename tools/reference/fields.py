"""The reference's facts about each key, read from the schema: docstrings by their conventions,
types, allowed values, formats and defaults, and one row (Entry) per key."""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import annotated_types
import yaml
from pydantic import BaseModel, StringConstraints
from pydantic.fields import FieldInfo

from components.config import formats, schema

ROOT = Path(__file__).resolve().parents[2]
MARKDOWN = ROOT / "docs" / "configuration.md"
PULUMI_YAML = ROOT / "Pulumi.yaml"
COMMAND = "python -m tools.reference --write"
MD_START, MD_END = "<!-- config-reference:start -->\n", "<!-- config-reference:end -->"
YAML_START, YAML_END = "# config-reference:start\n", "# config-reference:end"
EXIT_OK, EXIT_STALE = 0, 1

# Formats of the patterns that formats.HINTS does not describe (or describes for another use).
FORMATS: dict[str, str] = {
    r"[a-z][-a-z0-9]{0,62}": "machine type name: lowercase letters, digits and hyphens, "
    "starting with a letter (e.g. `g2-standard-8`)",
    formats.REGION: "region name: the form `us-central1`",
}
# Fields whose pattern formats.HINTS names for another kind of value.
FIELD_FORMATS: dict[tuple[str, str], str] = {
    ("ReservationSpec", "name"): "reservation name: 1-63 lowercase letters, digits and hyphens, "
    "starting with a letter and ending with a letter or digit",
}
# How to read a nested key's default.
_NESTED = (
    "In the tables below, a nested key's default applies when its parent is set, and `required` "
    "there means required once the parent is set."
)


# --- docstrings -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Doc:
    """A field's docstring, read by the schema's conventions."""

    summary: str
    text: str
    default: str | None = None
    leaves: dict[str, Doc] = field(default_factory=dict)


def _join(paragraph: str) -> str:
    return " ".join(paragraph.split())


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", inspect.cleandoc(text)) if p.strip()]


def _leaf_doc(body: str) -> Doc:
    """A nested key's paragraph: its description, and a `Default:` line."""
    lines, default = [], None
    for line in body.splitlines():
        if line.strip().startswith("Default:"):
            default = line.strip().removeprefix("Default:").strip()
        else:
            lines.append(line)
    text = _join(" ".join(lines))
    return Doc(summary=text, text=text, default=default)


def parse_doc(doc: str | None, where: str, leaves: Sequence[str] = ()) -> Doc:
    """Summary, full text, `Default:` and nested keys' paragraphs of a docstring.

    `leaves` are the keys of the field's nested model: only those may open a paragraph as
    `` `key`: ``; any other paragraph is description.
    """
    if not doc or not doc.strip():
        raise ValueError(
            f"{where}: no docstring; every key is described in components/config/schema/"
        )
    description: list[str] = []
    default: str | None = None
    nested: dict[str, Doc] = {}
    for paragraph in _paragraphs(doc):
        leaf = re.match(r"`([A-Za-z][A-Za-z0-9.]*)`: (.*)", paragraph, re.S)
        if leaf and leaf.group(1) in leaves:
            nested[leaf.group(1)] = _leaf_doc(leaf.group(2))
        elif paragraph.startswith("Default:"):
            default = _join(paragraph.removeprefix("Default:"))
        else:
            description.append(_join(paragraph))
    if not description:
        raise ValueError(f"{where}: the docstring has no description, only defaults")
    return Doc(description[0], " ".join(description), default, nested)


# --- types, constraints, defaults -----------------------------------------------------------------


def _unwrap(tp: Any) -> tuple[Any, list[Any]]:
    """The type inside Annotated, and its metadata (pydantic's FieldInfo metadata flattened)."""
    metadata: list[Any] = []
    while get_origin(tp) is typing.Annotated:
        tp, *extra = get_args(tp)
        for item in extra:
            metadata += item.metadata if isinstance(item, FieldInfo) else [item]
    return tp, metadata


def _alternatives(tp: Any) -> list[Any]:
    """The members of a union (None left out), or the type itself."""
    if get_origin(tp) in (typing.Union, types.UnionType):
        return [a for a in get_args(tp) if a is not type(None)]
    return [tp]


def model_of(tp: Any) -> type[schema.Model] | None:
    """The config model a field holds (alone, in a union, or as list items), if any."""
    for alternative in _alternatives(_unwrap(tp)[0]):
        inner = _unwrap(alternative)[0]
        if get_origin(inner) is list:
            inner = _unwrap(get_args(inner)[0])[0]
        if isinstance(inner, type) and issubclass(inner, schema.Model):
            return inner
    return None


def is_list(tp: Any) -> bool:
    return any(get_origin(_unwrap(a)[0]) is list for a in _alternatives(_unwrap(tp)[0]))


def _type_name(tp: Any) -> str:
    names = []
    for alternative in _alternatives(_unwrap(tp)[0]):
        inner = _unwrap(alternative)[0]
        origin = get_origin(inner)
        if inner is bool:
            name = "boolean"
        elif inner is int or (origin is Literal and all(type(v) is int for v in get_args(inner))):
            name = "integer"
        elif inner is float:
            name = "number"
        elif inner is str or origin is Literal:
            name = "string"
        elif origin is list:
            item = _unwrap(get_args(inner)[0])[0]
            is_model = isinstance(item, type) and issubclass(item, BaseModel)
            name = "list of objects" if is_model else f"{_type_name(item)}[]"
        elif origin is dict:
            name = "map"
        elif isinstance(inner, type) and issubclass(inner, BaseModel):
            name = "object"
        else:
            raise TypeError(f"no documented name for the type {inner!r}")
        if name not in names:
            names.append(name)
    return " or ".join(names)


def pattern_format(pattern: str, where: str = "") -> str:
    """What a pattern accepts, in words: formats.HINTS (the error messages' own wording) first."""
    inner = pattern.removeprefix("^(?:").removesuffix(")$")
    if inner in FORMATS:
        return FORMATS[inner]
    hint = formats.HINTS.get(inner)
    match = hint and re.fullmatch(
        r"is not (?:a |an )?(?:valid )?(?P<what>[^:]+): (?:use )?(?P<how>.+?)\.?", hint, re.S
    )
    if not match:
        raise KeyError(
            f"{where}: no words for the pattern {inner!r}; describe it in "
            "tools/reference/fields.py FORMATS (or give it a hint in "
            "components/config/formats.py HINTS)"
        )
    text = f"{match.group('what')}: {match.group('how')}"
    return re.sub(r"'([^']+)'", r"`\1`", text)


def _bounds(metadata: list[Any]) -> tuple[int | None, int | None]:
    low = high = None
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            low = int(item.ge)  # type: ignore[arg-type]
        elif isinstance(item, annotated_types.Le):
            high = int(item.le)  # type: ignore[arg-type]
    return low, high


def _max_length(metadata: list[Any]) -> int | None:
    for item in metadata:
        if isinstance(item, annotated_types.MaxLen):
            return item.max_length
        if isinstance(item, StringConstraints) and item.max_length is not None:
            return item.max_length
    return None


def _string_rule(metadata: list[Any], where: str, override: str | None) -> str | None:
    patterns = [m.pattern for m in metadata if isinstance(m, StringConstraints) and m.pattern]
    if override:
        return override
    if patterns:
        return pattern_format(str(patterns[0]), where)
    longest = _max_length(metadata)
    return f"at most {longest:,} characters" if longest else None


def _allowed(tp: Any, metadata: list[Any], where: str, override: str | None = None) -> str:
    """Allowed values, bounds and formats of a type, in words."""
    parts: list[str] = []
    tp, inner_metadata = _unwrap(tp)
    metadata = [*metadata, *inner_metadata]
    for alternative in _alternatives(tp):
        inner, own = _unwrap(alternative)
        rules = [*metadata, *own]
        origin = get_origin(inner)
        if origin is Literal:
            parts.append(", ".join(f"`{v}`" for v in get_args(inner)))
        elif inner is int:
            low, high = _bounds(rules)
            if low is not None and high is not None:
                parts.append(f"{low:,}-{high:,}")
            elif low is not None:
                parts.append(f"at least {low:,}")
        elif inner is str:
            rule = _string_rule(rules, where, override)
            if rule:
                parts.append(rule)
        elif origin in (list, dict):
            item_type = get_args(inner)[-1]
            item = "" if model_of(item_type) else _allowed(item_type, [], where, override)
            longest = _max_length(rules)
            noun = "items" if origin is list else "entries"
            described = [
                f"each: {item}" if item else "",
                f"at most {longest:,} {noun}" if longest else "",
            ]
            if any(described):
                parts.append("; ".join(d for d in described if d))
    return "; ".join(parts)


def _value(value: Any) -> str:
    """A default as YAML writes it, inline."""
    if isinstance(value, BaseModel):  # a nested default: what differs from its keys' defaults
        value = value.model_dump(by_alias=True, exclude_defaults=True)
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000)
    return text.strip().removesuffix("...").strip()


def _default(info: FieldInfo, doc: Doc) -> str:
    if doc.default is not None:
        return doc.default
    if info.is_required():
        return "required"
    if info.default is None:
        return "none"
    return f"`{_value(info.default)}`"


# --- the reference's rows -------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One key of a section, as users write it (`systemPool.machineType`, `fallback[].spot`)."""

    key: str
    type: str
    allowed: str
    default: str
    summary: str
    text: str


def _aliases(model: type[schema.Model]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def entries(
    model: type[schema.Model],
    prefix: str = "",
    context: dict[str, Doc] | None = None,
    instance: BaseModel | None = None,
) -> Iterator[Entry]:
    """Every key of a model, nested models expanded after their parent's row."""
    for name, info in model.model_fields.items():
        alias = info.alias or name
        where = f"{model.__name__}.{name}"
        nested = model_of(info.annotation)
        own = parse_doc(info.description, where, _aliases(nested) if nested else ())
        # In a parent's context (its docstring's `key`: paragraph, its default instance), a key
        # may mean and default to more than its own docstring says.
        outer = (context or {}).get(alias)
        given = getattr(instance, name) if instance is not None else None
        default = (
            outer.default
            if outer is not None and outer.default is not None
            else f"`{_value(given)}`"
            if given is not None
            else own.default
        )
        if outer is not None and outer.text:
            doc = Doc(outer.summary, outer.text, default, own.leaves)
        else:
            doc = Doc(own.summary, own.text, default, own.leaves)
        key = prefix + alias
        yield Entry(
            key=key,
            type=_type_name(info.annotation),
            allowed=_allowed(
                info.annotation,
                list(info.metadata),
                where,
                FIELD_FORMATS.get((model.__name__, name)),
            ),
            default=_default(info, doc),
            summary=doc.summary,
            text=doc.text,
        )
        if nested is not None:
            child = info.default if isinstance(info.default, BaseModel) else None
            inner_prefix = key + ("[]." if is_list(info.annotation) else ".")
            yield from entries(nested, inner_prefix, doc.leaves, child)


def models() -> list[type[schema.Model]]:
    """Every config model reachable from the stack's top-level keys."""
    found: list[type[schema.Model]] = []

    def visit(model: type[schema.Model]) -> None:
        if model in found:
            return
        found.append(model)
        for info in model.model_fields.values():
            nested = model_of(info.annotation)
            if nested is not None:
                visit(nested)

    for key in schema.STACK_KEYS:
        if key.model is not None:
            visit(key.model)
    return found
