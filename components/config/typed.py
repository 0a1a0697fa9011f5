"""Plain-typed dataclasses from plain values, by their annotations.

A public component's Args are dataclasses of plain types (the SDK's analyzer reads them:
pulumi/provider/experimental/analyzer.py). The multi-language provider host hands a component
its inputs as a dict of plain values instead: nested objects as dicts, lists as lists, numbers
as floats, only the Enums already converted (component.py map_input_properties). `build` turns
such a dict into the Args the component declares; the config loader uses `coerce` to turn a
schema's Literal strings into the Enums of the resolved model.
"""

import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
_SEQUENCES = (list, tuple, Sequence, typing.Sequence)
_MAPPINGS = (dict, Mapping, typing.Mapping)


def build(cls: type[T], values: Mapping[str, Any] | T) -> T:
    """`values` as a `cls`: already one, or a dict of its fields (Python names), each coerced to
    its annotation; a field left out keeps its default."""
    if isinstance(values, cls):
        return values
    assert isinstance(values, Mapping), f"{cls.__name__}: expected a mapping, got {values!r}"
    hints = annotations(cls)
    fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: coerce(hints[k], v) for k, v in values.items() if k in fields})


def annotations(cls: type) -> dict[str, Any]:
    """The annotations of `cls` and its bases, strings (a module with `from __future__ import
    annotations`) evaluated; unlike typing.get_type_hints, pulumi.Input's own forward reference
    to Output is left as it is."""
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        found.update(inspect.get_annotations(klass, eval_str=True))
    return found


def coerce(annotation: Any, value: Any) -> Any:
    """`value` as `annotation` says: an Enum from its value, a nested dataclass or NamedTuple
    from a dict, a sequence as a tuple (the resolved model is frozen and hashable), an int from
    the float the wire carries. Anything else (an Output, a resource) is handed on as it is."""
    if value is None:
        return None
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return coerce(members[0], value) if len(members) == 1 else value
    if origin in _SEQUENCES and isinstance(value, list | tuple):
        args = typing.get_args(annotation)
        return tuple(coerce(args[0] if args else Any, v) for v in value)
    if origin in _MAPPINGS and isinstance(value, Mapping):
        args = typing.get_args(annotation)
        return {k: coerce(args[1] if len(args) == 2 else Any, v) for k, v in value.items()}
    if not isinstance(annotation, type):
        return value
    if issubclass(annotation, enum.Enum):
        return value if isinstance(value, annotation) else annotation(value)
    if dataclasses.is_dataclass(annotation) and isinstance(value, Mapping):
        return build(annotation, value)
    if issubclass(annotation, tuple) and hasattr(annotation, "_fields"):  # a NamedTuple
        hints = annotations(annotation)
        names = annotation._fields  # type: ignore[attr-defined]
        items = value if isinstance(value, Mapping) else dict(zip(names, value, strict=True))
        return annotation(**{k: coerce(hints[k], v) for k, v in items.items()})
    if annotation is int and isinstance(value, float) and value.is_integer():
        return int(value)
    return value
