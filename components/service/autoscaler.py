"""Autoscaler: a workload's replicas follow its server's queue (HPA on a Prometheus metric)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .. import slices
from ..config import WorkloadConfig
from ..facts.labels import selector_labels, workload_labels
from ..manifest import manifest

# Managed Service for Prometheus scrapes pods a PodMonitoring selects (monitoring.googleapis.com/v1;
# CRD: GoogleCloudPlatform/prometheus-engine charts/operator/crds/
# monitoring.googleapis.com_podmonitorings.yaml, vendored in tools/crds). vLLM serves /metrics on
# its API port; every 15 s as Google's vLLM PodMonitoring does (GoogleCloudPlatform/
# accelerated-platforms use-cases/inferencing/serving/vllm/metrics/manifests/pod-monitoring.yaml
# at 9320f3b2). The port is named: GpuWorkload names the container port "http".
METRICS_PATH = "/metrics"
SCRAPE_INTERVAL = "15s"
METRICS_PORT = "http"


def external_metric_name(metric: str) -> str:
    """How the Custom Metrics Stackdriver Adapter names a Managed Prometheus gauge for an HPA:
    prometheus.googleapis.com|vllm:num_requests_waiting|gauge (accelerated-platforms
    use-cases/inferencing/serving/vllm/autoscaling/manifests/hpa-vllm-openai-queue-size.yaml at
    9320f3b2). Only gauges: GKE's custom-metrics tutorial requires "The Prometheus metric must be
    of type Gauge"."""
    return f"prometheus.googleapis.com|{metric}|gauge"


def pod_monitoring(
    name: str, w: WorkloadConfig, namespace: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    """Managed Service for Prometheus scrapes the server's /metrics (the HPA's metric, the
    dashboard's and the alerts' series)."""
    return k8s.apiextensions.CustomResource(
        name,
        api_version="monitoring.googleapis.com/v1",
        kind="PodMonitoring",
        metadata=manifest(
            {"name": w.spec.name, "namespace": namespace, "labels": workload_labels(w.spec.name)}
        ),
        spec=manifest(pod_monitoring_spec(w)),
        opts=opts,
    )


def pod_monitoring_spec(w: WorkloadConfig) -> dict[str, Any]:
    return {
        # What serves the metric: a group's leader (its workers run no API server).
        "selector": {
            "matchLabels": slices.kind_of(w).serving_selector(selector_labels(w.spec.name))
        },
        "endpoints": [{"port": METRICS_PORT, "path": METRICS_PATH, "interval": SCRAPE_INTERVAL}],
    }


def hpa_spec(w: WorkloadConfig) -> dict[str, Any]:
    """autoscaling/v2: the average of the metric over the workload's pods, against the target."""
    scale, metric = w.spec.autoscale, w.autoscale_metric
    assert scale is not None and metric is not None
    return {
        # The kind's scale subresource: a LeaderWorkerSet's scales whole groups, and its
        # status.hpaPodSelector names the leaders (kubernetes-sigs/lws v0.8.0
        # pkg/controllers/leaderworkerset_controller.go lines 500-513: name and worker-index 0).
        "scaleTargetRef": slices.kind_of(w).scale_target(w),
        "minReplicas": scale.min_replicas,
        "maxReplicas": scale.max_replicas,
        "metrics": [
            {
                "type": "Pods",
                "pods": {
                    "metric": {"name": external_metric_name(metric)},
                    "target": {"type": "AverageValue", "averageValue": str(scale.target)},
                },
            }
        ],
    }


@dataclass(frozen=True)
class AutoscalerArgs:
    namespace: pulumi.Input[str]
    workload: WorkloadConfig
    after: Sequence[pulumi.Resource] = ()
    """The metrics adapter's API registrations, which the HPA reads its metric through."""


class Autoscaler(pulumi.ComponentResource):
    """A PodMonitoring that scrapes the workload's server metric and an HPA that scales on it."""

    name: pulumi.Output[str]
    """The HorizontalPodAutoscaler's name."""

    def __init__(
        self, name: str, args: AutoscalerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:Autoscaler", name, None, opts)
        w = args.workload
        if w.spec.autoscale is None:
            raise ValueError("AutoscalerArgs.workload has no autoscale settings")
        metadata = {
            "name": w.spec.name,
            "namespace": args.namespace,
            "labels": workload_labels(w.spec.name),
        }
        pod_monitoring(
            f"{name}-podmonitoring", w, args.namespace, pulumi.ResourceOptions(parent=self)
        )
        hpa = k8s.autoscaling.v2.HorizontalPodAutoscaler(
            f"{name}-hpa",
            metadata=manifest(metadata),
            spec=manifest(hpa_spec(w)),
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.after)),
        )
        self.name = hpa.metadata.name
        self.register_outputs({"name": self.name})
