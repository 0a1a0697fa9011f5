"""What a kind declares of itself, below the config layer: one KindSpec per kind, in
`<kind>_spec.py` beside the module that registers it (`<kind>.py`).

The config layer, the platform and the plan ask these capabilities (components/config/variants.py
kind_spec), never the kind's name. Every field is required (no defaults): a kind that forgets one
fails when its module is imported, not in a user's stack. A descriptor module imports
components.facts and this module only (tests/test_layout.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..facts.controllers import Controller
from ..facts.undecided import refuse_undecided

BATCH_KEYS = (
    "queue",
    "activeDeadline",
    "schedule",
    "timeZone",
    "parallelism",
    "completions",
    "output",
)
"""The stack-file keys only some kinds take (KindSpec.takes), in the order the config checks
them."""


class KindKeys(Protocol):
    """The stack-file keys that pick a workload's kind (a WorkloadSpec has them)."""

    @property
    def kind(self) -> str: ...
    @property
    def hosts(self) -> int: ...
    @property
    def schedule(self) -> object: ...


@dataclass(frozen=True, kw_only=True)
class KindSpec:
    """One way a workload runs, as the rest of the program needs to know it."""

    name: str
    """The kind's own name (components/slices.py KINDS)."""
    stack_kind: str
    """The stack file's `kind` it serves (a CronJob is a Job with `schedule`)."""
    serves: Callable[[KindKeys], bool]
    """Whether a workload of `stack_kind` runs as this kind (the keys that refine `kind`)."""
    type_token: str
    """The Pulumi type of the object it registers (`kubernetes:apps/v1:Deployment`)."""
    object_suffix: str
    """What its object's name adds to the workload's (a LeaderWorkerSet's: `-group`)."""
    namespace_objects: tuple[tuple[str, str], ...]
    """(Kubernetes kind, name suffix) of the objects it makes beside its own in the namespace."""
    holds_replicas: bool
    """It keeps a count of long-running pods (spec.replicas, `hosts` pods each): its idle pods are
    its replicas and its most pods its maximum replicas; otherwise it runs `parallelism` pods and
    holds none while idle."""
    completes: bool
    """Its pods run to completion: the batch keys (queue, activeDeadline, schedule, parallelism,
    completions, output) and waitForCompletion are for it, and it gets no readiness probe."""
    scales: bool
    """An autoscaler (HPA, KEDA) may set its replicas: `autoscale` is for it."""
    serves_http: bool
    """Its pods serve requests: expose, apiKey, cache-aware routing and the server's scraped
    metrics are for it."""
    immutable_template: bool
    """A change of its pod template replaces the object, which runs again (a Job): its derived
    requests keep the whole room, so an upgrade of the program does not re-run it."""
    claims_storage: bool
    """Each pod claims a data disk of its own (`storage`)."""
    spans_nodes: bool
    """A replica is a group of `hosts` pods, each on a node of its own."""
    needs: frozenset[Controller]
    """The controllers the platform must run for it (a LeaderWorkerSet: the LWS controller)."""
    takes: frozenset[str]
    """The batch keys of a workload it honours (queue, activeDeadline, schedule, timeZone,
    parallelism, completions, output: BATCH_KEYS): the config layer refuses one set on a kind that
    does not take it, naming the kinds that do, so a new kind never ignores one silently."""

    def __post_init__(self) -> None:
        refuse_undecided(self)

    @property
    def object_kind(self) -> str:
        """Its object's Kubernetes kind, from `type_token`."""
        return self.type_token.rsplit(":", 1)[-1]
