"""Raw Kubernetes JSON for pulumi-kubernetes arguments."""

from __future__ import annotations

from typing import Any


def manifest(fields: dict[str, Any]) -> Any:
    """Pass Kubernetes JSON (camelCase keys, as in kubectl manifests) to a pulumi-kubernetes arg.

    The provider takes it unchanged; the SDK's TypedDicts only describe the snake_case form, so
    the type checker is told once, here, that the camelCase form is intended.
    """
    return fields
