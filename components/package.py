"""What the multi-language package hosts (issue 33): the one list the provider host
(provider/__main__.py), its tests and docs/package.md read.

A component joins the package by moving from PENDING to HOSTED, once Pulumi's analyzer accepts
its Args (issue 32: typed Args, no `from __future__ import annotations` in its module, a TypedDict
or a class the component also accepts as a dict, because the provider hands `args` over as a dict
keyed by Python names: pulumi 3.272.0 provider/experimental/component.py, ComponentProvider.
construct). tests/test_package_host.py then serves it through the real host and checks its schema,
and tests/package_samples.py needs one sample of its inputs. When issue 32's list of public
components lands: HOSTED = (*PUBLIC_COMPONENTS, GpuService, ApiKey) and PENDING empties.
"""

import pulumi

from components.platform.cluster import ExistingCluster, GkeCluster
from components.platform.device_plugin import NvidiaDevicePlugin
from components.platform.driver import NvidiaDriverInstaller
from components.platform.nodepool import GpuNodePool
from components.service.apikey import ApiKey
from components.service.gpu_service import GpuService

NAME = "gke-gpu"
"""The package's name: every type token is `gke-gpu:index:<Class>`, the tokens the program
registers its components under (URNs and type tokens are the consumers' contract too)."""

HOSTED: tuple[type[pulumi.ComponentResource], ...] = (ApiKey,)
"""The components the provider host serves, in schema order."""

AWAITING_TYPED_ARGS = "awaiting typed Args (issue 32)"

PENDING: dict[type[pulumi.ComponentResource], str] = {
    component: AWAITING_TYPED_ARGS
    for component in (
        GkeCluster,
        ExistingCluster,
        GpuNodePool,
        NvidiaDriverInstaller,
        NvidiaDevicePlugin,
        GpuService,
    )
}
"""Public components not served yet, with why: the tests mark what needs them xfail(strict=True)
with this reason, so each one fails loudly the day it starts to pass."""
