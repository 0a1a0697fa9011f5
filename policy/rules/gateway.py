"""Production rule for a Gateway (expose.domain): the public Gateway's backend names a Cloud Armor
policy, and that policy allows only narrow, listed ranges and denies every other address.

A GKE Gateway (Google's global external Application Load Balancer) has no
loadBalancerSourceRanges; what load-balancers-restricted-in-prod asks of a LoadBalancer Service,
the Gateway path gets from a Cloud Armor backend security policy, which the GCPBackendPolicy names
in spec.default.securityPolicy (components/expose/gateway.py, components/platform/cloud_armor.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .props import (
    PRODUCTION_CLUSTER_LABEL,
    Context,
    _get,
    _is_true,
    _known_str,
    _mapping,
    _production_reason,
    _quantity,
    _sequence,
    _show,
    is_production,
    object_label,
)
from .ranges import MIN_PREFIX_IPV4, MIN_PREFIX_IPV6, source_range_problems

BACKEND_POLICY_TYPE = "kubernetes:networking.gke.io/v1:GCPBackendPolicy"
SECURITY_POLICY_TYPE = "gcp:compute/securityPolicy:SecurityPolicy"
# The rule evaluated last, for every address no other rule matched: "the default rule (rule with
# priority 2147483647 and match "*")" (pulumi-gcp 10.2.0 compute/security_policy.py).
DEFAULT_RULE_PRIORITY = 2147483647
EVERY_ADDRESS = "*"
FIX = (
    "Set workloads[].expose.sourceRanges to the CIDR ranges of your clients (each at most a "
    f"/{MIN_PREFIX_IPV4} for IPv4, /{MIN_PREFIX_IPV6} for IPv6): gke-gpu then creates a Cloud "
    "Armor policy that allows only them and names it in the GCPBackendPolicy"
)


def gateways_restricted_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production stack's Gateway admits only narrow, listed source ranges. Mandatory.

    The GCPBackendPolicy of a production stack names a Cloud Armor security policy
    (spec.default.securityPolicy); a production Cloud Armor policy (its GCE label
    gke-gpu-production, or the pack config) allows only source ranges that pass the same test as a
    LoadBalancer's (source_range_problems: each at most a /16 or /48, together not every address,
    no "*"), matches by ranges only, and its default rule denies. Mandatory for the reason
    load-balancers-restricted-in-prod is: an open production endpoint is a cost and data exposure.
    """
    if resource_type == BACKEND_POLICY_TYPE:
        return _backend_problems(props, context)
    if resource_type == SECURITY_POLICY_TYPE:
        return _armor_problems(props, context)
    return []


def _backend_problems(props: Mapping[str, Any], context: Context) -> list[str]:
    if not is_production(BACKEND_POLICY_TYPE, props, context.production):
        return []
    if _known_str(props, "spec", "default", "securityPolicy"):
        return []
    reason = _production_reason(BACKEND_POLICY_TYPE, props)
    return [
        f"{object_label(BACKEND_POLICY_TYPE, props)}: the backend of a public Gateway in a "
        f"production stack ({reason}) names no Cloud Armor security policy "
        "(spec.default.securityPolicy), so the Gateway accepts requests from the whole internet. "
        f"{FIX}."
    ]


def _armor_production(props: Mapping[str, Any], context: Context) -> str | None:
    """Why the Cloud Armor policy counts as production (its GCE label, else the pack config)."""
    if _is_true(_get(props, "labels", PRODUCTION_CLUSTER_LABEL)):
        return f'{PRODUCTION_CLUSTER_LABEL}: "true", from cluster.production'
    return _production_reason(SECURITY_POLICY_TYPE, props) if context.production else None


def _default_rule_problems(rule: Mapping[str, Any] | None, start: str) -> list[str]:
    """The default rule denies every address ('*'), and is enforced: a rule in preview is not
    ("preview: When set to true, the `action` specified above is not enforced", pulumi-gcp 10.2.0
    compute/_inputs.py SecurityPolicyRuleArgs)."""
    action = _show(rule.get("action")) if rule else "unset (Google's default: allow)"
    if rule is None or not action.startswith("deny"):
        return [
            f"{start}: its default rule (priority {DEFAULT_RULE_PRIORITY}) does not deny "
            f"(action: {action}), so every address no rule lists gets through. {FIX}."
        ]
    if _is_true(rule.get("preview")):
        return [
            f"{start}: its default rule is in preview, which Cloud Armor logs but does not "
            f"enforce: every address gets through. {FIX}."
        ]
    if list(_sequence(_get(rule, "match", "config", "srcIpRanges"))) != [EVERY_ADDRESS]:
        return [
            f"{start}: its default rule denies only some addresses (its match is not '*'), so "
            f"the rest get through. {FIX}."
        ]
    return []


def _armor_problems(props: Mapping[str, Any], context: Context) -> list[str]:
    reason = _armor_production(props, context)
    if reason is None:
        return []
    start = (
        f'Cloud Armor policy "{_known_str(props, "name") or "(auto-named)"}" of a production '
        f"stack ({reason})"
    )
    rules = [_mapping(rule) for rule in _sequence(props.get("rules"))]
    default = [r for r in rules if _quantity(r.get("priority")) == DEFAULT_RULE_PRIORITY]
    problems = _default_rule_problems(default[0] if default else None, start)
    allowed: list[Any] = []
    for rule in rules:
        if _quantity(rule.get("priority")) == DEFAULT_RULE_PRIORITY:
            continue
        # Every action but deny lets some requests through (allow; throttle and rate_based_ban
        # below their thresholds; redirect), so its match is judged as an allow rule's.
        if _show(rule.get("action")).startswith("deny"):
            continue
        ranges = _sequence(_get(rule, "match", "config", "srcIpRanges"))
        if not ranges or _get(rule, "match", "expr") is not None:
            problems.append(
                f"{start}: the rule at priority {_show(rule.get('priority'))} (action "
                f"{_show(rule.get('action'))}) matches by something other than source ranges "
                f"alone, which this check cannot judge. {FIX}."
            )
        allowed += ranges
    if EVERY_ADDRESS in allowed:
        problems.append(f"{start}: an allow rule matches '*', every address. {FIX}.")
    problems += [
        f"{start}: its allow rules admit {problem}. {FIX}."
        for problem in source_range_problems([r for r in allowed if r != EVERY_ADDRESS])
    ]
    return problems
