"""Which state entry a registered resource takes over: its URN, else one of its aliases.

The engine's lookup (pulumi/pulumi pkg/resource/deploy/step_generator.go: getOldResource,
generateAliases, collapseAliasToUrn, inheritedChildAlias), one registration at a time, in
registration order. The golden-URN check (tests/golden.py) replays upgrades with it; the plan's
diff (tools/plan_diff.py) matches an earlier plan's resources with it.
"""

from __future__ import annotations

from typing import Any, Protocol

from tools.engine import PROJECT

ROOT_STACK_TYPE = "pulumi:pulumi:Stack"


class Aliased(Protocol):
    """What the lookup needs of a resource: a Registration, or a plan.json entry read back."""

    @property
    def type(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def urn(self) -> str: ...
    @property
    def parent(self) -> str: ...
    @property
    def aliases(self) -> list[dict[str, Any]]: ...


def qualified_type(urn: str) -> str:
    return urn.split("::")[2]


def name_of(urn: str) -> str:
    return urn.split("::", 3)[3]


def stack_of(urn: str) -> str:
    return urn.split("::")[0].removeprefix("urn:pulumi:")


def urn_of(stack: str, parent: str, type_token: str, name: str, project: str = PROJECT) -> str:
    if parent and qualified_type(parent) != ROOT_STACK_TYPE:
        type_token = f"{qualified_type(parent)}${type_token}"
    return f"urn:pulumi:{stack}::{project}::{type_token}::{name}"


class AliasLookup:
    """The engine's alias lookup (step_generator.go getOldResource) over a set of old URNs."""

    def __init__(self, olds: set[str] | dict[str, Any]) -> None:
        self.olds = olds
        self.used: dict[str, str] = {}  # sg.aliases: new URN -> the old URN it matched
        self.seen: set[str] = set()  # sg.urns: URNs registered so far
        self.claimed: dict[str, str] = {}  # sg.aliased: old URN -> the new URN that claimed it
        self.errors: list[str] = []

    def _collapse(self, r: Aliased, alias: dict[str, Any]) -> str:
        if alias.get("urn"):
            return alias["urn"]
        named: str = alias.get("parentUrn") or ""
        parent = self.used.get(named, named) if named else r.parent
        if alias.get("noParent") or (parent and qualified_type(parent) == ROOT_STACK_TYPE):
            parent = ""
        stack = alias.get("stack") or stack_of(r.urn)
        project = alias.get("project") or PROJECT
        type_token = alias.get("type") or r.type
        return urn_of(stack, parent, type_token, alias.get("name") or r.name, project)

    def _inherited(self, r: Aliased, child_type: str, child_name: str, alias: str) -> str:
        parent_name = name_of(r.parent)
        name = child_name
        if child_name.startswith(parent_name):
            name = name_of(alias) + child_name[len(parent_name) :]
        return urn_of(stack_of(r.urn), alias, child_type, name)

    def aliases(self, r: Aliased) -> list[str]:
        found = [self._collapse(r, a) for a in r.aliases]
        parent_alias = self.used.get(r.parent)
        if parent_alias:
            found.append(self._inherited(r, r.type, r.name, parent_alias))
            for alias in r.aliases:
                collapsed = self._collapse(r, alias)
                child_type = qualified_type(collapsed).rsplit("$", 1)[-1]
                found.append(self._inherited(r, child_type, name_of(collapsed), parent_alias))
        return list(dict.fromkeys(found))

    def old_of(self, r: Aliased) -> str | None:
        """The old URN `r` takes over (None: it is created); duplicate claims go to `errors`."""
        if r.urn in self.claimed:
            self.errors.append(f"{r.urn}: another resource already claimed this URN by alias")
        self.seen.add(r.urn)
        for candidate in [r.urn, *self.aliases(r)]:
            if candidate not in self.olds:
                continue
            if candidate != r.urn:
                if candidate in self.seen or candidate in self.claimed:
                    self.errors.append(f"{r.urn}: its alias {candidate} is taken (duplicate alias)")
                self.claimed[candidate] = r.urn
                self.used[r.urn] = candidate
            return candidate
        return None
