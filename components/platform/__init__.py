"""The platform every GpuService stands on: the cluster, its GPU capacity, the namespace, the
metrics adapter and the stack's CA.

Built as today's root components (GkeCluster with its pools, the driver installers or device
plugin, WorkloadNamespace, CustomMetricsAdapter, CertificateAuthority) with the URNs they have
always had: a new parent component would re-parent the Kubernetes provider too, and every object
deployed through it would then hang on a provider alias (tests/test_upgrades.py holds the URNs).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from ..config import (
    ExistingClusterConfig,
    StackConfig,
    WorkloadConfig,
    defaults,
    kubeconfig_input,
)
from ..config.rules.cluster import existing_cluster_identifier
from ..config.sleep import scales_on_metric, sleeps
from ..config.variants import kind_spec
from ..facts.controllers import Controller
from .certificate import CertificateAuthority, CertificateAuthorityArgs
from .cluster import (
    ExistingCluster,
    ExistingClusterArgs,
    GkeCluster,
    GkeClusterArgs,
)
from .device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from .driver import (
    NvidiaDriverInstaller,
    NvidiaDriverInstallerArgs,
    installer_pools,
)
from .keda import Keda, KedaArgs
from .keda_drain import held_seconds
from .kueue import Kueue, KueueArgs
from .lws import Lws
from .metrics_adapter import CustomMetricsAdapter, CustomMetricsAdapterArgs
from .namespace import WorkloadNamespace, WorkloadNamespaceArgs
from .nodepool import GpuNodePool, GpuNodePoolArgs


@dataclass(frozen=True)
class Platform:
    config: StackConfig
    cluster: GkeCluster | ExistingCluster
    capacity: list[pulumi.Resource]
    """The GPU capacity pods wait for (GpuWorkloadArgs.after): GKE node pools and driver
    installers, or the device plugin on an existing cluster; Autopilot provisions per pod."""
    namespace: WorkloadNamespace
    metrics_adapter: CustomMetricsAdapter | None
    """Serves the Prometheus metrics HorizontalPodAutoscalers scale on (GKE, autoscale only)."""
    ca: CertificateAuthority | None
    """Signs the certificate of every endpoint served over TLS (the `caCertificate` output)."""
    protect: bool
    """A protected stack protects what its service stands on, not only the cluster."""
    keda: Keda | None = None
    """KEDA and its HTTP add-on, when a workload sleeps when idle (autoscale.minReplicas 0)."""
    kueue: Kueue | None = None
    """Kueue and the stack's queue, when a Job waits for queued provisioning (`queue`)."""
    lws: Lws | None = None
    """The LeaderWorkerSet controller, when a workload's replica spans nodes (hosts > 1)."""

    @property
    def k8s_opts(self) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(providers=[self.cluster.provider])


def watched(config: StackConfig) -> bool:
    """GKE with a dashboard or alerts: Managed Service for Prometheus scrapes what they read (the
    vLLM servers, the gates' own exporters)."""
    m = config.monitoring
    return not isinstance(config.cluster, ExistingClusterConfig) and (m.dashboard or m.alerts)


def scraped(config: StackConfig) -> tuple[WorkloadConfig, ...]:
    """Workloads whose /metrics Managed Service for Prometheus scrapes, so the namespace admits
    its collectors to their port: an HPA's metric (the Autoscaler's PodMonitoring), and on GKE
    with monitoring on, every vLLM server (StackMonitoring's PodMonitoring: the dashboard's queue,
    time to first token and errors, and the error alert, read its metrics)."""
    on = watched(config)
    return tuple(
        w
        for w in config.workloads
        if w.spec.port
        and (scales_on_metric(w) or (on and w.model is not None and kind_spec(w.spec).serves_http))
    )


def build(config: StackConfig) -> Platform:
    if isinstance(config.cluster, ExistingClusterConfig):
        cluster, capacity, protect = _existing(config.cluster)
    else:
        cluster, capacity = _gke(config)
        protect = config.cluster.deletion_protection
    k8s_opts = pulumi.ResourceOptions(providers=[cluster.provider])
    namespace = WorkloadNamespace(
        "namespace",
        WorkloadNamespaceArgs(
            name=config.namespace,
            protect=protect,
            scraped=tuple((w.spec.name, w.spec.port) for w in scraped(config) if w.spec.port),
        ),
        opts=k8s_opts,
    )
    sleeping = [w for w in config.workloads if sleeps(w)]
    autoscaled = any(scales_on_metric(w) for w in config.workloads)
    with_adapter = autoscaled and isinstance(cluster, GkeCluster)
    keda = (
        Keda(
            "keda",
            KedaArgs(
                after=[cluster],
                gate_namespace=config.namespace,
                adapter_registers_external=with_adapter,
                held_seconds=max(
                    held_seconds(w.spec.autoscale.wake_timeout_seconds, defaults.GENERATION_SECONDS)
                    for w in sleeping
                    if w.spec.autoscale
                ),
            ),
            opts=k8s_opts,
        )
        if sleeping
        else None
    )
    adapter = (
        CustomMetricsAdapter(
            "metrics-adapter",
            CustomMetricsAdapterArgs(
                project=config.project,
                after=[cluster, *(keda.ready if keda else [])],
                keda=keda is not None,
            ),
            opts=k8s_opts,
        )
        if with_adapter
        else None
    )
    tls = any(w.expose.spec.tls for w in config.exposed if w.expose)
    ca = CertificateAuthority("ca", CertificateAuthorityArgs(stack=config.stack)) if tls else None
    kueue, lws = _run_controllers(config, cluster, namespace, k8s_opts)
    return Platform(config, cluster, capacity, namespace, adapter, ca, protect, keda, kueue, lws)


def _run_controllers(
    config: StackConfig,
    cluster: pulumi.Resource,
    namespace: WorkloadNamespace,
    k8s_opts: pulumi.ResourceOptions,
) -> tuple[Kueue | None, Lws | None]:
    """The controllers of the ways a workload may run beyond Kubernetes' own kinds, when the
    stack's workloads need them (StackConfig.needs): Kueue and the stack's queue (a Job with
    `queue`), the LeaderWorkerSet controller (a LeaderWorkerSet's)."""
    kueue = (
        Kueue(
            "kueue",
            KueueArgs(
                after=[cluster],
                namespace=namespace,
                namespace_name=config.namespace,
                pools=config.node_pools,
            ),
            opts=k8s_opts,
        )
        if Controller.KUEUE in config.needs
        else None
    )
    lws = Lws("lws", after=[cluster], opts=k8s_opts) if Controller.LWS in config.needs else None
    return kueue, lws


def _existing(cfg: ExistingClusterConfig) -> tuple[ExistingCluster, list[pulumi.Resource], bool]:
    cluster = ExistingCluster(
        "existing",
        ExistingClusterArgs(
            kubeconfig=kubeconfig_input(cfg),
            context=cfg.context,
            cluster_identifier=existing_cluster_identifier(cfg),
        ),
    )
    plugin = NvidiaDevicePlugin(
        "device-plugin",
        NvidiaDevicePluginArgs(plugin=cfg.device_plugin),
        opts=pulumi.ResourceOptions(providers=[cluster.provider]),
    )
    # cluster.deletionProtection is a GKE setting; this stack does not own the cluster.
    return cluster, list(plugin.capacity), False


def _gke(config: StackConfig) -> tuple[GkeCluster, list[pulumi.Resource]]:
    cfg = config.cluster
    assert not isinstance(cfg, ExistingClusterConfig)
    cluster = GkeCluster(
        "gke",
        GkeClusterArgs(
            project=config.project,
            region=config.region,
            cluster=cfg,
            gcs_fuse_csi_driver=any(w.model_cache or w.spec.output for w in config.workloads),
            gateway_api=Controller.GATEWAY_API in config.needs,
            # Fallback ComputeClasses stream images too (components/service/compute_class.py).
            image_streaming=any(pool.image_streaming for pool in config.node_pools)
            or any(w.capacity for w in config.workloads),
            image_repositories=config.image_repositories,
        ),
    )
    pools = [
        GpuNodePool(
            f"pool-{pool.name}",
            GpuNodePoolArgs(
                project=config.project,
                location=cfg.location,
                cluster_name=cluster.name,
                service_account=cluster.node_service_account,
                pool=pool,
                after=list(cluster.system_pools),
                protect=cfg.deletion_protection,
            ),
            opts=pulumi.ResourceOptions(parent=cluster),
        )
        for pool in config.node_pools
    ]
    installers = [
        NvidiaDriverInstaller(
            f"driver-{image_type.split('_')[0].lower()}",
            NvidiaDriverInstallerArgs(image_type=image_type, pools=pool_names),
            opts=pulumi.ResourceOptions(providers=[cluster.provider]),
        )
        for image_type, pool_names in installer_pools(config.node_pools).items()
    ]
    return cluster, [r for component in [*pools, *installers] for r in component.capacity]
