"""What `pulumi up` would do to a stack deployed from an earlier plan: `python -m tools.render
STACK --against OLD/plan.json` compares this plan with that one, resource by resource.

Each resource is created, updated in place (which inputs), replaced (which input forces it) or
deleted, as the engine decides it (pulumi/pulumi pkg/resource/deploy/step_generator.go at
commit 1b594989, the mirror's HEAD):

- a resource is found by its URN, then by its aliases (tools/aliases.py); an old one nothing
  claims is deleted;
- a change of an input the provider marks ForceNew replaces it (tools/replacing.py, the tables
  the golden-URN check reads too); any other changed input is an update in place; inputs in
  `ignoreChanges` are not diffed (processIgnoreChanges);
- what depends on a replaced resource sees the inputs it takes from it as unknown until the new
  one exists (calculateDependentReplacements substitutes unknowns for them and asks the provider):
  a Kubernetes provider whose cluster is replaced gets an unknown kubeconfig, and pulumi-kubernetes
  replaces a provider whose kubeconfig is unknown (provider/pkg/provider/provider.go DiffConfig,
  commit 94977969: "We can't tell for sure if a computed value has changed, so we make the
  conservative choice and force a replacement"); every resource of a replaced provider is
  replaced (step_generator.go providerChanged, and calculateDependentReplacements: "If the
  resource's provider is in the replace set, we must replace this resource").

Offline, which input came from the replaced resource is not recorded (plan.json keeps resource
dependencies, not property dependencies): an input of a dependent that holds a value only the
cloud computes (tools/mocks.py MOCKED_VALUES) or a masked secret is taken to be one of them.
Secret values are masked on both sides, so a change of a secret's value alone is not seen.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.aliases import AliasLookup
from tools.engine import MOCKED_VALUES, SECRET_MASK
from tools.replacing import force_new, forcing

PROVIDER_PREFIX = "pulumi:providers:"
COMPONENT_PREFIXES = ("gke-gpu:", "pulumi:pulumi:Stack")
KUBERNETES_PREFIX = "kubernetes:"
CREATE, UPDATE, REPLACE, DELETE = "create", "update", "replace", "delete"
ACTIONS = (CREATE, UPDATE, REPLACE, DELETE)


class PlanFileError(Exception):
    """--against names a file that is not a plan.json of this stack."""


@dataclass(frozen=True)
class Entry:
    """One resource of a plan.json, read back."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    provider: str
    """The URN of the provider resource it is deployed through ("" for a default provider)."""
    dependencies: tuple[str, ...]
    protect: bool
    ignore_changes: list[str]
    inputs: dict[str, Any]
    aliases: list[dict[str, Any]]

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> Entry:
        type_token = str(d["type"])
        # Plans written before `custom` was recorded: components are this package's own types.
        custom = d.get("custom", not type_token.startswith(COMPONENT_PREFIXES))
        return cls(
            type=type_token,
            name=str(d["name"]),
            urn=str(d["urn"]),
            parent=d.get("parent") or "",
            custom=bool(custom),
            provider=_provider_urn(d),
            dependencies=tuple(d.get("dependencies") or ()),
            protect=bool(d.get("protect")),
            ignore_changes=list(d.get("ignoreChanges") or ()),
            inputs=dict(d.get("inputs") or {}),
            aliases=list(d.get("aliases") or ()),
        )

    @property
    def kind(self) -> str:
        """The type's last part: Cluster, NodePool, Deployment, NetworkPolicy."""
        return self.type.rsplit(":", 1)[-1]

    @property
    def physical(self) -> str:
        """The name the cloud or the cluster knows it by, when the inputs say it."""
        metadata = self.inputs.get("metadata")
        named = metadata.get("name") if isinstance(metadata, Mapping) else None
        return str(named or self.inputs.get("name") or self.inputs.get("accountId") or "")

    @property
    def label(self) -> str:
        if self.type.startswith(PROVIDER_PREFIX):
            return f"{self.kind.capitalize()} provider {self.name}"
        shown = self.physical
        return f"{self.kind} {self.name}" + (f" ({shown})" if shown and shown != self.name else "")


def _provider_urn(d: Mapping[str, Any]) -> str:
    """A provider reference is `<provider URN>::<provider ID>`."""
    reference = str(d.get("provider") or "")
    return reference.rsplit("::", 1)[0] if reference else ""


@dataclass
class Change:
    action: str
    entry: Entry
    inputs: list[str] = field(default_factory=list)
    """update: the changed inputs; replace: the inputs that force it."""
    because: str = ""
    """A replacement or update that follows another resource's replacement: which one."""
    old: Entry | None = None


@dataclass
class PlanDiff:
    changes: list[Change]
    kept: list[Entry]
    """The resources `pulumi up` leaves as they are."""

    @property
    def unchanged(self) -> int:
        return len(self.kept)

    def of(self, action: str) -> list[Change]:
        return [c for c in self.changes if c.action == action]


def read_plan(path: Path, stack: str) -> dict[str, Any]:
    """An earlier plan.json of the same stack (URNs carry the stack's name)."""
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PlanFileError(f"--against {path}: cannot read a plan.json ({exc})") from exc
    if not isinstance(document, dict) or not isinstance(document.get("resources"), list):
        raise PlanFileError(
            f"--against {path}: not a plan.json of `python -m tools.render` (no `resources` list)"
        )
    if document.get("stack") != stack:
        raise PlanFileError(
            f"--against {path}: it is the plan of stack {document.get('stack')!r}, not {stack!r}. "
            "URNs carry the stack's name, so every resource would look deleted and created: "
            f"render the same stack name (`python -m tools.render {document.get('stack')} "
            "--stack-file NEW.yaml --against ...`)"
        )
    return document


def changed_paths(old: Any, new: Any, prefix: str = "") -> list[str]:
    """The dotted input paths whose values differ (objects are compared key by key, lists and
    scalars whole)."""
    if old == new:
        return []
    if not (isinstance(old, Mapping) and isinstance(new, Mapping)):
        return [prefix] if prefix else ["(all inputs)"]
    found: list[str] = []
    for key in sorted(set(old) | set(new)):
        path = f"{prefix}.{key}" if prefix else str(key)
        found += changed_paths(old.get(key), new.get(key), path)
    return found


def _ignored(path: str, ignore: Sequence[str]) -> bool:
    return any(path == i or path.startswith(i + ".") for i in ignore)


def _own_change(old: Entry, new: Entry) -> Change | None:
    """The provider's diff of one resource against its old inputs."""
    fields = force_new(new.type, new.inputs, new.custom)
    if fields is None or not new.custom:
        return None  # a component: nothing in the cloud to change
    paths = [
        p for p in changed_paths(old.inputs, new.inputs) if not _ignored(p, new.ignore_changes)
    ]
    if not paths:
        return None
    forced = forcing(paths, [f for f in fields if f not in new.ignore_changes])
    if forced:
        return Change(REPLACE, new, forced, old=old)
    return Change(UPDATE, new, paths, old=old)


def _from_the_cloud(value: Any) -> bool:
    text = json.dumps(value, default=str)
    return SECRET_MASK in text or any(mocked in text for mocked in MOCKED_VALUES)


def _follows(new: Entry, replaced: Mapping[str, Entry], current: Change | None) -> Change | None:
    """The change a resource takes because something it stands on is replaced, if any."""
    if new.provider in replaced:
        because = f"deployed through {replaced[new.provider].label}, which is replaced"
        return Change(REPLACE, new, ["provider"], because)
    gone = [replaced[d] for d in new.dependencies if d in replaced]
    if not gone or not new.custom:
        return None
    source = ", ".join(g.label for g in gone)
    if new.type.startswith(PROVIDER_PREFIX):
        because = f"its configuration comes from the replaced {source}"
        return Change(REPLACE, new, sorted(new.inputs), because)
    unknown = [k for k, v in sorted(new.inputs.items()) if _from_the_cloud(v)]
    fields = force_new(new.type, new.inputs, new.custom) or []
    forced = forcing(unknown, fields)
    because = f"{', '.join(forced or unknown)} may come from the replaced {source}"
    if forced:
        return Change(REPLACE, new, forced, because)
    if unknown and current is None:
        return Change(UPDATE, new, unknown, because)
    return None


def _matched(old: list[Entry], new: list[Entry]) -> tuple[dict[str, Entry], list[str]]:
    """New URN -> the old entry it takes over, and the old URNs nothing claims."""
    by_urn = {e.urn: e for e in old}
    lookup = AliasLookup(set(by_urn))
    matched: dict[str, Entry] = {}
    for entry in _parents_first(new):
        found = lookup.old_of(entry)
        if found is not None:
            matched[entry.urn] = by_urn[found]
    claimed = {e.urn for e in matched.values()}
    return matched, [u for u in by_urn if u not in claimed]


def _parents_first(entries: list[Entry]) -> list[Entry]:
    """plan.json is sorted by URN; the engine sees a parent before its children, and an alias of
    a parent carries to its children only in that order."""
    parents = {e.urn: e.parent for e in entries}

    def depth(urn: str) -> int:
        seen = 0
        while parents.get(urn):
            urn, seen = parents[urn], seen + 1
        return seen

    return sorted(entries, key=lambda e: (depth(e.urn), e.urn))


def diff(old_plan: Mapping[str, Any], new_plan: Mapping[str, Any]) -> PlanDiff:
    """What `pulumi up` of `new_plan` does to a stack deployed as `old_plan`."""
    olds = [Entry.of(r) for r in old_plan["resources"]]
    news = [Entry.of(r) for r in new_plan["resources"]]
    matched, unclaimed = _matched(olds, news)
    changes: dict[str, Change] = {}
    for entry in news:
        if entry.urn not in matched:
            if entry.custom:
                changes[entry.urn] = Change(CREATE, entry)
        elif (own := _own_change(matched[entry.urn], entry)) is not None:
            changes[entry.urn] = own
    _propagate(news, matched, changes)
    by_urn = {e.urn: e for e in olds}
    deleted = [Change(DELETE, by_urn[u]) for u in sorted(unclaimed) if by_urn[u].custom]
    kept = [e for e in news if e.custom and e.urn in matched and e.urn not in changes]
    return PlanDiff(changes=[*changes.values(), *deleted], kept=kept)


def _propagate(news: list[Entry], matched: Mapping[str, Entry], changes: dict[str, Change]) -> None:
    """Replacements reach what stands on them, until nothing more changes."""
    while True:
        replaced = {u: c.entry for u, c in changes.items() if c.action == REPLACE}
        grown = False
        for entry in news:
            current = changes.get(entry.urn)
            if entry.urn not in matched or (current is not None and current.action == REPLACE):
                continue
            follow = _follows(entry, replaced, current)
            if follow is not None:
                follow.old = matched[entry.urn]
                changes[entry.urn] = follow
                grown = grown or follow.action == REPLACE
        if not grown:
            return
