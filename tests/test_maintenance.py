"""cluster.maintenance: when GKE may upgrade (and so recreate every GPU node), checked before
`pulumi up` as GKE checks it, and sent as the cluster's maintenance policy, updated in place."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.config import ConfigError, load
from tests import golden
from tests.conftest import CLUSTER, NODE_POOL, STANDARD, Run, stack_config

WEEKENDS = {
    "start": "2026-01-03T01:00:00Z",
    "end": "2026-01-03T13:00:00Z",
    "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU",
}
LAUNCH = {
    "name": "launch",
    "start": "2026-12-01T00:00:00Z",
    "end": "2026-12-15T00:00:00Z",
}


def _problems(maintenance: Any, **cluster: Any) -> list[str]:
    raw = {"cluster": {"mode": "autopilot", "maintenance": maintenance, **cluster}}
    with pytest.raises(ConfigError) as info:
        load(raw, project="acme-ml", region="us-central1", stack="t")
    return info.value.problems


def _standard(maintenance: dict[str, Any] | None = None) -> dict[str, Any]:
    config = copy.deepcopy(STANDARD)
    if maintenance is not None:
        config["gke-gpu:cluster"]["maintenance"] = maintenance
    return config


# --- what the cluster gets -----------------------------------------------------------------


def test_prod_upgrades_only_on_weekends(run: Run) -> None:
    policy = run(stack_config("prod"), stack="prod").one(CLUSTER).inputs["maintenancePolicy"]
    assert policy == {
        "recurringWindow": {
            "startTime": "2026-01-03T01:00:00Z",
            "endTime": "2026-01-03T13:00:00Z",
            "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU",
        }
    }, "a production stack's GPU nodes must not be recreated by an upgrade in business hours"


def test_a_stack_that_is_not_production_leaves_gke_its_own_schedule(run: Run) -> None:
    inputs = run(_standard()).one(CLUSTER).inputs
    assert "maintenancePolicy" not in inputs, (
        "nothing is sent unless asked: clusters deployed before this key see no diff"
    )


def test_a_window_and_its_exclusions_reach_the_cluster_as_gke_names_them(run: Run) -> None:
    freeze = {**LAUNCH, "scope": "NO_MINOR_OR_NODE_UPGRADES"}
    policy = (
        run(_standard({"window": WEEKENDS, "exclusions": [freeze]}))
        .one(CLUSTER)
        .inputs["maintenancePolicy"]
    )
    assert policy["recurringWindow"]["recurrence"] == "FREQ=WEEKLY;BYDAY=SA,SU"
    assert policy["maintenanceExclusions"] == [
        {
            "exclusionName": "launch",
            "startTime": "2026-12-01T00:00:00Z",
            "endTime": "2026-12-15T00:00:00Z",
            "exclusionOptions": {"scope": "NO_MINOR_OR_NODE_UPGRADES"},
        }
    ], "an exclusion without its scope would hold back every upgrade, security patches included"


def test_a_production_stack_keeps_its_default_window_when_it_only_adds_exclusions() -> None:
    raw = {
        key.removeprefix("gke-gpu:"): value
        for key, value in stack_config("prod").items()
        if key.startswith("gke-gpu:")
    }
    raw["cluster"] = {**raw["cluster"], "maintenance": {"exclusions": [LAUNCH]}}
    config = load(raw, project="acme-ml-prod", region="us-central1", stack="prod")
    maintenance = config.cluster.maintenance
    assert maintenance is not None and maintenance.window is not None, (
        "adding an exclusion must not drop production's weekend window"
    )
    assert [e.name for e in maintenance.exclusions] == ["launch"]


def test_changing_the_maintenance_policy_updates_the_cluster_in_place(run: Run) -> None:
    before = run(_standard()).one(CLUSTER)
    after = run(_standard({"window": WEEKENDS, "exclusions": [LAUNCH]})).one(CLUSTER)
    assert before.inputs != after.inputs
    assert golden.physical_name(before) == golden.physical_name(after), (
        "maintenance_policy is not ForceNew: a new window must never replace the cluster"
    )


def test_gpu_pools_upgrade_one_node_at_a_time_without_a_surge_node(run: Run) -> None:
    (pool,) = [r for r in run(_standard()).of_type(NODE_POOL) if r.inputs["name"] != "system"]
    assert pool.inputs["upgradeSettings"] == {
        "strategy": "SURGE",
        "maxSurge": 0,
        "maxUnavailable": 1,
    }, "a surge GPU node needs quota and stock beyond maxNodes, and the upgrade would wait for it"


def test_the_summary_prints_the_window_and_the_exclusions() -> None:
    from tools.summary_cluster import maintenance_lines

    raw = {"cluster": {"maintenance": {"window": WEEKENDS, "exclusions": [LAUNCH]}}}
    cluster = load(raw, project="acme-ml", region="us-central1", stack="t").cluster
    text = "\n".join(maintenance_lines(cluster))  # type: ignore[arg-type]
    assert "01:00-13:00 UTC, FREQ=WEEKLY;BYDAY=SA,SU" in text
    assert "launch: 2026-12-01T00:00:00Z to 2026-12-15T00:00:00Z, NO_UPGRADES" in text


# --- what GKE would refuse, found before `pulumi up` ---------------------------------------


def test_a_window_with_less_than_48_hours_in_32_days_is_refused() -> None:
    short = {**WEEKENDS, "end": "2026-01-03T05:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SA"}
    (problem,) = _problems({"window": short})
    assert problem.startswith("cluster.maintenance.window: windows of 4 hours")
    assert "16 hours in some 32 days" in problem and "48 hours" in problem


def test_windows_shorter_than_four_hours_count_for_nothing() -> None:
    daily = {**WEEKENDS, "end": "2026-01-03T04:00:00Z", "recurrence": "FREQ=DAILY"}
    (problem,) = _problems({"window": daily})
    assert "0 hours in some 32 days" in problem, (
        "GKE counts only stretches of 4 hours or more: 32 x 3 hours is not enough"
    )


def test_a_daily_four_hour_window_is_enough() -> None:
    daily = {**WEEKENDS, "end": "2026-01-03T05:00:00Z", "recurrence": "FREQ=DAILY"}
    raw = {"cluster": {"maintenance": {"window": daily}}}
    assert load(raw, project="acme-ml", region="us-central1", stack="t").cluster.maintenance


@pytest.mark.parametrize(
    ("recurrence", "why"),
    [
        ("FREQ=MONTHLY", "FREQ=DAILY or FREQ=WEEKLY"),
        ("FREQ=WEEKLY;BYDAY=SAT", "BYDAY lists days once each"),
        ("FREQ=DAILY;BYDAY=SA", "BYDAY goes with FREQ=WEEKLY"),
        ("FREQ=WEEKLY;COUNT=3", "only FREQ, INTERVAL and BYDAY"),
        ("weekends", "is not an RRULE"),
    ],
)
def test_a_recurrence_that_cannot_be_checked_is_refused(recurrence: str, why: str) -> None:
    (problem,) = _problems({"window": {**WEEKENDS, "recurrence": recurrence}})
    assert problem.startswith("cluster.maintenance.window.recurrence: ") and why in problem


def test_every_maintenance_problem_is_listed_at_once_by_key_path() -> None:
    found = _problems(
        {
            "window": {**WEEKENDS, "end": "2026-01-02T13:00:00Z"},
            "exclusions": [
                {**LAUNCH, "end": "2027-02-01T00:00:00Z"},
                {**LAUNCH, "end": "2026-11-30T00:00:00Z", "scope": "NO_MINOR_UPGRADES"},
            ],
        }
    )
    paths = [p.split(": ", 1)[0] for p in found]
    assert paths == [
        "cluster.maintenance.window.end",
        "cluster.maintenance.exclusions[0].end",
        "cluster.maintenance.exclusions[1].name",
        "cluster.maintenance.exclusions[1].end",
    ], found
    assert "NO_UPGRADES exclusion lasts at most 30 days" in found[1]
    assert "End it by 2026-12-31T00:00:00Z" in found[1], "the fix names the latest end GKE takes"


def test_exclusions_without_a_window_are_refused_outside_production() -> None:
    (problem,) = _problems({"exclusions": [LAUNCH]})
    assert problem.startswith("cluster.maintenance.window: exclusions need a window"), (
        "the Google provider refuses a maintenance policy with exclusions alone"
    )


def test_a_time_with_an_offset_is_refused_because_gke_answers_in_utc() -> None:
    (problem,) = _problems({"window": {**WEEKENDS, "start": "2026-01-03T02:00:00+01:00"}})
    assert problem.startswith("cluster.maintenance.window.start: ")
    assert "ending in Z" in problem, "GKE returns UTC: any other form diffs on every preview"


def test_an_existing_cluster_refuses_maintenance() -> None:
    found = _problems({"window": WEEKENDS}, mode="existing", context="kind-gpu")
    assert any(
        p.startswith("cluster.maintenance: configures a GKE cluster, but mode 'existing'")
        for p in found
    ), found
