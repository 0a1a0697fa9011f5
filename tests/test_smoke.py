"""`python -m tools.smoke`, run against real local servers: a stub of the gate and vLLM (TLS with
a CA made here, as tests/test_gate.py makes the stack's), broken in each way a user could meet,
and the real HAProxy with the configuration the program renders for the dev stack."""

from __future__ import annotations

import datetime
import io
import ipaddress
import json
import os
import re
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests import test_gate
from tools import smoke
from tools.engine import ROOT, Recording

KEY = "s" * 24 + "0123456789abcdefghijklmn"  # 48 letters and digits, as the stack's
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
KUBECONFIG = "apiVersion: v1\nusers:\n- name: gke\n  user: {token: kubeconfig-secret-token}\n"
# Short waits keep the file fast; the cold-start test waits through its own ~2 s.
FAST = ["--wait", "3", "--timeout", "5"]


# --- certificates ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ca:
    name: x509.Name
    key: ec.EllipticCurvePrivateKey
    pem: str

    @staticmethod
    def make(common_name: str) -> Ca:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        cert = test_gate._self_signed_ca(name, key, hours=1)
        return Ca(name, key, cert.public_bytes(serialization.Encoding.PEM).decode())

    def server_pem(self, host: str = "127.0.0.1") -> bytes:
        """A server certificate for `host` signed by this CA, then its key (HAProxy's `crt`)."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gate")]))
            .issuer_name(self.name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]),
                critical=False,
            )
            .sign(self.key, hashes.SHA256())
        )
        pem = serialization.Encoding.PEM
        return cert.public_bytes(pem) + key.private_bytes(
            pem, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        )


@pytest.fixture(scope="module")
def ca() -> Ca:
    return Ca.make("gke-gpu dev CA")


@pytest.fixture(scope="module")
def other_ca() -> Ca:
    # The same name: only the key tells them apart, as with a re-created stack's CA.
    return Ca.make("gke-gpu dev CA")


# --- the stub: the gate and vLLM in one, each flaw a switch -------------------------------------


@dataclass
class Behaviour:
    key: str = KEY
    models: tuple[str, ...] = (MODEL,)
    open_paths: frozenset[str] = frozenset()
    """Answered 200 without a key (a path the gate forgot to close)."""
    any_key: bool = False
    """Any Authorization header passes (a key nobody compares)."""
    completion_status: int = 200
    echo_padding: int = 0
    """Characters of error text before the echoed header (the excerpt cuts long messages)."""
    asleep_for: float = 0.0
    """Seconds after start during which every request gets 503 (a model waking up)."""
    started: float = field(default_factory=time.monotonic)


class Stub(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, behaviour: Behaviour) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.behaviour = behaviour
        self.seen: list[tuple[str, str, str | None]] = []  # method, path, Authorization

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Stub

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        behaviour = self.server.behaviour
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization")
        self.server.seen.append((self.command, self.path, auth))
        if time.monotonic() - behaviour.started < behaviour.asleep_for:
            return self._json(503, {"error": {"message": "no replica yet"}})
        if self.path in behaviour.open_paths:
            return self._json(200, {"open": self.path})
        if auth != f"Bearer {behaviour.key}" and not (behaviour.any_key and auth):
            return self._json(401, {"error": {"message": "Missing or wrong API key."}})
        if self.command == "GET" and self.path == "/v1/models":
            return self._json(
                200, {"object": "list", "data": [{"id": m} for m in behaviour.models]}
            )
        if self.command == "POST" and self.path == "/v1/completions":
            if behaviour.completion_status != 200:
                # Some servers echo the request's headers into their errors.
                padding = "x" * behaviour.echo_padding
                message = f"CUDA out of memory {padding}(request had Authorization: {auth})"
                error = {"error": {"message": message, "code": 500}}
                return self._json(behaviour.completion_status, error)
            request = json.loads(body)
            assert request["stream"] is True and request["max_tokens"] == 8, request
            assert request["model"] in behaviour.models, request
            return self._stream(request["max_tokens"])
        return self._json(404, {"error": {"message": "This path is not served."}})

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, tokens: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for n in range(tokens):
            event = {"choices": [{"index": 0, "text": f" t{n}"}]}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., tuple[Stub, str]]]:
    """Starts a stub; with `pem`, it serves TLS with that certificate. Returns it and its URL."""
    started: list[Stub] = []

    def _serve(behaviour: Behaviour | None = None, pem: bytes | None = None) -> tuple[Stub, str]:
        stub = Stub(behaviour or Behaviour())
        url = stub.url
        if pem is not None:
            (tmp_path / "server.pem").write_bytes(pem)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tmp_path / "server.pem")
            stub.socket = context.wrap_socket(stub.socket, server_side=True)
            url = url.replace("http://", "https://")
        threading.Thread(target=stub.serve_forever, args=(0.05,), daemon=True).start()
        started.append(stub)
        return stub, url

    yield _serve
    for stub in started:
        stub.shutdown()
        stub.server_close()


def _outputs(url: str, ca: Ca | None, **extra: Any) -> dict[str, Any]:
    """What `pulumi stack output --json --show-secrets` prints for the dev stack."""
    outputs: dict[str, Any] = {
        "url": url,
        "externalIp": "127.0.0.1",
        "clusterName": "gpu-dev",
        "clusterMode": "autopilot",
        "kubeconfig": KUBECONFIG,
        "endpoints": {"llm": url},
        "apiKey": KEY,
        "apiKeys": {"llm": KEY},
        "models": {"llm": [MODEL]},
    }
    if ca is not None:
        outputs["caCertificate"] = ca.pem
    return {**outputs, **extra}


@dataclass
class Run:
    code: int
    out: str
    err: str

    def line(self, check: str) -> str:
        """The line of one check ("TLS", "key required", "models", "completion")."""
        found = [line for line in self.out.splitlines() if line[6:].startswith(check + ":")]
        assert len(found) == 1, f"expected one {check!r} line in:\n{self.out}"
        return found[0]


def _smoke(outputs: dict[str, Any], tmp_path: Path, *args: str) -> Run:
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(outputs))
    out, err = io.StringIO(), io.StringIO()
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = smoke.main(["--outputs", str(path), *FAST, *args])
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    return Run(code, out.getvalue(), err.getvalue())


def _no_secret(run: Run) -> None:
    for secret, name in ((KEY, "the API key"), ("kubeconfig-secret-token", "the kubeconfig")):
        assert secret not in run.out + run.err, f"the smoke test printed {name}"


# --- a healthy service -------------------------------------------------------------------------


def test_a_healthy_service_passes_every_check_and_prints_no_secret(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    stub, url = serve(pem=ca.server_pem())
    run = _smoke(_outputs(url, ca), tmp_path)
    assert run.code == 0, f"every check passes against a healthy service:\n{run.out}{run.err}"
    assert "FAIL" not in run.out
    assert run.line("TLS").startswith("ok") and "the stack's CA" in run.line("TLS")
    assert "401 on /v1/models" in run.line("key required") and "/metrics" in run.line(
        "key required"
    ), "the user sees which paths were tried without a key"
    assert MODEL in run.line("models")
    completion = run.line("completion")
    assert "8 tokens" in completion and "first token after" in completion, completion
    assert "cold start: none" in completion, "an awake model reports no cold start"
    _no_secret(run)
    keyed = [path for _, path, auth in stub.seen if auth == f"Bearer {KEY}"]
    assert keyed == ["/v1/models", "/v1/completions"], (
        f"the key goes only to the model API, after the checks without it: {stub.seen}"
    )


def test_the_command_reads_outputs_from_stdin_and_keeps_the_key_out_of_its_output(
    serve: Callable[..., tuple[Stub, str]], ca: Ca
) -> None:
    _, url = serve(pem=ca.server_pem())
    done = subprocess.run(
        [sys.executable, "-m", "tools.smoke", "--outputs", "-", *FAST],
        input=json.dumps(_outputs(url, ca)),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, f"`python -m tools.smoke --outputs -` passes: {done.stdout}"
    _no_secret(Run(done.returncode, done.stdout, done.stderr))


# --- TLS ---------------------------------------------------------------------------------------


def test_a_plain_http_url_is_no_tls_when_the_stack_has_a_ca(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    stub, url = serve()
    run = _smoke(_outputs(url, ca), tmp_path)
    assert run.code == 1 and run.line("TLS").startswith("FAIL  TLS: no TLS"), run.out
    assert stub.seen == [], "nothing, and above all not the key, is sent over plain HTTP"
    assert "models" not in run.out, "the checks stop: without TLS the key would travel in clear"


def test_an_https_url_answered_in_plain_http_is_no_tls(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    stub, url = serve()
    run = _smoke(_outputs(url.replace("http://", "https://"), ca), tmp_path)
    assert run.code == 1, run.out
    assert "no TLS" in run.line("TLS") and "did not complete a TLS handshake" in run.out, run.out
    assert not any(auth for _, _, auth in stub.seen), "the key is never sent"


def test_a_certificate_from_another_ca_is_the_wrong_ca(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, other_ca: Ca, tmp_path: Path
) -> None:
    stub, url = serve(pem=other_ca.server_pem())
    run = _smoke(_outputs(url, ca), tmp_path)
    assert run.code == 1 and "FAIL  TLS: wrong CA" in run.out, run.out
    assert "caCertificate" in run.line("TLS"), "the fix names the output to trust"
    assert stub.seen == [], "no request reaches a server the CA does not vouch for"


# --- the key -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "path"),
    [
        (Behaviour(open_paths=frozenset({"/v1/models"})), "/v1/models"),
        (Behaviour(open_paths=frozenset({"/metrics"})), "/metrics"),
        (Behaviour(open_paths=frozenset({"/invocations"})), "/invocations"),
    ],
    ids=["model path", "metrics", "invocations"],
)
def test_a_path_answered_without_the_key_fails_naming_the_path(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path, behaviour: Behaviour, path: str
) -> None:
    _, url = serve(behaviour, pem=ca.server_pem())
    run = _smoke(_outputs(url, ca), tmp_path)
    assert run.code == 1, run.out
    assert run.line("key required").startswith(f"FAIL  key required: key not enforced on {path}"), (
        f"a user must learn that {path} answers without the key:\n{run.out}"
    )


def test_a_wrong_key_accepted_fails(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    _, url = serve(Behaviour(any_key=True), pem=ca.server_pem())
    run = _smoke(_outputs(url, ca), tmp_path)
    assert run.code == 1 and "with a wrong key answered 200" in run.line("key required"), run.out


# --- the model and a completion ----------------------------------------------------------------


def test_a_model_missing_from_the_list_fails_naming_it(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    _, url = serve(Behaviour(models=("some/other-model",)), pem=ca.server_pem())
    run = _smoke(_outputs(url, ca), tmp_path)
    assert run.code == 1, run.out
    assert f"model missing from /v1/models: {MODEL}" in run.line("models"), run.out
    assert "some/other-model" in run.line("models"), "the user sees what it serves instead"


def test_adapters_are_expected_from_the_models_output_and_the_flags(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    _, url = serve(Behaviour(models=(MODEL, "sql")), pem=ca.server_pem())
    with_sql = _outputs(url, ca, models={"llm": [MODEL, "sql"]})
    assert _smoke(with_sql, tmp_path).code == 0, "the model and its adapter are both listed"
    run = _smoke(with_sql, tmp_path, "--adapter", "support")
    assert run.code == 1 and "model missing from /v1/models: support" in run.out, run.out


def test_a_failing_completion_fails_with_the_servers_message(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    _, url = serve(Behaviour(completion_status=500), pem=ca.server_pem())
    run = _smoke(_outputs(url, ca), tmp_path)
    assert run.code == 1, run.out
    line = run.line("completion")
    assert line.startswith("FAIL  completion: /v1/completions answered 500"), line
    assert "CUDA out of memory" in line, "the server's own message tells the user what broke"
    assert "Authorization: Bearer <apiKey>" in line, "a key the server echoes is masked"
    _no_secret(run)


def test_a_key_the_server_echoes_is_hidden_even_where_the_excerpt_cuts_it(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    # 150 characters of message first: the excerpt's cut falls inside the echoed key.
    _, url = serve(Behaviour(completion_status=500, echo_padding=150), pem=ca.server_pem())
    run = _smoke(_outputs(url, ca), tmp_path)
    assert run.code == 1, run.out
    printed = run.out + run.err
    leaked = [n for n in range(8, len(KEY) + 1) if KEY[:n] in printed]
    assert not leaked, (
        f"{max(leaked)} characters of the key reached the output (and a CI log): a cut-off "
        "echo must be hidden too"
    )


def test_a_plain_http_endpoint_is_refused_unless_asked_for(
    serve: Callable[..., tuple[Stub, str]], tmp_path: Path
) -> None:
    stub, url = serve()
    refused = _smoke(_outputs(url, None), tmp_path)
    assert refused.code == 1 and refused.line("TLS").startswith("FAIL  TLS: no TLS"), refused.out
    assert stub.seen == [], "without TLS the key is not sent unless the user says so"
    allowed = _smoke(_outputs(url, None), tmp_path, "--allow-plain-http")
    assert allowed.code == 0 and "key in clear" in allowed.line("TLS"), allowed.out


def test_a_malformed_ca_output_is_a_usage_error_without_a_traceback(tmp_path: Path) -> None:
    run = _smoke(_outputs("https://127.0.0.1:1", None, caCertificate="not a pem"), tmp_path)
    assert run.code == 2 and "caCertificate" in run.err, run.err
    assert "Traceback" not in run.err, run.err


def test_a_key_from_the_environment_checks_a_workload_that_sets_its_own(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path, monkeypatch: Any
) -> None:
    own = "own-key-" + "z" * 40
    _, url = serve(Behaviour(key=own), pem=ca.server_pem())
    outputs = {k: v for k, v in _outputs(url, ca).items() if k not in ("apiKey", "apiKeys")}
    monkeypatch.setenv("LLM_KEY", own)
    run = _smoke(outputs, tmp_path, "--key-env", "LLM_KEY")
    assert run.code == 0, run.out
    assert own not in run.out + run.err, "a key from the environment is hidden like the output's"


def test_a_workload_with_keys_per_consumer_is_checked_with_a_consumers_key(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    """expose.keys: the stack exports apiKeys.<workload>.<consumer> and no apiKey (the gate refuses
    the workload's own key), so the smoke test takes a consumer's key, the first by name or the
    one --consumer names."""
    _, url = serve(Behaviour(), pem=ca.server_pem())
    other = "other-key-" + "q" * 39
    consumers = {"web-app": other, "batch": KEY}
    outputs = {k: v for k, v in _outputs(url, ca).items() if k != "apiKey"}
    outputs["apiKeys"] = {"llm": consumers}
    run = _smoke(outputs, tmp_path)
    assert run.code == 0, (
        f"the first consumer by name (batch) holds the key the server takes:\n{run.out}"
    )
    _no_secret(run)
    refused = _smoke(outputs, tmp_path, "--consumer", "web-app")
    assert refused.code != 0, "web-app's key is not the one the stub accepts: the check must say so"
    assert other not in refused.out + refused.err, "a consumer's key is hidden like the output's"
    unknown = _smoke(outputs, tmp_path, "--consumer", "nobody")
    assert unknown.code == 2 and "batch, web-app" in unknown.err, unknown.err


# --- a sleeping model --------------------------------------------------------------------------


def test_a_cold_start_is_waited_through_and_reported(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    _, url = serve(Behaviour(asleep_for=2.0), pem=ca.server_pem())
    started = time.monotonic()
    run = _smoke(_outputs(url, ca), tmp_path, "--wait", "20")
    assert run.code == 0, f"503s while the model wakes are waited through:\n{run.out}{run.err}"
    assert time.monotonic() - started >= 2.0
    completion = run.line("completion")
    waited = float(completion.split("cold start: waited ")[1].split(" s")[0])
    assert waited >= 1.5 and "503" in completion, f"the wait is reported: {completion}"
    assert "waiting for the service" in run.err and "503" in run.err, "progress while waiting"


def test_a_model_that_does_not_wake_within_the_wait_fails(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    _, url = serve(Behaviour(asleep_for=60.0), pem=ca.server_pem())
    started = time.monotonic()
    run = _smoke(_outputs(url, ca), tmp_path, "--wait", "1")
    assert time.monotonic() - started < 10, "--wait bounds the whole run"
    assert run.code == 1 and "still answered 503 when --wait ran out" in run.out, run.out
    assert "/v1/models answered 503: no replica yet" in run.line("models"), run.out


# --- bad usage ---------------------------------------------------------------------------------


def test_outputs_without_a_url_or_with_an_unknown_workload_exit_2(tmp_path: Path) -> None:
    outputs = {"clusterName": "gpu-dev", "endpoints": {"llm": "https://10.0.0.1"}}
    run = _smoke(outputs, tmp_path)
    assert run.code == 2 and "--workload NAME" in run.err, "a stack without url says what to do"
    run = _smoke(_outputs("https://127.0.0.1", None), tmp_path, "--workload", "nope")
    assert run.code == 2 and "exposed workloads: llm" in run.err, run.err


def test_by_default_it_reads_the_stacks_outputs_with_the_pulumi_cli(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path
) -> None:
    _, url = serve(pem=ca.server_pem())
    (tmp_path / "outputs.json").write_text(json.dumps(_outputs(url, ca)))
    fake = tmp_path / "pulumi"
    # A stand-in for the CLI: records its arguments, prints the outputs.
    fake.write_text(
        f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {tmp_path}/argv\ncat {tmp_path}/outputs.json\n"
    )
    fake.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "tools.smoke", "dev", *FAST],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PATH": f"{tmp_path}:{os.environ.get('PATH', '')}"},
        timeout=60,
    )
    assert done.returncode == 0, f"the stack's own outputs drive the checks: {done.stdout}"
    argv = (tmp_path / "argv").read_text().split()
    assert argv == ["stack", "output", "--json", "--show-secrets", "--stack", "dev"], (
        f"the outputs of the named stack, secrets included (the key): {argv}"
    )


def test_without_the_pulumi_cli_it_says_how_to_pass_the_outputs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.smoke", "dev"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PATH": ""},
        timeout=60,
    )
    assert done.returncode == 2 and "--outputs FILE" in done.stderr, done.stderr


# --- the real gate -----------------------------------------------------------------------------


def test_the_real_gate_in_front_of_a_stub_model_passes(
    serve: Callable[..., tuple[Stub, str]], ca: Ca, tmp_path: Path, dev: Recording
) -> None:
    if test_gate.HAPROXY is None:
        pytest.skip("haproxy not installed (apt-get install haproxy)")
    config = dev.named("gate-llm-config").inputs["data"]["haproxy.cfg"]
    port = test_gate.free_port()
    (tmp_path / "haproxy.cfg").write_text(test_gate.on_ports(config, port, test_gate.free_port()))
    (tmp_path / "gate.pem").write_bytes(ca.server_pem())
    upstream, _ = serve(Behaviour(key=test_gate.KEY))
    process = test_gate._haproxy(tmp_path, upstream.server_address[1])
    try:
        test_gate._wait_for_port(port, process)
        url = f"https://127.0.0.1:{port}"
        outputs = _outputs(url, ca, apiKey=test_gate.KEY, models=dev.stack_outputs["models"])
        run = _smoke(outputs, tmp_path)
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert run.code == 0, f"the dev stack's gate passes the smoke test:\n{run.out}{run.err}"
    assert "401 on /v1/models, 401 on /metrics" in run.line("key required"), run.out
    page = (ROOT / "docs" / "usage.md").read_text()
    sample = re.search(r"## After `pulumi up`: the smoke test.*?```text\n(.*?)```", page, re.S)
    assert sample is not None, "docs/usage.md shows the smoke test's output"
    assert _shape(run.out) == _shape(sample.group(1)), (
        "docs/usage.md's sample output is what the tool prints against the dev stack's gate "
        "(ports and timings aside)"
    )
    assert test_gate.KEY not in run.out + run.err, "the smoke test printed the API key"


def _shape(output: str) -> str:
    """Output without what changes from run to run: the port and the timings."""
    return re.sub(r"\d+\.\d+ s", "N s", re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", output))
