"""Scale from zero on the KEDA HTTP add-on the program vendors, run from the add-on's own Go
module (tools/real/mods/keda-http, built by tools/real/build at versions.env's
KEDA_HTTP_ADD_ON_VERSION): the property components/service/scale_to_zero.py relies on.

A sleeping model's first request waits in the interceptor until a replica is ready. The program
scales on `concurrency`, so that held request must itself be counted, and read by the scaler
through the interceptor's admin route, or KEDA never activates and the request ends in a 504
(kedacore/http-add-on#1692, reported for the `requestRate` metric of 0.15.0). The Go program
runs the interceptor's own chain (Counting around EndpointResolver, interceptor/proxy.go) and
the scaler's reader (queue.GetCounts); the scaler's IsActive is `any value > 0` of that count
(scaler/handlers.go, v0.15.0 lines 69-71 and 283-291, read, not run: package main).
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from components.platform import keda
from tests.real.conftest import require
from tests.real.test_toolchain import PINS


def _version_pinned() -> str:
    return PINS["KEDA_HTTP_ADD_ON_VERSION"]


@pytest.fixture(scope="module")
def run() -> dict[str, float]:
    """One run of the add-on's request path, read by every test below."""
    bin_dir = require("keda-http")
    done = subprocess.run(
        [str(bin_dir / "keda-http")], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"the add-on's request path failed: {done.stderr[-2000:]}"
    return json.loads(done.stdout)


def test_the_module_run_is_the_add_on_the_program_installs() -> None:
    """The add-on under test must be the one the program deploys: bumping the vendored manifest
    without the module (or the other way round) would test one release and ship another."""
    vendored = re.fullmatch(r"keda-add-ons-http-(.+)\.yaml", keda.HTTP_ADD_ON.name)
    assert vendored, keda.HTTP_ADD_ON.name
    assert f"v{vendored.group(1)}" == _version_pinned(), (
        f"components/platform/keda.py vendors the add-on {vendored.group(1)} but "
        f"tools/real/versions.env builds {_version_pinned()}: change both"
    )


def test_a_held_request_wakes_a_sleeping_model(run: dict[str, float]) -> None:
    """While no replica is ready the interceptor holds the request, and the scaler reads it as one
    request in flight: the `concurrency` metric KEDA activates on is 1, not 0. Once a replica is
    ready the request is answered and the count drops back to 0 (the model may sleep again)."""
    out = run
    assert out["heldConcurrency"] == 1, (
        f"the held request must count as in flight so KEDA wakes the model, read {out}"
    )
    assert not out["heldAnswered"], f"the request must wait for a replica, not fail at once: {out}"
    assert out["releasedStatus"] == 200, f"the held request must reach the replica: {out}"
    assert out["afterConcurrency"] == 0, f"an answered request must leave the count: {out}"


def test_the_rate_metric_would_not_wake_it_after_an_idle_hour(run: dict[str, float]) -> None:
    """Why the program must not scale on `requestRate` while it ships this release: one request
    after 40 idle minutes in an hour's window averages to 0 (rounded to 3 digits) where the same
    request in a fresh window reads 1. tests/test_scale_to_zero.py refuses the rate metric."""
    out = run
    assert out["freshRate"] == 1, out
    assert out["idleRate"] == 0, (
        "0.15.0's rate path rounds a lone request after a long idle to 0 (kedacore/http-add-on"
        f"#1692); if it no longer does, the rate metric may be allowed again: {out}"
    )
