"""The gate, run for real: Debian's HAProxy with the exact haproxy.cfg the program renders for the
dev stack, a certificate made as the program asks pulumi-tls to make it, a stub upstream that
records what reaches it, and a TLS client that trusts only the stack's CA.

Needs the `haproxy` binary (Debian package haproxy; `.ci/run` installs it and sets
GKE_GPU_REQUIRE_PROXY=1, so in CI a missing binary fails instead of skipping).
"""

from __future__ import annotations

import datetime
import ipaddress
import itertools
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from components.config.rules.exposure import VLLM_PATHS
from components.service import haproxy
from components.service import haproxy_limits as limits
from tests.conftest import SERVICE
from tools.engine import ROOT, STATIC_EXTERNAL_IP, Recording

HAPROXY = shutil.which("haproxy") or (
    "/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None
)
if HAPROXY is None:
    if os.environ.get("GKE_GPU_REQUIRE_PROXY") == "1":
        raise RuntimeError("haproxy is required here: apt-get install haproxy (.ci/run does)")
    pytestmark = pytest.mark.skip(reason="haproxy not installed (apt-get install haproxy)")

KEY = (
    "k" * 24 + "0123456789ABCDEFGHIJKLMN"
)  # 48 letters and digits, as components/service/apikey.py
MATRIX = ROOT / "build" / "gate" / "matrix.md"


# --- what the program asks for -----------------------------------------------------------------


def _named(recording: Recording, name: str) -> dict[str, Any]:
    return recording.named(name).inputs


@dataclass
class Pki:
    ca_pem: bytes
    server_pem: bytes  # certificate then key: what HAProxy's `crt` reads
    other_ca_pem: bytes


def _key(inputs: dict[str, Any]) -> ec.EllipticCurvePrivateKey:
    assert (inputs["algorithm"], inputs["ecdsaCurve"]) == ("ECDSA", "P256"), inputs
    return ec.generate_private_key(ec.SECP256R1())


def _name(subject: dict[str, Any]) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, subject["commonName"]),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, subject["organization"]),
        ]
    )


def _self_signed_ca(
    name: x509.Name, key: ec.EllipticCurvePrivateKey, hours: int
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=hours))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
        .sign(key, hashes.SHA256())
    )


def _issue(recording: Recording) -> Pki:
    """A CA and server certificate with the parameters the program gives pulumi-tls."""
    now = datetime.datetime.now(datetime.UTC)
    ca_args = _named(recording, "ca-cert")
    assert ca_args["isCaCertificate"] is True and "cert_signing" in ca_args["allowedUses"]
    ca_key = _key(_named(recording, "ca-key"))
    ca_name = _name(ca_args["subject"])
    ca = _self_signed_ca(ca_name, ca_key, ca_args["validityPeriodHours"])
    request = _named(recording, "cert-llm-request")
    signed = _named(recording, "cert-llm-cert")
    assert "server_auth" in signed["allowedUses"]
    server_key = _key(_named(recording, "cert-llm-key"))
    sans: list[x509.GeneralName] = [
        x509.IPAddress(ipaddress.ip_address(ip)) for ip in request.get("ipAddresses", [])
    ]
    sans += [x509.DNSName(name) for name in request.get("dnsNames", [])]
    server = (
        x509.CertificateBuilder()
        .subject_name(_name(request["subject"]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=signed["validityPeriodHours"]))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    # Another CA of the same name: a client trusting it must not accept the gate.
    other = _self_signed_ca(ca_name, ec.generate_private_key(ec.SECP256R1()), 24)
    pem = serialization.Encoding.PEM
    key_pem = server_key.private_bytes(
        pem, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    return Pki(ca.public_bytes(pem), server.public_bytes(pem) + key_pem, other.public_bytes(pem))


# --- the stub upstream and the real proxy ------------------------------------------------------


class Upstream(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[str, str, str | None]] = []  # method, raw path, Authorization
        self.headers: list[Message] = []  # every request's headers, in order


class _Handler(BaseHTTPRequestHandler):
    server: Upstream

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.server.seen.append((self.command, self.path, self.headers.get("Authorization")))
        self.server.headers.append(self.headers)
        body = json.dumps({"upstream": True, "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = do_PUT = _answer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


@dataclass
class Gate:
    upstream: Upstream
    pki: Pki
    config: str
    host: str
    """The name the client verifies: the reserved address the certificate was issued for."""


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"haproxy exited: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"haproxy did not listen on {port}")


def _haproxy(folder: Path, upstream_port: int, upstream: str = "") -> subprocess.Popen[bytes]:
    """The real HAProxy on folder/haproxy.cfg, checked first (`haproxy -c`), with the
    Deployment's environment: the cluster's values swapped for the test's (the upstream is
    127.0.0.1:<upstream_port> unless `upstream` names one)."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        haproxy.UPSTREAM_ENV: upstream or f"127.0.0.1:{upstream_port}",
        haproxy.CERT_ENV: str(folder / "gate.pem"),
        haproxy.KEY_ENV: KEY,
    }
    assert HAPROXY is not None
    check = subprocess.run(
        [HAPROXY, "-c", "-f", str(folder / "haproxy.cfg")], env=env, capture_output=True
    )
    assert check.returncode == 0, check.stderr.decode()
    return subprocess.Popen(
        # -dR: no SO_REUSEPORT, so a port another process holds fails the start loudly instead
        # of sharing the port and answering the test from the other process.
        [HAPROXY, "-db", "-dR", "-f", str(folder / "haproxy.cfg")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.fixture(scope="module")
def gate(dev: Recording, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gate]:
    folder = tmp_path_factory.mktemp("gate")
    config = _named(dev, "gate-llm-config")["data"]["haproxy.cfg"]
    (folder / "haproxy.cfg").write_text(config)
    pki = _issue(dev)
    (folder / "gate.pem").write_bytes(pki.server_pem)
    upstream = Upstream()
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    # The Deployment's environment, with the cluster's values swapped for the test's.
    container = _named(dev, "gate-llm-deployment")["spec"]["template"]["spec"]["containers"][0]
    names = {e["name"] for e in container["env"]}
    assert names == {haproxy.UPSTREAM_ENV, haproxy.CERT_ENV, haproxy.KEY_ENV}, names
    process = _haproxy(folder, upstream.server_address[1])
    try:
        _wait_for_port(haproxy.TLS_PORT, process)
        _wait_for_port(haproxy.HEALTH_PORT, process)
        yield Gate(upstream, pki, config, STATIC_EXTERNAL_IP)
    finally:
        process.terminate()
        process.wait(timeout=10)
        upstream.shutdown()


# --- a client that sends exactly the bytes it is given -----------------------------------------


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


def _context(ca_pem: bytes) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=ca_pem.decode())
    context.check_hostname = True
    return context


_CLIENTS = itertools.count()
# linux/in.h; the socket module exports it only from Python 3.12.
IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)


def client_address() -> str:
    """A loopback address no other request has come from (Linux routes all of 127.0.0.0/8 to
    the loopback interface), so each request counts as a client of its own for the gate's limit
    on wrong keys per address; tests of that limit pick one address and keep it."""
    n = next(_CLIENTS)
    return f"127.1.{n // 250 % 250}.{n % 250 + 1}"


def connect(port: int, source: str, timeout: float = 30) -> socket.socket:
    """A TCP connection to 127.0.0.1:`port` from the address `source`. Its port is chosen at
    connect time (IP_BIND_ADDRESS_NO_PORT), from the pool connections use, so a client never
    holds a port that free_port() handed to a gate about to bind it."""
    raw = socket.socket()
    try:
        raw.settimeout(timeout)
        raw.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
        raw.bind((source, 0))
        raw.connect(("127.0.0.1", port))
    except OSError:
        raw.close()
        raise
    return raw


def _send(
    gate: Gate,
    request: bytes,
    *,
    ca: bytes | None = None,
    host: str | None = None,
    port: int = haproxy.TLS_PORT,
    source: str | None = None,
    context: ssl.SSLContext | None = None,
) -> Response:
    """One HTTP/1.1 request over TLS to the gate from `source` (a fresh client address by
    default), verified against `ca` for `host` (the reserved address by default), read to the
    end. `context`: the client's own TLS settings instead."""
    context = context or _context(ca or gate.pki.ca_pem)
    with (
        connect(port, source or client_address()) as raw,
        context.wrap_socket(raw, server_hostname=host or gate.host) as tls,
    ):
        tls.sendall(request)
        data = b""
        while chunk := tls.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in header_lines)}
    return Response(int(status_line.split()[1]), headers, body)


def _request(method: str, target: str, *headers: str, body: bytes = b"") -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: gate.test", "Connection: close", *headers]
    if body or method == "POST":
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


BODY = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
RIGHT = f"Authorization: Bearer {KEY}"
KEYS: dict[str, tuple[str, ...]] = {
    "no key": (),
    "wrong key": ("Authorization: Bearer " + "x" * 48,),
    "key without Bearer": (f"Authorization: {KEY}",),
    "lowercase scheme": (f"Authorization: bearer {KEY}",),
    "key plus a character": (f"Authorization: Bearer {KEY}x",),
    "key cut short": (f"Authorization: Bearer {KEY[:-1]}",),
    "right key": (RIGHT,),
}
# Outside the allowlist: vLLM's routes that run or change things without its key, and spellings
# of allowed paths that a server might normalise into another route.
REFUSED = (
    "/invocations",
    "/tokenize",
    "/detokenize",
    "/metrics",
    "/load",
    "/version",
    "/health",
    "/ping",
    "/scale_elastic_ep",
    "/pooling",
    "/v1/load_lora_adapter",
    "/v1/chat/completions/render",
    "/v1/responses/resp_123",
    "/..%2finvocations",
    "/v1/..%2finvocations",
    "/v1/%2e%2e/invocations",
    "/v1/chat/completions/../../invocations",
    "/v1/models/..",
    "/V1/models",
    "/v1/Models",
    "/v1/models.",
    "/v1/models/",
    "/v1/models%2f",
    "/%76%31/models",
    "//v1/models",
    "/v1//models",
    "/",
    "*",
    "http://gate.test/invocations",
)


def _record(rows: list[str]) -> None:
    MATRIX.parent.mkdir(parents=True, exist_ok=True)
    with MATRIX.open("a") as out:
        out.write("\n".join(rows) + "\n")


def test_every_allowed_path_reaches_the_model_only_with_the_right_key(gate: Gate) -> None:
    rows = []
    for path in VLLM_PATHS:
        method = "GET" if path == "/v1/models" else "POST"
        for label, headers in KEYS.items():
            before = len(gate.upstream.seen)
            response = _send(gate, _request(method, path, *headers, body=BODY))
            reached = gate.upstream.seen[before:]
            rows.append(f"| {method} {path} | {label} | {response.status} | {bool(reached)} |")
            if label == "right key":
                assert response.status == 200 and reached == [(method, path, f"Bearer {KEY}")], (
                    f"{method} {path} with the key must reach the model unchanged, key included "
                    f"(vLLM checks it too): got {response.status}, upstream saw {reached}"
                )
            else:
                assert response.status == 401 and not reached, (
                    f"{method} {path} with {label} must be refused by the gate and never reach "
                    f"the model: got {response.status}, upstream saw {reached}"
                )
                message = json.loads(response.body)["error"]["message"]
                assert "Authorization: Bearer <key>" in message and "apiKey" in message, (
                    "the 401 says how to send the key and where to find it"
                )
                assert response.headers.get("www-authenticate") == "Bearer"
    _record(rows)


def test_no_path_outside_the_allowlist_reaches_the_model_with_or_without_the_key(
    gate: Gate,
) -> None:
    rows = []
    for path in REFUSED:
        for label, headers in (("no key", ()), ("right key", (RIGHT,))):
            before = len(gate.upstream.seen)
            response = _send(gate, _request("POST", path, *headers, body=BODY))
            reached = gate.upstream.seen[before:]
            rows.append(f"| POST {path} | {label} | {response.status} | {bool(reached)} |")
            assert not reached, f"POST {path} ({label}) reached the model: {reached}"
            assert response.status == (401 if label == "no key" else 404), (
                f"POST {path} ({label}): a missing key is 401, a path outside the allowlist "
                f"404; got {response.status}"
            )
    _record(rows)


def test_a_protocol_upgrade_is_refused_even_with_the_key(gate: Gate) -> None:
    before = len(gate.upstream.seen)
    for upgrade in ("websocket", "h2c"):
        headers = (RIGHT, f"Upgrade: {upgrade}", "Connection: Upgrade")
        response = _send(gate, _request("GET", "/v1/models", *headers))
        assert response.status == 400, (
            f"Upgrade: {upgrade} would turn the connection into a tunnel the allowlist cannot see"
        )
    assert gate.upstream.seen[before:] == []


def test_two_authorization_headers_are_refused(gate: Gate) -> None:
    before = len(gate.upstream.seen)
    wrong = "Authorization: Bearer " + "x" * 48
    for headers in ((RIGHT, wrong), (wrong, RIGHT)):
        response = _send(gate, _request("POST", "/v1/chat/completions", *headers, body=BODY))
        assert response.status == 400, "which of two keys a server reads is its own choice"
    assert gate.upstream.seen[before:] == []


def test_the_certificate_verifies_only_against_the_stack_ca_for_the_reserved_address(
    gate: Gate, dev: Recording
) -> None:
    assert dev.stack_outputs["externalIp"] == gate.host, "the URL's address is the certificate's"
    assert _send(gate, _request("GET", "/v1/models", RIGHT)).status == 200
    with pytest.raises(ssl.SSLCertVerificationError):
        _send(gate, _request("GET", "/v1/models", RIGHT), ca=gate.pki.other_ca_pem)
    with pytest.raises(ssl.SSLCertVerificationError):
        _send(gate, _request("GET", "/v1/models", RIGHT), host="203.0.113.99")


def test_plain_http_on_the_tls_port_gets_no_answer(gate: Gate) -> None:
    before = len(gate.upstream.seen)
    with socket.create_connection(("127.0.0.1", haproxy.TLS_PORT), timeout=10) as raw:
        raw.sendall(_request("GET", "/v1/models", RIGHT))
        try:
            data = raw.recv(65536)
        except ConnectionResetError:
            data = b""
    assert not data.startswith(b"HTTP/"), "a plain HTTP request must get no HTTP answer"
    assert gate.upstream.seen[before:] == [], "and must never reach the model"


def test_kubelet_probes_a_health_port_the_load_balancer_does_not_expose(
    gate: Gate, dev: Recording
) -> None:
    with socket.create_connection(("127.0.0.1", haproxy.HEALTH_PORT), timeout=10) as raw:
        raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        status = raw.recv(65536).split(b"\r\n", 1)[0]
    assert b" 200 " in status + b" ", f"the gate's probe path answers without a key: {status!r}"
    probe = _named(dev, "gate-llm-deployment")["spec"]["template"]["spec"]["containers"][0]
    assert probe["readinessProbe"]["httpGet"] == {
        "path": haproxy.HEALTH_PATH,
        "port": haproxy.HEALTH_PORT,
    }
    ports = dev.served(SERVICE).inputs["spec"]["ports"]
    assert [p["targetPort"] for p in ports] == [haproxy.TLS_PORT], (
        "the load balancer forwards only the TLS port, never the health port"
    )


def test_the_key_never_appears_in_the_rendered_config(gate: Gate, dev: Recording) -> None:
    assert "secure_memcmp" in gate.config, "the key is compared in constant time"
    env = _named(dev, "gate-llm-deployment")["spec"]["template"]["spec"]["containers"][0]["env"]
    key_ref = next(e for e in env if e["name"] == haproxy.KEY_ENV)["valueFrom"]["secretKeyRef"]
    assert key_ref["key"] == "VLLM_API_KEY", "the gate reads the same key vLLM does, from a Secret"
    assert KEY not in gate.config


# --- a sleeping model: the request is held, not refused -----------------------------------------


class HoldingUpstream(ThreadingHTTPServer):
    """Stands where KEDA's interceptor stands: it takes the connection at once, then answers only
    after `hold` seconds, as the interceptor does while the model's first replica starts
    (components/platform/keda.py cites its source). Records the Host each request carried."""

    daemon_threads = True

    def __init__(self, hold: float) -> None:
        super().__init__(("127.0.0.1", 0), _HoldingHandler)
        self.hold = hold
        self.hosts: list[str | None] = []


class _HoldingHandler(BaseHTTPRequestHandler):
    server: HoldingUpstream

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.hosts.append(self.headers.get("Host"))
        time.sleep(self.server.hold)
        body = b'{"choices": [{"message": {"content": "awake"}}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


def test_a_request_to_a_sleeping_model_is_held_and_answered_not_refused(
    dev: Recording, tmp_path: Path
) -> None:
    cfg = _named(dev, "gate-llm-config")["data"]["haproxy.cfg"]
    (host,) = re.findall(r'http-request set-header Host "([^"]+)"', cfg)
    scaled = next(
        r.inputs["spec"] for r in dev.of_type("kubernetes:http.keda.sh/v1alpha1:HTTPScaledObject")
    )
    # Longer than the gate's client timeout: a held client sends nothing while it waits, and
    # must still get its answer (the wait is bounded by `timeout server` alone).
    hold = limits.CLIENT_SECONDS + 1.0
    upstream = HoldingUpstream(hold=hold)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    pki = _issue(dev)
    # A port of its own: the module's gate fixture may hold the TLS port.
    cfg_here = _held_ports(cfg)
    held_gate, process = _start(cfg_here, upstream, pki, tmp_path)
    try:
        started = time.monotonic()
        response = _send_to(held_gate, HELD_PORT, RIGHT)
        waited = time.monotonic() - started
        assert response.status == 200 and b"awake" in response.body, (
            "the first request after sleeping is answered once the model is up, not refused: "
            f"{response.status} {response.body[:200]!r}"
        )
        assert waited >= hold, "the gate waited for the held answer, past its client timeout"
        assert upstream.hosts == [host] and scaled["hosts"] == [host], (
            "the held request reached the interceptor with the Host its HTTPScaledObject routes"
        )
        started = time.monotonic()
        refused = _send_to(held_gate, HELD_PORT)
        assert refused.status == 401 and time.monotonic() - started < 2, (
            "a request without the key is refused at once by the gate, never held or counted "
            "by the interceptor (which would wake the GPU for it)"
        )
        assert len(upstream.hosts) == 1
    finally:
        process.terminate()
        process.wait(timeout=10)
        upstream.shutdown()


def test_the_gate_cuts_a_hold_exactly_at_its_server_timeout(dev: Recording, tmp_path: Path) -> None:
    """Why the recorded `timeout server` must exceed the interceptor's wake timeout
    (tests/test_scale_to_zero.py checks that it does): the same config with a 2 s server timeout
    answers 504 after 2 s to a request held 6 s."""
    cfg = _named(dev, "gate-llm-config")["data"]["haproxy.cfg"]
    short = re.sub(r"timeout server \d+s", "timeout server 2s", cfg)
    short = _held_ports(short)
    upstream = HoldingUpstream(hold=6.0)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    held_gate, process = _start(short, upstream, _issue(dev), tmp_path)
    try:
        started = time.monotonic()
        response = _send_to(held_gate, HELD_PORT, RIGHT)
        waited = time.monotonic() - started
        assert response.status == 504 and 1.5 < waited < 5, (response.status, waited)
    finally:
        process.terminate()
        process.wait(timeout=10)
        upstream.shutdown()


def _ephemeral_floor() -> int:
    """The first port the kernel hands out for `bind(..., 0)` and outgoing connections."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default range starts here


_PORTS_PER_PROCESS = 1000
_PORT_BLOCKS = 12  # worker gw<N> takes block N mod 12
_PORT_FLOOR = max(_ephemeral_floor() - _PORT_BLOCKS * _PORTS_PER_PROCESS, 1024)
_NEXT_PORT = itertools.count()


def free_port(address: str = "0.0.0.0") -> int:
    """A port no socket holds now on any address (HAProxy binds every address), taken below the
    kernel's ephemeral range from a block of this test process's own (by its pytest-xdist worker
    number). A port the kernel handed out for `bind(0)` could be handed again, to another
    process's listener or outgoing connection, before HAProxy binds it: the CI run of session 9
    failed that way ("cannot bind socket (Address already in use)"). Below the range the kernel
    never hands one out, and the blocks keep workers apart."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    first = _PORT_FLOOR + int(worker or 0) % _PORT_BLOCKS * _PORTS_PER_PROCESS
    for _ in range(_PORTS_PER_PROCESS):
        port = first + next(_NEXT_PORT) % _PORTS_PER_PROCESS
        with socket.socket() as probe:
            try:
                probe.bind((address, port))  # no SO_REUSEADDR: a port in TIME_WAIT is skipped
            except OSError:
                continue
            return port
    raise AssertionError(f"no free port in {first}..{first + _PORTS_PER_PROCESS - 1}")


HELD_PORT = free_port()


def with_files(config: str, files: dict[str, str], folder: Path) -> str:
    """The config reading the files beside it (the ConfigMap's other keys: the routing script)
    from `folder`, where they are written, instead of the image's config directory."""
    for name, text in files.items():
        if name != haproxy.CONFIG_FILE:
            (folder / name).write_text(text)
    return config.replace(f'"{haproxy.CONFIG_DIR}/', f'"{folder}/')


def on_ports(config: str, api_port: int, health_port: int, metrics_port: int = 0) -> str:
    """The rendered config with its API, health and metrics ports moved (metrics to a free port
    unless given), so gates run side by side."""
    return (
        config.replace(f"bind :{haproxy.TLS_PORT} ", f"bind :{api_port} ")
        .replace(f"bind :{haproxy.HEALTH_PORT}\n", f"bind :{health_port}\n")
        .replace(f"bind :{haproxy.METRICS_PORT}\n", f"bind :{metrics_port or free_port()}\n")
    )


def _held_ports(config: str) -> str:
    """The config on ports of its own, beside the module's gate (8443 and 8081)."""
    return on_ports(config, HELD_PORT, free_port())


def _start(
    config: str, upstream: HoldingUpstream, pki: Pki, folder: Path
) -> tuple[Gate, subprocess.Popen[bytes]]:
    (folder / "haproxy.cfg").write_text(config)
    (folder / "gate.pem").write_bytes(pki.server_pem)
    process = _haproxy(folder, upstream.server_address[1])
    _wait_for_port(HELD_PORT, process)
    return Gate(Upstream(), pki, config, STATIC_EXTERNAL_IP), process


def _send_to(gate: Gate, port: int, *headers: str) -> Response:
    return _send(gate, _request("POST", "/v1/chat/completions", *headers, body=BODY), port=port)
