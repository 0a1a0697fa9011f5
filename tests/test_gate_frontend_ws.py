"""A notebook's kernel connection through Google's front end and the gate (issue 43), run for
real: the haproxy.cfg the program renders for a Jupyter-like workload on expose.domain with
expose.websockets, tests/test_websockets.py's kernel (the `websockets` package) behind it and its
notebook client in front, and between the client and the gate a stand-in for the Gateway's
Google front end: a second real HAProxy like tests/test_gate_frontend.py's FRONT_END, which
speaks TLS to the gate from an address of its own and appends the client to X-Forwarded-For.

Google's front end keeps a WebSocket open for the backend service timeout, idle or not (the
GCPBackendPolicy's timeoutSec: components/expose/gateway.py, backend_timeout_seconds, whose
comment gives the source and says its wording is unconfirmed), so the stand-in keeps a tunnel
(`timeout tunnel`) for the timeoutSec the program registers. What remains to cut a quiet kernel
connection is the gate, which keeps an upgraded connection limits.TUNNEL_SECONDS.

Without its `timeout tunnel` line a gate's tunnel inherits `timeout client` and `timeout server`,
and the shorter cuts it (measured on the 2.6 binary with each shrunk in turn). On the Gateway path
those are 620 s and 600 s: a quiet spell of seconds cannot tell that gate from the program's, and
ten minutes are too long for the suite. The failing counterpart is the same notebook's gate exposed
directly with the line removed, whose 5 s client timeout the tunnel inherits (what the line has
guarded since issue 31), behind the same front end.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection

from components.config import load
from components.expose.gateway import PROXY_RANGES
from components.service import haproxy
from components.service import haproxy_limits as limits
from components.service.gate import gate_settings
from tests.test_gate import (
    HAPROXY,
    KEY,
    _haproxy,
    _issue,
    _wait_for_port,
    client_address,
    free_port,
    on_ports,
)
from tests.test_gate_frontend import LOAD_BALANCER, _trusting
from tests.test_gateway import DOMAIN
from tests.test_websockets import KERNEL, Kernel, NotebookGate, _execute, _open, notebook_stack
from tools.engine import Recording

if HAPROXY is None:
    pytestmark = pytest.mark.skip(reason="haproxy not installed (apt-get install haproxy)")

# Longer than the 5 s `timeout client` a directly exposed gate without a tunnel limit applies to a
# quiet WebSocket (the tunnel inherits it: measured below), by 3 s for a busy 2-core machine's
# timers; far below the tunnel limit and the front end's backend timeout (an hour each).
QUIET_SECONDS = limits.CLIENT_SECONDS + 3
# The stand-in for Google's front end. It keeps a WebSocket for the backend service timeout, idle
# or not (components/expose/gateway.py; `timeout tunnel` supersedes the client and server timeouts
# once a connection is upgraded: HAProxy configuration manual 2.6, 4.2 "timeout tunnel"). Google's
# load balancer accepts whatever certificate a backend inside Google Cloud presents and validates
# none (cloud.google.com/load-balancing/docs/backend-authenticated-tls-backend-mtls): `verify
# none`. It connects from one address of its own (`source`), which the gate trusts as the front
# end's range (test_gate_frontend._trusting).
FRONT_END = """global
    maxconn 100
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    timeout tunnel {tunnel}s
frontend google
    bind :{port} ssl crt "${{GATE_CERT}}"
    http-request set-header X-Forwarded-For "%[req.fhdr(X-Forwarded-For)],%[src],{lb}" \
if {{ req.fhdr(X-Forwarded-For) -m found }}
    http-request set-header X-Forwarded-For "%[src],{lb}" \
unless {{ req.fhdr(X-Forwarded-For) -m found }}
    default_backend gate
backend gate
    server gate 127.0.0.1:{gate} ssl verify none source {source}
"""


def notebook_on_a_domain() -> dict[str, Any]:
    """tests/test_websockets.py's notebook with its kernels' WebSockets, on a name through a
    Gateway as tests/test_gateway.py's domain_stack puts a workload."""
    stack = notebook_stack(True)
    (workload,) = stack["gke-gpu:workloads"]
    workload["expose"] = {**workload["expose"], "domain": DOMAIN}
    return stack


@dataclasses.dataclass
class Configs:
    gateway: str
    """The gate's haproxy.cfg for the notebook on a domain, as the program registers it."""
    untunnelled: str
    """The same notebook's gate exposed directly, its `timeout tunnel` line removed: a gate that
    lets WebSockets through with no tunnel limit."""
    backend_timeout: int
    """The GCPBackendPolicy's timeoutSec: how long Google's front end keeps a WebSocket."""


@pytest.fixture
def configs(run: Callable[..., Recording]) -> Configs:
    stack = notebook_on_a_domain()
    recording = run(stack)
    recorded = recording.named("gate-llm-config").inputs["data"]["haproxy.cfg"]
    raw = {k.split(":", 1)[1]: v for k, v in stack.items() if k.startswith("gke-gpu:")}
    loaded = load(raw, project=stack["gcp:project"], region=stack["gcp:region"], stack="test")
    settings = gate_settings(loaded.workloads[0], loaded.namespace)
    assert settings.websockets and settings.front_end_ranges == PROXY_RANGES
    assert haproxy.render(settings) == recorded
    direct = haproxy.render(dataclasses.replace(settings, front_end_ranges=()))
    tunnel = f"    timeout tunnel {limits.TUNNEL_SECONDS}s\n"
    assert tunnel in recorded and tunnel in direct, "a gate that lets WebSockets through"
    (policy,) = [r.inputs for r in recording.resources if r.type.endswith(":GCPBackendPolicy")]
    return Configs(recorded, direct.replace(tunnel, ""), policy["spec"]["default"]["timeoutSec"])


@contextlib.contextmanager
def behind_front_end(
    config: str, backend_timeout: int, dev: Recording, folder: Path
) -> Iterator[NotebookGate]:
    """The gate on `config` in front of a kernel, and the front end in front of the gate; the
    NotebookGate names the front end's port, where the notebook connects."""
    source, api, port = client_address(), free_port(), free_port()
    gate, front = folder / "gate", folder / "front"
    gate.mkdir(parents=True)
    front.mkdir()
    (gate / "haproxy.cfg").write_text(on_ports(_trusting(config, source), api, free_port()))
    (front / "haproxy.cfg").write_text(
        FRONT_END.format(
            tunnel=backend_timeout, port=port, lb=LOAD_BALANCER, gate=api, source=source
        )
    )
    pki = _issue(dev)
    for folder_ in (gate, front):  # the front end's certificate stands in for Google's
        (folder_ / "gate.pem").write_bytes(pki.server_pem)
    kernel = Kernel()
    processes = [_haproxy(gate, kernel.port)]
    try:
        _wait_for_port(api, processes[0])
        processes.append(_haproxy(front, 0))
        _wait_for_port(port, processes[1])
        yield NotebookGate(port, pki, kernel)
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
        kernel.server.shutdown()


def _dropped_after(notebook: ClientConnection, seconds: float) -> float | None:
    """Waits `seconds` without a word on the connection: when it was closed, None if it was
    not."""
    started = time.monotonic()
    try:
        message = notebook.recv(timeout=seconds)
    except TimeoutError:
        return None
    except ConnectionClosed:
        return time.monotonic() - started
    raise AssertionError(f"the kernel spoke unasked: {message!r}")


def test_a_kernel_connection_quiet_under_the_tunnel_limit_survives_the_front_end_and_gate(
    configs: Configs, dev: Recording, tmp_path: Path
) -> None:
    """Both gates behind the front end, one notebook each, quiet at once for QUIET_SECONDS: the
    program's gate keeps the kernel connection; one without a tunnel limit drops it."""
    key = ("Authorization", f"Bearer {KEY}")
    timeout = configs.backend_timeout
    with (
        behind_front_end(configs.gateway, timeout, dev, tmp_path / "gateway") as kept,
        behind_front_end(configs.untunnelled, timeout, dev, tmp_path / "untunnelled") as cut,
        _open(kept, KERNEL, key) as notebook,
        _open(cut, KERNEL, key) as other,
    ):
        for connection in (notebook, other):
            assert _execute(connection, 1)["parent_header"]["msg_id"] == "m1"
        started = time.monotonic()
        dropped = _dropped_after(other, QUIET_SECONDS)
        time.sleep(max(0.0, started + QUIET_SECONDS - time.monotonic()))
        try:
            answered: str = _execute(notebook, 2)["parent_header"]["msg_id"]
        except (ConnectionClosed, TimeoutError) as error:
            answered = f"no answer ({error!r})"
    assert answered == "m2", (
        f"the notebook lost its kernel connection after {QUIET_SECONDS} s of quiet through "
        f"Google's front end and the gate: {answered}; the gate keeps a quiet WebSocket "
        f"{limits.TUNNEL_SECONDS} s, the front end {timeout} s"
    )
    assert kept.kernel.seen == [(KERNEL, f"Bearer {KEY}")], kept.kernel.seen
    seen = f"kept it {QUIET_SECONDS} s" if dropped is None else f"dropped it after {dropped:.1f} s"
    assert dropped is not None and limits.CLIENT_SECONDS - 1 < dropped < QUIET_SECONDS, (
        f"a gate without `timeout tunnel` drops a notebook's kernel connection after "
        f"{limits.CLIENT_SECONDS} s of quiet (its client timeout, which the tunnel inherits), and "
        f"the notebook loses its kernel; this one {seen}"
    )
