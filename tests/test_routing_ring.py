"""One hash ring on every gate pod (issue 31, F7), run for real: two of Debian's HAProxy on the prod
stack's rendered haproxy.cfg and routing script, in front of the same two replicas, which each
gate's slots hold the other way round: the first gate started while only the second replica was
ready (it took slot 1, and keeps it), the other once both were (HAProxy 2.6 fills free slots in
its own order of the records). Gate pods started at different times do just that.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from dnslib.server import DNSServer

from components.service import haproxy
from tests.test_gate import (
    HAPROXY,
    RIGHT,
    Gate,
    _haproxy,
    _issue,
    _request,
    _send,
    _wait_for_port,
    free_port,
    on_ports,
    with_files,
)
from tests.test_routing import ADDRESSES, NAME, Records, Replica, _chat
from tools.engine import STATIC_EXTERNAL_IP, Recording

if HAPROXY is None:
    pytestmark = pytest.mark.skip(reason="haproxy not installed (apt-get install haproxy)")


@dataclass
class Pod:
    gate: Gate
    port: int
    records: Records


def _start_gate(
    prod: Recording, folder: Path, order: Sequence[str], replica_port: int, stack: list
) -> Pod:
    """A gate whose DNS lists the replicas in `order`; each answer names its server slot
    (X-Slot, added here only to observe which slot holds which replica)."""
    order = list(order)
    records = Records()
    records.addresses = order
    dns = DNSServer(records, address="127.0.0.1", port=free_port("127.0.0.1"))
    dns.start_thread()
    stack.append(dns)
    files = prod.named("gate-llm-config").inputs["data"]
    config = with_files(files[haproxy.CONFIG_FILE], files, folder)
    config = config.replace(
        "    parse-resolv-conf\n", f"    nameserver test 127.0.0.1:{dns.server.server_address[1]}\n"
    ).replace(
        f"backend {haproxy.MODEL_BACKEND}\n",
        f"backend {haproxy.MODEL_BACKEND}\n    http-response set-header X-Slot %s\n",
    )
    port = free_port()
    (folder / "haproxy.cfg").write_text(on_ports(config, port, free_port()))
    pki = _issue(prod)
    (folder / "gate.pem").write_bytes(pki.server_pem)
    process = _haproxy(folder, replica_port, upstream=f"{NAME}:{replica_port}")
    stack.append(process)
    _wait_for_port(port, process)
    gate = Gate(None, pki, config, STATIC_EXTERNAL_IP)  # type: ignore[arg-type]
    return Pod(gate, port, records)


def _ask(pod: Pod, body: bytes) -> tuple[str | None, str | None]:
    """(the replica that answered, the gate's slot for it)."""
    request = _request("POST", "/v1/chat/completions", RIGHT, body=body)
    response = _send(pod.gate, request, port=pod.port)
    if response.status != 200:
        return None, None
    return json.loads(response.body)["replica"], response.headers.get("x-slot")


def _wait_for(pod: Pod, replicas: set[str]) -> None:
    """Until DNS filled the slots and the health checks passed: distinct prompts reach them."""
    deadline, seen, n = time.monotonic() + 30, set(), 0
    while time.monotonic() < deadline and seen != replicas:
        seen.add(_ask(pod, _chat("m", f"warm-up {n} {time.time()}", "hi"))[0])
        n += 1
    assert seen == replicas, f"the gate reached {seen}, not {replicas}"


@pytest.fixture(scope="module")
def pods(prod: Recording, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Pod]]:
    port = free_port(ADDRESSES[0])
    replicas = [Replica(address, port) for address in ADDRESSES]
    for replica in replicas:
        threading.Thread(target=replica.serve_forever, daemon=True).start()
    started: list = []
    try:
        found = [
            _start_gate(prod, tmp_path_factory.mktemp(f"gate{n}"), order, port, started)
            for n, order in enumerate(((ADDRESSES[1],), ADDRESSES))
        ]
        _wait_for(found[0], {ADDRESSES[1]})
        found[0].records.addresses = list(ADDRESSES)  # the other replica becomes ready
        for pod in found:
            _wait_for(pod, set(ADDRESSES))
        yield found
    finally:
        for item in started:
            if isinstance(item, DNSServer):
                item.stop()
            else:
                item.terminate()
                item.wait(timeout=10)
        for replica in replicas:
            replica.shutdown()


def test_two_gate_pods_send_each_prompt_to_the_same_replica(pods: list[Pod]) -> None:
    slots: list[dict[str, str]] = [{}, {}]
    disagree = []
    for n in range(24):
        body = _chat("m", f"system prompt {n} " * 20, "hi")
        answers = [_ask(pod, body) for pod in pods]
        for i, (replica, slot) in enumerate(answers):
            assert replica and slot, f"gate {i} did not answer prompt {n}"
            slots[i][replica] = slot
        if answers[0][0] != answers[1][0]:
            disagree.append((n, answers[0][0], answers[1][0]))
    assert slots[0] != slots[1] and all(re.fullmatch(r"replica\d", s) for s in slots[0].values()), (
        f"the two gates must hold the replicas in different slots for this test to mean anything: "
        f"{slots}"
    )
    assert not disagree, (
        "a prompt prefix must meet one replica whichever gate pod the load balancer picks, or it "
        f"is cached (and its first token paid for) on both: prompts, gate 1's and gate 2's "
        f"replica: {disagree}"
    )
