"""A Job's capabilities (components/kinds/job.py registers it)."""

from __future__ import annotations

from .spec import BATCH_KEYS, KindSpec

JOB = KindSpec(
    name="Job",
    stack_kind="Job",
    # Without `schedule` (with one it is a CronJob's).
    serves=lambda w: w.schedule is None,
    type_token="kubernetes:batch/v1:Job",
    object_suffix="",
    namespace_objects=(),
    holds_replicas=False,
    completes=True,
    scales=False,
    serves_http=False,
    # A Job's pod template is immutable: a change replaces the Job, which runs again
    # (tools/replacing.py).
    immutable_template=True,
    claims_storage=False,
    spans_nodes=False,
    needs=frozenset(),
    # `schedule` makes it a CronJob's (cron_job_spec.py), which takes the same keys.
    takes=frozenset(BATCH_KEYS),
)
