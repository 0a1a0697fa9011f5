"""Golden URNs: what an upgrade of a deployed stack would delete, replace or rename.

A stack deployed with an earlier release holds state under that release's URNs. On `pulumi up`
the engine looks each registered resource up by its URN, then by its aliases; a state entry no
resource claims is deleted, and a claimed resource whose physical name differs is replaced. This
module replays that lookup on the recorded RegisterResource requests, as the engine does it
(pulumi/pulumi pkg/resource/deploy/step_generator.go: getOldResource, generateAliases,
collapseAliasToUrn, inheritedChildAlias), against each release's state in tests/golden/.

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
from typing import Any

from tests.shared import render
from tools.engine import PROJECT, ROOT, Registration

GOLDEN = Path(__file__).parent / "golden"
"""One file per release, <release>.json: stack -> URN -> the inputs that replace it if changed."""
ROOT_STACK_TYPE = "pulumi:pulumi:Stack"
# Inputs whose change makes the provider replace the resource: a replacement deletes the running
# thing (a cluster, a reserved address, a generated key) even when its URN is kept.
# Google Cloud: ForceNew in terraform-provider-google (services/container/resource_container_
# {cluster,node_pool}.go, services/compute/resource_compute_{address,router,router_nat}.go at the
# mirror's HEAD, 2026-11-23); IAM members are immutable bindings (every input).
GCP_FORCE_NEW = {
    "gcp:container/cluster:Cluster": (
        "name project location network subnetwork ipAllocationPolicy enableAutopilot "
        "datapathProvider initialNodeCount"
    ),
    "gcp:container/nodePool:NodePool": "name project location cluster initialNodeCount "
    "placementPolicy",
    "gcp:compute/address:Address": "name project region address addressType subnetwork "
    "network purpose networkTier ipVersion prefixLength",
    "gcp:compute/router:Router": "name project region network",
    "gcp:compute/routerNat:RouterNat": "name project region router type endpointTypes "
    "initialNatIps",
    "gcp:serviceaccount/account:Account": "accountId project",
    # services/servicemanagement/resource_endpoints_service.go at 069a33d4: service_name and
    # project are ForceNew (read). The certificate's domains and the map entry's hostname are
    # taken as replacing too (a managed certificate is issued for its names; not read here).
    "gcp:endpoints/service:Service": "serviceName project",
    "gcp:certificatemanager/certificate:Certificate": "name project location managed.domains",
    "gcp:certificatemanager/certificateMapEntry:CertificateMapEntry": "name project map hostname",
}
GCP_DEFAULT = "name project location region"
# Kubernetes: pulumi-kubernetes provider/pkg/provider/diff.go forceNewProperties (commit
# 94977969): metadata.name and .namespace always, and per kind (Secrets and ConfigMaps are
# immutable by default: enableSecretMutable / enableConfigMapMutable are off).
K8S_FORCE_NEW = {
    "kubernetes:apps/v1:Deployment": "spec.selector",
    "kubernetes:apps/v1:DaemonSet": "spec.selector",
    "kubernetes:apps/v1:StatefulSet": "spec.podManagementPolicy spec.revisionHistoryLimit "
    "spec.selector spec.serviceName spec.volumeClaimTemplates",
    "kubernetes:batch/v1:Job": "spec.completions spec.parallelism spec.selector spec.template",
    "kubernetes:core/v1:Secret": "type stringData data",
    "kubernetes:core/v1:ConfigMap": "binaryData data",
    "kubernetes:core/v1:Service": "spec.clusterIP",
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": "roleRef",
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": "roleRef",
    # A new cluster identifier replaces the provider and everything deployed through it.
    "pulumi:providers:kubernetes": "clusterIdentifier",
}


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


def _field(inputs: dict[str, Any], path: str) -> Any:
    value: Any = inputs
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _force_new(r: Registration) -> list[str] | None:
    """The input paths whose change replaces `r` (None: nothing replaces a component)."""
    if r.type.startswith("gcp:"):
        if "iam" in r.type.lower():
            return sorted(r.inputs)
        return GCP_FORCE_NEW.get(r.type, GCP_DEFAULT).split()
    if r.type.startswith(("random:", "tls:")):
        return sorted(r.inputs)  # every input of these providers' resources forces a new one
    if r.type in K8S_FORCE_NEW or (r.type.startswith("kubernetes:") and r.custom):
        return ["metadata.name", "metadata.namespace", *K8S_FORCE_NEW.get(r.type, "").split()]
    return None


def physical_name(r: Registration) -> str | None:
    """What the provider replaces the resource over: its name and every replacement-forcing
    input, as JSON (None for components, which the engine keeps by URN only). Inputs the
    resource ignores (ignoreChanges) never reach the provider's diff."""
    fields = _force_new(r)
    if fields is None:
        return None
    kept = [f for f in fields if f not in r.ignore_changes]
    return json.dumps({f: _field(r.inputs, f) for f in kept if _field(r.inputs, f) is not None})


def snapshot(resources: Iterable[Registration]) -> dict[str, str | None]:
    return {r.urn: physical_name(r) for r in resources}


def _qualified_type(urn: str) -> str:
    return urn.split("::")[2]


def _name(urn: str) -> str:
    return urn.split("::", 3)[3]


def _stack(urn: str) -> str:
    return urn.split("::")[0].removeprefix("urn:pulumi:")


def _urn(stack: str, parent: str, type_: str, name: str, project: str = PROJECT) -> str:
    if parent and _qualified_type(parent) != ROOT_STACK_TYPE:
        type_ = f"{_qualified_type(parent)}${type_}"
    return f"urn:pulumi:{stack}::{project}::{type_}::{name}"


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


class _Steps:
    """The engine's alias lookup (step_generator.go getOldResource), one registration at a time,
    in registration order."""

    def __init__(self, olds: dict[str, str | None]) -> None:
        self.olds = olds
        self.used: dict[str, str] = {}  # sg.aliases: new URN -> the old URN it matched
        self.seen: set[str] = set()  # sg.urns: URNs registered so far
        self.claimed: dict[str, str] = {}  # sg.aliased: old URN -> the new URN that claimed it
        self.errors: list[str] = []

    def _collapse(self, r: Registration, alias: dict[str, Any]) -> str:
        if alias.get("urn"):
            return alias["urn"]
        named: str = alias.get("parentUrn") or ""
        parent = self.used.get(named, named) if named else r.parent
        if alias.get("noParent") or (parent and _qualified_type(parent) == ROOT_STACK_TYPE):
            parent = ""
        stack = alias.get("stack") or _stack(r.urn)
        project = alias.get("project") or PROJECT
        type_ = alias.get("type") or r.type
        return _urn(stack, parent, type_, alias.get("name") or r.name, project)

    def _inherited(self, r: Registration, child_type: str, child_name: str, alias: str) -> str:
        parent_name = _name(r.parent)
        name = child_name
        if child_name.startswith(parent_name):
            name = _name(alias) + child_name[len(parent_name) :]
        return _urn(_stack(r.urn), alias, child_type, name)

    def aliases(self, r: Registration) -> list[str]:
        found = [self._collapse(r, a) for a in r.aliases]
        parent_alias = self.used.get(r.parent)
        if parent_alias:
            found.append(self._inherited(r, r.type, r.name, parent_alias))
            for alias in r.aliases:
                collapsed = self._collapse(r, alias)
                child_type = _qualified_type(collapsed).rsplit("$", 1)[-1]
                found.append(self._inherited(r, child_type, _name(collapsed), parent_alias))
        return list(dict.fromkeys(found))

    def old_of(self, r: Registration) -> str | None:
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
