"""A recording Pulumi engine: runs the real program under mocks and keeps every registration."""

from __future__ import annotations

import json
import os
import runpy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import mocks as runtime_mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.sync_await import _sync_await

from components.config.source import STACK_FILE_ENV
from tools.mocks import (
    COMPUTED_KEYS,
    CONTROL_PLANE_IP,
    MOCKED_VALUES,
    PROJECT,
    PROJECT_NUMBER,
    SECRET_MASK,
    STATIC_EXTERNAL_IP,
    CloudMocks,
    mask_secrets,
    unwrap_secrets,
)

# Re-exported: the plan and the tests read the mock's made-up values through the engine.
__all__ = [
    "CONTROL_PLANE_IP",
    "MOCKED_VALUES",
    "PROJECT",
    "PROJECT_NUMBER",
    "ROOT",
    "SECRET_MASK",
    "STATIC_EXTERNAL_IP",
    "CloudMocks",
    "Recording",
    "RecordingMonitor",
    "Registration",
    "run_program",
]

ROOT = Path(__file__).resolve().parent.parent
GATE_TYPE = "gke-gpu:index:ApiGate"
KEDA_TYPE = "gke-gpu:index:Keda"
MONITORING_TYPE = "gke-gpu:index:StackMonitoring"
ROOT_STACK_TYPE = "pulumi:pulumi:Stack"
# Components whose children are not the workload's own objects (Recording.served).
_NOT_SERVED = (GATE_TYPE, KEDA_TYPE, MONITORING_TYPE)


@dataclass
class Registration:
    """One resource the program registered, with what a reviewer needs to see of it."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    provider: str
    dependencies: list[str]
    protect: bool
    ignore_changes: list[str]
    custom_timeouts: dict[str, str]
    delete_before_replace: bool
    inputs: dict[str, Any]
    """Inputs with every secret replaced by SECRET_MASK."""
    aliases: list[dict[str, Any]] = field(default_factory=list)
    """The `aliases` option as the engine receives it: {"urn": ...} or an alias spec (name, type,
    stack, project, parentUrn, noParent; empty fields mean "as now")."""
    outputs: dict[str, Any] = field(default_factory=dict)
    computed: list[str] = field(default_factory=list)
    """Output keys whose values the cloud would compute (the mock made them up)."""


@dataclass
class Recording:
    resources: list[Registration]
    stack_outputs: dict[str, Any]
    secret_outputs: set[str]
    invokes: list[tuple[str, dict[str, Any]]]

    def of_type(self, type_: str, outside_gates: bool = False) -> list[Registration]:
        return [
            r
            for r in self.resources
            if r.type == type_
            and not (outside_gates and any(t + "::" in r.parent for t in _NOT_SERVED))
        ]

    def one(self, type_: str) -> Registration:
        found = self.of_type(type_)
        assert len(found) == 1, f"expected one {type_}, found {[r.name for r in found]}"
        return found[0]

    def served(self, type_: str) -> Registration:
        """The one resource of `type_` outside every gate, KEDA and the stack's monitoring (the
        workload's own Deployment, its exposed Service): a gate brings a Deployment, a Service
        and a ConfigMap of its own, KEDA its namespace, Deployments and Services, the monitoring
        a PodMonitoring or a rules ConfigMap."""
        found = self.of_type(type_, outside_gates=True)
        assert len(found) == 1, (
            f"expected one {type_} outside gates, found {[r.name for r in found]}"
        )
        return found[0]

    def named(self, name: str) -> Registration:
        return next(r for r in self.resources if r.name == name)

    def kubernetes_objects(self) -> Iterator[Registration]:
        return (r for r in self.resources if r.type.startswith("kubernetes:") and r.custom)

    def by_urn(self, urn: str) -> Registration | None:
        return next((r for r in self.resources if r.urn == urn), None)


class RecordingMonitor(runtime_mocks.MockMonitor):
    """The mock monitor, keeping what it is told beyond inputs: parent, deps, options."""

    def __init__(self, mocks: CloudMocks) -> None:
        super().__init__(mocks)
        self.registrations: list[Registration] = []
        self.invokes: list[tuple[str, dict[str, Any]]] = []

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the engine gives (pulumi/pulumi sdk/go/common/resource/urn.go NewURN): the
        parent's whole qualified type chain, and none for children of the root stack. The SDK's
        mock keeps only the parent's last type and prefixes the stack's, so state URNs, aliases and
        the golden states in tests/golden/ would not be the ones `pulumi up` uses."""
        if parent:
            qualified = parent.split("::")[2]
            if qualified != ROOT_STACK_TYPE:
                type_ = f"{qualified}${type_}"
        return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{type_}::{name}"

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        response = super().RegisterResource(request)
        if request.type == ROOT_STACK_TYPE:
            return response
        inputs = rpc.deserialize_properties(request.object, keep_unknowns=True)
        registration = Registration(
            type=request.type,
            name=request.name,
            urn=response.urn,
            parent=request.parent,
            custom=request.custom,
            provider=request.provider,
            dependencies=sorted(set(request.dependencies)),
            protect=bool(request.protect),
            ignore_changes=list(request.ignoreChanges),
            custom_timeouts={
                k: v
                for k, v in (
                    ("create", request.customTimeouts.create),
                    ("update", request.customTimeouts.update),
                    ("delete", request.customTimeouts.delete),
                )
                if v
            },
            delete_before_replace=bool(request.deleteBeforeReplace),
            inputs=mask_secrets(inputs),
            aliases=[_alias(a) for a in request.aliases],
        )
        state = self.resources[response.urn].state if response.urn in self.resources else {}
        registration.outputs = mask_secrets(
            {k: v for k, v in state.items() if k not in inputs or v != unwrap_secrets(inputs[k])}
        )
        registration.computed = [k for k in COMPUTED_KEYS.get(request.type, []) if k in state]
        self.registrations.append(registration)
        return response

    def Invoke(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        args = rpc.deserialize_properties(request.args)
        self.invokes.append((request.tok, mask_secrets(args)))
        return super().Invoke(request)


def _alias(alias: Any) -> dict[str, Any]:
    """One entry of RegisterResourceRequest.aliases (pulumi alias.proto: a URN or a Spec)."""
    if alias.WhichOneof("alias") == "urn":
        return {"urn": alias.urn}
    spec = alias.spec
    return {
        "name": spec.name,
        "type": spec.type,
        "stack": spec.stack,
        "project": spec.project,
        "parentUrn": spec.parentUrn,
        "noParent": spec.noParent,
    }


def _to_config_string(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def run_program(
    config: Mapping[str, Any],
    *,
    stack: str = "test",
    secret_keys: tuple[str, ...] = (),
    program: Path = ROOT / "__main__.py",
    preview: bool = False,
    stack_file: Path | None = None,
) -> Recording:
    """Run `program` for `config` (fully-qualified keys, structured values) and record it.

    Raises whatever the program raises (e.g. ConfigError) after the engine settles.
    """
    settings.set_root_resource(None)  # type: ignore[arg-type]
    set_all_config({k: _to_config_string(v) for k, v in config.items()}, list(secret_keys))
    mocks = CloudMocks()
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack, preview=preview, monitor=monitor)

    def program_main() -> None:
        runpy.run_path(str(program), run_name="__main__")

    # The program learns where `secure:` leaves sit from the stack file (components/config/
    # source.py); the engine runs it beside Pulumi.<stack>.yaml, the offline plan names the file.
    previous = os.environ.pop(STACK_FILE_ENV, None)
    if stack_file is not None:
        os.environ[STACK_FILE_ENV] = str(stack_file)
    try:
        pulumi.runtime.test(program_main)()
    finally:
        os.environ.pop(STACK_FILE_ENV, None)
        if previous is not None:
            os.environ[STACK_FILE_ENV] = previous
    root = settings.get_root_resource()
    outputs, secret = _resolve_outputs(getattr(root, "outputs", {}) or {})
    return Recording(
        resources=monitor.registrations,
        stack_outputs=outputs,
        secret_outputs=secret,
        invokes=monitor.invokes,
    )


def _resolve_outputs(outputs: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    resolved: dict[str, Any] = {}
    secret: set[str] = set()

    async def resolve(key: str, value: Any) -> None:
        out = pulumi.Output.from_input(value)
        resolved[key] = await out.future()
        if await out.is_secret():
            secret.add(key)

    for key, value in outputs.items():
        _sync_await(resolve(key, value))
    return resolved, secret
