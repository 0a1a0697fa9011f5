"""CrossGuard entry point: serves policy/rules/ as the pack gke-gpu-policies."""

from __future__ import annotations

from collections.abc import Callable

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyPack,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

# Pulumi runs this file as a script with policy/ first on sys.path (runpy, __package__ == "");
# tests and tools import it as policy.__main__. Both must find the same rules package.
if __package__:
    from .rules import PRODUCTION_CONFIG_SCHEMA, RULES, Context, Rule, stack_from_urn
else:
    from rules import PRODUCTION_CONFIG_SCHEMA, RULES, Context, Rule, stack_from_urn

PACK_NAME = "gke-gpu-policies"
LEVELS = {"mandatory": EnforcementLevel.MANDATORY, "advisory": EnforcementLevel.ADVISORY}


def _validator(rule: Rule) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        # The stack comes from the URN and production from the pack config (the Configure call
        # hands each policy its own properties: pulumi_policy policy.py _get_policy_config), so
        # the verdict depends only on what the engine sent.
        context = Context(
            stack_from_urn(args.urn), production=args.get_config().get("production") is True
        )
        for message in rule.check(args.resource_type, args.props, context):
            report_violation(message, None)

    return validate


def build_policies() -> list[ResourceValidationPolicy]:
    """One ResourceValidationPolicy per rule, with the rule's name and enforcement level; a
    production rule declares the `production` config property (rules.pack_config writes it)."""
    return [
        ResourceValidationPolicy(
            name=rule.name,
            description=rule.description,
            enforcement_level=LEVELS[rule.enforcement],
            validate=_validator(rule),
            config_schema=(
                PolicyConfigSchema(properties=dict(PRODUCTION_CONFIG_SCHEMA))
                if rule.production
                else None
            ),
        )
        for rule in RULES
    ]


# Constructing a PolicyPack starts the analyzer's gRPC server and never returns, so only the
# run that Pulumi starts does it.
if __name__ == "__main__":
    PolicyPack(name=PACK_NAME, policies=[*build_policies()])
