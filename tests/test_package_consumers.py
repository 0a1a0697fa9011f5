"""The consumer examples (issue 33) against the schema the real package host serves: every
gke-gpu component type, input and output that examples/yaml/, examples/yaml-existing/ and
examples/typescript/ use exists, and every required input is given."""

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.package import HOSTED, NAME
from tests.conftest import NODE_POOL, ROOT
from tests.package_host import served_schema
from tools.engine import run_program

YAML_EXAMPLE = ROOT / "examples" / "yaml" / "Pulumi.yaml"
# The existing-cluster one (tests/real/test_package_sdks.py previews it with the real engine).
YAML_EXISTING = ROOT / "examples" / "yaml-existing" / "Pulumi.yaml"
TS_EXAMPLE = ROOT / "examples" / "typescript" / "index.ts"
# Every resource has these outputs (the engine's, not the schema's).
BUILTIN_OUTPUTS = {"urn", "id"}

Use = tuple[str, dict[str, Any], set[str]]
"""A component use: its type token, the inputs given (nested as written), the outputs read."""


def yaml_uses(path: Path = YAML_EXAMPLE) -> dict[str, Use]:
    """Each resource of a Pulumi YAML program: type, properties, and the `${name.output}` it
    reads anywhere in the program."""
    document = yaml.safe_load(path.read_text())
    text = path.read_text()
    return {
        name: (
            resource["type"],
            resource.get("properties") or {},
            set(re.findall(r"\$\{" + re.escape(name) + r"\.(\w+)", text)),
        )
        for name, resource in document["resources"].items()
        if resource["type"].startswith(f"{NAME}:")
    }


def object_literal(text: str, start: int) -> tuple[dict[str, Any], int]:
    """The keys of the TypeScript object literal opening at text[start] == '{', nested objects
    and arrays of objects as dicts and lists (values that are not objects become None); skips
    strings and `//` comments. Returns it and the index past its closing brace."""
    result: dict[str, Any] = {}
    i, key = start + 1, None
    while i < len(text):
        c = text[i]
        if text.startswith("//", i):
            i = text.index("\n", i)
            continue
        if c in "\"'`":
            i = text.index(c, i + 1) + 1
            continue
        if c == "{":
            value, i = object_literal(text, i)
            if key is not None:
                result[key] = value
            continue
        if c == "[":
            items, i = _array(text, i)
            if key is not None:
                result[key] = items
            continue
        if c == "}":
            return result, i + 1
        match = re.compile(r"(\w+)\s*:").match(text, i)
        if match and (key is None or text[i - 1] in ",{ \n"):
            key = match.group(1)
            result.setdefault(key, None)
            i = match.end()
            continue
        if c == ",":
            key = None
        i += 1
    raise ValueError("unclosed object literal")


def _array(text: str, start: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    i = start + 1
    while text[i] != "]":
        if text.startswith("//", i):
            i = text.index("\n", i)
        elif text[i] in "\"'`":
            i = text.index(text[i], i + 1) + 1
        elif text[i] == "{":
            item, i = object_literal(text, i)
            items.append(item)
        else:
            i += 1
    return items, i + 1


def typescript_uses(path: Path = TS_EXAMPLE) -> dict[str, Use]:
    """Each `const x = new gkegpu.Class("name", {...})`: its token, inputs and the `x.output` the
    program reads."""
    text = path.read_text()
    uses: dict[str, Use] = {}
    for match in re.finditer(r"const (\w+) = new gkegpu\.(\w+)\(\s*\"[^\"]+\",\s*", text):
        inputs, _ = object_literal(text, match.end())
        variable = match.group(1)
        outputs = set(re.findall(r"\b" + variable + r"\.(\w+)", text))
        uses[variable] = (f"{NAME}:index:{match.group(2)}", inputs, outputs)
    return uses


def problems(schema: dict[str, Any], use: Use) -> list[str]:
    """What a use asks of the schema that the schema does not have."""
    token, inputs, outputs = use
    resource = schema["resources"].get(token)
    if resource is None:
        return [f"{token} is not served"]
    found = _inputs(
        schema, token, resource["inputProperties"], resource.get("requiredInputs", []), inputs
    )
    missing_outputs = outputs - set(resource.get("properties", {})) - BUILTIN_OUTPUTS
    return found + [f"{token}: no output {o}" for o in sorted(missing_outputs)]


def _inputs(
    schema: dict[str, Any], where: str, props: dict[str, Any], required: list[str], given: Any
) -> list[str]:
    """What `given` (an object of inputs) names that `props` lacks, and the `required` it
    lacks; nested objects of the package's own types are checked against their types."""
    if not isinstance(given, dict):
        return []
    found = [f"{where}: no input {k}" for k in given if k not in props]
    found += [f"{where}: required {k} not given" for k in required if k not in given]
    for key, value in given.items():
        prop = props.get(key, {})
        prop = prop.get("items", prop) if isinstance(value, list) else prop
        ref = prop.get("$ref", "")
        if ref.startswith(f"#/types/{NAME}:index:"):
            nested = schema["types"][ref.removeprefix("#/types/")]
            for item in value if isinstance(value, list) else [value]:
                found += _inputs(
                    schema,
                    f"{where}.{key}",
                    nested.get("properties", {}),
                    nested.get("required", []),
                    item,
                )
    return found


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return served_schema(tmp_path_factory.mktemp("pwd"))


def _cases() -> list[Any]:
    return [
        pytest.param(use, id=f"{example}:{name}:{use[0]}")
        for example, uses in (
            ("yaml", yaml_uses()),
            ("yaml-existing", yaml_uses(YAML_EXISTING)),
            ("typescript", typescript_uses()),
        )
        for name, use in uses.items()
    ]


@pytest.mark.parametrize("use", _cases())
def test_each_component_an_example_uses_is_served_with_its_inputs_and_outputs(
    schema: dict[str, Any], use: Use
) -> None:
    found = problems(schema, use)
    assert not found, f"the example asks what the package does not serve: {found}"


def test_the_examples_build_a_cluster_a_gpu_pool_and_a_service_on_it() -> None:
    hosted = {f"{NAME}:index:{c.__name__}" for c in HOSTED}
    needed = {f"{NAME}:index:{c}" for c in ("GkeCluster", "GpuNodePool", "GpuService")}
    for example, uses in (("yaml", yaml_uses()), ("typescript", typescript_uses())):
        tokens = {use[0] for use in uses.values()}
        assert tokens <= hosted, f"{example}: unknown components {sorted(tokens - hosted)}"
        assert needed <= tokens, f"{example}: a consumer's first program needs {sorted(needed)}"


def test_the_checks_see_a_wrong_input_a_missing_required_one_and_an_unknown_output(
    schema: dict[str, Any],
) -> None:
    token = f"{NAME}:index:ApiKey"
    assert problems(schema, (token, {"workload": "llm"}, {"value", "urn"})) == []
    assert problems(schema, (token, {"workload": "llm", "name": "x"}, set())) == [
        f"{token}: no input name"
    ]
    assert problems(schema, (token, {}, set())) == [f"{token}: required workload not given"]
    assert problems(schema, (token, {"workload": "llm"}, {"key"})) == [f"{token}: no output key"]


def test_the_typescript_reader_sees_nested_inputs_and_outputs() -> None:
    uses = typescript_uses()
    _, inputs, outputs = uses["llm"]
    assert inputs["workload"]["gpu"] == {"type": None, "count": None}
    assert "image" in inputs["workload"] and "kubeconfig" in inputs
    assert outputs == {"url", "apiKey"}
    assert inputs["kubeconfig"] is None, "the service makes its provider on the kubeconfig"
    assert object_literal("{ // GKE's\n a: 1 }", 0) == ({"a": None}, 18), "comments are skipped"
    assert uses["l4"][2] == {"name", "servicePool"}, (
        "what GpuService waits for and lands on, read from the pool"
    )


# The YAML example's gke-gpu resources, built in order by the package's provider (what the host
# runs for Construct: the same name mapping, enums and integers), each `${x.output}` of a gke-gpu
# resource read from the one built before it as Construct returns it (get_state: schema names,
# enum values), its Kubernetes provider built as declared (`${gke}` is that provider), the others
# (the namespace, the CA) given as stand-in strings. An output the cloud computes (the cluster's
# name) is its value as the example sets it: the engine resolves it before Construct.
EXAMPLE_PROGRAM = """
import re
import yaml
import pulumi
import pulumi_kubernetes as k8s
from components.package import NAME
from components.serve import GkeGpuProvider

provider = GkeGpuProvider("0.0.0")
built = {}
document = yaml.safe_load(open(EXAMPLE))
KNOWN = {
    "cluster.name": document["resources"]["cluster"]["properties"]["cluster"]["name"],
    "cluster.nodeServiceAccount": "gpu-nodes@acme-ml-dev.iam.gserviceaccount.com",
}

def output(name, key):
    component = built[name]
    state = provider.get_state(component, provider._component_defs[type(component).__name__])
    value = state.get(key)
    return KNOWN.get(f"{name}.{key}", value) if isinstance(value, pulumi.Output) else value

def resolve(value):
    if isinstance(value, dict):
        return {k: resolve(v) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v) for v in value]
    whole = re.fullmatch(r"\\$\\{([\\w-]+)\\}", str(value))
    if whole is not None and whole.group(1) in built:
        return built[whole.group(1)]
    match = re.fullmatch(r"\\$\\{([\\w-]+)\\.(\\w+)(\\.\\w+)*\\}", str(value))
    if match is None:
        return value
    name, key = match.group(1), match.group(2)
    return output(name, key) if name in built else f"<{name}.{key}>"

for name, resource in document["resources"].items():
    if resource["type"] == "pulumi:providers:kubernetes":
        props = resolve(resource["properties"])
        built[name] = k8s.Provider(
            name, kubeconfig=props["kubeconfig"], cluster_identifier=props["clusterIdentifier"])
    if resource["type"].startswith(NAME + ":"):
        inputs = resolve(resource.get("properties") or {})
        built[name] = provider._components[resource["type"].rsplit(":", 1)[1]](
            name, provider.map_inputs(inputs, provider._component_defs[
                resource["type"].rsplit(":", 1)[1]]), None)
"""


def test_the_yaml_examples_service_lands_on_the_examples_gpu_pool(tmp_path: Path) -> None:
    program = tmp_path / "example.py"
    program.write_text(EXAMPLE_PROGRAM.replace("EXAMPLE", repr(str(YAML_EXAMPLE))))
    recording = run_program({}, stack="test", program=program)
    pools = [r.inputs["name"] for r in recording.of_type(NODE_POOL) if r.name == "l4-pool"]
    deployment = recording.served("kubernetes:apps/v1:Deployment")
    selector = deployment.inputs["spec"]["template"]["spec"]["nodeSelector"]
    assert [selector["cloud.google.com/gke-nodepool"]] == pools, (
        "GpuService selects its pool by GKE name, a hash of the pool's settings: the example "
        "hands GpuService the pool's own `servicePool`, or the model never schedules"
    )
