"""GpuService: one workload of the stack and everything that makes it a service — its API key,
ComputeClass, bucket access, the workload itself, its autoscaler, and, when exposed, its
Service, certificate and API gate — wired to each other inside one component.

Each child was a root resource before this component existed: `aliases` to the root keep their
URNs (and their children's, which the engine derives from the parent's alias), so a stack
deployed before upgrades without deleting or replacing anything (tests/test_upgrades.py).
"""

from collections.abc import Sequence
from typing import Literal, cast

import pulumi
import pulumi_kubernetes as k8s

from ..config import WorkloadConfig, defaults
from ..config.one_workload import Resolved
from ..config.rules.exposure import API_KEY_ENV
from ..config.rules.network import DEFAULT_NETWORK
from ..config.sleep import sleeps
from ..config.variants import exposure_of
from ..expose.base import Site
from ..facts.labels import PRODUCTION_LABEL
from ..platform.certificate import (
    ServerCertificate,
    ServerCertificateArgs,
    cluster_dns_names,
    split_hosts,
)
from . import haproxy
from .apikey import ApiKey, ApiKeyArgs
from .autoscaler import Autoscaler, AutoscalerArgs
from .compute_class import GpuComputeClass, GpuComputeClassArgs
from .gate import (
    ApiGate,
    ApiGateArgs,
    gate_selector,
    gate_settings,
    model_service_name,
)
from .gpu_service_args import GpuServiceArgs, GpuServiceWaits, decide, keep_secret
from .load_balancer import (
    LoadBalancerService,
    LoadBalancerServiceArgs,
    StaticAddress,
    static_address_name,
)
from .model_cache import ModelCacheAccess, ModelCacheAccessArgs
from .scale_to_zero import ScaleToZero, ScaleToZeroArgs
from .workload import GpuWorkload, GpuWorkloadArgs

# Where every child of a GpuService lived before the component: the stack's root.
WAS_ROOT = [pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)]


class GpuService(pulumi.ComponentResource):
    """One GPU workload on a cluster and what makes it a service (key, gate, autoscaler...)."""

    api_key: pulumi.Output[str] | None
    """The generated key the gate (and vLLM) require (secret); None without `apiKey`."""
    consumer_keys: dict[str, pulumi.Output[str]]
    """expose.keys: each consumer's generated key (secret), by consumer name; empty without."""
    url: pulumi.Output[str | None] | None
    """Where the workload answers; None for a workload that is not exposed."""
    # Which secrets another language's program sends stay secret here (not an output).
    keep_secret = staticmethod(keep_secret)

    def __init__(
        self,
        name: str,
        args: GpuServiceArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        decided: Resolved | None = None,
    ) -> None:
        """`decided`: the workload as the stack's loader decided it from the keys the Args were
        written from (components/service/from_stack.py), taken as it is; without it, every
        problem of the Args is reported at once, before anything is registered."""
        resolved = decided or decide(args, f"the Args of GpuService {name!r}")
        super().__init__("gke-gpu:index:GpuService", name, None, opts)
        # Children are named after this component (a stack names it after its workload), so two
        # services of one workload name in one program register distinct URNs (issue 41).
        self._stem = name
        w = resolved.workload
        self.workload: WorkloadConfig = w
        self._args, self._cluster = args, resolved.cluster
        self._waits: GpuServiceWaits = args.get("waits", {})
        self._k8s = pulumi.ResourceOptions(
            parent=self, providers=[self._kubernetes(args)], aliases=WAS_ROOT
        )
        self._namespace_name = namespace = args.get("namespace", defaults.DEFAULT_NAMESPACE)
        # The name, carrying the namespace's resources: objects placed in it depend on them.
        self._namespace = pulumi.Output.all(*self._waits.get("namespace", [])).apply(
            lambda _: namespace
        )
        after = self._pods_wait_for()
        self.api_key = self._api_key()
        self.consumer_keys = self._consumer_keys()
        # A sleeping model's workload waits for its scaler (see _scale_to_zero: destroy order).
        scaler = self._scale_to_zero(after) if sleeps(w) else None
        workload = GpuWorkload(
            self._child("workload"),
            GpuWorkloadArgs(
                namespace=self._namespace,
                mode=self._cluster.mode,
                workload=w,
                secret_values=self._secret_values(),
                after=[*after, *([scaler] if scaler else [])],
            ),
            opts=self._opts(self._k8s, "workload"),
        )
        # The HPA's custom metrics adapter serves GKE clusters only (components/platform).
        if scaler is None and w.spec.autoscale is not None and self._cluster.mode != "existing":
            Autoscaler(
                self._child("autoscaler"),
                AutoscalerArgs(
                    namespace=self._namespace,
                    workload=w,
                    after=_waiting(self._waits.get("metrics_adapter", [])),
                ),
                opts=self._opts(self._k8s, "autoscaler"),
            )
        self.service: LoadBalancerService | None = (
            self._expose(workload) if w.expose is not None and workload.port is not None else None
        )
        self.url = self.service.url if self.service else None
        self.register_outputs({"url": self.url})

    def _api_key(self) -> pulumi.Output[str] | None:
        """Generated once, kept in state, read by vLLM from VLLM_API_KEY (the workload's
        Secret)."""
        if not self.workload.api_key:
            return None
        return ApiKey(
            self._child("apikey"),
            ApiKeyArgs(workload=self.workload.spec.name),
            opts=self._opts(self._root(), "apikey"),
        ).value

    def _kubernetes(self, args: GpuServiceArgs) -> k8s.Provider:
        """The consumer's Kubernetes provider, or one of this service's own on `kubeconfig`
        (a secret), for a program that has the cluster's kubeconfig and no provider."""
        if "kubernetes" in args:
            return args["kubernetes"]
        return k8s.Provider(
            f"{self._stem}-kubernetes",
            k8s.ProviderArgs(kubeconfig=pulumi.Output.secret(args.get("kubeconfig", ""))),
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _pods_wait_for(self) -> list[pulumi.Resource]:
        """What the workload's pods need first: the GPU capacity, the workload's own (its
        ComputeClass, its buckets' access, its queue), and a group's controller."""
        after = [*_waiting(self._waits.get("gpu_capacity", [])), *self._capacity()]
        if self.workload.spec.hosts > 1:
            after += _waiting(self._waits.get("lws", []))  # the LWS CRD, controller, webhooks
        return after

    def _scale_to_zero(self, capacity: list[pulumi.Resource]) -> ScaleToZero:
        """KEDA's HTTPScaledObject: zero replicas when idle, woken through the gate. Created just
        before the workload (it waits for the same capacity): KEDA retries a ScaledObject whose
        target does not exist yet with a growing backoff, so a scaler made minutes before its
        Deployment would leave the new Deployment's first replica (and a GPU node) up longer.

        The workload waits for it, so `pulumi destroy` deletes the Deployment before the
        HTTPScaledObject. The other way round, the add-on's ScaledObject
        (restoreToOriginalReplicaCount: true, kedacore/http-add-on@4ea8a863 pkg/k8s/
        scaledobject.go line 55) has KEDA's finalizer scale the Deployment back to the one replica
        it was created with (kedacore/keda@68a5b502 controllers/keda/scaledobject_finalizer.go
        49-70), and a GPU node starts while the stack goes away (issue 31). A Deployment already
        gone is skipped there (NotFound, same lines)."""
        w = self.workload
        assert w.spec.port is not None
        return ScaleToZero(
            self._child("scale-to-zero"),
            ScaleToZeroArgs(
                namespace=self._namespace_name,
                workload=w,
                service=model_service_name(w.spec.name),
                generation_seconds=defaults.GENERATION_SECONDS,
                after=[*_waiting(self._waits.get("keda", [])), *capacity],
            ),
            opts=self._opts(self._k8s, "scale-to-zero"),
        )

    def _consumer_keys(self) -> dict[str, pulumi.Output[str]]:
        """A key per consumer (expose.keys), each a resource named after its consumer, so adding
        or removing one leaves every other key as it is ("/" is in no workload or consumer name)."""
        w = self.workload
        consumers = w.expose.spec.keys if w.expose is not None and self.api_key is not None else ()
        return {
            c: ApiKey(
                self._child("apikey", f"/{c}"),
                ApiKeyArgs(workload=w.spec.name, consumer=c),
                opts=self._opts(self._root(), "apikey", f"/{c}"),
            ).value
            for c in consumers
        }

    def _child(self, prefix: str, tail: str = "") -> str:
        """A child's name: after this component (issue 41), so two services of one workload name
        in one program do not collide."""
        return f"{prefix}-{self._stem}{tail}"

    def _opts(
        self, base: pulumi.ResourceOptions, prefix: str, tail: str = ""
    ) -> pulumi.ResourceOptions:
        """A child's options, with an alias to the name it had before 0.2.0 (after the workload)
        when that differs: a Python program of the 0.1.0 library that named its GpuService
        otherwise keeps every child (their own children follow: the SDK derives their aliases
        from the parent's name prefix). The shipped stacks name it after the workload: no alias."""
        old = f"{prefix}-{self.workload.spec.name}{tail}"
        if old == self._child(prefix, tail):
            return base
        return pulumi.ResourceOptions.merge(
            base, pulumi.ResourceOptions(aliases=[pulumi.Alias(name=old)])
        )

    def _root(self) -> pulumi.ResourceOptions:
        """A child that is not a Kubernetes object (default providers)."""
        return pulumi.ResourceOptions(parent=self, aliases=WAS_ROOT)

    def _capacity(self) -> list[pulumi.Resource]:
        """What pods need before they start beyond the platform's GPUs: the workload's own
        ComputeClass (fallbacks), and read access to its model bucket."""
        w, project = self.workload, self._args.get("project", "")
        found: list[pulumi.Resource] = []
        if w.compute_class is not None:
            compute_class = GpuComputeClass(
                self._child("class"),
                GpuComputeClassArgs(workload=w, project=project),
                opts=self._opts(self._k8s, "class"),
            )
            found += compute_class.resources
        cache = w.model_cache
        # (prefix, bucket, access, whether its metadata is read too: a streamed model's).
        buckets: tuple[tuple[str, str | None, Literal["reader", "writer"], bool], ...] = (
            (
                "model-cache",
                cache.spec.bucket if cache else None,
                "reader",
                bool(cache and cache.streams),
            ),
            ("output", w.spec.output.bucket if w.spec.output else None, "writer", False),
        )
        for prefix, bucket, access, metadata in buckets:
            if bucket is not None:
                found += ModelCacheAccess(
                    self._child(prefix),
                    ModelCacheAccessArgs(
                        project=project,
                        namespace=self._namespace_name,
                        service_account=w.spec.name,
                        bucket=bucket,
                        access=access,
                        bucket_metadata=metadata,
                        after=_waiting(self._waits.get("cluster", [])),
                    ),
                    opts=self._opts(self._root(), prefix),
                ).ready
        if w.queue is not None:
            found += _waiting(self._waits.get("kueue", []))
        return found

    def _secret_values(self) -> dict[str, pulumi.Output[str]]:
        """The workload Secret's values: `secretEnv` from `secrets`, and the API key vLLM reads."""
        secrets = self._args.get("secrets", {})
        values = {
            **{
                env: pulumi.Output.secret(secrets[key])
                for env, key in sorted(self.workload.spec.secret_env.items())
            },
            **{env: value.output() for env, value in self.workload.secret_values},
        }
        if self.api_key is not None:
            values[API_KEY_ENV] = self.api_key
        return values

    def _expose(self, workload: GpuWorkload) -> LoadBalancerService:
        """The Service selects the gate's pods; the gate forwards the model API, with the key,
        to the model's pods (components/service/gate.py)."""
        w, cluster = self.workload, self._cluster
        expose = w.expose
        assert expose is not None and workload.port is not None
        settings = gate_settings(w, self._namespace_name)
        # The production marker the policy pack reads (cluster.production), never the stack name.
        labels = {PRODUCTION_LABEL: "true"} if cluster.production else {}
        service = LoadBalancerService(
            self._child("service"),
            LoadBalancerServiceArgs(
                name=w.spec.name,
                namespace=self._namespace,
                selector=gate_selector(w.spec.name),
                port=expose.spec.port,
                target_port=settings.port,
                source_ranges=tuple(expose.spec.source_ranges),
                type=expose.spec.type,
                static_address=self._static_address(),
                tls=expose.spec.tls,
                labels=labels,
                domain=expose.domain,
                endpoints=expose.endpoints,
                site=self._site(settings.request_timeout_seconds)
                if exposure_of(expose).terminates_at_edge
                else None,
            ),
            opts=self._opts(self._k8s, "service"),
        )
        certificate = self._certificate(service) if expose.spec.tls else None
        ApiGate(
            self._child("gate"),
            ApiGateArgs(
                workload=w.spec.name,
                namespace=self._namespace,
                model_selector=workload.selector,
                model_port=workload.port,
                settings=settings,
                key_secret=workload.secret_name,
                consumer_keys=dict(self.consumer_keys),
                pem=certificate.pem if certificate else None,
                cert_pem=certificate.cert_pem if certificate else None,
                labels=labels,
                via_interceptor=sleeps(w),
                scraped=self._args.get("monitored", False) and cluster.mode != "existing",
            ),
            opts=self._opts(self._k8s, "gate"),
        )
        return service

    def _site(self, timeout_seconds: int) -> Site:
        """What a Gateway on expose.domain needs: the project, its cloud resources' name, the
        gate's longest wait and health check (components/expose/gateway.py)."""
        cluster = self._cluster
        assert cluster.name is not None  # _problems
        return Site(
            project=self._args.get("project", ""),
            gce_name=static_address_name(cluster.name, self.workload.spec.name),
            backend_timeout_seconds=timeout_seconds,
            health_port=haproxy.HEALTH_PORT,
            health_path=haproxy.HEALTH_PATH,
            protect=cluster.deletion_protection,
            source_ranges=tuple(self.workload.expose.spec.source_ranges)
            if self.workload.expose
            else (),
            production=cluster.production,
        )

    def _static_address(self) -> StaticAddress | None:
        w, cluster = self.workload, self._cluster
        if not (w.expose and w.expose.static_ip) or cluster.mode == "existing":
            return None
        assert cluster.name is not None  # _problems
        return StaticAddress(
            project=self._args.get("project", ""),
            region=self._args.get("region", ""),
            name=static_address_name(cluster.name, w.spec.name),
            subnetwork=cluster.subnetwork or cluster.network or DEFAULT_NETWORK,
            protect=cluster.deletion_protection,
        )

    def _certificate(self, service: LoadBalancerService) -> ServerCertificate | None:
        """Signed by the stack's CA for the reserved address, the hosts asked for, and the
        Service's cluster DNS names."""
        w, ca = self.workload, self._args.get("ca")
        if ca is None or w.expose is None:
            return None
        ips, names = split_hosts(w.expose.spec.hosts)
        return ServerCertificate(
            self._child("cert"),
            ServerCertificateArgs(
                ca_cert_pem=ca["cert_pem"],
                ca_private_key_pem=ca["private_key_pem"],
                common_name=w.spec.name,
                ip_addresses=service.reserved_address.apply(
                    lambda a, ips=ips: [a, *ips] if a else ips
                ),
                dns_names=[*names, *cluster_dns_names(w.spec.name, self._namespace_name)],
            ),
            opts=self._opts(self._root(), "cert"),
        )


def _waiting(outputs: Sequence[pulumi.Input[str]]) -> list[pulumi.Resource]:
    """`depends_on` entries that wait for the resources behind `outputs`: the SDK adds an entry's
    own resources to the dependencies, and an entry whose value is None adds nothing more
    (pulumi/pulumi sdk/python/lib/pulumi/runtime/_depends_on.py, _resolve_depends_on)."""
    return [
        cast(pulumi.Resource, pulumi.Output.from_input(o).apply(lambda _: None)) for o in outputs
    ]
