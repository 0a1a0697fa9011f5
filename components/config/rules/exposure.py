"""Exposure and network rules: expose types, static addresses, API keys, your own VPC."""

from __future__ import annotations

import ipaddress
import re

from components import haproxy
from components.config import formats
from components.config.model import Expose
from components.config.parse import Context
from components.config.rules import drivers
from components.config.schema import ClusterSpec, ExposeType, Mode, WorkloadSpec

# The environment variable vLLM's OpenAI server reads its API key from: vllm/envs.py declares
# "VLLM_API_KEY": lambda: os.environ.get("VLLM_API_KEY", None), and the server adds its
# AuthenticationMiddleware for `args.api_key or [envs.VLLM_API_KEY]` ("Ensure --api-key option from
# CLI takes precedence over VLLM_API_KEY", vllm/entrypoints/openai/api_server.py build_app). The
# middleware guards only /v1, /v2, /inference and /cohere, so /health (the probes) and /metrics stay
# open (GUARDED_PREFIX, vllm/entrypoints/serve/utils/server_utils.py at commit 0753ceeb). Read in
# the stored vllm-project/vllm sources on 2026-11-22; the v0.29.0 tree itself (components/pins.py)
# was too large to fetch, and these lines are the same in every stored version.
API_KEY_ENV = "VLLM_API_KEY"
API_KEY_FLAG = "--api-key"

# What the gate forwards to a vLLM server: its OpenAI-compatible model API (and the Anthropic
# Messages API it also serves), nothing else. Read in the vLLM 0.29.0 wheel (commit g98dff2a81):
# entrypoints/launchers/api_server/routers.py registers, beside these, /invocations (inference
# without the key), /tokenize, /detokenize, /metrics, /load, /version, /ping, /health,
# /scale_elastic_ep (no key, changes the deployment), /pooling, /classify, /score, /rerank,
# render/derender helpers under /v1, /v1/load_lora_adapter and /v1/unload_lora_adapter (with
# VLLM_ALLOW_RUNTIME_LORA_UPDATING) and the dev-mode routes; none is forwarded. Neither is
# /v1/responses/{id}: the server keeps responses by id for every caller alike; add it with
# expose.paths when one tenant uses the endpoint.
VLLM_PATHS = (
    "/v1/models",
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/embeddings",
    "/v1/responses",
    "/v1/audio/transcriptions",
    "/v1/audio/translations",
    "/v1/rerank",
    "/v1/score",
    "/v1/messages",
    "/v1/messages/count_tokens",
)
# Another server's API: /v1 and below, until expose.paths says otherwise.
DEFAULT_PATHS = ("/v1/*",)
# Expose types that get a load balancer (and may reserve an address for it).
LOAD_BALANCED: tuple[ExposeType, ...] = ("LoadBalancer", "Internal")

# GCE resource names (networks, subnetworks, secondary ranges): RFC 1035, 1-63 characters
# (https://cloud.google.com/compute/docs/naming-resources).
GCE_NAME = r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"
# Self-links as GKE's API and the Google provider accept them for network/subnetwork: full URLs
# or the `projects/...` form (pulumi-gcp 10.2.0 Cluster.network: "The name or self_link").
_API = r"(?:https://www\.googleapis\.com/compute/v1/)?"
NETWORK_LINK = rf"{_API}projects/(?P<project>{formats.PROJECT_ID})/global/networks/{GCE_NAME}"
SUBNETWORK_LINK = (
    rf"{_API}projects/(?P<project>{formats.PROJECT_ID})/regions/(?P<region>{formats.REGION})"
    rf"/subnetworks/{GCE_NAME}"
)
# A service account email: account ids are 6-30 characters
# (https://cloud.google.com/iam/docs/service-accounts-create).
SERVICE_ACCOUNT_EMAIL = r"[a-z][-a-z0-9]{4,28}[a-z0-9]@[-a-z0-9.:]+\.gserviceaccount\.com"
# cluster keys of this module that configure a GKE cluster (refused in mode existing).
GKE_NETWORK_KEYS = (
    "network",
    "subnetwork",
    "podRange",
    "serviceRange",
    "nodeServiceAccount",
    "dataplaneV2",
)
# The auto-mode `default` network has one subnetwork per region, itself named `default`.
DEFAULT_NETWORK = "default"

# The widest range a production stack lets reach its control plane or a public endpoint, per
# address family (cluster.masterAuthorizedNetworks, workloads[].expose.sourceRanges). A policy
# of this project, not a GKE limit: a /16 (65,536 IPv4 addresses) or a /48 (one site's IPv6
# allocation) is already an organisation's whole range; anything wider is usually a typo or a
# cloud provider's shared range, which admits strangers. policy/rules/ranges.py uses the same
# bounds.
MIN_PREFIX_IPV4 = 16
MIN_PREFIX_IPV6 = 48

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


_IPV4_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")


def _networks(values: list[str] | tuple[str, ...]) -> list[tuple[int, Network]]:
    """The entries that parse as CIDR blocks, with their index (cidr_problems reports the rest).
    An IPv4-mapped IPv6 range (::ffff:a.b.c.d/n) counts as the IPv4 range it names, as in
    policy/rules/ranges.py, so that it cannot carry a wide IPv4 range past the IPv6 bound."""
    parsed: list[tuple[int, Network]] = []
    for j, value in enumerate(values):
        try:
            network = ipaddress.ip_network(value, strict=True)
        except (ValueError, TypeError):
            continue
        if isinstance(network, ipaddress.IPv6Network) and network.subnet_of(_IPV4_MAPPED):
            mapped = network.network_address.ipv4_mapped
            assert mapped is not None  # inside ::ffff:0:0/96
            network = ipaddress.IPv4Network((mapped, network.prefixlen - 96))
        parsed.append((j, network))
    return parsed


def admits_everyone(values: list[str] | tuple[str, ...]) -> str | None:
    """The address family ('IPv4' or 'IPv6') whose every address the ranges admit together
    (0.0.0.0/0, or 0.0.0.0/1 with 128.0.0.0/1, ...), if any."""
    networks = [n for _, n in _networks(values)]
    v4 = [n for n in networks if isinstance(n, ipaddress.IPv4Network)]
    v6 = [n for n in networks if isinstance(n, ipaddress.IPv6Network)]
    if any(n.prefixlen == 0 for n in ipaddress.collapse_addresses(v4)):
        return "IPv4"
    if any(n.prefixlen == 0 for n in ipaddress.collapse_addresses(v6)):
        return "IPv6"
    return None


def too_wide_problems(
    path: str, values: list[str] | tuple[str, ...], what: str, fix: str
) -> list[str]:
    """Each range wider than production accepts (MIN_PREFIX_IPV4 / MIN_PREFIX_IPV6)."""
    problems = []
    for j, network in _networks(values):
        minimum = MIN_PREFIX_IPV4 if network.version == 4 else MIN_PREFIX_IPV6
        if network.prefixlen < minimum:
            problems.append(
                f"{path}[{j}]: {values[j]!r} admits {network.num_addresses:,} addresses; "
                f"{what} in a production stack (cluster.production) accepts IPv4 ranges of "
                f"/{MIN_PREFIX_IPV4} or narrower and IPv6 ranges of /{MIN_PREFIX_IPV6} or "
                f"narrower, so that only your own networks reach it. {fix}"
            )
    return problems


def production_workload_problems(i: int, w: WorkloadSpec) -> list[str]:
    """A production stack's public endpoint (expose.type LoadBalancer): HTTPS, and source ranges
    that are your clients' networks, not the internet."""
    e = w.expose
    if e is None or e.type != "LoadBalancer":
        return []
    path = f"workloads[{i}].expose"
    fix = "List your clients' networks, or use expose.type: Internal (reachable from the VPC only)."
    problems = []
    if not e.tls:
        problems.append(
            f"{path}.tls: false serves the API key, prompts and completions in clear text to the "
            "internet, and a production stack (cluster.production) serves its public endpoints "
            "over HTTPS. Remove tls: false."
        )
    family = admits_everyone(e.source_ranges)
    if not e.source_ranges:
        problems.append(
            f"{path}.sourceRanges: not set, so the public load balancer accepts connections from "
            "the whole internet, and anyone can spend the GPUs or try keys; a production stack "
            f"(cluster.production) lists who may connect. {fix}"
        )
    elif family is not None:
        problems.append(
            f"{path}.sourceRanges: together admit every {family} address, so the endpoint is open "
            "to the whole internet: the same as setting no sourceRanges, though it looks "
            f"restricted. {fix}"
        )
    else:
        problems += too_wide_problems(
            f"{path}.sourceRanges", e.source_ranges, "a public endpoint", fix
        )
    return problems


def is_vllm_server(image: str) -> bool:
    """vLLM's OpenAI-compatible server image (any registry mirror, tag or digest)."""
    return drivers.vllm_tag(image) is not None


def _sets_key_itself(w: WorkloadSpec) -> str | None:
    """Where the workload already sets a vLLM API key of its own, if it does."""
    if API_KEY_ENV in w.env:
        return f"env.{API_KEY_ENV}"
    if API_KEY_ENV in w.secret_env:
        return f"secretEnv.{API_KEY_ENV}"
    if any(a == API_KEY_FLAG or a.startswith(API_KEY_FLAG + "=") for a in (*w.command, *w.args)):
        return f"args ({API_KEY_FLAG})"
    return None


def api_key(w: WorkloadSpec) -> bool:
    """Whether the stack generates an API key for the workload.

    Explicit `apiKey` wins. Unset, it is on for an exposed vLLM server that does not set a key of
    its own: the default workload (and any vLLM server a stack exposes) never serves an open API.
    Other images get one only when they ask: the key reaches them as env VLLM_API_KEY, which they
    can read, or pass on as `$(VLLM_API_KEY)` in args (Kubernetes expands it from the env).
    """
    if w.api_key is not None:
        return w.api_key
    return (
        w.expose is not None
        and w.kind != "Job"
        and is_vllm_server(w.image)
        and _sets_key_itself(w) is None
    )


def workload_problems(i: int, w: WorkloadSpec, mode: Mode | None) -> list[str]:
    path = f"workloads[{i}]"
    problems: list[str] = []
    expose = w.expose
    if expose is not None:
        load_balanced = expose.type in LOAD_BALANCED
        if expose.type == "ClusterIP" and expose.source_ranges:
            problems.append(
                f"{path}.expose.sourceRanges: a ClusterIP Service is reachable only inside the "
                "cluster and has no load balancer to enforce source ranges. Remove sourceRanges, "
                "or use type LoadBalancer or Internal."
            )
        if expose.type == "Internal" and mode == "existing":
            problems.append(
                f"{path}.expose.type: Internal makes GKE's internal passthrough load balancer, "
                "which an existing cluster does not have. Use LoadBalancer (with your cluster's "
                "load balancer implementation), ClusterIP or NodePort."
            )
        if expose.static_ip and not load_balanced:
            problems.append(
                f"{path}.expose.staticIp: only a load balancer has an address to reserve, and "
                f"type is {expose.type}. Remove staticIp, or use type LoadBalancer or Internal."
            )
        elif expose.static_ip and mode == "existing":
            problems.append(
                f"{path}.expose.staticIp: reserves a Google Cloud address, but mode 'existing' "
                "creates nothing in Google Cloud. Remove staticIp and pin the address with your "
                "load balancer's own settings."
            )
    if w.api_key and w.kind == "Job":
        problems.append(
            f"{path}.apiKey: a Job serves no requests, so no key would protect anything. "
            "Remove apiKey."
        )
    own = _sets_key_itself(w)
    if w.api_key and own is not None:
        problems.append(
            f"{path}.apiKey: the workload already sets its own key ({path}.{own}); vLLM would "
            f"use that one, not the generated key the apiKey output gives. Remove apiKey, or "
            f"remove {own}."
        )
    return problems


def default_paths(w: WorkloadSpec) -> tuple[str, ...]:
    return VLLM_PATHS if is_vllm_server(w.image) else DEFAULT_PATHS


def reserves_address(w: WorkloadSpec, mode: Mode | None) -> bool:
    """A load balancer on GKE gets a reserved address unless told not to; with TLS it must: the
    stack's certificate names the address, so it is known before the Service exists."""
    e = w.expose
    if e is None or e.type not in LOAD_BALANCED or mode == "existing":
        return False
    return e.static_ip if e.static_ip is not None else e.tls


def resolve_expose(w: WorkloadSpec, mode: Mode | None) -> Expose | None:
    if w.expose is None:
        return None
    e = w.expose
    return Expose(
        e.port,
        tuple(e.source_ranges),
        e.type,
        reserves_address(w, mode),
        e.tls,
        tuple(e.hosts),
        tuple(e.paths) if e.paths is not None else default_paths(w),
    )


def _path_problem(path: str, value: str) -> str | None:
    if not formats.matches(haproxy.PATH_PATTERN, value) or (
        value.endswith("*") and not value.endswith("/*")
    ):
        return (
            f"{path}: {value!r} is not a path the gate can match. Use an exact path such as "
            "'/v1/chat/completions', or a prefix ending in '/*' such as '/v1/*' (letters, digits "
            "and '-._~/' only)."
        )
    segments = value.rstrip("*").split("/")[1:]
    if any(s in (".", "..") for s in segments) or "//" in value or value.rstrip("*/").endswith("."):
        return (
            f"{path}: {value!r} holds '.', '..', '//' or a trailing dot, which servers may read "
            "as another path. Write the path as the server serves it."
        )
    if value in ("/", "/*"):
        return (
            f"{path}: {value!r} would forward every path, including a server's admin and "
            "unauthenticated routes. List the API paths the server documents."
        )
    return None


def _host_problem(path: str, value: str) -> str | None:
    try:
        ipaddress.ip_address(value)
        return None
    except ValueError:
        pass
    if formats.matches(
        r"(?:[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?\.)*[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?", value
    ):
        return None
    return (
        f"{path}: {value!r} is neither an IP address nor a DNS name (lowercase labels of letters, "
        "digits and hyphens, separated by dots). Use e.g. 'gpu.example.com' or '192.0.2.10'."
    )


def gate_problems(i: int, w: WorkloadSpec, mode: Mode | None) -> list[str]:
    """expose.tls, staticIp, hosts and paths: what the gate serves, and for which names."""
    e = w.expose
    if e is None:
        return []
    path = f"workloads[{i}].expose"
    problems = [
        p
        for j, value in enumerate(e.paths or [])
        if (p := _path_problem(f"{path}.paths[{j}]", value)) is not None
    ]
    problems += [
        p
        for j, value in enumerate(e.hosts)
        if (p := _host_problem(f"{path}.hosts[{j}]", value)) is not None
    ]
    if e.hosts and not e.tls:
        problems.append(
            f"{path}.hosts: names the certificate, but tls is false, so there is none. Remove "
            "hosts, or remove tls: false."
        )
    if e.tls and e.static_ip is False and e.type in LOAD_BALANCED and mode != "existing":
        problems.append(
            f"{path}.staticIp: the stack's certificate names the load balancer's address, which "
            "must be reserved before the Service exists (a Service's address is known only "
            "after it is created). Remove staticIp: false."
        )
    return problems


def _reference_problems(
    key: str, value: str | None, link: str, region: str, ctx: Context
) -> list[str]:
    if value is None:
        return []
    path = f"cluster.{key}"
    shown = ctx.show(path, value)
    if formats.matches(GCE_NAME, value):
        return []
    match = re.fullmatch(link, value, flags=re.ASCII)
    if match is None:
        kind = "network" if key == "network" else "subnetwork"
        where = (
            "global/networks/NAME" if kind == "network" else f"regions/{region}/subnetworks/NAME"
        )
        return [
            f"{path}: {shown} is neither a {kind} name (1-63 lowercase letters, digits and "
            f"hyphens, starting with a letter) nor a self-link (projects/PROJECT/{where}). "
            f"Use e.g. {'acme-vpc' if kind == 'network' else 'gpu-subnet'}."
        ]
    found = match.groupdict().get("region")
    if found is not None and region and found != region:
        return [
            f"{path}: {shown} is in region {found!r}, but the cluster is in {region!r}; a "
            "cluster's nodes use a subnetwork of its own region. Name a subnetwork of "
            f"{region!r}."
        ]
    return []


def cluster_problems(cluster: ClusterSpec, mode: Mode, region: str, ctx: Context) -> list[str]:
    """cluster.network/subnetwork/podRange/serviceRange/nodeServiceAccount."""
    if mode == "existing":
        given = {
            f.alias for n, f in ClusterSpec.model_fields.items() if n in cluster.model_fields_set
        }
        return [
            f"cluster.{key}: configures a GKE cluster, but mode 'existing' deploys into a cluster "
            "this stack does not manage, so it would do nothing. Remove it."
            for key in GKE_NETWORK_KEYS
            if key in given
        ]
    problems = _reference_problems("network", cluster.network, NETWORK_LINK, region, ctx)
    problems += _reference_problems("subnetwork", cluster.subnetwork, SUBNETWORK_LINK, region, ctx)
    if cluster.subnetwork is not None and cluster.network is None:
        problems.append(
            "cluster.subnetwork: set without cluster.network, so the cluster would look for it in "
            "the project's `default` network. Set cluster.network to the subnetwork's network."
        )
    for key, value in (("podRange", cluster.pod_range), ("serviceRange", cluster.service_range)):
        if value is None:
            continue
        if not formats.matches(GCE_NAME, value):
            problems.append(
                f"cluster.{key}: {ctx.show(f'cluster.{key}', value)} is not a secondary range "
                "name (1-63 lowercase letters, digits and hyphens, starting with a letter). Use "
                "the range's name as `gcloud compute networks subnets describe` lists it."
            )
        if cluster.subnetwork is None:
            problems.append(
                f"cluster.{key}: names a secondary range of the cluster's subnetwork, but "
                "cluster.subnetwork is not set. Set cluster.network and cluster.subnetwork."
            )
    if mode == "autopilot" and not cluster.dataplane_v2:
        problems.append(
            "cluster.dataplaneV2: Autopilot clusters always run GKE Dataplane V2 (it enforces "
            "the workloads' NetworkPolicies). Remove dataplaneV2: false."
        )
    account = cluster.node_service_account
    if account is not None and not formats.matches(SERVICE_ACCOUNT_EMAIL, account):
        problems.append(
            f"cluster.nodeServiceAccount: {ctx.show('cluster.nodeServiceAccount', account)} is "
            "not a service account email. Use e.g. "
            "'gpu-prod-nodes@acme-ml-prod.iam.gserviceaccount.com'."
        )
    return problems


def static_ip_problems(i: int, w: WorkloadSpec, cluster: ClusterSpec | None) -> list[str]:
    """An internal address comes from a subnetwork: with your own network, name it."""
    if (
        w.expose is None
        or cluster is None
        or not reserves_address(w, cluster.mode)
        or w.expose.type != "Internal"
        or cluster is None
        or cluster.network in (None, DEFAULT_NETWORK)
        or cluster.subnetwork is not None
    ):
        return []
    return [
        f"workloads[{i}].expose.staticIp: an internal address is reserved in a subnetwork, and "
        f"cluster.network is {cluster.network!r} without cluster.subnetwork. Set "
        "cluster.subnetwork (the cluster's subnetwork)."
    ]
