"""A Deployment: long-running, interchangeable replicas (model servers)."""

from __future__ import annotations

from typing import Any

import pulumi_kubernetes as k8s

from ..config import WorkloadConfig
from ..manifest import manifest
from .base import Kind, Request, replicas
from .deployment_spec import DEPLOYMENT


def deployment_strategy(w: WorkloadConfig) -> dict[str, Any]:
    """surge: one extra pod at a time, never below the wanted count (the config layer chose it
    only where the pool has a spare GPU at its maximum). replace: one pod down at a time, so a
    rollout never waits for a GPU the pool cannot add; one replica is simply recreated."""
    if w.rollout == "surge":
        return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    if w.max_replicas <= 1:
        return {"type": "Recreate"}
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}


class Deployment(Kind):
    spec = DEPLOYMENT
    pod_spec_path = ("spec", "template", "spec")

    def register(self, request: Request) -> k8s.apps.v1.Deployment:
        w = request.workload
        return k8s.apps.v1.Deployment(
            f"{request.name}-deployment",
            metadata=manifest(self.object_metadata(w, request.metadata)),
            spec=manifest(
                {
                    **replicas(w),
                    "selector": {"matchLabels": request.selector},
                    "strategy": deployment_strategy(w),
                    "template": request.template,
                }
            ),
            opts=request.waits,
        )
