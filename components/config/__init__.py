"""The stack's config: read as the engine hands it over, validated, resolved into StackConfig."""

from components.config.defaults import DEFAULT_IMAGE, DEFAULT_MODEL, default_workloads
from components.config.loader import load
from components.config.model import (
    NAMESPACE,
    ClusterConfig,
    ConfigError,
    DevicePluginConfig,
    ExistingClusterConfig,
    Expose,
    NodePoolConfig,
    Probe,
    Secret,
    Sharing,
    StackConfig,
    Storage,
    WorkloadConfig,
)
from components.config.schema import Mode
from components.config.source import from_engine


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
    )


__all__ = [
    "DEFAULT_IMAGE",
    "DEFAULT_MODEL",
    "NAMESPACE",
    "ClusterConfig",
    "ConfigError",
    "DevicePluginConfig",
    "ExistingClusterConfig",
    "Expose",
    "Mode",
    "NodePoolConfig",
    "Probe",
    "Secret",
    "Sharing",
    "StackConfig",
    "Storage",
    "WorkloadConfig",
    "default_workloads",
    "from_pulumi",
    "load",
]
