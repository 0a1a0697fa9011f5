"""The offline plan's summary: what each pool and workload gets, in plain words, for a reviewer."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from components import slices
from components.config import ClusterConfig, NodePoolConfig, StackConfig, WorkloadConfig
from components.config.formats import gib, resources
from components.config.rules import coldstart, model_fit, streamer
from components.config.sleep import scales_on_metric, sleeps
from components.platform import scraped, watched
from components.platform.nodepool import boot_disk_type, gke_pool_name
from components.service import haproxy, placement, pod
from components.service import monitoring as monitor
from tools import cost as costs
from tools import iam_plan
from tools.engine import Recording
from tools.summary_batch import batch_lines
from tools.summary_cluster import cluster_lines
from tools.summary_exposure import exposure_lines, routing_line
from tools.summary_groups import group_lines
from tools.summary_machines import cache_class_lines, pool_capacity_lines, workload_capacity_lines

if TYPE_CHECKING:
    from tools.stacks import Deployment

DRIVERS = {
    "default": "NVIDIA driver installed by GKE (its default version)",
    "latest": "NVIDIA driver installed by GKE (its latest version)",
    "installer": "NVIDIA driver installed by Google's driver-installer DaemonSet",
}


def pool_lines(config: StackConfig, pool: NodePoolConfig) -> list[str]:
    sharing = ""
    if pool.sharing is not None:
        how = pool.sharing.strategy.lower().replace("_", "-")
        sharing = f", shared by up to {pool.sharing.max_clients_per_gpu} pods per GPU ({how})"
    if pool.partition_size:
        sharing += f", split into MIG {pool.partition_size} slices"
    lines = [
        f"  pool      {pool.name} (GKE name {gke_pool_name(pool)}): {pool.machine_type} with "
        f"{pool.gpu_count} x {pool.gpu_type}{sharing}, {pool.min_nodes}-{pool.max_nodes} nodes, "
        f"{'flex-start VMs' if pool.flex_start else 'Spot VMs' if pool.spot else 'on-demand VMs'}",
        f"            {DRIVERS[pool.driver]}; {pool.image_type.split('_')[0]} nodes"
        + _boot_disk(pool),
    ]
    capacity = []
    if pool.reservation is not None:
        capacity.append(
            f"from reservation {pool.reservation.name}"
            if pool.reservation.name
            else "from any matching reservation, else on demand"
        )
    if pool.flex_start:
        capacity.append("flex-start nodes (created when capacity frees up, up to 7 days each)")
    if pool.placement == "compact":
        capacity.append("compact placement (nodes close together in one zone)")
    if capacity:
        lines.append(f"            {'; '.join(capacity)}")
    lines.append(f"            {placement.pool_zone_words(pool)}")
    lines.append(costs.pool_line(pool, config.region))
    lines += pool_capacity_lines(pool)
    fast = ["image streaming on"] if pool.image_streaming else []
    if pool.secondary_boot_disk:
        fast.append(f"images preloaded from secondary boot disk {pool.secondary_boot_disk}")
    if fast:
        lines.append(f"            {'; '.join(fast)}")
    lines.append(
        f"            each node: {resources(pool.node_allocatable, 2)} allocatable, "
        f"{resources(pool.room, 2)} for your pods after GKE's system pods"
    )
    return lines


def _boot_disk(pool: NodePoolConfig) -> str:
    """The boot disk the pool names (components/platform/nodepool.py boot_disk_type), if any."""
    disk = boot_disk_type(pool)
    if disk is None:
        return ""
    return f"; {disk} boot disk (the only type {pool.machine_type} boots from)"


def workload_lines(config: StackConfig, w: WorkloadConfig) -> list[str]:
    where = f" on pool {w.node_pool.name}" if w.node_pool else ""
    kind = slices.kind_of(w)
    lines = [
        f"  workload  {w.spec.name} ({kind.name}, {w.spec.image}){where}",
        *_requests_lines(config, w),
        *workload_capacity_lines(w),
    ]
    lines += group_lines(config, w)
    lines.append(
        f"            probe     {w.probe.describe}"
        if w.probe is not None
        else f"            probe     none ({kind.unprobed})"
    )
    if kind.holds_replicas:
        lines.append(f"            rollout: {_rollout(config, w)}")
    else:
        lines.append(
            "            runs to completion; `pulumi up` "
            + ("waits for it" if kind.awaited(w) else "does not wait for it")
        )
    if (zones := placement.zone_words(config.cluster.mode, w)) is not None:
        lines.append(f"            zones: {zones}")
    model = w.model
    weights = pod.caches_on(w)
    lines.append(f"            {'model ' + model + '; ' if model else ''}caches on {weights}")
    lines += cache_class_lines(config, w)
    if (home := pod.home_words(w)) is not None:
        lines.append(f"            {home}")
    if (disks := kind.disks_at_destroy(w)) is not None:
        lines.append(f"            disks: {disks}")
    if w.compute_class is not None:
        lines.append(
            f"            GPUs through ComputeClass {w.compute_class}, tried in order (pods move "
            "back up when capacity returns):"
        )
        for n, (label, rate) in enumerate(costs.fallback_rates(w, config.region), 1):
            lines.append(f"              {n}. {label}: {costs.money(rate.configured)} per node")
    if w.adapters:
        names = ", ".join(name for name, _ in w.adapters)
        lines.append(
            f"            LoRA adapters (vLLM, each its own model name in /v1/models): {names}"
        )
    if kind.holds_replicas and (w.max_replicas > 1 or w.routing == "cache-aware"):
        lines.append(f"            routing: {routing_line(w)}")
    if sleeps(w):
        lines += sleep_lines(config, w)
    elif w.spec.autoscale is not None:
        scale = w.spec.autoscale
        lines.append(
            f"            replicas {scale.min_replicas}-{scale.max_replicas} by "
            f"{w.autoscale_metric} (HPA target {scale.target} per pod; Managed Service for "
            "Prometheus scrapes /metrics, the custom metrics adapter serves it)"
        )
    return lines + batch_lines(config, w) + exposure_lines(config, w)


def _requests_lines(config: StackConfig, w: WorkloadConfig) -> list[str]:
    """What each pod requests, and from what (the pool's nodes, Autopilot, a ComputeClass)."""
    requests, pool = resources(w.requests, 2), w.node_pool
    gpus = f"{w.spec.gpu.count} x {w.gpu_type or 'GPU'} per pod"
    if pool is not None:
        used = w.max_pods * (1 if pool.shared else w.spec.gpu.count)
        return [
            f"            requests {requests} of the {resources(pool.room, 2)} a node leaves"
            f"{pod.headroom_words(w)}; {gpus}",
            f"            {'GPU slots' if pool.shared else 'GPUs'} at max scale: {used} of "
            f"{pool.max_nodes * pool.slots_per_node} ({w.max_pods} pod(s), pool up to "
            f"{pool.max_nodes} node(s))",
        ]
    if w.compute_class is not None and config.cluster.mode == "standard":
        return [
            f"            requests {requests}; {gpus}; GKE creates a node for each pod from its "
            "ComputeClass (node auto-provisioning, limits on the cluster)"
        ]
    if config.cluster.mode == "autopilot":
        return [f"            requests {requests}; {gpus}; Autopilot sizes a node for each pod"]
    if w.cpu is None or w.memory is None:
        return [f"            requests {pod.unsized_requests(w)}"]
    return [
        f"            requests {requests}; {gpus}; the cluster's own nodes (capacity not known "
        "here)"
    ]


def _rollout(config: StackConfig, w: WorkloadConfig) -> str:
    surge = (
        "one extra pod at a time (Autopilot adds a node for it, within quota)"
        if config.cluster.mode == "autopilot"
        else "one extra pod at a time (a spare GPU exists at max scale)"
        if w.node_pool
        else "one extra pod at a time (set rollout: surge; the cluster must have a spare GPU)"
    )
    if (words := slices.kind_of(w).rollout_words) is not None:
        return words
    return (
        surge
        if w.rollout == "surge"
        else "one pod replaced at a time (no spare GPU to surge into)"
        if w.max_replicas > 1
        else "the pod is recreated (its GPU is needed by the new one)"
    )


# Figures the cold-start lines may print, each with its source; where Google documents no figure
# the lines say what applies and print none.
FUSE_TUNED_SPEEDUP = (
    "more than 7x less pod startup latency than an untuned Cloud Storage FUSE mount, for "
    "Llama-3.3-70B on vLLM (GoogleCloudPlatform/accelerated-platforms use-cases/inferencing/"
    "cost-optimization/gcsfuse/AchievingFasterPodStartup.md)"
)
NODE_BOOT = (
    "node boot and GPU driver set-up (no figure printed: none found in Google's docs; a "
    "secondary boot disk does not add to it, GKE's secondary boot disk page)"
)


def sleep_lines(config: StackConfig, w: WorkloadConfig) -> list[str]:
    """A model that sleeps: when it goes to zero, what holds the first request and for how long,
    and what that request waits for (components/service/scale_to_zero.py)."""
    scale = w.spec.autoscale
    assert scale is not None and w.probe is not None
    pool = w.node_pool
    warm = pool is not None and pool.min_nodes > 0 and w.compute_class is None
    node = "a warm node takes the first replica" if warm else "a GPU node is created"
    if pool is not None and pool.flex_start and not warm:
        node += (
            " (flex-start: when capacity frees up, which can take longer than the wait; a "
            "retry is served once it comes)"
        )
    return [
        f"            replicas 0-{scale.max_replicas}: sleeps after {scale.idle_seconds}s "
        f"without a request (KEDA HTTP add-on; a replica per {scale.target} requests in "
        "flight)",
        "            first request after sleeping: held by KEDA's interceptor behind the gate (key "
        f"and TLS unchanged) up to {scale.wake_timeout_seconds}s "
        "(autoscale.wakeTimeoutSeconds), then 504",
        f"            expected wake: {node}, then the pod starts (startup probe allows up to "
        f"{w.probe.spec.startup_seconds}s); the cold start below says what is slow",
        *_private_metrics_line(config, w),
    ]


def _private_metrics_line(config: StackConfig, w: WorkloadConfig) -> list[str]:
    """Beyond one replica KEDA's HPA reads its metrics server through the control plane, which
    on private nodes may need a firewall rule to port 6443 (KEDA's docs; docs/scaling.md)."""
    cluster = config.cluster
    if not isinstance(cluster, ClusterConfig) or not cluster.private_nodes or w.max_replicas < 2:
        return []
    return [
        "            private nodes: scaling beyond one replica needs the control plane to reach "
        "KEDA's metrics server (port 6443); not confirmed on GKE, see docs/scaling.md"
    ]


def _from_zero(config: StackConfig, w: WorkloadConfig) -> str | None:
    """How a pod of the workload may have to wait for a new node, or None when one is warm."""
    pool = w.node_pool
    if config.cluster.mode == "autopilot":
        return "Autopilot creates a node for each new pod"
    if w.compute_class is not None:
        return f"GKE creates nodes for new pods from ComputeClass {w.compute_class}"
    if pool is not None and pool.min_nodes == 0:
        return f"pool {pool.name} scales from zero (minNodes 0)"
    if pool is not None and w.max_replicas > pool.min_nodes * pool.slots_per_node:
        return (
            f"replicas beyond pool {pool.name}'s {pool.min_nodes} warm node(s) wait for a new one"
        )
    return None


def cold_start_lines(config: StackConfig, w: WorkloadConfig) -> list[str]:
    """For each scale-from-zero path: which accelerations apply and what stays slow."""
    if not slices.kind_of(w).holds_replicas or config.cluster.mode == "existing":
        return []
    path = _from_zero(config, w)
    pool = w.node_pool
    if path is None:
        return (
            []
            if pool is None
            else [
                f"            cold start: none at this scale, {pool.min_nodes} warm node(s) "
                f"(minNodes) hold the pods"
            ]
        )
    autopilot = config.cluster.mode == "autopilot"
    registry = coldstart.registry_host(w.spec.image)
    eligible = coldstart.in_artifact_registry(w.spec.image)
    # A ComputeClass streams images and preloads the workload's disk in every priority
    # (components/service/compute_class.py nodePoolConfig and storage).
    classed = w.compute_class is not None
    boot_disk = (
        w.spec.secondary_boot_disk if classed else pool.secondary_boot_disk if pool else None
    )
    streaming = autopilot or classed or (pool is not None and pool.image_streaming)
    if boot_disk:
        image = f"preloaded from secondary boot disk {boot_disk}"
    elif streaming and eligible:
        image = "streamed (image streaming, Artifact Registry image)"
    elif streaming:
        image = f"pulled whole from {registry} (image streaming streams only Artifact Registry)"
    else:
        image = f"pulled whole from {registry} (no image streaming, no preloaded disk)"
    model = w.model
    cache = w.model_cache
    if cache is not None:
        where = streamer.model_uri(w.spec)
        weights = (
            f"streamed from {where} by vLLM's Run:ai Model Streamer (safetensors, no mount; "
            f"a {gib(cache.buffer_bytes)} CPU buffer per GPU process; 8 parallel reads, its "
            "default for object storage)"
            if cache.buffer_bytes is not None
            else f"read from {where} (Cloud Storage FUSE, parallel downloads; mounted: "
            f"{cache.mounted_because}): {FUSE_TUNED_SPEEDUP}"
        )
    elif model is not None and not model.startswith("/"):
        target = w.spec.cache.path if w.spec.cache else "the container's filesystem"
        weights = f"downloaded from Hugging Face into {target} on every new pod (no modelCache)"
    else:
        weights = "whatever the image loads at start (no modelCache)"
    return [
        f"            cold start: {path}",
        f"              image: {image}",
        f"              weights: {weights}",
        f"              still slow: {NODE_BOOT}; loading the weights into GPU memory",
    ]


def monitoring_lines(config: StackConfig) -> list[str]:
    """The dashboard and each alert with its threshold, and whom the alerts notify
    (components/service/monitoring.py); an existing cluster's rules file."""
    m = config.monitoring
    if not isinstance(config.cluster, ClusterConfig):
        if not m.alerts:
            return ["  monitoring none (monitoring.alerts: false)"]
        lines = [
            f"  monitoring alerts as a Prometheus rules file: ConfigMap {config.namespace}/"
            f"{monitor.RULES_CONFIG_MAP} (key {monitor.RULES_FILE}); load it into your "
            "Prometheus (docs/monitoring.md), Alertmanager routes them"
        ]
        return lines + [
            f"            alert {a.title}: {a.threshold}" for a in monitor.alerts(config)
        ]
    if not (m.dashboard or m.alerts):
        return ["  monitoring none (monitoring.dashboard and monitoring.alerts are false)"]
    lines = []
    if m.dashboard:
        title = monitor.dashboard(config)["displayName"]
        lines.append(
            f"  monitoring dashboard {title!r} (Cloud Monitoring): GPU utilisation and memory, "
            "replicas, pending pods, vLLM queue, time to first token, error rate, the hourly "
            "estimate"
        )
    if m.alerts:
        first = "  monitoring " if not lines else "            "
        lines.append(f"{first}alert policies (PromQL over Managed Service for Prometheus):")
        lines += [f"              {a.title}: {a.threshold}" for a in monitor.alerts(config)]
        who = [*m.notification_channels, *(f"email {e}" for e in m.emails)]
        lines.append(
            "            notifies: "
            + (
                ", ".join(who)
                if who
                else "no one (set monitoring.notificationChannels or monitoring.emails; the "
                "console still lists the incidents)"
            )
        )
    served = [w.spec.name for w in scraped(config) if not scales_on_metric(w)]
    if served:
        lines.append(
            f"            scrapes /metrics of {', '.join(served)} (a PodMonitoring each: the "
            "queue, time to first token and errors come from vLLM's own metrics)"
        )
    gates = [w.spec.name for w in config.exposed]
    if gates and watched(config):
        lines.append(
            f"            scrapes the gates of {', '.join(gates)} (HAProxy's exporter, port "
            f"{haproxy.METRICS_PORT}, open to the collector pods only): the error alert and "
            "chart count the 5xx each gate answered"
        )
    return lines


def outputs_lines(outputs: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["  outputs   (values marked * are computed by the cloud at `pulumi up`)"]
    for name, entry in outputs.items():
        value = "[secret]" if entry["secret"] else json.dumps(entry["value"])
        lines.append(f"    {name} = {value}{' *' if entry['computed'] else ''}")
    return lines


def summary(
    stack: str,
    config: StackConfig,
    recording: Recording,
    outputs: dict[str, dict[str, Any]],
    deployment: Deployment | None = None,
) -> str:
    lines = [f"Stack {stack}", *cluster_lines(config)]
    for pool in config.node_pools:
        lines += pool_lines(config, pool)
    for w in config.workloads:
        lines += workload_lines(config, w)
        lines += cold_start_lines(config, w)
    lines += costs.summary_lines(config)
    lines += monitoring_lines(config)
    lines += iam_plan.summary_lines(recording, deployment)
    # A model whose fit was not checked ends the plan, above its OK (rules/model_fit.py).
    unchecked = model_fit.unchecked(enumerate(w.spec for w in config.workloads))
    lines += [f"  advisory  {a}" for a in config.advisories if a not in unchecked]
    lines += outputs_lines(outputs)
    lines.append(f"  {len(recording.resources)} resources")
    lines += [f"  ! {line}" for line in unchecked]
    return "\n".join(lines)
