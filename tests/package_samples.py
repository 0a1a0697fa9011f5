"""One sample per hosted component (components/package.py HOSTED): the inputs a YAML or
TypeScript consumer sends (schema names, plain values) and the same component built the way a
Python program builds it from the library. tests/test_package_host.py constructs both and compares
what each registers; a component joins by adding its sample here."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pulumi

from components.service.apikey import ApiKey, ApiKeyArgs


@dataclass(frozen=True)
class Sample:
    inputs: dict[str, Any]
    """What a consumer of the package sends Construct, by schema name."""
    program: Callable[[str], pulumi.ComponentResource]
    """The same component with the same inputs, built by a Python program importing the library."""


SAMPLES: dict[str, Sample] = {
    "ApiKey": Sample(
        inputs={"workload": "llm"},
        program=lambda name: ApiKey(name, ApiKeyArgs(workload="llm")),
    ),
}
