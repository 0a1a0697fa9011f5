"""The public components: what the multi-language package exposes and Pulumi's schema analyzer
reads (tests/test_component_args.py analyzes each; docs/architecture.md lists their Args).

Each takes Args of plain types (str, int, bool, Optional, Sequence, string-keyed Mapping, nested
dataclasses, Enums, pulumi.Input, and resources of other packages), reads no `pulumi.Config` and
no stack name, and checks its own Args before registering anything.
"""

import pulumi

from .platform.cluster import ExistingCluster, GkeCluster
from .platform.device_plugin import NvidiaDevicePlugin
from .platform.driver import NvidiaDriverInstaller
from .platform.nodepool import GpuNodePool
from .service.gpu_service import GpuService

PLATFORM_COMPONENTS: list[type[pulumi.ComponentResource]] = [
    GkeCluster,
    ExistingCluster,
    GpuNodePool,
    NvidiaDriverInstaller,
    NvidiaDevicePlugin,
]
"""The platform's: the cluster (built or existing), its GPU pools, their drivers, the device
plugin of an existing cluster."""

PUBLIC_COMPONENTS: list[type[pulumi.ComponentResource]] = [*PLATFORM_COMPONENTS, GpuService]
"""Every public component, in the package's order: the platform's, then the service on it."""
