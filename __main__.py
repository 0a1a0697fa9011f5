"""gke-gpu: a GPU service on GKE, or on an existing cluster, from one `pulumi up` (composition).

The config is validated whole before anything is registered (components/config); the platform
is the cluster, its GPU capacity, the namespace, the metrics adapter and the CA
(components/platform/__init__.py); each workload becomes one GpuService
(components/service/gpu_service.py) from the Args the stack's front end builds
(components/service/from_stack.py); the stack's dashboard and alerts are StackMonitoring
(components/service/monitoring.py).
"""

import pulumi

from components import platform as platforms
from components.config import from_pulumi
from components.outputs import stack_outputs
from components.service.from_stack import service_args
from components.service.gpu_service import GpuService
from components.service.monitoring import StackMonitoring, StackMonitoringArgs

config = from_pulumi()
for advisory in config.advisories:
    pulumi.log.warn(advisory)

platform = platforms.build(config)
services = [
    GpuService(name, args, decided=decided)
    for name, args, decided in service_args(config, platform)
]
StackMonitoring("monitoring", StackMonitoringArgs(platform))

for key, value in stack_outputs(platform, services).items():
    pulumi.export(key, value)
