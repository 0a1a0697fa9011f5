"""One sample per hosted component (components/package.py HOSTED), written twice: what a consumer
of the package sends Construct (schema names, plain values, enum values as strings, and the
resources and outputs of its own program: a Kubernetes provider, a GKE NodePool, a namespace's
name, a CA's secret key), and the same component built by a Python program importing the library.

tests/test_package_host.py runs `consumer` in a program registering with the engine the real
host talks to, serializes what it returns with the SDK's own serializer as the engine forwards it
to a plugin (resource references, output values with their secrets and dependencies), Constructs
the component through the host, runs `program` as a stack of its own, and compares what each
registered in the component. A component joins the package by adding its sample here.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.config import ClusterMode, ClusterSettings, DevicePluginConfig, GpuPool
from components.config.choices import DevicePluginKind, GpuDriver, NodeImageType
from components.config.platform_model import NodeLabel
from components.config.workload_args import ServiceClusterMode, WorkloadExposeType
from components.platform.certificate import CertificateAuthority, CertificateAuthorityArgs
from components.platform.cluster import (
    ExistingCluster,
    ExistingClusterArgs,
    GkeCluster,
    GkeClusterArgs,
)
from components.platform.device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from components.platform.driver import NvidiaDriverInstaller, NvidiaDriverInstallerArgs
from components.platform.nodepool import GpuNodePool, GpuNodePoolArgs
from components.service.apikey import ApiKey, ApiKeyArgs
from components.service.gpu_service import GpuService, GpuServiceArgs

PROJECT_ID = "acme-ml-test"
REGION = "us-central1"
NODES = f"gpu-nodes@{PROJECT_ID}.iam.gserviceaccount.com"
KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n"


@dataclass(frozen=True)
class Sent:
    """What a consumer's program hands the engine for one component."""

    inputs: dict[str, Any]
    """Its inputs by schema name: plain values, and its own resources and outputs."""
    providers: Sequence[pulumi.ProviderResource] = field(default_factory=tuple)
    """The `providers` resource option (the component's Kubernetes objects go through them)."""


@dataclass(frozen=True)
class Sample:
    consumer: Callable[[], Sent]
    """Registers the consumer's own resources and returns what it sends."""
    program: Callable[[str], pulumi.ComponentResource]
    """The same component with the same inputs, built by a Python program importing the library
    (its own resources named as the consumer's, so their URNs are the same)."""


def kubernetes() -> k8s.Provider:
    """The consumer's Kubernetes provider for the cluster (GkeCluster.provider in the examples)."""
    return k8s.Provider("k8s", kubeconfig="{}")


def system_pool() -> gcp.container.NodePool:
    """A GKE NodePool of the consumer's (GkeCluster.system_pools in the examples)."""
    return gcp.container.NodePool(
        "system", project=PROJECT_ID, location=REGION, cluster="gpu", node_count=1
    )


@dataclass(frozen=True)
class ServiceWorld:
    """What a GpuService stands on in the consumer's program."""

    provider: k8s.Provider
    namespace: k8s.core.v1.Namespace
    ca: CertificateAuthority


def service_world() -> ServiceWorld:
    provider = kubernetes()
    namespace = k8s.core.v1.Namespace(
        "ns", metadata={"name": "gke-gpu"}, opts=pulumi.ResourceOptions(provider=provider)
    )
    return ServiceWorld(
        provider, namespace, CertificateAuthority("ca", CertificateAuthorityArgs("test"))
    )


# A TLS workload with an API key, a static address, a secret env and a cache, on Autopilot
# (tests/test_gpu_service_args.py builds the same one from a stack file).
SERVICE_WORKLOAD: dict[str, Any] = {
    "name": "llm",
    "image": "vllm/vllm-openai:v0.6.4",
    "args": ["Qwen/Qwen2.5-0.5B-Instruct"],
    "gpu": {"type": "nvidia-l4", "count": 1},
    "spot": True,
    "expose": {"port": 443, "staticIp": True, "sourceRanges": ["203.0.113.0/24"]},
    "env": {"LOG_LEVEL": "info"},
    "cache": {"size": "30Gi"},
    "secretEnv": {"HF_TOKEN": "hfToken"},
}
SERVICE_CLUSTER: dict[str, Any] = {
    "name": "gke-gpu-test",
    "location": REGION,
    "deletionProtection": False,
}


def gpu_service_sent() -> Sent:
    world = service_world()
    return Sent(
        {
            "workload": {
                **SERVICE_WORKLOAD,
                "expose": {**SERVICE_WORKLOAD["expose"], "type": "LoadBalancer"},
            },
            "cluster": {**SERVICE_CLUSTER, "mode": "autopilot"},
            "kubernetes": world.provider,
            "project": PROJECT_ID,
            "region": REGION,
            "namespace": "gke-gpu",
            "secrets": {"hfToken": pulumi.Output.secret("hf-secret-value")},
            "ca": {"certPem": world.ca.cert_pem, "privateKeyPem": world.ca.private_key_pem},
            "monitored": True,
            "waits": {"namespace": [world.namespace.metadata.name]},
        }
    )


def gpu_service_program(name: str) -> GpuService:
    world = service_world()
    expose = SERVICE_WORKLOAD["expose"]
    workload = {
        **{k: v for k, v in SERVICE_WORKLOAD.items() if k not in ("expose", "secretEnv")},
        "secret_env": SERVICE_WORKLOAD["secretEnv"],
        "expose": {
            "port": expose["port"],
            "static_ip": expose["staticIp"],
            "source_ranges": expose["sourceRanges"],
            "type": WorkloadExposeType.LoadBalancer,
        },
    }
    args = GpuServiceArgs(
        workload=workload,  # pyright: ignore[reportArgumentType] - the TypedDict, as a dict
        cluster={
            "mode": ServiceClusterMode.Autopilot,
            "name": SERVICE_CLUSTER["name"],
            "location": REGION,
            "deletion_protection": False,
        },
        kubernetes=world.provider,
        project=PROJECT_ID,
        region=REGION,
        namespace="gke-gpu",
        secrets={"hfToken": pulumi.Output.secret("hf-secret-value")},
        ca={"cert_pem": world.ca.cert_pem, "private_key_pem": world.ca.private_key_pem},
        monitored=True,
        waits={"namespace": [world.namespace.metadata.name]},
    )
    return GpuService(name, args)


def gpu_node_pool_sent() -> Sent:
    pool = {"name": "l4", "gpuType": "nvidia-l4", "gpuCount": 1, "spot": True, "maxNodes": 2}
    return Sent(
        {
            "project": PROJECT_ID,
            "location": REGION,
            "clusterName": "gpu",
            "serviceAccount": NODES,
            "pool": {**pool, "driver": "latest", "zones": [f"{REGION}-a"]},
            "after": [system_pool()],
        }
    )


def gpu_node_pool_program(name: str) -> GpuNodePool:
    pool = GpuPool(
        name="l4",
        gpu_type="nvidia-l4",
        gpu_count=1,
        spot=True,
        max_nodes=2,
        driver=GpuDriver.LATEST,
        zones=[f"{REGION}-a"],
    )
    args = GpuNodePoolArgs(
        project=PROJECT_ID,
        location=REGION,
        cluster_name="gpu",
        service_account=NODES,
        pool=pool,
        after=[system_pool()],
    )
    return GpuNodePool(name, args)


SAMPLES: dict[str, Sample] = {
    "GkeCluster": Sample(
        consumer=lambda: Sent(
            {
                "project": PROJECT_ID,
                "region": REGION,
                "cluster": {
                    "name": "gpu",
                    "mode": "standard",
                    "deletionProtection": False,
                    "privateNodes": True,
                    "masterAuthorizedNetworks": ["203.0.113.0/24"],
                },
                "imageStreaming": True,
            }
        ),
        program=lambda name: GkeCluster(
            name,
            GkeClusterArgs(
                project=PROJECT_ID,
                region=REGION,
                cluster=ClusterSettings(
                    name="gpu",
                    mode=ClusterMode.STANDARD,
                    deletion_protection=False,
                    private_nodes=True,
                    master_authorized_networks=["203.0.113.0/24"],
                ),
                image_streaming=True,
            ),
        ),
    ),
    "ExistingCluster": Sample(
        consumer=lambda: Sent({"kubeconfig": KUBECONFIG, "clusterIdentifier": "lab"}),
        program=lambda name: ExistingCluster(
            name, ExistingClusterArgs(kubeconfig=KUBECONFIG, cluster_identifier="lab")
        ),
    ),
    "GpuNodePool": Sample(consumer=gpu_node_pool_sent, program=gpu_node_pool_program),
    "NvidiaDriverInstaller": Sample(
        consumer=lambda: Sent(
            {"imageType": "UBUNTU_CONTAINERD", "pools": ["l4", "t4"]}, providers=[kubernetes()]
        ),
        program=lambda name: NvidiaDriverInstaller(
            name,
            NvidiaDriverInstallerArgs(
                image_type=NodeImageType.UBUNTU_CONTAINERD, pools=["l4", "t4"]
            ),
            opts=pulumi.ResourceOptions(providers=[kubernetes()]),
        ),
    ),
    "NvidiaDevicePlugin": Sample(
        consumer=lambda: Sent(
            {
                "plugin": {
                    "type": "static",
                    "sharingReplicas": 4,
                    "nodeSelectorTerms": [[{"key": "gpu", "value": "nvidia"}]],
                }
            },
            providers=[kubernetes()],
        ),
        program=lambda name: NvidiaDevicePlugin(
            name,
            NvidiaDevicePluginArgs(
                DevicePluginConfig(
                    type=DevicePluginKind.STATIC,
                    sharing_replicas=4,
                    node_selector_terms=[[NodeLabel("gpu", "nvidia")]],
                )
            ),
            opts=pulumi.ResourceOptions(providers=[kubernetes()]),
        ),
    ),
    "GpuService": Sample(consumer=gpu_service_sent, program=gpu_service_program),
    "ApiKey": Sample(
        consumer=lambda: Sent({"workload": "llm"}),
        program=lambda name: ApiKey(name, ApiKeyArgs(workload="llm")),
    ),
}
