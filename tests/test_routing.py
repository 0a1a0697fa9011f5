"""Cache-aware routing, run for real: Debian's HAProxy with the exact haproxy.cfg the program
renders for the prod stack (two replicas), two stub replicas on their own addresses, and a DNS
server standing in for the headless Service's records (the one line that names the cluster's DNS
is pointed at it). Also what the engine receives: the headless Service, the gate's upstream and
the config rules.

Needs the `haproxy` binary (`.ci/run` installs it; GKE_GPU_REQUIRE_PROXY=1 fails without it).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from dnslib import QTYPE, RR, A, DNSRecord
from dnslib.server import BaseResolver, DNSServer

from components.config.rules import names, routing
from components.config.schema import WorkloadSpec
from components.kinds.deployment_spec import DEPLOYMENT
from components.service import haproxy, haproxy_limits, haproxy_routing
from tests import shared
from tests.conftest import vllm_workload_problems
from tests.test_gate import (
    HAPROXY,
    KEY,
    RIGHT,
    Gate,
    _context,
    _haproxy,
    _issue,
    _request,
    _send,
    _wait_for_port,
    client_address,
    connect,
    free_port,
    with_files,
)
from tools.engine import STATIC_EXTERNAL_IP, Recording

if HAPROXY is None:
    if os.environ.get("GKE_GPU_REQUIRE_PROXY") == "1":
        raise RuntimeError("haproxy is required here: apt-get install haproxy (.ci/run does)")
    pytestmark = pytest.mark.skip(reason="haproxy not installed (apt-get install haproxy)")

NAME = "llm-replicas.test"
ADDRESSES = ("127.0.0.2", "127.0.0.3")
# A system prompt longer than the route key's window: what follows it does not move the request.
SYSTEM = "You are a support agent for Acme. " * 20


def _inputs(recording: Recording, name: str) -> dict[str, Any]:
    return recording.named(name).inputs


# --- the replicas and their DNS records ---------------------------------------------------------


class Replica(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: str, port: int) -> None:
        super().__init__((address, port), _ReplicaHandler)
        self.address = address
        self.delay = 0.0
        self.healthy = True
        self.in_flight = 0
        self.lock = threading.Lock()


class _ReplicaHandler(BaseHTTPRequestHandler):
    server: Replica

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.path != "/health":
            with self.server.lock:
                self.server.in_flight += 1
            time.sleep(self.server.delay)
            with self.server.lock:
                self.server.in_flight -= 1
        body = json.dumps({"replica": self.server.address}).encode()
        self.send_response(200 if self.server.healthy or self.path != "/health" else 503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


class Records(BaseResolver):
    """The headless Service's A records: one per ready replica, changed by the test."""

    def __init__(self) -> None:
        self.addresses: list[str] = list(ADDRESSES)

    def resolve(self, request: DNSRecord, handler: Any) -> DNSRecord:
        reply = request.reply()
        if str(request.q.qname).rstrip(".") == NAME and request.q.qtype == QTYPE.A:
            for address in self.addresses:
                reply.add_answer(RR(request.q.qname, QTYPE.A, rdata=A(address), ttl=1))
        return reply


@dataclass
class RoutedGate:
    gate: Gate
    replicas: dict[str, Replica]
    records: Records


@pytest.fixture(scope="module")
def routed(prod: Recording, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RoutedGate]:
    config = _inputs(prod, "gate-llm-config")["data"]["haproxy.cfg"]
    assert config.count("    parse-resolv-conf\n") == 1, "the gate reads the pod's resolv.conf"
    records = Records()
    dns = DNSServer(records, address="127.0.0.1", port=free_port("127.0.0.1"))
    dns.start_thread()
    dns_port = dns.server.server_address[1]
    folder = tmp_path_factory.mktemp("routed")
    files = _inputs(prod, "gate-llm-config")["data"]
    (folder / "haproxy.cfg").write_text(
        with_files(config, files, folder).replace(
            "    parse-resolv-conf\n", f"    nameserver test 127.0.0.1:{dns_port}\n"
        )
    )
    pki = _issue(prod)
    (folder / "gate.pem").write_bytes(pki.server_pem)
    port = free_port(ADDRESSES[0])
    replicas = {address: Replica(address, port) for address in ADDRESSES}
    for replica in replicas.values():
        threading.Thread(target=replica.serve_forever, daemon=True).start()
    process = _haproxy(folder, port, upstream=f"{NAME}:{port}")
    try:
        _wait_for_port(haproxy.TLS_PORT, process)
        gate = Gate(next(iter(replicas.values())), pki, config, STATIC_EXTERNAL_IP)  # type: ignore[arg-type]
        routed = RoutedGate(gate, replicas, records)
        _wait_until_both_serve(routed)
        yield routed
    finally:
        process.terminate()
        process.wait(timeout=10)
        dns.stop()
        for replica in replicas.values():
            replica.shutdown()


def _chat(model: str, system: str, user: str) -> bytes:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return json.dumps({"model": model, "messages": messages, "max_tokens": 8}).encode()


def _post(routed: RoutedGate, body: bytes, *headers: str) -> tuple[int, str | None]:
    response = _send(
        routed.gate, _request("POST", "/v1/chat/completions", *(headers or (RIGHT,)), body=body)
    )
    served = json.loads(response.body).get("replica") if response.status == 200 else None
    return response.status, served


def _wait_until_both_serve(routed: RoutedGate) -> None:
    """Until DNS filled both slots and the health checks passed: distinct prompts reach both."""
    deadline = time.monotonic() + 20
    seen: set[str] = set()
    n = 0
    while time.monotonic() < deadline and seen != set(ADDRESSES):
        served = _post(routed, _chat("m", f"prompt {n}", "hi"))[1]
        seen |= {served} if served else set()
        n += 1
    assert seen == set(ADDRESSES), f"only {seen} served after 20 s: DNS discovery failed"


# --- the real proxy ----------------------------------------------------------------------------


def test_requests_that_share_a_system_prompt_meet_the_replica_that_cached_it(
    routed: RoutedGate,
) -> None:
    served = Counter(_post(routed, _chat("m", SYSTEM, f"question {n}"))[1] for n in range(12))
    assert len(served) == 1 and None not in served, (
        "requests sharing a system prompt must reach one replica, whose prefix cache holds it; "
        f"they were spread: {served}"
    )


def test_a_body_that_pauses_after_its_headers_is_routed_not_cut(routed: RoutedGate) -> None:
    """A client that sends the headers, then the body a few seconds later (an upload starting, a
    slow link), is routed once the body's first bytes arrive: the defaults' 5 s `timeout client`
    must not cut it while the routing gate waits up to BODY_WAIT_SECONDS for them."""
    pause = 6.0
    assert haproxy_limits.CLIENT_SECONDS < pause < haproxy_routing.BODY_WAIT_SECONDS, (
        "the pause must outlast the defaults' client timeout and stay within the body wait"
    )
    body = _chat("m", "a system prompt that pauses", "hi")
    request = _request("POST", "/v1/chat/completions", RIGHT, body=body)
    head, body_part = request[: -len(body)], request[-len(body) :]
    context = _context(routed.gate.pki.ca_pem)
    with (
        connect(haproxy.TLS_PORT, client_address()) as raw,
        context.wrap_socket(raw, server_hostname=routed.gate.host) as tls,
    ):
        tls.sendall(head)
        time.sleep(pause)
        tls.sendall(body_part)
        data = b""
        while chunk := tls.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    assert status == 200, (
        f"a chat request whose body came {pause} s after its headers got {status}: a routing "
        "gate must wait for the body as long as it says it does (408 is the client timeout)"
    )


def test_a_conversation_stays_on_its_replica_as_it_grows(routed: RoutedGate) -> None:
    history = [{"role": "user", "content": "Plan a trip to Lisbon " * 30}]
    served = set()
    for turn in range(5):
        body = json.dumps({"model": "m", "messages": history, "max_tokens": 8}).encode()
        served.add(_post(routed, body)[1])
        history += [
            {"role": "assistant", "content": f"answer {turn}"},
            {"role": "user", "content": f"follow-up {turn}"},
        ]
    assert len(served) == 1, f"a growing conversation moved between replicas: {served}"


def test_different_prompts_use_every_replica(routed: RoutedGate) -> None:
    served = Counter(_post(routed, _chat("m", f"system prompt {n}", "hi"))[1] for n in range(40))
    assert set(served) == set(ADDRESSES) and min(served.values()) >= 8, (
        f"40 distinct prompts must be spread over both replicas, not piled on one: {served}"
    )


def test_each_adapter_is_a_route_of_its_own(routed: RoutedGate) -> None:
    # The OpenAI Python client sends "messages" before "model": the name is past the window.
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hi"}]
    served = {
        model: _post(routed, json.dumps({"messages": messages, "model": model}).encode())[1]
        for model in ("sql", "support", "billing", "legal", "search", "code", "base", "triage")
    }
    assert set(served.values()) == set(ADDRESSES), (
        "the model name (an adapter's name) is part of the route key, so adapters sharing a "
        f"system prompt spread over the replicas: {served}"
    )


def test_a_busy_replica_passes_requests_on_instead_of_queueing_them(routed: RoutedGate) -> None:
    for replica in routed.replicas.values():
        replica.delay = 1.0
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(lambda n: _post(routed, _chat("m", SYSTEM, f"q{n}")), range(8)))
    finally:
        for replica in routed.replicas.values():
            replica.delay = 0.0
    statuses = {status for status, _ in results}
    served = Counter(address for _, address in results)
    assert statuses == {200}, f"every request is answered: {statuses}"
    assert set(served) == set(ADDRESSES), (
        "eight slow requests with one prefix must not all wait on one replica: past "
        f"{haproxy_routing.BALANCE_FACTOR_PERCENT}% of the average load the next replica takes "
        "them; "
        f"served {served}"
    )


def test_requests_without_a_body_and_without_a_key_behave_as_before(routed: RoutedGate) -> None:
    models = _send(routed.gate, _request("GET", "/v1/models", RIGHT))
    refused = _post(routed, _chat("m", SYSTEM, "hi"), "Authorization: Bearer " + "x" * 48)
    assert models.status == 200, f"GET /v1/models (no body) must be served: {models.status}"
    assert refused == (401, None), f"routing must not weaken the key check: {refused}"
    assert KEY not in routed.gate.config, "the key is read from the environment, never the config"


def test_a_replica_that_leaves_dns_stops_receiving_and_its_prompts_move(
    routed: RoutedGate,
) -> None:
    home = _post(routed, _chat("m", SYSTEM, "hi"))[1]
    assert home is not None
    other = next(a for a in ADDRESSES if a != home)
    routed.records.addresses = [other]
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _post(routed, _chat("m", SYSTEM, "hi"))[1] != other:
            time.sleep(0.2)
        served = Counter(_post(routed, _chat("m", f"p{n}", "hi"))[1] for n in range(10))
        assert served == Counter({other: 10}), (
            f"a replica gone from the headless Service's records (scaled in, not ready) must get "
            f"no request once DNS says so: {served}"
        )
    finally:
        routed.records.addresses = list(ADDRESSES)
        _wait_until_both_serve(routed)


def test_a_replica_still_in_dns_that_refuses_connections_costs_no_request(
    routed: RoutedGate,
) -> None:
    # A pod shutting down in a rollout: it served, stops accepting, its record lingers.
    port = next(iter(routed.replicas.values())).server_address[1]
    leaving = Replica("127.0.0.4", port)
    threading.Thread(target=leaving.serve_forever, daemon=True).start()
    routed.records.addresses = [*ADDRESSES, "127.0.0.4"]
    try:
        deadline = time.monotonic() + 20
        served: set[str | None] = set()
        while time.monotonic() < deadline and "127.0.0.4" not in served:
            served.add(_post(routed, _chat("m", f"before {len(served)} {time.time()}", "hi"))[1])
        assert "127.0.0.4" in served, "the third replica never received a request"
        leaving.shutdown()
        leaving.server_close()
        statuses = Counter(_post(routed, _chat("m", f"rolling {n}", "hi"))[0] for n in range(24))
    finally:
        routed.records.addresses = list(ADDRESSES)
        _wait_until_both_serve(routed)
    assert statuses == Counter({200: 24}), (
        "a request hashed to a replica that refuses the connection must be sent to another one "
        f"(option redispatch), not answered 503 after three retries: {statuses}"
    )


def test_with_no_replica_ready_the_client_gets_an_openai_style_503(routed: RoutedGate) -> None:
    for replica in routed.replicas.values():
        replica.healthy = False  # /health fails: vLLM's engine is gone
    try:
        deadline = time.monotonic() + 20
        response = None
        while time.monotonic() < deadline:
            request = _request("POST", "/v1/chat/completions", RIGHT, body=b"{}")
            response = _send(routed.gate, request)
            if response.status == 503:
                break
            time.sleep(0.5)
    finally:
        for replica in routed.replicas.values():
            replica.healthy = True
        _wait_until_both_serve(routed)
    assert response is not None and response.status == 503, response
    error = json.loads(response.body)["error"]
    assert error["code"] == 503 and "replica" in error["message"], (
        f"an OpenAI client shows the error's message, not HAProxy's HTML page: {response.body!r}"
    )


# --- what the engine receives ------------------------------------------------------------------


def test_prod_gate_finds_every_replica_through_a_headless_service_of_the_model_pods(
    prod: Recording,
) -> None:
    replicas = _inputs(prod, "gate-llm-replicas")
    model = _inputs(prod, "gate-llm-model")
    container = _inputs(prod, "gate-llm-deployment")["spec"]["template"]["spec"]["containers"][0]
    upstream = {e["name"]: e.get("value") for e in container["env"]}[haproxy.UPSTREAM_ENV]
    config = _inputs(prod, "gate-llm-config")["data"]["haproxy.cfg"]
    assert replicas["spec"]["clusterIP"] == "None", "only a headless Service lists each pod in DNS"
    assert replicas["spec"]["selector"] == model["spec"]["selector"], (
        "the router must see exactly the model's pods, the ones its ClusterIP Service selects"
    )
    assert upstream == "llm-replicas.gke-gpu.svc.cluster.local:8000", upstream
    assert 'server-template replica 1-3 "${GATE_UPSTREAM}"' in config, (
        "prod runs 2 replicas and a rollout surges a third: the gate needs a slot for each"
    )
    assert 'http-check send meth GET uri "/health"' in config, "vLLM answers /health, not /"


def test_a_sleeping_model_keeps_the_interceptor_path() -> None:
    dev = shared.recording("dev")
    assert not [r for r in dev.resources if r.name == "gate-llm-replicas"], (
        "dev sleeps: its requests pass KEDA's interceptor, so no router Service is made"
    )
    config = _inputs(dev, "gate-llm-config")["data"]["haproxy.cfg"]
    assert "balance hash" not in config and "set-header Host" in config, (
        "a sleeping model's gate forwards to the interceptor by Host, as before"
    )


EXPOSED = {"port": 8000, "expose": {"port": 443}}


@pytest.mark.parametrize(
    ("workload", "words"),
    [
        (
            {
                **EXPOSED,
                "routing": "cache-aware",
                "autoscale": {"minReplicas": 0, "maxReplicas": 2},
            },
            "Set autoscale.minReplicas: 1, or routing: round-robin",
        ),
        ({"port": 8000, "replicas": 2, "routing": "cache-aware"}, "Add expose"),
    ],
)
def test_cache_aware_routing_that_cannot_happen_is_refused_with_its_key_path(
    workload: dict[str, Any], words: str
) -> None:
    problems = vllm_workload_problems(**workload)
    assert any(p.startswith("workloads[0].routing") and words in p for p in problems), problems


def test_a_workload_named_like_another_ones_router_service_is_refused() -> None:
    problems = names.object_name_problems(
        [(0, "llm", DEPLOYMENT, True, True), (1, "llm-replicas", DEPLOYMENT, True, False)]
    )
    assert [p.path for p in problems] == ["workloads[1].name"], (
        f"two Services called llm-replicas cannot both exist: {problems}"
    )


@pytest.mark.parametrize(
    ("workload", "expected"),
    [
        ({**EXPOSED, "replicas": 2}, "cache-aware"),
        ({**EXPOSED, "replicas": 1}, "round-robin"),
        ({"port": 8000, "replicas": 2}, "round-robin"),
        ({**EXPOSED, "autoscale": {"minReplicas": 0, "maxReplicas": 3}}, "round-robin"),
        ({**EXPOSED, "autoscale": {"minReplicas": 1, "maxReplicas": 3}}, "cache-aware"),
        ({**EXPOSED, "replicas": 2, "routing": "round-robin"}, "round-robin"),
    ],
)
def test_routing_defaults_to_cache_aware_only_where_a_gate_fronts_two_replicas(
    workload: dict[str, Any], expected: str
) -> None:
    spec = WorkloadSpec.model_validate(
        {"name": "llm", "image": "vllm/vllm-openai:v0.29.0", **workload}
    )
    assert routing.resolve(spec) == expected, (
        f"{workload}: a gate routes by cache only where it can reach two or more replicas"
    )
