"""ApiGate: the only way to a model server, an HAProxy that terminates TLS, requires the API key on
every request and forwards only the model API.

A model server's own auth is not a boundary: vLLM 0.29 checks VLLM_API_KEY on /v1, /v2,
/inference and /cohere only, and POST /invocations runs the same chat and completion handlers
without it (vllm-project/vllm#58144). The gate stands in its own Deployment on CPU nodes, not as
a sidecar in the GPU pod: it stays up while the model has no pod (a later scale-to-zero holds
requests there), it is replaced without restarting a model that took minutes to load, and it
costs a fraction of a CPU instead of taking room on a GPU node. The model's own pods admit only
the gate (and Managed Prometheus' collector pods, to the server's port, which serves the API as
well as /metrics) through a NetworkPolicy.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .. import slices
from ..config.model import WorkloadConfig
from ..config.rules.exposure import API_KEY_ENV
from ..config.sleep import sleeps
from ..facts.labels import (
    APP_INSTANCE_LABEL,
    APP_NAME_LABEL,
    GATE_CONFIG_HASH_ANNOTATION,
    GATE_NAME_LABEL,
    MANAGED_BY_LABEL,
)
from ..manifest import manifest
from ..platform import egress, keda
from . import gate_metrics, gate_pod, haproxy, scale_to_zero
from .gate_pod import CERT_FILE, REPLICAS
from .pod import secret_env_names


def gate_requires_key(w: WorkloadConfig) -> bool:
    """The gate checks the key when the workload's Secret holds one (generated, secretEnv or a
    secure env value); a key set in plain env or args is checked by the server alone."""
    return API_KEY_ENV in secret_env_names(w)


def gate_settings(w: WorkloadConfig, namespace: str) -> haproxy.GateSettings:
    """What an exposed workload's gate enforces, from its resolved expose settings. A sleeping
    model's gate forwards to KEDA's interceptor with the model's Host, and waits for it as long
    as it may hold a request (components/service/scale_to_zero.py)."""
    assert w.expose is not None
    settings = haproxy.GateSettings(
        paths=w.expose.paths,
        tls=w.expose.spec.tls,
        api_key=gate_requires_key(w),
        websockets=w.expose.spec.websockets,
        consumers=tuple(w.expose.spec.keys),
        # Behind a Gateway: Google's front ends, which alone reach the gate (its NetworkPolicy).
        front_end_ranges=slices.exposure_of(w.expose, w.spec.name).proxy_ranges,
    )
    if w.routing == "cache-aware":
        probe = w.probe
        return dataclasses.replace(
            settings,
            # One slot more than replicas: a rollout's surge pod is served as soon as it is ready.
            replicas=w.max_replicas + 1,
            health_path=probe.path if probe is not None and probe.port == w.spec.port else None,
        )
    if sleeps(w):
        return dataclasses.replace(
            settings,
            upstream_host=scale_to_zero.host(w.spec.name, namespace),
            request_timeout_seconds=scale_to_zero.gate_timeout_seconds(
                w, settings.request_timeout_seconds
            ),
        )
    return settings


def gate_selector(workload: str) -> dict[str, str]:
    """The labels of a workload's gate pods; never a superset of a workload's own selector
    (workload.selector_labels), so neither selects the other's pods."""
    return {APP_NAME_LABEL: GATE_NAME_LABEL, APP_INSTANCE_LABEL: workload}


def model_service_name(workload: str) -> str:
    """The ClusterIP Service the gate forwards to: the model pods' port, inside the cluster."""
    return f"{workload}-model"


def replicas_service_name(workload: str) -> str:
    """The headless Service whose DNS records name each ready replica: a cache-aware gate's."""
    return f"{workload}-replicas"


def upstream(args: ApiGateArgs, namespace: str) -> str:
    """Where the gate forwards: KEDA's interceptor (a sleeping model), every replica (cache-aware
    routing, found in DNS), or the model's Service."""
    if args.via_interceptor:
        return keda.interceptor_address()
    service = (
        replicas_service_name(args.workload)
        if args.settings.replicas
        else model_service_name(args.workload)
    )
    return f"{service}.{namespace}.svc.cluster.local:{args.model_port}"


@dataclass(frozen=True)
class ApiGateArgs:
    workload: str
    namespace: pulumi.Input[str]
    model_selector: dict[str, str]
    """The model pods' labels (GpuWorkload.selector)."""
    model_port: int
    settings: haproxy.GateSettings
    key_secret: pulumi.Input[str | None] | None = None
    """The workload's Secret holding VLLM_API_KEY: the key the gate requires."""
    key_name: str = "VLLM_API_KEY"
    pem: pulumi.Input[str] | None = None
    """Certificate and key for TLS (secret); required when settings.tls."""
    cert_pem: pulumi.Input[str] | None = None
    """The server certificate (public): a new one rolls the gates, which read it at start."""
    labels: dict[str, str] = field(default_factory=dict)
    via_interceptor: bool = False
    """A sleeping model: the gate forwards to KEDA's interceptor, which holds requests while a
    replica starts (settings.upstream_host names the model to it)."""
    consumer_keys: dict[str, pulumi.Input[str]] = field(default_factory=dict)
    """expose.keys: each consumer's key (secret), which the gate accepts instead of the
    workload's own; kept in a Secret of their own (consumer_keys_secret_name)."""
    scraped: bool = False
    """Managed Service for Prometheus reads the gate's own metrics (GKE with monitoring on): a
    PodMonitoring of its pods, and their exporter port opened to the collector pods only."""


def model_ingress(workload: str, port: int, via_interceptor: bool = False) -> list[dict[str, Any]]:
    """Who reaches the model server's port: the gate's pods only, or for a sleeping model KEDA's
    interceptor, which the gate forwards through. Kubelet's probes still pass ("traffic to and
    from the node where a Pod is running is always allowed", kubernetes.io "Network Policies");
    Managed Prometheus' collector pods are admitted to the server's port by the namespace's own
    policy (WorkloadNamespace), policies being additive."""
    peer = (
        egress.interceptor_peer()
        if via_interceptor
        else {"podSelector": {"matchLabels": gate_selector(workload)}}
    )
    return [{"from": [peer], "ports": [{"protocol": "TCP", "port": port}]}]


def consumer_keys_secret_name(workload: str) -> str:
    """The Secret holding each consumer's key (expose.keys), one data key per consumer name."""
    return f"{workload}-gate-keys"


def gate_container(args: ApiGateArgs, namespace: str) -> dict[str, Any]:
    key = (
        {"secretKeyRef": {"name": args.key_secret, "key": args.key_name}}
        if args.settings.api_key
        else None
    )
    consumers = consumer_keys_secret_name(args.workload) if args.settings.consumers else None
    return gate_pod.container(args.settings, upstream(args, namespace), key, consumers)


def gate_pod_spec(args: ApiGateArgs, namespace: str, tls_secret: str | None) -> dict[str, Any]:
    return gate_pod.pod_spec(
        args.settings,
        gate_container(args, namespace),
        config_map=f"{args.workload}-gate",
        selector=gate_selector(args.workload),
        tls_secret=tls_secret,
    )


def _model_ports(args: ApiGateArgs) -> dict[str, Any]:
    """What the model's Services select and serve: its pods, on the model server's port."""
    port = {"name": "http", "port": args.model_port, "targetPort": args.model_port}
    return {"selector": args.model_selector, "ports": [{**port, "protocol": "TCP"}]}


class ApiGate(pulumi.ComponentResource):
    """HAProxy in front of one workload: its config, certificate Secret, Deployment and budget,
    the model's ClusterIP Service it forwards to, and the NetworkPolicy that makes it the only
    way in."""

    selector: dict[str, str]
    """The gate pods' labels: what the workload's exposed Service selects."""
    port: int
    """The gate's serving port (TLS, or plain with expose.tls: false)."""

    def __init__(
        self, name: str, args: ApiGateArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:ApiGate", name, None, opts)
        self.selector = gate_selector(args.workload)
        self.port = args.settings.port
        labels = {**self.selector, MANAGED_BY_LABEL: "pulumi", **args.labels}
        meta = {"namespace": args.namespace, "labels": labels, "name": f"{args.workload}-gate"}
        files = haproxy.files(args.settings)
        config = k8s.core.v1.ConfigMap(
            f"{name}-config",
            metadata=manifest(meta),
            data=files,
            opts=pulumi.ResourceOptions(parent=self),
        )
        config_text = "".join(files[file] for file in sorted(files))
        tls_secret = self._tls_secret(name, args, meta)
        model = self._model_service(name, args)
        # The gate reaches the model's pods (or KEDA's interceptor) and DNS, nothing else.
        forward = (
            egress.interceptor_egress()
            if args.via_interceptor
            else egress.gate_egress(args.model_selector, args.model_port)
        )
        k8s.networking.v1.NetworkPolicy(
            f"{name}-egress",
            metadata=manifest({**meta, "name": f"{meta['name']}-egress"}),
            spec=manifest(egress.egress_policy_spec(self.selector, forward)),
            opts=pulumi.ResourceOptions(parent=self),
        )
        after: list[pulumi.Resource] = [config, model, *self._consumer_keys(name, args, meta)]
        self._deployment(name, args, meta, config_text, tls_secret, after=after)
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb",
            metadata=manifest(meta),
            spec=manifest({"maxUnavailable": 1, "selector": {"matchLabels": self.selector}}),
            opts=pulumi.ResourceOptions(parent=self),
        )
        if args.scraped:
            self._scrape(name, meta)
        self.register_outputs({"selector": self.selector, "port": self.port})

    def _scrape(self, name: str, meta: dict[str, Any]) -> None:
        """Managed Prometheus reads the gate's answers from its exporter (gate_metrics.py)."""
        k8s.apiextensions.CustomResource(
            f"{name}-podmonitoring",
            api_version="monitoring.googleapis.com/v1",
            kind="PodMonitoring",
            metadata=manifest(meta),
            spec=manifest(gate_metrics.pod_monitoring_spec(self.selector)),
            opts=pulumi.ResourceOptions(parent=self),
        )
        k8s.networking.v1.NetworkPolicy(
            f"{name}-metrics-scrape",
            metadata=manifest({**meta, "name": f"{meta['name']}-metrics-scrape"}),
            spec=manifest(gate_metrics.ingress_spec(self.selector)),
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _consumer_keys(
        self, name: str, args: ApiGateArgs, meta: dict[str, Any]
    ) -> list[pulumi.Resource]:
        """expose.keys: each consumer's key in a Secret the gate reads its environment from, not in
        the ConfigMap. Removing a consumer removes its data key (an update of this Secret) and its
        line of haproxy.cfg, which rolls the gates: its key is refused from then on."""
        if not args.settings.consumers:
            return []
        missing = set(args.settings.consumers) - args.consumer_keys.keys()
        if missing:
            raise ValueError(f"ApiGateArgs.consumer_keys lacks the keys of {sorted(missing)}")
        secret = k8s.core.v1.Secret(
            f"{name}-consumer-keys",
            metadata=manifest({**meta, "name": consumer_keys_secret_name(args.workload)}),
            type="Opaque",
            string_data={
                c: pulumi.Output.secret(args.consumer_keys[c]) for c in args.settings.consumers
            },
            opts=pulumi.ResourceOptions(parent=self),
        )
        return [secret]

    def _tls_secret(
        self, name: str, args: ApiGateArgs, meta: dict[str, Any]
    ) -> pulumi.Output[str] | None:
        """The gate's certificate and key (settings.tls), as the Secret HAProxy reads."""
        if not args.settings.tls:
            return None
        if args.pem is None:
            raise ValueError("ApiGateArgs.pem is required when settings.tls")
        secret = k8s.core.v1.Secret(
            f"{name}-tls",
            metadata=manifest({**meta, "name": f"{meta['name']}-tls"}),
            type="Opaque",
            string_data={CERT_FILE: pulumi.Output.secret(args.pem)},
            opts=pulumi.ResourceOptions(parent=self),
        )
        return secret.metadata.name

    def _model_service(self, name: str, args: ApiGateArgs) -> k8s.core.v1.Service:
        """The model's ClusterIP Service the gate forwards to, and the NetworkPolicy that admits
        only the gate to the model's pods. Both carry the model's labels, so a query for the gate
        finds only it."""
        model_meta = {
            "namespace": args.namespace,
            "labels": {**args.model_selector, MANAGED_BY_LABEL: "pulumi"},
        }
        model = k8s.core.v1.Service(
            f"{name}-model",
            metadata=manifest({**model_meta, "name": model_service_name(args.workload)}),
            spec=manifest({"type": "ClusterIP", **_model_ports(args)}),
            # The Service is ready once it exists: its pods are the model's, which may take many
            # minutes to load (the gate forwards once they are ready).
            opts=pulumi.ResourceOptions(parent=self),
        )
        if args.settings.replicas:
            self._replicas_service(name, args, model_meta)
        k8s.networking.v1.NetworkPolicy(
            f"{name}-netpol",
            metadata=manifest({**model_meta, "name": f"{args.workload}-from-gate"}),
            spec=manifest(
                {
                    "podSelector": {"matchLabels": args.model_selector},
                    "policyTypes": ["Ingress"],
                    "ingress": model_ingress(args.workload, args.model_port, args.via_interceptor),
                }
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        return model

    def _replicas_service(self, name: str, args: ApiGateArgs, meta: dict[str, Any]) -> None:
        """Headless: its DNS name resolves to each ready replica's address, which the gate
        routes to one by one (cache-aware). Not-ready pods are left out of the records until
        their readiness probe passes (kubernetes.io "DNS for Services and Pods")."""
        k8s.core.v1.Service(
            f"{name}-replicas",
            metadata=manifest({**meta, "name": replicas_service_name(args.workload)}),
            spec=manifest({"clusterIP": "None", **_model_ports(args)}),
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _deployment(
        self,
        name: str,
        args: ApiGateArgs,
        meta: dict[str, Any],
        config_text: str,
        tls_secret: pulumi.Output[str] | None,
        after: list[pulumi.Resource],
    ) -> None:
        """The gates, rolled when their config or certificate changes (HAProxy reads both at
        start only)."""
        pod = pulumi.Output.all(args.namespace, tls_secret).apply(
            lambda v: gate_pod_spec(args, v[0], v[1])
        )
        digest = pulumi.Output.from_input(args.cert_pem or "").apply(
            lambda cert: hashlib.sha256((config_text + (cert or "")).encode()).hexdigest()
        )
        k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata=manifest(meta),
            spec=manifest(
                {
                    "replicas": REPLICAS,
                    "selector": {"matchLabels": self.selector},
                    "template": {
                        "metadata": {
                            "labels": meta["labels"],
                            "annotations": {GATE_CONFIG_HASH_ANNOTATION: digest},
                        },
                        "spec": pod,
                    },
                }
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=after),
        )
