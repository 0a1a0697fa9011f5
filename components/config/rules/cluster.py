"""Cluster rules: location, authorized networks, mode-specific keys, existing clusters."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Iterator
from typing import Any

import yaml

from .. import formats
from ..choices import DevicePluginKind
from ..context import Context
from ..model import NAMESPACE
from ..parse import parse
from ..platform_model import DevicePluginConfig, ExistingClusterConfig, NodeLabel, Secret
from ..problems import Problem, Problems
from ..schema import DEVICE_PLUGIN_TYPES, ClusterSpec, DevicePluginSpec
from . import exposure
from .pools import cidr_problems

# cluster keys that configure a GKE cluster: on an existing cluster they would do nothing.
GKE_ONLY_CLUSTER_KEYS = (
    "name",
    "location",
    "releaseChannel",
    "deletionProtection",
    "masterAuthorizedNetworks",
    "privateNodes",
    "cloudNat",
    "systemPool",
    "dnsEndpoint",
    "secretsEncryptionKey",
    "binaryAuthorization",
    "maintenance",
)
KUBECONFIG_FIX = (
    "pulumi config set --path --secret 'gke-gpu:cluster.kubeconfig' \"$(cat ~/.kube/config)\""
)
# A Cloud KMS key by resource name. Key ring ids "must ... match the regular expression
# [a-zA-Z0-9_-]{1,63}" (Cloud KMS API, projects.locations.keyRings.create, keyRingId,
# https://cloud.google.com/kms/docs/reference/rest/v1/projects.locations.keyRings/create); crypto
# key ids are taken to follow the same pattern (cryptoKeys.create, not re-checked here).
KMS_ID = r"[a-zA-Z0-9_-]{1,63}"
KMS_KEY = (
    rf"projects/(?P<project>{formats.PROJECT_ID})/locations/(?P<location>[a-z0-9-]+)"
    rf"/keyRings/{KMS_ID}/cryptoKeys/{KMS_ID}"
)


def gke_cluster_problems(cluster: ClusterSpec, ctx: Context) -> Iterator[Problem]:
    mode, region = ctx.mode, ctx.region
    location = cluster.location
    if location is not None and not (
        location == region
        or (formats.matches(formats.ZONE, location) and location.startswith(region + "-"))
    ):
        yield Problem(
            "cluster.location",
            f"{ctx.show('cluster.location', location)} is neither the region {region!r} nor one "
            f"of its zones. Use {region!r} (regional) or e.g. '{region}-a' (zonal).",
        )
    if mode == "autopilot" and location is not None and location.startswith(region + "-"):
        yield Problem(
            "cluster.location",
            f"Autopilot clusters are regional; {location!r} is a zone. Remove "
            f"location or set it to {region!r}.",
        )
    yield from cidr_problems(
        "cluster.masterAuthorizedNetworks", cluster.master_authorized_networks, ctx
    )
    family = exposure.admits_everyone(cluster.master_authorized_networks)
    if family is not None:
        yield Problem(
            "cluster.masterAuthorizedNetworks",
            f"together admit every {family} address, so they restrict nothing: the control plane "
            "is as open as without masterAuthorizedNetworks, though the config reads as "
            "restricted. List only your own networks (office, VPN, runners with fixed addresses), "
            "or remove masterAuthorizedNetworks to leave the IP endpoint open (IAM and Kubernetes "
            "RBAC still apply).",
        )
    yield from secrets_key_problems(cluster.secrets_encryption_key, region, ctx)
    if cluster.kubeconfig is not None or cluster.context is not None:
        yield Problem(
            "cluster.kubeconfig/context",
            "only for mode 'existing'; GKE modes build their own kubeconfig. Remove them.",
        )
    yield from nat_problems(cluster)
    if mode == "autopilot" and "system_pool" in cluster.model_fields_set:
        yield Problem(
            "cluster.systemPool",
            "Autopilot manages its own nodes. Remove systemPool or use mode 'standard'.",
        )


def kubeconfig(cluster: ClusterSpec, ctx: Context) -> str | Secret | None:
    """cluster.kubeconfig: the kubeconfig itself when it came from `secure:`, else the name of a
    top-level secret key (the older indirection)."""
    value = cluster.kubeconfig
    if value is None:
        return None
    if "cluster" in ctx.secret_keys and (
        "cluster.kubeconfig" in (ctx.secure_paths or ())
        or ctx.secure_paths is None
        and not formats.matches(formats.CONFIG_KEY, value)
    ):
        return Secret(value)
    return value


def existing_cluster_identifier(cluster: ExistingClusterConfig) -> str:
    """What identifies the target cluster to the provider (ExistingClusterArgs.cluster_identifier):
    the config key or context name.

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


def device_plugin(raw: Any, ctx: Context, problems: Problems) -> DevicePluginConfig:
    """The devicePlugin key: a mode name, or {type, sharing: {replicas}, installDriver}."""
    default = DevicePluginConfig()
    key = f"{NAMESPACE}:devicePlugin"
    if raw is None:
        return default
    if ctx.mode is not None and not ctx.existing:
        problems += [
            Problem(
                "devicePlugin",
                f"only for cluster.mode 'existing'; GKE runs its own NVIDIA device "
                f"plugin on GPU nodes (share GPUs there with nodePools[].sharing). Remove {key}.",
            )
        ]
        return default
    allowed = ", ".join(DEVICE_PLUGIN_TYPES)
    if isinstance(raw, str):
        if raw not in DEVICE_PLUGIN_TYPES:
            problems += [
                Problem(
                    "devicePlugin",
                    f"{formats.show(raw)} is not a device plugin mode (allowed: "
                    f"{allowed}). Use static (NVIDIA's device plugin DaemonSet), gpu-operator (the "
                    "NVIDIA GPU Operator) or none (the cluster already advertises nvidia.com/gpu).",
                )
            ]
            return default
        raw = {"type": raw}
    spec = parse(DevicePluginSpec, raw, "devicePlugin", problems, ctx)
    if spec is None:
        return default
    problems += _plugin_problems(spec)
    return DevicePluginConfig(
        type=DevicePluginKind(spec.type),
        sharing_replicas=spec.sharing.replicas if spec.sharing else None,
        # The chart's own default (driver.enabled: true): the operator brings the driver.
        install_driver=True if spec.install_driver is None else spec.install_driver,
        node_selector_terms=(
            (tuple(NodeLabel(*label) for label in sorted(spec.node_selector.items())),)
            if spec.node_selector
            else ()
        ),
        fail_on_init_error=spec.fail_on_init_error,
    )


def _plugin_problems(spec: DevicePluginSpec) -> Iterator[Problem]:
    if spec.type == "none" and spec.sharing is not None:
        yield Problem(
            "devicePlugin.sharing",
            "type 'none' deploys nothing, so nothing would time-slice "
            "the GPUs. Configure sharing in the cluster's own device plugin and remove it "
            "here, or use type static or gpu-operator.",
        )
    if spec.type != "gpu-operator" and spec.install_driver is not None:
        yield Problem(
            "devicePlugin.installDriver",
            f"only the GPU Operator installs drivers, and type is {spec.type!r}. Install the "
            "driver on the nodes yourself and remove installDriver, or use type gpu-operator.",
        )
    if spec.type != "static" and (
        spec.node_selector is not None or "fail_on_init_error" in spec.model_fields_set
    ):
        yield Problem(
            "devicePlugin.nodeSelector/failOnInitError",
            f"settings of NVIDIA's static device "
            f"plugin, and type is {spec.type!r}, which places its own pods. Remove them.",
        )
    for key, value in (spec.node_selector or {}).items():
        where = formats.join("devicePlugin.nodeSelector", key)
        if not formats.matches(formats.LABEL_KEY, key):
            yield Problem(where, formats.hint(formats.LABEL_KEY))
        if not formats.matches(formats.K8S_LABEL_VALUE, value):
            yield Problem(where, f"{formats.show(value)} {formats.hint(formats.K8S_LABEL_VALUE)}")


# The labels NVIDIA's own Helm chart requires of a node before its device plugin runs there (any
# one of them): Node Feature Discovery's PCI vendor 10de (NVIDIA) and CPU vendor (Grace) labels,
# and nvidia.com/gpu.present, which GPU Feature Discovery sets or an admin sets by hand
# (NVIDIA/k8s-device-plugin deployments/helm/nvidia-device-plugin/values.yaml lines 64-85 at
# v0.20.0). Its static manifest has no selector at all, and with FAIL_ON_INIT_ERROR at its
# default (true, cmd/nvidia-device-plugin/main.go lines 68-73) the plugin exits on every node
# without a GPU: the DaemonSet never becomes ready and nothing waiting for it is created.
NVIDIA_GPU_NODE_LABELS = (
    NodeLabel("feature.node.kubernetes.io/pci-10de.present", "true"),
    NodeLabel("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
    NodeLabel("nvidia.com/gpu.present", "true"),
)


def plugin_node_terms(
    plugin: DevicePluginConfig, selectors: list[tuple[tuple[str, str], ...]]
) -> DevicePluginConfig:
    """The nodes the static plugin runs on: devicePlugin.nodeSelector when given; else any node
    NVIDIA's chart would take, or any node a GPU workload selects for its pods (the kubeadm
    example's `gpu: "true"`), so the plugin is wherever the GPU pods are sent, and nowhere else."""
    if plugin.type != "static" or plugin.node_selector_terms:
        return plugin
    terms: list[tuple[NodeLabel, ...]] = [(label,) for label in NVIDIA_GPU_NODE_LABELS]
    chosen = sorted({s for s in selectors if s and s not in terms})
    terms += [tuple(NodeLabel(*label) for label in s) for s in chosen]
    return dataclasses.replace(plugin, node_selector_terms=tuple(terms))


def gke_only_problems(cluster: ClusterSpec, keys: tuple[str, ...]) -> Iterator[Problem]:
    """Those of `keys` the cluster sets: in mode existing they would do nothing."""
    given = {f.alias for n, f in ClusterSpec.model_fields.items() if n in cluster.model_fields_set}
    for key in keys:
        if key in given:
            yield Problem(
                f"cluster.{key}",
                "configures a GKE cluster, but mode 'existing' deploys into a cluster "
                "this stack does not manage, so it would do nothing. Remove it.",
            )


def existing_cluster_problems(
    cluster: ClusterSpec, raw: dict[str, Any], kubeconfig_given: bool, ctx: Context
) -> Iterator[Problem]:
    """cluster.* in existing mode: no GKE settings, and exactly one way to reach the cluster."""
    yield from gke_only_problems(cluster, GKE_ONLY_CLUSTER_KEYS)
    value = kubeconfig(cluster, ctx)
    if cluster.kubeconfig is not None and cluster.context is not None:
        yield Problem(
            "cluster.kubeconfig/context",
            "set one, not both. kubeconfig is the cluster's kubeconfig, stored as a secret; "
            "context picks a context of the kubeconfig on the machine that runs Pulumi.",
        )
    elif cluster.kubeconfig is None and cluster.context is None and not kubeconfig_given:
        yield Problem(
            "cluster",
            "mode 'existing' needs to know which cluster to deploy to. Store its "
            f"kubeconfig as a secret (`{KUBECONFIG_FIX}`), or set cluster.context to a context "
            "of your kubeconfig (`kubectl config get-contexts`). The current context is never "
            "used implicitly: `kubectl config use-context` changes it, and the next `pulumi "
            "up` would deploy to another cluster.",
        )
    if isinstance(value, str):
        if not formats.matches(formats.CONFIG_KEY, value):
            # The value is never shown: it may be the kubeconfig itself, credentials included.
            yield Problem(
                "cluster.kubeconfig",
                "holds a value in plain text that is not the name of a "
                "config key (not shown here, as it may hold credentials). A kubeconfig grants "
                f"access to the cluster: store it as a secret with `{KUBECONFIG_FIX}`, and "
                "remove the plain-text value from the stack file.",
            )
        elif value not in ctx.secret_keys:
            where = "is stored in plain text" if value in raw else "is not set"
            yield Problem(
                "cluster.kubeconfig",
                f"config key {ctx.show('cluster.kubeconfig', value)} {where}; it must be a "
                "secret (a "
                "kubeconfig grants access to the cluster, and a plain value would sit in the "
                f"stack file and the state). Run `{KUBECONFIG_FIX}`.",
            )
    if cluster.context is not None and not cluster.context.strip():
        yield Problem(
            "cluster.context",
            "empty. Set it to a context name from `kubectl config "
            "get-contexts`, or use cluster.kubeconfig.",
        )


def nat_problems(cluster: ClusterSpec) -> list[Problem]:
    """Cloud NAT serves the cluster's own subnetwork only (LIST_OF_SUBNETWORKS), so it must know
    which one that is; a NAT for public nodes would translate nothing."""
    if cluster.cloud_nat and not cluster.private_nodes:
        return [
            Problem(
                "cluster.cloudNat",
                "the nodes are public (privateNodes is false) and reach the "
                "internet through their own external IPs, so a Cloud NAT would serve nothing. "
                "Remove cloudNat, or set privateNodes: true.",
            )
        ]
    nat = cluster.private_nodes if cluster.cloud_nat is None else cluster.cloud_nat
    if nat and cluster.network not in (None, "default") and cluster.subnetwork is None:
        return [
            Problem(
                "cluster.subnetwork",
                "privateNodes gets a Cloud NAT for the cluster's subnetwork "
                "only (never the whole network, where another NAT may already serve other "
                f"subnets), and cluster.network is {cluster.network!r} without a subnetwork. Set "
                "cluster.subnetwork, or cloudNat: false if a NAT of yours serves the nodes.",
            )
        ]
    return []


def secrets_key_problems(key: str | None, region: str, ctx: Context) -> list[Problem]:
    """cluster.secretsEncryptionKey: a Cloud KMS key by full name, in the cluster's region.

    GKE, "Encrypt secrets at the application layer" (cloud.google.com/kubernetes-engine/docs/
    how-to/encrypting-secrets, checked 2026-11-22): "Ensure that the key is in the same location
    as the cluster to decrease latency and to prevent cases where resources depend on services
    spread across multiple failure domains" (earlier versions of the page: "The key must be in the
    same location as the cluster"). Cloud KMS has regional, multi-regional and global locations but
    no zonal ones, so a zonal cluster's key lives in the zone's region.
    """
    if key is None:
        return []
    path = "cluster.secretsEncryptionKey"
    example = f"projects/PROJECT/locations/{region or 'REGION'}/keyRings/gke-gpu/cryptoKeys/secrets"
    match = re.fullmatch(KMS_KEY, key, flags=re.ASCII)
    if match is None:
        hint = (
            " It names a key version: GKE takes the key and uses its primary version."
            if "/cryptoKeyVersions/" in key
            else ""
        )
        return [
            Problem(
                f"{path}",
                f"{ctx.show(path, key)} is not a Cloud KMS key name "
                f"(projects/PROJECT/locations/LOCATION/keyRings/RING/cryptoKeys/KEY).{hint} Use "
                f"e.g. {example!r} (`gcloud kms keys describe KEY --keyring RING --location "
                "LOCATION --format='value(name)'` prints it).",
            )
        ]
    location = match.group("location")
    if region and location != region:
        return [
            Problem(
                f"{path}",
                f"the key is in {location!r}, but the cluster is in region {region!r}; GKE "
                "wants the key in the cluster's own location, so that Secrets never depend on "
                f"another region being up. Create a key in {region!r} (docs/delivery.md, "
                f"'Production cluster keys') and name it here, e.g. {example!r}.",
            )
        ]
    return []
