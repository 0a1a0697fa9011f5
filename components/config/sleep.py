"""Whether a workload sleeps when idle, decided here once and read everywhere (issue 32).

A workload sleeps when its autoscale has `minReplicas: 0`: KEDA's HTTP add-on owns its replica
count, zero when idle, woken by the first request (components/service/scale_to_zero.py). Every
layer asks `sleeps` (or `scales_on_metric`, an HPA on a server metric) rather than reading
`min_replicas` itself; tests/test_layout.py holds that. Both accept the parsed spec (the rules)
and the resolved config (everything above), which share the `autoscale.min_replicas` shape.
"""

from __future__ import annotations

from typing import Protocol


class _Scaled(Protocol):
    @property
    def min_replicas(self) -> int: ...


class _Workload(Protocol):
    @property
    def autoscale(self) -> _Scaled | None: ...


def sleeps(w: _Workload) -> bool:
    """KEDA's HTTP add-on owns the replica count: zero when idle, woken by a request."""
    return w.autoscale is not None and w.autoscale.min_replicas == 0


def scales_on_metric(w: _Workload) -> bool:
    """An HPA on a server metric (Autoscaler): Managed Service for Prometheus scrapes it."""
    return w.autoscale is not None and not sleeps(w)
