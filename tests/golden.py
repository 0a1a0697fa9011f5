"""Golden URNs: what an upgrade of a deployed stack would delete, replace or rename.

A stack deployed with an earlier release holds state under that release's URNs. On `pulumi up`
the engine looks each registered resource up by its URN, then by its aliases; a state entry no
resource claims is deleted, and a claimed resource whose physical name differs is replaced. This
module replays that lookup on the recorded RegisterResource requests, as the engine does it
(tools/aliases.py: pulumi/pulumi pkg/resource/deploy/step_generator.go getOldResource,
generateAliases, collapseAliasToUrn, inheritedChildAlias), against each release's state in
tests/golden/, with the providers' replacement-forcing inputs of tools/replacing.py.

`python -m tests.golden --write RELEASE` adds the golden state of a release (tests/golden/
RELEASE.json) and never rewrites one: every release's state stays, and every one must upgrade.
A replacement is allowed only when named in tests/test_upgrades.py and the release notes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tests.shared import render
from tools.aliases import AliasLookup
from tools.engine import ROOT, Registration

# The providers' replacement-forcing inputs live in tools/replacing.py (the plan's diff against an
# earlier plan reads them too); re-exported here for the tests and comments that name them.
from tools.replacing import GCP_DEFAULT as GCP_DEFAULT
from tools.replacing import GCP_FORCE_NEW as GCP_FORCE_NEW
from tools.replacing import K8S_FORCE_NEW as K8S_FORCE_NEW
from tools.replacing import physical_name

GOLDEN = Path(__file__).parent / "golden"
"""One file per release, <release>.json: stack -> URN -> the inputs that replace it if changed."""


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


def snapshot(resources: Iterable[Registration]) -> dict[str, str | None]:
    return {r.urn: physical_name(r) for r in resources}


@dataclass
class Upgrade:
    """What `pulumi up` would do to a golden state with this program."""

    deleted: list[str] = field(default_factory=list)
    """Golden URNs no resource claims (by URN or alias): the engine deletes them."""
    renamed: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    """(golden URN, old, new replacement-forcing inputs): the provider replaces the resource."""
    aliased: dict[str, str] = field(default_factory=dict)
    """New URN -> the golden URN it took over through an alias."""
    errors: list[str] = field(default_factory=list)
    """The engine's duplicate-alias errors: `pulumi up` stops before changing anything."""


def _kept(old: str | None, ignored: list[str]) -> str | None:
    """The golden inputs as the engine diffs them against the new ones: an input the resource now
    ignores takes its old value (pulumi/pulumi pkg/resource/deploy/step_generator.go
    processIgnoreChanges, "the effect of ensuring that no changes will be made for the
    corresponding property"), so it cannot replace anything; physical_name leaves it out too."""
    if old is None or not ignored:
        return old
    fields = json.loads(old)
    return json.dumps({k: v for k, v in fields.items() if k not in ignored})


def _as_recorded(new: str | None, old: str | None) -> str | None:
    """The new physical name over the inputs the golden recorded: a release written before an
    input joined GCP_FORCE_NEW holds no value for it to compare (a release written since does)."""
    if new is None or old is None:
        return new
    recorded, fields = json.loads(old), json.loads(new)
    return json.dumps({k: fields[k] for k in fields if k in recorded})


def upgrade(olds: dict[str, str | None], resources: list[Registration]) -> Upgrade:
    steps = AliasLookup(olds)
    result = Upgrade()
    claimed: set[str] = set()
    for r in resources:
        old = steps.old_of(r)
        if old is None:
            continue
        claimed.add(old)
        if old != r.urn:
            result.aliased[r.urn] = old
        if _kept(olds[old], r.ignore_changes) != _as_recorded(physical_name(r), olds[old]):
            result.renamed.append((old, olds[old], physical_name(r)))
    result.deleted = sorted(set(olds) - claimed)
    result.errors = steps.errors
    return result


def releases() -> dict[str, dict[str, dict[str, str | None]]]:
    """Every golden state: release name -> stack -> URN -> replacement-forcing inputs."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(GOLDEN.glob("*.json"))}


def current() -> dict[str, dict[str, str | None]]:
    return {name: snapshot(render(name, path).recording.resources) for name, path in stacks()}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "--write":
        print("usage: python -m tests.golden --write RELEASE   (adds tests/golden/RELEASE.json)")
        return 2
    path = GOLDEN / f"{argv[1]}.json"
    if path.exists():
        print(f"{path.relative_to(ROOT)} exists: a release's golden state is never rewritten")
        return 1
    GOLDEN.mkdir(exist_ok=True)
    path.write_text(json.dumps(current(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
