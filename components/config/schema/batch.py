"""`workloads[].queue`, `schedule`, `timeZone`, `parallelism`, `completions`, `output`: batch work
that waits for GPUs in a queue, runs on a schedule, in shards, and writes its results to a bucket
(issue 36; the rules are components/config/rules/batch.py)."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from .. import formats
from .base import AbsolutePath, Model, _pattern

# Checked in rules/batch.py, whose messages say what is allowed: a duration (`4h`, `1h30m`), a
# Cloud Storage bucket name, a tz database name.
Duration = Annotated[str, StringConstraints(max_length=20)]
BucketName = Annotated[str, StringConstraints(max_length=222)]
Schedule = Annotated[str, StringConstraints(min_length=1, max_length=100)]
TimeZone = Annotated[str, StringConstraints(max_length=64)]


class QueueSpec(Model):
    """The Job waits in a Kueue queue until GKE grants every node it needs at once (flex-start
    with queued provisioning), then holds them at most `maxRunDuration`."""

    max_run_duration: Duration
    """The longest one run may hold its nodes, e.g. `4h`, `90m` (at most `168h`, flex-start's 7
    days); GKE removes the nodes after it (the ProvisioningRequest's `maxRunDurationSeconds`)."""


class OutputSpec(Model):
    """Where results land: a Cloud Storage bucket mounted read-write (FUSE CSI driver)."""

    bucket: BucketName
    """The bucket (its name alone, without `gs://`); the workload's own Kubernetes service
    account is granted `roles/storage.objectUser` on it, on nothing else.

    Not a `modelCache.bucket` of the stack (the Job could overwrite a served model's weights).
    """
    # derived: the stack's gcp:project (rules/buckets.py advisories).
    project: Annotated[str, _pattern(formats.PROJECT_ID)] | None = None
    """The project that owns the bucket, when it is not this stack's: the plan names it as
    another project's bucket this stack grants write access to.

    Nothing offline can tell which project owns a bucket, so the plan asks you to check it.

    Default: the stack's project (`gcp:project`)
    """
    mount_path: AbsolutePath = "/out"
    """Where it appears in the container: files written there land in the bucket. Not in a
    system folder (`/`, `/etc`, `/usr`, `/lib*`, ...)."""
