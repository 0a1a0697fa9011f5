"""A key per consumer (expose.keys, issue 35), run for real: Debian's HAProxy with the haproxy.cfg
the program renders for `keys: [web-app, batch]`, the environment its Deployment asks Kubernetes
for (each consumer's key from the keys Secret, the workload's own key from the workload's Secret),
and the keys the stack outputs; and what the engine is asked to keep or delete when a consumer
is removed.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from components.service import haproxy
from tests.conftest import MINIMAL, vllm_workload_problems
from tests.test_gate import (
    BODY,
    HAPROXY,
    Gate,
    Upstream,
    _issue,
    _named,
    _request,
    _send,
    _wait_for_port,
    free_port,
    on_ports,
)
from tools.engine import SECRET_MASK, STATIC_EXTERNAL_IP, Recording

if HAPROXY is None:
    pytestmark = pytest.mark.skip(reason="haproxy not installed (apt-get install haproxy)")

PASSWORD = "random:index/randomPassword:RandomPassword"
SECRET = "kubernetes:core/v1:Secret"
# The workload's own key, as Kubernetes would put it in the gate's environment from the
# workload's Secret: the server's key, which no consumer is given.
SERVER_KEY = "s" * 24 + "ABCDEFGHIJKLMNOPQRSTUVWX"


def keys_stack(*consumers: str) -> dict[str, Any]:
    """The dev-like stack: one vLLM server behind its gate, a key per consumer."""
    return {
        **MINIMAL,
        "gke-gpu:workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "args": ["Qwen/Qwen2.5-0.5B-Instruct"],
                "gpu": {"type": "nvidia-l4", "count": 1},
                "cache": {"size": "30Gi"},
                "expose": {"port": 443, "keys": list(consumers)},
            }
        ],
    }


@dataclass
class KeyedGate:
    gate: Gate
    port: int
    keys: dict[str, str]
    """The stack output apiKeys.llm: each consumer's key."""
    log: Path


def _environment(recording: Recording, keys: dict[str, str], folder: Path) -> dict[str, str]:
    """The gate container's environment as Kubernetes fills it: each consumer variable from the
    keys Secret's data key of that consumer (whose value is the output apiKeys.llm.<consumer>),
    the workload's own key from its Secret."""
    container = _named(recording, "gate-llm-deployment")["spec"]["template"]["spec"]["containers"]
    keys_secret = _named(recording, "gate-llm-consumer-keys")
    env = {haproxy.CERT_ENV: str(folder / "gate.pem"), "PATH": os.environ.get("PATH", "")}
    for variable in container[0]["env"]:
        ref = variable.get("valueFrom", {}).get("secretKeyRef")
        if ref is None:
            continue
        if ref["name"] == keys_secret["metadata"]["name"]:
            env[variable["name"]] = keys[ref["key"]]
        else:
            assert variable["name"] == haproxy.KEY_ENV, variable
            env[variable["name"]] = SERVER_KEY
    return env


@pytest.fixture
def start(run: Callable[..., Recording], tmp_path: Path) -> Iterator[Callable[..., KeyedGate]]:
    processes: list[subprocess.Popen[bytes]] = []
    upstreams: list[Upstream] = []

    def _start(*consumers: str, keys: dict[str, str] | None = None) -> KeyedGate:
        """The gate of the stack with `consumers`, given `keys` (else the stack's outputs)."""
        recording = run(keys_stack(*consumers))
        keys = keys or recording.stack_outputs["apiKeys"]["llm"]
        folder = tmp_path / str(len(processes))
        folder.mkdir()
        port = free_port()
        config = on_ports(
            _named(recording, "gate-llm-config")["data"]["haproxy.cfg"], port, free_port()
        )
        (folder / "haproxy.cfg").write_text(config)
        pki = _issue(recording)
        (folder / "gate.pem").write_bytes(pki.server_pem)
        upstream = Upstream()
        upstreams.append(upstream)
        threading.Thread(target=upstream.serve_forever, daemon=True).start()
        env = _environment(recording, keys, folder)
        env[haproxy.UPSTREAM_ENV] = f"127.0.0.1:{upstream.server_address[1]}"
        assert HAPROXY is not None
        check = subprocess.run([HAPROXY, "-c", "-f", str(folder / "haproxy.cfg")], env=env)
        assert check.returncode == 0
        log = folder / "haproxy.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [HAPROXY, "-db", "-dR", "-f", str(folder / "haproxy.cfg")],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        processes.append(process)
        _wait_for_port(port, process)
        return KeyedGate(Gate(upstream, pki, config, STATIC_EXTERNAL_IP), port, keys, log)

    yield _start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)
    for upstream in upstreams:
        upstream.shutdown()


def _call(gate: KeyedGate, key: str) -> tuple[int, list[tuple[str, str, str | None]]]:
    """POST /v1/chat/completions with `key`: the status and what reached the model."""
    before = len(gate.gate.upstream.seen)
    request = _request("POST", "/v1/chat/completions", f"Authorization: Bearer {key}", body=BODY)
    response = _send(gate.gate, request, port=gate.port)
    return response.status, gate.gate.upstream.seen[before:]


def _log_lines(gate: KeyedGate) -> list[str]:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = [line for line in gate.log.read_text().splitlines() if "/v1/chat" in line]
        if lines:
            return lines
        time.sleep(0.05)
    return []


def test_each_consumers_key_from_the_outputs_is_accepted_and_the_model_sees_only_its_own(
    start: Callable[..., KeyedGate],
) -> None:
    gate = start("web-app", "batch")
    assert set(gate.keys) == {"web-app", "batch"} and len(set(gate.keys.values())) == 2, (
        "each consumer has a key of its own in apiKeys.llm"
    )
    for consumer, key in gate.keys.items():
        status, reached = _call(gate, key)
        assert status == 200, f"{consumer}'s key (apiKeys.llm.{consumer}) must be accepted"
        assert reached == [("POST", "/v1/chat/completions", f"Bearer {SERVER_KEY}")], (
            f"the server must get the workload's own key, never {consumer}'s: {reached}"
        )
    for label, key in (("the workload's own key", SERVER_KEY), ("a wrong key", "x" * 48)):
        status, reached = _call(gate, key)
        assert status == 401 and not reached, (
            f"{label} must be refused once consumers have keys: got {status}, reached {reached}"
        )


def test_the_log_line_names_the_consumer_and_never_holds_a_key(
    start: Callable[..., KeyedGate],
) -> None:
    gate = start("web-app", "batch")
    assert _call(gate, gate.keys["batch"])[0] == 200
    lines = _log_lines(gate)
    assert len(lines) == 1 and "{batch}" in lines[0], (
        f"the request's log line must name its consumer (captured as {{batch}}): {lines}"
    )
    text = gate.log.read_text()
    for key in (*gate.keys.values(), SERVER_KEY):
        assert key not in text, "no key may appear in the gate's log"


def test_a_removed_consumers_key_is_refused_and_the_others_still_work(
    start: Callable[..., KeyedGate], run: Callable[..., Recording]
) -> None:
    keys = run(keys_stack("web-app", "batch")).stack_outputs["apiKeys"]["llm"]
    # The gate after `batch` is removed, even were its key still in the environment.
    gate = start("web-app", keys=keys)
    assert _call(gate, keys["web-app"])[0] == 200, "web-app's key must still be accepted"
    status, reached = _call(gate, keys["batch"])
    assert status == 401 and not reached, (
        f"batch was removed from expose.keys: its key must be refused, got {status}"
    )


def test_removing_a_consumer_deletes_its_key_alone(run: Callable[..., Recording]) -> None:
    both, one = run(keys_stack("web-app", "batch")), run(keys_stack("web-app"))

    def passwords(recording: Recording) -> dict[str, tuple[str, dict[str, Any]]]:
        return {r.name: (r.urn, r.inputs) for r in recording.of_type(PASSWORD)}

    before, after = passwords(both), passwords(one)
    assert set(before) - set(after) == {"apikey-llm/batch-password"}, (
        f"only batch's key is deleted: {sorted(set(before) ^ set(after))}"
    )
    assert after["apikey-llm/web-app-password"] == before["apikey-llm/web-app-password"], (
        "web-app's key keeps its URN and inputs, so the engine leaves its value as it is"
    )
    assert after["apikey-llm-password"] == before["apikey-llm-password"], (
        "the workload's own key (the server's) is untouched"
    )
    secret_before, secret_after = (r.named("gate-llm-consumer-keys") for r in (both, one))
    assert secret_before.urn == secret_after.urn, "the keys Secret is updated, not replaced"
    assert secret_after.inputs["stringData"] == {"web-app": SECRET_MASK}, (
        "the Secret holds the remaining consumer's key, as a secret"
    )


def test_consumer_keys_are_secret_outputs_and_never_in_a_config_map(
    run: Callable[..., Recording],
) -> None:
    recording = run(keys_stack("web-app", "batch"))
    assert "apiKeys" in recording.secret_outputs, "apiKeys is a secret output"
    assert "apiKey" not in recording.stack_outputs, (
        "the workload's own key is not handed out when consumers have keys: the gate refuses it"
    )
    keys = recording.stack_outputs["apiKeys"]["llm"]
    for config_map in recording.of_type("kubernetes:core/v1:ConfigMap"):
        text = str(config_map.inputs)
        assert not any(key in text for key in keys.values()), (
            f"a consumer's key is in ConfigMap {config_map.name}: keys belong in Secrets"
        )
    for name in ("web-app", "batch"):
        registration = recording.named(f"apikey-llm/{name}-password")
        assert registration.inputs["keepers"] == {"workload": "llm", "consumer": name}


def test_a_consumer_listed_twice_or_keys_without_the_generated_key_is_refused_with_its_path() -> (
    None
):
    twice = vllm_workload_problems(
        cache={"size": "30Gi"}, expose={"port": 443, "keys": ["web-app", "batch", "web-app"]}
    )
    assert any(
        p.startswith("workloads[0].expose.keys[2]: 'web-app' is listed twice") for p in twice
    ), twice
    without = vllm_workload_problems(
        cache={"size": "30Gi"}, apiKey=False, expose={"port": 443, "keys": ["web-app"]}
    )
    assert any(
        p.startswith("workloads[0].expose.keys:") and "apiKey is false" in p for p in without
    ), without
    bad = vllm_workload_problems(cache={"size": "30Gi"}, expose={"port": 443, "keys": ["Web_App"]})
    assert any(
        p.startswith("workloads[0].expose.keys[0]:") and "not a consumer name" in p for p in bad
    ), bad
