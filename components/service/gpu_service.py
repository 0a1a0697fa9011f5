"""GpuService: one workload of the stack and everything that makes it a service — its API key,
ComputeClass, bucket access, the workload itself, its autoscaler, and, when exposed, its
Service, certificate and API gate — wired to each other inside one component.

Each child was a root resource before this component existed: `aliases` to the root keep their
URNs (and their children's, which the engine derives from the parent's alias), so a stack
deployed before upgrades without deleting or replacing anything (tests/test_upgrades.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.config import NAMESPACE, ExistingClusterConfig, WorkloadConfig, defaults
from components.config.rules.exposure import API_KEY_ENV
from components.config.sleep import sleeps
from components.facts.labels import PRODUCTION_LABEL
from components.platform import Platform, watched
from components.platform.certificate import (
    ServerCertificate,
    ServerCertificateArgs,
    cluster_dns_names,
    split_hosts,
)
from components.service.apikey import ApiKey, ApiKeyArgs
from components.service.autoscaler import Autoscaler, AutoscalerArgs
from components.service.compute_class import GpuComputeClass, GpuComputeClassArgs
from components.service.gate import (
    ApiGate,
    ApiGateArgs,
    gate_selector,
    gate_settings,
    model_service_name,
)
from components.service.load_balancer import (
    LoadBalancerService,
    LoadBalancerServiceArgs,
    StaticAddress,
    static_address_name,
)
from components.service.model_cache import ModelCacheAccess, ModelCacheAccessArgs
from components.service.scale_to_zero import ScaleToZero, ScaleToZeroArgs
from components.service.workload import GpuWorkload, GpuWorkloadArgs

# Where every child of a GpuService lived before the component: the stack's root.
WAS_ROOT = [pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)]


@dataclass(frozen=True)
class GpuServiceArgs:
    workload: WorkloadConfig
    platform: Platform


class GpuService(pulumi.ComponentResource):
    api_key: pulumi.Output[str] | None
    """The generated key the gate (and vLLM) require (secret); None without `apiKey`."""
    service: LoadBalancerService | None
    """The exposed Service; None for a workload that is not exposed."""
    url: pulumi.Output[str | None] | None
    workload: WorkloadConfig

    def __init__(
        self, name: str, args: GpuServiceArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:GpuService", name, None, opts)
        w, platform = args.workload, args.platform
        self.workload, self._platform = w, platform
        self._k8s = pulumi.ResourceOptions(
            parent=self, providers=[platform.cluster.provider], aliases=WAS_ROOT
        )
        after = [*platform.capacity, *self._capacity()]
        if platform.lws is not None and w.hosts > 1:
            after += platform.lws.ready  # the LeaderWorkerSet's CRD, controller and webhooks
        # Generated once, kept in state, read by vLLM from VLLM_API_KEY (the workload's Secret).
        self.api_key = (
            ApiKey(f"apikey-{w.name}", ApiKeyArgs(workload=w.name), opts=self._root()).value
            if w.api_key
            else None
        )
        # A sleeping model's workload waits for its scaler, so `pulumi destroy` deletes the
        # Deployment before the HTTPScaledObject. The other way round, the add-on's ScaledObject
        # (restoreToOriginalReplicaCount: true, kedacore/http-add-on@4ea8a863 pkg/k8s/
        # scaledobject.go line 55) has KEDA's finalizer scale the Deployment back to the one
        # replica it was created with (kedacore/keda@68a5b502 controllers/keda/
        # scaledobject_finalizer.go 49-70), and a GPU node starts while the stack goes away
        # (issue 31). A Deployment already gone is skipped there (NotFound, same lines).
        scaler = self._scale_to_zero(after) if sleeps(w) else None
        workload = GpuWorkload(
            f"workload-{w.name}",
            GpuWorkloadArgs(
                namespace=platform.namespace.name,
                mode=platform.config.cluster.mode,
                workload=w,
                secret_values=self._secret_values(),
                after=[*after, *([scaler] if scaler else [])],
            ),
            opts=self._k8s,
        )
        if scaler is None and w.autoscale is not None and platform.metrics_adapter is not None:
            Autoscaler(
                f"autoscaler-{w.name}",
                AutoscalerArgs(
                    namespace=platform.namespace.name,
                    workload=w,
                    after=platform.metrics_adapter.ready,
                ),
                opts=self._k8s,
            )
        self.service = (
            self._expose(workload) if w.expose is not None and workload.port is not None else None
        )
        self.url = self.service.url if self.service else None
        self.register_outputs({"url": self.url})

    def _scale_to_zero(self, capacity: list[pulumi.Resource]) -> ScaleToZero:
        """KEDA's HTTPScaledObject: zero replicas when idle, woken through the gate. Created just
        before the workload (it waits for the same capacity): KEDA retries a ScaledObject whose
        target does not exist yet with a growing backoff, so a scaler made minutes before its
        Deployment would leave the new Deployment's first replica (and a GPU node) up longer."""
        w, platform = self.workload, self._platform
        assert platform.keda is not None and w.port is not None
        return ScaleToZero(
            f"scale-to-zero-{w.name}",
            ScaleToZeroArgs(
                namespace=platform.config.namespace,
                workload=w,
                service=model_service_name(w.name),
                generation_seconds=defaults.GENERATION_SECONDS,
                after=[*platform.keda.ready, *capacity],
            ),
            opts=self._k8s,
        )

    def _root(self) -> pulumi.ResourceOptions:
        """A child that is not a Kubernetes object (default providers)."""
        return pulumi.ResourceOptions(parent=self, aliases=WAS_ROOT)

    def _capacity(self) -> list[pulumi.Resource]:
        """What pods need before they start beyond the platform's GPUs: the workload's own
        ComputeClass (fallbacks), and read access to its model bucket."""
        w, platform = self.workload, self._platform
        found: list[pulumi.Resource] = []
        if w.compute_class is not None:
            compute_class = GpuComputeClass(
                f"class-{w.name}",
                GpuComputeClassArgs(workload=w, project=platform.config.project),
                opts=self._k8s,
            )
            found += compute_class.resources
        if w.model_cache is not None:
            access = ModelCacheAccess(
                f"model-cache-{w.name}",
                ModelCacheAccessArgs(
                    project=platform.config.project,
                    namespace=platform.config.namespace,
                    service_account=w.name,
                    bucket=w.model_cache.bucket,
                    after=[platform.cluster],
                ),
                opts=self._root(),
            )
            found += access.ready
        return found

    def _secret_values(self) -> dict[str, pulumi.Output[str]]:
        """The workload Secret's values: `secretEnv` from config, and the API key vLLM reads."""
        secrets = pulumi.Config(NAMESPACE)
        values = {
            **{env: secrets.require_secret(key) for env, key in self.workload.secret_env},
            **{env: value.output() for env, value in self.workload.secret_values},
        }
        if self.api_key is not None:
            values[API_KEY_ENV] = self.api_key
        return values

    def _expose(self, workload: GpuWorkload) -> LoadBalancerService:
        """The Service selects the gate's pods; the gate forwards the model API, with the key,
        to the model's pods (components/service/gate.py)."""
        w, platform = self.workload, self._platform
        expose = w.expose
        assert expose is not None and workload.port is not None
        settings = gate_settings(w, platform.config.namespace)
        # The production marker the policy pack reads (cluster.production), never the stack name.
        labels = {PRODUCTION_LABEL: "true"} if platform.config.production else {}
        service = LoadBalancerService(
            f"service-{w.name}",
            LoadBalancerServiceArgs(
                name=w.name,
                namespace=platform.namespace.name,
                selector=gate_selector(w.name),
                port=expose.port,
                target_port=settings.port,
                source_ranges=expose.source_ranges,
                type=expose.type,
                static_address=self._static_address(),
                tls=expose.tls,
                labels=labels,
            ),
            opts=self._k8s,
        )
        certificate = self._certificate(service) if expose.tls else None
        ApiGate(
            f"gate-{w.name}",
            ApiGateArgs(
                workload=w.name,
                namespace=platform.namespace.name,
                model_selector=workload.selector,
                model_port=workload.port,
                settings=settings,
                key_secret=workload.secret_name,
                pem=certificate.pem if certificate else None,
                cert_pem=certificate.cert_pem if certificate else None,
                labels=labels,
                via_interceptor=sleeps(w),
                scraped=watched(platform.config),
            ),
            opts=self._k8s,
        )
        return service

    def _static_address(self) -> StaticAddress | None:
        w, config = self.workload, self._platform.config
        if not (w.expose and w.expose.static_ip) or isinstance(
            config.cluster, ExistingClusterConfig
        ):
            return None
        return StaticAddress(
            project=config.project,
            region=config.region,
            name=static_address_name(config.cluster.name, w.name),
            subnetwork=config.cluster.subnetwork or config.cluster.network,
            protect=self._platform.protect,
        )

    def _certificate(self, service: LoadBalancerService) -> ServerCertificate | None:
        """Signed by the stack's CA for the reserved address, the hosts asked for, and the
        Service's cluster DNS names."""
        w, platform = self.workload, self._platform
        if platform.ca is None or w.expose is None:
            return None
        ips, names = split_hosts(w.expose.hosts)
        return ServerCertificate(
            f"cert-{w.name}",
            ServerCertificateArgs(
                ca=platform.ca,
                common_name=w.name,
                ip_addresses=service.reserved_address.apply(
                    lambda a, ips=ips: [a, *ips] if a else ips
                ),
                dns_names=[*names, *cluster_dns_names(w.name, platform.config.namespace)],
            ),
            opts=self._root(),
        )
