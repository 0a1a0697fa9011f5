"""secret-echo: credentials and ciphertext must never be printed."""

from __future__ import annotations

import random
from typing import Any

from dev.fuzz.case import Mutation
from dev.fuzz.document import Secure
from dev.fuzz.mutations.registry import Doc, count_and_port, mapping, mutation
from dev.fuzz.planted import ciphertext, kubeconfig, token


@mutation("secret-echo")
def plain_kubeconfig_under_cluster(rng: random.Random, d: Doc) -> Mutation | None:
    """A kubeconfig pasted as plain text into cluster.kubeconfig (or a GKE stack's)."""
    cluster = d.cluster()
    if cluster is None:
        return None
    text, creds = kubeconfig(rng)
    if d.mode() == "existing":
        cluster.pop("context", None)
        d.cfg.pop("gke-gpu:kubeconfig", None)
    cluster["kubeconfig"] = text
    return Mutation(
        "secret-echo",
        "plain-kubeconfig-under-cluster",
        True,
        (("cluster.kubeconfig",),),
        plain_secrets=creds,
        writes=("cluster.context", "gke-gpu:kubeconfig"),
    )


@mutation("secret-echo")
def plain_kubeconfig_under_wrong_key(rng: random.Random, d: Doc) -> Mutation | None:
    text, creds = kubeconfig(rng)
    cluster = d.cluster()
    if cluster is not None and rng.random() < 0.5:
        key = rng.choice(["kubeConfig", "kubeconfigData", "credentials"])
        cluster[key] = text
        path = f"cluster.{key}"
    else:
        key = rng.choice(["kubeConfig", "kube-config", "credentials", "kubeconfig-data"])
        d.cfg[f"gke-gpu:{key}"] = text
        path = f"gke-gpu:{key}"
    return Mutation(
        "secret-echo", "plain-kubeconfig-under-wrong-key", True, ((path,),), plain_secrets=creds
    )


@mutation("secret-echo")
def secret_that_is_also_invalid(rng: random.Random, d: Doc) -> Mutation | None:
    """A secure value whose decrypted value is wrong too: the error names the path, not it."""
    places: list[tuple[str, Any, Any]] = []
    found = d.workload(rng)
    if found:
        i, w = found
        places += [(f"workloads[{i}].name", w, "name"), (f"workloads[{i}].image", w, "image")]
        places += count_and_port(i, w)
        if mapping(w, "env") is None:
            return None  # a wrong shape an earlier mutation put there stays
        places.append((f"workloads[{i}].env", w["env"], "HF TOKEN!"))
    found = d.pool(rng)
    if found and isinstance(found[1].get("gpu"), dict):
        i, pool = found
        places.append((f"nodePools[{i}].gpu.type", pool["gpu"], "type"))
    cluster = d.cluster()
    if cluster is not None and d.gke():
        places.append(("cluster.name", cluster, "name"))
    if d.gke():  # an existing cluster needs no project: its gcp:* keys are not this program's
        places.append(("gcp:project", d.cfg, "gcp:project"))
    if not places:
        return None
    path, container, key = rng.choice(places)
    container[key] = Secure(ciphertext(rng), token(rng, "Bad_Secret_"))
    return Mutation("secret-echo", "secret-that-is-also-invalid", True, ((path,),))


@mutation("secret-echo")
def unused_secret_key(rng: random.Random, d: Doc) -> Mutation | None:
    """`gke-gpu:hfTokn: {secure: ...}` that nothing reads: an unknown key, value not shown."""
    key = rng.choice(["hfTokn", "apiKey", "hf-token", "secretToken"])
    d.cfg[f"gke-gpu:{key}"] = Secure(ciphertext(rng), token(rng))
    return Mutation("secret-echo", "unused-secret-key", True, ((f"gke-gpu:{key}",),))


@mutation("secret-echo")
def secret_under_misspelled_key(rng: random.Random, d: Doc) -> Mutation | None:
    """`evn: {HF_TOKEN: {secure: ...}}`: an unknown key whose value holds a secret."""
    found = d.workload(rng)
    if not found:
        return None
    i, w = found
    w["evn"] = {"HF_TOKEN": Secure(ciphertext(rng), token(rng))}
    return Mutation("secret-echo", "secret-under-misspelled-key", True, ((f"workloads[{i}].evn",),))
