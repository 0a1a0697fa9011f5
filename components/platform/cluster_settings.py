"""The GKE Cluster resource's arguments: endpoints, networking, security, monitoring and the
settings of each mode. Pure functions; GkeCluster (components/platform/cluster.py) registers the
resource.

Where a change to a setting could replace a deployed cluster, its comment names the Google
provider's behaviour (updated in place, or ForceNew: the cluster is replaced).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from ..config import ClusterConfig, Maintenance
from ..facts.labels import PRODUCTION_CLUSTER_LABEL
from .nodepool import (
    CLOUD_PLATFORM_SCOPE,
    NO_SURGE,
    OAUTH_SCOPES,
    SHIELDED_INSTANCE,
)

# GPU and workload metrics in Cloud Monitoring through Managed Service for Prometheus. DCGM is
# GKE's managed NVIDIA DCGM exporter package (pulumi-gcp 10.2.0 ClusterMonitoringConfigArgs.
# enable_components lists "DCGM"; GoogleCloudPlatform/accelerated-platforms sets it with
# managed_prometheus on Standard and on Autopilot clusters alike:
# platforms/gke/base/core/container_cluster/container_cluster.tf and container_cluster_ap/
# container_cluster.tf at 9320f3b2). Setting enable_components replaces GKE's default set, so the
# packages GKE enables by default on new clusters stay on: SYSTEM_COMPONENTS (system metrics);
# kube state metrics (STORAGE, POD, DEPLOYMENT, STATEFULSET, DAEMONSET, HPA; default from
# 1.29.2-gke.2000 Standard / 1.27.4-gke.900 Autopilot) and JOBSET (default from
# 1.32.1-gke.1357001) per GKE's "Collect and view kube state metrics"; CADVISOR and KUBELET
# (default from 1.29.3-gke.1093000, GKE's "Collect and view cAdvisor/Kubelet metrics"). The
# minimum GKE version of the DCGM package could not be read from Google's DCGM page in the
# sources at hand (checked 2026-11-22); every channel's default version in 2026 is 1.34 or later.
MONITORING_COMPONENTS = (
    "SYSTEM_COMPONENTS",
    "STORAGE",
    "POD",
    "DEPLOYMENT",
    "STATEFULSET",
    "DAEMONSET",
    "HPA",
    "JOBSET",
    "CADVISOR",
    "KUBELET",
    "DCGM",
)

# GKE Dataplane V2 (datapath_provider, pulumi-gcp 10.2.0 Cluster: "Set to `ADVANCED_DATAPATH` to
# enable Dataplane v2").
DATAPLANE_V2 = "ADVANCED_DATAPATH"
# The cluster evaluates the project's singleton Binary Authorization policy: GKE API
# BinaryAuthorization.EvaluationMode PROJECT_SINGLETON_POLICY_ENFORCE "Enforce Kubernetes admission
# requests with BinaryAuthorization using the project's singleton policy". The Google provider
# accepts only DISABLED and PROJECT_SINGLETON_POLICY_ENFORCE (resource_container_cluster.go
# binary_authorization.evaluation_mode ValidateFunc, terraform-provider-google@e03b7622 and
# -beta@93c65b2d alike), so continuous validation (POLICY_BINDINGS, monitoring-only platform
# policies) is not reachable from pulumi-gcp 10.2.0. "Audit mode" is therefore the project policy's
# enforcementMode DRYRUN_AUDIT_LOG_ONLY ("Binary Authorization allows all container images to be
# deployed, even if those images violate the ... policy. Policy compliance status messages are
# logged to Cloud Audit Logs", cloud.google.com/binary-authorization/docs/enabling-dry-run): a
# project-wide singleton that the bootstrap sets once (docs/delivery.md, "Production cluster
# keys"), never a per-stack program, which would fight every other stack of the project over it.
BINAUTHZ_EVALUATION_MODE = "PROJECT_SINGLETON_POLICY_ENFORCE"
# Standard and Autopilot alike: "Binary Authorization works with Autopilot or Standard clusters"
# (cloud.google.com/binary-authorization/docs/creating-cluster), and `gcloud container clusters
# create-auto` takes --binauthz-evaluation-mode, --database-encryption-key, --security-posture and
# --enable-google-cloud-access as `create` does (cloud.google.com/sdk/gcloud/reference/container/
# clusters/create-auto), so the settings below apply to both modes.
# Kubernetes security posture, standard tier (workload configuration auditing), on every cluster:
# free, outside the nodes, no effect on workloads (pulumi-gcp 10.2.0 ClusterSecurityPostureConfig
# mode: DISABLED, BASIC, ENTERPRISE). Workload vulnerability scanning is NOT requested: GKE removed
# its standard tier (VULNERABILITY_BASIC) on 2025-07-31 and Advanced Vulnerability Insights
# (VULNERABILITY_ENTERPRISE) on 2026-06-16, and a removed tier can no longer be enabled
# (cloud.google.com/kubernetes-engine/docs/deprecations/posture-management-deprecation and
# .../deprecations/vulnerability-scanning-gkee, checked 2026-11-22; Google.Cloud.Container.V1
# 3.38.0 VulnerabilityMode.VulnerabilityBasic: "Deprecated: Basic vulnerability scanning is no
# longer supported"). Image scanning lives in Artifact Analysis (Artifact Registry) instead.
SECURITY_POSTURE_MODE = "BASIC"


def dns_endpoint_open(cfg: ClusterConfig) -> bool:
    """Whether users reach the control plane through its DNS-based endpoint.

    Authorized networks keep the IP endpoint to the listed ranges; GKE's DNS-based endpoint lets
    clients elsewhere in, governed by IAM (container.clusters.connect) instead of their address
    ("About network isolation in GKE", https://cloud.google.com/kubernetes-engine/docs/concepts/
    network-isolation, checked 2026-11-22). Only when the stack asks (cluster.dnsEndpoint:
    external): otherwise the kubeconfig uses the IP endpoint, and `pulumi up` runs from inside
    the authorized networks.
    """
    return cfg.dns_endpoint == "external"


def cluster_args(
    project: str, cfg: ClusterConfig, node_sa: pulumi.Output[str], gcs_fuse: bool
) -> dict[str, Any]:
    """Every argument of the gcp.container.Cluster but its options."""
    autopilot = cfg.mode == "autopilot"
    return {
        "name": cfg.name,
        "project": project,
        "location": cfg.location,
        "deletion_protection": cfg.deletion_protection,
        "release_channel": gcp.container.ClusterReleaseChannelArgs(channel=cfg.release_channel),
        "private_cluster_config": private_cluster_config(cfg),
        "master_authorized_networks_config": authorized_networks(cfg),
        "network": cfg.network,
        "subnetwork": cfg.subnetwork,
        "ip_allocation_policy": ip_allocation_policy(cfg),
        "control_plane_endpoints_config": control_plane_endpoints(dns_endpoint_open(cfg)),
        "database_encryption": database_encryption(cfg.secrets_encryption_key),
        "binary_authorization": binary_authorization(cfg),
        "security_posture_config": gcp.container.ClusterSecurityPostureConfigArgs(
            mode=SECURITY_POSTURE_MODE
        ),
        "resource_labels": {PRODUCTION_CLUSTER_LABEL: "true"} if cfg.production else None,
        "maintenance_policy": maintenance_policy(cfg.maintenance),
        "node_config": None if autopilot else default_pool_node_config(node_sa),
        **(_autopilot_args(node_sa) if autopilot else _standard_args(project, cfg, node_sa)),
        "monitoring_config": monitoring_config(),
        "addons_config": addons_config(autopilot, gcs_fuse),
    }


def maintenance_policy(
    maintenance: Maintenance | None,
) -> gcp.container.ClusterMaintenancePolicyArgs | None:
    """When GKE may upgrade the control plane and the nodes (cluster.maintenance).

    An upgrade recreates every node, so each GPU pod is evicted and its model reloads; the window
    keeps that to the hours the stack chooses, exclusions hold it back around events. Not
    ForceNew: `maintenance_policy` has no ForceNew field and the provider sends a change with
    SetMaintenancePolicy, an in-place update (hashicorp/terraform-provider-google@e03b7622
    google/services/container/resource_container_cluster.go, d.HasChange("maintenance_policy")).
    Unset: nothing is sent (None), as before this key existed, so stacks without it see no diff.
    """
    if maintenance is None or maintenance.window is None:
        return None
    window = maintenance.window
    return gcp.container.ClusterMaintenancePolicyArgs(
        recurring_window=gcp.container.ClusterMaintenancePolicyRecurringWindowArgs(
            start_time=window.start, end_time=window.end, recurrence=window.recurrence
        ),
        maintenance_exclusions=[
            gcp.container.ClusterMaintenancePolicyMaintenanceExclusionArgs(
                exclusion_name=e.name,
                start_time=e.start,
                end_time=e.end,
                exclusion_options=(
                    gcp.container.ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgs(
                        scope=e.scope
                    )
                ),
            )
            for e in maintenance.exclusions or ()
        ]
        or None,
    )


def private_cluster_config(
    cfg: ClusterConfig,
) -> gcp.container.ClusterPrivateClusterConfigArgs | None:
    """Nodes without external IPs (cluster.privateNodes); the endpoint stays public."""
    if not cfg.private_nodes:
        return None
    return gcp.container.ClusterPrivateClusterConfigArgs(
        enable_private_nodes=True, enable_private_endpoint=False
    )


def authorized_networks(
    cfg: ClusterConfig,
) -> gcp.container.ClusterMasterAuthorizedNetworksConfigArgs | None:
    """The ranges the control plane's IP endpoint admits (cluster.masterAuthorizedNetworks).

    Authorized networks otherwise still admit "Google Compute Engine Public IPs" (GKE API
    MasterAuthorizedNetworksConfig: "will disallow all external traffic ... except traffic from
    the given CIDR blocks, Google Compute Engine Public IPs and Google Prod IPs"): any VM anyone
    runs on Google Cloud. gcp_public_cidrs_access_enabled: false ("Whether Kubernetes master is
    accessible via Google Compute Engine Public IPs") closes that. Not ForceNew: the provider
    sends it with the control-plane endpoints update (resource_container_cluster.go,
    d.HasChange("master_authorized_networks_config") -> DesiredControlPlaneEndpointsConfig,
    terraform-provider-google@e03b7622), an in-place update of a deployed cluster.
    """
    if not cfg.master_authorized_networks:
        return None
    return gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
        cidr_blocks=[
            gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                cidr_block=cidr, display_name=f"authorized-{i}"
            )
            for i, cidr in enumerate(cfg.master_authorized_networks)
        ],
        gcp_public_cidrs_access_enabled=False,
    )


def ip_allocation_policy(cfg: ClusterConfig) -> gcp.container.ClusterIpAllocationPolicyArgs | None:
    """The subnetwork's named secondary ranges for pods and Services, when the stack names any."""
    if not (cfg.pod_range or cfg.service_range):
        return None
    return gcp.container.ClusterIpAllocationPolicyArgs(
        cluster_secondary_range_name=cfg.pod_range,
        services_secondary_range_name=cfg.service_range,
    )


def binary_authorization(cfg: ClusterConfig) -> gcp.container.ClusterBinaryAuthorizationArgs | None:
    """The project's Binary Authorization policy, evaluated (cluster.binaryAuthorization)."""
    if not cfg.binary_authorization:
        return None
    return gcp.container.ClusterBinaryAuthorizationArgs(evaluation_mode=BINAUTHZ_EVALUATION_MODE)


def control_plane_endpoints(
    external: bool,
) -> gcp.container.ClusterControlPlaneEndpointsConfigArgs:
    """Who may send requests to the DNS-based endpoint: anyone IAM admits (external), or no user.

    Always sent, false included: control_plane_endpoints_config is Optional+Computed in the Google
    provider, so leaving it out would keep whatever a cluster has (an endpoint once opened would
    stay open). allow_external_traffic: "Controls whether user traffic is allowed over this
    endpoint. Note that GCP-managed services may still use the endpoint even if this is false"
    (resource_container_cluster.go at terraform-provider-google@e03b7622). The provider already
    sends false on create when the block is absent (expandControlPlaneEndpointsConfig force-sends
    AllowExternalTraffic), so clusters deployed without it see no change. Either way an in-place
    update (d.HasChange("control_plane_endpoints_config") -> UpdateCluster), never ForceNew.
    """
    return gcp.container.ClusterControlPlaneEndpointsConfigArgs(
        dns_endpoint_config=gcp.container.ClusterControlPlaneEndpointsConfigDnsEndpointConfigArgs(
            allow_external_traffic=external
        )
    )


def database_encryption(key: str | None) -> gcp.container.ClusterDatabaseEncryptionArgs | None:
    """Application-layer Secret encryption with the stack's Cloud KMS key.

    GKE encrypts Secrets with a data key wrapped by this key ("Encrypt secrets at the application
    layer", cloud.google.com/kubernetes-engine/docs/how-to/encrypting-secrets: "you can enable the
    feature on a new or existing cluster ... GKE encrypts all new and existing Secrets"). The GKE
    service agent needs roles/cloudkms.cryptoKeyEncrypterDecrypter on the key, granted by the
    bootstrap (docs/delivery.md). Not ForceNew: database_encryption is Optional+Computed and the
    provider updates it in place (d.HasChange("database_encryption") -> DesiredDatabaseEncryption,
    resource_container_cluster.go at terraform-provider-google@e03b7622; gcloud container
    clusters update --database-encryption-key). Unset: nothing is sent and a cluster's current
    setting is kept (Computed), so removing the key never silently decrypts.
    """
    if key is None:
        return None
    return gcp.container.ClusterDatabaseEncryptionArgs(state="ENCRYPTED", key_name=key)


def monitoring_config() -> gcp.container.ClusterMonitoringConfigArgs:
    """Managed collection on (PodMonitoring objects are scraped) and GKE's DCGM GPU metrics."""
    return gcp.container.ClusterMonitoringConfigArgs(
        enable_components=list(MONITORING_COMPONENTS),
        managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(enabled=True),
    )


def addons_config(autopilot: bool, gcs_fuse: bool) -> gcp.container.ClusterAddonsConfigArgs | None:
    """Standard: the Cloud Storage FUSE CSI driver add-on when a workload mounts a model cache
    ("The Cloud Storage FUSE CSI driver is not enabled by default in Standard clusters"; on
    Autopilot it "is enabled by default"; GKE, "Set up the Cloud Storage FUSE CSI driver for
    GKE", cloud.google.com/kubernetes-engine/docs/how-to/cloud-storage-fuse-csi-driver-setup,
    checked 2026-11-22). Updated in place (terraform-provider-google-beta
    resource_container_cluster.go, d.HasChange("addons_config"), line 4158 at 93c65b2d)."""
    if autopilot or not gcs_fuse:
        return None
    return gcp.container.ClusterAddonsConfigArgs(
        gcs_fuse_csi_driver_config=gcp.container.ClusterAddonsConfigGcsFuseCsiDriverConfigArgs(
            enabled=True
        )
    )


def _standard_args(project: str, cfg: ClusterConfig, node_sa: pulumi.Output[str]) -> dict[str, Any]:
    autoscaling = _auto_provisioning(cfg, node_sa)
    return {
        **({"cluster_autoscaling": autoscaling} if autoscaling is not None else {}),
        # GKE Dataplane V2 enforces NetworkPolicy ("network policy enforcement is built into GKE
        # Dataplane V2", https://cloud.google.com/kubernetes-engine/docs/how-to/dataplane-v2,
        # checked 2026-11-22); Autopilot clusters have it already. The field is create-only: the
        # Google provider marks datapath_provider ForceNew (hashicorp/terraform-provider-google
        # google/services/container/resource_container_cluster.go lines 2438-2446, commit
        # e03b7622), so turning it on for an existing cluster REPLACES the cluster (a protected
        # one stops the update instead). cluster.dataplaneV2: false keeps an older cluster's.
        **({"datapath_provider": DATAPLANE_V2} if cfg.dataplane_v2 else {}),
        # GKE needs one node to create a cluster; this removes it right after and the system
        # pool takes over. Its node_config (default_pool_node_config) keeps even that node off
        # the default Compute Engine account.
        "remove_default_node_pool": True,
        "initial_node_count": 1,
        "workload_identity_config": gcp.container.ClusterWorkloadIdentityConfigArgs(
            workload_pool=f"{project}.svc.id.goog"
        ),
        "enable_shielded_nodes": True,
    }


def default_pool_node_config(node_sa: pulumi.Input[str]) -> gcp.container.ClusterNodeConfigArgs:
    """The node settings of the temporary default pool a Standard cluster is created with.

    Without them GKE creates that pool as the Compute Engine default service account
    (terraform-provider-google website/docs/r/container_cluster.html.markdown: "node_config -
    Parameters used in creating the default node pool"; its service_account: "If not specified,
    the 'default' service account is used"), so the deploy identity would need actAs on that
    account, which docs/delivery.md never grants, and creation fails where the default account
    is disabled (hashicorp/terraform-provider-google#4435). The cluster ignores later changes to
    nodeConfig (the pool is gone), so deployed stacks see no diff.
    """
    return gcp.container.ClusterNodeConfigArgs(
        service_account=node_sa,
        oauth_scopes=list(OAUTH_SCOPES),
        workload_metadata_config=gcp.container.ClusterNodeConfigWorkloadMetadataConfigArgs(
            mode="GKE_METADATA"
        ),
        shielded_instance_config=gcp.container.ClusterNodeConfigShieldedInstanceConfigArgs(
            **SHIELDED_INSTANCE
        ),
    )


def _auto_provisioning(
    cfg: ClusterConfig, node_sa: pulumi.Output[str]
) -> gcp.container.ClusterClusterAutoscalingArgs | None:
    """Standard with ComputeClass workloads: node auto-provisioning, capped by resource limits
    that cover every pool and every class workload at its maximum (config rules/
    capacity_sources.py). pulumi-gcp 10.2.0 ClusterClusterAutoscalingArgs.enabled: "Resource
    limits for cpu and memory must be defined to enable node auto-provisioning for GKE
    Standard"; GPU limits are named by accelerator type, as GoogleCloudPlatform/
    accelerated-platforms cluster_variables.tf (cluster_node_auto_provisioning_resource_limits)
    does; memory is in GB (terraform-google-kubernetes-engine main.tf maps max_memory_gb to the
    `memory` limit). Node pools GKE creates get the same hardened identity as ours."""
    if not cfg.auto_provisioning_limits:
        return None
    return gcp.container.ClusterClusterAutoscalingArgs(
        enabled=True,
        resource_limits=[
            gcp.container.ClusterClusterAutoscalingResourceLimitArgs(
                resource_type=resource, maximum=maximum
            )
            for resource, maximum in cfg.auto_provisioning_limits
        ],
        auto_provisioning_defaults=(
            gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsArgs(
                service_account=node_sa,
                oauth_scopes=[CLOUD_PLATFORM_SCOPE],
                management=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsManagementArgs(
                    auto_repair=True, auto_upgrade=True
                ),
                shielded_instance_config=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsShieldedInstanceConfigArgs(
                    **SHIELDED_INSTANCE
                ),
                upgrade_settings=nap_upgrade_settings(),
            )
        ),
    )


def nap_upgrade_settings() -> (
    gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsUpgradeSettingsArgs
):
    """Node pools GKE auto-provisions for ComputeClasses upgrade one node at a time without a
    surge node, as our own GPU pools do (components/platform/nodepool.py GpuNodePool): the
    auto-provisioning limits hold every class workload at its maximum and no more
    (rules/capacity_sources.py), so a surge GPU node would be over the limit (and over the GPU
    quota sized for it), and an upgrade waiting for it would never finish. Unset, GKE surges
    (maxSurge 1, maxUnavailable 0: "Configure node upgrade strategies", cloud.google.com/
    kubernetes-engine/docs/how-to/node-pool-upgrade-strategies; NOT re-checked here). Not ForceNew:
    auto_provisioning_defaults.upgrade_settings is Optional+Computed and sent with the
    cluster_autoscaling update (terraform-provider-google@e03b7622 resource_container_cluster.go,
    d.HasChange("cluster_autoscaling") -> DesiredClusterAutoscaling)."""
    return gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsUpgradeSettingsArgs(
        **NO_SURGE
    )


def _autopilot_args(node_sa: pulumi.Output[str]) -> dict[str, Any]:
    return {
        "enable_autopilot": True,
        # Autopilot nodes get the dedicated account too, not the default compute account.
        "cluster_autoscaling": gcp.container.ClusterClusterAutoscalingArgs(
            auto_provisioning_defaults=(
                gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsArgs(
                    service_account=node_sa, oauth_scopes=[CLOUD_PLATFORM_SCOPE]
                )
            )
        ),
    }
