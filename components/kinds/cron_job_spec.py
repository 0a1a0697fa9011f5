"""A CronJob's capabilities: a Job with `schedule` (components/kinds/cron_job.py registers it)."""

from __future__ import annotations

from .spec import BATCH_KEYS, KindSpec

CRON_JOB = KindSpec(
    name="CronJob",
    stack_kind="Job",
    serves=lambda w: w.schedule is not None,
    type_token="kubernetes:batch/v1:CronJob",
    object_suffix="",
    namespace_objects=(),
    holds_replicas=False,
    completes=True,
    scales=False,
    serves_http=False,
    # Its next runs take a changed template in place: no run is repeated.
    immutable_template=False,
    claims_storage=False,
    spans_nodes=False,
    needs=frozenset(),
    takes=frozenset(BATCH_KEYS),
)
