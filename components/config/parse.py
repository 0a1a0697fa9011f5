"""Parsing raw config items into schema models so that one broken field hides nothing else.

pydantic reports every type, format and unknown-key error of an item at once, but then yields no
model, so the cross-field rules (GPU counts, zones, drivers) would stay silent. `parse` therefore
reports those errors, marks their key paths broken, and parses the rest once more without the
broken leaves (a required one gets a stand-in): the rules run on the rest, and what they say
about a broken path is left out (`Problems.final`), as its own problem already says what is wrong.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from . import formats
from .context import HIDDEN_KEY, Context
from .problems import Problem, Problems
from .schema import Model, aliases

M = TypeVar("M", bound=Model)

# Stand-ins for required fields that are missing or broken, so that the rest is still checked.
_STAND_INS: dict[str, Any] = {
    "name": "unnamed",
    "image": "unnamed",
    "gpu": {},
    "size": "1Gi",
    "mountPath": "/",
    "strategy": "TIME_SHARING",
    "replicas": 2,
}
_KINDS = {
    bool: "a boolean",
    int: "a number",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "a mapping",
    type(None): "null",
}
_EXPECTED = {
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "string_type": "a string",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


# Words YAML 1.1 read as booleans and YAML 1.2 (the Pulumi CLI's reading) reads as strings.
_YAML11_WORDS = {"on", "off", "yes", "no", "y", "n"}


def kind_of(value: Any) -> str:
    return _KINDS.get(type(value), type(value).__name__)


def _path(base: str, loc: tuple[int | str, ...]) -> str:
    path = base
    for part in loc:
        if part == "[key]":
            continue
        path = formats.join(path, part)
    return path


def _model_at(model: type[Model], loc: tuple[int | str, ...]) -> type[Model] | None:
    """The schema model that holds the last key of `loc`, for listing its allowed keys."""
    current: type[Model] = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        found = next((f for n, f in current.model_fields.items() if (f.alias or n) == part), None)
        if found is None:
            return None
        nested = _nested_model(found.annotation)
        if nested is None:
            return None
        current = nested
    return current


def _nested_model(annotation: Any) -> type[Model] | None:
    if isinstance(annotation, type) and issubclass(annotation, Model):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        nested = _nested_model(arg)
        if nested is not None:
            return nested
    return None


# Words from other tools that name one of our keys: GKE's own flags and Terraform's arguments.
SYNONYMS = {
    "preemptible": "spot",
    "accelerator": "gpu",
    "accelerators": "gpu",
    "guestAccelerator": "gpu",
    "nodeCount": "minNodes",
    "nodeLocations": "zones",
    "minNodeCount": "minNodes",
    "maxNodeCount": "maxNodes",
    "totalMinNodeCount": "minNodes",
    "totalMaxNodeCount": "maxNodes",
    "containerPort": "port",
    "replicaCount": "replicas",
}


def did_you_mean(key: str, known: list[str]) -> str:
    """` Did you mean 'spot'?` for a misspelt or foreign key, else nothing."""
    synonym = SYNONYMS.get(key)
    if synonym in known:
        return f" Did you mean {synonym!r}?"
    by_case = {k.lower(): k for k in known}
    close = by_case.get(key.lower().replace("_", "")) or next(
        iter(difflib.get_close_matches(key, known, n=1, cutoff=0.75)), None
    )
    return f" Did you mean {close!r}?" if close else ""


def message(err: ErrorDetails, model: type[Model], base: str, ctx: Context) -> Problem:
    loc = tuple(err["loc"])
    path = _path(base, loc)
    if err["type"] == "extra_forbidden" and loc:
        path = ctx.key_path(_path(base, loc[:-1]), loc[-1])  # the key may be a pasted value
    return Problem(path, _text(err, model, path, ctx))


def _text(err: ErrorDetails, model: type[Model], path: str, ctx: Context) -> str:
    loc = tuple(err["loc"])
    value = err.get("input")
    kind = err["type"]
    details = err.get("ctx") or {}
    if loc and loc[-1] == "[key]":
        return f"the key {ctx.show(path, value)} is not a string. Quote it."
    if kind == "extra_forbidden":
        holder = _model_at(model, loc)
        known = aliases(holder) if holder else []
        allowed = f" Keys allowed here: {', '.join(known)}." if holder else ""
        hint = did_you_mean(str(loc[-1]), known)
        what = f"{HIDDEN_KEY}, unknown here." if ctx.hides_keys(path) else "unknown key."
        return f"{what}{hint}{allowed} Check the spelling (keys are camelCase)."
    if kind == "missing":
        return "required but not set. Add it to the stack file."
    if kind == "string_pattern_mismatch":
        pattern = str(details.get("pattern", ""))[4:-2]  # strip schema._pattern's ^(?: )$
        return f"{ctx.show(path, value)} {formats.hint(pattern)}"
    if kind in _EXPECTED:
        got = kind_of(value)
        fix = ""
        if kind == "string_type" and isinstance(value, bool | int | float):
            fix = ' Quote it in the stack file (e.g. "8000", "true").'
        elif isinstance(value, str) and value.lower() in _YAML11_WORDS:
            fix = (
                f" Stack files are YAML 1.2, where {value} is the string {value!r}, not a "
                "boolean: write true/false" + (" or a number." if kind == "int_type" else ".")
            )
        elif kind in ("int_type", "int_from_float") and isinstance(value, str):
            fix = " Write the number without quotes."
        elif kind == "int_type" and isinstance(value, bool):
            fix = " (YAML 1.2 reads only true/false as booleans; write a number.)"
        return f"expected {_EXPECTED[kind]}, got {got}.{fix}"
    if kind == "literal_error":
        expected = str(details.get("expected", ""))
        quoted = isinstance(value, str) and value.strip().isdigit() and value.strip() in expected
        fix = " Write the number without quotes." if quoted else ""
        return f"{ctx.show(path, value)} is not allowed. Use one of: {expected}.{fix}"
    bounds = {
        "greater_than_equal": ("at least", "ge"),
        "less_than_equal": ("at most", "le"),
        "greater_than": ("more than", "gt"),
        "less_than": ("less than", "lt"),
    }
    if kind in bounds:
        word, key = bounds[kind]
        return f"{ctx.show(path, value)} is out of range: it must be {word} {details[key]}."
    if kind == "too_long":
        return f"too many entries (at most {details.get('max_length')})."
    if kind == "string_too_long":
        return f"too long (at most {details.get('max_length')} characters)."
    if kind == "string_too_short":
        return "must not be empty."
    return f"not valid ({err['msg']})."


def _child(parent: Any, part: int | str) -> Any:
    if isinstance(parent, Mapping):
        return parent.get(part)
    if isinstance(parent, list) and isinstance(part, int) and part < len(parent):
        return parent[part]
    return None


def _drop(raw: Any, loc: tuple[int | str, ...], missing: bool) -> None:
    """Remove the leaf at `loc` from `raw` (or fill in a stand-in for a required one)."""
    keys = [p for p in loc if p != "[key]"]
    if not keys:
        return
    parent = raw
    for part in keys[:-1]:
        parent = _child(parent, part)
    last = keys[-1]
    if isinstance(parent, dict):
        if isinstance(last, str) and last in _STAND_INS and (missing or last in parent):
            parent[last] = copy.deepcopy(_STAND_INS[last])
        else:
            parent.pop(last, None)
    elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
        parent[last] = None  # a list with a broken item falls back to its default as a whole


def parse(model: type[M], raw: Any, base: str, problems: Problems, ctx: Context) -> M | None:
    """`raw` as `model`, every error reported; or None when it is not even a mapping, or when
    the rest fails again without its broken leaves and their holders (a broken value of a union,
    `reservation`).

    A broken required leaf without a stand-in (an adapter's `path`) leaves its holder incomplete:
    the next pass drops the holder too (the adapter, and so the adapters list, back to its
    default), so the workload's other fields are still checked."""
    if not isinstance(raw, Mapping):
        problems.own(Problem(base, f"expected a mapping of keys, got {kind_of(raw)}."))
        return None
    data: Any = dict(raw)
    for attempt in range(3):
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            errors = exc.errors()
        data = copy.deepcopy(data)
        for err in errors:
            loc = tuple(err["loc"])
            if attempt == 0 and not problems.is_broken(_path(base, loc)):
                problem = message(err, model, base, ctx)
                # A key not shown is reported at its holder, which stays checked.
                problems.own(problem, broken=problem.path == _path(base, loc))
            if attempt > 0:
                loc = loc[:-1]  # what still fails holds a broken leaf: drop the holder
            problems.broken.add(_path(base, loc))
            _drop(data, loc, attempt == 0 and err["type"] == "missing")
        _drop_broken_lists(data)
    return None


def _drop_broken_lists(raw: Any) -> None:
    """Lists with a dropped item fall back to their default as a whole."""
    if isinstance(raw, dict):
        for key in list(raw):
            value = raw[key]
            if isinstance(value, list) and any(v is None for v in value):
                raw.pop(key)
            else:
                _drop_broken_lists(value)


def parse_list(
    model: type[M], raw: Any, base: str, problems: Problems, ctx: Context
) -> list[tuple[int, M]]:
    """Each item of a list key that parses, with its index (broken items are reported)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        problems.own(
            Problem(base, f"expected a list, got {kind_of(raw)}. Use a YAML list (- ...)."),
            broken=False,
        )
        return []
    parsed = []
    for i, item in enumerate(raw):
        result = parse(model, item, f"{base}[{i}]", problems, ctx)
        if result is not None:
            parsed.append((i, result))
    return parsed
