"""The mutations of issue 8's classes and issue 30's injection, one module a class; `MUTATIONS`
lists them all."""

from __future__ import annotations

from dev.fuzz.case import CLASSES
from dev.fuzz.mutations import (
    bad_input,
    crash,
    hide_another,
    injection,
    nested_secret,
    secret_echo,
)
from dev.fuzz.mutations.registry import REGISTERED, Doc, Mutator, Spec, mutation

MODULES = (nested_secret, crash, bad_input, secret_echo, hide_another, injection)
"""Imported for the mutations they register."""

# In CLASSES order, each class in its module's order: generate() draws from this list by
# position, so this order is part of which case a (seed, index) gives.
MUTATIONS: list[Spec] = sorted(REGISTERED, key=lambda spec: CLASSES.index(spec.cls))

__all__ = ["MODULES", "MUTATIONS", "Doc", "Mutator", "Spec", "mutation"]
