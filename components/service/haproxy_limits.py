"""What keeps the gate standing and honest before any key is checked: connection slots and
timeouts, the TLS policy, the per-source limit on wrong keys, and the client address the model
sees. Pure text, rendered into haproxy.cfg by components/service/haproxy.py; docs/security.md
states each number, and tests/test_gate.py holds each against the real HAProxy.

Sources (HAProxy configuration manual 2.6, the branch tests/test_gate.py runs and the gate's image
ships): "maxconn" in sections 3.2 (global: the process stops accepting beyond it) and 4.2 (a
frontend's own limit); "timeout client", "timeout http-request" (4.2); "stick-table",
"http-request track-sc0", "sc-inc-gpc0", "sc_gpc0_rate" (4.2, 7.3.3); "option forwardfor" (4.2);
"option clitcpka", "clitcpka-idle", "clitcpka-intvl", "clitcpka-cnt", "timeout tunnel",
"timeout http-keep-alive" (4.2); "req.fhdr", "word", "ipmask" (7.3.6, 7.3.1).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..config import defaults
from .haproxy_syntax import error_body, quoted

# --- connection slots -----------------------------------------------------------------------------
# Each open connection holds buffers (~32 KiB measured with half-sent requests): 500 keep a gate
# pod well inside its 128Mi. The API takes at most API_CONNECTIONS of them, so connections that
# send nothing can never take the slots kubelet's probes need: a full API no longer fails the
# health port and restarts the pods.
MAX_CONNECTIONS = 500
API_CONNECTIONS = 480
HEALTH_CONNECTIONS = 10  # kubelet's readiness and liveness probes, one at a time each
METRICS_CONNECTIONS = 5  # Managed Prometheus' collector, one scrape every 15 s (issue 31)
# --- one address's share (issue 44, M1) ----------------------------------------------------------
# Connections that send nothing are closed within seconds (below), but one address opening them
# faster than they close (about 120 a second measured) held every API slot. So one client address
# (an IPv6 client by its /64) holds at most PER_SOURCE_CONNECTIONS of the API's connections at
# once: a connection past them is refused as it arrives (`tcp-request connection reject`, before
# TLS), and filling the API takes API_CONNECTIONS / PER_SOURCE_CONNECTIONS addresses. The count
# is the table's conn_cur, which includes the connection being tracked (HAProxy 2.6 manual, 7.3.3
# "sc_conn_cur", 4.2 "tcp-request connection track-sc1"). Behind a Gateway every connection comes
# from Google's front end, which keeps a pool of them for all clients: there the cap would limit
# the front end itself, so it is not set; the front end manages client connections and the gate's
# per-client limits read the client it names (the wrong-key limit, below).
PER_SOURCE_CONNECTIONS = 48
SOURCES_TABLE = "per_source"
# --- timeouts -------------------------------------------------------------------------------------
# A connection that sends no complete request is closed after REQUEST_SECONDS (`timeout
# http-request`: the whole header, however slowly it trickles in). Until the TLS handshake is done
# there is no stream yet, and HAProxy expires the embryonic session after the frontend's `timeout
# client` (haproxy/haproxy src/session.c session_accept_fd; the 2.6 manual has no handshake timeout
# of its own, and later releases' `timeout client-hs` falls back to `timeout client`), so
# CLIENT_SECONDS also closes a connection that never starts TLS: tests/test_gate_hardening.py
# measures both on the 2.6 binary.
# `timeout client` is inactivity while the client is expected to send or read: a request held
# while a model wakes waits on `timeout server` instead (scale_to_zero.gate_timeout_seconds).
# 5 s: "slightly above multiples of 3 seconds" to cover TCP retransmits (manual 2.6, 4.2 "timeout
# client"); `timeout client-fin` is left unset, so half-closed connections get the same 5 s.
CLIENT_SECONDS = 5
REQUEST_SECONDS = 5
# An upgraded connection (a WebSocket, expose.websockets) is a tunnel: "timeout tunnel" supersedes
# the client and server timeouts once the connection is upgraded (manual 2.6, 4.2 "timeout
# tunnel": "In HTTP, this timeout is used when a connection is upgraded (e.g. when switching to
# the WebSocket protocol ...)"). Without it the tunnel would inherit the 5 s of `timeout client`
# and a notebook's kernel connection would drop after 5 s without a message.
TUNNEL_SECONDS = defaults.STREAM_SECONDS
# --- client TCP keepalive (issue 31, F4) ----------------------------------------------------------
# A request held while a model wakes sends nothing for minutes either way: a NAT between the client
# and the load balancer forgets such a flow (Cloud NAT drops an established TCP connection idle for
# 1200 s unless told otherwise: the Compute Engine API's RouterNat.tcpEstablishedIdleTimeoutSec,
# "Timeout (in seconds) for TCP established connections. Defaults to 1200s if not set", as
# Google's generated client documents it: pub.dev/documentation/googleapis/latest/compute_v1/
# RouterNat/tcpEstablishedIdleTimeoutSec.html; cloud.google.com/nat/docs/tune-nat-configuration
# changes it; home routers often forget sooner). The gate's kernel sends a keepalive probe after
# KEEPALIVE_IDLE_SECONDS of silence and every KEEPALIVE_INTERVAL_SECONDS after that, which every
# NAT on the way sees as traffic in both directions; a client gone silent is dropped after
# KEEPALIVE_PROBES unanswered probes (SO_KEEPALIVE with TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT:
# manual 2.6, 4.2 "clitcpka-idle", "clitcpka-intvl", "clitcpka-cnt", which Linux supports).
KEEPALIVE_IDLE_SECONDS = 60
KEEPALIVE_INTERVAL_SECONDS = 20
KEEPALIVE_PROBES = 3
# --- behind Google's front end (a Gateway: expose.domain) -----------------------------------------
# Google's front end keeps an idle connection to a backend and reuses it: "The backend keepalive
# timeout is fixed at 10 minutes (600 seconds) and cannot be changed ... you must configure your
# backend software so that its HTTP keepalive (TCP idle) timeout value is greater than 600 seconds"
# (cloud.google.com/load-balancing/docs/https, "Backend HTTP keepalive timeout", under "Timeouts
# and retries"; the same 600 s in .../docs/https/request-distribution, "Global external Application
# Load Balancer connections"). A gate that closes an idle connection first races the front end's
# next request on it, which the client gets as a 502 (backend_connection_closed_before_data_sent_
# to_client). `timeout http-keep-alive` is the wait for the next request (manual 2.6, 4.2), yet 2.6
# still closes an idle connection at `timeout client` (measured: 5.0 s with only the keep-alive at
# 620 s), so the API frontend raises both there (tests/test_gate_frontend.py); `timeout
# http-request` keeps its 5 s once a request starts. Only the front end's ranges reach that port
# (the Gateway's NetworkPolicy), so the short client timeout that guards a directly exposed gate
# against slow clients guards nothing there.
FRONT_END_REUSE_SECONDS = 600
FRONT_END_KEEPALIVE_SECONDS = 620
# The client behind the front end. Google documents the header the backend gets as "X-Forwarded-For:
# <unverified IP(s)>, <immediate client IP>, <global forwarding rule external IP>" and "Only the
# <immediate client IP> and <global forwarding rule external IP> entries are provided by the load
# balancer. All other entries in the list are passed along without verification"
# (cloud.google.com/load-balancing/docs/https#x-forwarded-for_header), so the client is the second
# address from the right and whatever a client wrote before it is not read. Read as text from the
# last header line (`req.fhdr`, no splitting: the front end's entries come last whether it joins a
# client's lines or adds its own, RFC 9110 5.3 keeping a field's lines in order), split on commas
# and spaces (`word`, counted from the end, empty words skipped): `req.hdr_ip(X-Forwarded-For,-2)`
# would honour double quotes inside the value (2.6 splits a header at commas outside quoted
# strings), so a client that wrote `X-Forwarded-For: 198.51.100.9,"` would have its own address
# read. `ipmask(32,128)` keeps an address only: anything else fails the rule, and the client stays
# the connection's address.
CLIENT_VAR = "txn.client"
FORWARDED_CLIENT = "req.fhdr(X-Forwarded-For,-1),word(-2,', '),ipmask(32,128)"
# --- TLS ------------------------------------------------------------------------------------------
# Mozilla's "intermediate" configuration (mozilla/ssl-config-generator@8debe30f
# src/static/guidelines/6.0.json): TLS 1.2 with ECDHE and AEAD ciphers only (no CBC, no SHA-1 MAC,
# no RSA key exchange), the three TLS 1.3 suites, and no session tickets (its HAProxy template).
TLS12_CIPHERS = (
    "ECDHE-ECDSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384",
    "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305",
    "ECDHE-RSA-CHACHA20-POLY1305",
)
TLS13_SUITES = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")
# --- wrong keys -----------------------------------------------------------------------------------
# Per client address (an IPv6 client by its /64, what one host usually holds): after FAILED_KEYS
# requests refused with 401 within FAILED_KEY_SECONDS, every request from it is answered 429 until
# the rate falls back below (a sliding window: up to FAILED_KEY_SECONDS after the last failure).
# A right key is never counted, so a client that holds it is never limited by this; kubelet's
# probes use the health frontend, which has no such table. The table holds TRACKED_SOURCES
# addresses (the oldest dropped first): a few MB at most.
FAILED_KEYS = 20
FAILED_KEY_SECONDS = 60
TRACKED_SOURCES = 20000

TOO_MANY_FAILURES = error_body(
    f"Too many requests with a missing or wrong API key from your address ({FAILED_KEYS} in "
    f"{FAILED_KEY_SECONDS} s). Retry after {FAILED_KEY_SECONDS} s with the right key "
    "(the stack output apiKey).",
    "rate_limit_error",
    429,
)


def global_lines() -> list[str]:
    """The process's connection limit and the TLS policy every `bind ... ssl` line inherits."""
    return [
        f"    maxconn {MAX_CONNECTIONS}",
        f"    ssl-default-bind-ciphers {':'.join(TLS12_CIPHERS)}",
        f"    ssl-default-bind-ciphersuites {':'.join(TLS13_SUITES)}",
        "    ssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets",
    ]


def timeout_lines(server_seconds: int, tunnel: bool = False) -> list[str]:
    """The defaults' timeouts: short on the client's side, `server_seconds` on the model's, and
    TUNNEL_SECONDS for an upgraded connection when the gate lets one through."""
    return [
        "    timeout connect 5s",
        f"    timeout client {CLIENT_SECONDS}s",
        f"    timeout http-request {REQUEST_SECONDS}s",
        "    timeout queue 60s",
        f"    timeout server {server_seconds}s",
        *([f"    timeout tunnel {TUNNEL_SECONDS}s"] if tunnel else []),
    ]


def keepalive_lines() -> list[str]:
    """TCP keepalive on every client connection, so a held request's silent flow stays open."""
    return [
        "    option clitcpka",
        f"    clitcpka-idle {KEEPALIVE_IDLE_SECONDS}s",
        f"    clitcpka-intvl {KEEPALIVE_INTERVAL_SECONDS}s",
        f"    clitcpka-cnt {KEEPALIVE_PROBES}",
    ]


def api_slots() -> list[str]:
    """The API frontend's own share of the process's connections."""
    return [f"    maxconn {API_CONNECTIONS}"]


def front_end_timeouts() -> list[str]:
    """The API frontend's idle connections outlast Google's front end's reuse of them."""
    return [
        f"    timeout client {FRONT_END_KEEPALIVE_SECONDS}s",
        f"    timeout http-keep-alive {FRONT_END_KEEPALIVE_SECONDS}s",
    ]


# Behind a Gateway the name is served over HTTPS only (the load balancer answers HTTP on 80 with a
# redirect): every answer tells browsers to use HTTPS for the name for a year (RFC 6797
# Strict-Transport-Security; no includeSubDomains: the name may sit under a domain whose other
# names are not this stack's). `http-after-response` reaches the answers HAProxy makes itself
# (401, 429, 404) too, where `http-response` sees only the server's (HAProxy 2.6 configuration
# manual, 4.2 "http-after-response").
HSTS_SECONDS = 31536000


def per_source_cap() -> list[str]:
    """The API frontend's first rules: each connection counted against its address, refused past
    PER_SOURCE_CONNECTIONS (not behind Google's front end: see above)."""
    return [
        f"    tcp-request connection track-sc1 src,ipmask(32,64) table {SOURCES_TABLE}",
        "    tcp-request connection reject if "
        f"{{ sc1_conn_cur({SOURCES_TABLE}) gt {PER_SOURCE_CONNECTIONS} }}",
    ]


def per_source_table() -> list[str]:
    """The table per_source_cap counts in (a backend of its own: the API frontend's table holds
    the wrong keys)."""
    return [
        f"backend {SOURCES_TABLE}",
        f"    stick-table type ipv6 size {TRACKED_SOURCES} expire {FAILED_KEY_SECONDS}s "
        "store conn_cur",
    ]


def front_end_answers() -> list[str]:
    """What every answer behind Google's front end carries: HSTS."""
    return [
        f'    http-after-response set-header Strict-Transport-Security "max-age={HSTS_SECONDS}"'
    ]


def front_end_client(ranges: Sequence[str]) -> list[str]:
    """CLIENT_VAR: the address Google's front end appends for the client when the connection comes
    from its `ranges`, else the connection's own address."""
    return [
        f"    acl from_front_end src {' '.join(ranges)}",
        f"    http-request set-var({CLIENT_VAR}) src",
        f"    http-request set-var({CLIENT_VAR}) {quoted(FORWARDED_CLIENT)} if from_front_end",
    ]


def failed_key_limit(front_end: bool = False) -> list[str]:
    """Before the key is checked: the client's address tracked (behind Google's front end, the one
    it names: front_end_client), and 429 once it has failed too often. Goes first in the API
    frontend, so a limited client costs nothing more."""
    client = f"var({CLIENT_VAR})" if front_end else "src"
    return [
        f"    stick-table type ipv6 size {TRACKED_SOURCES} expire {FAILED_KEY_SECONDS}s "
        f"store gpc0,gpc0_rate({FAILED_KEY_SECONDS}s)",
        f"    http-request track-sc0 {client},ipmask(32,64)",
        f"    http-request return status 429 content-type application/json string "
        f"{quoted(TOO_MANY_FAILURES)} hdr Retry-After {FAILED_KEY_SECONDS} "
        f"if {{ sc_gpc0_rate(0) ge {FAILED_KEYS} }}",
    ]


def count_failed_key(condition: str) -> list[str]:
    """Counts a refused key (`condition`: the key did not match) against the client's address.
    A CORS preflight (OPTIONS, which browsers send without credentials: Fetch standard, "CORS
    preflight fetch") is refused like any keyless request but not counted, so a web page's
    preflights cannot lock out every user behind its address."""
    return [f"    http-request sc-inc-gpc0(0) if {condition} !METH_OPTIONS"]


def client_address(front_end: bool = False) -> list[str]:
    """The model sees the address the connection came from (behind Google's front end, the client
    it names: front_end_client), never one the client wrote: headers a client may send to claim
    another address are removed, then X-Forwarded-For is set."""
    return [
        "    http-request del-header X-Forwarded-For",
        "    http-request del-header Forwarded",
        "    http-request del-header X-Real-IP",
        f'    http-request set-header X-Forwarded-For "%[var({CLIENT_VAR})]"'
        if front_end
        else "    option forwardfor",
    ]
