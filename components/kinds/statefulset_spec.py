"""A StatefulSet's capabilities (components/kinds/statefulset.py registers it)."""

from __future__ import annotations

from .spec import KindSpec

STATEFULSET = KindSpec(
    name="StatefulSet",
    stack_kind="StatefulSet",
    serves=lambda w: True,
    type_token="kubernetes:apps/v1:StatefulSet",
    object_suffix="",
    # Its headless Service (the pods' stable DNS names).
    namespace_objects=(("Service", "-headless"),),
    holds_replicas=True,
    completes=False,
    scales=True,
    serves_http=True,
    immutable_template=False,
    claims_storage=True,
    spans_nodes=False,
    needs=frozenset(),
    takes=frozenset(),
)
