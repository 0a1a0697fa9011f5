"""`workloads[].queue`, `schedule`, `timeZone`, `parallelism`, `completions`, `output`: batch work
that waits for GPUs in a queue, runs on a schedule, in shards, and writes its results to a bucket
(issue 36; the rules are components/config/rules/batch.py)."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from components.config.schema.base import AbsolutePath, Model, _pattern

# A duration as Go's time.ParseDuration reads the common forms: hours, minutes, seconds.
Duration = Annotated[str, _pattern(r"(?:[0-9]{1,4}h)?(?:[0-9]{1,4}m)?(?:[0-9]{1,6}s)?")]
# Cloud Storage bucket names (cloud.google.com/storage/docs/buckets#naming): 3-63 characters of
# lowercase letters, digits, dashes, underscores and dots, starting and ending with a letter or
# digit (dotted names up to 222 characters).
BucketName = Annotated[
    str,
    _pattern(r"[a-z0-9](?:[-a-z0-9_.]{1,220})[a-z0-9]"),
    StringConstraints(max_length=222),
]
Schedule = Annotated[str, StringConstraints(min_length=9, max_length=100)]
TimeZone = Annotated[str, _pattern(r"[A-Za-z][-A-Za-z0-9_+/]{0,62}")]


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
    account is granted `roles/storage.objectUser` on it, on nothing else."""
    mount_path: AbsolutePath = "/out"
    """Where it appears in the container: files written there land in the bucket."""
