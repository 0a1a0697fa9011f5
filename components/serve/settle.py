"""A remote component's inputs, settled before the component decides anything (issue 41).

The provider host hands a Construct's inputs over as the consumer's SDK sent them (pulumi 3.272.0
provider/server.py `_construct_inputs`, `_select_value`): a top-level input with dependencies or
a secret arrives as an Output, an output value inside an object as an Output
(`rpc.deserialize_output_value`), a secret the consumer's SDK did not send as an output value as
the RPC's secret wrapper (`rpc.deserialize_property` keeps `wrap_rpc_secret` below the top
level), and a value unknown during a preview as `Unknown`. Every one of those Outputs is already
resolved when Construct runs: the host builds it from a finished future, so its data is read
here without waiting (`_data`, the SDK's own single future of an Output's state).

`settle` walks the inputs with the analyzer's schema, before the schema/Input flip
(components/serve/schema.py):

- a property the Python Args take as `pulumi.Input` (a value that flows into a child's inputs)
  is handed over as it is, an Output kept an Output (unknown, secret and dependencies intact);
  a secret wrapper or `Unknown` there becomes the Output it stands for;
- every other property is resolved to its value: known, or refused naming its property path
  (the component decides from it, during a preview too); a secret resolved there is reported
  in `secrets` for the component to keep secret (GpuService: env values and args go through
  its Kubernetes Secret) or refuse; the dependencies of what was resolved are collected;
- a key the schema does not have is refused with the nearest one it has.
"""

import asyncio
import difflib
import json
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.output import _OutputData
from pulumi.runtime import known_types, rpc


@dataclass
class Settled:
    """Inputs with every decided value resolved, and what resolving them found."""

    value: dict[str, Any] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)
    """(property path, reason)."""
    secrets: list[str] = field(default_factory=list)
    """Property paths of secrets resolved to plain values."""
    dependencies: set[pulumi.Resource] = field(default_factory=set)


UNKNOWN_REASON = (
    "is not known yet (another resource computes it during the update), and gke-gpu decides "
    "what it registers from it: pass a value known at preview, or create this component once "
    "that resource exists"
)


@dataclass
class _Walk:
    types: dict[str, Any]
    found: Settled

    def props(
        self, value: Any, props: dict[str, Any], path: str, required: list[str]
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.found.problems.append(
                (path or "(inputs)", f"must be an object, not {_kind(value)}")
            )
            return {}
        self.found.problems += [
            (f"{path}.{key}" if path else key, "is required: set it.")
            for key in required
            if value.get(key) is None
        ]
        out: dict[str, Any] = {}
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            if key not in props:
                self.found.problems.append((where, _unknown_key(key, props)))
                continue
            out[key] = self.prop(item, props[key], where)
        return out

    def prop(self, value: Any, prop: dict[str, Any], path: str) -> Any:
        if not prop.get("plain"):
            return _flowing(value)
        value = self.resolve(value, path)
        if value is None:
            return None
        ref = prop.get("$ref", "")
        if ref.startswith("#/types/"):
            typ = self.types.get(ref.removeprefix("#/types/"), {})
            if "enum" in typ:
                return self.enum(value, typ["enum"], path)
            if typ.get("type") != "object":
                return value
            return self.props(value, typ["properties"], path, typ.get("required", []))
        if not _is(value, prop.get("type")):
            want = TYPE_NAMES.get(prop.get("type", ""), prop.get("type"))
            self.found.problems.append((path, f"must be {want}, not {_kind(value)}."))
            return None
        if prop.get("type") == "array" and isinstance(value, list):
            return [self.prop(v, prop["items"], f"{path}[{i}]") for i, v in enumerate(value)]
        if prop.get("type") == "object" and isinstance(value, dict):
            inner = prop.get("additionalProperties", {})
            return {k: self.prop(v, inner, f"{path}.{k}") for k, v in value.items()}
        return value

    def enum(self, value: Any, members: list[dict[str, Any]], path: str) -> Any:
        allowed = [m["value"] for m in members]
        if value not in allowed:
            listed = ", ".join(json.dumps(a) for a in allowed)
            self.found.problems.append((path, f"must be one of {listed}, not {json.dumps(value)}."))
            return None
        return value

    def resolve(self, value: Any, path: str) -> Any:
        """The value behind an Output, a secret wrapper or an Unknown; None when unknown."""
        while True:
            if isinstance(value, pulumi.Output):
                data = _data(value)
                if data is None or not data.is_known:
                    self.found.problems.append((path, UNKNOWN_REASON))
                    return None
                if data.is_secret:
                    self.found.secrets.append(path)
                self.found.dependencies |= data.resources
                value = data.value
            elif rpc.is_rpc_secret(value):
                self.found.secrets.append(path)
                value = rpc.unwrap_rpc_secret(value)
            elif known_types.is_unknown(value) or value == rpc.UNKNOWN:
                self.found.problems.append((path, UNKNOWN_REASON))
                return None
            else:
                return value


def settle(inputs: dict[str, Any], resource: dict[str, Any], types: dict[str, Any]) -> Settled:
    """`inputs` (schema names) settled against the analyzer's schema of the `resource` and its
    `types` (by token)."""
    found = Settled()
    props, required = resource.get("inputProperties", {}), resource.get("requiredInputs", [])
    found.value = _Walk(types, found).props(inputs, props, "", required)
    found.secrets = sorted(set(found.secrets))
    return found


def _data(output: pulumi.Output[Any]) -> _OutputData[Any] | None:
    """An Output's state when it is already resolved (always so for the host's inputs)."""
    future: asyncio.Future[_OutputData[Any]] = output._data  # noqa: SLF001 - see the module doc
    if not future.done() or future.cancelled() or future.exception() is not None:
        return None
    return future.result()


def _flowing(value: Any) -> Any:
    """A value for a `pulumi.Input` property: the RPC's secret wrapper and unknown become the
    Outputs they stand for; Outputs and plain values stay as they are (lists and maps too)."""
    if rpc.is_rpc_secret(value):
        return pulumi.Output.secret(_flowing(rpc.unwrap_rpc_secret(value)))
    if known_types.is_unknown(value) or value == rpc.UNKNOWN:
        return _unknown_output()
    if isinstance(value, list):
        return [_flowing(v) for v in value]
    if isinstance(value, dict) and not isinstance(value, pulumi.Resource):
        return {k: _flowing(v) for k, v in value.items()}
    return value


def _unknown_output() -> pulumi.Output[Any]:
    future: asyncio.Future[_OutputData[Any]] = asyncio.get_event_loop().create_future()
    future.set_result(_OutputData(resources=set(), value=None, is_known=False, is_secret=False))
    return pulumi.Output._from_data(future)  # noqa: SLF001 - the SDK's own constructor of one


def _unknown_key(key: str, props: dict[str, Any]) -> str:
    near = difflib.get_close_matches(key, list(props), n=1, cutoff=0.6)
    hint = f" Did you mean `{near[0]}`?" if near else ""
    known = ", ".join(sorted(props)) or "none"
    return f"is not an input here.{hint} Known: {known}."


TYPE_NAMES = {
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object (a map)",
}


def _is(value: Any, kind: str | None) -> bool:
    """`value` has the schema's primitive type (numbers arrive as floats over the RPC)."""
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return (
            isinstance(value, int | float) and not isinstance(value, bool) and value == int(value)
        )
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True  # Any, or a type the analyzer did not name


def _kind(value: Any) -> str:
    names = {str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    names |= {list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)
