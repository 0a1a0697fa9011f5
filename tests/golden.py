"""Golden URNs: what an upgrade of a deployed stack would delete, replace or rename.

A stack deployed with an earlier release holds state under that release's URNs. On `pulumi up`
the engine looks each registered resource up by its URN, then by its aliases; a state entry no
resource claims is deleted, and a claimed resource whose physical name differs is replaced. This
module replays that lookup on the recorded RegisterResource requests, as the engine does it
(pulumi/pulumi pkg/resource/deploy/step_generator.go: getOldResource, generateAliases,
collapseAliasToUrn, inheritedChildAlias), against `tests/golden/urns.json`.

`python -m tests.golden --write` rewrites the golden file. Do it only for an intended change:
new resources, or a replacement named in tests/test_upgrades.py and the release notes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.engine import PROJECT, ROOT, Registration
from tools.render import render

GOLDEN = Path(__file__).parent / "golden" / "urns.json"
ROOT_STACK_TYPE = "pulumi:pulumi:Stack"
# Inputs that name a Google Cloud resource: changing any of them replaces it (ForceNew in
# terraform-provider-google for each type this program creates).
GCP_IDENTITY = (
    "project",
    "location",
    "region",
    "cluster",
    "name",
    "accountId",
    "roleId",
    "bucket",
    "serviceAccountId",
    "role",
    "member",
    "router",
)


def stacks() -> list[tuple[str, Path]]:
    """dev, prod, every example and every catalog stack: the stacks users deploy or copy."""
    found = [
        (p.name[len("Pulumi.") : -len(".yaml")], p) for p in sorted(ROOT.glob("Pulumi.*.yaml"))
    ]
    for folder in (ROOT / "examples", ROOT / "tests" / "stacks"):
        found += [
            (p.name[len("Pulumi.") : -len(".yaml")], p) for p in sorted(folder.glob("*.yaml"))
        ]
    return found


def physical_name(r: Registration) -> str | None:
    """The name the cloud knows the resource by (None: the engine keeps it by URN only)."""
    if r.type.startswith("kubernetes:") and r.custom:
        metadata = r.inputs.get("metadata") or {}
        return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}"
    if r.type.startswith("gcp:"):
        return json.dumps({k: r.inputs[k] for k in GCP_IDENTITY if k in r.inputs}, sort_keys=True)
    return None


def snapshot(resources: Iterable[Registration]) -> dict[str, str | None]:
    return {r.urn: physical_name(r) for r in resources}


def _qualified_type(urn: str) -> str:
    return urn.split("::")[2]


def _name(urn: str) -> str:
    return urn.split("::", 3)[3]


def _stack(urn: str) -> str:
    return urn.split("::")[0].removeprefix("urn:pulumi:")


def _urn(stack: str, parent: str, type_: str, name: str) -> str:
    if parent and _qualified_type(parent) != ROOT_STACK_TYPE:
        type_ = f"{_qualified_type(parent)}${type_}"
    return f"urn:pulumi:{stack}::{PROJECT}::{type_}::{name}"


@dataclass
class Upgrade:
    """What `pulumi up` would do to the golden state with this program."""

    deleted: list[str] = field(default_factory=list)
    """Golden URNs no resource claims (by URN or alias): the engine deletes them."""
    renamed: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    """(golden URN, old physical name, new one): replaced (or a second copy created)."""
    aliased: dict[str, str] = field(default_factory=dict)
    """New URN -> the golden URN it took over through an alias."""


class _Steps:
    """The engine's alias lookup (step_generator.go), one registration at a time, in order."""

    def __init__(self, olds: dict[str, str | None]) -> None:
        self.olds = olds
        self.used: dict[str, str] = {}  # sg.aliases: new URN -> the old URN it matched

    def _collapse(self, r: Registration, alias: dict[str, Any]) -> str:
        if alias.get("urn"):
            return alias["urn"]
        named: str = alias.get("parentUrn") or ""
        parent = self.used.get(named, named) if named else r.parent
        if alias.get("noParent") or (parent and _qualified_type(parent) == ROOT_STACK_TYPE):
            parent = ""
        stack = alias.get("stack") or _stack(r.urn)
        return _urn(stack, parent, alias.get("type") or r.type, alias.get("name") or r.name)

    def _inherited(self, child_type: str, child_name: str, parent: str, parent_alias: str) -> str:
        parent_name = _name(parent)
        name = child_name
        if child_name.startswith(parent_name):
            name = _name(parent_alias) + child_name[len(parent_name) :]
        return _urn(_stack(parent_alias), parent_alias, child_type, name)

    def aliases(self, r: Registration) -> list[str]:
        found = [self._collapse(r, a) for a in r.aliases]
        parent_alias = self.used.get(r.parent)
        if parent_alias:
            found.append(self._inherited(r.type, r.name, r.parent, parent_alias))
            for alias in r.aliases:
                collapsed = self._collapse(r, alias)
                child_type = _qualified_type(collapsed).rsplit("$", 1)[-1]
                found.append(self._inherited(child_type, _name(collapsed), r.parent, parent_alias))
        return list(dict.fromkeys(found))

    def old_of(self, r: Registration) -> str | None:
        for candidate in [r.urn, *self.aliases(r)]:
            if candidate in self.olds:
                if candidate != r.urn:
                    self.used[r.urn] = candidate
                return candidate
        return None


def upgrade(olds: dict[str, str | None], resources: list[Registration]) -> Upgrade:
    steps = _Steps(olds)
    result = Upgrade()
    claimed: set[str] = set()
    for r in resources:
        old = steps.old_of(r)
        if old is None:
            continue
        claimed.add(old)
        if old != r.urn:
            result.aliased[r.urn] = old
        if olds[old] != physical_name(r):
            result.renamed.append((old, olds[old], physical_name(r)))
    result.deleted = sorted(set(olds) - claimed)
    return result


def current() -> dict[str, dict[str, str | None]]:
    return {name: snapshot(render(name, path).recording.resources) for name, path in stacks()}


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print("usage: python -m tests.golden --write   (rewrites tests/golden/urns.json)")
        return 2
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(current(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
