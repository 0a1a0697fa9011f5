"""gke-gpu from a Python program that imports the library (issue 33): the wheel, imported as
`gke_gpu`, composed as this repository's own __main__.py composes `components`. The stack file's
`gke-gpu:*` keys configure it (docs/configuration.md); tests/test_package_wheel.py runs it from a
fresh virtualenv holding only the built wheel and checks it registers what the program does."""

import pulumi
from gke_gpu import platform as platforms
from gke_gpu.config import from_pulumi
from gke_gpu.outputs import stack_outputs
from gke_gpu.service.from_stack import service_args
from gke_gpu.service.gpu_service import GpuService
from gke_gpu.service.monitoring import StackMonitoring, StackMonitoringArgs

config = from_pulumi()
for advisory in config.advisories:
    pulumi.log.warn(advisory)

platform = platforms.build(config)
# Each workload as the typed GpuServiceArgs a program without a stack file writes itself
# (docs/architecture.md lists its inputs): the workload, the cluster's keys, its pools, the
# Kubernetes provider, and what to wait for; GpuService decides the workload from them again (the
# stack-file program hands it what the loader decided instead: __main__.py).
services = [GpuService(name, args) for name, args, _ in service_args(config, platform)]
StackMonitoring("monitoring", StackMonitoringArgs(platform))

for key, value in stack_outputs(platform, services).items():
    pulumi.export(key, value)
