"""The offline plan's words on the cluster: its kind and place, who reaches its nodes and control
plane, and when GKE may upgrade it. Part of the summary (tools/summary.py)."""

from __future__ import annotations

from components.config import ClusterConfig, StackConfig


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
    lines += _access_lines(cluster)
    subnet = f", subnetwork {cluster.subnetwork}" if cluster.subnetwork else ""
    lines.append(f"            network {cluster.network}{subnet}")
    if cluster.mode == "standard":
        lines.append(
            f"            system pool: {cluster.system_nodes} x {cluster.system_machine_type} "
            f"per zone, {cluster.system_nodes_total} in all (cluster components; GPU nodes "
            "stay free for GPU pods)"
        )
    if cluster.auto_provisioning_limits:
        limits = ", ".join(f"{name} {value}" for name, value in cluster.auto_provisioning_limits)
        lines.append(
            f"            node auto-provisioning for ComputeClasses, at most: {limits} "
            "(memory in GB; counts every node in the cluster)"
        )
    lines += maintenance_lines(cluster)
    lines.append(
        "            GPU metrics: GKE's DCGM package through Managed Service for Prometheus "
        "(Cloud Monitoring, e.g. prometheus.googleapis.com/DCGM_FI_DEV_GPU_UTIL/gauge)"
    )
    return lines


def maintenance_lines(cluster: ClusterConfig) -> list[str]:
    """When GKE may upgrade (and so recreate every GPU node): the window and the exclusions."""
    maintenance = cluster.maintenance
    if maintenance is None or maintenance.window is None:
        return [
            "            maintenance: no window, GKE may upgrade (recreating GPU nodes) at any time"
        ]
    window = maintenance.window
    start, end = window.start[11:16], window.end[11:16]
    lines = [
        f"            maintenance window {start}-{end} UTC, {window.recurrence} (first "
        f"{window.start[:10]}); GKE schedules its upgrades, which recreate GPU nodes, only "
        "then (what may still happen outside it: docs/day-2.md)"
    ]
    lines += [
        f"            maintenance exclusion {e.name}: {e.start} to {e.end}, {e.scope}"
        for e in maintenance.exclusions or ()
    ]
    return lines


def _access_lines(cluster: ClusterConfig) -> list[str]:
    """Who reaches the nodes and the control plane; what protects Secrets and admits images."""
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
    key = cluster.secrets_encryption_key
    return [
        f"            {nodes}; {control}; {dns}",
        "            Secrets: "
        + (f"encrypted with KMS key {key}" if key else "Google's default encryption at rest only")
        + "; Binary Authorization: "
        + (
            "the project's policy (audit or enforce, as the project sets it)"
            if cluster.binary_authorization
            else "off"
        )
        + "; security posture: configuration audit",
    ]
