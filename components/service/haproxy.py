"""The gate's HAProxy configuration: TLS, the API key on every request, and a path allowlist.

Pure text rendering, no Pulumi: the same string goes into the gate's ConfigMap and, in
tests/test_gate.py, into a real HAProxy in front of a stub upstream. Values that differ between a
cluster and a test (the upstream address, the certificate file, the key) are environment
variables HAProxy expands itself ("${NAME}" inside double quotes, HAProxy configuration manual
2.6, section 2.3 "Environment variables"), so the rendered text is the one that runs.

Why HAProxy: its `secure_memcmp` converter compares the presented key in constant time when
the lengths match (configuration manual 2.6, section 7.3.1, "secure_memcmp(<var>)": "If both
binary strings have the same length then the comparison will be performed in constant time"),
which neither nginx nor Caddy offer without a scripting module; its `http-request return` answers
401/404 from the proxy itself, so a refused request never reaches the model; `monitor-uri`
serves an unauthenticated health check on a port of its own. Debian ships the same LTS branch
(2.6) this file is tested with.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..config import defaults
from . import haproxy_keys as keys
from . import haproxy_limits as limits
from . import haproxy_routing as routing
from .haproxy_syntax import error_body, quoted

# Where the gate's image reads haproxy.cfg (its CMD, components/service/gate_pod.py), and the files
# mounted beside it from the same ConfigMap.
CONFIG_DIR = "/usr/local/etc/haproxy"
CONFIG_FILE = "haproxy.cfg"
# Ports inside the gate pod (unprivileged: the image runs as a non-root user).
TLS_PORT = 8443
PLAIN_PORT = 8080  # only with expose.tls: false
HEALTH_PORT = 8081
HEALTH_PATH = "/healthz"
# HAProxy's own Prometheus exporter (issue 31, F2): what every client was answered, counted by the
# gate itself, on a port no Service exposes and only Managed Prometheus' collectors may reach.
METRICS_PORT = 8405
METRICS_PATH = "/metrics"
# Section names, which the exporter's series carry as their `proxy` label (the alert reads them).
API_FRONTEND = "api"
MODEL_BACKEND = "model"
# What the Deployment puts in the environment (components/service/gate.py) and the test sets itself.
UPSTREAM_ENV = "GATE_UPSTREAM"
CERT_ENV = "GATE_CERT"
KEY_ENV = "GATE_API_KEY"
# Characters a request path segment may hold to match a prefix pattern's "*".
_SEGMENT = r"[A-Za-z0-9_~-]+(?:\.[A-Za-z0-9_~-]+)*"


@dataclass(frozen=True)
class GateSettings:
    """What one workload's gate enforces."""

    paths: tuple[str, ...]
    """Allowed request paths: exact, or a prefix ending in "/*" (one or more safe segments)."""
    tls: bool = True
    api_key: bool = True
    """Require `Authorization: Bearer <key>` (the key from the environment) on every request."""
    request_timeout_seconds: int = defaults.GENERATION_SECONDS
    """Longest silence from the model server (a long generation streams tokens, so this is the
    gap between chunks, not the whole answer), and, for a sleeping model, from KEDA's
    interceptor while it holds a request until a replica is ready."""
    upstream_host: str | None = None
    """The Host header the upstream routes by: KEDA's interceptor finds a sleeping model's
    HTTPScaledObject by it (components/service/scale_to_zero.py); None forwards the client's."""
    replicas: int = 0
    """Cache-aware routing over at most this many replicas, each found in the DNS records of the
    upstream name (a headless Service) and health-checked; 0: the upstream is one address."""
    health_path: str | None = None
    """With `replicas`: the path each replica answers 200 on when it can serve (vLLM's /health);
    None: a TCP connection is the check."""
    websockets: bool = False
    """Let a WebSocket upgrade through (expose.websockets: a notebook's kernels), after the key and
    the allowlist, as a tunnel that may stay quiet for limits.TUNNEL_SECONDS; any other upgrade
    (h2c) is still refused."""
    consumers: tuple[str, ...] = ()
    """expose.keys: the gate accepts each consumer's key instead of the workload's own, logs the
    consumer's name and sends the server the workload's key (haproxy_keys.py); needs api_key."""
    front_end_ranges: tuple[str, ...] = ()
    """Behind Google's front end (a Gateway on expose.domain), which alone connects, from these
    ranges: idle connections outlast its reuse of them, and the client (counted for wrong keys,
    named to the model) is the one it appends to X-Forwarded-For (haproxy_limits.py); empty: the
    client is the connection's own address."""

    @property
    def port(self) -> int:
        """The port the gate serves the API on."""
        return TLS_PORT if self.tls else PLAIN_PORT


def path_regex(patterns: Sequence[str]) -> str:
    """One anchored regular expression matching exactly the allowed paths.

    A prefix pattern "/v1/*" admits "/v1/" followed by one or more segments of safe characters;
    no segment is "." or "..", and nothing percent-encoded matches, so no path outside the
    allowlist can be spelled to look like one inside it.
    """
    alternatives = []
    for pattern in patterns:
        if pattern.endswith("/*"):
            prefix = re.escape(pattern[:-1])
            alternatives.append(f"{prefix}{_SEGMENT}(?:/{_SEGMENT})*")
        else:
            alternatives.append(re.escape(pattern))
    return "^(?:" + "|".join(alternatives) + ")$"


UNAUTHORIZED = error_body(
    "Missing or wrong API key. Send it as the header 'Authorization: Bearer <key>' "
    "(the stack output apiKey: pulumi stack output apiKey --show-secrets).",
    "invalid_request_error",
    401,
)
NO_REPLICA = error_body(
    "No model replica is ready to serve. It may be starting or scaling; retry shortly.",
    "server_error",
    503,
)
NOT_ALLOWED = error_body(
    "This path is not served. The gate forwards only the model API (see the stack's plan for "
    "the allowed paths).",
    "invalid_request_error",
    404,
)


def files(settings: GateSettings) -> dict[str, str]:
    """The gate's ConfigMap data: haproxy.cfg, and for cache-aware routing the script it loads."""
    script = {routing.SCRIPT: routing.script(MODEL_BACKEND)} if settings.replicas else {}
    return {CONFIG_FILE: render(settings), **script}


def render(settings: GateSettings) -> str:
    """haproxy.cfg for one workload's gate."""
    lines = [
        # The ConfigMap's data, byte for byte: a change replaces the ConfigMap (pulumi-kubernetes
        # forceNewProperties) and rolls every gate, so this header keeps the module path it was
        # first deployed with (now components/service/haproxy.py; tests/test_upgrades.py).
        "# gke-gpu API gate (components/haproxy.py): rendered by the program; do not edit.",
        *_global_section(settings),
        "",
        *_defaults_section(settings),
        "",
        "# Kubelet's probes: served by the gate itself, on a port no Service exposes.",
        "frontend health",
        f"    bind :{HEALTH_PORT}",
        f"    maxconn {limits.HEALTH_CONNECTIONS}",
        f"    monitor-uri {HEALTH_PATH}",
        "    http-request deny deny_status 404",
        "",
        *_metrics_frontend(),
        "",
        *_api_frontend(settings),
        "",
        *_backend(settings),
        *([] if settings.front_end_ranges else [*limits.per_source_table(), ""]),
    ]
    return "\n".join(lines)


def _global_section(settings: GateSettings) -> list[str]:
    lines = [
        "global",
        "    log stdout format raw local0 info",
        *limits.global_lines(),
        # A routing gate waits for bodies (_route_key), and each waiting request holds its
        # buffers with no server connection yet: at most 4 HTTP/2 streams per connection keep
        # maxconn's 500 connections inside the pod's memory (100 streams each measured 300 MB).
        # HAProxy configuration manual 2.6, section 3.2 "tune.h2.max-concurrent-streams".
        *(["    tune.h2.max-concurrent-streams 4"] if settings.replicas else []),
        # The script that picks a replica (haproxy_routing.py), a file of the same ConfigMap.
        *(routing.load_script(CONFIG_DIR) if settings.replicas else []),
    ]
    if settings.api_key:
        # The key as the header carries it, read at run time with env(): never in this file.
        lines.append(f'    setenv GATE_BEARER "Bearer ${{{KEY_ENV}}}"')
        lines += keys.global_lines(settings.consumers)
    return lines


def _defaults_section(settings: GateSettings) -> list[str]:
    return [
        "defaults",
        "    mode http",
        "    log global",
        "    option httplog",
        *limits.timeout_lines(settings.request_timeout_seconds, tunnel=settings.websockets),
        *limits.keepalive_lines(),
    ]


def _metrics_frontend() -> list[str]:
    """The exporter, as its README has it used (haproxy/haproxy@v2.6.0 addons/promex/README: "it
    must be enabled in the configuration with an "http-request" rule", `http-request use-service
    prometheus-exporter if { path /metrics }`), on a port of its own: the API port never serves
    it. Compiled into both the tested and the deployed binary: Debian's 2.6 prints "Built with the
    Prometheus exporter as a service" in `haproxy -vv`, and the image is built with USE_PROMEX=1
    (docker-library/repo-info@0ed0a0ed repos/haproxy/remote/2.6.34-alpine.md)."""
    return [
        "# Managed Prometheus' collectors: HAProxy's own exporter, on a port no Service exposes.",
        "frontend metrics",
        f"    bind :{METRICS_PORT}",
        f"    maxconn {limits.METRICS_CONNECTIONS}",
        "    option dontlog-normal",  # a scrape every 15 s is no news; a failed one is logged
        f"    http-request use-service prometheus-exporter if {{ path {METRICS_PATH} }}",
        "    http-request deny deny_status 404",
    ]


def _api_frontend(settings: GateSettings) -> list[str]:
    """The API: TLS (or plain), its connection share and client timeouts, the per-client limit on
    wrong keys, one Authorization header, no upgrade but a WebSocket where allowed, the key, the
    allowlist, the client's own address (behind Google's front end, the one it names)."""
    # TLS 1.2+ and the ciphers of limits.global_lines(); ALPN offers HTTP/2 and HTTP/1.1.
    bind = (
        f'bind :{TLS_PORT} ssl crt "${{{CERT_ENV}}}" alpn h2,http/1.1'
        if settings.tls
        else f"bind :{PLAIN_PORT}"
    )
    front_end = settings.front_end_ranges
    return [
        f"frontend {API_FRONTEND}",
        f"    {bind}",
        *limits.api_slots(),
        *([] if front_end else limits.per_source_cap()),
        *_client_timeouts(settings),
        *(limits.front_end_client(front_end) if front_end else []),
        *(limits.front_end_answers() if front_end else []),
        *(limits.failed_key_limit(bool(front_end)) if settings.api_key else []),
        # Two Authorization headers: which one the server would read is up to it. Refuse.
        "    http-request deny deny_status 400 if { req.hdr_cnt(authorization) gt 1 }",
        *_upgrade_rules(settings.websockets),
        *(_key_check(settings.consumers) if settings.api_key else []),
        f"    acl allowed_path path -m reg {quoted(path_regex(settings.paths))}",
        "    http-request return status 404 content-type application/json "
        f"string {quoted(NOT_ALLOWED)} if !allowed_path",
        *limits.client_address(bool(front_end)),
        *(routing.route_key() if settings.replicas else []),
        f"    default_backend {MODEL_BACKEND}",
    ]


def _client_timeouts(settings: GateSettings) -> list[str]:
    """The API frontend's own client timeouts, where the defaults' 5 s would cut what it must
    keep. A routing gate waits up to routing.BODY_WAIT_SECONDS for a body's first bytes, and
    `timeout client` runs while it waits: 5 s would cut a body that pauses after the headers (an
    upload, a slow client) with a 408 before the wait ends. Behind Google's front end, an idle
    connection outlasts the front end's reuse of it (limits.FRONT_END_KEEPALIVE_SECONDS, longer
    than the body wait too)."""
    if settings.front_end_ranges:
        return limits.front_end_timeouts()
    if settings.replicas:
        return [f"    timeout client {routing.BODY_WAIT_SECONDS}s"]
    return []


def _upgrade_rules(websockets: bool) -> list[str]:
    """An upgraded connection is a tunnel the allowlist no longer sees after the upgrade request
    itself, so none is let through unless the workload serves WebSockets; then only a WebSocket
    (one Upgrade value, "websocket": RFC 6455 section 4.1), and its upgrade request still passes
    the key and the allowlist below like any other request. `req.hdr_cnt` counts comma-separated
    values (manual 2.6, 7.3.6), so "websocket, h2c" is two and refused."""
    if not websockets:
        return ["    http-request deny deny_status 400 if { req.hdr_cnt(upgrade) gt 0 }"]
    return [
        "    http-request deny deny_status 400 if { req.hdr_cnt(upgrade) gt 1 }",
        "    http-request deny deny_status 400 if { req.hdr_cnt(upgrade) eq 1 } "
        "!{ req.hdr(upgrade) -i websocket }",
    ]


def _key_check(consumers: Sequence[str]) -> list[str]:
    """The key, compared in constant time with the whole header "Bearer <key>"; a refusal counts
    against the client's address (limits.failed_key_limit). With consumers, any of their keys
    instead (haproxy_keys.py)."""
    if consumers:
        return keys.key_check(consumers, "GATE_BEARER")
    return [
        "    http-request set-var(txn.bearer) env(GATE_BEARER)",
        "    acl key_ok req.fhdr(authorization),secure_memcmp(txn.bearer)",
        *limits.count_failed_key("!key_ok"),
        "    http-request return status 401 content-type application/json "
        f'string {quoted(UNAUTHORIZED)} hdr WWW-Authenticate "Bearer" if !key_ok',
    ]


def _backend(settings: GateSettings) -> list[str]:
    host = (
        # KEDA's interceptor routes by Host (and holds the request while the model wakes).
        [f"    http-request set-header Host {quoted(settings.upstream_host)}"]
        if settings.upstream_host
        else []
    )
    resolvers = [
        # The cluster's DNS (the pod's resolv.conf), so the Service name is resolved again at
        # run time (every second, `timeout resolve`'s default): at start it may not resolve yet
        # (init-addr none keeps HAProxy starting).
        "resolvers cluster",
        "    parse-resolv-conf",
        "    hold valid 30s",
    ]
    if settings.replicas:
        return [
            *resolvers,
            # One A record per ready replica: room for all of them in one answer.
            "    accepted_payload_size 8192",
            "",
            f"backend {MODEL_BACKEND}",
            *routing.backend(settings.replicas, settings.health_path, UPSTREAM_ENV, NO_REPLICA),
            "",
        ]
    return [
        *resolvers,
        "",
        f"backend {MODEL_BACKEND}",
        *host,
        f'    server model "${{{UPSTREAM_ENV}}}" resolvers cluster init-addr last,libc,none',
        "",
    ]
