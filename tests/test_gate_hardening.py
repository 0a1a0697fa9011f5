"""The gate under attack, run for real: connections that send nothing, TLS a client downgrades,
addresses a client claims, keys a client guesses, and the release of HAProxy it runs. Each test
starts Debian's HAProxy on the haproxy.cfg the program renders for the dev stack (ports of its own,
sometimes smaller limits), with tests/test_gate.py's certificate, stub model and client.
"""

from __future__ import annotations

import contextlib
import json
import re
import select
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from components.config import load
from components.service import gate_pod, haproxy
from components.service import haproxy_limits as limits
from tests.conftest import stack_config
from tests.test_gate import (
    HAPROXY,
    KEY,
    RIGHT,
    Gate,
    Upstream,
    _context,
    _haproxy,
    _issue,
    _named,
    _request,
    _send,
    _wait_for_port,
    client_address,
    free_port,
    on_ports,
    with_files,
)
from tools import summary
from tools.engine import STATIC_EXTERNAL_IP, Recording

if HAPROXY is None:
    pytestmark = pytest.mark.skip(reason="haproxy not installed (apt-get install haproxy)")

WRONG = "Authorization: Bearer " + "x" * 48


@dataclass
class Running(Gate):
    api_port: int = 0
    health_port: int = 0


def _start(config: str, dev: Recording, folder: Path) -> tuple[Running, subprocess.Popen[bytes]]:
    """The config on ports of its own, in front of a stub model that records what reaches it."""
    api_port, health_port = free_port(), free_port()
    config = on_ports(config, api_port, health_port)
    (folder / "haproxy.cfg").write_text(config)
    pki = _issue(dev)
    (folder / "gate.pem").write_bytes(pki.server_pem)
    upstream = Upstream()
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    process = _haproxy(folder, upstream.server_address[1])
    _wait_for_port(api_port, process)
    _wait_for_port(health_port, process)
    running = Running(upstream, pki, config, STATIC_EXTERNAL_IP)
    running.api_port, running.health_port = api_port, health_port
    return running, process


@pytest.fixture
def dev_gate(dev: Recording, tmp_path: Path) -> Iterator[Running]:
    running, process = _start(_named(dev, "gate-llm-config")["data"]["haproxy.cfg"], dev, tmp_path)
    try:
        yield running
    finally:
        process.terminate()
        process.wait(timeout=10)
        running.upstream.shutdown()


def _health(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=3) as raw:
        raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return raw.recv(65536).split(b"\r\n", 1)[0]


def _call(running: Running, *headers: str, source: str | None = None) -> int:
    request = _request("POST", "/v1/chat/completions", *headers, body=b'{"model": "m"}')
    return _send(running, request, port=running.api_port, source=source).status


# --- M1: connections that send nothing ----------------------------------------------------------


def _maxconn(config: str, section: str) -> int | None:
    """The `maxconn` of one section ("global", "frontend api", ...), None when it has none."""
    body = re.search(rf"^{section}\n((?:    .*\n?)*)", config, re.M)
    found = re.search(r"^    maxconn (\d+)$", body.group(1), re.M) if body else None
    return int(found.group(1)) if found else None


def _with_api_slots(config: str, api: int) -> str:
    """The config with the API's share cut to `api` connections and the process's limit cut by
    as much, so the room left for the health port is the one deployed."""
    total, own = _maxconn(config, "global"), _maxconn(config, "frontend api")
    assert total is not None and own is not None
    config = re.sub(
        rf"^    maxconn {total}$", f"    maxconn {api + total - own}", config, count=1, flags=re.M
    )
    return re.sub(rf"(frontend api\n.*\n)    maxconn {own}\n", rf"\g<1>    maxconn {api}\n", config)


def _closed_by_peer(sockets: list[socket.socket], deadline: float) -> set[int]:
    """Indexes of `sockets` the gate closed (end of stream or reset) before `deadline`."""
    closed: set[int] = set()
    while time.monotonic() < deadline and len(closed) < len(sockets):
        waiting = [s for i, s in enumerate(sockets) if i not in closed]
        readable, _, _ = select.select(waiting, [], [], 0.2)
        for s in readable:
            try:
                data = s.recv(65536)
            except (ConnectionResetError, ssl.SSLError, OSError):
                data = b""
            if not data or data.startswith(b"HTTP/1.1 408"):
                closed.add(sockets.index(s))
    return closed


def test_connections_that_send_nothing_take_only_the_apis_share_and_are_closed_within_seconds(
    dev: Recording, tmp_path: Path
) -> None:
    config = _named(dev, "gate-llm-config")["data"]["haproxy.cfg"]
    total, api = _maxconn(config, "global"), _maxconn(config, "frontend api")
    health = _maxconn(config, "frontend health")
    assert total and api and health and api + health <= total, (
        f"the API needs a connection limit of its own below the process's ({api} of {total}), "
        "or connections that send nothing take the slots kubelet's probes need and the pods "
        "restart"
    )
    small = 8  # the deployed margin for the health port, with a share an attack fills quickly
    running, process = _start(_with_api_slots(config, small), dev, tmp_path)
    opened: list[socket.socket] = []
    try:
        context = _context(running.pki.ca_pem)
        for _ in range(3):  # TLS done, then silence: no request ever comes
            raw = socket.create_connection(("127.0.0.1", running.api_port), timeout=3)
            opened.append(context.wrap_socket(raw, server_hostname=running.host))
        started = time.monotonic()
        for _ in range(small + total - api + 5):  # more than the whole process takes; no bytes
            # OSError: the kernel's queue is full too, and the attack gets nowhere either way.
            with contextlib.suppress(OSError):
                opened.append(socket.create_connection(("127.0.0.1", running.api_port), 0.5))
        assert b" 200 " in _health(running.health_port) + b" ", (
            "with the API's connections all taken, kubelet's probe must still get its 200"
        )
        limit = max(limits.CLIENT_SECONDS, limits.REQUEST_SECONDS) + 2.5
        closed = _closed_by_peer(opened, started + limit)
        assert {0, 1, 2} <= closed and len(closed) >= small, (
            f"connections that send no request must be closed within {limit} s, TLS or not: "
            f"{len(closed)} of {len(opened)} were, the 3 after TLS: {sorted(closed & {0, 1, 2})}"
        )
    finally:
        for s in opened:
            s.close()
    try:
        deadline = time.monotonic() + limits.CLIENT_SECONDS + 5
        while time.monotonic() < deadline and _call(running, RIGHT) != 200:
            time.sleep(0.5)
        assert _call(running, RIGHT) == 200, "once the idle connections are gone, the API serves"
    finally:
        process.terminate()
        process.wait(timeout=10)
        running.upstream.shutdown()


# --- L8: the client's address, never one it claims ---------------------------------------------


def test_the_model_sees_the_clients_own_address_never_one_the_client_wrote(
    dev_gate: Running,
) -> None:
    source = client_address()
    spoofed = (
        "X-Forwarded-For: 203.0.113.7",
        "Forwarded: for=203.0.113.7",
        "X-Real-IP: 203.0.113.7",
    )
    before = len(dev_gate.upstream.headers)
    assert _call(dev_gate, RIGHT, *spoofed, source=source) == 200
    (seen,) = dev_gate.upstream.headers[before:]
    assert seen.get_all("X-Forwarded-For") == [source], (
        "the model (and any per-client limit behind the gate) must see the address the "
        f"connection came from, {source}, and nothing a client wrote: got "
        f"{seen.get_all('X-Forwarded-For')}"
    )
    assert seen.get("Forwarded") is None and seen.get("X-Real-IP") is None, (
        "a claimed address in Forwarded or X-Real-IP must not reach the model either"
    )


# --- L9: TLS 1.2 with AEAD ciphers only, and TLS 1.3 -------------------------------------------


def _tls12(running: Running, cipher: str) -> ssl.SSLContext:
    context = _context(running.pki.ca_pem)
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    context.set_ciphers(cipher)
    return context


@pytest.mark.parametrize("cipher", ["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES128-SHA256"])
def test_a_client_offering_only_a_cbc_cipher_gets_no_connection(
    dev_gate: Running, cipher: str
) -> None:
    request = _request("GET", "/v1/models", RIGHT)
    with pytest.raises(ssl.SSLError):
        _send(dev_gate, request, port=dev_gate.api_port, context=_tls12(dev_gate, cipher))
    assert dev_gate.upstream.seen == [], f"{cipher} (CBC) must fail the handshake"


def test_modern_tls_is_served(dev_gate: Running) -> None:
    request = _request("GET", "/v1/models", RIGHT)
    for cipher in ("ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"):
        context = _tls12(dev_gate, cipher)
        assert _send(dev_gate, request, port=dev_gate.api_port, context=context).status == 200, (
            f"TLS 1.2 with {cipher} is what every client of the last ten years offers"
        )
    context = _context(dev_gate.pki.ca_pem)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    assert _send(dev_gate, request, port=dev_gate.api_port, context=context).status == 200


# --- L10: a source that keeps guessing the key ---------------------------------------------------


def test_a_source_that_keeps_sending_wrong_keys_is_refused_429_and_nobody_else_is(
    dev_gate: Running,
) -> None:
    guesser, other = client_address(), client_address()
    assert _call(dev_gate, RIGHT, source=guesser) == 200, "a right key is never counted"
    for attempt in range(limits.FAILED_KEYS):
        assert _call(dev_gate, WRONG, source=guesser) == 401, f"attempt {attempt + 1} is a 401"
    response = _send(
        dev_gate,
        _request("POST", "/v1/chat/completions", RIGHT, body=b"{}"),
        port=dev_gate.api_port,
        source=guesser,
    )
    assert response.status == 429, (
        f"after {limits.FAILED_KEYS} wrong keys in {limits.FAILED_KEY_SECONDS} s, even the right "
        f"key from that address is refused for the period: got {response.status}"
    )
    assert response.headers.get("retry-after") == str(limits.FAILED_KEY_SECONDS)
    assert "rate_limit_error" in json.loads(response.body)["error"]["type"]
    reached = len(dev_gate.upstream.seen)
    assert _call(dev_gate, WRONG, source=guesser) == 429 and len(dev_gate.upstream.seen) == reached
    for _ in range(limits.FAILED_KEYS - 1):  # a client that got its key wrong a few times
        assert _call(dev_gate, WRONG, source=other) == 401
    assert _call(dev_gate, RIGHT, source=other) == 200, (
        "another address, below the limit, is served: the limit is per source"
    )
    assert b" 200 " in _health(dev_gate.health_port) + b" ", "kubelet's probes are never limited"


def test_cors_preflights_do_not_lock_out_the_address_they_come_from(dev_gate: Running) -> None:
    """Browsers send a CORS preflight (OPTIONS) without credentials before a page's API call:
    each is refused like any keyless request, but none counts as a wrong key, so a web app's
    users behind one NAT address are not locked out by their own preflights."""
    office = client_address()
    for _ in range(limits.FAILED_KEYS + 5):
        response = _send(
            dev_gate,
            _request("OPTIONS", "/v1/chat/completions", "Origin: https://app.example"),
            port=dev_gate.api_port,
            source=office,
        )
        assert response.status == 401, (
            f"a preflight carries no key: refused with 401, never counted toward a 429 (got "
            f"{response.status})"
        )
    assert _call(dev_gate, RIGHT, source=office) == 200, (
        f"{limits.FAILED_KEYS + 5} preflights from one address must not make its next keyed "
        "request a 429"
    )


# --- L6: the release line deployed is the one tested ---------------------------------------------


def test_the_deployed_gate_image_is_the_haproxy_release_line_these_tests_run(
    dev: Recording,
) -> None:
    assert HAPROXY is not None
    image = _named(dev, "gate-llm-deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == gate_pod.IMAGE
    tag = re.fullmatch(
        r"docker\.io/library/haproxy:(\d+)\.(\d+)\.\d+-alpine@sha256:[0-9a-f]{64}", image
    )
    assert tag, f"{image}: an official haproxy image, its full version in the tag, by digest"
    version = subprocess.run([HAPROXY, "-v"], capture_output=True, text=True, check=True).stdout
    tested = re.search(r"HAProxy version (\d+)\.(\d+)\.", version)
    assert tested, version
    assert tag.groups() == tested.groups(), (
        f"the gate deploys HAProxy {'.'.join(tag.groups())} but the tests run "
        f"{'.'.join(tested.groups())}: directives and defaults differ between release lines, so "
        "what the tests prove would not hold for what runs"
    )


# --- L1: a value from config is inert in haproxy.cfg ---------------------------------------------


def test_a_health_path_is_written_as_a_quoted_string_that_expands_no_variable(
    tmp_path: Path,
) -> None:
    """The config layer refuses such a path (tests/test_config.py); the renderer quotes it too,
    so a path HAProxy would have read as `"${GATE_API_KEY}"` stays the literal characters."""
    hostile = '/health?x="${GATE_API_KEY}"#'
    settings = haproxy.GateSettings(
        paths=("/v1/models",), tls=False, replicas=1, health_path=hostile
    )
    config = with_files(haproxy.render(settings), haproxy.files(settings), tmp_path)
    upstream = Upstream()
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    api_port, health_port = free_port(), free_port()
    config = on_ports(config, api_port, health_port).replace(
        f"bind :{haproxy.PLAIN_PORT}\n", f"bind :{api_port}\n"
    )
    config = config.replace("check inter 5s", "check inter 200ms")
    (tmp_path / "haproxy.cfg").write_text(config)
    process = _haproxy(tmp_path, upstream.server_address[1])
    try:
        _wait_for_port(api_port, process)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not upstream.seen:
            time.sleep(0.1)
    finally:
        process.terminate()
        process.wait(timeout=10)
        upstream.shutdown()
    assert upstream.seen, "the replica's health check ran"
    paths = {path for _, path, _ in upstream.seen}
    assert paths == {hostile}, f"the check asks for the path as written, nothing expanded: {paths}"
    assert all(KEY not in path for path in paths)


# --- the plan's words ----------------------------------------------------------------------------


def test_the_plan_states_the_limits_the_rendered_gate_enforces(dev: Recording) -> None:
    config = _named(dev, "gate-llm-config")["data"]["haproxy.cfg"]
    file = stack_config("dev")
    raw = {k.split(":", 1)[1]: v for k, v in file.items() if k.startswith("gke-gpu:")}
    stack = load(raw, project=file["gcp:project"], region=file["gcp:region"], stack="dev")
    (line,) = [
        line for line in summary.exposure_lines(stack, stack.workloads[0]) if "gate limits:" in line
    ]
    request = re.search(r"timeout http-request (\d+)s", config)
    failures = re.search(r"gpc0_rate\((\d+)s\).*sc_gpc0_rate\(0\) ge (\d+)", config, re.S)
    assert request and failures, config
    stated = (
        f"{_maxconn(config, 'frontend api')} of {_maxconn(config, 'global')} connections",
        f"({_maxconn(config, 'frontend health')} kept for kubelet's probes)",
        f"closed after {request.group(1)} s",
        f"{failures.group(2)} wrong keys from one address in {failures.group(1)} s",
    )
    missing = [words for words in stated if words not in line]
    assert not missing, f"the plan must say what the gate's haproxy.cfg does: {missing} in {line}"
