"""The document model: what a stack file's YAML text says, including what a dict cannot."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Secure:
    """`{secure: <ciphertext>}`; the engine hands the program `plaintext` (decrypted)."""

    ciphertext: str
    plaintext: str
    needles: tuple[str, ...] = ()
    """Distinctive parts of the plaintext to look for (default: the plaintext itself)."""


@dataclass(frozen=True)
class Raw:
    """A scalar written unquoted as `text`; `value` is what YAML 1.2 (the Pulumi CLI) reads."""

    text: str
    value: Any


class DupDict(dict):
    """A mapping whose YAML text repeats some keys after its own items (the CLI rejects it)."""

    dups: list[tuple[Any, Any]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dups = []


def items(v: Any) -> list[tuple[Any, Any]]:
    """A mapping's items as its YAML text lists them (repeated keys last); [] for anything else."""
    if isinstance(v, dict):
        return list(v.items()) + (v.dups if isinstance(v, DupDict) else [])
    return []


def walk(node: Any) -> Iterator[Any]:
    """Every node of a tree, keys included."""
    yield node
    if isinstance(node, dict):
        for k, v in items(node):
            yield from walk(k)
            yield from walk(v)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item)


# --- the engine's form: the config as `pulumi up` hands it to the program ------------------------

NO_ENGINE_FORM = object()
"""What `decrypted` returns for a tree only YAML can say (a duplicate or non-string key)."""


def scalar_text(value: Any) -> Any:
    """A top-level scalar as the program gets it: the CLI stores its text."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def decrypted(node: Any) -> tuple[Any, bool]:
    """The tree with secure values decrypted, and whether any value in it was secure."""
    if isinstance(node, Secure):
        return node.plaintext, True
    if isinstance(node, Raw):
        return node.value, False
    if isinstance(node, DupDict) and node.dups:
        return NO_ENGINE_FORM, False
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        secret = False
        for k, v in node.items():
            if not isinstance(k, str):
                return NO_ENGINE_FORM, False
            out[k], inner = decrypted(v)
            if out[k] is NO_ENGINE_FORM:
                return NO_ENGINE_FORM, False
            secret |= inner
        return out, secret
    if isinstance(node, list):
        found = [decrypted(v) for v in node]
        if any(v is NO_ENGINE_FORM for v, _ in found):
            return NO_ENGINE_FORM, False
        return [v for v, _ in found], any(s for _, s in found)
    return node, False
