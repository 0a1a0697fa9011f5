"""NvidiaDriverInstaller: Google's NVIDIA driver DaemonSet for pools with `driver: installer`."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..config import NodeImageType, NodePoolConfig, typed
from ..config.component_checks import ArgsError, installer_args_problems
from ..facts.labels import (
    ACCELERATOR_LABEL,
    CONFIDENTIAL_NODES_LABEL,
    DRIVER_VERSION_LABEL,
    FLAVOUR_LABEL,
    POOL_LABEL,
)
from ..manifest import manifest

# Everything below follows GoogleCloudPlatform/container-engine-accelerators at 992db812 (HEAD
# of master, 2026-06-11; checked 2026-11-22): nvidia-driver-installer/cos/daemonset-preloaded.yaml
# and nvidia-driver-installer/ubuntu/daemonset-preloaded.yaml, both last changed in f2cf4197
# (2025-07-02, "cgpu-manifest", which added the confidential-nodes term). One addition comes from
# Google's ubuntu/daemonset-preloaded-R580.yaml (commit e4119927 in the code index, not on master
# at 992db812): a second affinity term for nodes labelled ...-driver-version=disabled, the value
# that manifest expects on pools created with gpu-driver-version=disabled; our `driver:
# installer` pools are exactly those (INSTALLATION_DISABLED in components/platform/nodepool.py).
NAME = "nvidia-driver-installer"
NAMESPACE = "kube-system"
# The installer images are preloaded on GKE nodes ("fixed" tags; the COS manifest also sets
# imagePullPolicy Never, the Ubuntu one leaves the default): GKE ships the installer that matches
# the node image, so there is nothing to pull or pin.
COS_INSTALLER_IMAGE = "cos-nvidia-installer:fixed"
UBUNTU_INSTALLER_IMAGE = "gke-nvidia-installer:fixed"
# Multi-arch since 4da5c076 (2025-04, "update daemonsets to have multi-arch partition GPU image",
# which also dropped the A4X-only manifest); earlier digests predate H200/B200 partitions.
PARTITION_GPU_IMAGE = (
    "gcr.io/gke-release/nvidia-partition-gpu"
    "@sha256:de12f85ebfb4fb6c1893cd30c23aab662a72fa0448f97ef74fccb82d7522ef17"
)
PAUSE_IMAGE = (
    "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
)
# The COS installer's command: Google's existing-driver check (918b9958/ccf7bc66, 2023-08), so a
# node that already has a driver loaded is left alone instead of failing the init container.
COS_INSTALL_COMMAND = (
    'echo "Checking for existing GPU driver modules"\n'
    "if lsmod | grep nvidia; then\n"
    '  echo "GPU driver is already installed, the installed version may or may not be the driver'
    ' version being tried to install, skipping installation"\n'
    "  exit 0\n"
    "else\n"
    '  echo "No GPU driver module detected, installing now"\n'
    "  /cos-gpu-installer install || exit 1\n"
    "fi\n"
)


@dataclass(frozen=True)
class NvidiaDriverInstallerArgs:
    image_type: NodeImageType
    """COS_CONTAINERD or UBUNTU_CONTAINERD: which of Google's installers to run."""
    pools: Sequence[str]
    """The node pools (all of that image type, `driver: installer`) whose drivers this installer
    provides, by their pool label (GpuPool.name)."""


def node_affinity(pools: Sequence[str], image_type: str = "COS_CONTAINERD") -> dict[str, Any]:
    """Google's terms (no GKE-installed driver), narrowed to this installer's own pools.

    The pool label is ours (GpuNodePool sets it), so a COS installer never lands on an Ubuntu
    node of another pool or the other way round.
    """
    pool_term = {"key": POOL_LABEL, "operator": "In", "values": list(pools)}
    gpu = {"key": ACCELERATOR_LABEL, "operator": "Exists"}
    # COS only: confidential GPU nodes get Google's daemonset-confidential.yaml instead, so the
    # preloaded COS installer keeps off them.
    not_confidential = (
        [{"key": CONFIDENTIAL_NODES_LABEL, "operator": "DoesNotExist"}]
        if image_type == "COS_CONTAINERD"
        else []
    )
    no_driver = {"key": DRIVER_VERSION_LABEL, "operator": "DoesNotExist"}
    disabled = {"key": DRIVER_VERSION_LABEL, "operator": "In", "values": ["disabled"]}
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [gpu, no_driver, *not_confidential, pool_term]},
                    {"matchExpressions": [gpu, disabled, *not_confidential, pool_term]},
                ]
            }
        }
    }


def flavour(image_type: str) -> str:
    return "cos" if image_type == "COS_CONTAINERD" else "ubuntu"


def _host_volume(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path}}


def _mount(name: str, path: str) -> dict[str, str]:
    return {"name": name, "mountPath": path}


def cos_pod_spec() -> dict[str, Any]:
    nvidia_dir = "/home/kubernetes/bin/nvidia"
    installer_env = {
        "NVIDIA_INSTALL_DIR_HOST": nvidia_dir,
        "NVIDIA_INSTALL_DIR_CONTAINER": "/usr/local/nvidia",
        "VULKAN_ICD_DIR_HOST": f"{nvidia_dir}/vulkan/icd.d",
        "VULKAN_ICD_DIR_CONTAINER": "/etc/vulkan/icd.d",
        "ROOT_MOUNT_DIR": "/root",
        "COS_TOOLS_DIR_HOST": "/var/lib/cos-tools",
        "COS_TOOLS_DIR_CONTAINER": "/build/cos-tools",
    }
    return {
        "hostNetwork": True,
        "hostPID": True,
        "volumes": [
            _host_volume("dev", "/dev"),
            _host_volume("vulkan-icd-mount", f"{nvidia_dir}/vulkan/icd.d"),
            _host_volume("nvidia-install-dir-host", nvidia_dir),
            _host_volume("root-mount", "/"),
            _host_volume("cos-tools", "/var/lib/cos-tools"),
            _host_volume("nvidia-config", "/etc/nvidia"),
        ],
        "initContainers": [
            {
                "name": NAME,
                "image": COS_INSTALLER_IMAGE,
                "imagePullPolicy": "Never",
                "resources": {"requests": {"cpu": "150m"}},
                "securityContext": {"privileged": True},
                "command": ["bash", "-c", COS_INSTALL_COMMAND],
                "env": [{"name": k, "value": v} for k, v in installer_env.items()],
                "volumeMounts": [
                    _mount("nvidia-install-dir-host", "/usr/local/nvidia"),
                    _mount("vulkan-icd-mount", "/etc/vulkan/icd.d"),
                    _mount("dev", "/dev"),
                    _mount("root-mount", "/root"),
                    _mount("cos-tools", "/build/cos-tools"),
                ],
            },
            {
                "name": "partition-gpus",
                "image": PARTITION_GPU_IMAGE,
                "env": [{"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}],
                "resources": {"requests": {"cpu": "150m"}},
                "securityContext": {"privileged": True},
                "volumeMounts": [
                    _mount("nvidia-install-dir-host", "/usr/local/nvidia"),
                    _mount("dev", "/dev"),
                    _mount("nvidia-config", "/etc/nvidia"),
                ],
            },
        ],
    }


def ubuntu_pod_spec() -> dict[str, Any]:
    return {
        "volumes": [
            _host_volume("dev", "/dev"),
            _host_volume("boot", "/boot"),
            _host_volume("root-mount", "/"),
        ],
        "initContainers": [
            {
                "name": NAME,
                "image": UBUNTU_INSTALLER_IMAGE,
                "resources": {"requests": {"cpu": "150m"}},
                "securityContext": {"privileged": True},
                "volumeMounts": [
                    _mount("boot", "/boot"),
                    _mount("dev", "/dev"),
                    _mount("root-mount", "/root"),
                ],
            }
        ],
    }


def daemonset_spec(image_type: str, pools: Sequence[str]) -> dict[str, Any]:
    # Each flavour has its own selector: two DaemonSets selecting the same pods would fight.
    labels = {"k8s-app": NAME, FLAVOUR_LABEL: flavour(image_type)}
    os_spec = cos_pod_spec() if image_type == "COS_CONTAINERD" else ubuntu_pod_spec()
    return {
        "selector": {"matchLabels": labels},
        "updateStrategy": {"type": "RollingUpdate"},
        "template": {
            "metadata": {"labels": {**labels, "name": NAME}},
            "spec": {
                "priorityClassName": "system-node-critical",
                "affinity": node_affinity(pools, image_type),
                "tolerations": [{"operator": "Exists"}],
                **os_spec,
                "containers": [{"name": "pause", "image": PAUSE_IMAGE}],
            },
        },
    }


class NvidiaDriverInstaller(pulumi.ComponentResource):
    """Installs NVIDIA drivers on GPU nodes whose pool has `driver: installer`."""

    name: pulumi.Output[str]
    """The DaemonSet's name in kube-system."""
    capacity: list[k8s.apps.v1.DaemonSet]
    """What GPU workloads wait for (GpuWorkloadArgs.after): the installer DaemonSet."""

    def __init__(
        self,
        name: str,
        args: NvidiaDriverInstallerArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        args = typed.build(NvidiaDriverInstallerArgs, args)
        ArgsError.check("NvidiaDriverInstaller", name, installer_args_problems(args.pools))
        super().__init__("gke-gpu:index:NvidiaDriverInstaller", name, None, opts)
        daemonset = k8s.apps.v1.DaemonSet(
            f"{name}-daemonset",
            metadata=manifest(
                {
                    "name": f"{NAME}-{flavour(args.image_type)}",
                    "namespace": NAMESPACE,
                    "labels": {"k8s-app": NAME},
                }
            ),
            spec=manifest(daemonset_spec(args.image_type, args.pools)),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.name = daemonset.metadata.name
        self.capacity = [daemonset]
        self.register_outputs({"name": self.name})


def installer_pools(pools: Sequence[NodePoolConfig]) -> dict[NodeImageType, tuple[str, ...]]:
    """Image type -> names of the pools with `driver: installer`: one installer per OS."""
    by_image: dict[NodeImageType, tuple[str, ...]] = {}
    for pool in pools:
        if pool.driver == "installer":
            by_image[pool.image_type] = (*by_image.get(pool.image_type, ()), pool.name)
    return dict(sorted(by_image.items()))
