"""How long a gate's connections and pods live (issue 31): TCP keepalive on the client side, so a
request held while a model wakes keeps its NAT mappings (F4), and a stopping gate or KEDA
interceptor that finishes what it holds (F6). What the engine receives, and Debian's HAProxy
on the dev stack's rendered haproxy.cfg.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from components.config import StackConfig, load
from components.platform import keda_drain
from components.service import gate_pod, haproxy
from components.service import haproxy_limits as limits
from tests.conftest import stack_config
from tests.test_gate import (
    BODY,
    HAPROXY,
    RIGHT,
    Gate,
    HoldingUpstream,
    Pki,
    Response,
    _issue,
    _named,
    _request,
    _send,
    _wait_for_port,
    client_address,
    connect,
    free_port,
    on_ports,
)
from tools.engine import STATIC_EXTERNAL_IP, Recording
from tools.summary_exposure import exposure_lines

if HAPROXY is None:
    pytestmark = pytest.mark.skip(reason="haproxy not installed (apt-get install haproxy)")

# Cloud NAT drops an established TCP flow idle this long unless told otherwise (RouterNat
# tcpEstablishedIdleTimeoutSec: "Defaults to 1200s if not set"; haproxy_limits.py cites it).
CLOUD_NAT_IDLE_SECONDS = 1200
HTTP_SCALED_OBJECT = "kubernetes:http.keda.sh/v1alpha1:HTTPScaledObject"


def _loaded(stack: str) -> StackConfig:
    file = stack_config(stack)
    raw = {k.split(":", 1)[1]: v for k, v in file.items() if k.startswith("gke-gpu:")}
    return load(raw, project=file["gcp:project"], region=file["gcp:region"], stack=stack)


def _seconds(value: str) -> int:
    assert value.endswith("s"), value
    return int(value[:-1])


# --- F4: keepalive --------------------------------------------------------------------------------


def test_the_rendered_gate_keeps_client_connections_alive_well_under_cloud_nats_timeout(
    dev: Recording,
) -> None:
    config = _named(dev, "gate-llm-config")["data"]["haproxy.cfg"]
    defaults = re.search(r"^defaults\n((?:    .*\n)*)", config, re.M)
    assert defaults, config
    body = defaults.group(1)
    assert "    option clitcpka\n" in body, "TCP keepalive on every client connection"
    idle = re.search(r"clitcpka-idle (\d+)s", body)
    interval = re.search(r"clitcpka-intvl (\d+)s", body)
    probes = re.search(r"clitcpka-cnt (\d+)", body)
    assert idle and interval and probes, body
    first_probe = int(idle.group(1))
    assert first_probe * 4 <= CLOUD_NAT_IDLE_SECONDS, (
        f"the first probe after {first_probe} s of silence must come well before a NAT forgets "
        f"the flow ({CLOUD_NAT_IDLE_SECONDS} s for Cloud NAT), or a held wake loses its answer"
    )
    assert int(interval.group(1)) < first_probe and int(probes.group(1)) >= 3


@dataclass
class Files:
    folder: Path
    api: int
    pki: Pki


@pytest.fixture
def gate_files(dev: Recording, tmp_path: Path) -> Files:
    """The dev gate's config on ports of its own, and its certificate, in tmp_path."""
    api = free_port()
    config = on_ports(_named(dev, "gate-llm-config")["data"]["haproxy.cfg"], api, free_port())
    (tmp_path / "haproxy.cfg").write_text(config)
    pki = _issue(dev)
    (tmp_path / "gate.pem").write_bytes(pki.server_pem)
    return Files(tmp_path, api, pki)


def _start(folder: Path, upstream_port: int, *flags: str) -> subprocess.Popen[bytes]:
    """HAProxy as the gate's image starts it: `haproxy -W -db -f haproxy.cfg` (its entrypoint
    adds -W -db: docker-library/haproxy@ec437dd2 2.6/alpine/docker-entrypoint.sh)."""
    assert HAPROXY is not None
    env = {
        "PATH": os.environ.get("PATH", ""),
        haproxy.UPSTREAM_ENV: f"127.0.0.1:{upstream_port}",
        haproxy.CERT_ENV: str(folder / "gate.pem"),
        haproxy.KEY_ENV: RIGHT.removeprefix("Authorization: Bearer "),
    }
    return subprocess.Popen(
        [HAPROXY, *flags, "-db", "-dR", "-f", str(folder / "haproxy.cfg")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _accepted_socket(api: int, client_port: int, within: float = 10) -> str:
    """`ss -o`'s line for the gate's end of one client connection, once it shows a timer. The
    kernel completes the handshake before HAProxy accepts the socket and sets its options: on a
    busy machine the first look can come before that (the line then has no timer yet)."""
    deadline, line = time.monotonic() + within, ""
    while "timer:" not in line and time.monotonic() < deadline:
        shown = subprocess.run(
            ["ss", "-tnoH", "state", "established", f"( sport = :{api} )"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        rows = [row for row in shown.splitlines() if re.search(rf":{client_port}(\s|$)", row)]
        line = rows[0] if rows else line
        time.sleep(0 if "timer:" in line else 0.05)
    return line


def test_the_kernel_probes_an_accepted_client_connection(gate_files: Files) -> None:
    """SO_KEEPALIVE with TCP_KEEPIDLE on the socket HAProxy accepted, as `ss -o` shows it: a
    timer "keepalive" counting down from clitcpka-idle (an unset socket shows no timer)."""
    api = gate_files.api
    process = _start(gate_files.folder, free_port("127.0.0.1"))
    try:
        _wait_for_port(api, process)
        with connect(api, client_address()) as client:
            line = _accepted_socket(api, client.getsockname()[1])
    finally:
        process.terminate()
        process.wait(timeout=10)
    # ss prints the time left as "59sec", or "1min" when it was read at the very start.
    timer = re.search(r"timer:\(keepalive,(?:(\d+)min)?(?:(\d+)sec)?,\d+\)", line)
    assert timer and any(timer.groups()), f"no keepalive timer on the accepted connection: {line}"
    left = int(timer.group(1) or 0) * 60 + int(timer.group(2) or 0)
    assert 0 < left <= limits.KEEPALIVE_IDLE_SECONDS, (
        f"the first probe must come within clitcpka-idle, well under Cloud NAT's 1200 s: {line}"
    )


# --- F6: stopping ---------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_gate_pod_may_take_its_longest_wait_for_the_upstream_to_stop(
    stack: str, dev: Recording, prod: Recording
) -> None:
    recording = {"dev": dev, "prod": prod}[stack]
    config = _named(recording, "gate-llm-config")["data"]["haproxy.cfg"]
    server = re.search(r"timeout server (\d+)s", config)
    assert server, config
    pod = _named(recording, "gate-llm-deployment")["spec"]["template"]["spec"]
    grace = pod.get("terminationGracePeriodSeconds", 30)  # Kubernetes' default
    (container,) = pod["containers"]
    pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {})
    delay = int(pre_stop["command"][1]) if pre_stop.get("command", [""])[0] == "sleep" else 0
    assert delay > 0, (
        f"{stack}: the gate keeps accepting a few seconds after it leaves the Service's "
        "endpoints, so connections still routed to it are not refused"
    )
    assert grace > delay + int(server.group(1)), (
        f"{stack}: a gate pod stopping in a rollout or a node drain is killed after {grace} s, "
        f"while it waits {delay} s before stopping and then may wait {server.group(1)} s for an "
        "answer (a model waking): it must have that long to finish what it holds"
    )


def test_the_interceptor_may_take_its_longest_hold_to_stop(dev: Recording) -> None:
    (scaled,) = dev.of_type(HTTP_SCALED_OBJECT)
    timeouts = scaled.inputs["spec"]["timeouts"]
    held = _seconds(timeouts["conditionWait"]) + _seconds(timeouts["responseHeader"])
    interceptor = dev.named("deployment-keda-keda-add-ons-http-interceptor").inputs["spec"]
    pod = interceptor["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    drain = _seconds(env.get(keda_drain.DRAIN_TIMEOUT_ENV, "30s"))  # the add-on's default
    assert drain >= held, (
        f"the interceptor lets requests in flight finish for {drain} s when it stops, but holds "
        f"one up to {held} s (the wake timeout, then the replica's response headers)"
    )
    assert pod["terminationGracePeriodSeconds"] >= keda_drain.SHUTDOWN_DELAY_SECONDS + drain, (
        "and its pod is given that long (after the add-on's shutdown delay) before SIGKILL"
    )


def _held_call(gate: Gate, port: int) -> Response:
    return _send(gate, _request("POST", "/v1/chat/completions", RIGHT, body=BODY), port=port)


@pytest.fixture
def holding() -> Iterator[HoldingUpstream]:
    upstream = HoldingUpstream(hold=3.0)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    yield upstream
    upstream.shutdown()


def _stop_while_holding(
    files: Files, holding: HoldingUpstream, sig: int
) -> tuple[Future[Response], subprocess.Popen[bytes]]:
    """The gate, as its image runs it, holding a request; then stopped with `sig`."""
    process = _start(files.folder, holding.server_address[1], "-W")
    _wait_for_port(files.api, process)
    gate = Gate(None, files.pki, "", STATIC_EXTERNAL_IP)  # type: ignore[arg-type]
    pool = ThreadPoolExecutor(max_workers=1)
    answer = pool.submit(_held_call, gate, files.api)
    deadline = time.monotonic() + 5
    while not holding.hosts and time.monotonic() < deadline:
        time.sleep(0.05)
    assert holding.hosts, "the request reached the upstream, which holds it"
    process.send_signal(sig)
    pool.shutdown(wait=False)
    return answer, process


def test_a_gate_stopped_with_its_images_signal_answers_the_request_it_holds(
    gate_files: Files, holding: HoldingUpstream
) -> None:
    sig = signal.Signals[gate_pod.STOP_SIGNAL]
    answer, process = _stop_while_holding(gate_files, holding, sig)
    try:
        time.sleep(0.5)
        with pytest.raises(ConnectionRefusedError):
            connect(gate_files.api, client_address(), timeout=2)
        response = answer.result(timeout=15)
        assert response.status == 200 and b"awake" in response.body, (
            f"{gate_pod.STOP_SIGNAL}, the stop signal of the gate's image, is HAProxy's graceful "
            f"stop: it stops listening and the held request is answered ({response.status})"
        )
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_sigterm_would_cut_the_request_a_gate_holds(
    gate_files: Files, holding: HoldingUpstream
) -> None:
    """Why the image's STOPSIGNAL matters (gate_pod.py): the runtime's default, SIGTERM, is
    HAProxy's hard stop."""
    answer, process = _stop_while_holding(gate_files, holding, signal.SIGTERM)
    try:
        try:
            response = answer.result(timeout=15)
        except (OSError, IndexError, ValueError) as error:  # reset, EOF: no answer at all
            got = repr(error)
        else:
            got = f"HTTP {response.status}"
        assert not got.startswith("HTTP 200"), f"SIGTERM closes held connections at once: {got}"
    finally:
        process.wait(timeout=10)


# --- the plan's words -----------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_plan_states_the_keepalive_and_drain_the_gate_is_given(
    stack: str, dev: Recording, prod: Recording
) -> None:
    recording = {"dev": dev, "prod": prod}[stack]
    config = _named(recording, "gate-llm-config")["data"]["haproxy.cfg"]
    idle = re.search(r"clitcpka-idle (\d+)s", config)
    assert idle, config
    grace = _named(recording, "gate-llm-deployment")["spec"]["template"]["spec"][
        "terminationGracePeriodSeconds"
    ]
    loaded = _loaded(stack)
    (line,) = [
        line for line in exposure_lines(loaded, loaded.workloads[0]) if "gate lifecycle:" in line
    ]
    for words in (f"after {idle.group(1)} s of silence", f"for up to {grace} s"):
        assert words in line, f"{stack}: the plan must say what is registered: {words} in {line}"
