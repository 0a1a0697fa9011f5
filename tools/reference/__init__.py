"""`python -m tools.reference`: the configuration reference, generated from the config schema.

components/config/schema/ is the one description of every key a stack file may set: its types,
allowed values, formats and defaults, and each field's docstring (the schema package's docstring
gives their conventions). From it this renders

- docs/configuration.md, between `<!-- config-reference:start -->` and `<!-- config-reference:end
  -->`: a table per top-level key (key path as users write it, type, allowed values or format,
  default, description);
- Pulumi.yaml, between `# config-reference:start` and `# config-reference:end`: the project's
  `config:` declarations (only keys Pulumi can type) and a one-line summary of every key.

`--write` regenerates both files; `--check` exits 1 naming the stale ones (tests/test_reference.py
does the same); with neither, the Markdown reference is printed.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import yaml

from components.config import defaults, schema
from components.config.rules import cluster as cluster_rules
from components.config.rules import exposure
from tools.reference.fields import (
    _NESTED,
    COMMAND,
    EXIT_OK,
    EXIT_STALE,
    MARKDOWN,
    MD_END,
    MD_START,
    PULUMI_YAML,
    ROOT,
    YAML_END,
    YAML_START,
    Entry,
    _aliases,
    _value,
    entries,
    model_of,
    models,
    parse_doc,
    pattern_format,
)

# --- Markdown -------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _plain(text: str) -> str:
    """Text for a YAML comment: no Markdown links, emphasis or code marks."""
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    return text.replace("**", "").replace("`", "")


def _top_level_rows() -> list[str]:
    rows = ["| key | type | default | description |", "|---|---|---|---|"]
    for key in schema.STACK_KEYS:
        doc = parse_doc(key.doc, key.key)
        if key.model is not None:  # its own section below
            name, text = f"[`{key.key}`](#{_slug(key.key)})", doc.text
        else:
            name = f"`{key.key}`"
            text = f"{doc.text} Format: {pattern_format(key.pattern or '', key.key)}."
        rows.append(f"| {name} | {key.type} | {_cell(doc.default or 'none')} | {_cell(text)} |")
    return rows


def _slug(key: str) -> str:
    """GitHub's anchor of a `## key` heading: lowercase, punctuation but `-` dropped."""
    return re.sub(r"[^a-z0-9 _-]", "", key.lower()).replace(" ", "-")


def _existing_note() -> str:
    refused = [*cluster_rules.GKE_ONLY_CLUSTER_KEYS, *exposure.GKE_NETWORK_KEYS]
    order = _aliases(schema.ClusterSpec)
    listed = ", ".join(f"`{k}`" for k in sorted(refused, key=order.index))
    return (
        f"With `mode: existing` these keys configure a GKE cluster and are refused: {listed}; "
        "`gcp:project` and `gcp:region` are not needed."
    )


def _default_workloads() -> list[str]:
    gke = defaults.default_workloads("autopilot")[0]
    existing = defaults.default_workloads("existing")[0]
    dumped = yaml.safe_dump(
        {"gke-gpu:workloads": [gke]}, sort_keys=False, default_flow_style=None, width=100
    )
    changed = [f"`{k}: {_value(v)}`" for k, v in existing.items() if gke.get(k) != v]
    dropped = [f"`{k}`" for k in gke if k not in existing]
    return [
        "Unset, `gke-gpu:workloads` is this one workload:",
        "",
        "```yaml",
        dumped.rstrip(),
        "```",
        "",
        f"On an existing cluster the same with {', '.join(changed)}"
        + (f" and no {', '.join(dropped)}" if dropped else "")
        + ".",
    ]


def markdown() -> str:
    """The generated part of docs/configuration.md, markers excluded."""
    lines = [
        f"<!-- Generated from components/config/schema/ by `{COMMAND}`:",
        "edit the schema's docstrings, not this; tests/test_reference.py fails when the two",
        "differ. -->",
        "",
        "## Top-level keys",
        "",
        *_top_level_rows(),
        "",
        _NESTED,
    ]
    for key in schema.STACK_KEYS:
        if key.model is None:
            continue
        doc = parse_doc(key.doc, key.key)
        lines += ["", f"## {key.key}", "", doc.text, ""]
        lines += [f"Type: {key.type}. Default: {doc.default or 'none'}.", ""]
        lines += ["| key | type | allowed | default | description |", "|---|---|---|---|---|"]
        lines += [
            f"| `{e.key}` | {e.type} | {_cell(e.allowed) or '-'} | {_cell(e.default)} | "
            f"{_cell(e.text)} |"
            for e in entries(key.model)
        ]
        if key.model is schema.ClusterSpec:
            lines += ["", _existing_note()]
        if key.model is schema.WorkloadSpec:
            lines += ["", *_default_workloads()]
    return "\n".join(lines) + "\n"


# --- Pulumi.yaml ----------------------------------------------------------------------------------

_KEY, _TYPE, _DEFAULT = 29, 17, 23


def _short_default(text: str) -> str:
    plain = _plain(text)
    short = re.split(r" \(|, |; ", plain, maxsplit=1)[0]
    return short if len(short) < _DEFAULT else "derived"


def _yaml_line(key: str, kind: str, default: str, summary: str) -> list[str]:
    head = f"#   {key:<{_KEY - 1}} {kind:<{_TYPE - 1}} {default:<{_DEFAULT - 1}} "
    if len(head) > 4 + _KEY + _TYPE + _DEFAULT:
        head = f"#   {key} {kind} {default} "
    indent = "#" + " " * (len(head) - 1)
    wrapped = textwrap.wrap(
        summary, width=132, initial_indent=head, subsequent_indent=indent, break_on_hyphens=False
    )
    return [line.rstrip() for line in wrapped]


def _yaml_summary(entry: Entry) -> str:
    summary = _plain(entry.summary)
    enum = re.fullmatch(r"(`[^`]+`(?:, `[^`]+`)*)", entry.allowed)
    if enum and "," in enum.group(1):
        summary += " [" + _plain(entry.allowed).replace(", ", " | ") + "]"
    return summary


def pulumi_yaml() -> str:
    """The generated part of Pulumi.yaml, markers excluded."""
    lines = [
        f"# Generated from components/config/schema/ by `{COMMAND}`:",
        "# edit the schema's docstrings, not this; tests/test_reference.py fails when the two",
        "# differ. The full reference, with formats and details: docs/configuration.md.",
        "# components/config/ checks every key before any resource is registered.",
        "#",
        "# Pulumi lets a project declare types only for its own keys, and only the types",
        "# string/integer/boolean/array (pulumi/pulumi sdk/go/common/workspace/project.go,",
        "# Validate, and project.json), so only the plain keys are declared under `config:`;",
        "# the others are described key by key in the comments below it.",
        "config:",
    ]
    for key in schema.STACK_KEYS:
        namespace, _, name = key.key.partition(":")
        if namespace != "gke-gpu" or key.model is not None:
            continue
        doc = parse_doc(key.doc, key.key)
        description = _plain(doc.summary).rstrip(".")
        if doc.default:
            description += f" (default {_plain(doc.default)})"
        lines += [f"  {name}:", f"    type: {key.type}", f"    description: {description}."]
    previous: schema.StackKey | None = None
    for key in schema.STACK_KEYS:
        doc = parse_doc(key.doc, key.key)
        if previous is None or key.model is not None or previous.model is not None:
            lines.append("#")  # plain keys in a row share a block; each section has its own
        previous = key
        if key.model is None:
            default = _short_default(doc.default or "none")
            lines += _yaml_line(key.key, key.type, default, _plain(doc.summary))
            continue
        lines.append(f"# {key.key} ({key.type}): {_plain(doc.summary)}")
        for e in entries(key.model):
            lines += _yaml_line(e.key, e.type, _short_default(e.default), _yaml_summary(e))
        if key.model is schema.ClusterSpec:
            note = textwrap.wrap(_plain(_existing_note()), width=96)
            lines += [f"#   ({note[0]}", *(f"#    {line}" for line in note[1:])]
            lines[-1] += ")"
    return "\n".join(lines) + "\n"


# --- files ----------------------------------------------------------------------------------------


def _replace(text: str, start: str, end: str, body: str, path: Path) -> str:
    if start not in text or end not in text:
        raise ValueError(f"{path.name} lacks the markers {start.strip()!r} / {end!r}")
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1]
    return head + start + body + end + tail


def expected() -> dict[Path, str]:
    """Each generated file as it should read now."""
    return {
        MARKDOWN: _replace(MARKDOWN.read_text(), MD_START, MD_END, markdown(), MARKDOWN),
        PULUMI_YAML: _replace(
            PULUMI_YAML.read_text(), YAML_START, YAML_END, pulumi_yaml(), PULUMI_YAML
        ),
    }


def stale() -> list[Path]:
    return [path for path, text in expected().items() if path.read_text() != text]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.reference", description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="regenerate the files")
    mode.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    args = parser.parse_args(argv)
    if args.write:
        for path, text in expected().items():
            if path.read_text() != text:
                path.write_text(text)
                print(f"wrote {path.relative_to(ROOT)}")
        return EXIT_OK
    if args.check:
        paths = stale()
        for path in paths:
            print(f"{path.relative_to(ROOT)} is stale: run `{COMMAND}`", file=sys.stderr)
        return EXIT_STALE if paths else EXIT_OK
    print(markdown(), end="")
    return EXIT_OK


__all__ = [
    "COMMAND",
    "EXIT_OK",
    "EXIT_STALE",
    "Entry",
    "MARKDOWN",
    "MD_END",
    "MD_START",
    "PULUMI_YAML",
    "ROOT",
    "YAML_END",
    "YAML_START",
    "entries",
    "expected",
    "main",
    "markdown",
    "model_of",
    "models",
    "parse_doc",
    "pattern_format",
    "pulumi_yaml",
    "stale",
]
