"""A Job: pods run to completion (training, batch inference), queued, sharded or on Spot as its
keys say (components/kinds/base.py Batch)."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from ..config import WorkloadConfig
from ..manifest import manifest
from .base import Batch, Request
from .job_spec import JOB

# What Kueue writes on a queued Job that the program also sends: spec.suspend. Read from
# kubernetes-sigs/kueue at v0.19.2 (8eab6877), pkg/controller/jobs/job/job_controller.go:
# RunWithPodSetsInfo (line 378) sets it false on admission and Suspend (line 166) true again when
# the Job is evicted or preempted, each through a JSON merge patch (pkg/util/client/client.go
# createPatch, client.MergeFrom) naming no field manager, so the API server names it after the
# user agent's part before the first "/" (k8s.io/apiserver pkg/endpoints/handlers/create.go
# managerOrUserAgent): "kueue" (Kueue's pkg/util/useragent Default, "kueue/<version> ...").
# What else it writes is left to it without an entry here:
#   - spec.parallelism and spec.completions only for partial admission, with the annotation
#     kueue.x-k8s.io/job-min-parallelism (job_controller.go lines 385-390), which the program
#     never sets;
#   - the pod template's annotations, labels, nodeSelector, tolerations and scheduling gates
#     (podset.Merge, pkg/podset/podset.go): from the ResourceFlavor (nodeLabels, tolerations:
#     the stack's has none, components/platform/kueue.py queue_objects), topology-aware
#     scheduling (needs a flavor with a topology), and the ProvisioningRequest admission check
#     (pkg/controller/admissionchecks/provisioning/controller.go podSetUpdates: two annotations,
#     and nodeSelector entries only from a ProvisioningRequestConfig's podSetUpdates, which the
#     stack's has none of). New map keys: server-side apply tracks each key's manager, so the
#     program's apply, which does not send them, neither conflicts with nor removes them, and
#     pulumi-kubernetes diffs the live object pruned to the program's own inputs (provider.go
#     Diff, pruneLiveState), so they show no diff either. Ignoring the template's fields instead
#     would hide a real change of the stack (which replaces the Job: its template is immutable).
# ignoreChanges keeps spec.suspend out of the diff, and with server-side apply out of the patch
# while another manager holds it, so an update of the Job neither conflicts with Kueue nor
# suspends it again (pulumi/pulumi-kubernetes at f47bc2d6, the provider tools/real/versions.env
# pins: provider/pkg/provider/provider.go Diff, "Remove any ignored changes from the computed
# diff", and provider/pkg/await/await.go handleSSAIgnoreFields, "Drop the field from the inputs if
# it is present on the cluster and managed by another manager"). The Job is still created
# suspended: ignoreChanges does not apply to a create. A CronJob needs none: Kueue 0.19.2 has no
# CronJob integration (pkg/controller/jobs/), it manages the Jobs the CronJob creates, which the
# program does not.
KUEUE_WRITES = ("spec.suspend",)


class Job(Batch):
    spec = JOB
    pod_spec_path = ("spec", "template", "spec")

    def awaited(self, w: WorkloadConfig) -> bool:
        """Only with waitForCompletion: otherwise `pulumi up` returns once the Job is created."""
        return super().awaited(w) and w.spec.wait_for_completion

    def options(self, request: Request) -> pulumi.ResourceOptions:
        """The Job's own options: a queued Job's leave KUEUE_WRITES to Kueue."""
        if request.workload.queue is None:
            return request.waits
        return pulumi.ResourceOptions.merge(
            request.waits, pulumi.ResourceOptions(ignore_changes=list(KUEUE_WRITES))
        )

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
            opts=self.options(request),
        )
