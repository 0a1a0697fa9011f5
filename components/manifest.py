"""Raw Kubernetes JSON for pulumi-kubernetes arguments."""

from __future__ import annotations

from typing import Any


def manifest(fields: dict[str, Any]) -> Any:
    """Pass Kubernetes JSON (camelCase keys, as in kubectl manifests) to a pulumi-kubernetes arg.

    The provider takes it unchanged; the SDK's TypedDicts only describe the snake_case form, so
    the type checker is told once, here, that the camelCase form is intended.
    """
    return fields


def claim_spec(size: str, storage_class: str | None) -> dict[str, Any]:
    """A PersistentVolumeClaim's spec for one pod's disk: read-write by one node, `size`, and
    the cluster's default StorageClass unless one is named. A StatefulSet's data claims and a
    pod's ephemeral cache claim are both this."""
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": size}},
    }
    if storage_class:
        spec["storageClassName"] = storage_class
    return spec
