"""The raw shape of the `gke-gpu:*` config: types, enums, formats, bounds and unknown keys.

Strict: a boolean is not a number and a number is not a string, as in the engine's JSON (YAML's
`on` is the string "on" under YAML 1.2, and `port: on` must not become port 1). Rules that need
more than one field live in `rules/`.

This is also the one description of every key users read: each field's docstring is its
documentation, from which `python -m tools.reference --write` generates docs/configuration.md and
the key list in Pulumi.yaml. In a docstring the first paragraph is a one-line summary (Pulumi.yaml
shows it) and later paragraphs add detail; a paragraph `Default: ...` names a default the schema
cannot show (derived, or applied by the rules); a paragraph opening with a key in backticks
(`` `type`: ... ``, with its own optional `Default:` line) describes that key of a nested model
where it means more than the nested model's own docstring says. Docstrings are Markdown, their
links relative to docs/.
"""

from __future__ import annotations

from .base import (
    DEVICE_PLUGIN_TYPES,
    MODES,
    VLLM_PORT,
    DevicePluginType,
    DnsEndpoint,
    Driver,
    ExposeType,
    Image,
    ImageType,
    K8sName,
    Kind,
    Mode,
    Model,
    Text,
)
from .cluster import (
    ClusterSpec,
    DevicePluginSharingSpec,
    DevicePluginSpec,
    ExclusionScope,
    MaintenanceWindowSpec,
    SystemPoolSpec,
)
from .disks import CacheSpec, ModelCacheSpec, StorageSpec
from .pools import (
    FallbackSpec,
    NodePoolSpec,
    Reservation,
    ReservationSpec,
    SharingSpec,
)
from .stack_keys import (
    STACK_KEYS,
    StackKey,
    aliases,
)
from .workloads import (
    AdapterSpec,
    AutoscaleSpec,
    EgressSpec,
    ExposeSpec,
    ProbeSpec,
    WorkloadSpec,
)

__all__ = [
    "AdapterSpec",
    "AutoscaleSpec",
    "CacheSpec",
    "ClusterSpec",
    "ExclusionScope",
    "MaintenanceWindowSpec",
    "DEVICE_PLUGIN_TYPES",
    "DevicePluginSharingSpec",
    "DevicePluginSpec",
    "DevicePluginType",
    "DnsEndpoint",
    "Driver",
    "EgressSpec",
    "ExposeSpec",
    "ExposeType",
    "FallbackSpec",
    "Image",
    "ImageType",
    "K8sName",
    "Kind",
    "MODES",
    "Mode",
    "Model",
    "ModelCacheSpec",
    "NodePoolSpec",
    "ProbeSpec",
    "Reservation",
    "ReservationSpec",
    "STACK_KEYS",
    "SharingSpec",
    "StackKey",
    "StorageSpec",
    "SystemPoolSpec",
    "Text",
    "VLLM_PORT",
    "WorkloadSpec",
    "aliases",
]
