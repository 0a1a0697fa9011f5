"""Cloud Armor: the backend security policy that lets only expose.sourceRanges through a Gateway
(expose.domain with sourceRanges; components/expose/gateway.py attaches it to the gate's backend).

A GKE Gateway is Google's global external Application Load Balancer: it has no
loadBalancerSourceRanges of its own. A Cloud Armor backend security policy (type CLOUD_ARMOR,
"Cloud Armor backend security policies can be configured to filter incoming HTTP requests
targeting backend services", pulumi-gcp 10.2.0 compute/security_policy.py) on the backend service
does that job at Google's edge: rules that allow the listed ranges, and the default rule, which
denies everything else with 403.
"""

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from ..config.rules.exposure import admits_everyone
from ..facts.labels import PRODUCTION_CLUSTER_LABEL

POLICY_TYPE = "CLOUD_ARMOR"
# A basic match ("SRC_IPS_V1") holds at most 10 ranges: "Maximum number of srcIpRanges allowed is
# 10" (pulumi-gcp 10.2.0 compute/_inputs.py SecurityPolicyRuleMatchConfigArgs.src_ip_ranges);
# "There is a limit of 10 IP ranges per rule" with MaxItems: 10 (hashicorp/
# terraform-provider-google@029bdc0674f3dd5bdb5b146bfe001ffd8a121b88:google/services/compute/
# resource_compute_security_policy.go, rule.match.config.src_ip_ranges). Longer lists are split
# into several allow rules (expose.sourceRanges holds at most 100: 10 rules).
RANGES_PER_RULE = 10
SRC_IPS = "SRC_IPS_V1"
# "the default rule (rule with priority 2147483647 and match "*")" (pulumi-gcp 10.2.0
# compute/security_policy.py, `rules`): the last rule evaluated; here it denies.
DEFAULT_RULE_PRIORITY = 2147483647
DEFAULT_DENY = "deny(403)"
ALLOW = "allow"
# The allow rules' priorities: the first at 1000, then one apart ("Rules are evaluated from
# highest priority (lowest numerically) to lowest priority", same file). Their order does not
# matter: they all allow.
FIRST_ALLOW_PRIORITY = 1000


def chunks(ranges: Sequence[str]) -> list[list[str]]:
    """The ranges, RANGES_PER_RULE to a rule, in the order listed."""
    return [list(ranges[i : i + RANGES_PER_RULE]) for i in range(0, len(ranges), RANGES_PER_RULE)]


def _rule(priority: int, action: str, ranges: list[str], description: str):
    return gcp.compute.SecurityPolicyRuleArgs(
        priority=priority,
        action=action,
        description=description,
        match=gcp.compute.SecurityPolicyRuleMatchArgs(
            versioned_expr=SRC_IPS,
            config=gcp.compute.SecurityPolicyRuleMatchConfigArgs(src_ip_ranges=ranges),
        ),
    )


def rules(ranges: Sequence[str]) -> list[gcp.compute.SecurityPolicyRuleArgs]:
    """An allow rule per RANGES_PER_RULE ranges, then the default rule: deny everything else."""
    allowed = [
        _rule(FIRST_ALLOW_PRIORITY + i, ALLOW, group, "gke-gpu: expose.sourceRanges")
        for i, group in enumerate(chunks(ranges))
    ]
    deny = _rule(DEFAULT_RULE_PRIORITY, DEFAULT_DENY, ["*"], "gke-gpu: everyone else")
    return [*allowed, deny]


def allowlist(
    name: str,
    policy_name: str,
    project: str,
    ranges: Sequence[str],
    production: bool,
    opts: pulumi.ResourceOptions,
) -> list[gcp.compute.SecurityPolicy]:
    """The policy `policy_name` that admits `ranges` only (none without ranges: no policy); a
    production stack's carries the GCE label the policy pack reads (cluster.production)."""
    if not ranges:
        return []
    policy = gcp.compute.SecurityPolicy(
        name,
        name=policy_name,
        project=project,
        type=POLICY_TYPE,
        description="gke-gpu: only expose.sourceRanges reach the Gateway's backend",
        rules=rules(ranges),
        labels={PRODUCTION_CLUSTER_LABEL: "true"} if production else None,
        opts=opts,
    )
    return [policy]


def filters_nothing(ranges: Sequence[str]) -> bool:
    """The ranges admit every IPv4 address, and the Gateway's global address is IPv4: the policy
    is there, and filters nothing."""
    return admits_everyone(list(ranges)) == "IPv4"


def admits_everyone_words(ranges: Sequence[str]) -> str | None:
    """What the endpoint line says when the policy filters nothing."""
    if not filters_nothing(ranges):
        return None
    return "from anywhere (sourceRanges admit every IPv4 address: Cloud Armor filters nothing)"


def plan_lines(ranges: tuple[str, ...]) -> list[str]:
    """The offline plan's words: what the policy admits, and that it costs (not priced here:
    no Cloud Armor price was read in a stored source)."""
    if not ranges:
        return []
    rules = len(chunks(ranges))
    others = (
        "they admit every IPv4 address, so the policy filters nothing (the Gateway's address "
        "is IPv4): narrow sourceRanges to your clients' networks"
        if filters_nothing(ranges)
        else "every other address gets 403 (default rule)"
    )
    return [
        f"            source ranges: Cloud Armor backend security policy on the Gateway's "
        f"backend: {rules} allow rule(s) (at most {RANGES_PER_RULE} ranges each) for "
        f"{', '.join(ranges)}; {others}",
        f"            cost: Cloud Armor Standard bills per policy, per rule ({rules + 1} here, the "
        "default rule included) and per request "
        "(cloud.google.com/armor/docs/managed-protection-overview); not in this "
        "plan's total: see cloud.google.com/armor/pricing",
    ]
