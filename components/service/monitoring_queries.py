"""The PromQL the stack's alerts and dashboard read (components/service/monitoring.py registers
them), each metric from the source named beside it:
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
- The gates: HAProxy's Prometheus exporter (issue 31, F2), `haproxy_backend_http_responses_total`
  with labels `proxy` (the section's name) and `code` (1xx, 2xx, 3xx, 4xx, 5xx, other)
  (haproxy/haproxy@v2.6.0 addons/promex/README, "Backend metrics"; service-prometheus.c,
  promex_hrsp_code and the `code` label), scraped by the gate's own PodMonitoring
  (components/service/gate_metrics.py).
- The model server: vLLM's `vllm:num_requests_waiting`, `vllm:num_requests_running`,
  `vllm:time_to_first_token_seconds` (histogram) and `vllm:request_success` (counter, label
  `finished_reason`: stop, length, abort, ...) (vllm-project/vllm vllm/v1/metrics/loggers.py),
  scraped where a PodMonitoring selects the server: the Autoscaler's, or StackMonitoring's for
  every other vLLM server on GKE.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import ClusterConfig, StackConfig
from . import haproxy

# Window of the error rates: long enough that one failed request among few is not a 100% spike.
RATE_WINDOW = "5m"
ERROR_SECONDS = 600
"""The error rate stays above its threshold this long before the alert fires."""
# vLLM's finish reasons that are not an answer (FinishReason in vllm/v1/engine/__init__.py:
# stop, length, abort; newer releases add error).
FAILED_REASONS = "abort|error"


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
    """PromQL: the percentage of vLLM's finished requests that ended without an answer. vLLM
    counts what its engine finished: a request it refused with an HTTP error, or lost when the
    server crashed, never reaches this counter (gate_error_rate sees those)."""
    served = f"vllm:request_success_total{{{stack}}}"
    failed = f'vllm:request_success_total{{{stack},finished_reason=~"{FAILED_REASONS}"}}'
    return f"100 * sum(rate({failed}[{window}])) / sum(rate({served}[{window}]))"


def gate_error_rate(stack: str, window: str = RATE_WINDOW) -> str:
    """PromQL: the percentage of the requests the gates forwarded (or tried to) that their clients
    got a 5xx for: the server's own errors, a crashed or absent replica (502, 503), a timeout of
    the gate or of KEDA's interceptor (504). Counted by the gates' `model` backend, which also
    counts the 503s HAProxy answers itself when no server is up; requests the gate refused before
    forwarding (a wrong key, a path outside the allowlist: 4xx from the API frontend) are not in
    it, so a scanner's 401s cannot dilute the rate (tests/test_gate_metrics.py)."""
    backend = f'{stack},proxy="{haproxy.MODEL_BACKEND}"'
    answered = f"haproxy_backend_http_responses_total{{{backend}}}"
    failed = f'haproxy_backend_http_responses_total{{{backend},code="5xx"}}'
    return f"100 * sum(rate({failed}[{window}])) / sum(rate({answered}[{window}]))"


def alerts(config: StackConfig) -> list[Alert]:
    """The three alerts, with the stack's thresholds."""
    m = config.monitoring
    gpus = matchers(config, namespace=False)  # GKE's DCGM exporter runs in its own namespace
    stack = matchers(config)
    share = m.error_rate_percent
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
            "Requests failing",
            f"({gate_error_rate(stack)}) > {share} or ({error_rate(stack)}) > {share}",
            ERROR_SECONDS,
            f"more than {share}% of the requests the gates forwarded answered 5xx, or of the "
            f"vLLM servers' finished requests aborted or failed, over {RATE_WINDOW}, for "
            f"{ERROR_SECONDS}s (monitoring.errorRatePercent)",
            "Clients get errors: a 5xx from the gate means the server failed or crashed (502, "
            "503), no replica was ready (503) or an answer outlasted the gate's or KEDA's "
            "timeouts (504); vLLM's abort or error means its engine gave up. The gate's log "
            "(kubectl logs deployment/<workload>-gate) has each request's status and termination "
            "state; then look at the server's logs and GPU memory.",
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
