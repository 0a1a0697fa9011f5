"""expose.domain with expose.sourceRanges (issue 35's gap): a Cloud Armor backend security policy
lets only the listed ranges reach the Gateway, and a production stack can therefore serve a domain.
What the engine is asked to register (the recording engine), what the config layer and the policy
pack say of it, what the deploy identity needs and what the offline plan says."""

from __future__ import annotations

import copy
import inspect
import ipaddress
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pulumi_gcp as gcp
import pytest
import yaml

from components.config import ConfigError, load
from components.facts import labels
from components.platform import cloud_armor
from policy.rules import evaluate
from policy.rules import gateway as pack_gateway
from tests.test_gateway import DOMAIN, domain_stack
from tools import iam_roles, permissions
from tools.engine import Recording, Registration
from tools.render import crd_schema_path, policy_findings, render, summary

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "Pulumi.gateway-prod.yaml"
ARMOR = "gcp:compute/securityPolicy:SecurityPolicy"
BACKEND = "kubernetes:networking.gke.io/v1:GCPBackendPolicy"
ROUTE = "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute"
RANGES = ["203.0.113.0/24", "198.51.100.0/24"]
RULE = "gateways-restricted-in-prod"


def armored(ranges: list[str] = RANGES) -> dict[str, Any]:
    stack = domain_stack()
    stack["gke-gpu:workloads"][0]["expose"]["sourceRanges"] = ranges
    return stack


def _allow_rules(policy: Registration) -> list[dict[str, Any]]:
    return [r for r in policy.inputs["rules"] if r["action"] == "allow"]


def _allowed(policy: Registration) -> list[str]:
    return [cidr for r in _allow_rules(policy) for cidr in r["match"]["config"]["srcIpRanges"]]


def test_the_cloud_armor_policy_allows_exactly_the_source_ranges_and_denies_everyone_else(
    run: Callable[..., Recording],
) -> None:
    policy = run(armored()).one(ARMOR)
    assert policy.inputs["type"] == "CLOUD_ARMOR", "a backend security policy, not an edge one"
    assert _allowed(policy) == RANGES, "the allow rules hold exactly expose.sourceRanges"
    (default,) = [r for r in policy.inputs["rules"] if r["priority"] == 2147483647]
    assert default["action"] == "deny(403)" and default["match"] == {
        "versionedExpr": "SRC_IPS_V1",
        "config": {"srcIpRanges": ["*"]},
    }, "every address the allow rules do not list is answered 403 by the default rule"
    assert all(r["match"]["versionedExpr"] == "SRC_IPS_V1" for r in _allow_rules(policy))
    accepted = {
        re.sub(r"_([a-z])", lambda m: m.group(1).upper(), p)
        for p in inspect.signature(gcp.compute.SecurityPolicy._internal_init).parameters
    }
    assert not set(policy.inputs) - accepted - {"__defaults"}, "inputs pulumi-gcp takes"
    plain = run(domain_stack())
    assert not plain.of_type(ARMOR), "a domain without ranges: no policy to pay for"
    (backend,) = plain.of_type(BACKEND)
    assert "securityPolicy" not in backend.inputs["spec"]["default"]


def test_the_backend_policy_attaches_the_cloud_armor_policy_the_stack_creates(
    run: Callable[..., Recording],
) -> None:
    recording = run(armored())
    policy, address = recording.one(ARMOR), recording.one("gcp:compute/globalAddress:GlobalAddress")
    (backend,) = recording.of_type(BACKEND)
    assert backend.inputs["spec"]["default"]["securityPolicy"] == policy.inputs["name"], (
        "the GCPBackendPolicy names the stack's own Cloud Armor policy, else GKE attaches none"
    )
    assert policy.urn in backend.dependencies, "the policy exists before GKE looks it up"
    assert policy.inputs["name"] == address.inputs["name"] and policy.parent == address.parent, (
        "named and parented like the Gateway's other cloud resources"
    )
    assert policy.name.endswith("-security-policy") and policy.name.startswith("service-llm")
    obj = {"apiVersion": backend.inputs["apiVersion"], "kind": "GCPBackendPolicy", **backend.inputs}
    path = crd_schema_path(obj)
    assert path is not None
    schema = json.loads(path.read_text())["schema"]
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(obj)]
    assert not errors, f"GCPBackendPolicy does not validate against {path.name}: {errors}"


def test_more_ranges_than_a_rule_holds_are_split_into_rules_of_at_most_ten(
    run: Callable[..., Recording],
) -> None:
    ranges = [f"10.{i}.0.0/24" for i in range(25)]
    policy = run(armored(ranges)).one(ARMOR)
    sizes = [len(r["match"]["config"]["srcIpRanges"]) for r in _allow_rules(policy)]
    assert sizes == [10, 10, 5], "Cloud Armor takes at most 10 ranges in a basic match"
    assert cloud_armor.RANGES_PER_RULE == 10
    assert _allowed(policy) == ranges, "every range is allowed once, none lost in the split"
    priorities = [r["priority"] for r in policy.inputs["rules"]]
    assert len(set(priorities)) == len(priorities), "Cloud Armor refuses two rules at one priority"


def _production_config(**expose: Any) -> dict[str, Any]:
    config = yaml.safe_load(EXAMPLE.read_text())["config"]
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    workload = raw["workloads"][0]
    workload["expose"] = {
        k: v for k, v in {**workload["expose"], **expose}.items() if v is not None
    }
    return raw


def _problems(raw: dict[str, Any]) -> list[str]:
    try:
        load(copy.deepcopy(raw), project="acme-ml-prod", region="us-central1", stack="t")
    except ConfigError as error:
        return error.problems
    return []


def test_a_production_stack_takes_a_domain_with_narrow_source_ranges() -> None:
    assert _problems(_production_config()) == [], "domain + narrow sourceRanges is production-fit"


@pytest.mark.parametrize(
    ("ranges", "words"),
    [(None, "accepts connections from the whole internet"), (["10.0.0.0/8"], "10.0.0.0/8")],
)
def test_a_production_domain_without_narrow_ranges_is_refused_with_the_key_path(
    ranges: list[str] | None, words: str
) -> None:
    problems = _problems(_production_config(sourceRanges=ranges))
    found = [p for p in problems if p.startswith("workloads[0].expose.sourceRanges")]
    assert found and words in found[0], problems
    assert "Cloud Armor" in found[0], "the fix says what the ranges become with a domain"


def test_the_production_example_renders_and_passes_the_policy_pack() -> None:
    plan = render("gateway-prod", EXAMPLE)
    mandatory, _ = policy_findings(plan)
    assert mandatory == [], mandatory
    policy = plan.recording.one(ARMOR)
    assert policy.inputs["labels"] == {labels.PRODUCTION_CLUSTER_LABEL: "true"}
    (backend,) = plan.recording.of_type(BACKEND)
    assert backend.inputs["metadata"]["labels"] == {labels.PRODUCTION_LABEL: "true"}
    for r in plan.recording.resources:
        found = [v.message for v in evaluate(r.type, r.inputs, "gateway-prod", production=True)]
        assert not [v for v in found if RULE in v or "Cloud Armor" in v], found


def _fired(resource_type: str, props: dict[str, Any], production: bool = True) -> list[str]:
    return [
        v.message
        for v in evaluate(resource_type, props, "prod", production=production)
        if v.rule == RULE
    ]


def test_the_pack_refuses_a_production_gateway_backend_that_names_no_cloud_armor_policy(
    run: Callable[..., Recording],
) -> None:
    (backend,) = run(domain_stack()).of_type(BACKEND)
    found = _fired(BACKEND, backend.inputs)
    assert found and "whole internet" in found[0] and "expose.sourceRanges" in found[0], found
    assert _fired(BACKEND, backend.inputs, production=False) == [], "dev may stay open"
    (armored_backend,) = run(armored()).of_type(BACKEND)
    assert _fired(BACKEND, armored_backend.inputs) == []


def _everyone(rule: dict[str, Any], action: str) -> dict[str, Any]:
    """A rule of `action` on every address, before the stack's own rules."""
    added = copy.deepcopy(rule)
    added.update(action=action, priority=10)
    added["match"]["config"]["srcIpRanges"] = ["*"]
    return added


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda rules: rules[-1].update(action="allow"), "does not deny"),
        (lambda rules: rules[:-1], "does not deny"),
        (lambda rules: rules[0]["match"]["config"].update(srcIpRanges=["*"]), "every address"),
        (lambda rules: rules[0]["match"]["config"].update(srcIpRanges=["10.0.0.0/8"]), "/8"),
        (
            lambda rules: rules[0]["match"]["config"].update(
                srcIpRanges=["0.0.0.0/1", "128.0.0.0/1"]
            ),
            "every IPv4 address",
        ),
        (lambda rules: rules[0].update(match={"expr": {"expression": "true"}}), "cannot judge"),
        # Found by the attacker's review: every action but deny lets requests through.
        (lambda rules: rules.insert(0, _everyone(rules[0], "throttle")), "every address"),
        (lambda rules: rules.insert(0, _everyone(rules[0], "rate_based_ban")), "every address"),
        (lambda rules: rules.insert(0, _everyone(rules[0], "redirect")), "every address"),
        (lambda rules: rules[0]["match"].update(expr={"expression": "true"}), "cannot judge"),
        (lambda rules: rules[-1].update(preview=True), "preview"),
        (
            lambda rules: rules[-1]["match"]["config"].update(srcIpRanges=["203.0.113.0/24"]),
            "denies only some addresses",
        ),
    ],
)
def test_the_pack_refuses_a_production_cloud_armor_policy_that_lets_too_many_in(
    run: Callable[..., Recording], change: Callable[[list[dict[str, Any]]], Any], words: str
) -> None:
    props = copy.deepcopy(run(armored()).one(ARMOR).inputs)
    assert _fired(ARMOR, props) == [], "the policy the stack creates passes"
    changed = change(props["rules"])
    if isinstance(changed, list):
        props["rules"] = changed
    found = _fired(ARMOR, props)
    assert any(words in m for m in found), found
    assert _fired(ARMOR, props, production=False) == [], "a dev stack's policy is not judged"
    props["labels"] = {labels.PRODUCTION_CLUSTER_LABEL: "true"}
    assert _fired(ARMOR, props, production=False), "its own production label is enough"


def test_the_pack_and_the_program_use_the_same_cloud_armor_facts() -> None:
    assert pack_gateway.DEFAULT_RULE_PRIORITY == cloud_armor.DEFAULT_RULE_PRIORITY
    assert (
        pack_gateway.SECURITY_POLICY_TYPE == ARMOR and pack_gateway.BACKEND_POLICY_TYPE == BACKEND
    )


def test_only_a_stack_with_a_cloud_armor_policy_needs_the_cloud_armor_role(
    run: Callable[..., Recording],
) -> None:
    def needs(config: dict[str, Any]) -> set[str]:
        return {
            n.permission
            for n in permissions.required(run(config))
            if n.role == iam_roles.CLOUD_ARMOR_ROLE
        }

    assert needs(armored()) == set(iam_roles.CLOUD_ARMOR_PERMISSIONS)
    assert needs(domain_stack()) == set(), "no policy, no Cloud Armor grant"
    assert "compute.securityPolicies.use" not in iam_roles.CLOUD_ARMOR_PERMISSIONS, (
        "attaching the policy is GKE's Gateway controller's call, not the deploy identity's"
    )


def test_the_plan_says_only_the_ranges_get_through_cloud_armor_and_that_it_costs() -> None:
    text = summary(render("gateway-prod", EXAMPLE))
    ranges = ", ".join(RANGES)
    assert f"from {ranges} only (Cloud Armor; others 403)" in text
    assert f"1 allow rule(s) (at most 10 ranges each) for {ranges}" in text
    assert (
        "Cloud Armor Standard bills per policy, per rule (2 here, the default rule included) and "
        "per request" in text
    )
    assert "gkeGpuCloudArmor" in text, "the plan names the role the policy needs"
    assert all(ipaddress.ip_network(r) for r in RANGES)
    assert DOMAIN in text


def test_the_plan_says_when_the_ranges_admit_everyone_that_cloud_armor_filters_nothing(
    tmp_path: Path,
) -> None:
    # Found by the attacker's review: 0.0.0.0/0 was shown as "from 0.0.0.0/0 only ... others 403".
    stack_file = tmp_path / "Pulumi.open.yaml"
    stack_file.write_text(yaml.safe_dump({"config": armored(["0.0.0.0/0"])}))
    text = summary(render("open", stack_file))
    assert "from anywhere (sourceRanges admit every IPv4 address: Cloud Armor filters nothing)" in (
        text
    ), "a policy that admits every address must not read as a restriction"
    assert "others 403" not in text and "every other address gets 403" not in text, text
    assert "so the policy filters nothing" in text, "the policy's own line says so too"


def test_the_gateways_address_and_certificate_record_are_marked_as_made_up(tmp_path: Path) -> None:
    # Found by a new user's review: they carried no star, and the CNAME read as one to create.
    from tests import shared

    printed = shared.main(["gateway-prod", "--stack-file", str(EXAMPLE)], tmp_path).out
    outputs = {line.split(" = ")[0].strip(): line for line in printed.splitlines() if " = " in line}
    for name in ("externalIp", "dnsRecords"):
        assert outputs[name].endswith(" *"), (
            f"{outputs[name]!r}: the offline plan made this value up (docs/offline-plan.md: a star "
            "marks it); a user must not put it in their DNS"
        )


def test_the_route_waits_for_the_backend_policy_that_attaches_cloud_armor(
    run: Callable[..., Recording],
) -> None:
    # Found by the attacker's review: the route could send requests to a backend the Cloud Armor
    # policy was not yet attached to.
    recording = run(armored())
    route = next(r for r in recording.of_type(ROUTE) if r.name.endswith("-route"))
    backend = recording.one(BACKEND)
    assert backend.urn in route.dependencies, (
        "the HTTPRoute that sends requests to the gate waits for the GCPBackendPolicy that puts "
        f"Cloud Armor in front of it: {route.dependencies}"
    )
    plain = run(domain_stack())
    plain_route = next(r for r in plain.of_type(ROUTE) if r.name.endswith("-route"))
    assert plain.one(BACKEND).urn not in plain_route.dependencies, (
        "without a policy to attach, nothing changes for the stacks that shipped"
    )
