"""The package's real provider host (provider/, issue 33), started as the engine starts a Python
plugin: its schema over gRPC, and Construct registering what the Python program registers."""

import inspect
import json
import tomllib
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.util import camel_case
from pulumi.runtime import rpc
from pulumi.runtime.proto import engine_pb2, provider_pb2
from pulumi.runtime.sync_await import _sync_await

from components.package import HOSTED, NAME, PENDING
from tests.package_host import (
    PLUGIN,
    EngineServicer,
    ServedMonitor,
    engine_side,
    provider_host,
    toolchain_python,
)
from tests.package_samples import SAMPLES
from tools.engine import PROJECT, CloudMocks, Recording, RecordingMonitor, run_program

ROOT = Path(__file__).resolve().parent.parent
STACK = "test"


@dataclass
class Served:
    client: Any
    """The host's ResourceProvider client."""
    monitor: RecordingMonitor
    """What the host registered, recorded."""
    address: str
    """Where the monitor and the engine listen."""
    engine: EngineServicer


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The real host, started in a working directory of its own (the engine's, not the plugin's)."""
    monitor = ServedMonitor(CloudMocks(), PROJECT, STACK)
    with (
        engine_side(monitor) as (address, engine),
        provider_host(address, tmp_path_factory.mktemp("pwd")) as client,
    ):
        yield Served(client, monitor, address, engine)


@pytest.fixture(scope="module")
def schema(served: Served) -> dict[str, Any]:
    request = provider_pb2.GetSchemaRequest(version=0)
    return json.loads(served.client.GetSchema(request).schema)


def token(component: type) -> str:
    return f"{NAME}:index:{component.__name__}"


def args_type(component: type) -> type:
    return inspect.get_annotations(component.__init__)["args"]


def required_inputs(args: type) -> set[str]:
    """What a consumer must give, read from the Python Args: a TypedDict's required keys, a
    class's fields without a default."""
    if typing.is_typeddict(args):
        return {camel_case(k) for k in args.__required_keys__}
    defaults = vars(args)
    return {camel_case(k) for k in inspect.get_annotations(args) if k not in defaults}


def test_the_host_runs_in_the_interpreter_the_uv_toolchain_picks() -> None:
    python = toolchain_python()
    assert python == ROOT / ".venv" / "bin" / "python", (
        f"the uv toolchain would run the plugin with {python}: the repository's uv.lock and .venv "
        "are what `pulumi package add` installs with `uv sync`"
    )
    assert (PLUGIN / "PulumiPlugin.yaml").is_file() and (PLUGIN / "__main__.py").is_file()


def test_the_schema_names_the_package_and_its_version(schema: dict[str, Any]) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert (schema["name"], schema["version"]) == (NAME, version), (
        "consumers pin the package by the library's version: the schema must carry it"
    )


def test_the_schema_serves_every_hosted_component_and_none_pending(
    schema: dict[str, Any],
) -> None:
    assert set(schema["resources"]) == {token(c) for c in HOSTED}, (
        "the host must serve exactly components.package.HOSTED under gke-gpu:index:<Class>"
    )
    assert not {token(c) for c in PENDING} & set(schema["resources"])


@pytest.mark.parametrize("component", HOSTED, ids=lambda c: c.__name__)
def test_each_component_has_typed_described_inputs_and_outputs(
    schema: dict[str, Any], component: type
) -> None:
    resource = schema["resources"][token(component)]
    assert resource["isComponent"] and resource.get("description"), (
        f"{component.__name__}: a consumer's SDK shows the class docstring as its documentation"
    )
    inputs, outputs = resource["inputProperties"], resource.get("properties", {})
    python_inputs = {camel_case(k) for k in typing.get_type_hints(args_type(component))}
    assert set(inputs) == python_inputs, f"{component.__name__}: every Args field is an input"
    assert set(resource.get("requiredInputs", [])) == required_inputs(args_type(component)), (
        f"{component.__name__}: required inputs must be the Args fields without a default"
    )
    python_outputs = {
        camel_case(k) for k in inspect.get_annotations(component) if not k.startswith("_")
    }
    assert set(outputs) == python_outputs, f"{component.__name__}: every output is in the schema"
    undescribed = [
        f"{where}.{name}"
        for where, props in (("input", inputs), ("output", outputs))
        for name, prop in props.items()
        if not prop.get("description") or not ("type" in prop or "$ref" in prop)
    ]
    assert not undescribed, f"{component.__name__}: untyped or undescribed: {undescribed}"


def test_every_referenced_type_is_defined_and_described(schema: dict[str, Any]) -> None:
    text = json.dumps(schema["resources"]) + json.dumps(schema.get("types", {}))
    prefix = f'"#/types/{NAME}:index:'
    refs = {part.split('"')[0] for part in text.split(prefix)[1:]}
    missing = [r for r in refs if f"{NAME}:index:{r}" not in schema.get("types", {})]
    assert not missing, f"the schema references types it does not define: {missing}"
    undescribed = [
        f"{name}.{prop}"
        for name, t in schema.get("types", {}).items()
        for prop, p in t.get("properties", {}).items()
        if not p.get("description")
    ]
    assert not undescribed, f"nested inputs a consumer sees without a description: {undescribed}"


def test_every_hosted_component_has_a_sample() -> None:
    assert {c.__name__ for c in HOSTED} <= set(SAMPLES), (
        "tests/package_samples.py needs inputs for each hosted component: Construct is proven "
        "per component"
    )


def _children(recording: list[Any]) -> list[tuple[str, str, str, bool, str]]:
    """What the engine received, in a comparable form: URN (type chain and name), type, custom,
    and the inputs (secrets masked)."""
    return sorted(
        (r.urn, r.type, r.parent.split("::")[-1], r.custom, json.dumps(r.inputs, sort_keys=True))
        for r in recording
    )


def _program(name: str, tmp_path: Path) -> Recording:
    program = tmp_path / "__main__.py"
    program.write_text(
        f"from tests.package_samples import SAMPLES\nSAMPLES[{name!r}].program('sample')\n"
    )
    return run_program({}, stack=STACK, program=program)


@pytest.mark.parametrize("component", HOSTED, ids=lambda c: c.__name__)
def test_construct_registers_what_the_python_program_registers(
    served: Served, component: type, tmp_path: Path
) -> None:
    client, monitor = served.client, served.monitor
    expected = _program(component.__name__, tmp_path)
    monitor.registrations.clear()
    inputs = _sync_await(rpc.serialize_properties(SAMPLES[component.__name__].inputs, {}))
    response = client.Construct(
        provider_pb2.ConstructRequest(
            project=PROJECT,
            stack=STACK,
            name="sample",
            type=token(component),
            inputs=inputs,
            monitorEndpoint=served.address,
            parallel=1,
        )
    )
    # A component without a parent hangs under the stack in the program, under nothing here:
    # the URN is the same (the engine leaves the root stack out of the type chain).
    got = _children(monitor.registrations)
    assert [r[:2] for r in got] == [r[:2] for r in _children(expected.resources)]
    assert got == [
        (*r[:2], r[2] if r[1] != token(component) else "", *r[3:])
        for r in _children(expected.resources)
    ], "Construct through the package must register the program's resources, inputs and all"
    assert response.urn == expected.one(token(component)).urn
    errors = [message for severity, message in served.engine.logs if severity == engine_pb2.ERROR]
    assert not errors, f"the host logged errors to the engine: {errors}"
    outputs = rpc.deserialize_properties(response.state, keep_unknowns=True)
    assert set(outputs) == set(inspect.get_annotations(component)), (
        "Construct must return every output the schema promises"
    )


@pytest.mark.parametrize(
    "component",
    [
        pytest.param(c, id=c.__name__, marks=pytest.mark.xfail(strict=True, reason=reason))
        for c, reason in PENDING.items()
    ],
)
def test_a_pending_component_is_analyzed_by_pulumi(component: type) -> None:
    """Passes (so fails strictly) the day Pulumi's analyzer accepts the component's Args: then it
    moves from PENDING to HOSTED in components/package.py."""
    ComponentProvider([component], NAME)
