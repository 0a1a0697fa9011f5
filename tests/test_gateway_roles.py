"""The deploy roles of the Gateway features (issue 43, "Deploy roles"): expose.domain's global
address, SSL policy and Google-managed certificate, domain: auto's Cloud Endpoints service and
sourceRanges' Cloud Armor policy each come through a custom role that holds what the provider
calls, delete included, and the plan says which of them reach beyond the stack.

A missing permission is found by no offline check but these: `pulumi up` or `pulumi destroy` from
CI is refused with a 403 at the resource that needs it, after everything before it was done.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests import shared
from tests.conftest import ROOT
from tests.test_permissions import DELIVERY, DEPLOY_TABLE, SANDBOX_TABLE, _commands, _granted
from tools import iam_plan, iam_roles, permissions, render
from tools.engine import Recording, Registration
from tools.permissions import Need
from tools.stacks import Deployment

EXAMPLES = ("gateway", "gateway-auto", "gateway-prod")
SSL_POLICY = "gcp:compute/sSLPolicy:SSLPolicy"
ENDPOINTS = "gcp:endpoints/service:Service"
ARMOR = "gcp:compute/securityPolicy:SecurityPolicy"
GATEWAY_FEATURE_TYPES = {*iam_roles.GATEWAY_TYPES, ENDPOINTS, ARMOR}
# The predefined roles the Gateway features were granted before: project-wide, and
# certificatemanager.editor without a single delete.
PREDEFINED = (
    "roles/compute.publicIpAdmin",
    "roles/certificatemanager.editor",
    "roles/servicemanagement.admin",
    "roles/compute.securityAdmin",
)


def _example(stack: str) -> Path:
    return ROOT / "examples" / f"Pulumi.{stack}.yaml"


@functools.cache
def _recording(stack: str) -> Recording:
    return shared.render(stack, _example(stack)).recording


def _needs_of(recording: Recording, resource: Registration) -> list[Need]:
    return [n for n in permissions.required(recording) if resource.name in n.resources]


def _registration(type_: str, **inputs: object) -> Registration:
    return Registration(
        type=type_, name="made", urn=f"urn:pulumi:t::p::{type_}::made", parent="", custom=True,
        provider="", dependencies=[], protect=False, ignore_changes=[], custom_timeouts={},
        delete_before_replace=False, inputs={"project": "p", **inputs},
    )  # fmt: skip


def _needed(*registrations: Registration) -> set[tuple[str, str]]:
    recording = Recording(list(registrations), {}, set(), [])
    return {(n.role, n.permission) for n in permissions.required(recording)}


@pytest.mark.parametrize("stack", EXAMPLES)
def test_every_gateway_resource_a_stack_registers_can_be_made_read_and_destroyed(
    stack: str,
) -> None:
    recording = _recording(stack)
    made = [r for r in recording.resources if r.type in GATEWAY_FEATURE_TYPES]
    assert made, f"{stack} registers no Gateway resource: the example no longer tests this"
    for resource in made:
        needs = _needs_of(recording, resource)
        roles = {n.role for n in needs}
        assert len(roles) == 1 and next(iter(roles)) in iam_roles.CUSTOM_ROLES, (
            f"{stack}: {resource.type} needs {roles}: one custom role of docs/delivery.md step 2, "
            "not a predefined role that reaches far more of the project"
        )
        held = set(iam_roles.CUSTOM_ROLES[next(iter(roles))])
        asked = {n.permission for n in needs}
        assert asked <= held, f"{stack}: {resource.type} needs {asked - held}: a 403 at `up`"
        creates = {p.removesuffix(".create") for p in asked if p.endswith(".create")}
        assert creates, f"{stack}: {resource.type} asks for no create: the row is wrong"
        abandoned = resource.inputs.get("deletionPolicy") == "ABANDON"
        for kind in creates:
            assert f"{kind}.get" in asked, f"{stack}: {resource.type}: `pulumi refresh` reads it"
            assert abandoned or f"{kind}.delete" in asked, (
                f"{stack}: {resource.type} is deleted by `pulumi destroy` and replaced on a change "
                f"of domain, and its role lacks {kind}.delete: both are refused with a 403"
            )
            assert not abandoned or f"{kind}.delete" not in asked, (
                f"{stack}: {resource.type} is abandoned at destroy (deletionPolicy ABANDON): "
                f"{kind}.delete would let the identity delete every one of the project for nothing"
            )


def test_each_gateway_role_deletes_what_it_creates() -> None:
    for role in (iam_roles.GATEWAY_ROLE, iam_roles.CLOUD_ARMOR_ROLE):
        held = iam_roles.CUSTOM_ROLES[role]
        creates = [p for p in held if p.endswith(".create")]
        missing = [p.replace(".create", ".delete") for p in creates]
        missing = [p for p in missing if p not in held]
        assert creates and not missing, (
            f"{role} creates what it cannot delete ({missing}): `pulumi destroy` gets a 403, as "
            "it did with roles/certificatemanager.editor"
        )


@pytest.mark.parametrize("stack", EXAMPLES)
def test_no_gateway_stack_needs_a_predefined_project_role(stack: str) -> None:
    needs = permissions.required(_recording(stack))
    predefined = sorted({n.role for n in needs if n.role in PREDEFINED})
    assert not predefined, (
        f"{stack} needs {predefined}: each reaches far beyond the stack's Gateway (every address "
        "and prefix, every managed service, every firewall), where a custom role does the job"
    )


def test_the_guide_grants_no_identity_the_gateways_old_predefined_roles() -> None:
    grants = _commands(DELIVERY.read_text(), "add-iam-policy-binding")
    for header, identity in (DEPLOY_TABLE, SANDBOX_TABLE):
        for role in PREDEFINED:
            assert role not in _granted(header), f"docs/delivery.md's table grants {role}"
            assert not any(identity in g and f"--role={role}" in g for g in grants), (
                f"docs/delivery.md grants {identity} {role} on the project: a custom role of "
                "step 2 holds what the Gateway needs, deletes included"
            )


def test_the_ssl_policy_is_made_and_destroyed_through_the_gateway_role() -> None:
    assert _needed(_registration(SSL_POLICY, name="x", minTlsVersion="TLS_1_2")) == {
        (iam_roles.GATEWAY_ROLE, p) for p in iam_roles.SSL_POLICY_PERMISSIONS
    }, "the provider inserts, reads, patches and deletes it, waiting on the global operation"
    assert "compute.sslPolicies.use" not in iam_roles.GATEWAY_PERMISSIONS, (
        "attaching the policy to the load balancer is GKE's Gateway controller's call"
    )


def test_a_certificate_uses_a_dns_authorization_only_when_it_names_one() -> None:
    certificate = "gcp:certificatemanager/certificate:Certificate"
    use = (iam_roles.GATEWAY_ROLE, iam_roles.USE_DNS_AUTHORIZATION)
    authorized = {"domains": ["a.example"], "dnsAuthorizations": ["projects/p/x"]}
    assert use in _needed(_registration(certificate, managed=authorized)), (
        "Certificate Manager checks `use` on each DNS authorization a certificate names"
    )
    assert use not in _needed(_registration(certificate, managed={"domains": ["a.example"]})), (
        "a Cloud Endpoints name's certificate names none (load balancer authorization)"
    )


def test_the_endpoints_service_is_deleted_at_destroy_unless_it_is_abandoned() -> None:
    delete = (iam_roles.ENDPOINTS_ROLE, iam_roles.ENDPOINTS_DELETE)
    assert delete in _needed(_registration(ENDPOINTS, deletionPolicy="DELETE")), (
        "`pulumi destroy` deletes the service (servicemanagement.services.delete): without it in "
        "the role, destroy gets a 403 and the name keeps pointing at the released address"
    )
    assert delete in {(iam_roles.ENDPOINTS_ROLE, p) for p in iam_roles.ENDPOINTS_PERMISSIONS}
    assert delete not in _needed(_registration(ENDPOINTS, deletionPolicy="ABANDON")), (
        "an abandoned service is left in place: destroy calls no delete"
    )


# --- the plan ------------------------------------------------------------------------------------


def _iam_section(stack: str) -> str:
    text = render.summary(shared.render(stack, _example(stack)))
    return text[text.index("  iam  ") : text.index("  outputs ")]


def _broad_section(iam: str) -> str:
    assert "            broad: these grants reach beyond what the stack owns:" in iam, iam
    return iam[iam.index("broad: these grants") :]


@pytest.mark.parametrize(
    ("stack", "roles"),
    [
        ("gateway", {iam_roles.GATEWAY_ROLE}),
        ("gateway-auto", {iam_roles.GATEWAY_ROLE, iam_roles.ENDPOINTS_ROLE}),
        ("gateway-prod", {iam_roles.GATEWAY_ROLE, iam_roles.CLOUD_ARMOR_ROLE}),
    ],
)
def test_a_gateway_stacks_plan_names_its_roles_and_which_are_broad(
    stack: str, roles: set[str]
) -> None:
    iam = _iam_section(stack)
    broad = _broad_section(iam)
    for role in roles:
        assert f"            {role} (" in iam, f"{stack}: the plan must name {role} as granted"
        reach, instead = iam_roles.BROAD[role]
        assert f"{role} on project " in broad and f"{reach}: {instead}" in broad, (
            f"{stack}: {role} is granted on the whole project and reaches other stacks' objects: "
            "the plan must say so before anyone grants it"
        )
    named = [r for r in PREDEFINED if r in iam]
    assert not named, f"{stack}: the plan still asks for {named}"


def test_a_gateway_stack_ci_deploys_is_warned_of_its_broad_gateway_roles() -> None:
    deployment = Deployment("deploy.yml", "on every push to main", False, fresh_cluster=False)
    lines = iam_plan.summary_lines(_recording("gateway-auto"), deployment)
    text = "\n".join(lines)
    assert (
        "! deploy.yml deploys this stack on every push to main, with no reviewer, and it needs "
        "broad grants:"
    ) in text
    for role in (iam_roles.GATEWAY_ROLE, iam_roles.ENDPOINTS_ROLE):
        assert f"              {role} on project acme-ml-dev " in text, (
            f"a stack deployed unreviewed from CI must warn that {role} is project-wide"
        )
    assert "broad: these grants" not in text, "one list of broad grants, the warning"
