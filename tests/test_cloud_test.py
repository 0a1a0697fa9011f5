"""The real-cloud test's judgements (tools/cloud_test.py) on recorded `pulumi preview --json`
documents, and its sandbox stack and config edit checked offline."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import shared
from tests.conftest import ROOT
from tools import cloud_test
from tools.engine import Registration

SAMPLES = Path(__file__).parent / "samples"
SANDBOX = ROOT / ".github" / "cloud-test" / "Pulumi.cloud-test.yaml"
WORKFLOW = ROOT / ".github" / "workflows" / "cloud-test.yml"


def _preview(name: str) -> cloud_test.Preview:
    return cloud_test.parse((SAMPLES / f"preview-{name}.json").read_text())


# --- a second `pulumi up` ----------------------------------------------------------------------


def test_a_preview_of_only_same_steps_passes_the_second_up() -> None:
    verdict = cloud_test.no_changes(_preview("second-up-clean"))
    assert verdict.passed, verdict.lines


def test_a_preview_that_still_updates_something_fails_the_second_up_and_names_it() -> None:
    verdict = cloud_test.no_changes(_preview("workload-edit"))
    assert not verdict.passed, "an update right after `pulumi up` means the program drifts"
    text = verdict.markdown()
    assert "| update | `kubernetes:apps/v1:Deployment` | `workload-llm-deployment` | `spec` |" in (
        text
    ), "the summary must say which resource and which property would change"


def test_a_change_counted_only_in_the_change_summary_still_fails() -> None:
    preview = cloud_test.Preview(steps=[], change_summary={"same": 88, "update": 1})
    assert not cloud_test.no_changes(preview).passed, (
        "`pulumi preview --json` leaves out steps it does not show; the counts still tell"
    )


def test_a_failed_preview_fails_both_checks_with_its_error() -> None:
    preview = _preview("failed")
    for verdict in (cloud_test.no_changes(preview), cloud_test.workload_only(preview)):
        assert not verdict.passed
        assert "problem(s) in the gke-gpu config" in verdict.markdown()


# --- a workload's config edit -----------------------------------------------------------------


def test_an_edit_that_changes_only_the_workloads_deployment_passes() -> None:
    verdict = cloud_test.workload_only(_preview("workload-edit"))
    assert verdict.passed, verdict.lines


def test_a_replaced_gate_config_map_is_still_inside_the_workload() -> None:
    assert cloud_test.workload_only(_preview("gate-edit")).passed, (
        "the gate belongs to the GpuService: its replacement is the workload's own"
    )


def test_an_edit_that_reaches_the_cluster_or_keda_fails_and_lists_only_those() -> None:
    verdict = cloud_test.workload_only(_preview("edit-reaches-platform"))
    assert not verdict.passed
    text = verdict.markdown()
    assert "`gcp:container/cluster:Cluster` | `gke-cluster` | `maintenancePolicy`" in text
    assert "deployment-keda-keda-operator" in text
    assert "workload-llm-deployment" not in text, "changes inside the GpuService are fine"


def test_an_edit_that_changes_nothing_proves_nothing_and_fails() -> None:
    verdict = cloud_test.workload_only(_preview("second-up-clean"))
    assert not verdict.passed and "changed nothing" in verdict.markdown()


def test_the_command_appends_its_verdict_to_the_step_summary(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier\n")
    good = SAMPLES / "preview-workload-edit.json"
    assert cloud_test.main(["--summary", str(summary), "workload-only", str(good)]) == 0
    assert cloud_test.main(["--summary", str(summary), "no-changes", str(good)]) == 1
    text = summary.read_text()
    assert text.startswith("# earlier\n"), "the job summary is appended to, never replaced"
    assert "changes only the workload: passed" in text and "changes nothing: FAILED" in text


def test_a_file_that_is_not_preview_json_fails_with_a_reason(tmp_path: Path) -> None:
    noise = tmp_path / "preview.json"
    noise.write_text("error: could not find stack cloud-test\n")
    summary = tmp_path / "summary.md"
    assert cloud_test.main(["--summary", str(summary), "no-changes", str(noise)]) == 1
    assert "No preview to judge" in summary.read_text()


def test_the_report_fails_when_any_step_failed_was_cancelled_or_never_ran() -> None:
    ok = cloud_test.report([("up", "success"), ("destroy", "success")])
    assert ok.passed
    assert not cloud_test.report([("up", "success"), ("edit", "skipped")]).passed, (
        "a check that never ran checked nothing"
    )
    assert not cloud_test.report([("up", "success"), ("smoke", "failure")]).passed
    assert not cloud_test.report([("up", "cancelled")]).passed
    assert not cloud_test.report([]).passed, "a report of nothing is no pass"


# --- the sandbox stack and the edit, offline --------------------------------------------------


def test_the_sandbox_stack_passes_the_offline_plan(tmp_path: Path) -> None:
    code = shared.main(["cloud-test", "--stack-file", str(SANDBOX)], tmp_path).code
    assert code == 0, "the weekly cloud test would deploy a stack the offline plan refuses"


def test_the_sandbox_stack_is_never_deployed_by_the_pipeline() -> None:
    from tools import stacks

    assert "cloud-test" not in {s.name for s in stacks.discover()}, (
        "deploy.yml deploys every Pulumi.<stack>.yaml at the root: the sandbox stack is not one"
    )
    config = yaml.safe_load(SANDBOX.read_text())["config"]
    assert config["gke-gpu:cluster"]["deletionProtection"] is False, (
        "the run ends with `pulumi destroy`, which a protected cluster refuses"
    )


def _inputs(config: dict[str, Any], tmp_path: Path, name: str) -> dict[str, Registration]:
    from tests.shared import render

    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return {r.urn: r for r in render(cloud_test.SANDBOX_STACK, path).recording.resources}


def test_the_workflows_config_edit_changes_only_the_workload_offline(tmp_path: Path) -> None:
    config = yaml.safe_load(SANDBOX.read_text())["config"]
    edited = copy.deepcopy(config)
    key, _, path = cloud_test.EDIT_KEY.partition("[0].")
    assert key == "gke-gpu:workloads" and path.startswith("env.")
    edited[key][0].setdefault("env", {})[path.removeprefix("env.")] = "run-13370001"
    before, after = _inputs(config, tmp_path, "before"), _inputs(edited, tmp_path, "after")
    assert sorted(before) == sorted(after), "the edit must not add or remove resources"
    changed = [urn for urn in before if before[urn].inputs != after[urn].inputs]
    assert changed, "the edit must reach the workload, or the cloud test proves nothing"
    outside = [urn for urn in changed if cloud_test.WORKLOAD_COMPONENT not in urn.split("::")[2]]
    assert not outside, f"a workload's env reaches the platform: {outside}"
    assert f"pulumi config set --path '{cloud_test.EDIT_KEY}'" in WORKFLOW.read_text(), (
        "the workflow must make the edit this test checks"
    )


# --- the workflow ---------------------------------------------------------------------------


def _steps() -> list[dict[str, Any]]:
    document: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text())
    (job,) = document["jobs"].values()
    steps: list[dict[str, Any]] = job["steps"]
    return steps


def test_the_cloud_test_runs_weekly_and_by_hand() -> None:
    triggers = yaml.safe_load(WORKFLOW.read_text())[True]  # YAML 1.1 reads `on` as True
    assert set(triggers) == {"schedule", "workflow_dispatch"}


@pytest.mark.parametrize(
    "command",
    [
        "pulumi up --yes",
        "pulumi preview --refresh --expect-no-changes",
        "python -m tools.smoke",
        "pulumi config set --path",
        "pulumi destroy --yes",
    ],
)
def test_the_cloud_test_runs_each_stage(command: str) -> None:
    assert any(command in step.get("run", "") for step in _steps()), command


def test_the_stack_is_destroyed_whatever_failed_before() -> None:
    steps = _steps()
    names = [s.get("name", "") for s in steps]
    destroy = steps[names.index("Destroy")]
    assert (
        str(destroy.get("if", "")) == "${{ always() && steps.stack.outputs.exists == 'true' }}"
    ), (
        "a failed check, or a failed takeover of a leftover stack, must not leave a GPU cluster "
        "running in the sandbox: destroy runs whenever the stack exists"
    )
    for name in ("A second up changes nothing", "Smoke test"):
        step = steps[names.index(name)]
        assert "steps.up.outcome == 'success'" in str(step.get("if", "")), (
            f"{name!r} runs whatever the check before it said, so one failure hides no other"
        )
    order = [
        next(i for i, s in enumerate(steps) if command in s.get("run", ""))
        for command in (
            "pulumi up --yes",
            "pulumi preview --refresh --expect-no-changes",
            "python -m tools.smoke",
            f"pulumi config set --path '{cloud_test.EDIT_KEY}'",
            "pulumi destroy --yes",
        )
    ]
    assert order == sorted(order), "up, second preview, smoke, edit, then destroy"
    assert "GITHUB_STEP_SUMMARY" in steps[-1].get("run", ""), "the report comes last"


# --- the sandbox identity -----------------------------------------------------------------------


def test_the_sandbox_identity_needs_no_grant_that_only_exists_after_a_run_began() -> None:
    """Each run creates a cluster and destroys it: a right granted by hand once the cluster or a
    node account exists (an RBAC binding, actAs on an account the run made) is never there in
    time, and `pulumi up` stops with a 403 every week."""
    from tools import iam_roles, permissions, stacks

    deployment = stacks.ci_deployment(SANDBOX)
    assert deployment is not None and deployment.fresh_cluster
    plan = shared.render(cloud_test.SANDBOX_STACK, SANDBOX)
    needs = permissions.required(plan.recording, deployment)
    assert not [n for n in needs if n.role == iam_roles.KUBERNETES_RBAC], (
        "no cluster-admin binding exists in a cluster created a minute ago"
    )
    kubernetes = {n.scope for n in needs if n.permission.startswith("create ")}
    assert kubernetes == {"project acme-ml-sandbox"}, (
        "Kubernetes objects come through IAM (container.admin on the sandbox project)"
    )
    account = yaml.safe_load(SANDBOX.read_text())["config"]["gke-gpu:cluster"].get(
        "nodeServiceAccount"
    )
    assert account, "the sandbox stack must name a node account created once, by the setup"
    acted_as = {n.scope for n in needs if n.permission == "iam.serviceAccounts.actAs"}
    assert acted_as == {f"service account {account}"}
    creates = [n for n in needs if n.permission == "iam.serviceAccounts.create"]
    assert not creates, "an account the run creates is one the identity cannot act as yet"


def test_the_workflow_points_the_sandbox_stack_at_the_node_account_the_setup_creates() -> None:
    account = yaml.safe_load(SANDBOX.read_text())["config"]["gke-gpu:cluster"]["nodeServiceAccount"]
    account_id = account.split("@")[0]
    steps = {s.get("name", ""): s for s in _steps()}
    create = steps["Create the stack in the sandbox project"]["run"]
    assert (
        "pulumi config set --path 'gke-gpu:cluster.nodeServiceAccount' "
        f'"{account_id}@${{SANDBOX_PROJECT}}.iam.gserviceaccount.com"'
    ) in " ".join(create.replace("\\\n", " ").split()), (
        "the run's node account is the sandbox project's, as gcp:project is"
    )
    delivery = (ROOT / "docs" / "delivery.md").read_text()
    assert f'gcloud iam service-accounts create {account_id} --project="$SANDBOX_PROJECT"' in (
        delivery
    ), "the setup creates the account the workflow names"
    assert (
        f'SANDBOX_NODE_SA="{account_id}@${{SANDBOX_PROJECT}}.iam.gserviceaccount.com"' in delivery
    )
