"""Production rules: restricted load balancers, TLS, a hardened GKE cluster, the marker kept."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .props import (
    ALERT_POLICY_TYPE,
    APP_NAME_LABEL,
    CLUSTER_TYPE,
    GATE_NAME_LABEL,
    INTERNAL_LB_ANNOTATION,
    PRODUCTION_CLUSTER_LABEL,
    PRODUCTION_ENV,
    PRODUCTION_LABEL,
    SERVICE_TYPE,
    Context,
    _get,
    _is_false,
    _is_true,
    _mapping,
    _production_reason,
    _sequence,
    _show,
    is_marked_production,
    is_production,
    object_label,
)
from .ranges import MIN_PREFIX_IPV4, MIN_PREFIX_IPV6, source_range_problems

INTERNAL_LB_CLASS = "networking.gke.io/l4-regional-internal"

# pulumi-gcp 10.2.0 Cluster inputs (container/_inputs.py): ClusterBinaryAuthorizationArgs.
# evaluation_mode "Valid values are `DISABLED` and `PROJECT_SINGLETON_POLICY_ENFORCE`";
# ClusterSecurityPostureConfigArgs.mode "Available options include `DISABLED`, `BASIC`, and
# `ENTERPRISE`"; ClusterDatabaseEncryptionArgs.state "`ENCRYPTED` or `DECRYPTED`".
BINAUTHZ_ENFORCE = "PROJECT_SINGLETON_POLICY_ENFORCE"
SECURITY_POSTURE_ON = ("BASIC", "ENTERPRISE")
# pulumi-gcp 10.2.0 Cluster.datapath_provider (container/cluster.py): "This is set to
# `LEGACY_DATAPATH` by default, which uses the IPTables-based kube-proxy implementation. Set to
# `ADVANCED_DATAPATH` to enable Dataplane v2" (components/platform/cluster_settings.py sets it).
DATAPLANE_V2 = "ADVANCED_DATAPATH"


def _is_internal_load_balancer(service: Mapping[str, Any]) -> bool:
    """GKE's internal passthrough load balancer: the annotation, or the load balancer class
    ("LoadBalancer Service parameters", cloud.google.com/kubernetes-engine/docs/concepts/
    service-load-balancer-parameters, checked 2026-11-22)."""
    annotations = _mapping(_get(service, "metadata", "annotations"))
    return (
        annotations.get(INTERNAL_LB_ANNOTATION) == "Internal"
        or _get(service, "spec", "loadBalancerClass") == INTERNAL_LB_CLASS
    )


def load_balancers_restricted_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production stack's public LoadBalancer admits only narrow, listed source ranges.
    Mandatory.

    Without spec.loadBalancerSourceRanges a GPU inference endpoint is open to the whole internet:
    anyone can spend the GPUs and reach the model. So is it with 0.0.0.0/0, with two /1s, or with
    a range so wide it names no client: each range may be at most a /16 (IPv4) or /48 (IPv6)
    (source_range_problems). Only Services of production stacks are checked (is_production), so
    dev can stay reachable for quick tests; an internal load balancer is reachable from the VPC
    only. Mandatory because an open production endpoint is a cost and data exposure.
    """
    if resource_type != SERVICE_TYPE or not is_production(resource_type, props, context.production):
        return []
    spec = _mapping(props.get("spec"))
    if spec.get("type") != "LoadBalancer" or _is_internal_load_balancer(props):
        return []
    label = object_label(resource_type, props)
    fix = "Set workloads[].expose.sourceRanges to the CIDR ranges of your clients"
    where = (
        f"a public LoadBalancer in a production stack ({_production_reason(resource_type, props)})"
    )
    ranges = _sequence(spec.get("loadBalancerSourceRanges"))
    if not ranges:
        return [
            f"{label}: {where} sets no loadBalancerSourceRanges, so it accepts traffic from the "
            f"whole internet. {fix}, or use expose.type: Internal."
        ]
    return [
        f"{label}: {where}: loadBalancerSourceRanges allows {problem}. {fix} (each at most a "
        f"/{MIN_PREFIX_IPV4} for IPv4, /{MIN_PREFIX_IPV6} for IPv6)."
        for problem in source_range_problems(ranges)
    ]


def endpoints_use_tls_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production stack's endpoints serve HTTPS. Mandatory.

    Every exposed workload is served by its gate; with expose.tls: false the gate serves plain
    HTTP and the Service's port is named "http": the API key, prompts and completions then cross
    the network in clear (CIS GKE benchmark 5.6.8, "Consider encrypting traffic"). Only Services
    of production stacks that select a gate are checked.
    """
    if resource_type != SERVICE_TYPE or not is_production(resource_type, props, context.production):
        return []
    spec = _mapping(props.get("spec"))
    if _mapping(spec.get("selector")).get(APP_NAME_LABEL) != GATE_NAME_LABEL:
        return []
    plain = [
        _show(_mapping(port).get("port"))
        for port in _sequence(spec.get("ports"))
        if _mapping(port).get("name") != "https"
    ]
    if not plain:
        return []
    label = object_label(resource_type, props)
    return [
        f"{label}: serves plain HTTP on port {', '.join(plain)} in a production stack "
        f"({_production_reason(resource_type, props)}): the API key and prompts would cross the "
        "network in clear. Remove workloads[].expose.tls: false."
    ]


def _production_cluster(resource_type: str, props: Mapping[str, Any], context: Context) -> bool:
    return resource_type == CLUSTER_TYPE and is_production(resource_type, props, context.production)


def _cluster_is_production(props: Mapping[str, Any]) -> str:
    """The start of a production cluster's message: 'cluster "gpu-prod" is production (...)'."""
    reason = _production_reason(CLUSTER_TYPE, props)
    return f"{object_label(CLUSTER_TYPE, props)} is production ({reason})"


def deletion_protection_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster keeps deletionProtection on. Mandatory.

    With it off, a `pulumi destroy` or a change that replaces the cluster deletes it and every
    workload, volume and address on it. Unset passes: the GCP provider defaults
    deletionProtection to true. Mandatory because the loss cannot be undone.
    """
    if not _production_cluster(resource_type, props, context):
        return []
    if not _is_false(props.get("deletionProtection")):
        return []
    return [
        f"{_cluster_is_production(props)} but sets deletionProtection: false, so a destroy or "
        "replacement deletes it with every workload on it. Set cluster.deletionProtection: true "
        f"in Pulumi.{context.stack or '<stack>'}.yaml (or leave it unset: it defaults to true)."
    ]


def private_nodes_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster's nodes have no public IP address. Mandatory.

    The cluster-wide switch is privateClusterConfig.enablePrivateNodes (what
    components/platform/cluster_settings.py sets from cluster.privateNodes). pulumi-gcp 10.2.0's
    Cluster
    has no cluster-wide networkConfig.defaultEnablePrivateNodes input (only node pools'
    networkConfig.enablePrivateNodes; container/_inputs.py), so that is the field read. A GPU node
    with a public address is one firewall rule away from the internet, hostPorts and NodePorts
    included.
    """
    if not _production_cluster(resource_type, props, context):
        return []
    if _is_true(_get(props, "privateClusterConfig", "enablePrivateNodes")):
        return []
    return [
        f"{_cluster_is_production(props)} but its nodes get public IP addresses "
        "(privateClusterConfig.enablePrivateNodes is not true): every GPU node is one firewall "
        "rule away from the internet. Set cluster.privateNodes: true (gke-gpu then adds a Cloud "
        "NAT so the nodes can still pull public images)."
    ]


def control_plane_restricted_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster's control plane admits only narrow authorized networks. Mandatory.

    masterAuthorizedNetworksConfig.cidrBlocks must list ranges, each at most a /16 (IPv4) or
    /48 (IPv6) and together not every address (source_range_problems), and
    gcpPublicCidrsAccessEnabled must not be true: it lets every Google Cloud public address in,
    any other customer's VM included (pulumi-gcp 10.2.0 ClusterMasterAuthorizedNetworksConfigArgs:
    "Whether Kubernetes master is accessible via Google Compute Engine Public IPs"). Without
    them a leaked credential works from anywhere. CI reaches such a cluster through its
    DNS-based endpoint, where IAM decides (components/platform/cluster_settings.py
    dns_endpoint_open).
    """
    if not _production_cluster(resource_type, props, context):
        return []
    start = _cluster_is_production(props)
    fix = (
        f"Set cluster.masterAuthorizedNetworks to your office or VPN ranges (each at most a "
        f"/{MIN_PREFIX_IPV4} for IPv4, /{MIN_PREFIX_IPV6} for IPv6)."
    )
    authorized = _mapping(props.get("masterAuthorizedNetworksConfig"))
    blocks = _sequence(authorized.get("cidrBlocks"))
    problems: list[str] = []
    if not blocks:
        problems.append(
            f"{start} but lists no authorized networks (masterAuthorizedNetworksConfig."
            "cidrBlocks), so its control plane accepts connections from any address and a leaked "
            f"credential works from anywhere. {fix}"
        )
    problems += [
        f"{start}, but masterAuthorizedNetworksConfig.cidrBlocks allows {problem}. {fix}"
        for problem in source_range_problems([_get(block, "cidrBlock") for block in blocks])
    ]
    if _is_true(authorized.get("gcpPublicCidrsAccessEnabled")):
        problems.append(
            f"{start} but sets masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled: true, "
            "which lets every Google Cloud public address reach its control plane, any other "
            "customer's VM included. Remove it."
        )
    return problems


def secrets_encrypted_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster encrypts Kubernetes Secrets with a Cloud KMS key. Mandatory.

    databaseEncryption.state ENCRYPTED with a keyName ("Name of CloudKMS key to use for the
    encryption of secrets in etcd", GKE API DatabaseEncryption.keyName; pulumi-gcp 10.2.0
    ClusterDatabaseEncryptionArgs). The Secrets hold the generated API keys and the gate's TLS
    key; with the stack's own key, disabling or destroying the key revokes them, and every
    decryption is in the key's audit log.
    """
    if not _production_cluster(resource_type, props, context):
        return []
    encryption = _mapping(props.get("databaseEncryption"))
    state = encryption.get("state")
    if state == "ENCRYPTED":
        key = encryption.get("keyName")
        if isinstance(key, str) and key.strip():
            return []
        what = "sets databaseEncryption.state: ENCRYPTED without a keyName"
    elif state is None:
        what = "sets no databaseEncryption"
    else:
        what = f"sets databaseEncryption.state: {state}"
    return [
        f"{_cluster_is_production(props)} but {what}, so its Secrets (the API keys, the gate's "
        "TLS key) are not encrypted with a key the stack controls. Set databaseEncryption to "
        "{state: ENCRYPTED, keyName: <Cloud KMS key>} (gke-gpu: cluster.secretsEncryptionKey: "
        "projects/<project>/locations/<region>/keyRings/<ring>/cryptoKeys/<key>, a key GKE's "
        "service agent may use)."
    ]


def dataplane_v2_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE Standard cluster runs GKE Dataplane V2. Mandatory.

    Dataplane V2 is what enforces NetworkPolicy on the clusters gke-gpu creates ("network policy
    enforcement is built into GKE Dataplane V2", cloud.google.com/kubernetes-engine/docs/how-to/
    dataplane-v2). Without it every NetworkPolicy is ignored: any pod in the cluster reaches a
    model server's own port around its gate, without the key, and /invocations and the admin
    routes with it. Autopilot passes: "GKE Dataplane V2 is always enabled in new Autopilot
    clusters" (same page), and gke-gpu sets no datapathProvider there.
    """
    if not _production_cluster(resource_type, props, context):
        return []
    provider = props.get("datapathProvider")
    if _is_true(props.get("enableAutopilot")) or provider == DATAPLANE_V2:
        return []
    setting = _show(provider) if provider else "unset (the provider's default, LEGACY_DATAPATH)"
    return [
        f"{_cluster_is_production(props)} but sets datapathProvider: {setting}, so it does not "
        "enforce NetworkPolicies: any pod in the cluster reaches a model server's own port "
        f"without the API key. Remove cluster.dataplaneV2: false (datapathProvider: "
        f"{DATAPLANE_V2}); on a cluster created without it this replaces the cluster."
    ]


def binary_authorization_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster enforces Binary Authorization. Advisory.

    binaryAuthorization.evaluationMode PROJECT_SINGLETON_POLICY_ENFORCE (or the deprecated
    enabled: true) makes GKE check every image against the project's Binary Authorization policy.
    Advisory: what it admits is that project policy, which lives outside this stack; turning the
    mode on is worth it only together with a policy that names your registries or attestors.
    """
    if not _production_cluster(resource_type, props, context):
        return []
    authorization = _mapping(props.get("binaryAuthorization"))
    mode = authorization.get("evaluationMode")
    if mode == BINAUTHZ_ENFORCE or _is_true(authorization.get("enabled")):
        return []
    return [
        f"{_cluster_is_production(props)} but does not enforce Binary Authorization "
        f"(binaryAuthorization.evaluationMode: {mode or 'unset'}), so any image that can be "
        f"pulled can run in it. Set evaluationMode: {BINAUTHZ_ENFORCE}, with a project policy "
        "that admits only your registries or attested images."
    ]


def security_posture_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production GKE cluster turns GKE's security posture on. Advisory.

    securityPostureConfig.mode BASIC or ENTERPRISE: GKE audits the workloads' configuration and
    reports findings. Advisory because it reports and blocks nothing, and a cluster that leaves the
    mode unset gets GKE's default (not confirmed here for every GKE version).
    """
    if not _production_cluster(resource_type, props, context):
        return []
    mode = _get(props, "securityPostureConfig", "mode")
    if mode in SECURITY_POSTURE_ON:
        return []
    setting = f"sets mode: {mode}" if mode else "sets no mode"
    return [
        f"{_cluster_is_production(props)} but {setting} in securityPostureConfig"
        ", so GKE's security posture findings (workload configuration audit) are off or left "
        "to GKE's default. Set securityPostureConfig.mode: BASIC (or ENTERPRISE)."
    ]


def alerts_notify_someone_in_prod(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A production stack's alert policies notify someone. Advisory.

    An alert policy without notificationChannels opens incidents that only the Cloud Monitoring
    console lists: a GPU idle at full price or a failing model goes unnoticed until someone looks.
    Advisory: a team may route incidents another way (the console, an export).
    """
    if resource_type != ALERT_POLICY_TYPE or not is_production(
        resource_type, props, context.production
    ):
        return []
    if _sequence(props.get("notificationChannels")):
        return []
    name = props.get("displayName") or "an alert policy"
    return [
        f"alert policy {_show(name)} of a production stack notifies no one "
        "(notificationChannels is empty): its incidents show only in the Cloud Monitoring "
        "console. Set monitoring.notificationChannels or monitoring.emails in the stack file."
    ]


def _marked_kind(resource_type: str, props: Mapping[str, Any]) -> str | None:
    """What carries the production marker: the GKE cluster, and each Service gke-gpu exposes."""
    if resource_type == CLUSTER_TYPE:
        return f'the GCE label {PRODUCTION_CLUSTER_LABEL}: "true"'
    if resource_type != SERVICE_TYPE:
        return None
    spec = _mapping(props.get("spec"))
    gate = _mapping(spec.get("selector")).get(APP_NAME_LABEL) == GATE_NAME_LABEL
    public = spec.get("type") == "LoadBalancer" and not _is_internal_load_balancer(props)
    return f'the label {PRODUCTION_LABEL}: "true"' if gate or public else None


def production_marker_kept(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A stack its GitHub environment calls production keeps cluster.production. Mandatory.

    Production is decided twice: by the stack file (cluster.production, which a pull request can
    drop) and by PRODUCTION_ENV in the stack's GitHub environments (which it cannot). When the
    pack config says production but the cluster, or a Service gke-gpu exposes, lacks the marker,
    the stack file has stopped saying what the stack is. The production rules still apply (the
    config is enough), but a preview anywhere else would treat the stack as dev. Mandatory: it
    costs one line to restore, and turning a stack non-production is an admin's change to the
    GitHub environments, not a pull request's.
    """
    if not context.production:
        return []
    marker = _marked_kind(resource_type, props)
    if marker is None or is_marked_production(resource_type, props):
        return []
    stack = context.stack or "<stack>"
    return [
        f"{object_label(resource_type, props)}: stack {stack} is production per its GitHub "
        f"environment variable {PRODUCTION_ENV}=true, but its stack file dropped "
        f"cluster.production: true, so it lacks {marker}. The production rules still hold it "
        f"here; a preview without the pack config would not. Set cluster.production: true again "
        f"in Pulumi.{stack}.yaml. To make the stack non-production on purpose, a repository admin "
        f"first removes {PRODUCTION_ENV} from its GitHub environments {stack} and {stack}-preview."
    ]
