"""The stack's config: read as the engine hands it over, validated, resolved into StackConfig."""

import json
from typing import TYPE_CHECKING, Literal

from .choices import ClusterMode, DevicePluginKind, GpuDriver, NodeImageType
from .loader import load
from .model import NAMESPACE, CapacityChoice, Expose, StackConfig, WorkloadConfig
from .platform_model import (
    ClusterConfig,
    ClusterSettings,
    DevicePluginConfig,
    DevicePluginSettings,
    ExistingClusterConfig,
    GpuPool,
    Maintenance,
    NodeLabel,
    NodePoolConfig,
    Secret,
    Sharing,
)
from .problems import ConfigError
from .source import StackFile, decode, from_engine

if TYPE_CHECKING:
    import pulumi

Mode = ClusterMode | Literal["standard", "autopilot", "existing"]
"""A cluster's mode: GKE's as ClusterMode (the resolved config), or the schema's `Mode` choices as
a stack file or a GpuService's Args write them."""


def from_pulumi() -> StackConfig:
    """Load the current stack's config from the Pulumi runtime (the engine or the mocks)."""
    import pulumi

    engine = from_engine()
    return load(
        engine.raw,
        project=engine.project,
        region=engine.region,
        stack=pulumi.get_stack(),
        secret_keys=engine.secret_keys,
        secure_paths=engine.secure_paths,
        extra_problems=engine.problems,
        hidden=engine.hidden,
    )


def kubeconfig_input(cluster: ExistingClusterConfig) -> "pulumi.Output[str] | None":
    """ExistingClusterArgs.kubeconfig: the kubeconfig itself (a secret), or read from the secret
    config key cluster.kubeconfig names (the older indirection); None with a context."""
    import pulumi

    if isinstance(cluster.kubeconfig, Secret):
        return cluster.kubeconfig.output()
    if cluster.kubeconfig:
        return pulumi.Config(NAMESPACE).require_secret(cluster.kubeconfig)
    return None


def from_stack_file(read: StackFile, stack: str) -> StackConfig:
    """The StackConfig `pulumi up` would load from this stack file (tools.render's view)."""
    raw = {}
    for key, value in read.config.items():
        namespace, _, name = key.partition(":")
        if namespace == NAMESPACE:
            raw[name] = decode(name, value if isinstance(value, str) else json.dumps(value))
    return load(
        raw,
        project=_text(read.config.get("gcp:project")),
        region=_text(read.config.get("gcp:region")),
        stack=stack,
        secret_keys=frozenset(
            k.partition(":")[2] for k in read.secret_keys if k.startswith(NAMESPACE + ":")
        ),
        secure_paths=read.secure_paths,
        hidden=frozenset(k for k in read.secret_keys if not k.startswith(NAMESPACE + ":")),
    )


def _text(value: object) -> str | None:
    return None if value is None else value if isinstance(value, str) else json.dumps(value)


__all__ = [
    "NAMESPACE",
    "CapacityChoice",
    "ClusterConfig",
    "ClusterMode",
    "ClusterSettings",
    "ConfigError",
    "DevicePluginConfig",
    "DevicePluginSettings",
    "DevicePluginKind",
    "ExistingClusterConfig",
    "Expose",
    "GpuDriver",
    "GpuPool",
    "Maintenance",
    "Mode",
    "NodeImageType",
    "NodeLabel",
    "NodePoolConfig",
    "Secret",
    "Sharing",
    "StackConfig",
    "WorkloadConfig",
    "from_pulumi",
    "kubeconfig_input",
    "from_stack_file",
    "load",
]
