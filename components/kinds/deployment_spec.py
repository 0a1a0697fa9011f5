"""A Deployment's capabilities (components/kinds/deployment.py registers it)."""

from __future__ import annotations

from .spec import KindSpec

DEPLOYMENT = KindSpec(
    name="Deployment",
    stack_kind="Deployment",
    # A replica on one node; with `hosts` > 1 it is a LeaderWorkerSet group.
    serves=lambda w: w.hosts <= 1,
    type_token="kubernetes:apps/v1:Deployment",
    object_suffix="",
    namespace_objects=(),
    holds_replicas=True,
    completes=False,
    scales=True,
    serves_http=True,
    immutable_template=False,
    claims_storage=False,
    spans_nodes=False,
    needs=frozenset(),
    takes=frozenset(),
)
