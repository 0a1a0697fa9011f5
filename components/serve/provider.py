"""The package's provider: Pulumi's ComponentProvider for the hosted classes, with the schema
components/serve/schema.py finishes and inputs settled before a component is constructed
(components/serve/settle.py), and bad input answered as the engine's InputPropertiesError:
each problem at its property path with its fix, never a Python traceback (issue 41).

Construct as pulumi 3.272.0 provider/experimental/component.py `ComponentProvider.construct`
does it (the type's component, its inputs mapped to Python names, the class called with them),
with the settling first; the host's servicer turns InputPropertiesError into gRPC
INVALID_ARGUMENT with the property errors as details (provider/server.py `Construct`,
`create_grpc_invalid_properties_status`), which the engine prints per property.
"""

import json
from enum import Enum
from typing import Any

import pulumi
from pulumi.errors import InputPropertiesError, InputPropertyError, InputPropertyErrorDetails
from pulumi.provider import ConstructResult
from pulumi.provider.experimental.analyzer import TypeDefinition
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.server import ComponentInitError

from ..config.problems import Problem
from ..package import HOSTED, NAME
from .schema import finish
from .settle import Settled, settle

KEEP_SECRET_HINT = (
    "arrived as a secret, and gke-gpu writes this value into its resources' inputs where a "
    "secret would not stay secret: pass secrets as GpuService's `secrets` (named by "
    "`workload.secretEnv`), as `workload.env` values, or in `workload.args` (docs/package.md)"
)


class GkeGpuProvider(ComponentProvider):
    """The hosted components behind the finished schema."""

    def __init__(self, version: str) -> None:
        super().__init__(list(HOSTED), NAME, None, version)
        assert self.schema is not None
        self.analyzed: dict[str, Any] = json.loads(self.schema)
        self.schema = json.dumps(finish(self.analyzed))

    def construct(
        self,
        name: str,
        resource_type: str,
        inputs: pulumi.Inputs,
        options: pulumi.ResourceOptions | None = None,
    ) -> ConstructResult:
        self.validate_resource_type(self._name, resource_type)
        component = resource_type.rsplit(":", maxsplit=1)[-1]
        settled = settle(dict(inputs), self.analyzed["resources"][resource_type], self.types)
        values = _kept_secret(self._components[component], settled)
        if settled.problems:
            raise invalid(component, name, settled.problems)
        definition = self._component_defs[component]
        try:
            mapped = self.map_inputs(values, definition)
        except InputPropertyError as error:
            raise invalid(component, name, [(error.property_path, error.reason)]) from None
        depends = pulumi.ResourceOptions(depends_on=sorted(settled.dependencies, key=id))
        opts = pulumi.ResourceOptions.merge(options, depends) if settled.dependencies else options
        try:
            instance = self._components[component](name, mapped, opts)  # type: ignore[call-arg]
        except pulumi.RunError as error:  # the components' own checks: bad input, said so
            raise invalid(component, name, _problems_of(error)) from None
        except Exception as error:  # a bug: its traceback is what a report needs
            raise ComponentInitError(error) from error
        return ConstructResult(instance.urn, self.get_state(instance, definition))

    def map_complex_output(self, instance_val: Any, type_def: TypeDefinition) -> Any:
        """An output of an object type with its enums as their values: the SDK's own maps an
        enum inside an object as an object and sends `{}` (pulumi 3.272.0
        ComponentProvider.map_complex_output), which GpuNodePool's `servicePool` would hit."""
        if type_def.enum:
            return instance_val.value if isinstance(instance_val, Enum) else instance_val
        return super().map_complex_output(instance_val, type_def)

    @property
    def types(self) -> dict[str, Any]:
        return self.analyzed.get("types", {})


def _kept_secret(component: type, settled: Settled) -> dict[str, Any]:
    """The inputs with each resolved secret kept secret where the component can: a component
    that keeps secrets itself says so (`keep_secret(path, inputs)`, GpuService's: its env values
    and args through its Kubernetes Secret). Any other resolved secret is refused (its path)."""
    values = dict(settled.value)
    keep = getattr(component, "keep_secret", None)
    for path in settled.secrets:
        if keep is None or not keep(path, values):
            settled.problems.append((path, KEEP_SECRET_HINT))
    return values


def invalid(component: str, name: str, problems: list[tuple[str, str]]) -> InputPropertiesError:
    """The engine's error for bad input: every problem at its property path."""
    errors: list[InputPropertyErrorDetails] = [
        {"property_path": path, "reason": reason} for path, reason in problems
    ]
    return InputPropertiesError(
        f"{len(errors)} problem(s) in the inputs of gke-gpu {component} {name!r}; "
        "nothing was created",
        errors,
    )


def _problems_of(error: pulumi.RunError) -> list[tuple[str, str]]:
    """A component's RunError as property problems: its Problems where it kept them
    (ConfigError, ArgsError), else its message under the component."""
    details: list[Problem] = getattr(error, "details", [])
    if details:
        return [(p.path, p.message) for p in details]
    return [("(inputs)", str(error))]


def package_schema(version: str) -> dict[str, Any]:
    """The schema the host serves, without serving it (tools/package_schema.py, the release)."""
    provider = GkeGpuProvider(version)
    assert provider.schema is not None
    return json.loads(provider.schema)
