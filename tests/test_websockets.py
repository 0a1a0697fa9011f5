"""A notebook's kernel connection through the gate (issue 31), run for real: Debian's HAProxy on
the haproxy.cfg the program renders for a Jupyter-like workload with `expose.websockets`, TLS with
the stack's certificate, the `websockets` package as the kernel (server) and as the notebook
client, which sends the key as a header the way a Jupyter gateway client does
(`--GatewayClient.auth_scheme=Bearer`, examples/Pulumi.t4-standard.yaml).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect
from websockets.sync.server import Server, ServerConnection, serve

from components.service import haproxy
from components.service import haproxy_limits as limits
from tests import shared
from tests.conftest import MINIMAL
from tests.test_gate import (
    HAPROXY,
    KEY,
    RIGHT,
    Gate,
    Pki,
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
)
from tests.test_gate import connect as tcp_connect
from tools.engine import STATIC_EXTERNAL_IP, Recording

if HAPROXY is None:
    pytestmark = pytest.mark.skip(reason="haproxy not installed (apt-get install haproxy)")

KERNEL = "/api/kernels/4f2a9c1e-0d3b-4c8e-9a57-2b6f1d0e8c11/channels"
PATHS = ["/lab", "/lab/*", "/api/*", "/static/*"]


def notebook_stack(websockets: bool) -> dict[str, Any]:
    """A Jupyter server behind its gate, with the stack's key required there."""
    return {
        **MINIMAL,
        "gke-gpu:workloads": [
            {
                "name": "llm",
                "image": "quay.io/jupyter/pytorch-notebook:cuda12-2024-12-09",
                "port": 8888,
                "probe": {"path": "/api"},
                "apiKey": True,
                "expose": {"port": 443, "paths": PATHS, "websockets": websockets},
            }
        ],
    }


class Kernel:
    """Stands where Jupyter's kernel WebSocket handler stands: answers each message with a reply
    naming it, and records the path and Authorization header of each connection."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        self.server: Server = serve(self._handle, "127.0.0.1", 0, ping_interval=None)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self.server.socket.getsockname()[1]

    def _handle(self, connection: ServerConnection) -> None:
        request = connection.request
        assert request is not None
        self.seen.append((request.path, request.headers.get("Authorization")))
        for message in connection:
            request_msg = json.loads(message)
            reply = {"parent_header": request_msg["header"], "content": {"status": "ok"}}
            connection.send(json.dumps(reply))


@dataclass
class NotebookGate:
    api: int
    pki: Pki
    kernel: Kernel


@pytest.fixture
def started(
    run: Callable[..., Recording], tmp_path: Path
) -> Iterator[Callable[[bool], NotebookGate]]:
    processes = []
    kernels: list[Kernel] = []

    def start(websockets: bool) -> NotebookGate:
        recording = run(notebook_stack(websockets))
        folder = tmp_path / str(len(processes))
        folder.mkdir()
        api = free_port()
        config = on_ports(
            _named(recording, "gate-llm-config")["data"]["haproxy.cfg"], api, free_port()
        )
        (folder / "haproxy.cfg").write_text(config)
        pki = _issue(recording)
        (folder / "gate.pem").write_bytes(pki.server_pem)
        kernel = Kernel()
        kernels.append(kernel)
        process = _haproxy(folder, kernel.port)
        processes.append(process)
        _wait_for_port(api, process)
        return NotebookGate(api, pki, kernel)

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)
    for kernel in kernels:
        kernel.server.shutdown()


def _open(gate: NotebookGate, path: str = KERNEL, *headers: tuple[str, str]) -> ClientConnection:
    """A wss:// connection to the gate from a fresh client address, verifying the certificate
    for the reserved address it names."""
    raw = tcp_connect(gate.api, client_address())
    return connect(
        f"wss://{STATIC_EXTERNAL_IP}{path}",
        sock=raw,
        ssl=_context(gate.pki.ca_pem),
        server_hostname=STATIC_EXTERNAL_IP,
        additional_headers=list(headers),
        proxy=None,
        ping_interval=None,
        open_timeout=10,
    )


def _execute(connection: ClientConnection, n: int) -> dict[str, Any]:
    header = {"msg_id": f"m{n}", "msg_type": "execute_request"}
    connection.send(json.dumps({"header": header, "content": {"code": f"print({n})"}}))
    reply: dict[str, Any] = json.loads(connection.recv(timeout=10))
    return reply


def test_a_notebook_talks_to_its_kernel_through_the_gate_with_the_key(
    started: Callable[[bool], NotebookGate],
) -> None:
    gate = started(True)
    with _open(gate, KERNEL, ("Authorization", f"Bearer {KEY}")) as notebook:
        assert _execute(notebook, 1)["parent_header"]["msg_id"] == "m1"
        # A kernel computing, a user reading: nothing on the wire for longer than the gate's
        # 5 s client timeout, which an upgraded connection no longer obeys (timeout tunnel).
        time.sleep(limits.CLIENT_SECONDS + 1.5)
        assert _execute(notebook, 2)["parent_header"]["msg_id"] == "m2", (
            "the kernel connection must survive a quiet spell longer than the client timeout"
        )
    assert gate.kernel.seen == [(KERNEL, f"Bearer {KEY}")], (
        "the upgrade reached the kernel on its path, key included (Jupyter may check it too)"
    )


def _refused(gate: NotebookGate, path: str, *headers: tuple[str, str]) -> int:
    with pytest.raises(InvalidStatus) as refused:
        _open(gate, path, *headers).close()
    return refused.value.response.status_code


def test_the_upgrade_needs_the_key_and_an_allowed_path(
    started: Callable[[bool], NotebookGate],
) -> None:
    gate = started(True)
    assert _refused(gate, KERNEL) == 401, "no key: refused before anything is upgraded"
    wrong = ("Authorization", "Bearer " + "x" * 48)
    assert _refused(gate, KERNEL, wrong) == 401
    key = ("Authorization", f"Bearer {KEY}")
    assert _refused(gate, "/terminals/websocket/1", key) == 404, (
        "the allowlist applies to the upgrade request: a path outside it opens no tunnel"
    )
    assert gate.kernel.seen == [], "no refused upgrade reached the kernel"


def test_with_websockets_off_every_upgrade_is_refused(
    started: Callable[[bool], NotebookGate],
) -> None:
    gate = started(False)
    key = ("Authorization", f"Bearer {KEY}")
    assert _refused(gate, KERNEL, key) == 400, "expose.websockets is off: no tunnel, key or not"
    assert gate.kernel.seen == []


def test_only_websocket_upgrades_pass_when_websockets_are_on(
    started: Callable[[bool], NotebookGate],
) -> None:
    gate = started(True)
    for upgrade in ("h2c", "websocket, h2c"):
        request = _request(
            "GET", "/api/status", RIGHT, f"Upgrade: {upgrade}", "Connection: Upgrade"
        )
        as_gate = Gate(None, gate.pki, "", STATIC_EXTERNAL_IP)  # type: ignore[arg-type]
        response = _send(as_gate, request, port=gate.api)
        assert response.status == 400, f"Upgrade: {upgrade} is not a WebSocket: refused"
    assert gate.kernel.seen == []


def test_the_plan_says_whether_websockets_pass() -> None:
    from components.config import load
    from tools.summary_exposure import exposure_lines

    for websockets, words in ((True, "WebSockets: let through"), (False, "refused (400)")):
        raw = notebook_stack(websockets)
        config = load(
            {k.split(":", 1)[1]: v for k, v in raw.items() if k.startswith("gke-gpu:")},
            project=raw["gcp:project"],
            region=raw["gcp:region"],
            stack="t",
        )
        text = "\n".join(exposure_lines(config, config.workloads[0]))
        assert words in text, f"websockets {websockets}: the plan must say so: {text}"


@pytest.mark.parametrize("example", ["operator", "t4-standard"])
def test_both_jupyter_examples_serve_jupyter_and_its_kernels(example: str) -> None:
    from tests.conftest import ROOT

    plan = shared.render(example, ROOT / "examples" / f"Pulumi.{example}.yaml")
    assert plan.config is not None
    (w,) = [w for w in plan.config.workloads if "jupyter" in w.spec.image]
    assert w.expose is not None and w.expose.spec.websockets, (
        f"{example}: a notebook's kernels talk over WebSockets; without them no cell runs"
    )
    allowed = re.compile(haproxy.path_regex(w.expose.paths))
    for path in ("/lab", KERNEL, "/api/contents", "/static/lab/main.js", "/login"):
        assert allowed.match(path), f"{example}: Jupyter's {path} is refused by the gate"
    advisories = [a for a in plan.config.advisories if "expose.paths" in a]
    assert advisories == [], f"{example}: {advisories}"
