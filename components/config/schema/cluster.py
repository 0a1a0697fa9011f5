"""`gke-gpu:cluster`: the cluster, its system pool and, on existing clusters, the device plugin."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from .. import formats
from .base import (
    DevicePluginType,
    DnsEndpoint,
    GceName,
    GkeName,
    Mode,
    Model,
    NetworkRef,
    _pattern,
)


class GpuSpec(Model):
    type: Annotated[str, StringConstraints(max_length=64)] | None = None
    """GKE accelerator name, e.g. `nvidia-l4` (`python -m tools.gpus` lists them)."""
    # 16 is the most GPUs any GKE machine carries (a2-megagpu-16g); the catalog checks the rest.
    count: Annotated[int, Field(ge=1, le=16)] = 1
    """How many GPUs; the allowed counts depend on the type."""


class SystemPoolSpec(Model):
    machine_type: Annotated[str, _pattern(r"[a-z][-a-z0-9]{0,62}")] = "e2-standard-2"
    """Machine type of the system pool's nodes (a general-purpose shape, checked)."""
    nodes: Annotated[int, Field(ge=1, le=10)] = 1
    """System nodes per zone of the cluster."""


# GKE's names for what an exclusion holds back (pulumi-gcp 10.2.0
# ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgs.scope).
ExclusionScope = Literal["NO_UPGRADES", "NO_MINOR_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"]
# An RFC 3339 time in UTC ("Zulu"): GKE answers in UTC, so any other offset would show as a diff
# on every later `pulumi preview` (pulumi-gcp ClusterMaintenancePolicyArgs.recurring_window: "GKE
# may accept other formats, but will return values in UTC, causing a permanent diff").
UtcTime = Annotated[str, _pattern(formats.UTC_TIME)]


class MaintenanceWindowSpec(Model):
    start: UtcTime
    """When the first window opens, in UTC: `2026-01-03T01:00:00Z`."""
    end: UtcTime
    """When the first window closes, in UTC; `end - start` is every window's length."""
    recurrence: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    """How the window recurs, an RFC 5545 RRULE: `FREQ=WEEKLY;BYDAY=SA,SU` or `FREQ=DAILY`.

    `FREQ=DAILY` or `FREQ=WEEKLY` (with `BYDAY` and `INTERVAL`): the rules check that the windows
    leave GKE the 48 hours in any 32 days it requires; other rules are refused.
    """


class MaintenanceExclusionSpec(Model):
    name: Annotated[str, StringConstraints(min_length=1, max_length=63)]
    """A name for the exclusion, unique in the list (`black-friday`)."""
    start: UtcTime
    """When it begins, in UTC."""
    end: UtcTime
    """When it ends, in UTC; after `start`, and at most 30 days later for `NO_UPGRADES`."""
    scope: ExclusionScope = "NO_UPGRADES"
    """What GKE holds back meanwhile: `NO_UPGRADES` (everything, at most 30 days),
    `NO_MINOR_UPGRADES` (patches still come) or `NO_MINOR_OR_NODE_UPGRADES` (control-plane patches
    only: no node is recreated, so no GPU pod is evicted by an upgrade)."""


class MaintenanceSpec(Model):
    window: MaintenanceWindowSpec | None = None
    """The recurring window in which GKE may upgrade the control plane and the nodes.

    Default: with `production`, Saturdays and Sundays 01:00-13:00 UTC
    (`{start: 2026-01-03T01:00:00Z, end: 2026-01-03T13:00:00Z, recurrence:
    FREQ=WEEKLY;BYDAY=SA,SU}`); otherwise none (GKE picks any time)
    """
    exclusions: Annotated[list[MaintenanceExclusionSpec], Field(max_length=20)] = []
    """Periods in which GKE does not upgrade (a launch, a sales peak); they need a window.

    At most 20; each `{name, start, end, scope}`.
    """


class ClusterSpec(Model):
    mode: Mode = "autopilot"
    """The kind of cluster: GKE `standard` or `autopilot`, created here, or an `existing` one.

    `existing` deploys onto a cluster this stack does not manage and creates nothing in Google
    Cloud (see [Existing GPU clusters](existing-clusters.md)).
    """
    name: GkeName | None = None
    """GKE cluster name.

    Default: `gke-gpu-<stack>`, made a valid GKE name (`Prod_EU` -> `gke-gpu-prod-eu`)
    """
    location: Annotated[str, StringConstraints(max_length=64)] | None = None
    """The region (regional cluster) or one of its zones (zonal cluster, Standard only).

    Default: `gcp:region`
    """
    release_channel: Literal["RAPID", "REGULAR", "STABLE"] = "REGULAR"
    """GKE release channel of the cluster."""
    deletion_protection: bool = True
    """GKE's deletion protection on the cluster and Pulumi's `protect` on what the service stands
    on; `false` lets `pulumi destroy` delete the cluster.

    See [Deletion protection and teardown](deletion-protection.md).
    """
    master_authorized_networks: Annotated[list[str], Field(max_length=100)] = []
    """CIDRs allowed to reach the control plane; empty allows any.

    With them, the IP endpoint accepts only those ranges (and not, as GKE otherwise allows, any
    Google Cloud VM's public address). A list that adds up to every address (`0.0.0.0/0`, two
    `/1`s) is refused: it restricts nothing.
    """
    private_nodes: bool = False
    """Nodes without public IPs; adds Cloud NAT so that they can pull public images."""
    # derived: on with privateNodes (rules/cluster.py nat_problems).
    cloud_nat: bool | None = None
    """A Cloud NAT (and router) for the cluster's subnetwork only, never the rest of the network.

    `false` when a NAT of yours already serves that subnetwork; `true` with public nodes is
    refused (it would serve nothing). With your own `network`, set `subnetwork`.

    Default: `privateNodes`
    """
    system_pool: SystemPoolSpec = SystemPoolSpec()
    """Standard: the node pool for pods that need no GPU (GKE's own, the gates).

    Refused on Autopilot, which manages its own nodes.
    """
    kubeconfig: Annotated[str, StringConstraints(max_length=1_000_000)] | None = None
    """`existing` only: the cluster's kubeconfig, set as a secret.

    `pulumi config set --path --secret 'gke-gpu:cluster.kubeconfig' "$(cat ~/.kube/config)"`
    (or the name of a secret top-level key holding it); a kubeconfig in plain text is refused.
    Exactly one of `kubeconfig` and `context`.
    """
    context: Annotated[str, StringConstraints(min_length=1, max_length=253)] | None = None
    """`existing` only: a context of the kubeconfig on the machine that runs Pulumi.

    Exactly one of `kubeconfig` and `context`; the current context is never used implicitly.
    """
    # Your own VPC (rules/exposure.py checks the formats): names or self-links.
    network: NetworkRef | None = None
    """Your own VPC network, by name or self-link (`projects/P/global/networks/N`).

    Cloud NAT's router lives in it. Changing it replaces the cluster.

    Default: `default` (the project's default network)
    """
    subnetwork: NetworkRef | None = None
    """Its subnetwork in the cluster's region, by name or self-link; needs `network`.

    Changing it replaces the cluster.

    Default: none (GKE picks)
    """
    pod_range: GceName | None = None
    """Secondary range name of `subnetwork` for pod IPs (VPC-native).

    Changing it replaces the cluster.

    Default: none (GKE creates the range)
    """
    service_range: GceName | None = None
    """Secondary range name of `subnetwork` for Service IPs (VPC-native).

    Changing it replaces the cluster.

    Default: none (GKE creates the range)
    """
    node_service_account: Annotated[str, StringConstraints(max_length=254)] | None = None
    """An existing service account (email) for the nodes.

    The deploy identity then needs only `roles/iam.serviceAccountUser` on it
    ([delivery](delivery.md)).

    Default: created by the stack
    """
    dataplane_v2: bool = True  # rules/exposure.py GKE_NETWORK_KEYS: refused in mode existing
    """Standard: GKE Dataplane V2, which enforces the NetworkPolicies (Autopilot always has it).

    Create-only: turning it on for a cluster created without it **replaces the cluster** (a
    protected one refuses); set `false` to keep such a cluster (NetworkPolicies are then not
    enforced: any pod reaches a model server around its gate). Refused in `production`.
    """
    # Marks the stack as production for the policy pack (policy/rules/), whatever its name;
    # the config layer holds it to the production rules (rules/cluster.py production_problems).
    production: bool = False
    """Holds the stack to the production rules, in the config and the policy pack.

    The policy pack's rules (public LoadBalancers restricted, deletion protection on) apply
    whatever the stack is called, and so do the config's, before anything is created:
    `privateNodes: true`; `masterAuthorizedNetworks` set, each range /16 or narrower (IPv6 /48);
    `secretsEncryptionKey` set; `binaryAuthorization` not `false`; `dataplaneV2` not `false`;
    every public `LoadBalancer` on HTTPS with `sourceRanges` of /16 or narrower that do not add
    up to the internet. On an existing cluster the plan warns that NetworkPolicy enforcement
    depends on its network plugin, which the program cannot see.
    """
    # GKE's DNS-based control-plane endpoint ("off" would be a YAML 1.1 boolean).
    dns_endpoint: DnsEndpoint = "disabled"
    """Who may use GKE's DNS-based control-plane endpoint; with `external` the kubeconfig uses it.

    `external` admits user traffic from anywhere, checked by IAM (`container.clusters.connect`),
    and the kubeconfig uses it (CI on hosted runners behind `masterAuthorizedNetworks`);
    `disabled` keeps users off it, and the kubeconfig uses the IP endpoint, so with
    `masterAuthorizedNetworks` set `pulumi up` runs from inside those ranges. In-place update.
    """
    # Application-layer Secret encryption with this Cloud KMS key (rules/cluster.py checks it).
    secrets_encryption_key: Annotated[str, StringConstraints(max_length=512)] | None = None
    """A Cloud KMS key that encrypts Kubernetes Secrets at the application layer.

    `projects/P/locations/L/keyRings/R/cryptoKeys/K`, in the cluster's region; GKE's service
    agent needs `roles/cloudkms.cryptoKeyEncrypterDecrypter` on it ([delivery](delivery.md),
    *Production cluster keys*). Required in production. In-place update; removing it later does
    not decrypt.
    """
    # GKE's maintenance policy (rules/maintenance.py checks it; defaults.py has production's).
    maintenance: MaintenanceSpec | None = None
    """When GKE may upgrade the cluster and its nodes: a recurring window and exclusions.

    An upgrade recreates each GPU node, evicting its pods (a model reloads); the window keeps that
    to hours you choose. In-place update. Refused for mode `existing`. See [Day 2](day-2.md).

    Default: with `production`, a weekend window; otherwise none (GKE may upgrade at any time)
    """
    # derived: on in production (rules/cluster.py).
    binary_authorization: bool | None = None
    """The cluster evaluates the project's Binary Authorization policy.

    Whether that audits (dry run) or enforces is the project policy's own setting, made once by
    the bootstrap. `false` is refused in production. In-place update.

    Default: `production`
    """


class DevicePluginSharingSpec(Model):
    replicas: Annotated[int, Field(ge=2, le=48)]
    """Time-slicing: each GPU is advertised this many times; workloads then ask `gpu.count: 1`."""


class DevicePluginSpec(Model):
    type: DevicePluginType = "static"
    """What advertises the GPUs (`nvidia.com/gpu`) to Kubernetes.

    `static`: NVIDIA's device plugin DaemonSet v0.20.0 in kube-system; `gpu-operator`: NVIDIA GPU
    Operator Helm chart v26.7.0 in namespace `gpu-operator`; `none`: the cluster already
    advertises `nvidia.com/gpu`.
    """
    sharing: DevicePluginSharingSpec | None = None
    """Time-slicing: each GPU shared by several pods (`static` and `gpu-operator`)."""
    install_driver: bool | None = None
    """`gpu-operator` only: the operator installs the NVIDIA driver (`driver.enabled`).

    Default: `true`
    """
    # static: the nodes the plugin runs on (rules/cluster.py plugin_node_terms).
    node_selector: Annotated[dict[str, str], Field(max_length=64)] | None = None
    """`static` only: the labels of the nodes the plugin runs on.

    Default: any node with one of the labels NVIDIA's own chart requires
    (`feature.node.kubernetes.io/pci-10de.present=true`,
    `feature.node.kubernetes.io/cpu-model.vendor_id=NVIDIA`, `nvidia.com/gpu.present=true`) or
    with a GPU workload's `nodeSelector`; never the CPU nodes
    """
    fail_on_init_error: bool = True
    """`static` only: the plugin exits on a selected node without a usable GPU.

    Its pod then restarts, so a broken node is visible; `false` leaves it waiting there.
    """
