"""Batch rules (issue 36): queued Jobs and the pools that serve them, schedules, shards, output.

Sources (checked 2026-11-26):
  GKE: https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest ("Run a
    large-scale workload with flex-start with queued provisioning"; only its opening was readable
    here): a queued-provisioning pool is created with `--flex-start` and
    `--enable-queued-provisioning`; the cluster needs GKE 1.32.2-gke.1652000 or later; Kueue
    (optional) manages the ProvisioningRequests.
  TOOLKIT: GoogleCloudPlatform/cluster-toolkit at 1047080 modules/compute/gke-node-pool/main.tf
    preconditions: "reservation_affinity should be NO_RESERVATION when enable_queued_provisioning
    is true", "autoscaling_total_min_nodes should be 0 when enable_queued_provisioning is true",
    "Both enable_queued_provisioning and spot consumption option cannot be set to true",
    "placement_policy cannot be COMPACT when enable_queued_provisioning is true, unless using
    TPUs", "enable_flex_start needs node auto_repair set to false"; and examples/
    gke-consumption-options/dws-flex-start-queued-provisioning (gke-a3-ultragpu.yaml,
    sample-job.yaml, dws-queues.yaml.tftpl).
  DWS: https://cloud.google.com/kubernetes-engine/docs/concepts/dws: flex-start VMs run "up to 7
    days".
  CRONJOB: https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ (five fields;
    `.spec.timeZone` takes a name of the tz database); the API server's own check of `schedule`
    is rules/cron.py's.
  JOB: https://kubernetes.io/docs/concepts/workloads/controllers/job/ (kubernetes/website at
    003349eb, content/en/docs/concepts/workloads/controllers/job.md), "Job termination and
    cleanup": `.spec.activeDeadlineSeconds` "applies to the duration of the job, no matter how
    many Pods are created", then the Job fails with reason DeadlineExceeded; it needs no queue and
    no particular capacity, so `activeDeadline` is taken with Spot, with or without `queue`.
Autopilot: the GKE page above describes Standard node pools only as far as it could be read;
whether Autopilot serves ProvisioningRequests of class queued-provisioning.gke.io could not be
confirmed here, so `queue` is refused there (with the fix: a Standard cluster).
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Iterator

from ...facts import pins
from ...kinds.spec import BATCH_KEYS
from ..context import Context
from ..problems import Problem
from ..schema import NodePoolSpec, WorkloadSpec
from ..variants import kind_spec, kinds_that
from . import buckets, cron
from .capacity_sources import FLEX_START_MIN_GKE

# DWS: a flex-start VM lives at most seven days, so no run may ask to hold one longer.
MAX_RUN_SECONDS = 7 * 24 * 3600
_UNITS = {"h": 3600, "m": 60, "s": 1}

_DURATION = re.compile(r"(?:[0-9]{1,4}h)?(?:[0-9]{1,4}m)?(?:[0-9]{1,6}s)?")


def seconds(duration: str) -> int:
    """'4h' -> 14400, '1h30m' -> 5400 (the schema's Duration forms)."""
    return sum(int(n) * _UNITS[u] for n, u in re.findall(r"([0-9]+)([hms])", duration))


def pool_problems(i: int, spec: NodePoolSpec, ctx: Context) -> Iterator[Problem]:
    """A queued-provisioning pool follows GKE's rules for one (TOOLKIT, GKE)."""
    if not spec.queued_provisioning:
        return
    path = f"nodePools[{i}]"
    if spec.spot:
        yield Problem(
            f"{path}.spot",
            "queued-provisioning nodes are flex-start VMs, and GKE takes one way to buy a pool's "
            "VMs (cluster-toolkit gke-node-pool: 'Both enable_queued_provisioning and spot ... "
            "cannot be set to true'). Remove spot, or queuedProvisioning.",
        )
    if spec.reservation is not None:
        yield Problem(
            f"{path}.reservation",
            "queued-provisioning nodes never consume a reservation (cluster-toolkit: "
            "'reservation_affinity should be NO_RESERVATION when enable_queued_provisioning is "
            "true'). Remove reservation, or queuedProvisioning.",
        )
    if spec.min_nodes > 0:
        yield Problem(
            f"{path}.minNodes",
            f"{spec.min_nodes}: a queued-provisioning pool scales from zero; its nodes come only "
            "when a ProvisioningRequest is granted and go when the run ends (cluster-toolkit: "
            "'autoscaling_total_min_nodes should be 0'). Set minNodes: 0.",
        )
    if spec.placement == "compact":
        yield Problem(
            f"{path}.placement",
            "GKE does not take compact placement on a queued-provisioning GPU pool "
            "(cluster-toolkit: 'placement_policy cannot be COMPACT when "
            "enable_queued_provisioning is true, unless using TPUs'). Remove placement.",
        )
    channel = ctx.channel
    if channel in pins.CHANNEL_DEFAULT_VERSION:
        default = pins.CHANNEL_DEFAULT_VERSION[channel]
        if pins.gke_version(default) < pins.gke_version(FLEX_START_MIN_GKE):
            yield Problem(
                f"{path}.queuedProvisioning",
                f"flex-start with queued provisioning needs GKE {FLEX_START_MIN_GKE} or later, "
                f"and the {channel} channel creates clusters at {default}. Use a newer channel.",
            )


def workload_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """queue, activeDeadline, schedule, timeZone, parallelism, completions and output: a Job's,
    each within what Kubernetes, Kueue and GKE take."""
    path = f"workloads[{i}]"
    values = {
        "queue": w.queue,
        "activeDeadline": w.active_deadline,
        "schedule": w.schedule,
        "timeZone": None if w.time_zone == "UTC" else w.time_zone,
        "parallelism": w.parallelism,
        "completions": w.completions,
        "output": w.output,
    }
    spec = kind_spec(w)
    refused = [k for k in BATCH_KEYS if values[k] is not None and k not in spec.takes]
    for key in refused:
        why = (
            "which does not take it"
            if spec.completes
            else "it runs until stopped, so it has no run to queue, cap, schedule, shard or collect"
        )
        takers = kinds_that(lambda k, key=key: key in k.takes)
        yield Problem(
            f"{path}.{key}",
            f"is for a {takers}, and this workload is a {w.kind}: {why}. Set kind: {takers}, or "
            "remove it.",
        )
    if refused:
        return
    yield from _queue_problems(path, w, ctx)
    yield from _deadline_problems(path, w, ctx)
    yield from _schedule_problems(path, w, ctx)
    if w.parallelism is not None and w.completions is None:
        yield Problem(
            f"{path}.parallelism",
            "shards run `parallelism` at a time out of `completions`; without completions every "
            "pod would do the same work. Set completions (e.g. completions: 16).",
        )
    if w.output is not None:
        yield from buckets.bucket_problems(f"{path}.output.bucket", w.output.bucket, ctx)
    if w.output is not None and ctx.existing:
        yield Problem(
            f"{path}.output",
            "needs GKE (the Cloud Storage FUSE CSI driver and Workload Identity), and this "
            "cluster is an existing one. Remove it.",
        )


def _queue_problems(path: str, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    if w.queue is None:
        return
    if ctx.mode in ("autopilot", "existing"):
        yield Problem(
            f"{path}.queue",
            f"queued provisioning comes from a Standard node pool with queuedProvisioning: true, "
            f"and cluster.mode is {ctx.mode!r}. Set cluster.mode: standard and add such a pool, "
            "or remove queue.",
        )
    held = seconds(w.queue.max_run_duration)
    if not _DURATION.fullmatch(w.queue.max_run_duration) or not 0 < held <= MAX_RUN_SECONDS:
        yield Problem(
            f"{path}.queue.maxRunDuration",
            f"{ctx.show(f'{path}.queue.maxRunDuration', w.queue.max_run_duration)} is not a run "
            "length GKE grants: give 1s to 168h (a "
            "flex-start VM lives at most 7 days), e.g. '4h' or '90m'.",
        )
    if w.spot:
        yield Problem(
            f"{path}.spot",
            "a queued Job's nodes are flex-start VMs, not Spot. Remove spot, or queue; to cap "
            "how long a Spot Job runs, remove queue and set activeDeadline (e.g. '4h'): it needs "
            "no queue.",
        )
    if w.fallback:
        yield Problem(
            f"{path}.fallback",
            "a queued Job's nodes come from its queued-provisioning pool, not a ComputeClass. "
            "Remove fallback, or queue.",
        )


def _deadline_problems(path: str, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """activeDeadline: a duration of the same form as queue.maxRunDuration, above zero: the
    field's API description asks "value must be positive integer" (batch/v1 JobSpec), and a cap
    of zero would fail every run as it starts; no upper bound of its own."""
    given = w.active_deadline
    if given is not None and (not _DURATION.fullmatch(given) or seconds(given) <= 0):
        key = f"{path}.activeDeadline"
        yield Problem(
            key,
            f"{ctx.show(key, given)} is not a run length: give hours, minutes and seconds, 1s or "
            "more, e.g. '4h', '90m' or '1h30m'.",
        )


def _schedule_problems(path: str, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    if w.schedule is None:
        if w.time_zone != "UTC":
            yield Problem(
                f"{path}.timeZone",
                "is the time zone of `schedule`, and there is none. Set schedule, or remove it.",
            )
        return
    refused = cron.problem(w.schedule)
    if refused is not None:
        yield Problem(
            f"{path}.schedule",
            f"{ctx.show(f'{path}.schedule', w.schedule)} is not a schedule Kubernetes takes: "
            f"{refused}. A schedule is {cron.ALLOWED}; e.g. '0 3 * * *' for 03:00 every day.",
        )
    if w.time_zone not in zoneinfo.available_timezones():
        yield Problem(
            f"{path}.timeZone",
            f"{ctx.show(f'{path}.timeZone', w.time_zone)} is not a time zone of the tz database. "
            "Use one such as 'UTC' or 'Europe/Berlin'.",
        )
    if w.wait_for_completion:
        yield Problem(
            f"{path}.waitForCompletion",
            "a scheduled Job runs later, not during `pulumi up`: there is nothing to wait for. "
            "Remove waitForCompletion, or schedule.",
        )
