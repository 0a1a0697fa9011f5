"""The choices of the resolved config and of the public components' Args, as Enums: Pulumi's
schema analyzer reads no Literal (pulumi/provider/experimental/analyzer.py), so each of the
schema's Literal choices the resolved model carries is a StrEnum here, equal to the string it
stands for (comparisons with the schema's strings, JSON and f-strings see the same value)."""

import enum
from typing import Literal, get_args

from . import schema


class ClusterMode(enum.StrEnum):
    """How GKE runs the cluster's nodes."""

    STANDARD = "standard"
    """Node pools this stack defines (a system pool and the GPU pools)."""
    AUTOPILOT = "autopilot"
    """GKE provisions a node for each pod."""


class DnsEndpointAccess(enum.StrEnum):
    """Who may use the control plane's DNS-based endpoint."""

    DISABLED = "disabled"
    """Nobody: the kubeconfig uses the IP endpoint."""
    EXTERNAL = "external"
    """Anyone IAM admits, from anywhere; the kubeconfig uses it."""


class UpgradeScope(enum.StrEnum):
    """What a maintenance exclusion holds back (GKE's names)."""

    NO_UPGRADES = "NO_UPGRADES"
    NO_MINOR_UPGRADES = "NO_MINOR_UPGRADES"
    NO_MINOR_OR_NODE_UPGRADES = "NO_MINOR_OR_NODE_UPGRADES"


class GpuDriver(enum.StrEnum):
    """Who installs a GPU pool's NVIDIA driver."""

    DEFAULT = "default"
    """GKE, its default version for the node's GKE version."""
    LATEST = "latest"
    """GKE, the latest version for the node's GKE version (Container-Optimized OS only)."""
    INSTALLER = "installer"
    """Google's installer DaemonSet (NvidiaDriverInstaller); GKE installs none."""


class NodeImageType(enum.StrEnum):
    """The GPU nodes' operating system image."""

    COS_CONTAINERD = "COS_CONTAINERD"
    UBUNTU_CONTAINERD = "UBUNTU_CONTAINERD"


class GpuSharingStrategy(enum.StrEnum):
    """How several containers share one GPU (GKE's names)."""

    TIME_SHARING = "TIME_SHARING"
    MPS = "MPS"


class PoolPlacement(enum.StrEnum):
    """A node pool's placement policy."""

    COMPACT = "compact"
    """The pool's nodes close together in its one zone."""


class DevicePluginKind(enum.StrEnum):
    """What makes an existing cluster's GPUs schedulable as nvidia.com/gpu."""

    STATIC = "static"
    """NVIDIA's device plugin DaemonSet."""
    GPU_OPERATOR = "gpu-operator"
    """The NVIDIA GPU Operator (Helm release)."""
    NONE = "none"
    """Nothing: the cluster already advertises nvidia.com/gpu."""


# Each Enum names exactly the choices of the schema's Literal it resolves.
for _enum, _literal in (
    (ClusterMode, Literal["standard", "autopilot"]),
    (DnsEndpointAccess, schema.DnsEndpoint),
    (UpgradeScope, schema.ExclusionScope),
    (GpuDriver, schema.Driver),
    (NodeImageType, schema.ImageType),
    (DevicePluginKind, schema.DevicePluginType),
):
    assert {m.value for m in _enum} == set(get_args(_literal)), _enum
assert set(get_args(schema.Mode)) == {*ClusterMode, "existing"}
