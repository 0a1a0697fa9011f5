"""The gate's own count of what it answered (issue 31, F2): the error alert and chart that read it,
the PodMonitoring and NetworkPolicy that let Managed Prometheus scrape it (what the engine
receives), and Debian's HAProxy on the dev stack's rendered haproxy.cfg, its exporter scraped as
the collectors scrape it, with the alert's own PromQL selectors matched against what it serves.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from components.config import StackConfig, load
from components.service import haproxy
from components.service import monitoring_queries as queries
from tests import shared
from tests.conftest import ROOT, SERVICE, stack_config
from tests.test_gate import (
    HAPROXY,
    RIGHT,
    _haproxy,
    _issue,
    _named,
    _request,
    _send,
    _wait_for_port,
    free_port,
    on_ports,
)
from tests.test_gate_hardening import Running
from tools.engine import STATIC_EXTERNAL_IP, Recording

if HAPROXY is None:
    pytestmark = pytest.mark.skip(reason="haproxy not installed (apt-get install haproxy)")

WRONG = "Authorization: Bearer " + "x" * 48
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
POD_MONITORING = "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
# What Managed Prometheus adds to every series it scrapes (its target labels), not the exporter.
TARGET_LABELS = {"cluster", "namespace"}


@dataclass
class Scraped(Running):
    metrics_port: int = 0


@pytest.fixture
def down(dev: Recording, tmp_path: Path) -> Iterator[Scraped]:
    """The dev gate in front of an upstream that refuses every connection (a crashed server)."""
    api, health, metrics = free_port(), free_port(), free_port()
    config = _named(dev, "gate-llm-config")["data"]["haproxy.cfg"]
    config = on_ports(config, api, health, metrics)
    (tmp_path / "haproxy.cfg").write_text(config)
    pki = _issue(dev)
    (tmp_path / "gate.pem").write_bytes(pki.server_pem)
    refused = free_port("127.0.0.1")  # nothing listens there
    process = _haproxy(tmp_path, refused)
    try:
        _wait_for_port(api, process)
        _wait_for_port(metrics, process)
        running = Scraped(None, pki, config, STATIC_EXTERNAL_IP)  # type: ignore[arg-type]
        running.api_port, running.health_port, running.metrics_port = api, health, metrics
        yield running
    finally:
        process.terminate()
        process.wait(timeout=10)


def _get(port: int, path: str) -> tuple[int, str]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := raw.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode(errors="replace")


def _series(text: str) -> list[tuple[str, dict[str, str], float]]:
    found = []
    for line in text.splitlines():
        match = re.fullmatch(r"(\w+)\{(.*)\} (\S+)", line)
        if match:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2)))
            found.append((match.group(1), labels, float(match.group(3))))
    return found


def _selected(query: str, text: str) -> list[float]:
    """For each selector in the PromQL `query` (name{label="value",...}), the sum of the exported
    series it matches, the target labels Managed Prometheus adds left aside."""
    sums = []
    for name, matchers in re.findall(r"([a-z_:]+)\{([^}]*)\}", query):
        wanted = {k: v for k, v in re.findall(r'(\w+)="([^"]*)"', matchers)}
        wanted = {k: v for k, v in wanted.items() if k not in TARGET_LABELS}
        sums.append(
            sum(
                value
                for metric, labels, value in _series(text)
                if metric == name and all(labels.get(k) == v for k, v in wanted.items())
            )
        )
    return sums


def test_the_tested_binary_has_the_prometheus_exporter_the_image_is_built_with() -> None:
    assert HAPROXY is not None
    built = subprocess.run([HAPROXY, "-vv"], capture_output=True, text=True, check=True).stdout
    assert "Built with the Prometheus exporter as a service" in built, (
        "the metrics frontend's `use-service prometheus-exporter` needs a binary built with "
        "USE_PROMEX=1 (the deployed image is: components/service/gate_pod.py)"
    )


def test_the_exporter_counts_the_5xx_a_crashed_server_costs_its_clients(down: Scraped) -> None:
    def post(*headers: str) -> int:
        request = _request("POST", "/v1/chat/completions", *headers, body=b'{"model": "m"}')
        return _send(down, request, port=down.api_port).status

    assert post(RIGHT) == 503, "nothing listens upstream: the client gets a 503 from the gate"
    assert post(WRONG) == 401
    status, text = _get(down.metrics_port, haproxy.METRICS_PATH)
    assert status == 200, f"the exporter answers on its own port: {status}"
    failed, answered = _selected(queries.gate_error_rate('cluster="c",namespace="n"'), text)
    assert (failed, answered) == (1, 1), (
        "the error alert's own selectors find the one 5xx among the requests the gate forwarded "
        f"(the refused key is no forwarded request): failed {failed}, answered {answered}"
    )


def test_the_api_port_never_serves_the_metrics(down: Scraped) -> None:
    response = _send(down, _request("GET", haproxy.METRICS_PATH, RIGHT), port=down.api_port)
    assert response.status == 404 and b"haproxy_" not in response.body, (
        "the exporter is on a port no Service exposes; the API port answers /metrics 404 even "
        f"with the key: {response.status} {response.body[:200]!r}"
    )
    assert _get(down.metrics_port, "/")[0] == 404, "the metrics port serves /metrics alone"


# --- what the engine receives -------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_error_alert_and_chart_read_the_5xx_the_gates_answered(
    stack: str, dev: Recording, prod: Recording
) -> None:
    recording = {"dev": dev, "prod": prod}[stack]
    (errors,) = [p for p in recording.of_type(ALERT_POLICY) if p.name == "monitoring-alert-errors"]
    query = errors.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
    gate = 'haproxy_backend_http_responses_total{cluster="gpu-' + stack + '",namespace="gke-gpu"'
    assert f'{gate},proxy="model",code="5xx"}}' in query, (
        f"{stack}: vLLM never counts a request it did not finish (a 5xx of its own, a crash, a "
        "504 from KEDA's interceptor or the gate): the alert must read what the gates answered"
    )
    assert "vllm:request_success_total" in query, "and still the server's own aborts and errors"
    dashboard: dict[str, Any] = json.loads(recording.one(DASHBOARD).inputs["dashboardJson"])
    chart = next(
        tile["widget"]
        for tile in dashboard["mosaicLayout"]["tiles"]
        if tile["widget"]["title"] == "Requests failing"
    )
    charted = [d["timeSeriesQuery"]["prometheusQuery"] for d in chart["xyChart"]["dataSets"]]
    assert queries.gate_error_rate(queries.matchers(_stack(stack))) in charted, (
        "the dashboard's error chart shows the same gate series the alert reads"
    )


def _stack(stack: str) -> StackConfig:
    file = stack_config(stack)
    raw = {k.split(":", 1)[1]: v for k, v in file.items() if k.startswith("gke-gpu:")}
    return load(raw, project=file["gcp:project"], region=file["gcp:region"], stack=stack)


def test_every_gate_is_scraped_on_its_exporter_port_which_only_the_collectors_reach(
    prod: Recording,
) -> None:
    scrape = prod.named("gate-llm-podmonitoring")
    gate = prod.named("gate-llm-deployment").inputs["spec"]["template"]
    selector = scrape.inputs["spec"]["selector"]["matchLabels"]
    assert selector and set(selector.items()) <= set(gate["metadata"]["labels"].items()), (
        "the PodMonitoring selects the gate's pods"
    )
    (endpoint,) = scrape.inputs["spec"]["endpoints"]
    ports = {p["name"]: p["containerPort"] for p in gate["spec"]["containers"][0]["ports"]}
    assert ports[endpoint["port"]] == haproxy.METRICS_PORT and endpoint["path"] == "/metrics", (
        "Managed Prometheus scrapes the port HAProxy's exporter listens on"
    )
    policy = prod.named("gate-llm-metrics-scrape").inputs["spec"]
    (rule,) = policy["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": haproxy.METRICS_PORT}]
    standard, autopilot = rule["from"]
    assert standard == {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gmp-system"}},
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "collector"}},
    }, "only the collector pods reach the exporter (namespace and pods in one peer)"
    assert autopilot == {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gke-gmp-system"}}
    }, (
        "on Autopilot the collectors run in GKE's managed gke-gmp-system (issue 45): without it "
        "no gate or vLLM metric reaches Cloud Monitoring and the error alert never fires"
    )
    service_ports = [p["targetPort"] for p in prod.served(SERVICE).inputs["spec"]["ports"]]
    assert haproxy.METRICS_PORT not in service_ports, "no load balancer exposes the exporter"


def test_an_existing_cluster_registers_no_gate_podmonitoring_it_has_no_crd_for() -> None:
    operator = shared.render("operator", ROOT / "examples" / "Pulumi.operator.yaml").recording
    assert operator.of_type("gke-gpu:index:ApiGate"), "the example exposes a gated notebook"
    assert not operator.of_type(POD_MONITORING), (
        "PodMonitoring is Managed Service for Prometheus' resource, which only GKE has: an "
        "existing cluster would refuse it"
    )


def test_the_plan_says_the_gates_are_scraped_where_they_are() -> None:
    from tools import summary

    plan = shared.render("prod")
    assert plan.config is not None
    text = summary.summary("prod", plan.config, plan.recording, plan.outputs)
    scraped = plan.recording.of_type(POD_MONITORING)
    assert any(r.name == "gate-llm-podmonitoring" for r in scraped)
    assert f"scrapes the gates of llm (HAProxy's exporter, port {haproxy.METRICS_PORT}" in text, (
        "a reviewer sees that the gates are scraped, and on which port, before `pulumi up`"
    )
