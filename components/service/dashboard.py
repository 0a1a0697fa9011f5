"""The stack's Cloud Monitoring dashboard: its JSON (Dashboard.dashboardJson), tile by tile, from
the queries of components/service/monitoring_queries.py and the plan's cost estimate.
components/service/monitoring.py registers it."""

from __future__ import annotations

from typing import Any

from ..config import StackConfig
from .cost import Hourly, hourly
from .monitoring_queries import (
    RATE_WINDOW,
    alerts,
    error_rate,
    gate_error_rate,
    matchers,
)

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
        *_server_charts(stack),
        _text("Alerts", alerts_text(config)),
    ]


def _server_charts(stack: str) -> list[dict[str, Any]]:
    """What the model servers do, and what their clients get."""
    window = RATE_WINDOW
    ttft = f"vllm:time_to_first_token_seconds_bucket{{{stack}}}"
    return [
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
            "Requests failing",
            "% of requests",
            "%",
            [
                ("gate: 5xx of forwarded requests", gate_error_rate(stack, window)),
                ("vLLM: aborted or failed", error_rate(stack, window)),
            ],
        ),
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
