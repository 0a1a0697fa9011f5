"""The production rules of the config (cluster.production); the policy pack (policy/rules/)
holds the deployed stack to the same promises."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import Context
from ..problems import Problem
from ..schema import ClusterSpec, WorkloadSpec
from ..variants import exposure_of, exposure_spec
from . import exposure, images


def cluster_problems(
    cluster: ClusterSpec, workloads: list[tuple[int, WorkloadSpec]], ctx: Context
) -> Iterator[Problem]:
    """cluster.production: true holds the stack to its promises before anything is created:
    private nodes, a control plane limited to your networks, Secrets encrypted with your key,
    Binary Authorization, images pinned by digest, and public endpoints on HTTPS, with a key,
    for your clients' networks only."""
    if not cluster.production:
        return
    for i, w in workloads:
        yield from images.digest_problems(i, w, ctx)
        yield from workload_problems(i, w)
    if ctx.existing:
        return  # the cluster's own settings are not this stack's to set (advisories below)
    why = "in a production stack (cluster.production)"
    yield from _dataplane_problems(cluster, why)
    if not cluster.private_nodes:
        yield Problem(
            "cluster.privateNodes",
            f"false {why} gives every node a public IP address, reachable "
            "from the internet. Set privateNodes: true (the stack adds a Cloud NAT so the "
            "nodes still pull public images).",
        )
    networks = cluster.master_authorized_networks
    if not networks:
        yield Problem(
            "cluster.masterAuthorizedNetworks",
            f"not set {why}, so the control plane's IP "
            "endpoint accepts connections from any address, with only credentials in the way. "
            "List your office or VPN ranges, e.g. [203.0.113.0/24]; if CI deploys from hosted "
            "runners, also set cluster.dnsEndpoint: external (IAM-checked).",
        )
    elif exposure.admits_everyone(networks) is None:
        yield from exposure.too_wide_problems(
            "cluster.masterAuthorizedNetworks",
            networks,
            "the control plane",
            "List your office, VPN or runner networks.",
        )
    if cluster.secrets_encryption_key is None:
        yield Problem(
            "cluster.secretsEncryptionKey",
            f"not set {why}. Kubernetes Secrets (the API keys, "
            "tokens from secretEnv) would be protected only by Google's default encryption; "
            "with your Cloud KMS key a copy of the cluster's database is useless without it, "
            "and disabling the key locks them. Create the key and let GKE use it "
            "(docs/delivery.md, 'Production cluster keys'), then set its full name here.",
        )
    if cluster.binary_authorization is False:
        yield Problem(
            "cluster.binaryAuthorization",
            f"false {why}: the cluster would admit any image "
            "without Binary Authorization checking or logging it. Remove binaryAuthorization: "
            "false; the project's policy decides between audit (dry run) and enforcement "
            "(docs/delivery.md, 'Production cluster keys').",
        )


def _dataplane_problems(cluster: ClusterSpec, why: str) -> Iterator[Problem]:
    """Standard without Dataplane V2 enforces no NetworkPolicy (Autopilot with dataplaneV2: false
    is refused for every stack, rules/network.py)."""
    if cluster.mode == "standard" and not cluster.dataplane_v2:
        yield Problem(
            "cluster.dataplaneV2",
            f"false {why} keeps GKE's legacy datapath, which does not enforce NetworkPolicies: "
            "any pod in the cluster would reach a model server's own port around its gate, "
            "without the API key. Remove dataplaneV2: false (on a cluster created without "
            "Dataplane V2 that replaces the cluster, which deletion protection refuses: create "
            "the production cluster with it).",
        )


def workload_problems(i: int, w: WorkloadSpec) -> Iterator[Problem]:
    """A production stack's public endpoint (a public expose.type, with or without a domain):
    HTTPS, the generated key, and source ranges that are your clients' networks, not the
    internet."""
    e = w.expose
    if e is None or not exposure_spec(e.type).public:
        return
    path = f"workloads[{i}].expose"
    if w.api_key is False:
        gateway = exposure_of(e).terminates_at_edge
        yield Problem(
            f"workloads[{i}].apiKey",
            f"false serves this public {'Gateway (expose.domain)' if gateway else 'load balancer'}"
            " without a key in a production stack (cluster.production): anyone who reaches it "
            "from its source ranges (a shared office, a VPN, a compromised laptop) may call the "
            "model and spend the GPUs. Remove apiKey: false: the gate then checks the generated "
            "key (stack output apiKey), or a key per consumer with expose.keys"
            + ("." if gateway else "; or use expose.type: Internal (reachable from the VPC)."),
        )
    fix = "List your clients' networks, or use expose.type: Internal (reachable from the VPC only)."
    if exposure_of(e).terminates_at_edge:
        # The Gateway admits sourceRanges through a Cloud Armor policy; no internal Gateway yet.
        fix = (
            "List your clients' networks: a Cloud Armor policy then lets only them reach "
            "expose.domain."
        )
    if not e.tls:
        yield Problem(
            f"{path}.tls",
            "false serves the API key, prompts and completions in clear text to the "
            "internet, and a production stack (cluster.production) serves its public endpoints "
            "over HTTPS. Remove tls: false.",
        )
    family = exposure.admits_everyone(e.source_ranges)
    if not e.source_ranges:
        yield Problem(
            f"{path}.sourceRanges",
            f"not set, so the public load balancer accepts connections from "
            "the whole internet, and anyone can spend the GPUs or try keys; a production stack "
            f"(cluster.production) lists who may connect. {fix}",
        )
    elif family is not None:
        yield Problem(
            f"{path}.sourceRanges",
            f"together admit every {family} address, so the endpoint is open to the whole "
            f"internet: the same as setting no sourceRanges, though it looks restricted. {fix}",
        )
    else:
        yield from exposure.too_wide_problems(
            f"{path}.sourceRanges", e.source_ranges, "a public endpoint", fix
        )


def advisories(cluster: ClusterSpec | None, ctx: Context) -> list[str]:
    """A production stack on an existing cluster: what the config cannot check there."""
    if cluster is None or not cluster.production or not ctx.existing:
        return []
    return [
        "cluster.production on an existing cluster: its NetworkPolicies (the gate as the only "
        "way to each model server, default-deny ingress and egress) hold only if the cluster's "
        "network plugin enforces NetworkPolicy, which this program cannot see through a "
        "kubeconfig. Check that it does before serving production traffic: a plugin that only "
        "routes pods ignores NetworkPolicies, and every pod then reaches the model servers' own "
        "ports without the key."
    ]
