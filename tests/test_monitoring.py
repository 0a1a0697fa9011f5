"""The stack's dashboard and alerts (components/service/monitoring.py): what the engine receives,
checked against the pulumi-gcp schema and the Dashboards API's field names, and the config rules
of `gke-gpu:monitoring`."""

from __future__ import annotations

import copy
import inspect
import json
from typing import Any

import pytest
import yaml
from pulumi_gcp.monitoring import _inputs as monitoring_inputs
from pulumi_gcp.monitoring import alert_policy, notification_channel
from pydantic.alias_generators import to_camel

from components.config import ConfigError, StackConfig, load
from components.service import cost
from components.service import monitoring as monitor
from tests import shared
from tests.conftest import CONFIG_MAP, MINIMAL, ROOT, Run, stack_config
from tools import gcp_schema, render, summary
from tools.engine import Recording, Registration

DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
CHANNEL = "gcp:monitoring/notificationChannel:NotificationChannel"
POD_MONITORING = "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
KUBEADM = ROOT / "examples" / "Pulumi.kubeadm.yaml"
CHANNEL_NAME = "projects/acme-ml-test/notificationChannels/4711"


def _config(**monitoring: Any) -> StackConfig:
    raw = {"monitoring": monitoring} if monitoring else {}
    return load(raw, project=MINIMAL["gcp:project"], region="us-central1", stack="t")


def _problems(raw: dict[str, Any]) -> list[str]:
    try:
        load(raw, project=MINIMAL["gcp:project"], region="us-central1", stack="t")
    except ConfigError as error:
        return error.problems
    return []


def _dashboard(recording: Recording) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(recording.one(DASHBOARD).inputs["dashboardJson"])
    return document


def _queries(document: dict[str, Any]) -> list[str]:
    return [
        data_set["timeSeriesQuery"]["prometheusQuery"]
        for tile in document["mosaicLayout"]["tiles"]
        for data_set in tile["widget"].get("xyChart", {}).get("dataSets", [])
    ]


# --- what dev and prod register -------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_gke_stack_gets_a_dashboard_and_three_alert_policies(
    stack: str, dev: Recording, prod: Recording
) -> None:
    recording = {"dev": dev, "prod": prod}[stack]
    (component,) = recording.of_type("gke-gpu:index:StackMonitoring")
    assert recording.one(DASHBOARD).parent == component.urn, (
        f"{stack}: the dashboard lives in the StackMonitoring component, deleted with the stack"
    )
    policies = {r.name: r for r in recording.of_type(ALERT_POLICY)}
    assert sorted(policies) == [
        "monitoring-alert-errors",
        "monitoring-alert-gpu-idle",
        "monitoring-alert-pending",
    ], f"{stack}: an idle GPU, failing requests and pods waiting for GPUs each page someone"
    project = stack_config(stack)["gcp:project"]
    for policy in policies.values():
        assert policy.inputs["project"] == project, "created in the stack's own project"
        assert policy.parent == component.urn


def test_the_dashboard_json_uses_only_the_dashboards_apis_field_names(dev: Recording) -> None:
    document = _dashboard(dev)
    text = dev.one(DASHBOARD).inputs["dashboardJson"]
    assert list(gcp_schema.dashboard_problems(text, "dashboard")) == [], (
        "an unknown field makes dashboards.create refuse the whole dashboard"
    )
    columns = document["mosaicLayout"]["columns"]
    for tile in document["mosaicLayout"]["tiles"]:
        assert tile.get("xPos", 0) + tile["width"] <= columns, (
            "a tile wider than the grid is refused"
        )
        assert 0 not in (tile.get("xPos"), tile.get("yPos")), (
            "the API returns no zero positions: a 0 sent would show a diff on every refresh"
        )


def test_every_chart_unit_is_a_metric_descriptor_unit(dev: Recording) -> None:
    units = {
        data_set["timeSeriesQuery"]["unitOverride"]
        for tile in _dashboard(dev)["mosaicLayout"]["tiles"]
        for data_set in tile["widget"].get("xyChart", {}).get("dataSets", [])
    }
    assert units <= {"%", "MiBy", "s", "1"}, (
        f"{units}: unitOverride takes MetricDescriptor.unit's UCUM form (MiBy, not MiB)"
    )


def test_the_plans_check_finds_a_field_the_dashboards_api_lacks() -> None:
    text = json.dumps(
        {
            "displayName": "d",
            "mosaicLayout": {
                "tiles": [
                    {"widget": {"xyChart": {"dataSets": [{"timeSeriesQuery": {"promql": "up"}}]}}}
                ]
            },
        }
    )
    assert list(gcp_schema.dashboard_problems(text, "d")) == [
        "d.mosaicLayout.tiles[0].widget.xyChart.dataSets[0].promql: not a field of the "
        "Dashboards API's timeSeriesQuery"
    ], "a misspelt field must fail the offline plan, not the first `pulumi up`"


def test_the_dashboard_charts_gpus_replicas_queue_first_token_and_errors(dev: Recording) -> None:
    queries = " ".join(_queries(_dashboard(dev)))
    for metric in (
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "kube_deployment_status_replicas_available",
        "kube_pod_status_unschedulable",
        "vllm:num_requests_waiting",
        "vllm:num_requests_running",
        "vllm:time_to_first_token_seconds_bucket",
        "vllm:request_success_total",
    ):
        assert metric in queries, f"the dashboard must chart {metric} (docs/monitoring.md)"
    for query in _queries(_dashboard(dev)):
        assert 'cluster="gpu-dev"' in query, (
            f"{query}: every chart keeps to the stack's own cluster, not the project's others"
        )


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_dashboard_shows_the_plans_hourly_cost(
    stack: str, dev: Recording, prod: Recording
) -> None:
    from components.config import from_stack_file
    from components.config.source import read_stack_file

    config = from_stack_file(read_stack_file(ROOT / f"Pulumi.{stack}.yaml"), stack)
    stack_cost = cost.stack_cost(config)
    assert stack_cost is not None
    idle, peak = stack_cost.total("idle", "configured")[0], stack_cost.total("max", "configured")[0]
    texts = [
        tile["widget"]["text"]["content"]
        for tile in _dashboard({"dev": dev, "prod": prod}[stack])["mosaicLayout"]["tiles"]
        if "text" in tile["widget"]
    ]
    assert any(f"${idle:,.2f}/h" in t and f"${peak:,.2f}/h" in t for t in texts), (
        f"{stack}: the dashboard shows the same idle and maximum $/h the offline plan prints"
    )


# --- the alert policies against the provider's schema --------------------------------------------


def _input_names(cls: type) -> set[str]:
    """The camelCase input names of a pulumi-gcp Args class (what the engine receives)."""
    names = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
    return {to_camel(n) for n in names if n not in ("__self__", "self")}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_alert_policy_uses_inputs_the_pulumi_gcp_schema_has(
    stack: str, dev: Recording, prod: Recording
) -> None:
    recording = {"dev": dev, "prod": prod}[stack]
    assert gcp_schema.problems(recording) == [], (
        f"{stack}: an input pulumi-gcp does not have is refused or dropped at `pulumi up`"
    )
    for policy in recording.of_type(ALERT_POLICY):
        (condition,) = policy.inputs["conditions"]
        promql = condition["conditionPrometheusQueryLanguage"]
        assert set(promql) <= _input_names(
            monitoring_inputs.AlertPolicyConditionConditionPrometheusQueryLanguageArgs
        )
        assert promql["duration"].endswith("s") and promql["query"], policy.name
        assert promql["disableMetricValidation"] is True, (
            "a new project has no DCGM or vLLM series yet: with validation on, Cloud Monitoring "
            "would refuse the policy before the first GPU node reports"
        )


def test_the_plans_check_finds_a_condition_input_pulumi_gcp_lacks(dev: Recording) -> None:
    policy = copy.deepcopy(dev.of_type(ALERT_POLICY)[0].inputs)
    policy["conditions"][0]["conditionPrometheusQueryLanguage"]["for"] = "60s"
    found = list(gcp_schema.input_problems(policy, alert_policy.AlertPolicyArgs, "p"))
    assert found == [
        "p.conditions[0].conditionPrometheusQueryLanguage.for: pulumi-gcp's "
        "AlertPolicyConditionConditionPrometheusQueryLanguageArgs has no such input"
    ], "Prometheus' `for` is `duration` in Cloud Monitoring: the plan must say so"


def test_alert_thresholds_and_durations_come_from_the_config() -> None:
    config = _config(gpuIdleSeconds=7200, errorRatePercent=12, pendingSeconds=1800)
    by_key = {a.key: a for a in monitor.alerts(config)}
    assert by_key["gpu-idle"].seconds == 7200, "the idle GPU may run as long as configured"
    assert by_key["errors"].query.endswith("> 12"), "the error alert fires above the set share"
    assert by_key["pending"].seconds == 1800
    assert "kube_pod_status_unschedulable" in by_key["pending"].query
    assert 'namespace="gke-gpu"' in by_key["pending"].query, (
        "only the stack's own pods count, not the cluster's system pods"
    )


def test_emails_become_channels_and_every_channel_is_notified(run: Run) -> None:
    recording = run(
        {
            **MINIMAL,
            "gke-gpu:monitoring": {
                "notificationChannels": [CHANNEL_NAME],
                "emails": ["oncall@example.com"],
            },
        }
    )
    (channel,) = recording.of_type(CHANNEL)
    assert channel.name == "monitoring-email-oncall@example.com", (
        "one channel per address, named by it: reordering the list replaces nothing"
    )
    assert channel.inputs["type"] == "email"
    assert channel.inputs["labels"] == {"email_address": "oncall@example.com"}, (
        "the email channel type's one label (gcloud beta monitoring channel-descriptors "
        "describe email)"
    )
    assert not set(channel.inputs) - _input_names(notification_channel.NotificationChannelArgs)
    for policy in recording.of_type(ALERT_POLICY):
        channels = policy.inputs["notificationChannels"]
        assert CHANNEL_NAME in channels, "a channel named in the config is notified"
        assert channel.outputs["name"] in channels, "the address given is emailed"


def test_monitoring_off_registers_no_dashboard_alert_or_scrape(run: Run) -> None:
    recording = run({**MINIMAL, "gke-gpu:monitoring": {"dashboard": False, "alerts": False}})
    for type_ in (DASHBOARD, ALERT_POLICY, CHANNEL, POD_MONITORING):
        assert not recording.of_type(type_), f"{type_}: monitoring is off"


def test_every_vllm_server_is_scraped_and_only_the_collectors_are_admitted(prod: Recording) -> None:
    scrape = prod.named("monitoring-podmonitoring-llm")
    assert scrape.inputs["metadata"]["name"] == "llm", (
        "prod's fixed-size server has no autoscaler: the dashboard's queue and error charts need "
        "a PodMonitoring of their own"
    )
    policy = next(r for r in prod.of_type(NETWORK_POLICY) if r.name == "namespace-scrape-llm")
    (rule,) = policy.inputs["spec"]["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": 8000}], (
        "default-deny ingress would starve the scrape: only the metrics port opens, to gmp-system"
    )


# --- existing clusters ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kubeadm() -> render.Plan:
    return shared.render("kubeadm", KUBEADM)


def _rules(registration: Registration) -> dict[str, Any]:
    text = registration.inputs["data"][monitor.RULES_FILE]
    rules: dict[str, Any] = yaml.safe_load(text)
    return rules


def test_an_existing_cluster_gets_the_alerts_as_a_prometheus_rules_file(
    kubeadm: render.Plan,
) -> None:
    recording = kubeadm.recording
    for type_ in (DASHBOARD, ALERT_POLICY, CHANNEL):
        assert not recording.of_type(type_), (
            "an existing cluster has no Cloud Monitoring of this stack: nothing is created there"
        )
    (config_map,) = [r for r in recording.of_type(CONFIG_MAP) if r.name == "monitoring-rules"]
    assert config_map.inputs["metadata"]["name"] == monitor.RULES_CONFIG_MAP
    (group,) = _rules(config_map)["groups"]
    assert [rule["alert"] for rule in group["rules"]] == [
        "GkeGpuGpuIdle",
        "GkeGpuErrors",
        "GkeGpuPending",
    ], "the same three alerts as on GKE, for the cluster's own Prometheus"
    for rule in group["rules"]:
        assert set(rule) == {"alert", "expr", "for", "labels", "annotations"}, (
            "Prometheus' alerting rule fields only, or the rules file fails to load"
        )
        assert "cluster=" not in rule["expr"], (
            "a Prometheus of your own has no Managed Prometheus `cluster` label to match"
        )


# --- config rules ------------------------------------------------------------------------------


def test_bad_channel_names_and_addresses_are_all_refused_with_their_key_paths() -> None:
    problems = _problems(
        {
            "monitoring": {
                "notificationChannels": ["1234", CHANNEL_NAME, "projects/p/alertPolicies/1"],
                "emails": ["oncall", "ok@example.com"],
            }
        }
    )
    paths = [p.split(":", 1)[0] for p in problems]
    assert paths == [
        "monitoring.notificationChannels[0]",
        "monitoring.notificationChannels[2]",
        "monitoring.emails[0]",
    ], "every malformed entry is reported at once, by its own index"
    assert all("projects/PROJECT/notificationChannels/ID" in p for p in problems[:2]), (
        "the message shows the form a channel's resource name takes"
    )


def test_an_existing_cluster_refuses_channels_it_could_not_notify() -> None:
    problems = _problems(
        {"cluster": {"mode": "existing", "context": "lab"}, "monitoring": {"emails": ["a@b.io"]}}
    )
    assert [p.split(":", 1)[0] for p in problems] == ["monitoring.emails"], (
        "an existing cluster's alerts go to its own Alertmanager, not to Cloud Monitoring"
    )
    assert "Alertmanager" in problems[0]


def test_a_secret_in_monitoring_is_refused_without_showing_it() -> None:
    with pytest.raises(ConfigError, match=r"monitoring\.emails\[0\]: a secret") as error:
        load(
            {"monitoring": {"emails": ["hidden@example.com"]}},
            project=MINIMAL["gcp:project"],
            region="us-central1",
            stack="t",
            secret_keys=frozenset({"monitoring"}),
            secure_paths=frozenset({"monitoring.emails[0]"}),
        )
    assert "hidden@example.com" not in str(error.value), (
        "an address is not a secret: stored with --secret it is refused, and never echoed"
    )


def test_monitoring_is_on_by_default_with_the_documented_thresholds() -> None:
    m = _config().monitoring
    assert (m.dashboard, m.alerts) == (True, True), "a stack is watched unless it says otherwise"
    assert (m.gpu_idle_seconds, m.error_rate_percent, m.pending_seconds) == (3600, 5, 900)


# --- the plan ------------------------------------------------------------------------------------


def test_the_plan_lists_the_dashboard_and_each_alert_with_its_threshold() -> None:
    plan = shared.render("dev")
    assert plan.config is not None
    text = summary.summary("dev", plan.config, plan.recording, plan.outputs)
    assert "  monitoring dashboard 'gke-gpu dev (gpu-dev): GPUs, replicas, queue and cost'" in text
    for alert in monitor.alerts(plan.config):
        assert f"              {alert.title}: {alert.threshold}" in text, (
            "a reviewer sees every alert and when it fires before `pulumi up`"
        )
    for role in ("roles/monitoring.dashboardEditor", "roles/monitoring.alertPolicyEditor"):
        assert f"{role} on project acme-ml-dev" in text, (
            "the deploy identity's Monitoring roles show in the plan before CI's 403"
        )
