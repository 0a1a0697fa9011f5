"""StackMonitoring: the stack's Cloud Monitoring dashboard and alert policies (GKE), or the same
alerts as a Prometheus rules file in a ConfigMap (an existing cluster, which has no Cloud
Monitoring of this stack).

Every chart and condition is PromQL over Managed Service for Prometheus, each metric from the
source named beside it:
- GPUs: NVIDIA dcgm-exporter's default counters `DCGM_FI_DEV_GPU_UTIL` (%) and
  `DCGM_FI_DEV_FB_USED` (MiB) (NVIDIA/dcgm-exporter@4.6.0-4.8.3:etc/default-counters.csv), which
  GKE's DCGM metrics package exports through a ClusterPodMonitoring ("Collect and view DCGM
  metrics", cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics; the cluster enables the
  package, components/platform/cluster_settings.py). In Cloud Monitoring:
  prometheus.googleapis.com/DCGM_FI_DEV_GPU_UTIL/gauge.
- Pods and replicas: GKE's kube state metrics package, `kube_pod_status_unschedulable`,
  `kube_pod_status_phase`, `kube_deployment_spec_replicas`,
  `kube_deployment_status_replicas_available`, `kube_statefulset_status_replicas_ready`
  ("Collect and view kube state metrics", cloud.google.com/kubernetes-engine/docs/how-to/
  kube-state-metrics: the tables of Pod, Deployment and StatefulSet metrics, and its sample
  query `sum(kube_pod_status_unschedulable{cluster=..., namespace=...})`).
- The model server: vLLM's `vllm:num_requests_waiting`, `vllm:num_requests_running`,
  `vllm:time_to_first_token_seconds` (histogram) and `vllm:request_success` (counter, label
  `finished_reason`: stop, length, abort, ...) (vllm-project/vllm vllm/v1/metrics/loggers.py),
  scraped where a PodMonitoring selects the server: the Autoscaler's, or this component's for
  every other vLLM server on GKE.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import yaml

from components.config import NAMESPACE, ClusterConfig, StackConfig
from components.config.rules import names
from components.facts.labels import MANAGED_BY_LABEL, PART_OF_LABEL, PRODUCTION_CLUSTER_LABEL
from components.manifest import manifest
from components.platform import Platform, scales_on_metric, scraped
from components.service.autoscaler import pod_monitoring
from components.service.cost import Hourly, hourly

# Cloud Monitoring evaluates a PromQL condition at this interval (PrometheusQueryLanguageCondition
# evaluationInterval; the API's default is 30s, a minute is plenty for alerts lasting minutes).
EVALUATION_INTERVAL = "60s"
# Window of the error rate: long enough that one aborted request among few is not a 100% spike.
RATE_WINDOW = "5m"
ERROR_SECONDS = 600
"""The error rate stays above its threshold this long before the alert fires."""
# vLLM's finish reasons that are not an answer (FinishReason in vllm/v1/engine/__init__.py:
# stop, length, abort; newer releases add error).
FAILED_REASONS = "abort|error"
# The rules file of an existing cluster, named after the program (its config namespace; a name
# no workload may take, components/config/rules/names.py).
RULES_CONFIG_MAP = names.ALERT_RULES_CONFIG_MAP
RULES_FILE = f"{RULES_CONFIG_MAP}.rules.yaml"


@dataclass(frozen=True)
class Alert:
    """One alert: a PromQL expression that fires while it returns a series for `seconds`."""

    key: str
    """Its role in resource names: `{component}-alert-{key}`."""
    title: str
    query: str
    seconds: int
    threshold: str
    """The condition in words, for the plan's summary and the policy's documentation."""
    why: str


def matchers(config: StackConfig, *, namespace: bool = True) -> str:
    """The label matchers that keep a query to this stack: its cluster (Managed Prometheus'
    `cluster` resource label, GKE only) and the workloads' namespace."""
    parts = []
    if isinstance(config.cluster, ClusterConfig):
        parts.append(f'cluster="{config.cluster.name}"')
    if namespace:
        parts.append(f'namespace="{config.namespace}"')
    return ",".join(parts)


def error_rate(stack: str, window: str = RATE_WINDOW) -> str:
    """PromQL: the percentage of vLLM's finished requests that ended without an answer."""
    served = f"vllm:request_success_total{{{stack}}}"
    failed = f'vllm:request_success_total{{{stack},finished_reason=~"{FAILED_REASONS}"}}'
    return f"100 * sum(rate({failed}[{window}])) / sum(rate({served}[{window}]))"


def alerts(config: StackConfig) -> list[Alert]:
    """The three alerts, with the stack's thresholds."""
    m = config.monitoring
    gpus = matchers(config, namespace=False)  # GKE's DCGM exporter runs in its own namespace
    stack = matchers(config)
    return [
        Alert(
            "gpu-idle",
            "GPU idle at full price",
            f"max_over_time(DCGM_FI_DEV_GPU_UTIL{{{gpus}}}[5m]) < 1",
            m.gpu_idle_seconds,
            f"a GPU under 1% utilisation for {m.gpu_idle_seconds}s while its node runs "
            "(monitoring.gpuIdleSeconds)",
            "A GPU node is billed by the hour whether or not it computes: lower the pool's "
            "minNodes or replicas, or let the model sleep when idle (autoscale.minReplicas: 0).",
        ),
        Alert(
            "errors",
            "Model server error rate",
            f"{error_rate(stack)} > {m.error_rate_percent}",
            ERROR_SECONDS,
            f"more than {m.error_rate_percent}% of requests aborted or failed over "
            f"{RATE_WINDOW}, for {ERROR_SECONDS}s (monitoring.errorRatePercent)",
            "Requests end without an answer (vLLM finished_reason abort or error): look at the "
            "server's logs and its GPU memory.",
        ),
        Alert(
            "pending",
            "Pods waiting for GPU capacity",
            f"sum(kube_pod_status_unschedulable{{{stack}}}) > 0",
            m.pending_seconds,
            f"a pod of namespace {config.namespace} unschedulable for {m.pending_seconds}s "
            "(monitoring.pendingSeconds)",
            "No node can take the pod: GPU quota, a zone out of GPUs (stockout) or a pool at "
            "maxNodes (docs/getting-gpus.md, docs/troubleshooting.md).",
        ),
    ]


# --- the dashboard ------------------------------------------------------------------------------
# Field names of the Dashboards API (monitoring.googleapis.com/v1 projects.dashboards: Dashboard
# displayName/mosaicLayout, MosaicLayout columns/tiles, Tile xPos/yPos/width/height/widget,
# Widget title/xyChart/text, XyChart dataSets/yAxis, DataSet timeSeriesQuery/plotType/
# legendTemplate, TimeSeriesQuery prometheusQuery/unitOverride, Text content/format, Axis
# label/scale; cloud.google.com/monitoring/dashboards/api-examples shows each in use).
COLUMNS = 48
TILE_WIDTH, TILE_HEIGHT = 24, 16


def _chart(
    title: str, axis: str, unit: str, series: list[tuple[str | None, str]]
) -> dict[str, Any]:
    """A line chart of PromQL series. `unit` is written as MetricDescriptor.unit is (UCUM: `%`,
    `MiBy`, `s`, `1`), the format TimeSeriesQuery.unitOverride takes (google.monitoring.dashboard.v1
    TimeSeriesQuery reference); `axis` is the words on the y axis. A series grouped by labels has
    no legend of its own: the chart names each line by its labels."""
    return {
        "title": title,
        "xyChart": {
            "dataSets": [
                {
                    "timeSeriesQuery": {"prometheusQuery": query, "unitOverride": unit},
                    "plotType": "LINE",
                    **({"legendTemplate": legend} if legend else {}),
                }
                for legend, query in series
            ],
            "yAxis": {"label": axis, "scale": "LINEAR"},
        },
    }


def _text(title: str, content: str) -> dict[str, Any]:
    return {"title": title, "text": {"content": content, "format": "MARKDOWN"}}


def cost_text(estimate: Hourly | None) -> str:
    """The plan's hourly estimate, for the dashboard beside the GPU charts."""
    if estimate is None:
        return "Not priced: this stack does not buy the cluster's nodes."
    unknown = (
        f" ({estimate.unknown} item(s) without a price in the table left out)"
        if estimate.unknown
        else ""
    )
    return (
        f"**Estimated cost**, {estimate.region} list prices of {estimate.price_date}: "
        f"**${estimate.idle:,.2f}/h** idle, **${estimate.max:,.2f}/h** at maximum scale"
        f"{unknown}. The same estimate as `python -m tools.render <stack>`; disks, load "
        "balancers, egress and discounts not included."
    )


def charts(config: StackConfig) -> list[dict[str, Any]]:
    """The widgets, in reading order: what the GPUs do and cost, then what the servers do."""
    gpus, stack = matchers(config, namespace=False), matchers(config)
    window = RATE_WINDOW
    ttft = f"vllm:time_to_first_token_seconds_bucket{{{stack}}}"
    return [
        _chart(
            "GPU utilisation",
            "% of time busy",
            "%",
            [(None, f"max by (instance, gpu) (DCGM_FI_DEV_GPU_UTIL{{{gpus}}})")],
        ),
        _chart(
            "GPU memory used",
            "MiB",
            "MiBy",
            [(None, f"max by (instance, gpu) (DCGM_FI_DEV_FB_USED{{{gpus}}})")],
        ),
        _text("Hourly cost", cost_text(hourly(config))),
        _chart(
            "Replicas: wanted and available",
            "replicas",
            "1",
            [
                (None, f"sum by (deployment) (kube_deployment_spec_replicas{{{stack}}})"),
                (
                    None,
                    f"sum by (deployment) (kube_deployment_status_replicas_available{{{stack}}})",
                ),
                (None, f"sum by (statefulset) (kube_statefulset_status_replicas_ready{{{stack}}})"),
            ],
        ),
        _chart(
            "Pods waiting for capacity",
            "pods",
            "1",
            [
                ("unschedulable", f"sum(kube_pod_status_unschedulable{{{stack}}})"),
                ("Pending", f'sum(kube_pod_status_phase{{{stack},phase="Pending"}})'),
            ],
        ),
        _chart(
            "vLLM queue",
            "requests",
            "1",
            [
                ("waiting", f"sum(vllm:num_requests_waiting{{{stack}}})"),
                ("running", f"sum(vllm:num_requests_running{{{stack}}})"),
            ],
        ),
        _chart(
            "Time to first token",
            "seconds",
            "s",
            [
                (f"p{q}", f"histogram_quantile(0.{q}, sum by (le) (rate({ttft}[{window}])))")
                for q in (50, 95)
            ],
        ),
        _chart(
            "Requests aborted or failed",
            "% of finished requests",
            "%",
            [("error rate", error_rate(stack, window))],
        ),
        _text("Alerts", alerts_text(config)),
    ]


def alerts_text(config: StackConfig) -> str:
    if not config.monitoring.alerts:
        return "Alerts are off (monitoring.alerts: false)."
    return "\n".join(f"- **{a.title}**: {a.threshold}" for a in alerts(config))


def dashboard(config: StackConfig) -> dict[str, Any]:
    """The dashboard's JSON (Dashboard.dashboardJson): two tiles a row.

    A position of 0 is left out: the Dashboards API omits zero-valued tile positions from what
    it returns, so a 0 sent would differ from the state read back on every refresh
    (terraform-provider-google resource_monitoring_dashboard.go,
    stripMonitoringDashboardZeroTilePositions: "The API omits zero-valued tile positions")."""
    tiles = []
    for i, widget in enumerate(charts(config)):
        position = {"xPos": (i % 2) * TILE_WIDTH, "yPos": (i // 2) * TILE_HEIGHT}
        tiles.append(
            {
                **{key: value for key, value in position.items() if value},
                "width": TILE_WIDTH,
                "height": TILE_HEIGHT,
                "widget": widget,
            }
        )
    return {
        "displayName": display_name(config, "GPUs, replicas, queue and cost"),
        "mosaicLayout": {"columns": COLUMNS, "tiles": tiles},
    }


def display_name(config: StackConfig, what: str) -> str:
    return f"gke-gpu {config.stack} ({config.cluster.name}): {what}"


# --- existing clusters: a Prometheus rules file --------------------------------------------------


def prometheus_rules(config: StackConfig) -> dict[str, Any]:
    """The alerts as a Prometheus rules file (prometheus.io/docs/prometheus/latest/configuration/
    alerting_rules: groups[].rules[] with alert, expr, for, labels, annotations)."""
    return {
        "groups": [
            {
                "name": f"{NAMESPACE}-{config.stack}",
                "rules": [
                    {
                        "alert": _camel(a.key),
                        "expr": a.query,
                        "for": f"{a.seconds}s",
                        "labels": {"severity": "warning"},
                        "annotations": {
                            "summary": a.title,
                            "description": f"{a.threshold}. {a.why}",
                        },
                    }
                    for a in alerts(config)
                ],
            }
        ]
    }


def _camel(key: str) -> str:
    return "GkeGpu" + "".join(part.capitalize() for part in key.split("-"))


# --- the component -------------------------------------------------------------------------------


@dataclass(frozen=True)
class StackMonitoringArgs:
    platform: Platform


class StackMonitoring(pulumi.ComponentResource):
    """The dashboard, alert policies and email channels (GKE), or the rules ConfigMap (existing)."""

    dashboard: pulumi.Output[str] | None
    """The dashboard's id; None without one."""
    alert_policies: list[pulumi.Output[str]]
    """The alert policies' resource names (projects/P/alertPolicies/ID)."""

    def __init__(
        self, name: str, args: StackMonitoringArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:StackMonitoring", name, None, opts)
        platform = args.platform
        config = platform.config
        self.dashboard, self.alert_policies = None, []
        if isinstance(config.cluster, ClusterConfig):
            self._scrape(name, platform)
            self._cloud_monitoring(name, config)
        elif config.monitoring.alerts:
            self._rules(name, platform)
        self.register_outputs({"dashboard": self.dashboard, "alert_policies": self.alert_policies})

    def _cloud_monitoring(self, name: str, config: StackConfig) -> None:
        child = pulumi.ResourceOptions(parent=self)
        m = config.monitoring
        if m.dashboard:
            self.dashboard = gcp.monitoring.Dashboard(
                f"{name}-dashboard",
                project=config.project,
                dashboard_json=json.dumps(dashboard(config), sort_keys=True),
                opts=child,
            ).id
        if not m.alerts:
            return
        emailed = [
            gcp.monitoring.NotificationChannel(
                # The address itself: unique (rules/monitoring.py refuses a repeat, in any case),
                # and a slug of it could make two addresses one resource.
                f"{name}-email-{address.lower()}",
                project=config.project,
                type="email",
                display_name=f"gke-gpu {config.stack}: {address}",
                labels={"email_address": address},
                opts=child,
            ).name
            for address in m.emails
        ]
        channels = [*m.notification_channels, *emailed]
        for alert in alerts(config):
            self.alert_policies.append(
                gcp.monitoring.AlertPolicy(
                    f"{name}-alert-{alert.key}",
                    **alert_policy_args(config, alert),
                    notification_channels=channels,
                    opts=child,
                ).name
            )

    def _scrape(self, name: str, platform: Platform) -> None:
        """A PodMonitoring for each vLLM server no Autoscaler scrapes already (the namespace
        admits the collectors to its port: components/platform/__init__.py scraped)."""
        for w in scraped(platform.config):
            if scales_on_metric(w):
                continue  # its Autoscaler's PodMonitoring scrapes it
            pod_monitoring(
                f"{name}-podmonitoring-{w.name}",
                w,
                platform.namespace.name,
                pulumi.ResourceOptions(parent=self, providers=[platform.cluster.provider]),
            )

    def _rules(self, name: str, platform: Platform) -> None:
        config = platform.config
        k8s.core.v1.ConfigMap(
            f"{name}-rules",
            metadata=manifest(
                {
                    "name": RULES_CONFIG_MAP,
                    "namespace": platform.namespace.name,
                    "labels": {PART_OF_LABEL: NAMESPACE, MANAGED_BY_LABEL: "pulumi"},
                }
            ),
            data={RULES_FILE: yaml.safe_dump(prometheus_rules(config), sort_keys=False)},
            opts=pulumi.ResourceOptions(parent=self, providers=[platform.cluster.provider]),
        )


def alert_policy_args(config: StackConfig, alert: Alert) -> dict[str, Any]:
    """An AlertPolicy's inputs (pulumi-gcp 10.2.0 monitoring.AlertPolicy, one
    condition_prometheus_query_language condition), without its notification channels."""
    return {
        "project": config.project,
        "display_name": display_name(config, alert.title),
        "combiner": "OR",
        "severity": "WARNING",
        "conditions": [
            {
                "display_name": alert.threshold,
                "condition_prometheus_query_language": {
                    "query": alert.query,
                    "duration": f"{alert.seconds}s",
                    "evaluation_interval": EVALUATION_INTERVAL,
                    # The metrics exist only once a GPU node, a kube-state sample or a vLLM
                    # server has reported: a new stack's policy must not be refused before.
                    "disable_metric_validation": True,
                },
            }
        ],
        "documentation": {
            "content": f"{alert.threshold}.\n\n{alert.why}",
            "mime_type": "text/markdown",
        },
        # The production marker, as on the cluster (the policy pack's
        # alerts-notify-someone-in-prod reads it).
        "user_labels": {
            "stack": _label(config.stack),
            "managed-by": "pulumi",
            **({PRODUCTION_CLUSTER_LABEL: "true"} if config.production else {}),
        },
    }


def _label(text: str) -> str:
    """A Cloud Monitoring user label value: lowercase letters, digits, `_` and `-`, 63 at most."""
    return re.sub(r"[^a-z0-9_-]", "-", text.lower())[:63]
