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

from tests.conftest import MINIMAL, ROOT, Run
from tools import permissions, render
from tools.engine import Recording, Registration
from tools.permissions import Need

DELIVERY = ROOT / "docs" / "delivery.md"
STACK_FILES = sorted(
    [
        *ROOT.glob("Pulumi.*.yaml"),
        *ROOT.glob("examples/Pulumi.*.yaml"),
        *ROOT.glob("tests/stacks/Pulumi.*.yaml"),
    ]
)
SCOPE_KINDS = ("project", "service account", "bucket", "repository", "key", "cluster")
# A table cell: a predefined role, a custom role of the project, or a Kubernetes ClusterRole.
ROLE_CELL = re.compile(r"\s*`((?:projects/PROJECT_ID/)?roles/[^`]+|clusterrole/[^`]+)`\s*")
NODE_ACCOUNT = "gpu-nodes@acme-ml-test.iam.gserviceaccount.com"
PROJECT_IAM_ADMIN = "roles/resourcemanager.projectIamAdmin"


def _stack_name(path: Path) -> str:
    return path.name.removeprefix("Pulumi.").removesuffix(".yaml")


@functools.cache
def _needs(path: Path) -> list[Need]:
    return permissions.required(render.render(_stack_name(path), path).recording)


def _scope_kind(scope: str) -> str:
    return next((k for k in SCOPE_KINDS if scope.startswith(k)), scope)


@functools.cache
def _granted() -> dict[str, str]:
    """The deploy identity's roles table of docs/delivery.md: role -> scope kind."""
    lines = DELIVERY.read_text().splitlines()
    start = lines.index("| role | scope | when | why |")
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
    granted = _granted()
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
    """Each shell command of docs/delivery.md that contains `verb`, continuation lines joined."""
    commands = re.findall(rf"{verb}[^\n]*\n(?:[^\n]*\\\n)*[^\n]*", text)
    return [c.replace("${PROJECT_ID}", "PROJECT_ID") for c in commands]


def test_every_role_in_the_table_has_its_bootstrap_command() -> None:
    text = DELIVERY.read_text()
    grants = _commands(text, "add-iam-policy-binding")
    bindings = _commands(text, "kubectl create clusterrolebinding")
    for role in _granted():
        if role.startswith("clusterrole/"):
            name = role.removeprefix("clusterrole/")
            assert any(f"--clusterrole={name}" in b and "DEPLOY_SA" in b for b in bindings), (
                f"docs/delivery.md lists {role} for the deploy identity but no command binds it"
            )
            continue
        assert any("DEPLOY_SA" in g and f"--role={role}" in g for g in grants), (
            f"docs/delivery.md lists {role} for the deploy identity but no command grants it"
        )


def test_the_deploy_identity_holds_no_project_wide_kubernetes_or_network_admin() -> None:
    text = DELIVERY.read_text()
    deploy = [g for g in _commands(text, "add-iam-policy-binding") if "DEPLOY_SA" in g]
    for role in ("roles/container.admin", "roles/compute.networkAdmin"):
        assert role not in _granted() and not any(f"--role={role}" in g for g in deploy), (
            f"{role} on the project reaches every cluster or network of it, other stacks' too"
        )


def test_the_network_role_holds_exactly_what_the_program_calls() -> None:
    (create,) = _commands(DELIVERY.read_text(), "gcloud iam roles create gkeGpuNetwork")
    granted = re.search(r"--permissions=(\S+)", create)
    assert granted, "docs/delivery.md must create gkeGpuNetwork with --permissions"
    assert tuple(sorted(granted.group(1).split(","))) == permissions.NETWORK_PERMISSIONS, (
        "the custom role in docs/delivery.md and tools/permissions.py must list the same "
        "permissions: a missing one is a 403 at `pulumi up`, an extra one a needless right"
    )
    needed = {
        need.permission
        for path in STACK_FILES
        for need in _needs(path)
        if need.role == permissions.NETWORK_ROLE
    }
    assert needed and needed <= set(permissions.NETWORK_PERMISSIONS), (
        "every router, NAT and address permission a stack needs is in the custom role"
    )


# --- what each feature asks for ------------------------------------------------------------------


def test_an_autoscaled_workload_needs_project_iam_admin_for_the_metrics_adapter(run: Run) -> None:
    (need,) = _roles(permissions.required(run(_autopilot(autoscale=AUTOSCALE))), PROJECT_IAM_ADMIN)
    assert need.permission == "resourcemanager.projects.setIamPolicy"
    assert need.scope == "project acme-ml-test"
    assert need.grants == ("roles/monitoring.viewer",), (
        "the metrics adapter's Workload Identity principal reads Cloud Monitoring"
    )
    assert not _roles(permissions.required(run(_autopilot())), PROJECT_IAM_ADMIN), (
        "without autoscale (and with a named node account) the stack binds no project role"
    )


def test_a_model_cache_needs_storage_admin_on_its_bucket_only(run: Run) -> None:
    (need,) = _roles(
        permissions.required(run(_autopilot(modelCache=MODEL_CACHE))), "roles/storage.admin"
    )
    assert (need.scope, need.permission) == ("bucket acme-models", "storage.buckets.setIamPolicy")
    assert need.grants == ("roles/storage.objectViewer",)


def test_nodes_running_as_a_named_account_need_act_as_on_that_account(run: Run) -> None:
    needs = _roles(permissions.required(run(_autopilot())), "roles/iam.serviceAccountUser")
    assert [(n.scope, n.permission) for n in needs] == [
        (f"service account {NODE_ACCOUNT}", "iam.serviceAccounts.actAs")
    ], "GKE refuses a cluster whose nodes run as an account the caller may not act as"


def test_an_image_from_artifact_registry_needs_admin_on_its_repository(run: Run) -> None:
    image = "us-docker.pkg.dev/acme-ml-test/vllm/vllm-openai:v0.29.0"
    needs = permissions.required(run(_autopilot(image=image)))
    (need,) = _roles(needs, "roles/artifactregistry.admin")
    assert need.scope == "repository us-docker.pkg.dev/acme-ml-test/vllm", (
        "the node account's reader grant is on the repository; repoAdmin cannot make it"
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
        "roles/resourcemanager.projectIamAdmin on project acme-ml-test, granting only "
        "roles/monitoring.viewer (project IAM bindings)"
    ) in text, "the reviewer must see the project IAM right autoscale costs before CI's 403"
    assert "roles/container.clusterAdmin on project acme-ml-test (clusters" in text
    assert "clusterrole/cluster-admin on cluster " in text, (
        "Kubernetes objects come from RBAC in the stack's own cluster, not a project-wide role"
    )
