"""Exposure and network rules: expose types, static addresses, API keys, your own VPC."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Sequence

from .. import formats
from ..context import Context
from ..problems import Problem
from ..schema import ExposeSpec, Mode, WorkloadSpec
from ..sleep import sleeps
from ..variants import exposure_of, exposure_spec, kind_spec

# The environment variable vLLM's OpenAI server reads its API key from: vllm/envs.py declares
# "VLLM_API_KEY": lambda: os.environ.get("VLLM_API_KEY", None), and the server adds its
# AuthenticationMiddleware for `args.api_key or [envs.VLLM_API_KEY]` ("Ensure --api-key option from
# CLI takes precedence over VLLM_API_KEY", vllm/entrypoints/openai/api_server.py build_app). The
# middleware guards only /v1, /v2, /inference and /cohere, so /health (the probes) and /metrics stay
# open (GUARDED_PREFIX, vllm/entrypoints/serve/utils/server_utils.py at commit 0753ceeb). Read in
# the stored vllm-project/vllm sources on 2026-11-22; the v0.29.0 tree itself
# (components/facts/pins.py)
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

# cluster keys of rules/network.py that configure a GKE cluster (refused in mode existing).
GKE_NETWORK_KEYS = (
    "network",
    "subnetwork",
    "podRange",
    "serviceRange",
    "nodeServiceAccount",
    "dataplaneV2",
)
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
) -> Iterator[Problem]:
    """Each range wider than production accepts (MIN_PREFIX_IPV4 / MIN_PREFIX_IPV6)."""
    for j, network in _networks(values):
        minimum = MIN_PREFIX_IPV4 if network.version == 4 else MIN_PREFIX_IPV6
        if network.prefixlen < minimum:
            yield Problem(
                f"{path}[{j}]",
                f"{values[j]!r} admits {network.num_addresses:,} addresses; "
                f"{what} in a production stack (cluster.production) accepts IPv4 ranges of "
                f"/{MIN_PREFIX_IPV4} or narrower and IPv6 ranges of /{MIN_PREFIX_IPV6} or "
                f"narrower, so that only your own networks reach it. {fix}",
            )


# Every address the stack gives an endpoint is IPv4 (issue 43): the Gateway's reserved global
# address (components/expose/gateway.py registers gcp.compute.GlobalAddress without ip_version,
# and "The default value is `IPV4`", pulumi_gcp 10.2.0 compute/global_address.py), and a load
# balancer's on the clusters the stack builds, which set no IP stack type (the cluster's
# ip_allocation_policy stack_type: "Default value is `IPV4`", pulumi_gcp 10.2.0 container), so
# their Services are IPv4 alone, as is a reserved regional gcp.compute.Address (ip_version's
# default, IPV4). No IPv6 client connects to an IPv4 address: ranges that hold IPv6 networks only
# admit nobody. An existing cluster's load balancer may serve IPv6 (a dual-stack cluster), so
# there the ranges are left to it.
def ipv6_only_problems(path: str, expose: ExposeSpec, ctx: Context) -> Iterator[Problem]:
    """`path`.sourceRanges that no client of the endpoint's IPv4 address is in."""
    ranges = expose.source_ranges
    if not exposure_spec(expose.type).load_balanced or ctx.existing or not ranges:
        return
    networks = _networks(ranges)
    if len(networks) != len(ranges) or any(n.version == 4 for _, n in networks):
        return  # an IPv4 range admits its clients (a range that is no CIDR is reported itself)
    where = (
        "clients reach expose.domain at the Gateway's reserved global address, which is IPv4, "
        "and Cloud Armor would allow none of them"
        if exposure_of(expose).terminates_at_edge
        else f"the {'external' if exposure_spec(expose.type).public else 'internal'} load "
        "balancer's "
        "address is IPv4 (the cluster the stack builds is IPv4-only, and so are its Services), "
        "and its firewall would let none of its clients in"
    )
    yield Problem(
        f"{path}.sourceRanges",
        f"lists IPv6 ranges only, but {where}; no IPv6 client can connect to an IPv4 address, so "
        "the endpoint admits nobody. List your clients' IPv4 ranges (IPv6 ranges may stay beside "
        "them).",
    )


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

    Explicit `apiKey` wins. Unset, it is on for every exposed workload that sets no key of its
    own, whatever its image: the gate checks the key, not the server, so a mirrored vLLM image,
    `vllm serve` in a custom image or any other HTTP server is as protected as the default one.
    Every expose type counts: a LoadBalancer or Internal endpoint is reached from its source
    ranges or the VPC, a NodePort from anything that reaches a node (no source ranges at all),
    and a ClusterIP from the namespace's pods only where NetworkPolicy is enforced (not on an
    existing cluster whose network plugin ignores it, nor in Standard with dataplaneV2: false).
    The key also reaches the server as env VLLM_API_KEY: vLLM checks it again, another server
    may read it (or take `$(VLLM_API_KEY)` in args) or ignore it, and the gate requires it either
    way.
    """
    if w.api_key is not None:
        return w.api_key
    return w.expose is not None and kind_spec(w).serves_http and _sets_key_itself(w) is None


def workload_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    path = f"workloads[{i}]"
    expose = w.expose
    if expose is not None:
        exposure = exposure_spec(expose.type)
        yield from ipv6_only_problems(f"{path}.expose", expose, ctx)
        if exposure.refused_on_existing is not None and ctx.existing:
            yield Problem(f"{path}.expose.type", exposure.refused_on_existing)
        if expose.static_ip and not exposure.load_balanced:
            yield Problem(
                f"{path}.expose.staticIp",
                f"only a load balancer has an address to reserve, and type is {expose.type}. "
                "Remove staticIp, or use type LoadBalancer or Internal.",
            )
        elif expose.static_ip and ctx.existing:
            yield Problem(
                f"{path}.expose.staticIp",
                "reserves a Google Cloud address, but mode 'existing' "
                "creates nothing in Google Cloud. Remove staticIp and pin the address with "
                "your load balancer's own settings.",
            )
    if w.api_key and not kind_spec(w).serves_http:
        yield Problem(
            f"{path}.apiKey",
            f"a {w.kind} serves no requests, so no key would protect anything. Remove apiKey.",
        )
    own = _sets_key_itself(w)
    if w.api_key and own is not None:
        yield Problem(
            f"{path}.apiKey",
            f"the workload already sets its own key ({path}.{own}); vLLM would use that one, not "
            f"the generated key the apiKey output gives. Remove apiKey, or remove {own}.",
        )


def gate_has_key(w: WorkloadSpec) -> bool:
    """The gate checks a key: the generated one, or VLLM_API_KEY from the workload's Secret
    (`secretEnv`, or a `secure:` env value; a plain one is refused by rules/credentials.py)."""
    return api_key(w) or API_KEY_ENV in w.secret_env or API_KEY_ENV in w.env


def sleep_without_key_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """A model that sleeps is woken by any request that reaches its gate: without a key there,
    anyone who reaches a load balancer or node port starts a GPU node, and a probe every few
    minutes keeps it running at full price while the plan says it idles at none."""
    expose = w.expose
    if not sleeps(w) or expose is None or exposure_spec(expose.type).in_cluster:
        return
    if not gate_has_key(w):
        yield Problem(
            f"workloads[{i}].autoscale.minReplicas",
            f"0 with a {expose.type} endpoint and no key at the gate: any request that reaches "
            "it, a scanner's included, wakes a GPU node. Set apiKey: true (the gate then "
            f"requires it), or secretEnv.{API_KEY_ENV}, or expose.type: ClusterIP.",
        )


def default_paths(w: WorkloadSpec) -> tuple[str, ...]:
    return VLLM_PATHS if formats.is_vllm_image(w.image) else DEFAULT_PATHS


def advisories(workloads: Sequence[tuple[int, WorkloadSpec]]) -> list[str]:
    """An exposed server the plan does not know as vLLM (its image is no vllm-openai image, the
    same test default_paths makes), behind the default allowlist: the gate forwards /v1/* only,
    vLLM's API shape, which a notebook, a UI or another server rarely serves alone."""
    return [
        f"workloads[{i}].expose.paths: {w.image} is not a vLLM server image, and expose.paths "
        f"is not set, so its gate forwards only {' '.join(DEFAULT_PATHS)} (one or more path "
        "segments under /v1/); every other path, the server's root page and UI included, is "
        f"answered 404 by the gate. List the paths the server serves in workloads[{i}]."
        "expose.paths (exact paths, or prefixes ending in '/*'; e.g. a Jupyter server: "
        "['/lab', '/lab/*', '/api/*', '/static/*', '/files/*', '/login'], with "
        "expose.websockets: true for its kernels)."
        for i, w in workloads
        if w.expose is not None and w.expose.paths is None and default_paths(w) == DEFAULT_PATHS
    ]


def reserves_address(w: WorkloadSpec, mode: Mode | None) -> bool:
    """A load balancer on GKE gets a reserved address unless told not to; with TLS it must: the
    stack's certificate names the address, so it is known before the Service exists."""
    e = w.expose
    if e is None or mode == "existing":
        return False
    # A Gateway reserves a global address of its own, whatever staticIp says (address_type None).
    spec = exposure_of(e)
    if not spec.load_balanced or spec.address_type is None:
        return False
    return e.static_ip if e.static_ip is not None else e.tls


def _path_problem(path: str, value: str, ctx: Context) -> Problem | None:
    shown = ctx.show(path, value)
    if not formats.matches(formats.GATE_PATH, value) or (
        value.endswith("*") and not value.endswith("/*")
    ):
        return Problem(
            path,
            f"{shown} is not a path the gate can match. Use an exact path such as "
            "'/v1/chat/completions', or a prefix ending in '/*' such as '/v1/*' (letters, digits "
            "and '-._~/' only).",
        )
    segments = value.rstrip("*").split("/")[1:]
    if any(s in (".", "..") for s in segments) or "//" in value or value.rstrip("*/").endswith("."):
        return Problem(
            path,
            f"{shown} holds '.', '..', '//' or a trailing dot, which servers may read "
            "as another path. Write the path as the server serves it.",
        )
    if value in ("/", "/*"):
        return Problem(
            path,
            (
                f"{shown} would forward every path"
                if value == "/*"
                else f"{shown} is an exact path: it forwards the root page alone, no path under "
                "it (a prefix ends in '/*'), and '/*' would forward every path"
            )
            + ", including a server's admin and unauthenticated routes. List the API paths the "
            "server documents (e.g. '/v1/*').",
        )
    return None


def _host_problem(path: str, value: str, ctx: Context) -> Problem | None:
    try:
        ipaddress.ip_address(value)
        return None
    except ValueError:
        pass
    if formats.matches(
        r"(?:[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?\.)*[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?", value
    ):
        return None
    return Problem(
        path,
        f"{ctx.show(path, value)} is neither an IP address nor a DNS name (lowercase labels of "
        "letters, "
        "digits and hyphens, separated by dots). Use e.g. 'gpu.example.com' or '192.0.2.10'.",
    )


def gate_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """expose.tls, staticIp, hosts and paths: what the gate serves, and for which names."""
    e = w.expose
    if e is None:
        return
    path = f"workloads[{i}].expose"
    yield from [
        p
        for j, value in enumerate(e.paths or [])
        if (p := _path_problem(f"{path}.paths[{j}]", value, ctx)) is not None
    ]
    yield from [
        p
        for j, value in enumerate(e.hosts)
        if (p := _host_problem(f"{path}.hosts[{j}]", value, ctx)) is not None
    ]
    if e.hosts and not e.tls:
        yield Problem(
            f"{path}.hosts",
            "names the certificate, but tls is false, so there is none. Remove "
            "hosts, or remove tls: false.",
        )
    if (
        e.tls
        and e.static_ip is False
        and exposure_of(e).load_balanced
        and not ctx.existing
        and not exposure_of(e).managed_certificate
    ):
        yield Problem(
            f"{path}.staticIp",
            "the stack's certificate names the load balancer's address, which "
            "must be reserved before the Service exists (a Service's address is known only "
            "after it is created). Remove staticIp: false.",
        )
