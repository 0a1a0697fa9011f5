"""The YAML text emitter: block-style text of a document tree, as people write stack files."""

from __future__ import annotations

import json
import re
from typing import Any

from dev.fuzz.document import Raw, Secure, items

# Words YAML 1.1 (PyYAML) reads as booleans or null; keys that are such words are quoted when
# emitted, so that only Raw scalars carry the 1.1/1.2 difference on purpose.
_YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}
_PLAIN_KEY = re.compile(r"[A-Za-z_][\w./:-]*")
_PLAIN_VALUE = re.compile(r"[A-Za-z/][\w./@+-]*")


def key_text(k: Any) -> str:
    """A mapping key as emitted: plain where YAML reads it back as the same string, else quoted."""
    if isinstance(k, Raw):
        return k.text
    if isinstance(k, str):
        plain = _PLAIN_KEY.fullmatch(k) and k.lower() not in _YAML_WORDS
        return k if plain else json.dumps(k, ensure_ascii=False)
    return _scalar(k)


def _scalar(v: Any) -> str:
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, Secure):
        return "{secure: " + json.dumps(v.ciphertext) + "}"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    if _PLAIN_VALUE.fullmatch(v) and v.lower() not in _YAML_WORDS:
        return v  # as people write it; starts with a letter, so never a number or a date
    return json.dumps(v, ensure_ascii=False)


def _literal_ok(v: str) -> bool:
    lines = v.split("\n")
    return (
        not v.startswith((" ", "\n"))
        and "\t" not in v
        and "\r" not in v
        and all(line == line.rstrip() for line in lines)
        and not v.endswith("\n\n")
    )


def _emit_value(v: Any, indent: int, head: str, lines: list[str]) -> None:
    if items(v):
        lines.append(head)
        _emit_mapping(items(v), indent + 2, lines)
    elif isinstance(v, list) and v:
        lines.append(head)
        _emit_sequence(v, indent + 2, lines)
    elif isinstance(v, str) and "\n" in v and _literal_ok(v):
        # A pasted file (a kubeconfig) as the user would paste it: a literal block.
        lines.append(head + (" |" if v.endswith("\n") else " |-"))
        lines.extend(
            " " * (indent + 2) + line if line else "" for line in v.rstrip("\n").split("\n")
        )
    else:
        lines.append(f"{head} {_scalar(v)}")


def _emit_mapping(
    pairs: list[tuple[Any, Any]], indent: int, lines: list[str], first: str | None = None
) -> None:
    for n, (k, v) in enumerate(pairs):
        prefix = first if n == 0 and first is not None else " " * indent
        _emit_value(v, indent, f"{prefix}{key_text(k)}:", lines)


def _emit_sequence(seq: list[Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for item in seq:
        if items(item):
            _emit_mapping(items(item), indent + 2, lines, first=pad + "- ")
        elif isinstance(item, list) and item:
            lines.append(pad + "-")
            _emit_sequence(item, indent + 2, lines)
        else:
            lines.append(f"{pad}- {_scalar(item)}")


def emit(document: Any) -> str:
    """Block-style YAML text of a document tree (Secure, Raw and DupDict included)."""
    lines: list[str] = []
    if items(document):
        _emit_mapping(items(document), 0, lines)
    elif isinstance(document, list) and document:
        _emit_sequence(document, 0, lines)
    elif document is not None:
        lines.append(_scalar(document))
    return "\n".join(lines) + "\n"
