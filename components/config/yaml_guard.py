"""Reading a stack file's YAML the way the Pulumi CLI does, and refusing what would hang, crash
or be read differently by it, fast and with the line and key path.

The CLI reads stack files with Go's gopkg.in/yaml.v3 and hands the program JSON. So:
- only JSON's types: `!!binary`, `!!set`, `!!omap`, `!!pairs` and custom tags (`!foo`) have no
  JSON form and are refused;
- aliases are expanded: a 1 KB "billion laughs" file expands to millions of nodes, so the
  expanded size is bounded (yaml.v3 bounds it too: decode.go `allowedAliasRatio`, "document
  contains excessive aliasing");
- nesting is bounded (the composer is recursive: Python would crash with RecursionError);
- integers: yaml.v3 `resolve` strips `_` and parses with Go's `strconv.ParseInt(plain, 0, 64)`
  (gopkg.in/yaml.v3 resolve.go, case 'D', 'S'), so `010` is octal 8 there, while YAML 1.2 (and
  this reader) says 10. Such plain scalars are refused; `0x10`, `0o10`, `0b10` and `1_000` are
  read alike by both (16, 8, 2, 1000) and accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from . import formats
from .formats import join
from .model import NAMESPACE

# A stack file holds config, not data: the largest in this repository is under 5 KB. Larger
# files are refused before parsing, which in pure Python takes ~2 s per MiB of small nodes.
MAX_FILE_BYTES = 1024 * 1024
# Nodes after expanding aliases (each scalar, list and mapping counts once).
MAX_EXPANDED_NODES = 100_000
# Commas, colons and line breaks in the text, an upper bound of its values read before parsing
# (the largest stack file in this repository has under 300).
MAX_SEPARATORS = 20_000
# Levels of nesting below the document (prod's deepest value is 5 levels down).
MAX_DEPTH = 32

_TAG = "tag:yaml.org,2002:"
JSON_TAGS = frozenset(
    _TAG + name for name in ("str", "int", "float", "bool", "null", "map", "seq", "merge")
)
# Implicit timestamps (`2024-01-01`) stay strings (see source._yaml); yaml.v3 does the same when
# decoding into interface{}.
TIMESTAMP_TAG = _TAG + "timestamp"
# A plain scalar yaml.v3 reads as an octal number (a leading 0 followed by a digit or `_`).
GO_OCTAL = re.compile(r"[-+]?0[0-9_]+")
DEEP = (
    f"nested more than {MAX_DEPTH} levels deep. No gke-gpu key nests that deep; check the "
    "brackets and indentation."
)
TYPED_TAGS = frozenset(_TAG + name for name in ("int", "float", "bool", "null"))
NO_JSON = "has no JSON form, and the Pulumi CLI passes config to the program as JSON"


@dataclass
class _Walk:
    filename: str
    resolver: Any
    problems: list[str] = field(default_factory=list)
    sizes: dict[int, tuple[int, int]] = field(default_factory=dict)
    aliased: bool = False
    fatal: bool = False
    """Too deep or too big to construct; tag and number problems leave the document readable."""

    def add(self, node: Node, path: str, message: str) -> None:
        """`path: message (file line L, column C)`: the key path first, as every problem."""
        mark = node.start_mark
        line = f"line {mark.line + 1}, column {mark.column + 1}"
        # Without a key path, the file is the path (as every file-level problem: source.py).
        self.problems.append(
            f"{path}: {message} ({self.filename} {line})"
            if path
            else f"{self.filename}: {line}: {message}"
        )

    def size(self, node: Node, path: str, depth: int) -> tuple[int, int]:
        """(values, characters of text) under `node` with aliases expanded; each anchored node
        is measured once, so an alias bomb costs its own size here, not its expansion."""
        known = self.sizes.get(id(node))
        if known is not None:
            self.aliased = True
            return known
        if depth > MAX_DEPTH:
            self.add(node, path, DEEP)
            self.fatal = True
            self.sizes[id(node)] = (1, 0)
            return 1, 0
        values, chars = 1, 0
        children: list[tuple[Node, str]] = []
        if isinstance(node, ScalarNode):
            self.scalar(node, path)
            chars = len(node.value)
        elif isinstance(node, SequenceNode):
            self.tag(node, path, _TAG + "seq")
            children = [
                (item, join(path, i) if path else f"[{i}]") for i, item in enumerate(node.value)
            ]
        elif isinstance(node, MappingNode):
            self.tag(node, path, _TAG + "map")
            for key, value in node.value:
                name = key.value if isinstance(key, ScalarNode) else "?"
                children += [(key, path), (value, _child(path, name))]
        for child, child_path in children:
            more_values, more_chars = self.size(child, child_path, depth + 1)
            values, chars = values + more_values, chars + more_chars
        self.sizes[id(node)] = (values, chars)
        return values, chars

    def tag(self, node: Node, path: str, expected: str) -> None:
        tag = str(node.tag)
        if tag != expected and tag not in JSON_TAGS:
            self.add(node, path, f"the tag {_short(tag)} {NO_JSON}. Remove the tag.")

    def implicit(self, node: ScalarNode) -> str:
        return _implicit_tag(self.resolver, node)

    def scalar(self, node: ScalarNode, path: str) -> None:
        tag = str(node.tag)
        if tag not in JSON_TAGS and tag != TIMESTAMP_TAG:
            self.add(
                node,
                path,
                f"the tag {_short(tag)} {NO_JSON}. Remove the tag (a text value needs none; "
                "quote it if it looks like a number).",
            )
        elif tag in TYPED_TAGS and self.implicit(node) != tag:
            # An explicit `!!int abc`, `!!bool maybe`, or a tag on a quoted value: Python's reader
            # fails on the first (a crash, not a message), and Go's reads quoted numbers its own
            # way (`!!int "010"` is octal 8 there).
            self.add(
                node,
                path,
                f"{_short(tag)} {formats.show(node.value)} is not written as a "
                f"{_short(tag)[2:]} value. Remove the tag (and the quotes, for a number), e.g. "
                "`replicas: 2`, `spot: true`.",
            )
        elif node.style is None and tag == _TAG + "int" and GO_OCTAL.fullmatch(node.value):
            digits = node.value.replace("_", "")
            decimal, octal = int(digits), go_octal(digits)
            if octal is not None and octal != decimal:
                self.add(
                    node,
                    path,
                    f"{node.value} has a leading zero: the Pulumi CLI reads it as octal {octal} "
                    f"(Go's YAML reader), this plan as {decimal}. Write the number you mean "
                    f"without the leading zero, or quote it ('{node.value}') if it is text.",
                )


def _implicit_tag(resolver: Any, node: ScalarNode) -> str:
    """The tag YAML 1.2 gives this scalar without an explicit one (quoted: always str)."""
    if node.style is not None:
        return _TAG + "str"
    return str(resolver.resolve(ScalarNode, node.value, (True, False)))


def _short(tag: str) -> str:
    return tag.replace(_TAG, "!!")


def _child(path: str, name: object) -> str:
    """Key paths as the other messages write them: `workloads[0].replicas` for gke-gpu keys."""
    if path == "config" and isinstance(name, str) and name.startswith(NAMESPACE + ":"):
        return name.partition(":")[2]
    return join(path, str(name)) if path else str(name)


def go_octal(digits: str) -> int | None:
    """What `strconv.ParseInt(digits, 0, 64)` gives for a leading-zero number, or None when it
    fails (an 8 or 9 among the digits: yaml.v3 then reads the same decimal as a float)."""
    sign = -1 if digits.startswith("-") else 1
    try:
        return sign * int(digits.lstrip("+-"), 8)
    except ValueError:
        return None


_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"\\]|\\.)*\"")
# A config key's line in a stack file (`  gke-gpu:workloads:`), found without parsing.
_CONFIG_KEY_LINE = re.compile(r"^  ([^\s#][^:\n]*:[^:\s]+):", re.MULTILINE)
_BRACKETS = re.compile(r"[\[\]{}]")


def too_deep_at(text: str) -> int | None:
    """Where `[`/`{` nesting outside quotes first goes deeper than MAX_DEPTH (an offset), or None.
    The parser looks ahead over a whole flow collection before composing it (~10 µs per
    bracket), so a file of half a million brackets is refused from its text first."""
    blanked = _QUOTED.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    depth = 0
    for match in _BRACKETS.finditer(blanked):
        depth = depth + 1 if match.group() in "[{" else max(depth - 1, 0)
        if depth > MAX_DEPTH:
            return match.start()
    return None


def _top_key(text: str, offset: int) -> str:
    """The config key (`workloads`, `gcp:project`) whose value holds `offset`."""
    keys = _CONFIG_KEY_LINE.findall(text[:offset])
    return keys[-1].removeprefix(NAMESPACE + ":") if keys else ""


def largest_top_key(text: str) -> str:
    """The config key (`workloads`) whose lines take the most bytes, found without parsing."""
    starts = [
        (m.start(), m.group(1).removeprefix(NAMESPACE + ":"))
        for m in _CONFIG_KEY_LINE.finditer(text)
    ]
    spans = [
        (end - start, key)
        for (start, key), end in zip(starts, [s for s, _ in starts[1:]] + [len(text)], strict=True)
    ]
    return max(spans)[1] if spans else ""


def _makes(key: str, filename: str) -> str:
    """`workloads: makes Pulumi.x.yaml` (the key path first, as every problem), or the file."""
    return f"{key}: makes {filename}" if key else filename


def oversized(path: Path) -> str | None:
    """Why a stack file is too big to read, naming its biggest key when it can, or None."""
    size = path.stat().st_size
    if size <= MAX_FILE_BYTES:
        return None
    # Up to 16 MiB the text is scanned (in milliseconds) for the key that makes it big.
    key = largest_top_key(path.read_text(encoding="utf-8")) if size <= 16 * MAX_FILE_BYTES else ""
    where = _makes(key, path.name)
    return (
        f"{where} {size / 2**20:.1f} MiB, over the {MAX_FILE_BYTES // 2**20} MiB a stack file may "
        "hold. It holds config, not data: move large values (prompts, files) into the image or a "
        "bucket."
    )


def compose(yaml: YAML, text: str, filename: str) -> tuple[Node | None, list[str]]:
    """The document's node graph (None when it must not be constructed: too deep, or aliases
    that expand too far) and every problem found in it. Nothing is constructed yet, so an alias
    bomb costs only its own size here."""
    offset = too_deep_at(text)
    if offset is not None:
        line = text.count("\n", 0, offset) + 1
        key = _top_key(text, offset)
        where = f"line {line}"
        return None, [
            f"{key}: {DEEP} ({filename} {where})" if key else f"{filename}: {where}: {DEEP}"
        ]
    separators = text.count(",") + text.count("\n") + text.count(":")
    if separators > MAX_SEPARATORS:  # composing ~20,000 values takes ~1 s: refuse from the text
        where = _makes(largest_top_key(text), filename)
        return None, [
            f"{where} hold about {separators:,} values (commas, colons and lines), over the "
            f"{MAX_SEPARATORS:,} a stack file may hold and far over any stack's config. Write "
            "fewer values."
        ]
    try:
        node = yaml.compose(text)
    except RecursionError:
        return None, [f"{filename}: {DEEP}"]
    if not isinstance(node, MappingNode):
        return node, []  # not a stack file at all: source.read_stack_file says so, unexpanded
    walk = _Walk(filename, yaml.resolver)
    values, chars = walk.size(node, "", 0)
    if values > MAX_EXPANDED_NODES or chars > MAX_FILE_BYTES:
        walk.fatal = True
        amount = f"{values:,} values and {chars / 2**20:.1f} MiB of text"
        held = f"its aliases (*name) expand to {amount}" if walk.aliased else f"it holds {amount}"
        walk.problems.append(
            f"{filename}: {held}, over the {MAX_EXPANDED_NODES:,} values and "
            f"{MAX_FILE_BYTES // 2**20} MiB a stack file may hold (the Pulumi CLI refuses "
            "excessive aliasing too). Write fewer values, or use fewer aliases."
        )
    return (None if walk.fatal else node), walk.problems


def constructed(yaml: YAML, node: Node) -> Any:
    return yaml.constructor.construct_document(node)
