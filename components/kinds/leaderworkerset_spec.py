"""A LeaderWorkerSet's capabilities: a Deployment whose replica spans `hosts` nodes (issue 34;
components/kinds/leaderworkerset.py registers it)."""

from __future__ import annotations

from ..facts.controllers import Controller
from .spec import KindSpec

LEADERWORKERSET = KindSpec(
    name="LeaderWorkerSet",
    stack_kind="Deployment",
    serves=lambda w: w.hosts > 1,
    type_token="kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet",
    # `<name>-group`: the controller names a headless Service after the LeaderWorkerSet, and an
    # exposed workload's Service already takes `<name>` (components/kinds/leaderworkerset.py).
    object_suffix="-group",
    # That headless Service (kubernetes-sigs/lws v0.8.0 pkg/controllers/
    # leaderworkerset_controller.go line 194) and the NetworkPolicy that lets a group talk.
    namespace_objects=(("Service", "-group"), ("NetworkPolicy", "-group-peers")),
    holds_replicas=True,
    completes=False,
    scales=True,
    serves_http=True,
    immutable_template=False,
    claims_storage=False,
    spans_nodes=True,
    needs=frozenset({Controller.LWS}),
    takes=frozenset(),
)
