"""What gets replaced (issue 45): `python -m tools.render STACK --against OLD/plan.json` says what
`pulumi up` would create, update in place, replace (and which input forces it) or delete in a
stack deployed as the earlier plan, and a one-line verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import shared
from tests.conftest import ROOT
from tools import plan_diff, plan_verdict, render

# dev moved to its own VPC and GKE Standard, rendered as stack `dev`.
MOVED = ROOT / "tests" / "stacks" / "moves" / "Pulumi.dev.yaml"


def _document(stack_file: Path | None = None) -> dict[str, Any]:
    """A plan.json of stack dev as a user has it on disk (through JSON, as render writes it)."""
    plan = shared.render("dev", stack_file)
    return json.loads(json.dumps(render.plan_document(plan), default=str))


@pytest.fixture(scope="module")
def dev() -> dict[str, Any]:
    return _document()


@pytest.fixture(scope="module")
def moved(dev: dict[str, Any]) -> plan_diff.PlanDiff:
    return plan_diff.diff(dev, _document(MOVED))


def _change(d: plan_diff.PlanDiff, name: str) -> plan_diff.Change:
    (found,) = [c for c in d.changes if c.entry.name == name]
    return found


def test_moving_dev_to_its_own_vpc_and_standard_replaces_the_cluster_with_the_inputs_that_force_it(
    moved: plan_diff.PlanDiff,
) -> None:
    cluster = _change(moved, "gke-cluster")
    assert cluster.action == plan_diff.REPLACE, (
        "GKE cannot move a cluster to another network or out of Autopilot: the plan must say the "
        "cluster is replaced, which the user had to find by diffing two plan.json files by hand"
    )
    assert {"network", "subnetwork", "enableAutopilot"} <= set(cluster.inputs), (
        "the reviewer must see which inputs force the new cluster (terraform-provider-google's "
        f"ForceNew fields), got {cluster.inputs}"
    )


def test_a_replaced_cluster_replaces_every_kubernetes_object_in_it(
    dev: dict[str, Any], moved: plan_diff.PlanDiff
) -> None:
    provider = _change(moved, "gke-k8s")
    assert provider.action == plan_diff.REPLACE, (
        "the Kubernetes provider's kubeconfig comes from the replaced cluster: pulumi-kubernetes "
        "replaces a provider whose kubeconfig is unknown, so the plan must too"
    )
    objects = {r["urn"] for r in dev["resources"] if r["type"].startswith("kubernetes:")}
    replaced = {c.entry.urn for c in moved.of(plan_diff.REPLACE)}
    assert objects and objects <= replaced, (
        "every object in the old cluster goes with it and is applied again in the new one; the "
        f"plan leaves {len(objects - replaced)} of {len(objects)} out"
    )
    text = plan_verdict.report(moved, "build/dev/plan.json")
    assert f"replace  {len(objects)} Kubernetes objects (deployed through Kubernetes provider" in (
        text
    ), f"many objects replaced with their cluster are counted by kind, on one line:\n{text}"


def test_the_verdict_of_the_move_says_the_cluster_goes_and_every_workload_is_down(
    moved: plan_diff.PlanDiff,
) -> None:
    said = plan_verdict.verdict(moved)
    assert said.startswith("replaces the cluster gpu-dev (network, subnetwork"), (
        f"the first thing a reviewer reads must be that the whole cluster is replaced: {said!r}"
    )
    assert "every workload is down until the new cluster and its nodes are up" in said, said
    assert "the endpoint keeps its reserved address gpu-dev-llm" in said, (
        "the reserved address stands outside the cluster and is kept: clients keep the IP"
    )


def test_the_cli_prints_the_changes_against_an_earlier_plan(
    dev: dict[str, Any], tmp_path: Path
) -> None:
    earlier = tmp_path / "plan.json"
    earlier.write_text(json.dumps(dev))
    argv = ["dev", "--stack-file", str(MOVED), "--against", str(earlier)]
    printed = shared.main(argv, tmp_path / "out")
    assert printed.code == render.EXIT_OK, printed.err
    assert f"  changes   against {earlier}: 2 to create" in printed.out, printed.out
    assert "replace  Cluster gke-cluster (gpu-dev): network, subnetwork" in printed.out, (
        f"each replacement names the inputs that force it:\n{printed.out}"
    )
    assert "  verdict   replaces the cluster gpu-dev" in printed.out, printed.out


def test_the_same_stack_again_is_no_changes(dev: dict[str, Any]) -> None:
    d = plan_diff.diff(dev, render.plan_document(shared.render("dev")))
    assert plan_verdict.verdict(d) == "no changes", (
        "a plan.json read back from disk against the same stack's plan must show nothing to do, "
        f"not {[(c.action, c.entry.name, c.inputs) for c in d.changes]}"
    )
    assert d.unchanged > 50


def test_an_alert_threshold_is_updated_in_place_and_nothing_is_replaced(
    dev: dict[str, Any], tmp_path: Path
) -> None:
    config = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    config["config"]["gke-gpu:monitoring"] = {"errorRatePercent": 10}
    stack_file = tmp_path / "Pulumi.dev.yaml"
    stack_file.write_text(yaml.safe_dump(config))
    d = plan_diff.diff(dev, _document(stack_file))
    assert not d.of(plan_diff.REPLACE) and not d.of(plan_diff.DELETE), (
        "an alert threshold is an in-place update of the alert policy: nothing may be replaced, "
        f"got {[(c.action, c.entry.name, c.inputs) for c in d.changes]}"
    )
    updated = {c.entry.name: c.inputs for c in d.of(plan_diff.UPDATE)}
    assert "conditions" in updated.get("monitoring-alert-errors", []), (
        f"the error alert's condition holds the threshold: it is updated in place, got {updated}"
    )
    assert set(updated) <= {"monitoring-alert-errors", "monitoring-dashboard"}, (
        f"only the alert (and the dashboard that draws its threshold) change: {updated}"
    )
    said = plan_verdict.verdict(d)
    assert said == f"updates {len(updated)} in place; nothing is replaced or deleted", said


# --- the rules, on hand-made plans -------------------------------------------------------------

STACK = "urn:pulumi:t::gke-gpu::"


def _entry(type_: str, name: str, inputs: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": type_, "name": name, "urn": f"{STACK}{type_}::{name}", "inputs": inputs, **more}


def _plan(*resources: dict[str, Any]) -> dict[str, Any]:
    return {"stack": "t", "resources": list(resources)}


ADDRESS = "gcp:compute/address:Address"
REQUEST = "tls:index/certRequest:CertRequest"
POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"


def _address_and_dependents(address_type: str) -> dict[str, Any]:
    address = _entry(ADDRESS, "ip", {"name": "llm", "addressType": address_type})
    depends = {"dependencies": [address["urn"]]}
    request = _entry(REQUEST, "req", {"ipAddresses": ["203.0.113.20"]}, **depends)
    unrelated = _entry(POLICY, "alert", {"displayName": "errors"}, **depends)
    return _plan(address, request, unrelated)


def test_what_takes_a_value_from_a_replaced_resource_follows_it_and_a_mere_dependency_does_not():
    d = plan_diff.diff(_address_and_dependents("EXTERNAL"), _address_and_dependents("INTERNAL"))
    assert _change(d, "ip").inputs == ["addressType"]
    request = _change(d, "req")
    assert (
        request.action == plan_diff.REPLACE and "from the replaced Address ip" in request.because
    ), (
        "a certificate request for the address's IP takes the new IP: every tls input forces a "
        "new one, so it is replaced with the address"
    )
    assert [e.name for e in d.kept] == ["alert"], (
        "a resource that only waits for the address (dependsOn, no input from it) is unchanged: "
        "the engine asks the provider only about inputs that came from the replaced resource"
    )
    assert "the endpoint's address changes (Address ip (llm) released)" in (plan_verdict.verdict(d))


def test_a_protected_replacement_is_where_pulumi_up_stops():
    old = _plan(_entry(ADDRESS, "ip", {"name": "llm", "addressType": "EXTERNAL"}, protect=True))
    new = _plan(_entry(ADDRESS, "ip", {"name": "llm", "addressType": "INTERNAL"}, protect=True))
    said = plan_verdict.verdict(plan_diff.diff(old, new))
    assert said.startswith(
        "`pulumi up` stops: Address ip (llm) would be replaced but is protected"
    ), (
        "the engine refuses to replace a resource protected before and after: the verdict must "
        f"say so first, not promise a replacement: {said!r}"
    )


def test_a_resource_moved_under_an_alias_is_neither_deleted_nor_created():
    old = _plan(_entry(POLICY, "old-name", {"displayName": "errors"}))
    moved = _entry(POLICY, "new-name", {"displayName": "errors"}, aliases=[{"name": "old-name"}])
    d = plan_diff.diff(old, _plan(moved))
    assert not d.changes and d.unchanged == 1, (
        "the engine takes the old state over through the alias: nothing is deleted or created"
    )


def test_a_plan_of_another_stack_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"stack": "prod", "resources": []}))
    with pytest.raises(plan_diff.PlanFileError) as raised:
        plan_diff.read_plan(path, "dev")
    message = str(raised.value)
    assert "plan of stack 'prod', not 'dev'" in message and "--stack-file" in message, message
    assert render.main(["dev", "--against", str(path)]) == render.EXIT_CONFIG, (
        "a plan of another stack would show every resource deleted and created: refuse it"
    )
