"""The offline plan's `iam` lines: what tools/permissions.py derived, said as it is granted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.engine import Recording
from tools.iam_roles import BROAD, CUSTOM_ROLES, GRANTABLE_PROJECT_ROLES, PROJECT_IAM_ADMIN
from tools.permissions import UNKNOWN, Need, cluster_of, ordered, required

if TYPE_CHECKING:
    from tools.stacks import Deployment

CONDITIONS = {
    PROJECT_IAM_ADMIN: (
        "with deploy-grants.yaml's condition (it grants no role but "
        f"{', '.join(GRANTABLE_PROJECT_ROLES)})"
    ),
}
"""The IAM condition docs/delivery.md puts on a role's grant, as the plan states it."""


def _role_text(role: str) -> str:
    """The role as granted: a custom role with its few permissions, or how many it holds."""
    held = CUSTOM_ROLES.get(role)
    if held is None:
        return role
    if len(held) <= 3:
        return f"{role} ({', '.join(held)})"
    return f"{role} ({len(held)} permissions, docs/delivery.md step 2)"


def _grant_line(role: str, scope: str, needs: list[Need]) -> str:
    """One granted role: on what, under which condition, what the stack binds with it, why."""
    whys = ordered({w for need in needs for w in need.why})
    grants = sorted({g for need in needs for g in need.grants})
    condition = f", {CONDITIONS[role]}" if role in CONDITIONS else ""
    binds = f"; the stack binds {', '.join(grants)} with it" if grants else ""
    return f"            {_role_text(role)} on {scope}{condition}{binds} ({', '.join(whys)})"


def _broad_lines(needs: list[Need], deployment: Deployment | None) -> list[str]:
    """The broad grants the stack needs: what each reaches, and how to avoid it; a warning (`!`)
    for a stack that CI deploys."""
    broad = sorted({(n.role, n.scope) for n in needs if n.role in BROAD})
    if not broad:
        return []
    if deployment is None:
        head = "            broad: these grants reach beyond what the stack owns:"
    else:
        reviewer = "" if deployment.reviewed else ", with no reviewer"
        head = (
            f"            ! {deployment.workflow} deploys this stack {deployment.trigger}"
            f"{reviewer}, and it needs broad grants:"
        )
    lines = [head]
    for role, scope in broad:
        reach, instead = BROAD[role]
        lines.append(f"              {role} on {scope} {reach}: {instead}")
    return lines


def summary_lines(recording: Recording, deployment: Deployment | None = None) -> list[str]:
    """The plan's `iam` section: one line per role and scope the deploy identity needs, then the
    broad grants among them, as a warning for a stack CI deploys (tools.stacks.ci_deployment)."""
    lines = [
        "  iam       the deploy identity needs, besides the state bucket, the KMS key and "
        "roles/compute.viewer on the project (reads of networks, zones and machine types) "
        "(docs/delivery.md, 4. Identities):"
    ]
    needs = required(recording, deployment)
    grouped: dict[tuple[str, str], list[Need]] = {}
    for need in needs:
        grouped.setdefault((need.role, need.scope), []).append(need)
    for (role, scope), group in grouped.items():
        if role == UNKNOWN:
            names = ", ".join(sorted({n for need in group for n in need.resources}))
            lines.append(
                f"            ! {scope} ({names}): no row in tools/permissions.py, so the role it "
                "needs is not known here; `pulumi up` from CI may be refused (403)"
            )
            continue
        lines.append(_grant_line(role, scope, group))
    if any(cluster_of(recording, r) is None for r in recording.kubernetes_objects()):
        lines.append(
            "            Kubernetes objects of the existing cluster: its kubeconfig's credentials "
            "decide (no Google Cloud role derived here)"
        )
    return lines + _broad_lines(needs, deployment)
