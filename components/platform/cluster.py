"""The cluster: GkeCluster builds one on GKE; ExistingCluster only connects to one.

GkeCluster is split by concern, as terraform-google-kubernetes-engine splits its module (`sa`,
`networks`, `cluster`, `outputs`): the nodes' identity (service account, project roles, registry
readers), the network (Cloud Router and NAT), the Cluster resource (its arguments in
components/platform/cluster_settings.py), the system pool, and access (the kubeconfig, from
components/platform/kubeconfig.py, and the Kubernetes provider).
"""

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from ..config import ClusterConfig, ClusterMode, ClusterSettings, typed
from ..config.component_checks import (
    ArgsError,
    cluster_args_problems,
    existing_args_problems,
)
from ..config.rules.registry import READER_ROLE, Repository
from ..facts.labels import ROLE_LABEL
from .cluster_settings import cluster_args, dns_endpoint_open
from .kubeconfig import gke_kubeconfig
from .nodepool import hardened_node_settings

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
# they set imageStreaming; images in other projects need the same grant there (docs/cold-starts.md).
IMAGE_STREAMING_ROLE = "roles/serviceusage.serviceUsageConsumer"


@dataclass(frozen=True)
class GkeClusterArgs:
    project: str
    """The Google Cloud project the cluster is created in."""
    region: str
    """The region of the cluster (its location, or the region of its zone)."""
    cluster: ClusterSettings
    """The cluster's name, mode, location, network, access and maintenance."""
    gcs_fuse_csi_driver: bool | None = None
    """Standard: enable the Cloud Storage FUSE CSI driver add-on (a workload has modelCache).
    Autopilot has it on by default. Default: false."""
    gateway_api: bool | None = None
    """Standard: enable GKE's Gateway API controller, standard channel (a workload has
    `expose.domain`); Autopilot has it on. Default: false."""
    image_streaming: bool | None = None
    """Standard: a node pool streams images, so the node service account needs Service Usage
    Consumer (Autopilot always streams and always gets it). Default: false."""
    image_repositories: Sequence[Repository] | None = None
    """Artifact Registry repositories (of the cluster's project) the nodes pull images from."""


def gateway_api_config(
    cfg: ClusterConfig, wanted: bool
) -> gcp.container.ClusterGatewayApiConfigArgs | None:
    """Standard: GKE's Gateway controller, standard channel, for a Gateway (Autopilot runs
    it already). An in-place update: gateway_api_config is Optional and Computed, not ForceNew
    (hashicorp/terraform-provider-google google/services/container/resource_container_cluster.go;
    channels CHANNEL_DISABLED, CHANNEL_EXPERIMENTAL, CHANNEL_STANDARD). Unset (None) when no
    exposure needs it, so the clusters of other stacks see no diff."""
    if not wanted or cfg.mode == ClusterMode.AUTOPILOT:
        return None
    return gcp.container.ClusterGatewayApiConfigArgs(channel="CHANNEL_STANDARD")


def _cfg(args: GkeClusterArgs) -> ClusterConfig:
    """The cluster's settings with their defaults (the loader's, or a consumer's filled in)."""
    return ClusterConfig.of(args.cluster, args.region)


def node_service_account_id(cluster_name: str) -> str:
    """A service-account id (6-30 chars, ends alphanumeric) derived from the cluster name."""
    return f"{cluster_name[:24].rstrip('-')}-nodes"


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
    # `provider` (the Kubernetes provider for everything deployed into the cluster) is an
    # attribute for Python programs, not a package output: another language's SDK receives an
    # output as an Output<Provider>, which TypeScript refuses as a resource option and Pulumi
    # YAML as a provider (pulumi-eks removed its provider outputs for this, pulumi/pulumi#7012).
    # A consumer makes its own provider on `kubeconfig` (issue 41, docs/package.md).
    system_pools: list[gcp.container.NodePool]
    """Standard: the system pool, which GPU pools wait for (GpuNodePoolArgs.after)."""

    def __init__(
        self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        args = typed.build(GkeClusterArgs, args)
        args = dataclasses.replace(args, cluster=ClusterConfig.of(args.cluster, args.region))
        ArgsError.check("GkeCluster", name, cluster_args_problems(_cfg(args), args.region))
        super().__init__("gke-gpu:index:GkeCluster", name, None, opts)
        cfg = _cfg(args)
        # In a protected stack the resources a running service stands on are protected too:
        # the system pool (GpuNodePoolArgs.protect does the same for GPU pools) and Cloud NAT.
        # `pulumi destroy --skip-preview` refuses a protected delete only when it reaches it
        # (pkg/resource/deploy/step.go DeleteStep.Apply, lines 644-649), carries on past that
        # error (step_executor.go cancelDueToError, lines 442-449) and skips only what the
        # protected resource depends on (deployment_executor.go, lines 513-547; pulumi/pulumi
        # at commit 1b594989, checked 2026-11-22). Without these flags a protected cluster
        # would be left with no nodes and no egress.
        protected = pulumi.ResourceOptions(parent=self, protect=cfg.deletion_protection)
        node_sa, roles = self._node_identity(name, args)
        readers = self._registry_readers(name, args, node_sa)
        if cfg.cloud_nat:
            self._cloud_nat(name, args, protected)
        cluster = self._cluster(name, args, node_sa, roles)
        self.system_pools = (
            []
            if cfg.mode == ClusterMode.AUTOPILOT
            else [self._system_pool(name, args, cluster, node_sa, protected)]
        )
        context = f"gke_{args.project}_{cfg.location}_{cfg.name}"
        self.kubeconfig = gke_kubeconfig(cluster, context, dns_endpoint_open(cfg))
        self.provider = self._kubernetes_provider(name, cluster, readers)
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

    def _node_identity(
        self, name: str, args: GkeClusterArgs
    ) -> tuple[pulumi.Output[str], list[pulumi.Resource]]:
        """The nodes' service account (the stack's own, or one given) and its project roles."""
        cfg = _cfg(args)
        if cfg.node_service_account is not None:
            # An account created beforehand (docs/delivery.md): the deploy identity then needs
            # roles/iam.serviceAccountUser on that one account only, and no right to create
            # accounts or grant project roles.
            return pulumi.Output.from_input(cfg.node_service_account), []
        child = pulumi.ResourceOptions(parent=self)
        nodes_sa = gcp.serviceaccount.Account(
            f"{name}-nodes",
            project=args.project,
            account_id=node_service_account_id(cfg.name),
            display_name=f"GKE nodes of {cfg.name} (gke-gpu)",
            opts=child,
        )
        member = nodes_sa.email.apply(lambda email: f"serviceAccount:{email}")
        streaming = cfg.mode == ClusterMode.AUTOPILOT or args.image_streaming
        roles: list[pulumi.Resource] = [
            gcp.projects.IAMMember(
                f"{name}-nodes-{role.rsplit('.', 1)[-1].lower()}",
                project=args.project,
                role=role,
                member=member,
                opts=child,
            )
            for role in (*NODE_ROLES, *((IMAGE_STREAMING_ROLE,) if streaming else ()))
        ]
        return nodes_sa.email, roles

    def _registry_readers(
        self, name: str, args: GkeClusterArgs, node_sa: pulumi.Output[str]
    ) -> list[pulumi.Resource]:
        """The nodes read the workloads' private images: reader on each repository, not the
        project (rules/registry.py has the source). Everything deployed through the provider
        waits for these grants, so no pod starts pulling before it may."""
        return [
            gcp.artifactregistry.RepositoryIamMember(
                f"{name}-nodes-read-{repo.location}-{repo.repository}",
                project=repo.project,
                location=repo.location,
                repository=repo.repository,
                role=READER_ROLE,
                member=node_sa.apply(lambda email: f"serviceAccount:{email}"),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for repo in args.image_repositories or ()
        ]

    def _cloud_nat(
        self, name: str, args: GkeClusterArgs, protected: pulumi.ResourceOptions
    ) -> None:
        """Private nodes have no external IP: Cloud NAT lets them pull public images (Docker Hub,
        Hugging Face) while staying unreachable from the internet. It serves the cluster's
        subnetwork alone: ALL_SUBNETWORKS_ALL_IP_RANGES would become the egress of every other
        subnet of the network in the region, and the Compute API refuses it when any other NAT
        there covers a subnet (RouterNat, sourceSubnetworkIpRangesToNat; the sources are in
        nat_subnetworks)."""
        router = gcp.compute.Router(
            f"{name}-router",
            project=args.project,
            region=args.region,
            network=_cfg(args).network,
            opts=protected,
        )
        gcp.compute.RouterNat(
            f"{name}-nat",
            project=args.project,
            region=args.region,
            router=router.name,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
            subnetworks=nat_subnetworks(args.project, args.region, _cfg(args)),
            opts=protected,
        )

    def _cluster(
        self,
        name: str,
        args: GkeClusterArgs,
        node_sa: pulumi.Output[str],
        roles: list[pulumi.Resource],
    ) -> gcp.container.Cluster:
        """The GKE cluster itself, created once the nodes' roles are granted."""
        cfg = _cfg(args)
        return gcp.container.Cluster(
            f"{name}-cluster",
            **cluster_args(args.project, cfg, node_sa, bool(args.gcs_fuse_csi_driver)),
            gateway_api_config=gateway_api_config(cfg, bool(args.gateway_api)),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=roles,
                # Pulumi's protect mirrors GKE's deletion protection: a destroy (or a
                # replacement) stops before it starts instead of failing halfway through.
                protect=cfg.deletion_protection,
                # GKE fills node_config and the default pool's count in on its own; the
                # default pool is removed right after creation, so a diff there means nothing.
                ignore_changes=(
                    [] if cfg.mode == ClusterMode.AUTOPILOT else ["nodeConfig", "initialNodeCount"]
                ),
            ),
        )

    def _system_pool(
        self,
        name: str,
        args: GkeClusterArgs,
        cluster: gcp.container.Cluster,
        node_sa: pulumi.Output[str],
        protected: pulumi.ResourceOptions,
    ) -> gcp.container.NodePool:
        """Standard: the pool the cluster's own pods and the gates run on."""
        cfg = _cfg(args)
        return gcp.container.NodePool(
            f"{name}-system",
            name="system",
            project=args.project,
            location=cfg.location,
            cluster=cluster.name,
            node_count=cfg.system_nodes,
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=cfg.system_machine_type,
                labels={ROLE_LABEL: "system"},
                **hardened_node_settings(node_sa),
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            opts=protected,
        )

    def _kubernetes_provider(
        self, name: str, cluster: gcp.container.Cluster, readers: list[pulumi.Resource]
    ) -> k8s.Provider:
        """The Kubernetes provider, usable once the cluster, its system pool and the registry
        grants exist."""
        return k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # Only a new cluster replaces the provider (and everything deployed through it);
            # endpoint or CA changes of the same cluster are provider updates.
            cluster_identifier=cluster.id,
            # No delete_unreachable: with it, any unreachable API server (off VPN, missing auth
            # plugin, a control-plane upgrade) drops every Kubernetes object from state on
            # refresh or destroy. pulumi/pulumi-kubernetes#2489 keeps it opt-in "to avoid
            # accidental state deletion for a temporarily unreachable cluster". A cluster
            # deleted out of band: PULUMI_K8S_DELETE_UNREACHABLE=true for that one run
            # (docs/deletion-protection.md).
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[cluster, *self.system_pools, *readers]
            ),
        )


@dataclass(frozen=True)
class ExistingClusterArgs:
    kubeconfig: pulumi.Input[str] | None = None
    """A kubeconfig for the cluster (kept secret); or give `context`."""
    context: str | None = None
    """A context of the ambient kubeconfig (KUBECONFIG or ~/.kube/config); or give
    `kubeconfig`."""
    cluster_identifier: str | None = None
    """What identifies the cluster to the Kubernetes provider: a change replaces the provider
    and everything deployed through it. Keep it when only the kubeconfig's credentials change.
    Default: `existing/context/<context>`, or `existing/kubeconfig` for a kubeconfig."""


class ExistingCluster(pulumi.ComponentResource):
    """A cluster this stack does not manage (kubeadm, another cloud): only a provider for it."""

    name: pulumi.Output[str]
    """The kubeconfig context deployed to, or 'existing' when a kubeconfig is given."""
    kubeconfig: pulumi.Output[str] | None
    """The kubeconfig given (secret); None when a context of the ambient one is used."""
    # `provider` (the Kubernetes provider for everything deployed into the cluster) is an
    # attribute for Python programs, not a package output: another language's SDK receives an
    # output as an Output<Provider>, which TypeScript refuses as a resource option and Pulumi
    # YAML as a provider (pulumi-eks removed its provider outputs for this, pulumi/pulumi#7012).
    # A consumer makes its own provider on `kubeconfig` (issue 41, docs/package.md).

    def __init__(
        self, name: str, args: ExistingClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        args = typed.build(ExistingClusterArgs, args)
        ArgsError.check(
            "ExistingCluster", name, existing_args_problems(args.kubeconfig, args.context)
        )
        super().__init__("gke-gpu:index:ExistingCluster", name, None, opts)
        self.kubeconfig = (
            pulumi.Output.secret(args.kubeconfig) if args.kubeconfig is not None else None
        )
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            context=args.context,
            cluster_identifier=args.cluster_identifier
            or (f"existing/context/{args.context}" if args.context else "existing/kubeconfig"),
            # No delete_unreachable: the cluster outlives the stack, and an outage (VPN down)
            # must not drop the objects deployed in it from state.
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.name = pulumi.Output.from_input(args.context or "existing")
        self.register_outputs({"name": self.name, "kubeconfig": self.kubeconfig})
