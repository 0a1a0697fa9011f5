"""What Managed Service for Prometheus needs to read a gate's own count of its answers: a
PodMonitoring of the gate's pods on HAProxy's exporter port, and the NetworkPolicy that admits only
the collector pods to that port (issue 31, F2). The error alert and the dashboard's error chart
read these series (components/service/monitoring_queries.py)."""

from __future__ import annotations

from typing import Any

from ..platform.namespace import scrape_ingress
from . import haproxy
from .autoscaler import SCRAPE_INTERVAL

# The gate container's port name for the exporter (gate.py names it; the PodMonitoring scrapes it).
PORT_NAME = "metrics"


def pod_monitoring_spec(selector: dict[str, str]) -> dict[str, Any]:
    """The gate pods' exporter, every SCRAPE_INTERVAL, as the model servers are scraped
    (components/service/autoscaler.py pod_monitoring_spec)."""
    return {
        "selector": {"matchLabels": dict(selector)},
        "endpoints": [
            {"port": PORT_NAME, "path": haproxy.METRICS_PATH, "interval": SCRAPE_INTERVAL}
        ],
    }


def ingress_spec(selector: dict[str, str]) -> dict[str, Any]:
    """The exporter's port, from Managed Prometheus' collector pods only (the namespace's
    default-deny admits nothing else; the API port's own policy is the Service's)."""
    return {
        "podSelector": {"matchLabels": dict(selector)},
        "policyTypes": ["Ingress"],
        "ingress": scrape_ingress(haproxy.METRICS_PORT),
    }
