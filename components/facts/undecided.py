"""The placeholder a new variant's descriptor holds for a capability it has yet to declare
(`python -m dev.new_variant` writes one for each): KindSpec and ExposureSpec refuse it when their
module is imported, naming every one left."""

from __future__ import annotations

from dataclasses import fields
from typing import Any


class _Undecided:
    def __repr__(self) -> str:
        return "UNDECIDED"


UNDECIDED: Any = _Undecided()
"""A capability a new variant has yet to declare (`python -m dev.new_variant` writes it for each):
a descriptor holding one fails when its module is imported, naming each."""


def refuse_undecided(descriptor: object) -> None:
    """A TypeError naming every field of `descriptor` (a dataclass) still UNDECIDED, with what each
    means: the variant answers them before anything imports it."""
    left = [f for f in fields(descriptor) if getattr(descriptor, f.name) is UNDECIDED]  # type: ignore[arg-type]
    if left:
        kind = type(descriptor).__name__
        raise TypeError(
            f"{kind} {getattr(descriptor, 'name', '?')!r} leaves {len(left)} capabilities "
            f"undecided: {', '.join(f.name for f in left)}. Declare each (components/"
            f"{'kinds' if kind == 'KindSpec' else 'expose'}/spec.py {kind} says what it means)."
        )
