"""Whether a workload sleeps when idle, decided here once and read everywhere (issue 32).

A workload sleeps when its autoscale has `minReplicas: 0`: KEDA's HTTP add-on owns its replica
count, zero when idle, woken by the first request (components/service/scale_to_zero.py). Every
layer asks `sleeps` (or `scales_on_metric`, an HPA on a server metric) rather than reading
`min_replicas` itself; tests/test_layout.py holds that. Both accept the parsed spec (the rules)
and the resolved config (everything above), whose `spec` it is.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


class _Scaled(Protocol):
    @property
    def min_replicas(self) -> int: ...


class _Workload(Protocol):
    @property
    def autoscale(self) -> _Scaled | None: ...


@runtime_checkable
class _Resolved(Protocol):
    @property
    def spec(self) -> _Workload: ...


def _scale(w: _Workload | _Resolved) -> _Scaled | None:
    return (w.spec if isinstance(w, _Resolved) else w).autoscale


def sleeps(w: _Workload | _Resolved) -> bool:
    """KEDA's HTTP add-on owns the replica count: zero when idle, woken by a request."""
    scale = _scale(w)
    return scale is not None and scale.min_replicas == 0


def scales_on_metric(w: _Workload | _Resolved) -> bool:
    """An HPA on a server metric (Autoscaler): Managed Service for Prometheus scrapes it."""
    return _scale(w) is not None and not sleeps(w)
