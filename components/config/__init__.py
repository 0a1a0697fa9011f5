"""The stack's config: read as the engine hands it over, validated, resolved into StackConfig."""

import json

from components.config.defaults import DEFAULT_IMAGE, DEFAULT_MODEL, default_workloads
from components.config.loader import load
from components.config.model import (
    NAMESPACE,
    CapacityChoice,
    ClusterConfig,
    DevicePluginConfig,
    ExistingClusterConfig,
    Expose,
    Maintenance,
    MaintenanceExclusion,
    MaintenanceWindow,
    MonitoringConfig,
    NodePoolConfig,
    Output,
    Probe,
    Queue,
    Secret,
    Sharing,
    StackConfig,
    Storage,
    WorkloadConfig,
)
from components.config.problems import ConfigError
from components.config.schema import Mode
from components.config.source import StackFile, decode, from_engine


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
    "DEFAULT_IMAGE",
    "DEFAULT_MODEL",
    "NAMESPACE",
    "CapacityChoice",
    "ClusterConfig",
    "ConfigError",
    "DevicePluginConfig",
    "ExistingClusterConfig",
    "Expose",
    "Maintenance",
    "MaintenanceExclusion",
    "MaintenanceWindow",
    "Mode",
    "MonitoringConfig",
    "NodePoolConfig",
    "Output",
    "Probe",
    "Queue",
    "Secret",
    "Sharing",
    "StackConfig",
    "Storage",
    "WorkloadConfig",
    "default_workloads",
    "from_pulumi",
    "from_stack_file",
    "load",
]
