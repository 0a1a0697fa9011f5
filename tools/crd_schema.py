"""A vendored CRD's OpenAPI v3 schema as tools/crds/<group>_<version>_<kind>.json holds it.

Objects that list their properties are closed (`additionalProperties: false`), as the API
server's strict field validation treats unknown fields, unless the CRD keeps unknown fields
(`x-kubernetes-preserve-unknown-fields`) or types the extra values itself. tools/crds/README.md
describes the format; tests/test_scale_to_zero.py checks the KEDA files equal this function's
output for the vendored manifests.
"""

from __future__ import annotations

import copy
import re
from typing import Any


def _python_pattern(pattern: str) -> str:
    """A Go (RE2) pattern as Python's re takes it: RE2 allows an inline flag group after `^`
    (Kueue's AdmissionCheck controllerName: `^(?i)[a-z]...`), Python only at the very start."""
    match = re.match(r"\^(\(\?[a-z]+\))", pattern)
    return f"{match.group(1)}^{pattern[match.end() :]}" if match else pattern


def _close(node: Any) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            node["pattern"] = _python_pattern(node["pattern"])
        if (
            node.get("type") == "object"
            and "properties" in node
            and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")
        ):
            node["additionalProperties"] = False
        for value in node.values():
            _close(value)
    elif isinstance(node, list):
        for value in node:
            _close(value)


def crd_file(crd: dict[str, Any], version: str, source: str) -> dict[str, Any]:
    """{"source", "schema"} for one served version of a CustomResourceDefinition."""
    (found,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    schema = copy.deepcopy(found["schema"]["openAPIV3Schema"])
    _close(schema)
    # The top level: metadata is the API server's, not the CRD's, to check.
    schema["properties"]["metadata"] = {"type": "object"}
    return {"source": source, "schema": schema}


def file_name(crd: dict[str, Any], version: str) -> str:
    return f"{crd['spec']['group']}_{version}_{crd['spec']['names']['kind']}.json"
