"""The plan's `changes` section: what `pulumi up` would create, update, replace and delete against
an earlier plan (tools/plan_diff.py), and a one-line verdict a reviewer reads first."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from tools.plan_diff import (
    ACTIONS,
    CREATE,
    DELETE,
    KUBERNETES_PREFIX,
    PROVIDER_PREFIX,
    REPLACE,
    UPDATE,
    Change,
    PlanDiff,
)

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
# Reserved addresses: the endpoint's IP lives in them, not in the Service.
ADDRESSES = ("gcp:compute/address:Address", "gcp:compute/globalAddress:GlobalAddress")
# More Kubernetes objects than this of one action are counted by kind, not listed one by one.
LISTED_OBJECTS = 6
SHOWN_INPUTS = 5
LABEL = "  {:<10}"
DETAIL = "            "


def _is_object(c: Change) -> bool:
    """A Kubernetes object (not the provider, not a Helm release's own resource)."""
    return c.entry.type.startswith(KUBERNETES_PREFIX)


def _inputs(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN_INPUTS])
    return shown + (f" and {len(names) - SHOWN_INPUTS} more" if len(names) > SHOWN_INPUTS else "")


def _why(c: Change) -> str:
    """What makes the change: the resource it follows, or its own inputs."""
    if c.because:
        return c.because
    if c.action == REPLACE:
        return f"{_inputs(c.inputs)} force{'s' if len(c.inputs) == 1 else ''} a new one"
    return _inputs(c.inputs)


def _line(c: Change) -> str:
    if c.action == UPDATE and c.because:
        return f"{c.action:<8} {c.entry.label}: {_inputs(c.inputs)} ({c.because})"
    why = _why(c)
    return f"{c.action:<8} {c.entry.label}" + (f": {why}" if why else "")


def _by_kind(changes: Sequence[Change]) -> str:
    counts = Counter(c.entry.kind for c in changes)
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items(), key=lambda i: -i[1]))


def _lines(changes: Sequence[Change]) -> list[str]:
    """One line a resource; Kubernetes objects counted by kind where many share one action, a
    line for each cause (the replaced provider they follow, or the inputs that change)."""
    lines: list[str] = []
    for action in ACTIONS:
        of_action = [c for c in changes if c.action == action]
        objects = [c for c in of_action if _is_object(c)]
        grouped = objects if len(objects) > LISTED_OBJECTS else []
        lines += [_line(c) for c in of_action if c not in grouped]
        for cause in dict.fromkeys(_why(c) for c in grouped):
            same = [c for c in grouped if _why(c) == cause]
            why = f" ({cause})" if cause else ""
            lines.append(f"{action:<8} {len(same)} Kubernetes objects{why}: {_by_kind(same)}")
    return lines


def counts(d: PlanDiff) -> str:
    parts = [
        f"{len(d.of(CREATE))} to create",
        f"{len(d.of(UPDATE))} to update in place",
        f"{len(d.of(REPLACE))} to replace",
        f"{len(d.of(DELETE))} to delete",
        f"{d.unchanged} unchanged",
    ]
    return ", ".join(parts)


def report(d: PlanDiff, against: str) -> str:
    """The printed section: counts, each change, the verdict."""
    lines = [LABEL.format("changes") + f"against {against}: {counts(d)}"]
    lines += [DETAIL + line for line in _lines(d.changes)]
    lines.append(LABEL.format("verdict") + verdict(d))
    return "\n".join(lines)


def _protected(d: PlanDiff) -> list[Change]:
    """Replacements the engine refuses: a resource protected before and after (step_generator.go
    at 1b594989: `new.Protect && old.Protect` -> "unable to replace resource ... as it is
    currently marked for protection")."""
    return [c for c in d.of(REPLACE) if c.entry.protect and c.old is not None and c.old.protect]


def verdict(d: PlanDiff) -> str:
    """One line: what a reviewer must know before `pulumi up`."""
    if not d.changes:
        return "no changes"
    stops = _protected(d)
    clusters = [c for c in d.of(REPLACE) if c.entry.type == CLUSTER]
    said = [_cluster_verdict(c, d) for c in clusters] or [_replacements(d)]
    said += [_addresses(d, kept_said=bool(clusters))]
    said += [f"deletes {len(d.of(DELETE))} ({_names(d.of(DELETE))})" if d.of(DELETE) else ""]
    if stops:
        said.insert(
            0,
            f"`pulumi up` stops: {_names(stops)} would be replaced but is protected (lift the "
            "protection in an update first: docs/deletion-protection.md)",
        )
    return "; ".join(s for s in said if s)


def _names(changes: Sequence[Change], most: int = 3) -> str:
    labels = [c.entry.label for c in changes[:most]]
    more = len(changes) - most
    return ", ".join(labels) + (f" and {more} more" if more > 0 else "")


def _cluster_verdict(c: Change, d: PlanDiff) -> str:
    objects = [x for x in d.of(REPLACE) if _is_object(x)]
    # The cluster's name is set, so the Google Cloud provider asks for delete-before-replace
    # (pulumi-terraform-bridge nameRequiresDeleteBeforeReplace, as components/platform/nodepool.py
    # cites it); the engine then deletes what would be replaced with it first
    # (step_generator.go calculateDependentReplacements).
    return (
        f"replaces the cluster {c.entry.physical or c.entry.name} ({_inputs(c.inputs)}): it is "
        "deleted first, so every workload is down until the new cluster and its nodes are up and "
        f"its {len(objects)} Kubernetes objects are applied again"
    )


def _replacements(d: PlanDiff) -> str:
    replaced, updated = d.of(REPLACE), d.of(UPDATE)
    pools = [c for c in replaced if c.entry.type == NODE_POOL]
    said = []
    if pools:
        # A GPU pool's replacement is created first under a new name and its workloads roll over
        # (docs/deletion-protection.md, components/platform/nodepool.py).
        said.append(f"replaces node pool {_names(pools)}: its pods move to the new pool")
    others = [
        c for c in replaced if c not in pools and not c.entry.type.startswith(PROVIDER_PREFIX)
    ]
    if others:
        said.append(f"replaces {len(others)} ({_names(others)})")
    if d.of(CREATE):
        said.append(f"creates {len(d.of(CREATE))} ({_names(d.of(CREATE))})")
    if updated:
        said.append(f"updates {len(updated)} in place")
    if not replaced and not d.of(DELETE):
        said.append("nothing is replaced or deleted")
    return "; ".join(said)


def _addresses(d: PlanDiff, kept_said: bool) -> str:
    """The endpoint's address: a reserved address replaced or deleted is a new IP for clients."""
    lost = [c for c in d.changes if c.action in (REPLACE, DELETE) and c.entry.type in ADDRESSES]
    if lost:
        return f"the endpoint's address changes ({_names(lost)} released)"
    kept = [e for e in d.kept if e.type in ADDRESSES]
    if not kept_said or not kept:
        return ""
    return (
        f"the endpoint keeps its reserved address {', '.join(e.physical or e.name for e in kept)}"
    )
