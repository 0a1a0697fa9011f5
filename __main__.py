"""gke-gpu: a GPU service on GKE from one `pulumi up` (composition only)."""

import pulumi
import pulumi_kubernetes as k8s

from components.cluster import GkeCluster, GkeClusterArgs
from components.config import NAMESPACE, from_pulumi
from components.driver import NvidiaDriverInstaller, NvidiaDriverInstallerArgs, installer_pools
from components.nodepool import GpuNodePool, GpuNodePoolArgs
from components.service import LoadBalancerService, LoadBalancerServiceArgs
from components.workload import GpuWorkload, GpuWorkloadArgs

config = from_pulumi()
secrets = pulumi.Config(NAMESPACE)

cluster = GkeCluster(
    "gke",
    GkeClusterArgs(project=config.project, region=config.region, cluster=config.cluster),
)
k8s_opts = pulumi.ResourceOptions(providers=[cluster.provider])

pools = [
    GpuNodePool(
        f"pool-{pool.name}",
        GpuNodePoolArgs(
            project=config.project,
            location=config.cluster.location,
            cluster_name=cluster.name,
            service_account=cluster.node_service_account,
            pool=pool,
        ),
        # GKE taints a GPU pool's nodes (nvidia.com/gpu) only when a non-GPU pool already
        # exists, so GPU pools are created after the system pool.
        opts=pulumi.ResourceOptions(parent=cluster, depends_on=cluster.system_pools),
    )
    for pool in config.node_pools
]
installers = [
    NvidiaDriverInstaller(
        f"driver-{image_type.split('_')[0].lower()}",
        NvidiaDriverInstallerArgs(image_type=image_type, pools=pool_names),
        opts=k8s_opts,
    )
    for image_type, pool_names in installer_pools(config.node_pools).items()
]

namespace = k8s.core.v1.Namespace(
    "namespace",
    metadata={
        "name": config.namespace,
        # GPU pods here run in a restricted sandbox; baseline is enforced so that images that
        # insist on root still start, and restricted violations are reported.
        "labels": {
            "pod-security.kubernetes.io/enforce": "baseline",
            "pod-security.kubernetes.io/warn": "restricted",
            "pod-security.kubernetes.io/audit": "restricted",
        },
    },
    opts=k8s_opts,
)

endpoints: dict[str, pulumi.Output[str | None]] = {}
for w in config.workloads:
    workload = GpuWorkload(
        f"workload-{w.name}",
        GpuWorkloadArgs(
            namespace=namespace.metadata.name,
            mode=config.cluster.mode,
            workload=w,
            secret_values={env: secrets.require_secret(key) for env, key in w.secret_env},
        ),
        opts=pulumi.ResourceOptions(providers=[cluster.provider], depends_on=[*pools, *installers]),
    )
    if w.expose is not None and workload.port is not None:
        service = LoadBalancerService(
            f"service-{w.name}",
            LoadBalancerServiceArgs(
                name=w.name,
                namespace=namespace.metadata.name,
                selector=workload.selector,
                port=w.expose.port,
                target_port=workload.port,
                source_ranges=w.expose.source_ranges,
                type=w.expose.type,
            ),
            opts=k8s_opts,
        )
        endpoints[w.name] = service.url
        if len(endpoints) == 1:
            pulumi.export("externalIp", service.external_ip)
            pulumi.export("url", service.url)

pulumi.export("clusterName", cluster.name)
pulumi.export("clusterMode", config.cluster.mode)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("endpoints", endpoints)
