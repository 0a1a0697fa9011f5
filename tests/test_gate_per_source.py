"""Issue 44, M1: one address cannot hold the gate's API slots, run on the real HAProxy with the
haproxy.cfg the program renders for the dev stack (tests/test_gate_hardening.py starts it).

An address that opens connections faster than the gate closes the silent ones (about 120 a
second, the review measured) held every one of the API's slots before; now each address holds at
most limits.PER_SOURCE_CONNECTIONS, the rest refused as they arrive, and a client at another
address is still answered. The counterpart without the cap shows the same flood held in full.
"""

from __future__ import annotations

import contextlib
import re
import socket
import time
from pathlib import Path

import pytest

from components.service import haproxy_limits as limits
from tests.test_gate import HAPROXY, RIGHT, _named, client_address, connect
from tests.test_gate_hardening import _call, _closed_by_peer, _start
from tools.engine import Recording

if HAPROXY is None:
    pytestmark = pytest.mark.skip(reason="haproxy not installed (apt-get install haproxy)")

# More than one address may hold: the ones past it must be refused.
FLOOD = limits.PER_SOURCE_CONNECTIONS + 12
# Silent connections are closed after limits.REQUEST_SECONDS; a refusal comes at once.
REFUSED_WITHIN = 1.5


def _without_cap(config: str) -> str:
    """The config as the gate was before issue 44: no per-address count, no table."""
    config = re.sub(r"^    tcp-request connection .*\n", "", config, flags=re.M)
    return re.sub(rf"\nbackend {limits.SOURCES_TABLE}\n(    .*\n?)*", "\n", config)


def _flooded(config: str, dev: Recording, folder: Path) -> tuple[int, int, int]:
    """(held, refused) of one address's flood, and what another address's keyed request got
    while the flood held its connections."""
    folder.mkdir(parents=True)
    running, process = _start(config, dev, folder)
    try:
        flooder = client_address()
        opened: list[socket.socket] = []
        for _ in range(FLOOD):
            with contextlib.suppress(OSError):
                opened.append(connect(running.api_port, flooder, timeout=2))
        refused = _closed_by_peer(opened, time.monotonic() + REFUSED_WITHIN)
        other = _call(running, RIGHT)
        for s in opened:
            s.close()
        return len(opened) - len(refused), len(refused), other
    finally:
        process.terminate()
        process.wait(timeout=10)
        running.upstream.shutdown()


def test_one_address_holds_at_most_its_share_and_another_client_is_answered(
    dev: Recording, tmp_path: Path
) -> None:
    config = _named(dev, "gate-llm-config")["data"]["haproxy.cfg"]
    assert f"gt {limits.PER_SOURCE_CONNECTIONS}" in config, "the dev gate renders the cap"
    held, refused, other = _flooded(config, dev, tmp_path / "capped")
    assert held == limits.PER_SOURCE_CONNECTIONS and refused == FLOOD - held, (
        f"one address must hold at most {limits.PER_SOURCE_CONNECTIONS} of the API's "
        f"{limits.API_CONNECTIONS} connections, the rest refused at once: held {held}, "
        f"refused {refused} of {FLOOD}"
    )
    assert other == 200, f"a keyed client at another address must be answered: got {other}"
    held_before, refused_before, _ = _flooded(_without_cap(config), dev, tmp_path / "uncapped")
    assert (held_before, refused_before) == (FLOOD, 0), (
        "without the cap (the gate before issue 44) the same address holds every connection it "
        f"opens, so ten such floods fill the API: held {held_before}, refused {refused_before}"
    )


def test_behind_google_front_end_the_cap_is_not_set(run) -> None:  # noqa: ANN001
    """Every connection behind a Gateway comes from Google's front end: a cap would limit the
    front end's pool for all clients at once (haproxy_limits.PER_SOURCE_CONNECTIONS)."""
    from tests.test_gateway import domain_stack

    config = run(domain_stack()).named("gate-llm-config").inputs["data"]["haproxy.cfg"]
    assert "tcp-request connection" not in config and limits.SOURCES_TABLE not in config
