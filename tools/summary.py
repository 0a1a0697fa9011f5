"""The offline plan's summary: what each pool and workload gets, in plain words, for a reviewer."""

from __future__ import annotations

import json
from typing import Any

from components import allocatable, catalog, gate
from components.allocatable import Resources
from components.catalog import prices
from components.certificate import split_hosts
from components.config import ClusterConfig, NodePoolConfig, StackConfig, WorkloadConfig
from components.config.rules import capacity_sources, coldstart, fit, vllm
from components.nodepool import gke_pool_name
from tools import cost as costs
from tools import permissions
from tools.engine import Recording

DRIVERS = {
    "default": "NVIDIA driver installed by GKE (its default version)",
    "latest": "NVIDIA driver installed by GKE (its latest version)",
    "installer": "NVIDIA driver installed by Google's driver-installer DaemonSet",
}


def _cpu(millicores: int) -> str:
    return f"{millicores / 1000:.2f}".rstrip("0").rstrip(".") + " CPU"


def _gib(memory: int) -> str:
    return f"{memory / 2**30:.1f} GiB"


def _resources(r: Resources) -> str:
    return f"{_cpu(r.cpu_millicores)} / {_gib(r.memory_bytes)}"


def _machine(pool: NodePoolConfig) -> catalog.MachineType | None:
    return catalog.machine_for(pool.gpu_type, pool.gpu_count, pool.machine_type)


def cluster_lines(config: StackConfig) -> list[str]:
    cluster = config.cluster
    if not isinstance(cluster, ClusterConfig):
        target = f"context {cluster.context!r}" if cluster.context else "the secret kubeconfig"
        return [f"  cluster   an existing cluster through {target}; nothing is created in GCP"]
    kind = "Autopilot" if cluster.mode == "autopilot" else "Standard"
    where = "zonal" if cluster.location != config.region else "regional"
    lines = [
        f"  cluster   {cluster.name}: GKE {kind} in {cluster.location} ({where}), "
        f"{cluster.release_channel} channel, deletion protection "
        f"{'on' if cluster.deletion_protection else 'off'}"
    ]
    nodes = (
        "private nodes (no public IPs), Cloud NAT for image pulls"
        if cluster.private_nodes
        else "nodes with public IPs"
    )
    networks = ", ".join(cluster.master_authorized_networks)
    control = (
        f"control plane IP endpoint only from {networks} (no other Google Cloud addresses)"
        if networks
        else "control plane IP endpoint reachable from anywhere (IAM still applies)"
    )
    dns = (
        "DNS endpoint open to IAM-authorized callers anywhere (CI); the kubeconfig uses it"
        if cluster.dns_endpoint == "external"
        else f"DNS endpoint closed to users: `pulumi up` must run from {networks}"
        if networks
        else "DNS endpoint closed to users"
    )
    lines.append(f"            {nodes}; {control}; {dns}")
    key = cluster.secrets_encryption_key
    lines.append(
        "            Secrets: "
        + (f"encrypted with KMS key {key}" if key else "Google's default encryption at rest only")
        + "; Binary Authorization: "
        + (
            "the project's policy (audit or enforce, as the project sets it)"
            if cluster.binary_authorization
            else "off"
        )
        + "; security posture: configuration audit"
    )
    subnet = f", subnetwork {cluster.subnetwork}" if cluster.subnetwork else ""
    lines.append(f"            network {cluster.network}{subnet}")
    if cluster.mode == "standard":
        total = capacity_sources.system_node_count(
            cluster.system_nodes, cluster.location, config.region
        )
        lines.append(
            f"            system pool: {cluster.system_nodes} x {cluster.system_machine_type} "
            f"per zone, {total} in all (cluster components; GPU nodes "
            "stay free for GPU pods)"
        )
    if cluster.auto_provisioning_limits:
        limits = ", ".join(f"{name} {value}" for name, value in cluster.auto_provisioning_limits)
        lines.append(
            f"            node auto-provisioning for ComputeClasses, at most: {limits} "
            "(memory in GB; counts every node in the cluster)"
        )
    lines.append(
        "            GPU metrics: GKE's DCGM package through Managed Service for Prometheus "
        "(Cloud Monitoring, e.g. prometheus.googleapis.com/DCGM_FI_DEV_GPU_UTIL/gauge)"
    )
    return lines


def pool_lines(config: StackConfig, pool: NodePoolConfig) -> list[str]:
    machine = _machine(pool)
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
        f"            {DRIVERS[pool.driver]}; {pool.image_type.split('_')[0]} nodes",
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
    rate = costs.pool_rate(pool, config.region)
    on_pool = costs.workloads_on(config, pool)
    idle = costs.idle_nodes(pool, on_pool)
    how = "flex-start" if pool.flex_start else costs.SPOT if pool.spot else costs.ON_DEMAND
    lines.append(
        f"            cost per node {costs.money(rate.configured)} ({how}; on-demand "
        f"{costs.money(rate.on_demand)}, Spot {costs.money(rate.spot)}): idle "
        f"{costs.money((rate * idle).configured)} ({idle} node(s): minNodes {pool.min_nodes}, "
        f"{costs.pinned_nodes(pool, on_pool)} held by replicas), max "
        f"{costs.money((rate * pool.max_nodes).configured)}"
    )
    fast = [
        *(["image streaming on"] if pool.image_streaming else []),
        *(
            [f"images preloaded from secondary boot disk {pool.secondary_boot_disk}"]
            if pool.secondary_boot_disk
            else []
        ),
    ]
    if fast:
        lines.append(f"            {'; '.join(fast)}")
    if machine is not None:
        node = allocatable.node_allocatable(
            machine.vcpus,
            machine.memory_gb,
            os_image="ubuntu" if pool.image_type.startswith("UBUNTU") else "cos",
            image_streaming=pool.image_streaming,
        )
        lines.append(
            f"            each node: {_resources(node)} allocatable, "
            f"{_resources(fit.pod_room(pool, machine))} for your pods after GKE's system pods"
        )
    return lines


def _model(w: WorkloadConfig) -> str | None:
    """The model the server serves: its served name when set (a model read from a mounted
    bucket keeps its Hugging Face name there), else its model argument (rules/vllm.py)."""
    args = list(w.args)
    if "--served-model-name" in args[:-1]:
        return args[args.index("--served-model-name") + 1]
    return vllm.parse(args).model if coldstart.serves_vllm(w.image) else None


def workload_lines(config: StackConfig, w: WorkloadConfig) -> list[str]:
    where = f" on pool {w.node_pool.name}" if w.node_pool else ""
    lines = [f"  workload  {w.name} ({w.kind}, {w.image}){where}"]
    requests = Resources(
        allocatable.parse_cpu(w.cpu or "0"), allocatable.parse_memory(w.memory or "0")
    )
    gpus = f"{w.gpu_count} x {w.gpu_type or 'GPU'} per pod"
    pods = 1 if w.kind == "Job" else w.max_replicas
    pool = w.node_pool
    machine = _machine(pool) if pool else None
    if pool is not None and machine is not None:
        room = fit.pod_room(pool, machine)
        lines.append(
            f"            requests {_resources(requests)} of the {_resources(room)} a node "
            f"leaves; {gpus}"
        )
        used = pods * (1 if pool.shared else w.gpu_count)
        slots = pool.max_nodes * fit.slots_per_node(pool)
        unit = "GPU slots" if pool.shared else "GPUs"
        lines.append(
            f"            {unit} at max scale: {used} of {slots} ({pods} pod(s), "
            f"pool up to {pool.max_nodes} node(s))"
        )
    elif w.compute_class is not None and config.cluster.mode == "standard":
        lines.append(
            f"            requests {_resources(requests)}; {gpus}; GKE creates a node for each "
            "pod from its ComputeClass (node auto-provisioning, limits on the cluster)"
        )
    elif config.cluster.mode == "autopilot":
        lines.append(
            f"            requests {_resources(requests)}; {gpus}; Autopilot sizes a node for "
            "each pod"
        )
    elif w.cpu is None or w.memory is None:
        lines.append(
            f"            requests {gpus} and no CPU/memory: the cluster's nodes are not known "
            "here, so nothing is assumed; set resources.cpu/memory to reserve them"
        )
    else:
        lines.append(
            f"            requests {_resources(requests)}; {gpus}; the cluster's own nodes "
            "(capacity not known here)"
        )
    lines.append(
        f"            probe     {w.probe.describe}"
        if w.probe is not None
        else "            probe     none"
        + (" (a Job)" if w.kind == "Job" else " (no port: Kubernetes calls it ready once started)")
    )
    if w.kind == "Job":
        lines.append(
            "            runs to completion; `pulumi up` "
            + ("waits for it" if w.wait_for_completion else "does not wait for it")
        )
    else:
        surge = (
            "one extra pod at a time (Autopilot adds a node for it, within quota)"
            if config.cluster.mode == "autopilot"
            else "one extra pod at a time (a spare GPU exists at max scale)"
            if w.node_pool
            else "one extra pod at a time (set rollout: surge; the cluster must have a spare GPU)"
        )
        rollout = (
            # StatefulSet RollingUpdate has no surge: each pod is deleted, then recreated, from
            # the highest ordinal down (Kubernetes StatefulSet docs, "Rolling Updates").
            "one pod at a time, deleted then recreated, highest ordinal first (a StatefulSet "
            "never surges)"
            if w.kind == "StatefulSet"
            else surge
            if w.rollout == "surge"
            else "one pod replaced at a time (no spare GPU to surge into)"
            if w.max_replicas > 1
            else "the pod is recreated (its GPU is needed by the new one)"
        )
        lines.append(f"            rollout: {rollout}")
    model = _model(w)
    weights = (
        f"a {w.cache.size} per-pod disk at {w.cache.path}"
        if w.cache
        else "the container's filesystem (the node's boot disk)"
    )
    lines.append(f"            {'model ' + model + '; ' if model else ''}caches on {weights}")
    if w.compute_class is not None:
        lines.append(
            f"            GPUs through ComputeClass {w.compute_class}, tried in order (pods move "
            "back up when capacity returns):"
        )
        for n, (label, rate) in enumerate(costs.fallback_rates(w, config.region), 1):
            lines.append(f"              {n}. {label}: {costs.money(rate.configured)} per node")
    if w.autoscale is not None:
        scale = w.autoscale
        lines.append(
            f"            replicas {scale.min_replicas}-{scale.max_replicas} by {scale.metric} "
            f"(HPA target {scale.target} per pod; Managed Service for Prometheus scrapes "
            "/metrics, the custom metrics adapter serves it)"
        )
    lines += exposure_lines(config, w)
    return lines


def cost_lines(config: StackConfig) -> list[str]:
    """Hourly cost at idle and at maximum scale: as configured, all on-demand and all Spot."""
    stack = costs.stack_cost(config)
    if stack is None:
        return ["  cost      not priced: an existing cluster's nodes are not bought by this stack"]
    lines = [
        f"  cost      an estimate from {config.region} list prices of {prices.PRICE_DATE} "
        "(components/catalog/price_table.py; refresh it there)",
    ]
    for which, label in (
        ("configured", "as configured"),
        ("on_demand", "all on-demand"),
        ("spot", "all Spot"),
    ):
        lines.append(
            f"            {label}: idle {costs.total_text(stack, 'idle', which)}, "
            f"max {costs.total_text(stack, 'max', which)}"
        )
    for line in stack.lines:
        lines.append(
            f"              {line.name}: idle {costs.money(line.idle.configured)}, "
            f"max {costs.money(line.max.configured)}"
        )
    if config.region not in prices.PRICE_REGIONS:
        lines.append(
            f"            no price table for {config.region} (priced: "
            f"{', '.join(prices.PRICE_REGIONS)}): its machines show as unknown"
        )
    lines.append(
        "            not included: disks, load balancers, Cloud NAT, egress, Autopilot's premium, "
        "flex-start prices, sustained-use or committed-use discounts"
    )
    return lines


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


def _from_zero(config: StackConfig, w: WorkloadConfig) -> str | None:
    """How a pod of the workload may have to wait for a new node, or None when one is warm."""
    pool = w.node_pool
    if config.cluster.mode == "autopilot":
        return "Autopilot creates a node for each new pod"
    if w.compute_class is not None:
        return f"GKE creates nodes for new pods from ComputeClass {w.compute_class}"
    if pool is not None and pool.min_nodes == 0:
        return f"pool {pool.name} scales from zero (minNodes 0)"
    if pool is not None and w.max_replicas > pool.min_nodes * fit.slots_per_node(pool):
        return (
            f"replicas beyond pool {pool.name}'s {pool.min_nodes} warm node(s) wait for a new one"
        )
    return None


def cold_start_lines(config: StackConfig, w: WorkloadConfig) -> list[str]:
    """For each scale-from-zero path: which accelerations apply and what stays slow."""
    if w.kind == "Job" or config.cluster.mode == "existing":
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
    registry = coldstart.registry_host(w.image)
    eligible = coldstart.in_artifact_registry(w.image)
    if pool is not None and pool.secondary_boot_disk:
        image = f"preloaded from secondary boot disk {pool.secondary_boot_disk}"
    elif (autopilot or (pool is not None and pool.image_streaming)) and eligible:
        image = "streamed (image streaming, Artifact Registry image)"
    elif autopilot or (pool is not None and pool.image_streaming):
        image = f"pulled whole from {registry} (image streaming streams only Artifact Registry)"
    else:
        image = f"pulled whole from {registry} (no image streaming, no preloaded disk)"
    model = _model(w)
    if w.model_cache is not None:
        where = f"gs://{w.model_cache.bucket}/{w.model_cache.path or ''}".rstrip("/")
        weights = (
            f"read from {where} (Cloud Storage FUSE, parallel downloads): {FUSE_TUNED_SPEEDUP}"
        )
    elif model is not None and not model.startswith("/"):
        target = w.cache.path if w.cache else "the container's filesystem"
        weights = f"downloaded from Hugging Face into {target} on every new pod (no modelCache)"
    else:
        weights = "whatever the image loads at start (no modelCache)"
    return [
        f"            cold start: {path}",
        f"              image: {image}",
        f"              weights: {weights}",
        f"              still slow: {NODE_BOOT}; loading the weights into GPU memory",
    ]


def _enforced(config: StackConfig) -> bool:
    """Whether the cluster enforces NetworkPolicy: GKE Dataplane V2 (Autopilot always; Standard
    unless cluster.dataplaneV2 is false); an existing cluster's CNI is not known here."""
    cluster = config.cluster
    return isinstance(cluster, ClusterConfig) and (
        cluster.mode == "autopilot" or cluster.dataplane_v2
    )


def exposure_lines(config: StackConfig, w: WorkloadConfig) -> list[str]:
    """Who can reach the workload and how: scheme, source ranges, the gate in front of it (its
    allowed paths and key), the certificate and what reaches the model server around the gate."""
    enforced = (
        "Dataplane V2 enforces it"
        if _enforced(config)
        else "NOT enforced: cluster.dataplaneV2 is false"
        if isinstance(config.cluster, ClusterConfig)
        else "enforced only if the cluster's CNI enforces NetworkPolicy"
    )
    e = w.expose
    if e is None:
        key = f"API key (stack output apiKeys.{w.name}, secret)" if w.api_key else "no API key"
        return [f"            not exposed: no Service, default-deny ingress ({enforced}); {key}"]
    scheme = "HTTPS" if e.tls else "plain HTTP (expose.tls: false: keys and prompts in clear)"
    ranges = ", ".join(e.source_ranges) or "anywhere"
    static = ", reserved static address" if e.static_ip else ""
    if e.type == "LoadBalancer":
        where = f"public (external load balancer) port {e.port}{static}, from {ranges}"
    elif e.type == "Internal":
        where = f"internal (VPC-only load balancer) port {e.port}{static}, from {ranges}"
    elif e.type == "ClusterIP":
        where = f"in-cluster (ClusterIP) port {e.port}, from pods of namespace {config.namespace}"
    else:
        where = "on every node (NodePort chosen by Kubernetes), from anything reaching the nodes"
    gate_key = gate.gate_requires_key(w)
    key = (
        f"the key on every request (Authorization: Bearer, constant-time; stack output "
        f"apiKeys.{w.name}), else 401"
        if gate_key
        else "no key at the gate (the workload has no API key in its Secret): anyone who "
        "reaches the endpoint may call the allowed paths"
    )
    lines = [
        f"            exposed: {scheme}, {where}",
        f"            gate: HAProxy ({gate.REPLICAS} pods, {gate.CPU} CPU / {gate.MEMORY} each, "
        "on CPU nodes) terminates TLS and requires " + key
        if e.tls
        else f"            gate: HAProxy ({gate.REPLICAS} pods, {gate.CPU} CPU / {gate.MEMORY} "
        "each, on CPU nodes) requires " + key,
        f"            allowed paths (anything else 404): {' '.join(e.paths)}",
    ]
    if e.tls:
        ips, names = split_hosts(e.hosts)
        address = ["the reserved address"] if e.static_ip else []
        valid_for = [*address, *ips, *names, f"{w.name}.{config.namespace}.svc.cluster.local"]
        lines.append(
            "            certificate: issued by the stack's CA (stack output caCertificate) for "
            + ", ".join(valid_for)
        )
        if e.type != "ClusterIP" and not e.static_ip and not e.hosts:
            lines.append(
                "            ! the certificate names no address clients use: set expose.hosts "
                "to the node or load balancer address, or clients fail to verify it"
            )
    scraped = f", Managed Prometheus' collectors to port {w.port} (/metrics)" if w.autoscale else ""
    lines.append(
        f"            reaches the model server directly: nothing (NetworkPolicy admits only the "
        f"gate{scraped}; {enforced})"
    )
    return lines


def outputs_lines(outputs: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["  outputs   (values marked * are computed by the cloud at `pulumi up`)"]
    for name, entry in outputs.items():
        value = "[secret]" if entry["secret"] else json.dumps(entry["value"])
        lines.append(f"    {name} = {value}{' *' if entry['computed'] else ''}")
    return lines


def summary(
    stack: str, config: StackConfig, recording: Recording, outputs: dict[str, dict[str, Any]]
) -> str:
    lines = [f"Stack {stack}", *cluster_lines(config)]
    for pool in config.node_pools:
        lines += pool_lines(config, pool)
    for w in config.workloads:
        lines += workload_lines(config, w)
        lines += cold_start_lines(config, w)
    lines += cost_lines(config)
    lines += permissions.summary_lines(recording)
    lines += [f"  advisory  {advisory}" for advisory in config.advisories]
    lines += outputs_lines(outputs)
    lines.append(f"  {len(recording.resources)} resources")
    return "\n".join(lines)
