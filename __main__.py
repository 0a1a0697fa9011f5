"""gke-gpu: a GPU service on GKE, or on an existing cluster, from one `pulumi up` (composition)."""

import pulumi

from components.apikey import ApiKey, ApiKeyArgs
from components.autoscaler import Autoscaler, AutoscalerArgs
from components.certificate import (
    CertificateAuthority,
    CertificateAuthorityArgs,
    ServerCertificate,
    ServerCertificateArgs,
    cluster_dns_names,
    split_hosts,
)
from components.cluster import ExistingCluster, ExistingClusterArgs, GkeCluster, GkeClusterArgs
from components.compute_class import GpuComputeClass, GpuComputeClassArgs
from components.config import NAMESPACE, ExistingClusterConfig, Secret, from_pulumi
from components.config.rules.exposure import API_KEY_ENV, LOAD_BALANCED
from components.device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from components.driver import NvidiaDriverInstaller, NvidiaDriverInstallerArgs, installer_pools
from components.gate import ApiGate, ApiGateArgs, gate_selector, gate_settings
from components.metrics_adapter import CustomMetricsAdapter, CustomMetricsAdapterArgs
from components.model_cache import ModelCacheAccess, ModelCacheAccessArgs
from components.namespace import WorkloadNamespace, WorkloadNamespaceArgs
from components.nodepool import GpuNodePool, GpuNodePoolArgs
from components.service import (
    PRODUCTION_LABEL,
    LoadBalancerService,
    LoadBalancerServiceArgs,
    StaticAddress,
    static_address_name,
)
from components.workload import GpuWorkload, GpuWorkloadArgs

config = from_pulumi()
secrets = pulumi.Config(NAMESPACE)
for advisory in config.advisories:
    pulumi.log.warn(advisory)

# The cluster and its GPU capacity: each workload object waits for `gpu_capacity` (the custom
# resources themselves, handed over in GpuWorkloadArgs.after: a component's depends_on would not
# reach them), so pods are created once GPUs are there: GKE node pools and driver installers,
# or the device plugin on an existing cluster. Autopilot provisions GPU nodes per pod.
cluster: GkeCluster | ExistingCluster
gpu_capacity: list[pulumi.Resource]
if isinstance(config.cluster, ExistingClusterConfig):
    cluster = ExistingCluster(
        "existing",
        ExistingClusterArgs(
            cluster=config.cluster,
            kubeconfig=(
                config.cluster.kubeconfig.output()
                if isinstance(config.cluster.kubeconfig, Secret)
                else secrets.require_secret(config.cluster.kubeconfig)
                if config.cluster.kubeconfig
                else None
            ),
        ),
    )
    device_plugin = NvidiaDevicePlugin(
        "device-plugin",
        NvidiaDevicePluginArgs(plugin=config.cluster.device_plugin),
        opts=pulumi.ResourceOptions(providers=[cluster.provider]),
    )
    gpu_capacity = list(device_plugin.capacity)
    protect = False  # cluster.deletionProtection is a GKE setting; this stack does not own one
else:
    cluster = GkeCluster(
        "gke",
        GkeClusterArgs(
            project=config.project,
            region=config.region,
            cluster=config.cluster,
            gcs_fuse_csi_driver=any(w.model_cache for w in config.workloads),
            image_streaming=any(pool.image_streaming for pool in config.node_pools),
            image_repositories=config.image_repositories,
        ),
    )
    # A protected stack protects what its service stands on, not only the cluster.
    protect = config.cluster.deletion_protection
    pools = [
        GpuNodePool(
            f"pool-{pool.name}",
            GpuNodePoolArgs(
                project=config.project,
                location=config.cluster.location,
                cluster_name=cluster.name,
                service_account=cluster.node_service_account,
                pool=pool,
                after=cluster.system_pools,
                protect=protect,
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
    gpu_capacity = [r for component in [*pools, *installers] for r in component.capacity]
k8s_opts = pulumi.ResourceOptions(providers=[cluster.provider])

namespace = WorkloadNamespace(
    "namespace",
    WorkloadNamespaceArgs(
        name=config.namespace,
        protect=protect,
        scraped=tuple((w.name, w.port) for w in config.workloads if w.autoscale and w.port),
    ),
    opts=k8s_opts,
)

# Replicas that follow load: Google's custom metrics adapter serves the Prometheus metrics that
# HorizontalPodAutoscalers scale on (GKE only; the config layer refuses autoscale elsewhere).
metrics_adapter = (
    CustomMetricsAdapter(
        "metrics-adapter",
        CustomMetricsAdapterArgs(project=config.project, after=[cluster]),
        opts=k8s_opts,
    )
    if any(w.autoscale for w in config.workloads) and isinstance(cluster, GkeCluster)
    else None
)

# The stack's own CA signs the certificate of every endpoint served over TLS; clients trust it
# through the `caCertificate` output.
ca = (
    CertificateAuthority("ca", CertificateAuthorityArgs(stack=pulumi.get_stack()))
    if any(w.expose.tls for w in config.exposed if w.expose)
    else None
)

# The production marker the policy pack reads (cluster.production), never the stack's name.
production_labels = {PRODUCTION_LABEL: "true"} if config.production else {}
endpoints: dict[str, pulumi.Input[str | None]] = {}
api_keys: dict[str, pulumi.Output[str]] = {}
load_balancers: list[tuple[str, str, LoadBalancerService]] = []  # (workload, type, service)
for w in config.workloads:
    # A workload with fallbacks gets GPUs through its own ComputeClass, which must exist first.
    compute_class = (
        GpuComputeClass(f"class-{w.name}", GpuComputeClassArgs(workload=w), opts=k8s_opts)
        if w.compute_class is not None
        else None
    )
    # Model weights from a bucket: the workload's service account may read it before pods start.
    access = (
        ModelCacheAccess(
            f"model-cache-{w.name}",
            ModelCacheAccessArgs(
                project=config.project,
                namespace=config.namespace,
                service_account=w.name,
                bucket=w.model_cache.bucket,
                after=[cluster],
            ),
        )
        if w.model_cache is not None
        else None
    )
    secret_values = {
        **{env: secrets.require_secret(key) for env, key in w.secret_env},
        **{env: value.output() for env, value in w.secret_values},
    }
    if w.api_key:
        # Generated once, kept in state, read by vLLM from VLLM_API_KEY (via the workload's Secret).
        api_keys[w.name] = ApiKey(f"apikey-{w.name}", ApiKeyArgs(workload=w.name)).value
        secret_values[API_KEY_ENV] = api_keys[w.name]
    workload = GpuWorkload(
        f"workload-{w.name}",
        GpuWorkloadArgs(
            namespace=namespace.name,
            mode=config.cluster.mode,
            workload=w,
            secret_values=secret_values,
            after=[
                *gpu_capacity,
                *(compute_class.resources if compute_class else []),
                *(access.ready if access else []),
            ],
        ),
        opts=k8s_opts,
    )
    if w.autoscale is not None and metrics_adapter is not None:
        Autoscaler(
            f"autoscaler-{w.name}",
            AutoscalerArgs(namespace=namespace.name, workload=w, after=metrics_adapter.ready),
            opts=k8s_opts,
        )
    if w.expose is not None and workload.port is not None:
        # Every exposed server sits behind its gate (components/gate.py): the Service selects the
        # gate's pods, and the gate forwards the model API, with the key, to the model's pods.
        settings = gate_settings(w)
        static_address = None
        if w.expose.static_ip and not isinstance(config.cluster, ExistingClusterConfig):
            static_address = StaticAddress(
                project=config.project,
                region=config.region,
                name=static_address_name(config.cluster.name, w.name),
                subnetwork=config.cluster.subnetwork or config.cluster.network,
                protect=protect,
            )
        service = LoadBalancerService(
            f"service-{w.name}",
            LoadBalancerServiceArgs(
                name=w.name,
                namespace=namespace.name,
                selector=gate_selector(w.name),
                port=w.expose.port,
                target_port=settings.port,
                source_ranges=w.expose.source_ranges,
                type=w.expose.type,
                static_address=static_address,
                tls=w.expose.tls,
                labels=production_labels,
            ),
            opts=k8s_opts,
        )
        certificate = None
        if w.expose.tls and ca is not None:
            ips, names = split_hosts(w.expose.hosts)
            certificate = ServerCertificate(
                f"cert-{w.name}",
                ServerCertificateArgs(
                    ca=ca,
                    common_name=w.name,
                    ip_addresses=service.reserved_address.apply(
                        lambda a, ips=ips: [a, *ips] if a else ips
                    ),
                    dns_names=[*names, *cluster_dns_names(w.name, config.namespace)],
                ),
            )
        ApiGate(
            f"gate-{w.name}",
            ApiGateArgs(
                workload=w.name,
                namespace=namespace.name,
                model_selector=workload.selector,
                model_port=workload.port,
                settings=settings,
                key_secret=workload.secret_name,
                pem=certificate.pem if certificate else None,
                cert_pem=certificate.cert_pem if certificate else None,
                labels=production_labels,
            ),
            opts=k8s_opts,
        )
        endpoints[w.name] = service.url
        if w.expose.type in LOAD_BALANCED:
            load_balancers.append((w.name, w.expose.type, service))

if load_balancers:
    # The first load-balanced workload's address; `externalIp` only for a public one.
    _, first_type, first = load_balancers[0]
    if first_type == "LoadBalancer":
        pulumi.export("externalIp", first.external_ip)
    pulumi.export("url", first.url)
pulumi.export("clusterName", cluster.name)
pulumi.export("clusterMode", config.cluster.mode)
if cluster.kubeconfig is not None:  # a context of the ambient kubeconfig exports no credentials
    pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("endpoints", endpoints)
if ca is not None:
    # `curl --cacert <(pulumi stack output caCertificate) $URL/v1/models ...`: public, not secret.
    pulumi.export("caCertificate", ca.cert_pem)
if api_keys:
    # `curl -H "Authorization: Bearer $(pulumi stack output apiKey --show-secrets)" $URL/v1/...`
    # The key of the workload `url` points to (else the first protected one), and every key by
    # workload; both secret.
    url_workload = load_balancers[0][0] if load_balancers else None
    key_of = url_workload if url_workload in api_keys else next(iter(api_keys))
    pulumi.export("apiKey", api_keys[key_of])
    pulumi.export("apiKeys", pulumi.Output.secret(api_keys))
