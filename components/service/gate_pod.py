"""The gate's container: the image it runs, as whom, and how it stops without cutting an answer.

Pure values and functions; components/service/gate.py builds the pod from them.
"""

from __future__ import annotations

from typing import Any

from ..config import defaults
from ..facts.labels import HOSTNAME_LABEL
from . import gate_metrics, haproxy, haproxy_keys
from .pod import container_security_context

# The official HAProxy image (docker-library/haproxy), on the release line tests/test_gate.py runs
# (Debian bookworm's 2.6; tests/test_gate_hardening.py compares the two). The digest is the
# multi-architecture index of haproxy:2.6.34-alpine as docker-library/repo-info recorded it
# (repos/haproxy/remote/2.6.34-alpine.md at commit 0ed0a0ed, HAProxy 2.6.34 on Alpine 3.24), whose
# build history shows the user `haproxy` made with uid/gid 99, `USER haproxy`, and
# `CMD ["haproxy" "-f" "/usr/local/etc/haproxy/haproxy.cfg"]` (as docker-library/haproxy@af88bbc9
# 2.6/alpine/Dockerfile writes them). USER is a name, so the pod names a uid itself for
# runAsNonRoot to be checked: the stack's non-root default (10000 or above, no user of the node).
# HAProxy needs no user of its own: the config sets no `user`/`uid`, binds unprivileged ports and
# reads only world-readable mounts, and asks for no pidfile or socket, so nothing is written to
# the root filesystem. The same build history shows the image built with USE_PROMEX=1 (the
# exporter the metrics frontend serves) and USE_LUA=1.
IMAGE = (
    "docker.io/library/haproxy:2.6.34-alpine"
    "@sha256:b647d4156eaebaab7b38c099d77120ae7850a15868b82234306c18d5112a47f8"
)
RUN_AS = defaults.RUN_AS_USER
CONFIG_PATH = haproxy.CONFIG_DIR  # the image's CMD reads haproxy.cfg here
CERT_DIR = "/etc/gate/tls"
CERT_FILE = "gate.pem"
# Small: HAProxy forwards a few requests a second per model replica with a few MiB. Counted in
# the fit checks (the system pool in Standard) and in the cost (Autopilot bills pod requests).
CPU = "100m"
MEMORY = "128Mi"
REPLICAS = 2  # a node drain or upgrade keeps one gate serving (ApiGate's PodDisruptionBudget)

# --- stopping (issue 31, F6) ----------------------------------------------------------------------
# Kubelet stops a container through the runtime with the pod's terminationGracePeriodSeconds as
# the timeout: containerd sends the image's STOPSIGNAL (SIGTERM when the image has none), waits
# that long, then SIGKILL (containerd/containerd@06bb81cf internal/cri/server/container_stop.go,
# stopContainer; a container's own `lifecycle.stopSignal` is alpha from Kubernetes 1.33 behind the
# ContainerStopSignals gate, kubernetes/enhancements keps/sig-node/4960-container-stop-signals,
# so it is not used). The image's STOPSIGNAL is SIGUSR1 (repo-info above: "STOPSIGNAL SIGUSR1"),
# and its entrypoint starts HAProxy in master-worker mode (`haproxy -W -db ...`,
# docker-library/haproxy@ec437dd2 2.6/alpine/docker-entrypoint.sh), whose master passes SIGUSR1
# on to its worker (haproxy/haproxy@v2.6.0 src/haproxy.c: signal_register_fct(SIGUSR1,
# mworker_catch_sigterm, SIGUSR1), src/mworker.c mworker_kill). SIGUSR1 is HAProxy's graceful
# stop: "only unbinding from listening ports, but continue to process existing connections until
# they close"; SIGTERM "immediately quits and all established connections are closed"
# (doc/management.txt 2.6, section 4). tests/test_gate_lifecycle.py runs both on the real binary.
STOP_SIGNAL = "SIGUSR1"
# Before the stop signal, kubelet runs the preStop hook while the pod is already out of the
# Service's endpoints: the gate keeps accepting for these seconds, so a connection a node or load
# balancer still sends it is not refused, as KEDA's interceptor does on its own ("Delay the
# Shutdown e.g. to allow endpoint removal to be propagated to all nodes", kedacore/http-add-on
# @4ea8a863 interceptor/main.go 271-276). The hook's time counts against the grace period: "The
# Pod's termination grace period countdown begins before the PreStop hook is executed" (the
# Kubernetes API's core/v1 Lifecycle.preStop). `sleep` is busybox's, in the image's Alpine base.
PRE_STOP_SECONDS = 5
# Past the longest wait for the upstream: the answer's own bytes, the body the gate waited for.
DRAIN_MARGIN_SECONDS = 30


def termination_grace_seconds(settings: haproxy.GateSettings) -> int:
    """How long a stopping gate may keep answering: the preStop delay, its longest wait for the
    upstream (`timeout server`, which covers a wake KEDA's interceptor holds) and a margin. GKE
    gives an evicted pod up to one hour of it in an automatic node upgrade and ten minutes in a
    scale-down (GKE, "Extend the run time of Autopilot Pods", cloud.google.com/kubernetes-engine/
    docs/how-to/extended-duration-pods, "About GKE-initiated Pod eviction"); a rollout gives all
    of it."""
    return PRE_STOP_SECONDS + settings.request_timeout_seconds + DRAIN_MARGIN_SECONDS


def container(
    settings: haproxy.GateSettings,
    upstream: str,
    key: dict[str, Any] | None,
    consumer_keys: str | None = None,
) -> dict[str, Any]:
    """HAProxy with the environment its haproxy.cfg expands: where to forward, the certificate,
    (`key`, a valueFrom) the API key from the workload's Secret, and each consumer's key from the
    Secret `consumer_keys` (expose.keys)."""
    env: list[dict[str, Any]] = [{"name": haproxy.UPSTREAM_ENV, "value": upstream}]
    mounts = [{"name": "config", "mountPath": CONFIG_PATH, "readOnly": True}]
    if settings.tls:
        env.append({"name": haproxy.CERT_ENV, "value": f"{CERT_DIR}/{CERT_FILE}"})
        mounts.append({"name": "tls", "mountPath": CERT_DIR, "readOnly": True})
    if key is not None:
        env.append({"name": haproxy.KEY_ENV, "valueFrom": key})
    env += [
        {
            "name": haproxy_keys.key_env(c),
            "valueFrom": {"secretKeyRef": {"name": consumer_keys, "key": c}},
        }
        for c in (settings.consumers if consumer_keys else ())
    ]
    probe = {"httpGet": {"path": haproxy.HEALTH_PATH, "port": haproxy.HEALTH_PORT}}
    return {
        "name": "haproxy",
        "image": IMAGE,
        "env": env,
        "ports": [
            {"name": "https" if settings.tls else "http", "containerPort": settings.port},
            {"name": "health", "containerPort": haproxy.HEALTH_PORT},
            {"name": gate_metrics.PORT_NAME, "containerPort": haproxy.METRICS_PORT},
        ],
        "resources": {
            "requests": {"cpu": CPU, "memory": MEMORY},
            "limits": {"memory": MEMORY},
        },
        "securityContext": {
            **container_security_context(),
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "runAsUser": RUN_AS,
            "runAsGroup": RUN_AS,
        },
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", str(PRE_STOP_SECONDS)]}}},
        "readinessProbe": {**probe, "periodSeconds": 5},
        "livenessProbe": {**probe, "periodSeconds": 10, "failureThreshold": 3},
        "volumeMounts": mounts,
    }


def pod_spec(
    settings: haproxy.GateSettings,
    gate: dict[str, Any],
    *,
    config_map: str,
    selector: dict[str, str],
    tls_secret: str | None,
) -> dict[str, Any]:
    """The gate pod: the container, its config and certificate, spread over nodes, and time to
    finish what it holds when it stops."""
    volumes: list[dict[str, Any]] = [{"name": "config", "configMap": {"name": config_map}}]
    if tls_secret is not None:
        volumes.append({"name": "tls", "secret": {"secretName": tls_secret}})
    return {
        "automountServiceAccountToken": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": RUN_AS,
            "runAsGroup": RUN_AS,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [gate],
        "volumes": volumes,
        # A stopping gate (a rollout, a drained node) stops listening and answers what it holds,
        # a request waiting for a model to wake included (STOP_SIGNAL above).
        "terminationGracePeriodSeconds": termination_grace_seconds(settings),
        # Spread the gates over nodes, so one node going away leaves one serving.
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": HOSTNAME_LABEL,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": dict(selector)},
            }
        ],
    }
