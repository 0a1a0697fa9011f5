"""A CronJob: a Job with `schedule`, run on it (nightly batch inference), queued or not.

Its Jobs carry what a Job would (components/kinds/base.py Batch): the queue label and the run
length in the job template's metadata, and the time cap (activeDeadlineSeconds) in its spec, which
the CronJob controller copies to each Job it creates
(https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#writing-a-cronjob-spec,
"jobTemplate ... has exactly the same schema as a Job"), so Kueue queues each run and each run
stops at the cap. Kueue writes on those Jobs, never on the CronJob, so the CronJob leaves no field
to it (components/kinds/job.py KUEUE_WRITES).
"""

from __future__ import annotations

from typing import Any

import pulumi_kubernetes as k8s

from ..config import WorkloadConfig
from ..manifest import manifest
from .base import Batch, Request
from .cron_job_spec import CRON_JOB

# Finished Jobs kept to read their logs: Kubernetes' own defaults, stated so the count is bounded
# whatever the API server's defaulting (cron-jobs/#jobs-history-limits: "successfulJobsHistoryLimit
# ... defaults to 3", "failedJobsHistoryLimit ... defaults to 1").
SUCCESSFUL_HISTORY = 3
FAILED_HISTORY = 1


class CronJob(Batch):
    spec = CRON_JOB
    pod_spec_path = ("spec", "jobTemplate", "spec", "template", "spec")
    rollout_words = "each run is a new Job on the schedule; a change applies from the next run"

    def awaited(self, w: WorkloadConfig) -> bool:
        """Never: the runs come later, on the schedule."""
        del w
        return False

    def cron_spec(self, w: WorkloadConfig, job: dict[str, Any]) -> dict[str, Any]:
        """No run starts while the last one runs (concurrencyPolicy Forbid: a nightly run that
        waits in the queue past the next night skips that night rather than doubling the GPUs),
        the schedule read in its time zone (`.spec.timeZone`, cron-jobs/#time-zones), and the
        finished Jobs kept bounded."""
        assert w.spec.schedule is not None
        return {
            "schedule": w.spec.schedule,
            "timeZone": w.spec.time_zone,
            "concurrencyPolicy": "Forbid",
            "successfulJobsHistoryLimit": SUCCESSFUL_HISTORY,
            "failedJobsHistoryLimit": FAILED_HISTORY,
            "jobTemplate": job,
        }

    def register(self, request: Request) -> k8s.batch.v1.CronJob:
        w = request.workload
        job = {
            "metadata": self.job_metadata(w, {"labels": request.metadata.get("labels", {})}),
            "spec": self.job_spec(w, request.template),
        }
        return k8s.batch.v1.CronJob(
            f"{request.name}-cronjob",
            metadata=manifest(self.object_metadata(w, request.metadata)),
            spec=manifest(self.cron_spec(w, job)),
            opts=request.waits,
        )
