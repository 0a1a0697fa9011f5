"""How KEDA's HTTP add-on interceptor stops without cutting what it holds (issue 31, F6): a request
held while a model wakes, or a long answer. components/platform/keda.py applies it to the vendored
interceptor Deployment.
"""

from __future__ import annotations

import copy
from typing import Any

# On SIGTERM the interceptor keeps serving for KEDA_HTTP_SHUTDOWN_DELAY (default 5s) while its
# readiness fails, then closes its listener and lets requests in flight finish for at most
# KEDA_HTTP_DRAIN_TIMEOUT (default 30s; 0 waits without limit) (kedacore/http-add-on@4ea8a863,
# v0.15.0: interceptor/config/serving.go 59-67, interceptor/main.go 271-291, pkg/http/server.go
# 82-108). The vendored pod gets 45 s (terminationGracePeriodSeconds) and the default drain, so a
# rollout or a drained node would cut every request held while a model wakes, and every long
# answer. The program sets both from the longest a request can take there.
SHUTDOWN_DELAY_SECONDS = 5
DRAIN_TIMEOUT_ENV = "KEDA_HTTP_DRAIN_TIMEOUT"
DRAIN_MARGIN_SECONDS = 30
INTERCEPTOR = "keda-add-ons-http-interceptor"


def held_seconds(wake_timeout_seconds: int, generation_seconds: int) -> int:
    """The longest the interceptor spends on one request before the answer streams: holding it
    until a replica is ready (the HTTPScaledObject's timeouts.conditionWait, the wake timeout),
    then waiting for the replica's response headers (timeouts.responseHeader)."""
    return wake_timeout_seconds + generation_seconds


def drained(obj: dict[str, Any], held: int) -> dict[str, Any]:
    """The interceptor's Deployment, given time to finish a request it holds (`held` seconds,
    held_seconds of the stack's slowest sleeping model) when it stops."""
    if obj["kind"] != "Deployment" or obj["metadata"]["name"] != INTERCEPTOR or held <= 0:
        return obj
    obj = copy.deepcopy(obj)
    pod = obj["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    container.setdefault("env", []).append(
        {"name": DRAIN_TIMEOUT_ENV, "value": f"{held + DRAIN_MARGIN_SECONDS}s"}
    )
    pod["terminationGracePeriodSeconds"] = SHUTDOWN_DELAY_SECONDS + held + 2 * DRAIN_MARGIN_SECONDS
    return obj
