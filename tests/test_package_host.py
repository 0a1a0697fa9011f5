"""The package's real provider host (provider/, issue 33), started as the engine starts a Python
plugin: its schema over gRPC, and Construct registering what the Python program registers."""

import dataclasses
import inspect
import json
import tomllib
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pytest
from google.protobuf import json_format
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.util import camel_case
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import engine_pb2, provider_pb2
from pulumi.runtime.resource import _create_provider_ref
from pulumi.runtime.sync_await import _sync_await

from components.config import typed
from components.package import HOSTED, NAME
from components.public import PUBLIC_COMPONENTS
from tests.package_host import (
    PLUGIN,
    Served,
    ServedMonitor,
    served_host,
    toolchain_python,
)
from tests.package_samples import SAMPLES, Sample
from tools.engine import (
    PROJECT,
    CloudMocks,
    Recording,
    RecordingMonitor,
    Registration,
    run_program,
)

ROOT = Path(__file__).resolve().parent.parent
STACK = "test"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The real host, started in a working directory of its own (the engine's, not the plugin's)."""
    monitor = ServedMonitor(CloudMocks(), PROJECT, STACK)
    with served_host(monitor, tmp_path_factory.mktemp("pwd")) as served:
        yield served


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


def test_the_schema_serves_every_public_component_and_the_api_key(
    schema: dict[str, Any],
) -> None:
    assert set(schema["resources"]) == {token(c) for c in HOSTED}, (
        "the host must serve exactly components.package.HOSTED under gke-gpu:index:<Class>"
    )
    missing = {token(c) for c in PUBLIC_COMPONENTS} - set(schema["resources"])
    assert not missing, f"public components a TypeScript or YAML program cannot use: {missing}"


@pytest.mark.parametrize("component", HOSTED, ids=lambda c: c.__name__)
def test_each_component_has_typed_described_inputs_and_outputs(
    schema: dict[str, Any], component: type
) -> None:
    resource = schema["resources"][token(component)]
    assert resource["isComponent"] and resource.get("description"), (
        f"{component.__name__}: a consumer's SDK shows the class docstring as its documentation"
    )
    inputs, outputs = resource["inputProperties"], resource.get("properties", {})
    python_inputs = {camel_case(k) for k in typed.annotations(args_type(component))}
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


def _defaulted(cls: type) -> set[str]:
    """The fields of a nested Args type a Python caller may leave out (schema names)."""
    if dataclasses.is_dataclass(cls):
        return {
            camel_case(f.name)
            for f in dataclasses.fields(cls)
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        }
    if typing.is_typeddict(cls):
        return {camel_case(k) for k in cls.__optional_keys__}
    return {camel_case(k) for k in getattr(cls, "_field_defaults", {})}


def test_a_nested_input_a_python_caller_may_leave_out_is_optional_in_the_schema(
    schema: dict[str, Any],
) -> None:
    python_types = Analyzer(NAME).analyze(list(HOSTED))["type_definitions"]
    required_with_default = {
        f"{name}.{key}"
        for name, definition in python_types.items()
        for key in set(schema["types"][f"{NAME}:index:{name}"].get("required", []))
        & _defaulted(definition.python_type)
    }
    assert not required_with_default, (
        "a TypeScript or YAML consumer must give these although they have a default: "
        f"{sorted(required_with_default)}"
    )


def test_every_hosted_component_has_a_sample() -> None:
    assert {c.__name__ for c in HOSTED} <= set(SAMPLES), (
        "tests/package_samples.py needs inputs for each hosted component: Construct is proven "
        "per component"
    )


def _in_component(recording: list[Registration], token: str) -> list[tuple[Any, ...]]:
    """What the engine received for the component and its children, in a comparable form: URN
    (type chain and name), type, parent's name, custom, the provider it goes through, what it
    depends on, and its inputs (secrets masked). The component's own parent is left out: the
    stack in the program, none here (the engine leaves the root stack out of the URN)."""
    return sorted(
        (
            r.urn,
            r.type,
            r.parent.split("::")[-1] if r.type != token else "",
            r.custom,
            r.provider,
            r.dependencies,
            json.dumps(r.inputs, sort_keys=True),
        )
        for r in recording
        if r.type == token or f"{token}$" in r.urn
    )


def _program(name: str, tmp_path: Path) -> Recording:
    """The sample's Python program, run as a stack of its own; it exports which of the
    component's outputs it set."""
    program = tmp_path / "__main__.py"
    program.write_text(
        "import inspect\nimport pulumi\nfrom tests.package_samples import SAMPLES, Sample\n"
        f"component = SAMPLES[{name!r}].program('sample')\n"
        "names = [k for k in inspect.get_annotations(type(component)) if k[0] != '_']\n"
        "pulumi.export('set', sorted(k for k in names if getattr(component, k) is not None))\n"
    )
    return run_program({}, stack=STACK, program=program)


@dataclass
class Request:
    """What the engine forwards to the plugin for a consumer's component (ConstructRequest)."""

    inputs: Any
    dependencies: dict[str, Any]
    providers: dict[str, str]


def _consumer(monitor: RecordingMonitor, sample: Sample) -> Request:
    """The consumer's program, registering with the monitor the host registers with, and what the
    engine forwards of its component: the inputs as its SDK serializes them for a remote
    component (resource references; output values keeping secrets and dependencies, since the
    host accepts outputs: pulumi 3.272.0 provider/server.py GetPluginInfo/Configure,
    acceptOutputs=True), each input's dependencies, and its providers as references."""
    settings.set_root_resource(None)  # type: ignore[arg-type]
    pulumi.runtime.set_mocks(CloudMocks(), project=PROJECT, stack=STACK, monitor=monitor)
    sent = sample.consumer()
    deps: dict[str, list[pulumi.Resource]] = {}
    inputs = _sync_await(rpc.serialize_properties(sent.inputs, deps, keep_output_values=True))
    urns = {k: sorted({str(_sync_await(r.urn.future())) for r in rs}) for k, rs in deps.items()}
    return Request(
        inputs,
        {k: provider_pb2.ConstructRequest.PropertyDependencies(urns=u) for k, u in urns.items()},
        {p.package: _sync_await(_create_provider_ref(p)) for p in sent.providers},
    )


def _references(value: Any) -> list[str]:
    """The URNs of the resource references in a Struct (as a dict)."""
    if isinstance(value, list):
        return [urn for item in value for urn in _references(item)]
    if not isinstance(value, dict):
        return []
    if value.get(rpc._special_sig_key) == rpc._special_resource_sig:  # noqa: SLF001
        return [value["urn"]]
    return [urn for item in value.values() for urn in _references(item)]


@pytest.mark.parametrize("component", HOSTED, ids=lambda c: c.__name__)
def test_construct_registers_what_the_python_program_registers(
    served: Served, component: type, tmp_path: Path
) -> None:
    client, monitor = served.client, served.monitor
    expected = _program(component.__name__, tmp_path)
    request = _consumer(monitor, SAMPLES[component.__name__])
    monitor.registrations.clear()
    response = client.Construct(
        provider_pb2.ConstructRequest(
            project=PROJECT,
            stack=STACK,
            name="sample",
            type=token(component),
            inputs=request.inputs,
            inputDependencies=request.dependencies,
            providers=request.providers,
            monitorEndpoint=served.address,
            parallel=1,
        )
    )
    got, want = (
        _in_component(r, token(component)) for r in (monitor.registrations, expected.resources)
    )
    assert [r[:2] for r in got] == [r[:2] for r in want], "the children's types and names"
    assert got == want, (
        "Construct through the package must register the program's resources, with their "
        "providers, dependencies and inputs"
    )
    assert response.urn == expected.one(token(component)).urn
    errors = [message for severity, message in served.engine.logs if severity == engine_pb2.ERROR]
    assert not errors, f"the host logged errors to the engine: {errors}"
    state = json_format.MessageToDict(response.state)
    assert set(state) == {camel_case(k) for k in expected.stack_outputs["set"]}, (
        "Construct must return every output the component sets"
    )
    registered = {r.urn for r in monitor.registrations}
    assert set(_references(state)) <= registered, (
        "an output that is a resource (a provider, a node pool) must come back as a reference "
        "to the resource Construct registered"
    )
