"""Every default of the config in one place: what a stack gets for what it does not say."""

from __future__ import annotations

from typing import Any

from ..facts import allocatable, pins
from .schema import Mode

# The pinned vLLM OpenAI server (components/facts/pins.py: version, CUDA build and driver it needs).
DEFAULT_IMAGE = pins.VLLM_IMAGE
# A small open model (Apache-2.0, no Hugging Face token needed) that fits one L4 with room to spare.
DEFAULT_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
DEFAULT_NAMESPACE = "gke-gpu"
# Room for the default model's weights plus vLLM's compile caches (components/facts/allocatable.py
# DEFAULT_MODEL_CACHE explains the figure).
DEFAULT_CACHE_SIZE = allocatable.DEFAULT_MODEL_CACHE
# The longest a model server may be silent on one request before the gate gives up (its `timeout
# server`; a long generation streams tokens, so this is the gap between chunks) and, for a model
# that sleeps, how long KEDA's interceptor waits for the replica's response headers.
GENERATION_SECONDS = 600
# The longest a streamed answer or an upgraded connection (a WebSocket) may last: the gate's
# `timeout tunnel` (a quiet WebSocket's limit, components/service/haproxy_limits.py) and, behind a
# Gateway, the load balancer's backend timeout, which Google's front end applies to a request's
# whole life, streamed or upgraded (components/expose/gateway.py).
STREAM_SECONDS = 3600


def default_workloads(mode: Mode | None = "autopilot") -> list[dict[str, Any]]:
    """The workload a stack gets when it names none: an OpenAI-compatible vLLM server on 1 GPU.

    On GKE it asks for one L4 on Spot; an existing cluster has neither GKE accelerator labels
    nor Spot nodes, so there it asks for one GPU of whatever kind the cluster has.
    """
    gke = mode != "existing"
    workload: dict[str, Any] = {
        "name": "llm",
        "kind": "Deployment",
        "image": DEFAULT_IMAGE,
        "gpu": {"type": "nvidia-l4", "count": 1} if gke else {"count": 1},
        # The model is vLLM's positional argument (`--model` is deprecated, rules/vllm.py).
        "args": [DEFAULT_MODEL, "--max-model-len", "4096"],
        "port": 8000,
        "probe": {"path": "/health"},
        # Weights and compile caches go to a per-pod disk, not the container filesystem:
        # Autopilot's default ephemeral-storage request is 1 GiB (autopilot-resource-requests).
        "cache": {"size": DEFAULT_CACHE_SIZE},
        "expose": {"port": 443},
    }
    if gke:
        workload["spot"] = True
    return [workload]


# The uid (and gid) workload containers run as unless workloads[].runAsUser says otherwise: not
# root, so the namespace can enforce Pod Security "restricted"; 10000 or above, so it is no user
# of the node (checkov CKV_K8S_40); and not 65534 (nobody), the Cloud Storage FUSE sidecar's user
# (components/service/workload.py).
RUN_AS_USER = 10001

# Production's maintenance window (cluster.maintenance.window unless the stack sets one): GKE may
# upgrade on Saturdays and Sundays from 01:00 to 13:00 UTC, 24 hours a week, so every 32 days hold
# at least 96 hours in 12-hour stretches (GKE wants 48 hours in stretches of 4 or more,
# rules/maintenance.py). 2026-01-03 is a Saturday; only the time of day and the length count.
PRODUCTION_MAINTENANCE_WINDOW = {
    "start": "2026-01-03T01:00:00Z",
    "end": "2026-01-03T13:00:00Z",
    "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU",
}
