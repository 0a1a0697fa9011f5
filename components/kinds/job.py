"""A Job: pods run to completion (training, batch inference), queued, sharded or on Spot as its
keys say (components/kinds/base.py Batch)."""

from __future__ import annotations

import pulumi_kubernetes as k8s

from ..config import WorkloadConfig
from ..manifest import manifest
from .base import Batch, Request


class Job(Batch):
    name = "Job"
    type_token = "kubernetes:batch/v1:Job"
    pod_spec_path = ("spec", "template", "spec")

    def serves(self, w: WorkloadConfig) -> bool:
        """A Job without `schedule` (with one it is a CronJob's)."""
        return w.spec.schedule is None

    def awaited(self, w: WorkloadConfig) -> bool:
        """Only with waitForCompletion: otherwise `pulumi up` returns once the Job is created."""
        return super().awaited(w) and w.spec.wait_for_completion

    def register(self, request: Request) -> k8s.batch.v1.Job:
        """The Job; `pulumi up` waits for it only with waitForCompletion.

        pulumi-kubernetes waits for a Job until its Complete condition is True (provider/pkg/
        await/job.go lines 49-56), so a training Job would hold `pulumi up` for hours. With
        SKIP_AWAIT_ANNOTATION "true" the provider skips that wait (provider/pkg/await/await.go
        newLegacyReadyCondition, lines 1096-1102, and metadata/overrides.go SkipAwaitLogic,
        line 40; pulumi/pulumi-kubernetes at commit 94977969, checked 2026-11-22).
        """
        w = request.workload
        metadata = self.job_metadata(w, self.object_metadata(w, request.metadata))
        return k8s.batch.v1.Job(
            f"{request.name}-job",
            metadata=manifest(metadata),
            spec=manifest(self.job_spec(w, request.template)),
            opts=request.waits,
        )
