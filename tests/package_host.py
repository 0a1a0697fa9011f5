"""The real provider host of the package (provider/), started as the Pulumi engine starts a Python
plugin, and the engine side it talks to: a resource monitor (the recording engine,
tools/engine.py) and an engine (its logs), served over gRPC.

How the engine starts it (pulumi/pulumi @ 1b59498, cited in provider/PulumiPlugin.yaml):
`<toolchain python> <plugin folder> <engine address>`, cwd the engine's working directory; the
plugin prints its port. The uv toolchain's python is the one of the virtualenv beside the nearest
uv.lock above the plugin folder (sdk/python/toolchain/uv.go newUv).
"""

import subprocess
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
)

from tools.engine import CloudMocks, RecordingMonitor

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "provider"


def toolchain_python(plugin: Path = PLUGIN) -> Path:
    """The interpreter the uv toolchain runs the plugin with: `.venv` beside the nearest uv.lock
    searched upward from the plugin folder (uv.go newUv, no `virtualenv` option set)."""
    for folder in (plugin, *plugin.parents):
        if (folder / "uv.lock").is_file():
            return folder / ".venv" / "bin" / "python"
    raise FileNotFoundError(f"no uv.lock above {plugin}")


class ServedMonitor(RecordingMonitor):
    """The recording monitor for a Construct over gRPC: it answers in threads of its own, where
    the SDK's settings are not the test's, so the stack and project of its URNs are given."""

    def __init__(self, mocks: CloudMocks, project: str, stack: str) -> None:
        super().__init__(mocks)
        self.project, self.stack = project, stack

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        rest = super().make_urn(parent, type_, name).split("::", 2)[2]
        return f"urn:pulumi:{self.stack}::{self.project}::{rest}"

    def GetDeploymentInfo(self, request: Any) -> Any:  # noqa: N802 - gRPC name
        """The engine's features, output values among them: the mock leaves them out, the engine
        has them, and forwards a consumer's output values (secrets and dependencies kept) to a
        plugin that accepts outputs (pulumi/pulumi@1b594989 sdk/go/common/resource/plugin/
        provider_plugin.go Construct, `KeepOutputValues: protocol.acceptOutputs`; the Python host
        answers acceptOutputs=True, pulumi 3.272.0 provider/server.py). The SDK keeps output
        values only in the inputs of remote components (runtime/resource.py), so the children
        the host registers arrive as before."""
        info = super().GetDeploymentInfo(request)
        info.supportedFeatures.append(resource_pb2.RESOURCE_MONITOR_FEATURE_OUTPUT_VALUES)
        return info


class MonitorServicer(resource_pb2_grpc.ResourceMonitorServicer):
    """The recording engine's monitor behind the SDK's own gRPC service definition."""

    def __init__(self, monitor: RecordingMonitor) -> None:
        self.monitor = monitor

    def SupportsFeature(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC name
        answer = self.monitor.SupportsFeature(request)
        # The mock answers with an ad-hoc object; gRPC needs the message.
        has_support = answer.hasSupport  # pyright: ignore[reportAttributeAccessIssue]
        return resource_pb2.SupportsFeatureResponse(hasSupport=has_support)

    def GetDeploymentInfo(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self.monitor.GetDeploymentInfo(request)

    def RegisterResource(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self.monitor.RegisterResource(request)

    def RegisterResourceOutputs(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self.monitor.RegisterResourceOutputs(request)

    def Invoke(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self.monitor.Invoke(request)

    def RegisterPackage(self, request: Any, context: Any) -> Any:  # noqa: N802
        return self.monitor.RegisterPackage(request)

    def SignalAndWaitForShutdown(self, request: Any, context: Any) -> Any:  # noqa: N802
        return empty_pb2.Empty()


@dataclass
class EngineServicer(engine_pb2_grpc.EngineServicer):
    """The engine's Log service: what the component logs through the provider."""

    logs: list[tuple[int, str]] = field(default_factory=list)

    def Log(self, request: Any, context: Any) -> Any:  # noqa: N802
        self.logs.append((request.severity, request.message))
        return empty_pb2.Empty()

    def GetRootResource(self, request: Any, context: Any) -> Any:  # noqa: N802
        return engine_pb2.GetRootResourceResponse()

    def SetRootResource(self, request: Any, context: Any) -> Any:  # noqa: N802
        return engine_pb2.SetRootResourceResponse()


@contextmanager
def engine_side(monitor: RecordingMonitor) -> Iterator[tuple[str, EngineServicer]]:
    """Serve the monitor and the engine on one localhost port; yields its address and the
    engine."""
    engine = EngineServicer()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(MonitorServicer(monitor), server)
    engine_pb2_grpc.add_EngineServicer_to_server(engine, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}", engine
    finally:
        server.stop(grace=None)


@contextmanager
def provider_host(
    engine_address: str, cwd: Path
) -> Iterator[provider_pb2_grpc.ResourceProviderStub]:
    """Start provider/ as the engine does and yield a client of the port it prints."""
    process = subprocess.Popen(
        [str(toolchain_python()), str(PLUGIN), "--logtostderr", "-v=3", engine_address],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.isdigit():
            process.kill()
            _, err = process.communicate(timeout=30)
            raise AssertionError(f"the host printed {line!r}, not its port; stderr:\n{err}")
        channel = grpc.insecure_channel(f"127.0.0.1:{line}")
        grpc.channel_ready_future(channel).result(timeout=30)
        yield provider_pb2_grpc.ResourceProviderStub(channel)
        channel.close()
    finally:
        process.kill()
        process.wait(timeout=30)


@dataclass
class Served:
    client: Any
    """The host's ResourceProvider client."""
    monitor: RecordingMonitor
    """What the host registered, recorded."""
    address: str
    """Where the monitor and the engine listen."""
    engine: EngineServicer


@contextmanager
def served_host(monitor: RecordingMonitor, cwd: Path) -> Iterator[Served]:
    """The real host, started in a working directory of its own (the engine's, not the
    plugin's), with the monitor and engine it talks to."""
    with engine_side(monitor) as (address, engine), provider_host(address, cwd) as client:
        yield Served(client, monitor, address, engine)


def served_schema(cwd: Path) -> dict[str, Any]:
    """The schema the real host serves (GetSchema over gRPC), for a test module that needs only
    that."""
    import json

    with (
        engine_side(RecordingMonitor(CloudMocks())) as (address, _),
        provider_host(address, cwd) as client,
    ):
        request = provider_pb2.GetSchemaRequest(version=0)
        return json.loads(client.GetSchema(request).schema)
