"""A Job: one pod run to completion (training, batch inference)."""

from __future__ import annotations

import pulumi_kubernetes as k8s

from components.config import WorkloadConfig
from components.kinds.base import Kind, Request
from components.manifest import manifest


class Job(Kind):
    name = "Job"
    type_token = "kubernetes:batch/v1:Job"
    pod_spec_path = ("spec", "template", "spec")
    holds_replicas = False
    # A Job's pods may not restart Always (https://kubernetes.io/docs/concepts/workloads/
    # controllers/job/#pod-template: "Only a RestartPolicy equal to Never or OnFailure is
    # allowed"); Never: a failed try is a new pod, counted against backoffLimit.
    restart_policy = "Never"
    unprobed = "a Job"

    def awaited(self, w: WorkloadConfig) -> bool:
        """Only with waitForCompletion: otherwise `pulumi up` returns once the Job is created."""
        return super().awaited(w) and w.wait_for_completion

    def register(self, request: Request) -> k8s.batch.v1.Job:
        """The Job; `pulumi up` waits for it only with waitForCompletion.

        pulumi-kubernetes waits for a Job until its Complete condition is True (provider/pkg/
        await/job.go lines 49-56), so a training Job would hold `pulumi up` for hours. With
        SKIP_AWAIT_ANNOTATION "true" the provider skips that wait (provider/pkg/await/await.go
        newLegacyReadyCondition, lines 1096-1102, and metadata/overrides.go SkipAwaitLogic,
        line 40; pulumi/pulumi-kubernetes at commit 94977969, checked 2026-11-22).
        """
        w = request.workload
        return k8s.batch.v1.Job(
            f"{request.name}-job",
            metadata=manifest(self.object_metadata(w, request.metadata)),
            spec=manifest({"backoffLimit": w.backoff_limit, "template": request.template}),
            opts=request.waits,
        )
