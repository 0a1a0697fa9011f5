"""The consumer examples (issue 33) against the schema the real package host serves: every
component type, input and output that examples/yaml/ and examples/typescript/ use exists, and
every required input is given. A component still pending (components/package.py PENDING) is
marked xfail(strict=True) with its reason: it fails the day it is served, so the mark goes."""

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.package import HOSTED, NAME, PENDING
from tests.conftest import ROOT
from tests.package_host import served_schema

YAML_EXAMPLE = ROOT / "examples" / "yaml" / "Pulumi.yaml"
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
    }


def object_literal(text: str, start: int) -> tuple[dict[str, Any], int]:
    """The keys of the TypeScript object literal opening at text[start] == '{', nested objects
    and arrays of objects as dicts and lists (values that are not objects become None); skips
    strings. Returns it and the index past its closing brace."""
    result: dict[str, Any] = {}
    i, key = start + 1, None
    while i < len(text):
        c = text[i]
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
        if text[i] in "\"'`":
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


PENDING_TOKENS = {f"{NAME}:index:{c.__name__}": reason for c, reason in PENDING.items()}


def _cases() -> list[Any]:
    cases = []
    for example, uses in (("yaml", yaml_uses()), ("typescript", typescript_uses())):
        for name, use in uses.items():
            reason = PENDING_TOKENS.get(use[0])
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(use, id=f"{example}:{name}:{use[0]}", marks=marks))
    return cases


@pytest.mark.parametrize("use", _cases())
def test_each_component_an_example_uses_is_served_with_its_inputs_and_outputs(
    schema: dict[str, Any], use: Use
) -> None:
    found = problems(schema, use)
    assert not found, f"the example asks what the package does not serve: {found}"


def test_the_examples_use_only_hosted_or_pending_components_and_every_hosted_one() -> None:
    known = {f"{NAME}:index:{c.__name__}" for c in HOSTED} | set(PENDING_TOKENS)
    for example, uses in (("yaml", yaml_uses()), ("typescript", typescript_uses())):
        tokens = {use[0] for use in uses.values()}
        assert tokens <= known, f"{example}: unknown components {sorted(tokens - known)}"
        assert {"gke-gpu:index:ApiKey", "gke-gpu:index:GpuService"} <= tokens


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
    assert "image" in inputs["workload"] and "provider" in inputs and outputs == {"url"}
    assert uses["key"] == (f"{NAME}:index:ApiKey", {"workload": None}, {"value"})
