"""StackMonitoring: the stack's Cloud Monitoring dashboard and alert policies (GKE), or the same
alerts as a Prometheus rules file in a ConfigMap (an existing cluster, which has no Cloud
Monitoring of this stack).

Every chart and condition is PromQL over Managed Service for Prometheus
(components/service/monitoring_queries.py names each metric's source; the dashboard's tiles are
components/service/dashboard.py). On GKE this component also adds a PodMonitoring for every vLLM
server no Autoscaler scrapes; each gate's own is its ApiGate's (components/service/gate_metrics.py).
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

from ..config import NAMESPACE, ClusterConfig, StackConfig
from ..config.rules import names
from ..config.sleep import scales_on_metric
from ..facts.labels import MANAGED_BY_LABEL, PART_OF_LABEL, PRODUCTION_CLUSTER_LABEL
from ..manifest import manifest
from ..platform import Platform, scraped
from .autoscaler import pod_monitoring
from .dashboard import dashboard, display_name
from .monitoring_queries import Alert, alerts

# Cloud Monitoring evaluates a PromQL condition at this interval (PrometheusQueryLanguageCondition
# evaluationInterval; the API's default is 30s, a minute is plenty for alerts lasting minutes).
EVALUATION_INTERVAL = "60s"
# The rules file of an existing cluster, named after the program (its config namespace; a name
# no workload may take, components/config/rules/names.py).
RULES_CONFIG_MAP = names.ALERT_RULES_CONFIG_MAP
RULES_FILE = f"{RULES_CONFIG_MAP}.rules.yaml"


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
                f"{name}-podmonitoring-{w.spec.name}",
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


__all__ = [
    "RULES_CONFIG_MAP",
    "RULES_FILE",
    "StackMonitoring",
    "StackMonitoringArgs",
    "alert_policy_args",
    "alerts",
    "dashboard",
    "prometheus_rules",
]
