"""The pipeline can reach prod safely: discovered stacks, identities per environment, the policy
pack's environment before every run, a pinned CLI and a destroy that stops before protected
resources."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from tools import stacks

WORKFLOWS = ROOT / ".github" / "workflows"


def _workflow(name: str) -> dict[str, Any]:
    # PyYAML reads the `on:` key as True (YAML 1.1); only the jobs matter here.
    document: dict[str, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    return document


def _steps(name: str) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(job_name, job.get("steps", [])) for job_name, job in _workflow(name)["jobs"].items()]


def _all_steps() -> list[tuple[str, str, int, dict[str, Any]]]:
    return [
        (path.name, job, i, step)
        for path in sorted(WORKFLOWS.glob("*.yml"))
        for job, steps in _steps(path.name)
        for i, step in enumerate(steps)
    ]


# --- stacks ------------------------------------------------------------------------------------


def test_the_stacks_are_every_stack_file_split_by_protection() -> None:
    found = stacks.outputs(stacks.discover())
    assert found == {
        "all": '["dev","prod"]',
        "unprotected": '["dev"]',
        "protected": '["prod"]',
    }, "dev deploys first; prod (deletion protection, production) waits for it and approval"


@pytest.mark.parametrize(
    ("cluster", "protected"),
    [
        (None, True),
        ({"deletionProtection": False}, False),
        ({"deletionProtection": False, "production": True}, True),
        ({"mode": "existing", "context": "kind"}, False),
    ],
    ids=["defaults-protect", "unprotected", "production-marker", "existing-cluster"],
)
def test_a_new_stack_file_is_picked_up_and_classified(
    cluster: dict[str, Any] | None, protected: bool, tmp_path: Path
) -> None:
    config: dict[str, Any] = {"gcp:project": "acme-ml-test", "gcp:region": "us-central1"}
    if cluster is not None:
        config["gke-gpu:cluster"] = cluster
    (tmp_path / "Pulumi.staging.yaml").write_text(yaml.safe_dump({"config": config}))
    assert stacks.discover(tmp_path) == [stacks.Stack("staging", protected)], (
        "adding a stack is adding its file: no workflow lists stacks"
    )


def test_a_stack_file_name_the_workflows_cannot_use_is_refused(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.Prod_EU.yaml").write_text("config: {}\n")
    with pytest.raises(ValueError, match="Pulumi.Prod_EU.yaml: stack names are"):
        stacks.discover(tmp_path)


def test_no_workflow_names_a_stack() -> None:
    for path in sorted(WORKFLOWS.glob("*.yml")):
        text = path.read_text()
        assert not re.search(r"stack-name:\s*(dev|prod)\b", text), path.name
        assert not re.search(r"environment:\s*(dev|prod)\b", text), path.name
        assert "options:" not in text, f"{path.name}: a fixed list of stacks to choose from"
    assert "tools.stacks" in (WORKFLOWS / "deploy.yml").read_text()
    assert "tools.stacks" in (WORKFLOWS / "pull-request.yml").read_text()


# --- identities --------------------------------------------------------------------------------


PREVIEWS = {"preview": "pulumi-preview.yml", "preview-protected": "pulumi-preview-protected.yml"}


def test_previews_use_the_read_only_identity_of_a_preview_environment() -> None:
    for job_name, workflow in PREVIEWS.items():
        preview = (WORKFLOWS / workflow).read_text()
        assert "vars.GCP_PREVIEW_SERVICE_ACCOUNT" in preview
        assert "vars.GCP_SERVICE_ACCOUNT" not in preview, (
            "a pull request's code must never run with the deploy identity"
        )
        job = _workflow("pull-request.yml")["jobs"][job_name]
        assert job["with"]["environment"] == "${{ matrix.stack }}-preview"
        assert job["uses"] == f"./.github/workflows/{workflow}"


def test_pull_requests_preview_only_unprotected_stacks() -> None:
    job = _workflow("pull-request.yml")["jobs"]["preview"]
    assert job["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.check.outputs.unprotected) }}"
    assert "github.event_name == 'pull_request'" in job["if"], (
        "a pull request's own code may decrypt only an unprotected stack's secrets"
    )


def test_protected_stacks_are_previewed_only_in_the_merge_queue() -> None:
    workflow = _workflow("pull-request.yml")
    # PyYAML reads `on:` as True (YAML 1.1).
    triggers: dict[Any, Any] = yaml.safe_load((WORKFLOWS / "pull-request.yml").read_text())
    assert "merge_group" in triggers[True], "the merge queue must run the protected previews"
    job = workflow["jobs"]["preview-protected"]
    assert job["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.check.outputs.protected) }}"
    assert "github.event_name == 'merge_group'" in job["if"]
    assert "pull_request" not in job["if"], (
        "a protected stack's preview decrypts its secrets: never with a pull request's own code"
    )
    assert "pull-requests" not in job["permissions"]
    (inner,) = _workflow("pulumi-preview-protected.yml")["jobs"].values()
    assert "pull-requests" not in inner["permissions"], (
        "a job that can decrypt a protected stack needs no channel to post on pull requests"
    )
    guard = inner["steps"][0]
    assert guard["env"]["EVENT"] == "${{ github.event_name }}"
    assert '"$EVENT" != "merge_group"' in guard["run"] and "exit 1" in guard["run"]
    for name, other in _workflow("pull-request.yml")["jobs"].items():
        if name != "preview-protected":
            assert other.get("uses") != "./.github/workflows/pulumi-preview-protected.yml", name


def test_deploys_use_the_deploy_identity_of_the_stacks_environment_without_pr_rights() -> None:
    up = (WORKFLOWS / "pulumi-up.yml").read_text()
    assert "vars.GCP_SERVICE_ACCOUNT" in up and "vars.GCP_PREVIEW_SERVICE_ACCOUNT" not in up
    for name, job in _workflow("pulumi-up.yml")["jobs"].items():
        assert "pull-requests" not in job["permissions"], f"{name}: deploys need no PR rights"
    for name in ("unprotected", "protected"):
        job = _workflow("deploy.yml")["jobs"][name]
        assert job["with"]["environment"] == "${{ matrix.stack }}"


def test_protected_stacks_deploy_only_after_the_unprotected_ones() -> None:
    protected = _workflow("deploy.yml")["jobs"]["protected"]
    assert "unprotected" in protected["needs"]
    assert "needs.unprotected.result == 'success'" in protected["if"]


def test_the_deploy_identity_acts_only_as_the_node_service_account() -> None:
    delivery = (ROOT / "docs" / "delivery.md").read_text()
    grants = re.findall(r"add-iam-policy-binding[^\n]*\n(?:[^\n]*\\\n)*[^\n]*", delivery)
    user = [g for g in grants if "roles/iam.serviceAccountUser" in g]
    node_accounts = (
        'add-iam-policy-binding "$NODE_SA"',
        'add-iam-policy-binding "$SANDBOX_NODE_SA"',
    )
    assert user and all(g.startswith(node_accounts) for g in user), (
        "serviceAccountUser on the project would let the deploy identity act as every account"
    )
    iam_admin = [g for g in grants if "DEPLOY_SA" in g and "projectIamAdmin" in g]
    assert iam_admin and all("--condition-from-file=deploy-grants.yaml" in g for g in iam_admin), (
        "autoscale and a stack-made node account need project IAM bindings (403 from CI "
        "without); the condition limits the deploy identity to granting exactly those roles"
    )
    assert "attribute.environment/${STACK}" in delivery, "bound to its own environment only"
    assert "nodeServiceAccount:" in (ROOT / "Pulumi.prod.yaml").read_text()


def _delivery() -> str:
    return (ROOT / "docs" / "delivery.md").read_text()


def _commands(verb: str) -> list[str]:
    return re.findall(rf"{verb}[^\n]*\n(?:[^\n]*\\\n)*[^\n]*", _delivery())


def test_no_protected_preview_identity_decrypts_outside_the_merge_queue() -> None:
    delivery = _delivery()
    # The deploy and preview identities' grants (the GKE service agent's grant on the cluster's
    # Secret-encryption key is another key, for another principal).
    keys = [
        k
        for k in _commands("gcloud kms keys add-iam-policy-binding")
        if "DEPLOY_SA" in k or "PREVIEW_SA" in k
    ]
    own_key = 'gcloud kms keys add-iam-policy-binding "pulumi-secrets-${STACK}"'
    assert keys and all(k.startswith(own_key) for k in keys), (
        "every identity decrypts its own stack's key only"
    )
    decrypter = [k for k in keys if "PREVIEW_SA" in k]
    assert len(decrypter) == 1 and "roles/cloudkms.cryptoKeyDecrypter" in decrypter[0]
    trust = re.search(
        r'if \[ "\$PROTECTED" = true \]; then\n(.*?)\nelse\n(.*?)\nfi', delivery, re.DOTALL
    )
    assert trust and '"$PREVIEW_SA"' in trust.group(1), (
        "the preview identity's trust, by stack kind"
    )
    protected, unprotected = trust.group(1), trust.group(2)
    assert "attribute.queued_environment/${STACK}-preview" in protected
    assert "attribute.environment/" not in protected, (
        "a protected stack's preview identity must not trust pull requests' tokens"
    )
    assert "attribute.environment/${STACK}-preview" in unprotected
    mapping = re.search(r"attribute\.queued_environment=([^\"]*)", delivery)
    assert mapping, "the provider must map queued_environment"
    assert "assertion.event_name == 'merge_group'" in mapping.group(1)
    assert "assertion.ref.startsWith('refs/heads/gh-readonly-queue/main/')" in mapping.group(1), (
        "the token's own claims, not only the environment's branch rule, admit the merge queue"
    )
    assert "-f name='gh-readonly-queue/main/*' -f type=branch" in delivery


def test_state_grants_reach_only_the_stacks_own_prefix() -> None:
    delivery = _delivery()
    condition = re.search(
        r'cat > "state-\$\{STACK\}.yaml" <<YAML\n(.*?)\nYAML', delivery, re.DOTALL
    )
    assert condition, "docs/delivery.md must write the state condition"
    assert (
        'resource.name.startsWith("projects/_/buckets/${BUCKET}/objects/${STACK}/")'
        in condition.group(1)
    )
    objects = [
        g
        for g in _commands("gcloud storage buckets add-iam-policy-binding")
        if "roles/storage.object" in g
    ]
    assert objects and all('--condition-from-file="state-${STACK}.yaml"' in g for g in objects), (
        "an unconditioned object role on the bucket reads every stack's state"
    )
    assert 'pulumi login "gs://${BUCKET}/${STACK}"' in delivery


def test_every_pulumi_run_uses_its_stacks_own_state_prefix() -> None:
    prefix = "gs://${{ vars.PULUMI_STATE_BUCKET }}/${{ inputs.stack }}"
    runs = [
        (workflow, job, step)
        for workflow, job, _, step in _all_steps()
        if str(step.get("uses", "")).startswith("pulumi/actions@") and "command" in step["with"]
    ]
    assert len(runs) == 2, "protected preview and up"
    for workflow, job, step in runs:
        assert step["with"]["cloud-url"] == prefix, f"{workflow}/{job}: the stack's own prefix"
    destroy = _workflow("destroy.yml")["jobs"]["destroy"]
    assert destroy["env"]["PULUMI_BACKEND_URL"] == prefix
    (preview,) = [
        step
        for workflow, _, _, step in _all_steps()
        if workflow == "pulumi-preview.yml" and "pulumi preview" in step.get("run", "")
    ]
    assert preview["env"]["PULUMI_BACKEND_URL"] == prefix, "the pull request's preview too"


def test_stack_files_name_their_own_secrets_key() -> None:
    assert re.search(r'KMS_KEY="[^"]*/cryptoKeys/pulumi-secrets-\$\{STACK\}"', _delivery())
    for path in sorted(ROOT.glob("Pulumi.*.yaml")):
        stack = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
        provider = yaml.safe_load(path.read_text()).get("secretsprovider")
        if provider is not None:
            assert provider.startswith("gcpkms://"), path.name
            assert provider.endswith(f"/cryptoKeys/pulumi-secrets-{stack}"), (
                f"{path.name}: a key shared between stacks lets one stack's identities decrypt "
                "another's secrets"
            )


# --- every run ---------------------------------------------------------------------------------


def test_every_policy_pack_run_has_its_environment_created_first() -> None:
    jobs = [(p.name, j, s) for p in sorted(WORKFLOWS.glob("*.yml")) for j, s in _steps(p.name)]
    for workflow, job, steps in jobs:
        names = [step.get("name", "") for step in steps]
        for i, step in enumerate(steps):
            if "policyPacks" in (step.get("with") or {}) or "--policy-pack" in step.get("run", ""):
                before = names[:i]
                assert any("Policy pack environment" in n for n in before), (
                    f"{workflow}/{job}: `--policy-pack policy` needs policy/.venv"
                )
                setup = next(s for s in steps if "Policy pack environment" in s.get("name", ""))
                assert "uv sync --frozen --inexact" in setup["run"]
                assert 'UV_PROJECT_ENVIRONMENT="$PWD/.venv"' in setup["run"], (
                    "the same venv Pulumi's uv toolchain uses (PulumiPolicy.yaml virtualenv)"
                )
                assert any("setup-uv" in str(s.get("uses", "")) for s in steps[:i]), (
                    "Pulumi's uv toolchain needs uv on PATH"
                )


def test_every_policy_pack_run_gets_the_stacks_policy_config() -> None:
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for name, job in _workflow(path.name)["jobs"].items():
            steps = job.get("steps", [])
            for i, step in enumerate(steps):
                cli = "--policy-pack policy" in step.get("run", "")
                if "policyPacks" not in (step.get("with") or {}) and not cli:
                    continue
                config = (
                    "--policy-pack-config policy-config.json" in step["run"]
                    if cli
                    else step["with"]["policyPackConfigs"] == "policy-config.json"
                )
                assert config, (
                    f"{path.name}/{name}: the pack runs without the stack's production marker"
                )
                assert any(
                    'python -m tools.stacks policy-config "$STACK" > policy-config.json'
                    in s.get("run", "")
                    for s in steps[:i]
                ), f"{path.name}/{name}: policy-config.json is written before the run"
                assert job["env"]["GKE_GPU_PRODUCTION"] == "${{ vars.GKE_GPU_PRODUCTION }}", (
                    f"{path.name}/{name}: the environment's marker reaches tools.stacks"
                )
    delivery = _delivery()
    for environment in ('"$STACK"', '"${STACK}-preview"'):
        assert (
            f'gh variable set GKE_GPU_PRODUCTION --repo "$GITHUB_REPO" --env {environment} '
            "--body true"
        ) in delivery


def test_every_pulumi_cli_is_the_pinned_one_the_sdk_matches() -> None:
    pinned = (ROOT / ".pulumi-version").read_text().strip()
    # The library declares a range (pyproject.toml); the program runs the SDK uv.lock pins.
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    sdk = next(p["version"] for p in lock["package"] if p["name"] == "pulumi")
    assert sdk == pinned, (
        f"the CLI ({pinned}) and the SDK uv.lock pins ({sdk}) are released together: keep them "
        "equal"
    )
    uses = [
        (workflow, job, step)
        for workflow, job, _, step in _all_steps()
        if str(step.get("uses", "")).startswith("pulumi/actions@")
    ]
    assert uses, "the workflows must install Pulumi through pulumi/actions"
    for workflow, job, step in uses:
        assert step["with"].get("pulumi-version-file") == ".pulumi-version", (
            f"{workflow}/{job}: an unpinned CLI changes under the pipeline"
        )


def test_destroy_stops_on_protected_resources_and_previews_before_deleting() -> None:
    steps = dict(_steps("destroy.yml"))["destroy"]
    names = [s.get("name", "") for s in steps]
    guard = names.index("Stop if the state holds protected resources")
    preview = names.index("Preview the destroy")
    destroy = names.index("Destroy")
    assert guard < preview < destroy, "nothing is deleted before both checks pass"
    assert "pulumi destroy --preview-only" in steps[preview]["run"]
    assert ".protect == true" in steps[guard]["run"] and "deletionProtection" in steps[guard]["run"]
    assert "exit 1" in steps[guard]["run"]


def test_the_bootstrap_grants_a_given_node_account_every_role_the_program_would() -> None:
    from components.platform.cluster import IMAGE_STREAMING_ROLE, NODE_ROLES

    delivery = (ROOT / "docs" / "delivery.md").read_text()
    for role in (*NODE_ROLES, IMAGE_STREAMING_ROLE):
        assert re.search(rf'--member="serviceAccount:\$\{{NODE_SA\}}" --role={role}\b', delivery), (
            f"a node account created by the bootstrap lacks {role}: the program binds none for it"
        )


def test_code_owners_review_what_decides_production() -> None:
    """The pull request's own code runs the policy pack and `tools.stacks policy-config`: a
    change to them, to a stack file or to a workflow must need the owners' review."""
    owners = (ROOT / ".github" / "CODEOWNERS").read_text()
    patterns = {line.split()[0] for line in owners.splitlines() if line and line[0] != "#"}
    for needed in ("/policy/", "/tools/stacks.py", "/Pulumi.*.yaml", "/.github/"):
        assert needed in patterns, f"CODEOWNERS must cover {needed}: it decides production"
    assert "Require review from Code Owners" in _delivery(), (
        "CODEOWNERS only binds when the ruleset requires code-owner review; the docs must say so"
    )


# --- which stacks CI deploys -------------------------------------------------------------------


def test_the_stacks_ci_deploys_are_the_root_stack_files_and_the_sandbox(tmp_path: Path) -> None:
    dev = stacks.ci_deployment(ROOT / "Pulumi.dev.yaml")
    prod = stacks.ci_deployment(ROOT / "Pulumi.prod.yaml")
    sandbox = stacks.ci_deployment(ROOT / stacks.SANDBOX_STACK_FILE)
    assert dev == stacks.Deployment("deploy.yml", "on every push to main", False, False), (
        "deploy.yml runs `pulumi up` on every root stack file; dev's environment has no reviewer"
    )
    assert prod is not None and prod.reviewed, "prod is protected: its reviewers approve each up"
    assert sandbox is not None and sandbox.workflow == "cloud-test.yml" and sandbox.fresh_cluster
    for path in (ROOT / "examples" / "Pulumi.kubeadm.yaml", tmp_path / "Pulumi.dev.yaml"):
        assert stacks.ci_deployment(path) is None, f"{path}: no workflow deploys it"
    cloud_test = (WORKFLOWS / "cloud-test.yml").read_text()
    assert f'cp {stacks.SANDBOX_STACK_FILE} "Pulumi.${{STACK}}.yaml"' in cloud_test, (
        "cloud-test.yml deploys the sandbox file tools.stacks names: the plan's warnings follow it"
    )
    assert "python -m tools.stacks" in (WORKFLOWS / "deploy.yml").read_text()


# --- what a pull request's code can reach -------------------------------------------------------


def _writes(permissions: dict[str, str]) -> set[str]:
    return {scope for scope, level in permissions.items() if level == "write"}


def test_no_job_that_runs_a_pull_requests_code_holds_a_token_that_writes() -> None:
    """The preview runs the pull request's program, policy pack and locked dependencies: a
    GITHUB_TOKEN that can write (comment, push, label) must not be readable there."""
    for name, job in _workflow("pulumi-preview.yml")["jobs"].items():
        assert _writes(job["permissions"]) <= {"id-token"}, (
            f"pulumi-preview.yml/{name} runs the pull request's code with {job['permissions']}"
        )
    caller = _workflow("pull-request.yml")["jobs"]["preview"]
    assert _writes(caller["permissions"]) <= {"id-token"}, (
        "the preview caller's permissions cap the called workflow's: no pull-requests: write"
    )


def test_the_preview_comment_is_posted_by_a_job_that_runs_no_pull_request_code() -> None:
    jobs = _workflow("pull-request.yml")["jobs"]
    comment = jobs["comment"]
    assert comment["permissions"] == {"pull-requests": "write"}, "the comment, and nothing else"
    assert comment["needs"] == "preview"
    uses = [str(step.get("uses", "")) for step in comment["steps"] if "uses" in step]
    assert all(u.startswith("actions/download-artifact@") for u in uses), (
        f"the comment job checks out nothing and runs no action of the pull request: {uses}"
    )
    scripts = " ".join(step.get("run", "") for step in comment["steps"])
    for command in ("python", "uv ", "pulumi ", "bash ", "./", "source "):
        assert command not in scripts, f"the comment job must run no repository code: {command!r}"
    assert comment["steps"][-1]["env"]["PR"] == "${{ github.event.pull_request.number }}"
    (preview,) = [j for j in _workflow("pulumi-preview.yml")["jobs"].values()]
    upload = next(s for s in preview["steps"] if "upload-artifact" in str(s.get("uses", "")))
    assert upload["with"]["name"] == "preview-${{ inputs.stack }}"
    assert comment["steps"][0]["with"]["pattern"] == "preview-*", "every stack's preview"
    writers = [n for n, j in jobs.items() if "pull-requests" in (j.get("permissions") or {})]
    assert writers == ["comment"], f"only the comment job may write to pull requests: {writers}"


def test_the_guide_says_what_a_pull_request_can_read_and_protects_its_environment() -> None:
    delivery = _delivery()
    assert "## What a pull request can read" in delivery
    unprotected = re.search(
        r"# Unprotected stack: pull requests preview it.*?\n\s*"
        r'(gh api -X PUT "repos/\$\{GITHUB_REPO\}/environments/\$\{STACK\}-preview" '
        r"--input - <<JSON\n.*?\nJSON)",
        delivery,
        re.DOTALL,
    )
    assert unprotected, "the unprotected stack's preview environment is created with reviewers"
    assert '"prevent_self_review": true' in unprotected.group(1)
    assert '"reviewers": [{"type": "Team", "id": ${REVIEWERS_TEAM_ID}}]' in unprotected.group(1), (
        "without required reviewers any branch push decrypts the stack's secrets in a preview"
    )
    row = next(
        line
        for line in delivery.splitlines()
        if line.startswith("| `<stack>-preview` of an unprotected")
    )
    assert "**Required reviewers**" in row


# --- code owners ------------------------------------------------------------------------------

SECURITY_BOUNDARY = (
    "components/service/gate.py",
    "components/service/gate_pod.py",
    "components/service/haproxy.py",
    "components/service/haproxy_keys.py",
    "components/service/haproxy_limits.py",
    "components/service/haproxy_syntax.py",
    "components/service/haproxy_routing.py",
    "components/service/apikey.py",
    "components/service/load_balancer.py",
    "components/expose/load_balancer.py",
    "components/expose/gateway.py",
    "components/expose/base.py",
    "components/platform/cloud_armor.py",
    "components/platform/gateway_name.py",
    "components/platform/egress.py",
    "components/platform/namespace.py",
    "components/platform/fence.py",
    "components/platform/keda.py",
    "components/platform/keda_fence.py",
    "components/platform/keda_accounts.py",
    "components/platform/kueue.py",
    "components/platform/kueue_fence.py",
    "components/platform/lws.py",
    "components/platform/lws_fence.py",
    "components/platform/vendor/keda",
    "components/platform/vendor/kueue",
    "components/platform/vendor/lws",
    "components/config/rules/exposure.py",
    "components/config/rules/endpoints.py",
    "components/config/rules/credentials.py",
    "components/config/rules/production.py",
    "components/serve/settle.py",
    "provider/__main__.py",
    "uv.lock",
    "pyproject.toml",
    "requirements.txt",
    "Pulumi.yaml",
    "Pulumi.dev.yaml",
    ".github/workflows/pulumi-preview.yml",
    ".github/workflows/deploy.yml",
    ".github/cloud-test/Pulumi.cloud-test.yaml",
    "policy/__main__.py",
    "tools/stacks.py",
    "tools/permissions.py",
    "tools/iam_roles.py",
    "docs/delivery.md",
)


def _owners(path: str) -> list[str]:
    """The owners CODEOWNERS gives `path`: its last matching pattern's (GitHub's rule), for the
    anchored patterns the file uses (`/file`, `/dir/`, `*` within one segment)."""
    owners: list[str] = []
    for line in (ROOT / ".github" / "CODEOWNERS").read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pattern, *names = line.split()
        assert pattern.startswith("/"), f"CODEOWNERS: {pattern} is not anchored at the root"
        anchored = pattern[1:]
        if anchored.endswith("/"):
            matched = path.startswith(anchored)
        else:
            regex = re.escape(anchored).replace(r"\*", "[^/]*")
            matched = re.fullmatch(regex, path) is not None
        if matched:
            owners = names
    return owners


@pytest.mark.parametrize("path", SECURITY_BOUNDARY)
def test_every_security_boundary_path_has_a_code_owner(path: str) -> None:
    assert (ROOT / path).exists(), f"{path} moved: keep this list and CODEOWNERS with it"
    assert _owners(path), (
        f"{path} has no code owner: a pull request could change it without the platform "
        "owners' review (the ruleset requires code-owner review, docs/delivery.md step 7)"
    )


def test_a_path_outside_the_boundary_has_no_owner_so_the_matcher_can_tell() -> None:
    assert not _owners("components/service/workload.py")
