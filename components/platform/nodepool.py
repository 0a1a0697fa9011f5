"""GpuNodePool: one GKE node pool of GPU nodes that scales to zero when idle."""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from ..config import GpuPool, NodePoolConfig, typed
from ..config.component_checks import ArgsError, pool_args_problems
from ..config.workload_args import ServiceNodePool
from ..facts import catalog
from ..facts.labels import MIN_NODES_REASON_LABEL, POOL_LABEL, POOL_RESOURCE_LABEL
from .pool_entry import service_pool

# Access is governed by the node service account's IAM roles, not by legacy OAuth scopes.
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
OAUTH_SCOPES = (CLOUD_PLATFORM_SCOPE,)
# Secure Boot and integrity monitoring on every node (GKE hardening guide, "Shielded GKE Nodes").
SHIELDED_INSTANCE = {"enable_secure_boot": True, "enable_integrity_monitoring": True}
# GPU pools upgrade by replacing one node at a time without a surge node: a surge would need GPU
# quota (and stock) beyond maxNodes, and an upgrade waiting for it would never finish. The same
# for the pools GKE auto-provisions for ComputeClasses (cluster_settings.nap_upgrade_settings).
NO_SURGE: dict[str, Any] = {"strategy": "SURGE", "max_surge": 0, "max_unavailable": 1}

# GKE's names for the driver install modes (NodePoolNodeConfigGuestAcceleratorGpuDriver-
# InstallationConfigArgs.gpu_driver_version; cloud.google.com/kubernetes-engine/docs/how-to/gpus
# "Manually install NVIDIA GPU drivers" uses INSTALLATION_DISABLED for the installer DaemonSet).
DRIVER_VERSIONS = {"default": "DEFAULT", "latest": "LATEST", "installer": "INSTALLATION_DISABLED"}

# A secondary boot disk used as a container image cache (SecondaryBootDisk.Mode
# CONTAINER_IMAGE_CACHE, GKE API google.container.v1; pulumi-gcp 10.2.0
# NodePoolNodeConfigSecondaryBootDiskArgs(disk_image, mode)). Requirements and sources:
# components/config/rules/coldstart.py.
CONTAINER_IMAGE_CACHE = "CONTAINER_IMAGE_CACHE"

# GKE node pool names: 1-40 lowercase letters, digits and hyphens, starting with a letter and
# ending with a letter or digit (the same rule as components/config/formats.py GKE_NAME).
GKE_NAME_MAX = 40
NAME_HASH_LENGTH = 8


@dataclass(frozen=True)
class GpuNodePoolArgs:
    project: str
    """The Google Cloud project of the cluster."""
    location: str
    """The cluster's location: a region, or a zone."""
    cluster_name: pulumi.Input[str]
    """The GKE cluster the pool belongs to (GkeCluster.name)."""
    service_account: pulumi.Input[str]
    """Email of the nodes' service account (GkeCluster.node_service_account)."""
    pool: GpuPool
    """The pool's GPUs, machine, node counts and how its capacity is bought."""
    after: pulumi.Input[Sequence[gcp.container.NodePool]] | None = None
    """What the GKE NodePool itself waits for: the system pool (see GkeCluster.system_pools).

    An Input: another language's program hands over `GkeCluster.systemPools`, an output, and
    the provider host hands a list of resource references with dependencies over as an Output
    (pulumi 3.272.0 provider/server.py ProviderServicer._select_value).

    Handed to the NodePool's own ResourceOptions because a component's `depends_on` does not
    reach its children (pulumi/pulumi sdk/python/lib/pulumi/resource.py, Resource.__init__ at
    commit 1b594989, lines 992-1004: a child inherits its parent's `protect` and providers,
    never its `depends_on`)."""
    protect: bool | None = None
    """Pulumi `protect` on the NodePool: set in stacks with cluster.deletionProtection.
    Default: false."""


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


# Reservation affinity (pulumi-gcp 10.2.0 NodePoolNodeConfigReservationAffinityArgs): a named
# reservation is SPECIFIC_RESERVATION with key compute.googleapis.com/reservation-name and the
# name as the value; `any` is ANY_RESERVATION ("Consume any non-specific reservation available,
# with a fallback to on-demand capacity"); flex-start nodes never consume one: NO_RESERVATION
# (GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool/main.tf at 1047080:
# "enable_flex_start requires reservation_affinity.consume_reservation_type to be
# 'NO_RESERVATION'"). Pools with none of these leave the field unset, as before.
RESERVATION_NAME_KEY = "compute.googleapis.com/reservation-name"


def reservation_affinity(
    pool: NodePoolConfig,
) -> gcp.container.NodePoolNodeConfigReservationAffinityArgs | None:
    if pool.flex_start:
        return gcp.container.NodePoolNodeConfigReservationAffinityArgs(
            consume_reservation_type="NO_RESERVATION"
        )
    if pool.reservation is None:
        return None
    if pool.reservation.any:
        return gcp.container.NodePoolNodeConfigReservationAffinityArgs(
            consume_reservation_type="ANY_RESERVATION"
        )
    return gcp.container.NodePoolNodeConfigReservationAffinityArgs(
        consume_reservation_type="SPECIFIC_RESERVATION",
        key=RESERVATION_NAME_KEY,
        values=[pool.reservation.name or ""],
    )


def placement_policy(pool: NodePoolConfig) -> gcp.container.NodePoolPlacementPolicyArgs | None:
    """COMPACT: the pool's nodes close together in its one zone (pulumi-gcp 10.2.0
    NodePoolPlacementPolicyArgs.type: "Supports a single value: COMPACT")."""
    if pool.placement != "compact":
        return None
    return gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT")


def hardened_node_settings(service_account: pulumi.Input[str]) -> dict[str, Any]:
    """NodeConfig settings every pool shares: its own service account, the GKE metadata server
    (pods never see the node's credentials), Secure Boot and integrity monitoring."""
    return {
        "service_account": service_account,
        "oauth_scopes": list(OAUTH_SCOPES),
        "workload_metadata_config": gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
            mode="GKE_METADATA"
        ),
        "shielded_instance_config": gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
            **SHIELDED_INSTANCE
        ),
    }


def initial_nodes_per_zone(pool: NodePoolConfig) -> int:
    """The pool's first nodes, per zone: GKE creates `initial_node_count` in EACH of its zones
    (terraform-provider-google container_node_pool docs: "initial_node_count - The initial
    number of nodes for the pool. In regional or multi-zonal clusters, this is the number of
    nodes per zone"), so minNodes 1 over two zones would start two nodes. Rounded down: the
    autoscaler adds what the pods need, and minNodes is a total (total_min_node_count). A pool
    whose zones are not known here (GKE picks them) counts as one zone."""
    return pool.min_nodes // max(1, len(pool.zones))


# The NodePool settings this program sets whose change REPLACES the pool: ForceNew in the
# Terraform schema pulumi-gcp bridges (hashicorp/terraform-provider-google-beta v7.45.0, commit
# 3dc173a3, the upstream pinned by pulumi/pulumi-gcp v9.35.0; checked 2026-11-22):
# google-beta/services/container/node_config.go `guest_accelerator` (line 316: type, count,
# gpu_driver_installation_config.gpu_driver_version, gpu_partition_size, gpu_sharing_config),
# `spot` (635), `oauth_scopes` (579), `shielded_instance_config` (665) and `service_account`
# (643); resource_container_node_pool.go `name` (527), `initial_node_count` (480, ignored after
# creation, see below), `project`/`cluster`/`location` (239-256). Updated in place, so NOT here:
# machine_type (nodePoolNodeConfigUpdate), image_type, labels, resource_labels,
# workload_metadata_config, autoscaling, node_locations, management, upgrade_settings.
# project/cluster/location are left out: a different cluster holds no pool of this name, so
# they cannot collide. service_account is hashed only when cluster.nodeServiceAccount names one
# (the stack's own account changes only with the cluster's name, which replaces the cluster).
# secondary_boot_disks is ForceNew too (node_config.go lines 513-535 at 93c65b2d, the
# terraform-provider-google-beta HEAD of 2026-08-21; GKE: "when you modify the disk image you must
# create a new node pool"); it is hashed only when set, so pools without one keep their names.
# gcfs_config (image streaming) is updated in place (node_config.go line 4488, "updating GKE node
# pool gcfs_config"), so it is not here.
def replacement_settings(pool: NodePoolConfig) -> dict[str, Any]:
    """The pool's replacement-forcing settings, as plain values (what gke_pool_name hashes)."""
    cold_start = (
        {"secondaryBootDisks": [[pool.secondary_boot_disk, CONTAINER_IMAGE_CACHE]]}
        if pool.secondary_boot_disk
        else {}
    )
    account = {"serviceAccount": pool.service_account} if pool.service_account else {}
    return {
        **cold_start,
        **account,
        "gpuType": pool.gpu_type,
        "gpuCount": pool.gpu_count,
        "gpuDriverVersion": DRIVER_VERSIONS[pool.driver],
        "gpuSharing": (
            [pool.sharing.strategy, pool.sharing.max_clients_per_gpu] if pool.sharing else None
        ),
        "gpuPartitionSize": pool.partition_size,
        "spot": pool.spot,
        "oauthScopes": list(OAUTH_SCOPES),
        "shieldedInstance": dict(sorted(SHIELDED_INSTANCE.items())),
        # Reservation affinity, placement policy and flex-start are taken as replacing the pool
        # (assumed, not confirmed in the Terraform schema here): a change then gives the pool a
        # new name and a create-before-delete replacement, safe either way. Added only when
        # set, so pools without them keep the names they had.
        **capacity_settings(pool),
    }


def capacity_settings(pool: NodePoolConfig) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    if pool.reservation is not None:
        settings["reservation"] = pool.reservation.name or "ANY_RESERVATION"
    if pool.placement is not None:
        settings["placement"] = pool.placement
    if pool.flex_start:
        settings["flexStart"] = True
    if pool.queued_provisioning:
        settings["queuedProvisioning"] = True
    return settings


def gke_pool_name(pool: NodePoolConfig) -> str:
    """The pool's GKE name: its config name and a hash of its replacement-forcing settings.

    A change that replaces the pool also changes its name, so the new pool can exist next to
    the old one: Pulumi creates it, workloads roll over to it (they select it by this name,
    components/service/placement.py node_selector), and only then is the old pool deleted. Settings
    GKE
    updates in place (machine type, node counts, labels) leave the name as it is.
    """
    digest = hashlib.sha256(
        json.dumps(replacement_settings(pool), sort_keys=True).encode()
    ).hexdigest()[:NAME_HASH_LENGTH]
    stem = pool.name[: GKE_NAME_MAX - NAME_HASH_LENGTH - 1].rstrip("-")
    return f"{stem}-{digest}"


def cold_start_settings(pool: NodePoolConfig) -> dict[str, Any]:
    """NodeConfig settings that shorten a cold start: image streaming (gcfs_config) and a
    secondary boot disk holding the workload's images (Google's gke-disk-image-builder;
    docs/cold-starts.md, "Preloaded images"). Field names: pulumi-gcp 10.2.0
    NodePoolNodeConfigArgs."""
    settings: dict[str, Any] = {}
    if pool.image_streaming:
        settings["gcfs_config"] = gcp.container.NodePoolNodeConfigGcfsConfigArgs(enabled=True)
    if pool.secondary_boot_disk:
        settings["secondary_boot_disks"] = [
            gcp.container.NodePoolNodeConfigSecondaryBootDiskArgs(
                disk_image=pool.secondary_boot_disk, mode=CONTAINER_IMAGE_CACHE
            )
        ]
    return settings


def boot_disk_type(pool: NodePoolConfig) -> str | None:
    """The boot disk type to name: hyperdisk-balanced on machines that boot only from it (A3
    Ultra, A4, A4X, G4; components/facts/catalog/machines.py has the sources), else None, so GKE
    keeps its default (pd-balanced) and other pools send nothing new. Not in
    replacement_settings: the type is the only one those machines boot from, so a pool GKE
    already created on one has it and sees no change."""
    machine = catalog.machine_for(pool.gpu_type, pool.gpu_count, pool.machine_type)
    return machine.boot_disk_type if machine is not None else None


def resource_labels(pool: NodePoolConfig) -> dict[str, str]:
    """GCE labels on the pool's VMs; a pool kept warm says why, for the policy pack and billing."""
    labels = {POOL_RESOURCE_LABEL: pool.name}
    if pool.min_nodes_reason:
        labels[MIN_NODES_REASON_LABEL] = pool.min_nodes_reason
    return labels


def node_config(
    pool: NodePoolConfig, service_account: pulumi.Input[str]
) -> gcp.container.NodePoolNodeConfigArgs:
    """The pool's nodes: machine, GPUs, how they are bought, labels, hardening, cold start."""
    return gcp.container.NodePoolNodeConfigArgs(
        machine_type=pool.machine_type,
        disk_type=boot_disk_type(pool),
        image_type=pool.image_type,
        spot=pool.spot,
        # Flex-start (Dynamic Workload Scheduler): GKE creates the nodes when capacity frees up,
        # for up to seven days each (https://cloud.google.com/kubernetes-engine/docs/concepts/dws).
        flex_start=True if pool.flex_start else None,
        reservation_affinity=reservation_affinity(pool),
        guest_accelerators=[guest_accelerator(pool)],
        labels={POOL_LABEL: pool.name},
        resource_labels=resource_labels(pool),
        **hardened_node_settings(service_account),
        **cold_start_settings(pool),
    )


class GpuNodePool(pulumi.ComponentResource):
    """A GKE node pool with GPUs attached: autoscaling, Spot, driver mode, sharing/MIG."""

    name: pulumi.Output[str]
    """The node pool's GKE name (also its nodes' NODEPOOL_LABEL, components/facts/labels.py)."""
    capacity: list[gcp.container.NodePool]
    """What GPU workloads wait for (GpuWorkloadArgs.after): the GKE NodePool."""
    service_pool: ServiceNodePool
    """The pool as GpuService reads it: hand it to GpuService's `nodePools`, and its pods land
    on this pool (components/platform/pool_entry.py)."""

    def __init__(
        self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        args = typed.build(GpuNodePoolArgs, args)
        ArgsError.check("GpuNodePool", name, pool_args_problems(args.pool, args.location))
        super().__init__("gke-gpu:index:GpuNodePool", name, None, opts)
        pool = NodePoolConfig.of(args.pool)
        node_pool = gcp.container.NodePool(
            f"{name}-pool",
            name=gke_pool_name(pool),
            project=args.project,
            location=args.location,
            cluster=args.cluster_name,
            node_locations=list(pool.zones) or None,
            initial_node_count=initial_nodes_per_zone(pool),
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                # Totals count nodes across all zones, so "1 to 4 over two zones" means 1 to 4.
                total_min_node_count=pool.min_nodes,
                total_max_node_count=pool.max_nodes,
                # ANY takes capacity in whichever zone has it: GPUs and Spot VMs stock out.
                location_policy="ANY",
            ),
            placement_policy=placement_policy(pool),
            # Nodes only through ProvisioningRequests (pulumi-gcp 10.2.0 NodePoolArgs
            # queued_provisioning; gcloud's --enable-queued-provisioning, components/config/
            # rules/batch.py has the sources); its nodes are flex-start VMs (pool.flex_start).
            queued_provisioning=(
                gcp.container.NodePoolQueuedProvisioningArgs(enabled=True)
                if pool.queued_provisioning
                else None
            ),
            node_config=node_config(pool, args.service_account),
            # Flex-start pools run without auto-repair (cluster-toolkit gke-node-pool:
            # "enable_flex_start needs node auto_repair set to false").
            management=gcp.container.NodePoolManagementArgs(
                auto_repair=not pool.flex_start, auto_upgrade=True
            ),
            upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(**NO_SURGE),
            opts=self._options(args),
        )
        self.capacity = [node_pool]
        self.name = node_pool.name
        # Not registered in the stack's state (what a program's stacks hold stays as it was); the
        # package's Construct returns it as an output (components/serve/provider.py).
        self.service_pool = service_pool(pool)
        self.register_outputs({"name": self.name})

    def _options(self, args: GpuNodePoolArgs) -> pulumi.ResourceOptions:
        """The pool's lifecycle: created after the system pool, protected with the stack, its
        node count left to the autoscaler, and replaced create-before-delete."""
        return pulumi.ResourceOptions(
            parent=self,
            # GKE's GPU guide (cloud.google.com/kubernetes-engine/docs/how-to/gpus): "When you
            # add a GPU node pool to an existing cluster that already runs a non-GPU node
            # pool, GKE automatically taints the GPU nodes" (nvidia.com/gpu:NoSchedule), so
            # the pool is created after the system pool. (Wording as quoted in kserve's
            # docs/samples/accelerators; the live page was not reachable, 2026-11-22.)
            depends_on=_after(args.after),
            protect=bool(args.protect),
            # The autoscaler owns the node count after creation; initial_node_count is
            # create-only, so a diff on it would replace the pool (and drain every node).
            ignore_changes=["initialNodeCount"],
            # Create the replacement first, then delete the old pool. The bridge asks for
            # delete-before-replace whenever an auto-nameable `name` is set explicitly
            # (pulumi/pulumi-terraform-bridge pkg/tfbridge/schema.go
            # nameRequiresDeleteBeforeReplace, lines 193-245, and provider.go line 1275, at
            # commit 59de6c66; pulumi-gcp auto-names every `name` through
            # SetAutonaming, provider/resources.go line 3014), even when the name changes.
            # The program's explicit false overrides that (pulumi/pulumi
            # pkg/resource/deploy/step_generator.go lines 2040-2046 at commit 1b594989),
            # which is safe because every replacement changes the name (gke_pool_name).
            delete_before_replace=False,
        )


def _after(
    after: pulumi.Input[Sequence[gcp.container.NodePool]] | None,
) -> pulumi.Input[Sequence[pulumi.Input[pulumi.Resource]]]:
    """`depends_on` for GpuNodePoolArgs.after: a list, or the Output the provider host hands
    over (the SDK resolves one: pulumi 3.272.0 runtime/_depends_on.py _resolve_depends_on)."""
    if after is None:
        return []
    return list(after) if isinstance(after, Sequence) else after
