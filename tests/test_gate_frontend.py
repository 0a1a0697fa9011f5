"""The gate behind a front end like Google's (issue 43), run for real: the haproxy.cfg the program
renders for a workload on expose.domain, in front of tests/test_gate.py's stub model, with a
stand-in for the Gateway's Google front end in front of the gate.

The stand-in is a second real HAProxy (FRONT_END), configured as Google documents its front end
toward a backend (components/service/haproxy_limits.py cites the pages): it keeps idle connections
to the gate up to 600 s and reuses them for any client (`http-reuse always`), appends
`<client>,<load balancer>` to X-Forwarded-For, and reaches the gate from one address for every
client. Between the two runs `Wire`, the network between a front end far away and the gate: it
carries the TLS the front end speaks to the gate, and a close from the gate reaches the front end
only when the front end next writes on that connection, as when the front end's request and the
gate's close cross on the way. A real front end loses that race now and then (the issue's
intermittent 502s); the wire makes it lose every time, so one quiet period shows what a gate that
closes first costs. HAProxy alone over loopback sees every close at once and opens a new
connection instead: it never loses the race, and would show nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import select
import socket
import socketserver
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from components.config import load
from components.expose.gateway import PROXY_RANGES
from components.service import haproxy
from components.service import haproxy_limits as limits
from components.service.gate import gate_settings
from tests.test_gate import (
    HAPROXY,
    RIGHT,
    _context,
    _haproxy,
    _request,
    _send,
    _wait_for_port,
    client_address,
    connect,
    free_port,
)
from tests.test_gate_hardening import WRONG, Running, _start
from tests.test_gateway import domain_stack
from tools import summary
from tools.engine import Recording

if HAPROXY is None:
    pytestmark = pytest.mark.skip(reason="haproxy not installed (apt-get install haproxy)")

# The load balancer's own address, which the front end appends after the client's.
LOAD_BALANCER = "203.0.113.50"
FRONT_END = """global
    maxconn 100
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend google
    bind :{port} ssl crt "${{GATE_CERT}}"
    http-request set-header X-Forwarded-For "%[req.fhdr(X-Forwarded-For)],%[src],{lb}" \
if {{ req.fhdr(X-Forwarded-For) -m found }}
    http-request set-header X-Forwarded-For "%[src],{lb}" \
unless {{ req.fhdr(X-Forwarded-For) -m found }}
    default_backend gate
backend gate
    http-reuse always
    server gate 127.0.0.1:{wire} pool-purge-delay {reuse}s
"""
# Longer than the gate's old idle timeout (5 s: `timeout http-request` when no keep-alive timeout
# is set, and `timeout client`, the same 5 s) by 3 s, room for a busy 2-core machine's scheduling
# of the gate's timer and the wire's read. Google's front end may wait up to 600 s; the gate's
# new 620 s is one timer set longer, so waiting past the old figure is what tells the two apart
# (test_the_gateway_gate_keeps_idle_connections_past_the_front_ends_reuse_as_the_plan_says).
QUIET_SECONDS = limits.CLIENT_SECONDS + 3


class Wire(socketserver.ThreadingTCPServer):
    """Carries each connection of the front end to the gate, over TLS from one address (`source`,
    the front end's), and counts them. A close from the gate is kept from the front end until it
    writes on that connection again: then its request is lost and the connection reset, which the
    front end answers 502 (backend_connection_closed_before_data_sent_to_client)."""

    daemon_threads = True

    def __init__(self, gate: Running, source: str) -> None:
        super().__init__(("127.0.0.1", 0), _Carry)
        self.gate, self.source = gate, source
        self.carried = 0
        threading.Thread(target=self.serve_forever, daemon=True).start()


class _Carry(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        wire, front = self.server, self.request
        assert isinstance(wire, Wire)
        wire.carried += 1
        gate = wire.gate
        raw = connect(gate.api_port, wire.source)
        with _context(gate.pki.ca_pem).wrap_socket(raw, server_hostname=gate.host) as tls:
            tls.setblocking(False)  # a TLS record that carries no data must not block the loop
            closed = False
            while True:
                ready, _, _ = select.select([front] if closed else [front, tls], [], [])
                if front in ready:
                    request = front.recv(65536)
                    if not request:
                        return
                    if closed:  # the request meets the gate's close on the way: reset
                        front.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
                        return
                    tls.sendall(request)
                if tls in ready:
                    answer, closed = _received(tls)
                    front.sendall(answer)


_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends RST


def _received(tls: ssl.SSLSocket) -> tuple[bytes, bool]:
    """What the gate has sent so far, and whether it has closed the connection."""
    data = b""
    while True:
        try:
            chunk = tls.recv(65536)
        except ssl.SSLWantReadError:
            return data, False
        except OSError:
            return data, True
        if not chunk:
            return data, True
        data += chunk


@dataclasses.dataclass
class Front:
    gate: Running
    wire: Wire
    port: int


def _trusting(config: str, source: str) -> str:
    """The gate's config with the wire's address as the front end's ranges (Google's are not on
    this machine); a config that reads no X-Forwarded-For is returned as it is."""
    return config.replace(f"src {' '.join(PROXY_RANGES)}\n", f"src {source}/32\n")


@contextlib.contextmanager
def behind_front_end(config: str, dev: Recording, folder: Path) -> Iterator[Front]:
    """The gate on `config`, the wire and the front end, stopped at the end."""
    source = client_address()
    (folder / "gate").mkdir(parents=True)
    gate, gate_process = _start(_trusting(config, source), dev, folder / "gate")
    wire = Wire(gate, source)
    port, front = free_port(), folder / "front"
    front.mkdir()
    (front / "haproxy.cfg").write_text(
        FRONT_END.format(
            port=port,
            lb=LOAD_BALANCER,
            wire=wire.server_address[1],
            reuse=limits.FRONT_END_REUSE_SECONDS,
        )
    )
    (front / "gate.pem").write_bytes(gate.pki.server_pem)
    processes: list[subprocess.Popen[bytes]] = [gate_process, _haproxy(front, 0)]
    try:
        _wait_for_port(port, processes[1])
        yield Front(gate, wire, port)
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
        wire.shutdown()
        gate.upstream.shutdown()


def _call(front: Front, *headers: str, source: str | None = None) -> int:
    """One request through the front end, from `source` (a client address of its own by default)."""
    request = _request("POST", "/v1/chat/completions", *headers, body=b'{"model": "m"}')
    return _send(front.gate, request, port=front.port, source=source).status


@dataclasses.dataclass
class Configs:
    new: str
    """The gate's haproxy.cfg for a workload on a domain, as the program registers it."""
    old: str
    """The same workload's rendered as a directly exposed gate's: what every gate behind a
    Gateway ran before issue 43."""
    plan: str
    """The plan's line on what the gate limits."""


@pytest.fixture
def configs(run: Callable[..., Recording]) -> Configs:
    stack = domain_stack()
    recorded = run(stack).named("gate-llm-config").inputs["data"]["haproxy.cfg"]
    raw = {k.split(":", 1)[1]: v for k, v in stack.items() if k.startswith("gke-gpu:")}
    loaded = load(raw, project=stack["gcp:project"], region=stack["gcp:region"], stack="test")
    settings = gate_settings(loaded.workloads[0], loaded.namespace)
    assert settings.front_end_ranges == PROXY_RANGES and haproxy.render(settings) == recorded
    old = haproxy.render(dataclasses.replace(settings, front_end_ranges=()))
    lines = summary.exposure_lines(loaded, loaded.workloads[0])
    (plan,) = [line for line in lines if "gate limits:" in line]
    return Configs(recorded, old, plan)


def test_a_connection_the_front_end_reuses_after_a_quiet_period_is_still_open(
    configs: Configs, dev: Recording, tmp_path: Path
) -> None:
    """Issue 43's intermittent 502s: the old gate closes an idle connection the front end still
    counts on; the new one keeps it past the front end's reuse."""
    with (
        behind_front_end(configs.new, dev, tmp_path / "new") as kept,
        behind_front_end(configs.old, dev, tmp_path / "old") as cut,
    ):
        for front in (kept, cut):
            assert _call(front, RIGHT) == 200, "the first request opens the connection kept"
        time.sleep(QUIET_SECONDS)  # both gates quiet at once
        statuses = {"new": _call(kept, RIGHT), "old": _call(cut, RIGHT)}
    assert statuses["new"] == 200 and kept.wire.carried == 1, (
        f"after {QUIET_SECONDS} s without a request, the front end's next one goes over the "
        f"connection it kept, which the gate keeps {limits.FRONT_END_KEEPALIVE_SECONDS} s: got "
        f"{statuses['new']} over {kept.wire.carried} connection(s)"
    )
    assert statuses["old"] == 502, (
        f"the old gate closed the idle connection after {limits.CLIENT_SECONDS} s, and the front "
        f"end's request on it is lost: a 502 for the client (got {statuses['old']})"
    )


def _flood(front: Front, flooder: str, victim: str) -> None:
    """Keyless requests from one client, some claiming the victim's address as a client may
    write it (plainly, and behind a quote that would shift a reader honouring quoted strings)."""
    claims: list[tuple[str, ...]] = [(), (f"X-Forwarded-For: {victim}",)]
    claims.append((f'X-Forwarded-For: {victim},"',))
    for attempt in range(limits.FAILED_KEYS + 5):
        status = _call(front, *claims[attempt % len(claims)], source=flooder)
        assert status == (401 if attempt < limits.FAILED_KEYS else 429), (
            f"request {attempt + 1}: {status}; every failure counts against the client that sent "
            "it, whatever address it wrote"
        )


def test_a_keyless_flood_from_one_client_leaves_another_clients_keyed_requests_answered(
    configs: Configs, dev: Recording, tmp_path: Path
) -> None:
    """Issue 43's lockout: the old gate counts every client behind the front end as one."""
    statuses: dict[str, int] = {}
    seen: dict[str, list[list[str] | None]] = {}
    victims = {"new": client_address(), "old": client_address()}
    for name, config in (("new", configs.new), ("old", configs.old)):
        with behind_front_end(config, dev, tmp_path / name) as front:
            _flood(front, client_address(), victims[name])
            before = len(front.gate.upstream.headers)
            statuses[name] = _call(
                front, RIGHT, "X-Forwarded-For: 198.51.100.7", source=victims[name]
            )
            seen[name] = [
                h.get_all("X-Forwarded-For") for h in front.gate.upstream.headers[before:]
            ]
    assert statuses == {"new": 200, "old": 429}, (
        f"{limits.FAILED_KEYS} keyless requests from one client through the front end must cost "
        "that client alone; counted per front end address (the old gate), every client is 429: "
        f"{statuses}"
    )
    assert seen["new"] == [[victims["new"]]], (
        "the model sees the client the front end names, never one a client wrote nor the front "
        f"end's own address: {seen['new']}"
    )


def test_only_the_front_ends_connections_name_a_client(
    configs: Configs, dev: Recording, tmp_path: Path
) -> None:
    """A connection from outside the front end's ranges (the NetworkPolicy admits none, should one
    get through) is counted and named by its own address, whatever X-Forwarded-For it sends."""
    with behind_front_end(configs.new, dev, tmp_path) as front:
        direct, claimed = client_address(), f"203.0.113.9,{LOAD_BALANCER}"
        request = _request("POST", "/v1/chat/completions", RIGHT, f"X-Forwarded-For: {claimed}")
        before = len(front.gate.upstream.headers)
        answer = _send(front.gate, request, port=front.gate.api_port, source=direct)
        seen = front.gate.upstream.headers[before:]
        assert answer.status == 200 and [h.get_all("X-Forwarded-For") for h in seen] == [[direct]]
        refused = _request("POST", "/v1/chat/completions", WRONG, f"X-Forwarded-For: {claimed}")
        for _ in range(limits.FAILED_KEYS):
            _send(front.gate, refused, port=front.gate.api_port, source=direct)
        again = _send(front.gate, request, port=front.gate.api_port, source=direct)
        assert again.status == 429, "its wrong keys were counted against its own address"


def test_the_gateway_gate_keeps_idle_connections_past_the_front_ends_reuse_as_the_plan_says(
    configs: Configs,
) -> None:
    api = configs.new.split("frontend api\n", 1)[1].split("\n\n", 1)[0]
    for line in ("timeout client", "timeout http-keep-alive"):
        (value,) = [int(v.split()[-1][:-1]) for v in api.splitlines() if v.strip().startswith(line)]
        assert value > limits.FRONT_END_REUSE_SECONDS, (line, value)
        assert f"TLS handshake kept {value} s" in configs.plan, configs.plan
    assert "timeout http-keep-alive" not in configs.old and "timeout client 5s" in configs.old, (
        "a directly exposed gate keeps its 5 s against slow clients"
    )
    assert "the one Google's front end appends" in configs.plan, configs.plan


def test_every_answer_behind_the_gateway_tells_browsers_to_keep_to_https(
    configs: Configs, dev: Recording, tmp_path: Path
) -> None:
    """Issue 43's edge: HSTS on the domain's answers, the gate's own refusals included (a
    browser that saw one never sends the key over plain HTTP to the name again)."""
    with behind_front_end(configs.new, dev, tmp_path) as front:
        request = _request("POST", "/v1/chat/completions", RIGHT, body=b'{"model": "m"}')
        served = _send(front.gate, request, port=front.port)
        keyless = _request("POST", "/v1/chat/completions", body=b'{"model": "m"}')
        refused = _send(front.gate, keyless, port=front.port)
    want = f"max-age={limits.HSTS_SECONDS}"
    for answer in (served, refused):
        assert answer.headers.get("strict-transport-security") == want, (
            f"a {answer.status} through the front end must carry Strict-Transport-Security "
            f"{want}: {answer.headers}"
        )
    assert (served.status, refused.status) == (200, 401)
    assert "Strict-Transport-Security" not in configs.old, "a direct gate is not on a name"
