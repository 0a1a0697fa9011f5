"""The cluster: GkeCluster builds one on GKE; ExistingCluster only connects to one."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import yaml

from components.config import ClusterConfig, ExistingClusterConfig, Secret
from components.config.rules.registry import READER_ROLE, Repository
from components.nodepool import (
    CLOUD_PLATFORM_SCOPE,
    OAUTH_SCOPES,
    SHIELDED_INSTANCE,
    hardened_node_settings,
)

# Least-privilege node identity: Google's "Use least privilege IAM service accounts" guide
# (cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa)
# grants a custom node service account the single role below instead of the default Compute
# Engine account's Editor; reading images from Artifact Registry is granted per repository.
NODE_ROLES = ("roles/container.defaultNodeServiceAccount",)
# Image streaming with a custom node service account: "you must ensure that the custom service
# account has the Service Usage Consumer (roles/serviceusage.serviceUsageConsumer) IAM role in the
# project that hosts the container image" (GKE, "Use Image streaming to pull container images",
# Requirements; cloud.google.com/kubernetes-engine/docs/how-to/image-streaming, checked
# 2026-11-22). Granted in the cluster's project: Autopilot always streams, Standard pools when
# they set imageStreaming; images in other projects need the same grant there (README).
IMAGE_STREAMING_ROLE = "roles/serviceusage.serviceUsageConsumer"

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
# A GCE label on a production cluster (cluster.production): the policy pack's production rules key
# on it, never on the stack's name (policy/rules/props.py PRODUCTION_CLUSTER_LABEL).
PRODUCTION_LABEL = "gke-gpu-production"

AUTH_PLUGIN_HINT = (
    "Install gke-gcloud-auth-plugin: `gcloud components install gke-gcloud-auth-plugin` "
    "(https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl)"
)


@dataclass(frozen=True)
class GkeClusterArgs:
    project: str
    region: str
    cluster: ClusterConfig
    gcs_fuse_csi_driver: bool = False
    """Standard: enable the Cloud Storage FUSE CSI driver add-on (a workload has modelCache).
    Autopilot has it on by default."""
    image_streaming: bool = False
    """Standard: a node pool streams images, so the node service account needs Service Usage
    Consumer (Autopilot always streams and always gets it)."""
    image_repositories: tuple[Repository, ...] = ()
    """Artifact Registry repositories (of the cluster's project) the nodes pull images from."""


def kubeconfig_yaml(context: str, endpoint: str, ca_certificate: str | None) -> str:
    """A kubeconfig that authenticates through gke-gcloud-auth-plugin: no token is stored in it.

    `ca_certificate` None: the DNS-based endpoint, whose certificate the system's roots verify;
    gcloud writes no certificate-authority-data for it either (googlecloudsdk api_lib/container/
    kubeconfig.py Cluster(), `has_dns_endpoint`, google-cloud-sdk 578.0.0, checked 2026-11-22).
    """
    cluster: dict[str, str] = {"server": f"https://{endpoint}"}
    if ca_certificate is not None:
        cluster["certificate-authority-data"] = ca_certificate
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": cluster}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
        "users": [
            {
                "name": context,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "gke-gcloud-auth-plugin",
                        "installHint": AUTH_PLUGIN_HINT,
                        "provideClusterInfo": True,
                    }
                },
            }
        ],
    }
    return yaml.safe_dump(document, sort_keys=False)


def dns_endpoint_of(endpoints: Any) -> str | None:
    """The DNS-based control-plane endpoint GKE assigned (uid.<location>.gke.goog), if any."""

    # Output.all hands nested provider types over as dicts (snake_case keys), .apply as objects.
    def field(value: Any, name: str) -> Any:
        return value.get(name) if isinstance(value, dict) else getattr(value, name, None)

    return field(field(endpoints, "dns_endpoint_config"), "endpoint") or None


def endpoint_kubeconfig(context: str, ip: str, ca: str | None, endpoints: Any) -> str:
    """The kubeconfig for the DNS endpoint when GKE reports one (no CA: its certificate is
    publicly trusted), else for the IP endpoint with the cluster's CA."""
    dns = dns_endpoint_of(endpoints)
    return kubeconfig_yaml(context, dns, None) if dns else kubeconfig_yaml(context, ip, ca or "")


def node_service_account_id(cluster_name: str) -> str:
    """A service-account id (6-30 chars, ends alphanumeric) derived from the cluster name."""
    return f"{cluster_name[:24].rstrip('-')}-nodes"


class GkeCluster(pulumi.ComponentResource):
    """A GKE cluster (Standard with a system pool, or Autopilot) and a provider that targets it."""

    name: pulumi.Output[str]
    """The cluster's GKE name."""
    endpoint: pulumi.Output[str]
    """The control plane's IP address."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig using gke-gcloud-auth-plugin (secret)."""
    node_service_account: pulumi.Output[str]
    """Email of the nodes' dedicated service account."""
    provider: k8s.Provider
    """The Kubernetes provider for everything deployed into the cluster."""
    system_pools: list[gcp.container.NodePool]
    """Standard: the system pool, which GPU pools wait for (GpuNodePoolArgs.after)."""

    def __init__(
        self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:GkeCluster", name, None, opts)
        cfg = args.cluster
        child = pulumi.ResourceOptions(parent=self)
        autopilot = cfg.mode == "autopilot"
        # Authorized networks keep the IP endpoint to the listed ranges; GKE's DNS-based endpoint
        # lets clients elsewhere in, governed by IAM (container.clusters.connect) instead of their
        # address ("About network isolation in GKE", https://cloud.google.com/kubernetes-engine/
        # docs/concepts/network-isolation, checked 2026-11-22). Only when the stack asks
        # (cluster.dnsEndpoint: external): otherwise the kubeconfig uses the IP endpoint, and
        # `pulumi up` runs from inside the authorized networks.
        dns_endpoint = cfg.dns_endpoint == "external"
        # In a protected stack the resources a running service stands on are protected too:
        # the system pool (GpuNodePoolArgs.protect does the same for GPU pools) and Cloud NAT.
        # `pulumi destroy --skip-preview` refuses a protected delete only when it reaches it
        # (pkg/resource/deploy/step.go DeleteStep.Apply, lines 644-649), carries on past that
        # error (step_executor.go cancelDueToError, lines 442-449) and skips only what the
        # protected resource depends on (deployment_executor.go, lines 513-547; pulumi/pulumi
        # at commit 1b594989, checked 2026-11-22). Without these flags a protected cluster
        # would be left with no nodes and no egress.
        protected = pulumi.ResourceOptions(parent=self, protect=cfg.deletion_protection)

        roles: list[pulumi.Resource] = []
        node_sa: pulumi.Output[str]
        if cfg.node_service_account is not None:
            # An account created beforehand (docs/delivery.md): the deploy identity then needs
            # roles/iam.serviceAccountUser on that one account only, and no right to create
            # accounts or grant project roles.
            node_sa = pulumi.Output.from_input(cfg.node_service_account)
        else:
            nodes_sa = gcp.serviceaccount.Account(
                f"{name}-nodes",
                project=args.project,
                account_id=node_service_account_id(cfg.name),
                display_name=f"GKE nodes of {cfg.name} (gke-gpu)",
                opts=child,
            )
            node_sa = nodes_sa.email
            member = nodes_sa.email.apply(lambda email: f"serviceAccount:{email}")
            roles = [
                gcp.projects.IAMMember(
                    f"{name}-nodes-{role.rsplit('.', 1)[-1].lower()}",
                    project=args.project,
                    role=role,
                    member=member,
                    opts=child,
                )
                for role in (
                    *NODE_ROLES,
                    *((IMAGE_STREAMING_ROLE,) if autopilot or args.image_streaming else ()),
                )
            ]

        # The nodes read the workloads' private images: reader on each repository, not the
        # project (rules/registry.py has the source). Everything deployed through the provider
        # waits for these grants, so no pod starts pulling before it may.
        readers = [
            gcp.artifactregistry.RepositoryIamMember(
                f"{name}-nodes-read-{repo.location}-{repo.repository}",
                project=repo.project,
                location=repo.location,
                repository=repo.repository,
                role=READER_ROLE,
                member=node_sa.apply(lambda email: f"serviceAccount:{email}"),
                opts=child,
            )
            for repo in args.image_repositories
        ]

        if cfg.cloud_nat:
            # Private nodes have no external IP: Cloud NAT lets them pull public images
            # (Docker Hub, Hugging Face) while staying unreachable from the internet. It serves
            # the cluster's subnetwork alone: ALL_SUBNETWORKS_ALL_IP_RANGES would become the
            # egress of every other subnet of the network in the region, and the Compute API
            # refuses it when any other NAT there covers a subnet (RouterNat,
            # sourceSubnetworkIpRangesToNat; the sources are in nat_subnetworks).
            router = gcp.compute.Router(
                f"{name}-router",
                project=args.project,
                region=args.region,
                network=cfg.network,
                opts=protected,
            )
            gcp.compute.RouterNat(
                f"{name}-nat",
                project=args.project,
                region=args.region,
                router=router.name,
                nat_ip_allocate_option="AUTO_ONLY",
                source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
                subnetworks=nat_subnetworks(args.project, args.region, cfg),
                opts=protected,
            )

        cluster = gcp.container.Cluster(
            f"{name}-cluster",
            name=cfg.name,
            project=args.project,
            location=cfg.location,
            deletion_protection=cfg.deletion_protection,
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=cfg.release_channel),
            private_cluster_config=(
                gcp.container.ClusterPrivateClusterConfigArgs(
                    enable_private_nodes=True, enable_private_endpoint=False
                )
                if cfg.private_nodes
                else None
            ),
            master_authorized_networks_config=(
                gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                    cidr_blocks=[
                        gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                            cidr_block=cidr, display_name=f"authorized-{i}"
                        )
                        for i, cidr in enumerate(cfg.master_authorized_networks)
                    ],
                    # Authorized networks otherwise still admit "Google Compute Engine Public IPs"
                    # (GKE API MasterAuthorizedNetworksConfig: "will disallow all external
                    # traffic ... except traffic from the given CIDR blocks, Google Compute
                    # Engine Public IPs and Google Prod IPs"): any VM anyone runs on Google
                    # Cloud. gcp_public_cidrs_access_enabled: false ("Whether Kubernetes master
                    # is accessible via Google Compute Engine Public IPs") closes that. Not
                    # ForceNew: the provider sends it with the control-plane endpoints update
                    # (resource_container_cluster.go, d.HasChange("master_authorized_networks_
                    # config") -> DesiredControlPlaneEndpointsConfig, terraform-provider-google
                    # @e03b7622), an in-place update of a deployed cluster.
                    gcp_public_cidrs_access_enabled=False,
                )
                if cfg.master_authorized_networks
                else None
            ),
            network=cfg.network,
            subnetwork=cfg.subnetwork,
            ip_allocation_policy=(
                gcp.container.ClusterIpAllocationPolicyArgs(
                    cluster_secondary_range_name=cfg.pod_range,
                    services_secondary_range_name=cfg.service_range,
                )
                if cfg.pod_range or cfg.service_range
                else None
            ),
            control_plane_endpoints_config=control_plane_endpoints(dns_endpoint),
            database_encryption=database_encryption(cfg.secrets_encryption_key),
            binary_authorization=(
                gcp.container.ClusterBinaryAuthorizationArgs(
                    evaluation_mode=BINAUTHZ_EVALUATION_MODE
                )
                if cfg.binary_authorization
                else None
            ),
            security_posture_config=gcp.container.ClusterSecurityPostureConfigArgs(
                mode=SECURITY_POSTURE_MODE
            ),
            resource_labels={PRODUCTION_LABEL: "true"} if cfg.production else None,
            node_config=None if autopilot else default_pool_node_config(node_sa),
            **(
                _autopilot_args(node_sa)
                if autopilot
                else _standard_args(args.project, cfg, node_sa)
            ),
            monitoring_config=monitoring_config(),
            addons_config=addons_config(autopilot, args.gcs_fuse_csi_driver),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=roles,
                # Pulumi's protect mirrors GKE's deletion protection: a destroy (or a
                # replacement) stops before it starts instead of failing halfway through.
                protect=cfg.deletion_protection,
                # GKE fills node_config and the default pool's count in on its own; the
                # default pool is removed right after creation, so a diff there means nothing.
                ignore_changes=[] if autopilot else ["nodeConfig", "initialNodeCount"],
            ),
        )

        self.system_pools = []
        if not autopilot:
            self.system_pools.append(
                gcp.container.NodePool(
                    f"{name}-system",
                    name="system",
                    project=args.project,
                    location=cfg.location,
                    cluster=cluster.name,
                    node_count=cfg.system_nodes,
                    node_config=gcp.container.NodePoolNodeConfigArgs(
                        machine_type=cfg.system_machine_type,
                        labels={"gke-gpu/role": "system"},
                        **hardened_node_settings(node_sa),
                    ),
                    management=gcp.container.NodePoolManagementArgs(
                        auto_repair=True, auto_upgrade=True
                    ),
                    opts=protected,
                )
            )

        context = f"gke_{args.project}_{cfg.location}_{cfg.name}"
        if dns_endpoint:
            # Asked for: `pulumi up` from outside the authorized networks (CI's hosted runners)
            # reaches the control plane through its DNS-based endpoint, where IAM decides.
            self.kubeconfig = pulumi.Output.secret(
                pulumi.Output.all(
                    cluster.endpoint,
                    cluster.master_auth.cluster_ca_certificate,
                    cluster.control_plane_endpoints_config,
                ).apply(lambda v: endpoint_kubeconfig(context, v[0], v[1], v[2]))
            )
        else:
            self.kubeconfig = pulumi.Output.secret(
                pulumi.Output.all(
                    cluster.endpoint, cluster.master_auth.cluster_ca_certificate
                ).apply(lambda v: kubeconfig_yaml(context, v[0], v[1] or ""))
            )
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # Only a new cluster replaces the provider (and everything deployed through it);
            # endpoint or CA changes of the same cluster are provider updates.
            cluster_identifier=cluster.id,
            # No delete_unreachable: with it, any unreachable API server (off VPN, missing auth
            # plugin, a control-plane upgrade) drops every Kubernetes object from state on
            # refresh or destroy. pulumi/pulumi-kubernetes#2489 keeps it opt-in "to avoid
            # accidental state deletion for a temporarily unreachable cluster". A cluster
            # deleted out of band: PULUMI_K8S_DELETE_UNREACHABLE=true for that one run (README).
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[cluster, *self.system_pools, *readers]
            ),
        )
        self.name = cluster.name
        self.endpoint = cluster.endpoint
        self.node_service_account = node_sa
        self.register_outputs(
            {
                "name": self.name,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "node_service_account": self.node_service_account,
            }
        )


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


def subnetwork_link(project: str, region: str, cfg: ClusterConfig) -> str:
    """The cluster's subnetwork as `projects/P/regions/R/subnetworks/N`: its own self-link, a
    name in the cluster's project and region, or the auto-mode `default` network's subnet of
    the region, which is itself named `default` (rules/cluster.py nat_problems refuses a custom
    network without a subnetwork)."""
    name = cfg.subnetwork or "default"
    if "/" in name:
        return name[name.index("projects/") :]
    return f"projects/{project}/regions/{region}/subnetworks/{name}"


def nat_subnetworks(
    project: str, region: str, cfg: ClusterConfig
) -> list[gcp.compute.RouterNatSubnetworkArgs]:
    """Cloud NAT for the cluster's subnetwork, primary and secondary (pod) ranges alike.

    Compute Engine API, RouterNat.sourceSubnetworkIpRangesToNat: LIST_OF_SUBNETWORKS takes the
    subnetworks listed in `subnetworks`; with ALL_SUBNETWORKS_ALL_IP_RANGES "no other Router.Nat
    section in any Router for this network in this region" may exist. ALL_IP_RANGES covers the
    primary and every secondary range (pods on VPC-native clusters).
    """
    return [
        gcp.compute.RouterNatSubnetworkArgs(
            name=subnetwork_link(project, region, cfg),
            source_ip_ranges_to_nats=["ALL_IP_RANGES"],
        )
    ]


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
            )
        ),
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


@dataclass(frozen=True)
class ExistingClusterArgs:
    cluster: ExistingClusterConfig
    kubeconfig: pulumi.Input[str] | None = None
    """The kubeconfig stored in the secret config key cluster.kubeconfig names (a secret)."""


def existing_cluster_identifier(cluster: ExistingClusterConfig) -> str:
    """What identifies the target cluster to the provider: the config key or context name.

    The kubeconfig's content changes whenever its credentials are rotated; tied to the content,
    the provider (and every object deployed through it) would be replaced on each rotation.
    Pointing the stack at another cluster means naming another key or context.
    """
    if isinstance(cluster.kubeconfig, Secret):
        # An inline kubeconfig: identified by its current context's API server, hashed (the URL
        # itself stays inside the secret). Rotated credentials keep it; another cluster changes it.
        return f"existing/kubeconfig-server/{_server_hash(cluster.kubeconfig)}"
    if cluster.kubeconfig is not None:
        return f"existing/kubeconfig/{cluster.kubeconfig}"
    return f"existing/context/{cluster.context}"


def _server_hash(kubeconfig: Secret) -> str:
    try:
        document = yaml.safe_load(kubeconfig.reveal()) or {}
        context = next(
            c["context"] for c in document["contexts"] if c["name"] == document["current-context"]
        )
        server = next(
            c["cluster"]["server"] for c in document["clusters"] if c["name"] == context["cluster"]
        )
    except (yaml.YAMLError, KeyError, StopIteration, TypeError):
        server = "unparsed"  # the provider reports the kubeconfig's own problem at `up`
    return hashlib.sha256(str(server).encode()).hexdigest()[:16]


class ExistingCluster(pulumi.ComponentResource):
    """A cluster this stack does not manage (kubeadm, another cloud): only a provider for it."""

    name: pulumi.Output[str]
    """The kubeconfig context deployed to, or 'existing' when a kubeconfig secret is used."""
    kubeconfig: pulumi.Output[str] | None
    """The kubeconfig from config (secret); None when a context of the ambient one is used."""
    provider: k8s.Provider
    """The Kubernetes provider for everything deployed into the cluster."""

    def __init__(
        self, name: str, args: ExistingClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:ExistingCluster", name, None, opts)
        cfg = args.cluster
        if (args.kubeconfig is None) == (cfg.context is None):
            raise ValueError("ExistingClusterArgs: give a kubeconfig or a context (config rule)")
        self.kubeconfig = (
            pulumi.Output.secret(args.kubeconfig) if args.kubeconfig is not None else None
        )
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            context=cfg.context,
            cluster_identifier=existing_cluster_identifier(cfg),
            # No delete_unreachable: the cluster outlives the stack, and an outage (VPN down)
            # must not drop the objects deployed in it from state.
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.name = pulumi.Output.from_input(cfg.name)
        self.register_outputs({"name": self.name, "kubeconfig": self.kubeconfig})
