"""The deploy identity's roles: what each stack registers needs, and docs/delivery.md grants it.

A role the guide does not grant is not caught by any offline check: `pulumi up` in CI is refused
with a 403 at the resource that needs it, after everything before it was created.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests import shared
from tests.conftest import MINIMAL, ROOT, Run
from tools import iam_roles, permissions, render, stacks
from tools.engine import Recording, Registration
from tools.permissions import Need

DELIVERY = ROOT / "docs" / "delivery.md"
SANDBOX = ROOT / stacks.SANDBOX_STACK_FILE
STACK_FILES = sorted(
    [
        *ROOT.glob("Pulumi.*.yaml"),
        SANDBOX,
        *ROOT.glob("examples/Pulumi.*.yaml"),
        *ROOT.glob("tests/stacks/Pulumi.*.yaml"),
    ]
)
SCOPE_KINDS = ("project", "service account", "bucket", "repository", "key", "cluster")
# A table cell: a predefined role, a custom role of the project, or a Kubernetes ClusterRole.
ROLE_CELL = re.compile(r"\s*`((?:projects/PROJECT_ID/)?roles/[^`]+|clusterrole/[^`]+)`\s*")
# The deploy identities' tables of docs/delivery.md, and the shell variable each one's commands
# grant to: every stack's (4. Identities) and the real-cloud test's sandbox identity.
DEPLOY_TABLE = ("| role | scope | when | why |", "DEPLOY_SA")
SANDBOX_TABLE = ("| role (sandbox identity) | scope | why |", "SANDBOX_SA")
NODE_ACCOUNT = "gpu-nodes@acme-ml-test.iam.gserviceaccount.com"
PROJECT_IAM_ADMIN = "roles/resourcemanager.projectIamAdmin"


def _stack_name(path: Path) -> str:
    return path.name.removeprefix("Pulumi.").removesuffix(".yaml")


@functools.cache
def _needs(path: Path) -> list[Need]:
    """What the stack's deploy identity needs, as CI deploys it (a new cluster each run for the
    real-cloud test's stack)."""
    recording = shared.render(_stack_name(path), path).recording
    return permissions.required(recording, stacks.ci_deployment(path))


def _table(path: Path) -> tuple[str, str]:
    return SANDBOX_TABLE if path == SANDBOX else DEPLOY_TABLE


def _scope_kind(scope: str) -> str:
    return next((k for k in SCOPE_KINDS if scope.startswith(k)), scope)


@functools.cache
def _granted(header: str = DEPLOY_TABLE[0]) -> dict[str, str]:
    """A deploy identity's roles table of docs/delivery.md: role -> scope kind."""
    lines = DELIVERY.read_text().splitlines()
    start = lines.index(header)
    granted = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        role_cell, scope_cell = line.split("|")[1:3]
        role = ROLE_CELL.fullmatch(role_cell)
        assert role, f"docs/delivery.md: {role_cell!r} is not a role cell"
        granted[role.group(1)] = _scope_kind(scope_cell.strip())
    return granted


def _grantable_project_roles() -> set[str]:
    """The roles the conditional projectIamAdmin grant of docs/delivery.md may grant."""
    condition = re.search(
        r"modifiedGrantsByRole', \[\]\)\.hasOnly\(\[(.*?)\]\)", DELIVERY.read_text(), re.DOTALL
    )
    assert condition, "docs/delivery.md must limit projectIamAdmin with a modifiedGrantsByRole"
    return set(re.findall(r"'([^']+)'", condition.group(1)))


def _autopilot(**workload: Any) -> dict[str, Any]:
    """An Autopilot stack whose node account exists already: it binds no node roles itself."""
    return {
        **MINIMAL,
        "gke-gpu:cluster": {"deletionProtection": False, "nodeServiceAccount": NODE_ACCOUNT},
        "gke-gpu:workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "gpu": {"type": "nvidia-l4", "count": 1},
                "args": ["--model", "Qwen/Qwen2.5-0.5B-Instruct"],
                "cache": {"size": "30Gi"},
                **workload,
            }
        ],
    }


AUTOSCALE = {"minReplicas": 1, "maxReplicas": 3}
MODEL_CACHE = {"bucket": "acme-models", "path": "Qwen/Qwen2.5-0.5B-Instruct"}


def _roles(needs: list[Need], role: str) -> list[Need]:
    return [n for n in needs if n.role == role]


# --- every stack in the repository ---------------------------------------------------------------


@pytest.mark.parametrize("path", STACK_FILES, ids=_stack_name)
def test_every_stack_needs_only_roles_the_delivery_guide_grants(path: Path) -> None:
    granted = _granted(_table(path)[0])
    for need in _needs(path):
        if need.role == permissions.UNKNOWN:
            continue  # the next test names it
        assert need.role in granted, (
            f"{_stack_name(path)}: {need.resources[0]} needs {need.permission} ({need.role} on "
            f"{need.scope}), which docs/delivery.md never grants the deploy identity: `pulumi "
            "up` from CI gets a 403 there"
        )
        kind = granted[need.role]
        assert kind in ("project", _scope_kind(need.scope)), (
            f"{_stack_name(path)}: docs/delivery.md grants {need.role} on a {kind}, but "
            f"{need.resources[0]} needs it on {need.scope}: a 403 from CI"
        )


@pytest.mark.parametrize("path", STACK_FILES, ids=_stack_name)
def test_every_registered_type_has_a_row_in_the_permissions_table(path: Path) -> None:
    unknown = [f"{n.scope} ({', '.join(n.resources)})" for n in _needs(path) if n.role == "unknown"]
    assert not unknown, (
        f"{_stack_name(path)} registers {unknown}: add a row to tools/permissions.py (and the "
        "role to docs/delivery.md), or CI finds the missing role as a 403"
    )


@pytest.mark.parametrize("path", STACK_FILES, ids=_stack_name)
def test_project_bindings_grant_only_roles_the_deploy_identitys_condition_allows(
    path: Path,
) -> None:
    allowed = _grantable_project_roles()
    for need in _roles(_needs(path), PROJECT_IAM_ADMIN):
        assert set(need.grants) <= allowed, (
            f"{_stack_name(path)} binds {sorted(set(need.grants) - allowed)} on the project; "
            "the condition in docs/delivery.md (deploy-grants.yaml) refuses it with a 403"
        )


def _commands(text: str, verb: str) -> list[str]:
    """Each shell command of docs/delivery.md that contains `verb`, continuation lines joined; a
    custom role's project (the bootstrap's or the sandbox's) reads PROJECT_ID, as in the tables."""
    commands = re.findall(rf"{verb}[^\n]*\n(?:[^\n]*\\\n)*[^\n]*", text)
    return [
        c.replace("${PROJECT_ID}", "PROJECT_ID").replace("${SANDBOX_PROJECT}", "PROJECT_ID")
        for c in commands
    ]


@pytest.mark.parametrize(
    ("header", "identity"), [DEPLOY_TABLE, SANDBOX_TABLE], ids=["deploy", "sandbox"]
)
def test_every_role_in_the_table_has_its_bootstrap_command(header: str, identity: str) -> None:
    text = DELIVERY.read_text()
    grants = _commands(text, "add-iam-policy-binding")
    bindings = _commands(text, "kubectl create clusterrolebinding")
    for role in _granted(header):
        if role.startswith("clusterrole/"):
            name = role.removeprefix("clusterrole/")
            assert any(f"--clusterrole={name}" in b and identity in b for b in bindings), (
                f"docs/delivery.md lists {role} for {identity} but no command binds it"
            )
            continue
        assert any(f"{{{identity}}}" in g and f"--role={role}" in g for g in grants), (
            f"docs/delivery.md lists {role} for {identity} but no command grants it"
        )


def test_the_deploy_identity_holds_no_project_wide_kubernetes_or_network_admin() -> None:
    text = DELIVERY.read_text()
    deploy = [g for g in _commands(text, "add-iam-policy-binding") if "DEPLOY_SA" in g]
    for role in ("roles/container.admin", "roles/compute.networkAdmin"):
        assert role not in _granted() and not any(f"--role={role}" in g for g in deploy), (
            f"{role} on the project reaches every cluster or network of it, other stacks' too"
        )


# Predefined roles that administer far more than what a stack creates or binds (counts:
# tools/iam_roles.py): every service account of the project, every object of a bucket, every
# image of a repository, every metric of the project.
TOO_BROAD = (
    "roles/iam.serviceAccountAdmin",
    "roles/storage.admin",
    "roles/artifactregistry.admin",
    "roles/monitoring.editor",
)


@pytest.mark.parametrize("path", STACK_FILES, ids=_stack_name)
def test_no_stack_needs_an_admin_role_where_a_narrow_one_does_the_job(path: Path) -> None:
    wide = [f"{n.role} on {n.scope}" for n in _needs(path) if n.role in TOO_BROAD]
    assert not wide, (
        f"{_stack_name(path)} needs {wide}: the deploy identity needs only what the stack "
        "creates and binds (tools/iam_roles.py)"
    )


def test_the_guide_grants_no_identity_an_admin_role_where_a_narrow_one_does_the_job() -> None:
    grants = _commands(DELIVERY.read_text(), "add-iam-policy-binding")
    for header, identity in (DEPLOY_TABLE, SANDBOX_TABLE):
        for role in TOO_BROAD:
            assert role not in _granted(header), f"docs/delivery.md's table grants {role}"
            assert not any(identity in g and f"--role={role}" in g for g in grants), (
                f"docs/delivery.md grants {identity} {role}: setIamPolicy, delete and more on "
                "everything of its kind in the project, not only what the stack owns"
            )


@pytest.mark.parametrize("role", sorted(iam_roles.CUSTOM_ROLES))
def test_each_custom_role_holds_exactly_what_the_program_calls(role: str) -> None:
    role_id = role.rsplit("/", 1)[-1]
    creates = _commands(DELIVERY.read_text(), f"gcloud iam roles create {role_id} ")
    assert len(creates) == 1, f"docs/delivery.md must create {role_id} once"
    granted = re.search(r"--permissions=(\S+)", creates[0])
    assert granted, f"docs/delivery.md must create {role_id} with --permissions"
    assert tuple(sorted(granted.group(1).split(","))) == tuple(
        sorted(iam_roles.CUSTOM_ROLES[role])
    ), (
        "the custom role in docs/delivery.md and tools/iam_roles.py must list the same "
        "permissions: a missing one is a 403 at `pulumi up`, an extra one a needless right"
    )
    needed = {need.permission for path in STACK_FILES for need in _needs(path) if need.role == role}
    assert needed and needed <= set(iam_roles.CUSTOM_ROLES[role]), (
        f"every permission a stack needs through {role_id} is in it, and some stack needs it"
    )


# --- what each feature asks for ------------------------------------------------------------------


def _scoped(needs: list[Need], role: str) -> set[tuple[str, str]]:
    return {(n.scope, n.permission) for n in needs if n.role == role}


def test_an_autoscaled_workload_needs_project_iam_admin_for_the_metrics_adapter(run: Run) -> None:
    needs = _roles(permissions.required(run(_autopilot(autoscale=AUTOSCALE))), PROJECT_IAM_ADMIN)
    assert {(n.scope, n.permission) for n in needs} == {
        ("project acme-ml-test", "resourcemanager.projects.getIamPolicy"),
        ("project acme-ml-test", "resourcemanager.projects.setIamPolicy"),
    }, "an IAM member resource reads the project's policy and writes it back"
    assert {g for n in needs for g in n.grants} == {"roles/monitoring.viewer"}, (
        "the metrics adapter's Workload Identity principal reads Cloud Monitoring"
    )
    assert not _roles(permissions.required(run(_autopilot())), PROJECT_IAM_ADMIN), (
        "without autoscale (and with a named node account) the stack binds no project role"
    )


def test_a_stack_that_creates_its_node_account_acts_on_no_other_account(run: Run) -> None:
    config = _autopilot()
    config["gke-gpu:cluster"] = {"deletionProtection": False, "name": "gpu-own"}
    needs = permissions.required(run(config))
    created = "service account gpu-own-nodes@acme-ml-test.iam.gserviceaccount.com"
    assert _scoped(needs, iam_roles.SERVICE_ACCOUNT_CREATOR) == {
        ("project acme-ml-test", "iam.serviceAccounts.create"),
        ("project acme-ml-test", "iam.serviceAccounts.get"),
    }, "creating the node account is the one right on the project: it acts as and administers none"
    assert _scoped(needs, iam_roles.SERVICE_ACCOUNT_DELETER) == {
        (created, "iam.serviceAccounts.delete")
    }, "`pulumi destroy` deletes the node account through a grant on that account alone"
    assert _scoped(needs, iam_roles.SERVICE_ACCOUNT_USER) == {
        (created, "iam.serviceAccounts.actAs")
    }, "GKE creates nodes that run as the account only for a caller that may act as it"
    on_project = [n for n in needs if n.role.startswith("roles/iam.") and "project" in n.scope]
    assert all(n.role == iam_roles.SERVICE_ACCOUNT_CREATOR for n in on_project), (
        f"{on_project}: project-wide serviceAccountAdmin sets the policy of, deletes and disables "
        "every service account of the project"
    )


def test_a_model_cache_needs_only_the_bucket_iam_role_on_its_bucket(run: Run) -> None:
    needs = _roles(
        permissions.required(run(_autopilot(modelCache=MODEL_CACHE))), iam_roles.BUCKET_IAM_ROLE
    )
    assert {(n.scope, n.permission) for n in needs} == {
        ("bucket acme-models", "storage.buckets.getIamPolicy"),
        ("bucket acme-models", "storage.buckets.setIamPolicy"),
    }, "the program sets one binding on the bucket: storage.admin would also reach every object"
    assert {g for n in needs for g in n.grants} == {
        "roles/storage.objectViewer",
        "roles/storage.legacyBucketReader",
    }, "a streamed model's reader: its objects, and the bucket's metadata the streamer reads"


def test_nodes_running_as_a_named_account_need_act_as_on_that_account(run: Run) -> None:
    needs = _roles(permissions.required(run(_autopilot())), "roles/iam.serviceAccountUser")
    assert [(n.scope, n.permission) for n in needs] == [
        (f"service account {NODE_ACCOUNT}", "iam.serviceAccounts.actAs")
    ], "GKE refuses a cluster whose nodes run as an account the caller may not act as"


def test_an_image_from_artifact_registry_needs_only_the_registry_iam_role_on_its_repository(
    run: Run,
) -> None:
    image = "us-docker.pkg.dev/acme-ml-test/vllm/vllm-openai:v0.29.0"
    needs = _roles(permissions.required(run(_autopilot(image=image))), iam_roles.REGISTRY_IAM_ROLE)
    repository = "repository us-docker.pkg.dev/acme-ml-test/vllm"
    assert {(n.scope, n.permission) for n in needs} == {
        (repository, "artifactregistry.repositories.getIamPolicy"),
        (repository, "artifactregistry.repositories.setIamPolicy"),
    }, "the node account's reader grant is on the repository; admin would reach every image"


@pytest.mark.parametrize(
    ("monitoring", "roles"),
    [
        ({}, {iam_roles.DASHBOARD_EDITOR, iam_roles.ALERT_POLICY_EDITOR}),
        (
            {"emails": ["oncall@acme.example"]},
            {
                iam_roles.DASHBOARD_EDITOR,
                iam_roles.ALERT_POLICY_EDITOR,
                iam_roles.NOTIFICATION_CHANNEL_EDITOR,
            },
        ),
    ],
    ids=["no-emails", "emails"],
)
def test_monitoring_needs_one_narrow_editor_per_kind_of_object_it_creates(
    run: Run, monitoring: dict[str, Any], roles: set[str]
) -> None:
    config = {**_autopilot(), "gke-gpu:monitoring": monitoring}
    needs = [n for n in permissions.required(run(config)) if n.permission.startswith("monitoring.")]
    assert {n.role for n in needs} == roles, (
        "a dashboard, alert policies and email channels need their kind's editor each, not "
        "roles/monitoring.editor (80 permissions, writing metrics among them)"
    )


def test_an_unknown_resource_type_comes_back_as_an_unknown_need() -> None:
    def registration(type_: str) -> Registration:
        return Registration(
            type=type_, name="new", urn=f"urn:pulumi:t::p::{type_}::new", parent="",
            custom=True, provider="", dependencies=[], protect=False, ignore_changes=[],
            custom_timeouts={}, delete_before_replace=False, inputs={"project": "p"},
        )  # fmt: skip

    types = ["gcp:compute/firewall:Firewall", "docker:index/image:Image", "random:index/x:X"]
    recording = Recording([registration(t) for t in types], {}, set(), [])
    unknown = [n.scope for n in permissions.required(recording) if n.role == permissions.UNKNOWN]
    assert unknown == ["type docker:index/image:Image", "type gcp:compute/firewall:Firewall"], (
        "a type without a row must fail the tests, not be left for CI's 403 to find"
    )


# --- the plan ------------------------------------------------------------------------------------


def test_the_plan_prints_what_the_deploy_identity_needs(tmp_path: Path) -> None:
    stack_file = tmp_path / "Pulumi.scaled.yaml"
    stack_file.write_text(json.dumps({"config": _autopilot(autoscale=AUTOSCALE)}))
    text = render.summary(render.render("scaled", stack_file))
    assert "  iam       the deploy identity needs" in text
    assert (
        "roles/resourcemanager.projectIamAdmin on project acme-ml-test, with deploy-grants.yaml's "
        "condition (it grants no role but roles/monitoring.viewer, "
        "roles/container.defaultNodeServiceAccount, roles/serviceusage.serviceUsageConsumer); the "
        "stack binds roles/monitoring.viewer with it (project IAM bindings)"
    ) in text, "the reviewer must see the project IAM right autoscale costs before CI's 403"
    assert "roles/container.clusterAdmin on project acme-ml-test (clusters" in text
    assert "clusterrole/cluster-admin on cluster " in text, (
        "Kubernetes objects come from RBAC in the stack's own cluster, not a project-wide role"
    )


def test_the_plan_names_the_bucket_roles_permissions_and_what_it_binds(tmp_path: Path) -> None:
    stack_file = tmp_path / "Pulumi.cached.yaml"
    stack_file.write_text(json.dumps({"config": _autopilot(modelCache=MODEL_CACHE)}))
    text = render.summary(render.render("cached", stack_file))
    assert (
        "projects/PROJECT_ID/roles/gkeGpuBucketIam (storage.buckets.getIamPolicy, "
        "storage.buckets.setIamPolicy) on bucket acme-models; the stack binds "
        "roles/storage.legacyBucketReader, roles/storage.objectViewer with it (the model cache's "
        "reader)"
    ) in text, "the plan says what the identity holds on the bucket, and what the stack binds"
    assert "granting only" not in text, (
        "no IAM condition limits what the bucket role may grant: the plan must not suggest one"
    )


def test_the_plan_warns_when_a_stack_ci_deploys_needs_a_broad_grant() -> None:
    dev = render.summary(shared.render("dev"))
    assert (
        "! deploy.yml deploys this stack on every push to main, with no reviewer, and it needs "
        "broad grants:"
    ) in dev, (
        "dev deploys unreviewed on every push: the reviewer must see what its identity reaches"
    )
    assert (
        "roles/iam.serviceAccountCreator on project acme-ml-dev creates any service account in the "
        "project: name a node account made by the bootstrap in cluster.nodeServiceAccount"
    ) in dev
    prod = render.summary(shared.render("prod"))
    assert "needs broad grants" not in prod, "prod names its node account: nothing broad is left"


def test_the_plan_warns_of_broad_grants_only_for_stacks_ci_deploys(tmp_path: Path) -> None:
    stack_file = tmp_path / "Pulumi.dev.yaml"
    stack_file.write_text((ROOT / "Pulumi.dev.yaml").read_text())
    text = render.summary(render.render("dev", stack_file))
    assert "roles/iam.serviceAccountCreator on project acme-ml-dev" in text
    assert "needs broad grants" not in text, (
        "a stack file no workflow deploys is someone's own `pulumi up`: no CI warning"
    )


def test_the_plans_iam_section_names_every_role_the_guide_grants_always() -> None:
    # Found by a new user's review: delivery.md grants roles/compute.viewer "always", and the
    # plan's iam section, which says what the deploy identity needs, never named it.
    guide = (ROOT / "docs" / "delivery.md").read_text()
    always = re.findall(r"^\| `(roles/[a-zA-Z.]+)` \| project \| always \|", guide, re.MULTILINE)
    printed = render.summary(shared.render("dev"))
    iam = printed[printed.index("  iam  ") :]
    missing = [role for role in always if role not in iam]
    assert always and not missing, (
        f"{missing}: the guide grants these on every project, and the plan's iam section does not "
        "say so: a user who grants what the plan lists fails at the first refresh"
    )
