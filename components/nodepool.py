"""GpuNodePool: one GKE node pool of GPU nodes that scales to zero when idle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.config import NodePoolConfig

# Access is governed by the node service account's IAM roles, not by legacy OAuth scopes.
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"

# GKE's names for the driver install modes (NodePoolNodeConfigGuestAcceleratorGpuDriver-
# InstallationConfigArgs.gpu_driver_version; cloud.google.com/kubernetes-engine/docs/how-to/gpus
# "Manually install NVIDIA GPU drivers" uses INSTALLATION_DISABLED for the installer DaemonSet).
DRIVER_VERSIONS = {"default": "DEFAULT", "latest": "LATEST", "installer": "INSTALLATION_DISABLED"}

MIN_NODES_REASON_LABEL = "gke-gpu-min-nodes-reason"
POOL_LABEL = "gke-gpu/pool"


@dataclass(frozen=True)
class GpuNodePoolArgs:
    project: str
    location: str
    cluster_name: pulumi.Input[str]
    service_account: pulumi.Input[str]
    pool: NodePoolConfig


def guest_accelerator(
    pool: NodePoolConfig,
) -> gcp.container.NodePoolNodeConfigGuestAcceleratorArgs:
    """The accelerator block: GPU type and count, driver install mode, sharing or MIG."""
    return gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
        type=pool.gpu_type,
        count=pool.gpu_count,
        gpu_driver_installation_config=(
            gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                gpu_driver_version=DRIVER_VERSIONS[pool.driver]
            )
        ),
        gpu_sharing_config=(
            gcp.container.NodePoolNodeConfigGuestAcceleratorGpuSharingConfigArgs(
                gpu_sharing_strategy=pool.sharing.strategy,
                max_shared_clients_per_gpu=pool.sharing.max_clients_per_gpu,
            )
            if pool.sharing
            else None
        ),
        gpu_partition_size=pool.partition_size,
    )


def hardened_node_settings(service_account: pulumi.Input[str]) -> dict[str, Any]:
    """NodeConfig settings every pool shares: its own service account, the GKE metadata server
    (pods never see the node's credentials), Secure Boot and integrity monitoring."""
    return {
        "service_account": service_account,
        "oauth_scopes": [CLOUD_PLATFORM_SCOPE],
        "workload_metadata_config": gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
            mode="GKE_METADATA"
        ),
        "shielded_instance_config": gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
            enable_secure_boot=True, enable_integrity_monitoring=True
        ),
    }


def resource_labels(pool: NodePoolConfig) -> dict[str, str]:
    """GCE labels on the pool's VMs; a pool kept warm says why, for the policy pack and billing."""
    labels = {"gke-gpu-pool": pool.name}
    if pool.min_nodes_reason:
        labels[MIN_NODES_REASON_LABEL] = pool.min_nodes_reason
    return labels


class GpuNodePool(pulumi.ComponentResource):
    """A GKE node pool with GPUs attached: autoscaling, Spot, driver mode, sharing/MIG."""

    name: pulumi.Output[str]
    """The node pool's GKE name (also its `cloud.google.com/gke-nodepool` label)."""

    def __init__(
        self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:GpuNodePool", name, None, opts)
        pool = args.pool
        node_pool = gcp.container.NodePool(
            f"{name}-pool",
            name=pool.name,
            project=args.project,
            location=args.location,
            cluster=args.cluster_name,
            node_locations=list(pool.zones) or None,
            initial_node_count=pool.min_nodes,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                # Totals count nodes across all zones, so "1 to 4 over two zones" means 1 to 4.
                total_min_node_count=pool.min_nodes,
                total_max_node_count=pool.max_nodes,
                # ANY takes capacity in whichever zone has it: GPUs and Spot VMs stock out.
                location_policy="ANY",
            ),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=pool.machine_type,
                image_type=pool.image_type,
                spot=pool.spot,
                guest_accelerators=[guest_accelerator(pool)],
                labels={POOL_LABEL: pool.name},
                resource_labels=resource_labels(pool),
                **hardened_node_settings(args.service_account),
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            # Upgrade by replacing one node at a time without a surge node: a surge would need
            # GPU quota (and stock) beyond maxNodes.
            upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(
                strategy="SURGE", max_surge=0, max_unavailable=1
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                # The autoscaler owns the node count after creation; initial_node_count is
                # create-only, so a diff on it would replace the pool (and drain every node).
                ignore_changes=["initialNodeCount"],
            ),
        )
        self.name = node_pool.name
        self.register_outputs({"name": self.name})
