"""CrossGuard entry point: serves policy/rules.py as the pack gke-gpu-policies."""

from __future__ import annotations

from collections.abc import Callable

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyPack,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

# Pulumi runs this file as a script with policy/ first on sys.path (runpy, __package__ == "");
# tests and tools import it as policy.__main__. Both must find the same rules module.
if __package__:
    from .rules import RULES, Rule, stack_from_urn
else:
    from rules import RULES, Rule, stack_from_urn

PACK_NAME = "gke-gpu-policies"
LEVELS = {"mandatory": EnforcementLevel.MANDATORY, "advisory": EnforcementLevel.ADVISORY}


def _validator(rule: Rule) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        # The stack comes from the URN, so the verdict depends only on what the engine sent.
        for message in rule.check(args.resource_type, args.props, stack_from_urn(args.urn)):
            report_violation(message, None)

    return validate


def build_policies() -> list[Policy]:
    """One ResourceValidationPolicy per rule, with the rule's name and enforcement level."""
    return [
        ResourceValidationPolicy(
            name=rule.name,
            description=rule.description,
            enforcement_level=LEVELS[rule.enforcement],
            validate=_validator(rule),
        )
        for rule in RULES
    ]


# Constructing a PolicyPack starts the analyzer's gRPC server and never returns, so only the
# run that Pulumi starts does it.
if __name__ == "__main__":
    PolicyPack(name=PACK_NAME, policies=build_policies())
