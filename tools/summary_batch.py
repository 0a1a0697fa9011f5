"""The offline plan's words for a batch workload (issues 36 and 45): its queue, how its nodes come,
the longest a run holds them, the most one run costs, its time cap, its schedule, its shards and
where its results land. Each line reads the config the kinds register from (components/kinds/
base.py Batch, cron_job.py) and the Kueue objects (components/platform/kueue.py)."""

from __future__ import annotations

from components.config import StackConfig, WorkloadConfig
from components.kinds.base import active_deadline_seconds, batch, on_spot
from components.kinds.cron_job import FAILED_HISTORY, SUCCESSFUL_HISTORY
from components.platform.kueue import QUEUE
from components.service.cost import Rate, money, pool_rate, workload_rate

INDENT = "            "


def batch_lines(config: StackConfig, w: WorkloadConfig) -> list[str]:
    """Nothing for a Job without the batch keys (its plan stays as it was)."""
    if not batch(w):
        return []
    queue = (
        f"waits in Kueue queue {QUEUE} (LocalQueue in {config.namespace}) until GKE grants every "
        "node at once"
        if w.queue is not None
        else "no queue: its pods start as soon as they are created"
    )
    lines = [f"{INDENT}batch     {queue}", f"{INDENT}nodes     {_nodes(w)}"]
    lines.append(f"{INDENT}one run   {_run(config, w)}")
    lines.append(f"{INDENT}time cap  {_cap(w)}")
    if w.spec.schedule is not None:
        lines.append(
            f"{INDENT}schedule  {w.spec.schedule!r} ({w.spec.time_zone}), a CronJob: no run starts "
            f"while the last one runs; keeps the last {SUCCESSFUL_HISTORY} finished and "
            f"{FAILED_HISTORY} failed Job(s)"
        )
    if w.spec.completions is not None:
        lines.append(
            f"{INDENT}shards    {w.spec.completions} (an Indexed Job, "
            f"{w.spec.parallelism or 1} at a time; each pod reads its shard from "
            "JOB_COMPLETION_INDEX)"
        )
    if on_spot(w):
        lines.append(
            f"{INDENT}on Spot   a pod preemption evicts is retried without counting against "
            f"backoffLimit {w.spec.backoff_limit}; a non-zero exit of {w.spec.name} fails the "
            "Job at once"
        )
    lines.append(f"{INDENT}results   {_results(w)}")
    return lines


def _nodes(w: WorkloadConfig) -> str:
    if w.queue is not None and w.node_pool is not None:
        return (
            f"through queued provisioning on pool {w.node_pool.name} (flex-start VMs, a "
            "ProvisioningRequest of class queued-provisioning.gke.io; removed when the run ends)"
        )
    if on_spot(w):
        return "Spot VMs, which Compute Engine may preempt"
    if w.node_pool is not None and w.node_pool.flex_start:
        return f"flex-start VMs on pool {w.node_pool.name}, as capacity frees up"
    return "on-demand VMs"


def _held_nodes(w: WorkloadConfig) -> int:
    """Nodes one run holds at once: its pods at once, packed onto the pool's GPUs."""
    pods = w.spec.parallelism or 1
    pool = w.node_pool
    if pool is None or pool.shared or not w.spec.gpu.count:
        return pods
    per_node = max(1, pool.gpu_count // w.spec.gpu.count)
    return min(pool.max_nodes, -(-pods // per_node))


def _run(config: StackConfig, w: WorkloadConfig) -> str:
    nodes = _held_nodes(w)
    if w.node_pool is not None:
        rate = pool_rate(w.node_pool, config.region)
    elif config.cluster.mode == "autopilot":
        rate, _ = workload_rate(w, config.region)
    else:
        rate = Rate(None, None, None)
    if w.queue is None:
        at_once = f"{nodes} node(s) at once, {money((rate * nodes).configured)}"
        deadline = active_deadline_seconds(w)
        if deadline is None:
            return f"{at_once}; no limit on its length (set activeDeadline to cap it)"
        hours = deadline / 3600
        cost = rate.configured
        price = "" if cost is None else f": ${cost * nodes * hours:,.2f} of node time"
        return f"{at_once}; {hours:g}h at the longest (activeDeadline){price}"
    seconds = w.queue.max_run_seconds
    hours = seconds / 3600
    longest = f"holds {nodes} node(s) {hours:g}h at the longest (maxRunDurationSeconds {seconds})"
    if rate.configured is not None:
        return f"{longest}, at most ${rate.configured * nodes * hours:,.2f}"
    bound = rate.on_demand
    if bound is None:
        return f"{longest}; its price is not in the table"
    return (
        f"{longest}, at most ${bound * nodes * hours:,.2f} at on-demand prices (flex-start's own "
        "discounted price is not in the table, and is lower)"
    )


def _cap(w: WorkloadConfig) -> str:
    """What stops a run that runs too long: the Job's own deadline (Kubernetes), and for a queued
    Job the time GKE holds its nodes (queue.maxRunDuration); each caps something else."""
    deadline = active_deadline_seconds(w)
    held = (
        f"; queue.maxRunDuration {w.queue.max_run_seconds / 3600:g}h caps how long GKE holds its "
        "nodes"
        if w.queue is not None
        else ""
    )
    if deadline is None:
        return f"none on the Job (set activeDeadline, e.g. '4h', to fail a longer run){held}"
    given = w.spec.active_deadline
    counted = (
        "; counted from Kueue's admission: time in the queue does not count, and a run Kueue "
        "evicts starts its count again"
        if w.queue is not None
        else ""
    )
    each = "each run " if w.spec.schedule is not None else "the Job "
    return (
        f"{each}fails after {given} of running (activeDeadlineSeconds {deadline}), its pods "
        f"stopped, even mid-retry{counted}{held}"
    )


def _results(w: WorkloadConfig) -> str:
    output = w.spec.output
    if output is None:
        return "nowhere the program provides: they leave the pod only as the program sends them"
    return (
        f"gs://{output.bucket} (mounted read-write at {output.mount_path} through Cloud "
        "Storage FUSE; the workload's service account holds roles/storage.objectUser on that "
        "bucket only)"
    )
