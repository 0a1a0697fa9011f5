"""hide-another: one problem must not hide the next."""

from __future__ import annotations

import random

from dev.fuzz.case import Mutation
from dev.fuzz.mutations.registry import Doc, mapping, mutation


@mutation("hide-another")
def pool_without_name_and_more(rng: random.Random, d: Doc) -> Mutation | None:
    """A pool without `name` (which gets a default) and an invalid count, zone or driver: each
    of those is reported."""
    found = d.pool(rng)
    if not found:
        return None
    i, pool = found
    pool.pop("name", None)
    gpu = pool.get("gpu")
    mistakes: list[tuple[str, ...]] = []
    options = ["zone", "driver"] + (["count"] if isinstance(gpu, dict) else [])
    for what in rng.sample(options, rng.randint(1, len(options))):
        if what == "count" and isinstance(gpu, dict):
            # nvidia-l4 pools take 1, 2, 4 or 8 GPUs per node (catalog/machines.py, G2 shapes).
            gpu["count"] = 3 if gpu.get("type") == "nvidia-l4" else 1000
            mistakes.append((f"nodePools[{i}].gpu.count",))
        elif what == "zone":
            pool["zones"] = [
                "europe-west4-a" if not d.region().startswith("europe") else "us-east1-b"
            ]
            mistakes.append((f"nodePools[{i}].zones",))
        else:
            pool["driver"] = "newest"
            mistakes.append((f"nodePools[{i}].driver",))
    return Mutation(
        "hide-another",
        "pool-without-name-and-more",
        True,
        tuple(mistakes),
        writes=(f"nodePools[{i}].name",),
    )


@mutation("hide-another")
def negative_replicas_and_unset_secret(rng: random.Random, d: Doc) -> Mutation | None:
    """`replicas: -1` and a secretEnv whose config key was never set: both are reported."""
    found = d.workload(rng)
    if not found:
        return None
    i, w = found
    w["replicas"] = -1
    w["secretEnv"] = {"HF_TOKEN": "hfTokenNeverSet"}
    return Mutation(
        "hide-another",
        "negative-replicas-and-unset-secret",
        True,
        ((f"workloads[{i}].replicas",), (f"workloads[{i}].secretEnv",)),
    )


@mutation("hide-another")
def empty_image_and_more(rng: random.Random, d: Doc) -> Mutation | None:
    found = d.workload(rng)
    if not found:
        return None
    i, w = found
    w["image"] = ""
    w["port"] = rng.choice([0, 70000])
    if isinstance(w.get("gpu"), dict):
        w["gpu"]["count"] = "two"
    mistakes = [(f"workloads[{i}].image",), (f"workloads[{i}].port",)]
    if isinstance(w.get("gpu"), dict):
        mistakes.append((f"workloads[{i}].gpu.count",))
    return Mutation("hide-another", "empty-image-and-more", True, tuple(mistakes))


@mutation("hide-another")
def user_key_as_written(rng: random.Random, d: Doc) -> Mutation | None:
    """A wrong value under a key the user chose (`env.HF_TOKEN`): named as written, not
    rewritten (`env.hfToken`)."""
    found = d.workload(rng)
    if not found:
        return None
    i, w = found
    if rng.random() < 0.5:
        if mapping(w, "env") is None:
            return None  # a wrong shape an earlier mutation put there stays
        key = rng.choice(["HF_TOKEN", "MAX_MODEL_LEN", "hf_home"])
        w["env"][key] = ["a", "b"]
        path = f"workloads[{i}].env.{key}"
    else:
        if mapping(w, "nodeSelector") is None:
            return None  # a wrong shape an earlier mutation put there stays
        key = rng.choice(["team_name", "gpu_pool"])
        w["nodeSelector"][key] = ["a"]
        path = f"workloads[{i}].nodeSelector.{key}"
    return Mutation("hide-another", "user-key-as-written", True, ((path,),))
