"""nested-secret: a `secure:` value inside a structured key (`config set --path --secret`)."""

from __future__ import annotations

import random
from typing import Any

from dev.fuzz.case import Mutation
from dev.fuzz.document import Secure
from dev.fuzz.mutations.registry import Doc, mapping, mutation, set_one, wname
from dev.fuzz.planted import ciphertext, kubeconfig, token


@mutation("nested-secret")
def secure_env_value(rng: random.Random, d: Doc) -> Mutation | None:
    """`pulumi config set --path --secret 'gke-gpu:workloads[0].env.HF_TOKEN'`: the workload
    stays, and the value reaches it through a Secret."""
    found = d.workload(rng)
    if not found or not wname(found[1]):
        return None
    i, w = found
    env = rng.choice(["HF_TOKEN", "API_KEY", "WANDB_API_KEY", "NGC_API_KEY"])
    if mapping(w, "env") is None:
        return None  # a wrong shape an earlier mutation put there stays
    w["env"][env] = Secure(ciphertext(rng), token(rng))
    name = wname(w)
    return Mutation(
        "nested-secret",
        "secure-env-value",
        False,
        checks=(("workload-kept", name), ("secret-env", name, env)),
        writes=(f"workloads[{i}].env.{env}",),
    )


@mutation("nested-secret")
def secure_kubeconfig(rng: random.Random, d: Doc) -> Mutation | None:
    """`pulumi config set --path --secret gke-gpu:cluster.kubeconfig "$(cat ~/.kube/config)"`."""
    cluster = d.cluster()
    if cluster is None or d.mode() != "existing":
        return None
    cluster.pop("context", None)
    d.cfg.pop("gke-gpu:kubeconfig", None)
    text, creds = kubeconfig(rng)
    cluster["kubeconfig"] = Secure(ciphertext(rng), text, creds)
    return Mutation(
        "nested-secret",
        "secure-kubeconfig",
        False,
        checks=(("kubeconfig-secret",),),
        writes=("cluster.context", "cluster.kubeconfig", "gke-gpu:kubeconfig"),
    )


@mutation("nested-secret", engine=False)
def secure_where_no_secret_belongs(rng: random.Random, d: Doc) -> Mutation | None:
    """A secure value for an image, a count, a name: an error naming the key path only. Only
    the stack file shows which value was secure (the engine marks the whole top-level key)."""
    places: list[tuple[str, dict[Any, Any], str, str]] = []
    found = d.workload(rng)
    if found:
        i, w = found
        places += [
            (f"workloads[{i}].image", w, "image", "vllm/vllm-openai:v0.6.4"),
            (f"workloads[{i}].name", w, "name", wname(w) or "llm"),
        ]
        if isinstance(w.get("gpu"), dict):
            places.append((f"workloads[{i}].gpu.count", w["gpu"], "count", "1"))
        if isinstance(w.get("expose"), dict):
            places.append((f"workloads[{i}].expose.port", w["expose"], "port", "80"))
    found = d.pool(rng)
    if found:
        i, pool = found
        places.append((f"nodePools[{i}].name", pool, "name", "l4"))
    cluster = d.cluster()
    if cluster is not None and d.gke():
        places.append(("cluster.name", cluster, "name", "gpu-dev"))
    path = set_one(rng, places, lambda plaintext: Secure(ciphertext(rng), plaintext))
    if path is None:
        return None
    return Mutation(
        "nested-secret", "secure-where-no-secret-belongs", True, ((path,),), text_only=True
    )
