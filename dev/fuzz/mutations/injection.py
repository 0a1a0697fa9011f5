"""injection: a value that would be syntax where the program writes it. A probe path in the gate's
haproxy.cfg (`"${GATE_API_KEY}"` there expands to the key), a gate path in its regular expression,
a folder or adapter path in the container's env or args (Kubernetes expands `$(VLLM_API_KEY)`):
each must be refused with its key path, before anything is rendered.
"""

from __future__ import annotations

import random
from typing import Any

from dev.fuzz.case import Mutation
from dev.fuzz.mutations.registry import Doc, mapping, mutation

CLASS = "injection"
# What would pull the key into a file or a log: HAProxy's environment expansion (inside double
# quotes), Kubernetes' dependent environment variables, a comment, a word break, an escape.
IN_HAPROXY = ('"${GATE_API_KEY}"', "$(VLLM_API_KEY)", "a#b", "a b", "a\\b", "a'b")
IN_ARGS = ("$(VLLM_API_KEY)", '"${GATE_API_KEY}"', "a b", "a'b")


def _workload(rng: random.Random, d: Doc, *, needs: str | None = None) -> tuple[int, Any] | None:
    """A workload (one that has `needs` when given), or None."""
    found = [
        (i, w) for i, w in d.items("workloads") if needs is None or isinstance(w.get(needs), dict)
    ]
    return rng.choice(found) if found else None


@mutation(CLASS)
def probe_path_injection(rng: random.Random, d: Doc) -> Mutation | None:
    """probe.path written into `http-check send uri` of a cache-aware gate and kubelet's probes."""
    found = _workload(rng, d)
    if not found:
        return None
    i, w = found
    probe = mapping(w, "probe")
    if probe is None:
        return None  # a wrong shape an earlier mutation put there stays
    probe["path"] = "/health?x=" + rng.choice(IN_HAPROXY)
    return Mutation(CLASS, "probe-path-injection", True, ((f"workloads[{i}].probe.path",),))


@mutation(CLASS)
def gate_path_injection(rng: random.Random, d: Doc) -> Mutation | None:
    """An expose.paths entry, which becomes part of the gate's allowlist expression."""
    found = _workload(rng, d, needs="expose")
    if not found:
        return None
    i, w = found
    paths = ["/v1/models", "/v1/" + rng.choice(IN_HAPROXY)]
    w["expose"]["paths"] = paths
    return Mutation(CLASS, "gate-path-injection", True, ((f"workloads[{i}].expose.paths[1]",),))


@mutation(CLASS)
def adapter_path_injection(rng: random.Random, d: Doc) -> Mutation | None:
    """An adapter's path, which becomes `--lora-modules name=path` in the server's args."""
    found = _workload(rng, d)
    if not found:
        return None
    i, w = found
    adapters = w.get("adapters")
    if not isinstance(adapters, list) or not adapters or not isinstance(adapters[0], dict):
        adapters = w["adapters"] = [{"name": "sql"}]
    adapters[0]["path"] = "/models/adapters/" + rng.choice(IN_ARGS)
    return Mutation(CLASS, "adapter-path-injection", True, ((f"workloads[{i}].adapters[0].path",),))


@mutation(CLASS)
def mount_path_injection(rng: random.Random, d: Doc) -> Mutation | None:
    """A folder that becomes env values (cache.path: HF_HOME, VLLM_CACHE_ROOT) or the model's
    argument (modelCache.mountPath)."""
    found = _workload(rng, d)
    if not found:
        return None
    i, w = found
    field, key = (
        ("modelCache", "mountPath") if isinstance(w.get("modelCache"), dict) else ("cache", "path")
    )
    container = mapping(w, field)
    if container is None:
        return None
    if field == "cache":
        container.setdefault("size", "30Gi")  # a cache needs its size: only the path is wrong
    container[key] = "/data/" + rng.choice(IN_ARGS)
    return Mutation(CLASS, "mount-path-injection", True, ((f"workloads[{i}].{field}.{key}",),))
