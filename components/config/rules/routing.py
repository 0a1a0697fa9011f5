"""workloads[].routing: how an exposed workload's gate spreads requests over its replicas.

`cache-aware` makes the gate (HAProxy) the router: it finds each ready replica itself (a headless
Service's DNS records) and sends requests that share a prompt prefix and model to the same one,
unless that replica already carries more than its share (components/service/haproxy.py). A
sleeping model cannot be routed so: its requests pass KEDA's interceptor, which forwards to the
model's Service by Host alone (components/platform/keda.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from ..context import Context
from ..problems import Problem
from ..schema import WorkloadSpec
from ..sleep import sleeps
from ..variants import kind_spec

Routing = Literal["cache-aware", "round-robin"]
CACHE_AWARE: Routing = "cache-aware"
ROUND_ROBIN: Routing = "round-robin"


def _max_replicas(w: WorkloadSpec) -> int:
    return w.autoscale.max_replicas if w.autoscale is not None else w.replicas


def resolve(w: WorkloadSpec) -> Routing:
    """As set; else cache-aware wherever a gate fronts two or more replicas it can reach."""
    if w.routing is not None:
        return w.routing
    routable = (
        w.expose is not None and w.port is not None and kind_spec(w).serves_http and not sleeps(w)
    )
    return CACHE_AWARE if routable and _max_replicas(w) >= 2 else ROUND_ROBIN


def problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    if w.routing != CACHE_AWARE:
        return
    path = f"workloads[{i}].routing"
    if not kind_spec(w).serves_http:
        yield Problem(path, f"a {w.kind} serves no requests. Remove routing.")
    elif sleeps(w):
        yield Problem(
            path,
            "a model that sleeps (autoscale.minReplicas: 0) is reached through KEDA's "
            "interceptor, which forwards to its Service by Host and cannot route by prompt. Set "
            "autoscale.minReplicas: 1, or routing: round-robin.",
        )
    elif w.expose is None or w.port is None:
        yield Problem(
            path,
            "cache-aware routing is done by the gate in front of the model, and only an exposed "
            "workload with a port has one. Add expose (e.g. {port: 443, type: ClusterIP}) and "
            "port, or remove routing.",
        )
