"""bad-input: values the config layer accepted."""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from typing import Any

from dev.fuzz.case import Mutation
from dev.fuzz.document import DupDict, Raw
from dev.fuzz.mutations.registry import (
    Doc,
    count_and_port,
    mapping,
    mutation,
    set_one,
    wname,
)


def _int_fields(d: Doc, rng: random.Random) -> list[tuple[str, dict[Any, Any], str]]:
    """(path, container, key) of integer settings present in or addable to this stack."""
    fields: list[tuple[str, dict[Any, Any], str]] = []
    found = d.workload(rng)
    if found:
        i, w = found
        p = f"workloads[{i}]"
        fields += [(f"{p}.replicas", w, "replicas"), (f"{p}.port", w, "port")]
        fields += count_and_port(i, w)
        if isinstance(w.get("probe"), dict):
            fields.append((f"{p}.probe.startupSeconds", w["probe"], "startupSeconds"))
    found = d.pool(rng)
    if found:
        i, pool = found
        fields += [(f"nodePools[{i}].maxNodes", pool, "maxNodes")]
        if isinstance(pool.get("gpu"), dict):
            fields.append((f"nodePools[{i}].gpu.count", pool["gpu"], "count"))
    cluster = d.cluster()
    if cluster is not None and d.mode() == "standard":
        system = cluster.setdefault("systemPool", {})
        if isinstance(system, dict):
            fields.append(("cluster.systemPool.nodes", system, "nodes"))
    return fields


def _set_int(
    rng: random.Random, d: Doc, values: Sequence[Any], cls: str, name: str
) -> Mutation | None:
    """One integer setting of this stack set to one of `values`."""
    fields = _int_fields(d, rng)
    if not fields:
        return None
    path, container, key = rng.choice(fields)
    container[key] = rng.choice(values)
    return Mutation(cls, name, True, ((path,),))


@mutation("bad-input")
def bool_for_int(rng: random.Random, d: Doc) -> Mutation | None:
    """`replicas: true` is a boolean, not 1."""
    words = [Raw("true", True), Raw("false", False), Raw("True", True)]
    return _set_int(rng, d, words, "bad-input", "bool-for-int")


@mutation("bad-input")
def float_for_int(rng: random.Random, d: Doc) -> Mutation | None:
    """`replicas: 1.5`, `count: 1.0`, `1e3` (a float in YAML 1.2)."""
    floats = [1.5, 2.5, 1.0, 0.5, Raw("1e3", 1000.0)]
    return _set_int(rng, d, floats, "bad-input", "float-for-int")


@mutation("bad-input")
def yaml11_word_for_bool_or_int(rng: random.Random, d: Doc) -> Mutation | None:
    """`expose.port: on` (it became port 1), `spot: yes`, `deletionProtection: off`: strings."""
    places: list[tuple[str, dict[Any, Any], str]] = []
    found = d.workload(rng)
    if found:
        i, w = found
        places += [(f"workloads[{i}].spot", w, "spot"), (f"workloads[{i}].replicas", w, "replicas")]
        if isinstance(w.get("expose"), dict):
            places += [(f"workloads[{i}].expose.port", w["expose"], "port")] * 3
    cluster = d.cluster()
    if cluster is not None and d.gke():
        places += [
            ("cluster.deletionProtection", cluster, "deletionProtection"),
            ("cluster.privateNodes", cluster, "privateNodes"),
        ]
    if not places:
        return None
    path, container, key = rng.choice(places)
    word = rng.choice(["on", "off", "yes", "no", "On", "y"])
    container[key] = Raw(word, word)
    return Mutation("bad-input", "yaml11-word-for-bool-or-int", True, ((path,),))


@mutation("bad-input", engine=False)
def duplicate_key(rng: random.Random, d: Doc) -> Mutation | None:
    """The same key twice in one mapping: the CLI refuses the stack file."""
    choice = rng.randrange(4)
    found = d.workload(rng)
    cluster = d.cluster()
    if choice == 1 and cluster is not None:
        dup = DupDict(cluster)
        key = rng.choice([k for k in cluster if isinstance(k, str)] or ["mode"])
        dup.dups.append((key, "standard" if key == "mode" else "gpu-two"))
        d.cfg["gke-gpu:cluster"] = dup
        path = "gke-gpu:cluster"
    elif choice == 2 and found:
        i, w = found
        dup = DupDict(w)
        dup.dups.append(("image", "vllm/vllm-openai:v0.6.3"))
        d.cfg["gke-gpu:workloads"][i] = dup
        path = f"workloads[{i}]"
    elif choice == 3 and found:
        i, w = found
        env = DupDict(w["env"] if isinstance(w.get("env"), dict) else {"LOG_LEVEL": "info"})
        env.dups.append(("LOG_LEVEL", "debug"))
        w["env"] = env
        path = f"workloads[{i}].env"
    else:
        top = DupDict(d.cfg)
        key = rng.choice([k for k in d.cfg if isinstance(k, str)])
        top.dups.append((key, copy.deepcopy(d.cfg[key])))
        d.case.document["config"] = top
        path = key
    # The CLI refuses the file as YAML (go-yaml v3: "mapping key ... already defined at line N").
    return Mutation("bad-input", "duplicate-key", True, ((path,),), text_only=True, unreadable=True)


@mutation("bad-input")
def reserved_namespace(rng: random.Random, d: Doc) -> Mutation | None:
    """The initial namespaces Kubernetes itself uses (kubernetes.io/docs/concepts/overview/
    working-with-objects/namespaces/#initial-namespaces, checked 2026-11-22)."""
    d.cfg["gke-gpu:namespace"] = rng.choice(["kube-system", "kube-public", "kube-node-lease"])
    return Mutation("bad-input", "reserved-namespace", True, (("gke-gpu:namespace",),))


@mutation("bad-input")
def trailing_newline(rng: random.Random, d: Doc) -> Mutation | None:
    """`name: "llm\\n"` passed `re.match(... $)`: `$` matches before a final newline."""
    places: list[tuple[str, Any, Any, str]] = []
    found = d.workload(rng)
    if found and wname(found[1]):
        i, w = found
        places.append((f"workloads[{i}].name", w, "name", wname(w)))
    found = d.pool(rng)
    if found and isinstance(found[1].get("name"), str):
        i, pool = found
        places.append((f"nodePools[{i}].name", pool, "name", pool["name"]))
        zones = pool.get("zones")
        if isinstance(zones, list) and zones and isinstance(zones[0], str):
            places.append((f"nodePools[{i}].zones[0]", zones, 0, zones[0]))
    cluster = d.cluster()
    if cluster is not None and d.gke():
        places.append(("cluster.name", cluster, "name", str(cluster.get("name") or "gpu-dev")))
        places.append(("gcp:region", d.cfg, "gcp:region", d.region()))
    places.append(("gke-gpu:namespace", d.cfg, "gke-gpu:namespace", "gke-gpu"))
    path = set_one(rng, places, lambda value: value + "\n")
    if path is None:
        return None
    return Mutation("bad-input", "trailing-newline", True, ((path,),))


@mutation("bad-input")
def invalid_project(rng: random.Random, d: Doc) -> Mutation | None:
    """Project IDs: 6-30 lowercase letters, digits and hyphens, starting with a letter, not
    ending with a hyphen (cloud.google.com/resource-manager/docs/creating-managing-projects,
    checked 2026-11-22)."""
    if not d.gke():
        return None
    d.cfg["gcp:project"] = rng.choice(
        ["Acme_ML", "acme", "1acme-ml", "acme-ml-", "ACME-ML-DEV", "acme ml dev", "a" * 31, ""]
    )
    return Mutation("bad-input", "invalid-project", True, (("gcp:project",),))


@mutation("bad-input")
def invalid_image(rng: random.Random, d: Doc) -> Mutation | None:
    """Not an image reference (distribution/reference reference.go grammar: lowercase path
    components, a tag of [\\w][\\w.-]{0,127}, a digest of at least 32 hex digits)."""
    found = d.workload(rng)
    if not found:
        return None
    i, w = found
    w["image"] = rng.choice(
        [
            "vllm/vllm-openai: v0.6.4",
            "vllm openai:v0.6.4",
            "vllm/vllm-openai:v0.6.4 --port 8000",
            "",
            " ",
            "VLLM/vllm-openai:v0.6.4",
            "vllm/vllm-openai:",
            "vllm/vllm-openai:v0.6.4\n",
            "vllm/vllm-openai@sha256:abc",
        ]
    )
    return Mutation("bad-input", "invalid-image", True, ((f"workloads[{i}].image",),))


@mutation("bad-input")
def invalid_quantity(rng: random.Random, d: Doc) -> Mutation | None:
    """Zero, negative, non-ASCII-digit (`٣Gi`: Python's `\\d` matches Arabic-Indic digits) or
    unit-less-suffix quantities."""
    found = d.workload(rng)
    if not found:
        return None
    i, w = found
    resources = mapping(w, "resources")
    if resources is None:
        return None
    if rng.random() < 0.5:
        resources["cpu"] = rng.choice(["0", "0m", "٤", "-1", "0.0", "４"])
        path = f"workloads[{i}].resources.cpu"
    else:
        resources["memory"] = rng.choice(["0", "0Gi", "٣Gi", "16 Gi", "16GB", "-16Gi"])
        path = f"workloads[{i}].resources.memory"
    return Mutation("bad-input", "invalid-quantity", True, ((path,),))


@mutation("bad-input")
def huge_integer(rng: random.Random, d: Doc) -> Mutation | None:
    """10**30 replicas, GPUs, nodes or port."""
    return _set_int(rng, d, [10**30, 2**63, 10**18], "bad-input", "huge-integer")


@mutation("bad-input")
def negative_integer(rng: random.Random, d: Doc) -> Mutation | None:
    return _set_int(rng, d, [-1, -3, 0 - 2**31], "bad-input", "negative-integer")


@mutation("bad-input")
def selector_override(rng: random.Random, d: Doc) -> Mutation | None:
    """A nodeSelector key the program sets itself: it would steer pods off their GPU capacity."""
    found = d.workload(rng)
    if not found or not d.gke():
        return None
    i, w = found
    gpu = w.get("gpu")
    gpu = gpu if isinstance(gpu, dict) else {}
    labels = {
        "cloud.google.com/gke-accelerator": (
            "nvidia-tesla-t4" if gpu.get("type") != "nvidia-tesla-t4" else "nvidia-l4"
        )
    }
    if d.mode() == "standard":
        labels["cloud.google.com/gke-nodepool"] = "other-pool"
    key = rng.choice(sorted(labels))
    if mapping(w, "nodeSelector") is None:
        return None  # a wrong shape an earlier mutation put there stays
    w["nodeSelector"][key] = labels[key]
    return Mutation("bad-input", "selector-override", True, ((f"workloads[{i}].nodeSelector",),))


@mutation("bad-input")
def service_collision(rng: random.Random, d: Doc) -> Mutation | None:
    """Two workloads with one name: their Services (and workload objects) would be one."""
    found = d.workload(rng)
    if not found or not wname(found[1]):
        return None
    i, w = found
    twin = copy.deepcopy(w)
    twin["image"] = "vllm/vllm-openai:v0.6.3"
    workloads = d.cfg["gke-gpu:workloads"]
    workloads.append(twin)
    n = len(workloads) - 1
    return Mutation(
        "bad-input", "service-collision", True, ((f"workloads[{n}]", f"workloads[{i}]"),)
    )


@mutation("bad-input")
def stack_name_without_cluster_name(rng: random.Random, d: Doc) -> Mutation | None:
    """A stack named `Prod_EU` and no cluster.name: the derived GKE name must still be valid.
    Pulumi stack names allow letters, digits, '_', '.' and '-' (tools/render.py checks that)."""
    cluster = d.cluster()
    if not d.gke():
        return None
    if cluster is not None:
        cluster.pop("name", None)
    d.case.stack = rng.choice(
        ["Prod_EU", "Dev.Team", "my_stack", "UPPER", "9lives", "x" * 60, "gpu-", "a.b-c_d"]
    )
    return Mutation(
        "bad-input",
        "stack-name-without-cluster-name",
        False,
        checks=(("cluster-name-valid",),),
        writes=("cluster.name",),
    )


@mutation("bad-input")
def unknown_key_in_namespace(rng: random.Random, d: Doc) -> Mutation | None:
    key = rng.choice(["clusters", "nodepools", "workload", "Cluster", "region", "project", "hfTok"])
    d.cfg[f"gke-gpu:{key}"] = rng.choice(["x", {"mode": "standard"}, [1]])
    return Mutation("bad-input", "unknown-key-in-namespace", True, ((f"gke-gpu:{key}",),))


@mutation("bad-input")
def look_alike_namespace(rng: random.Random, d: Doc) -> Mutation | None:
    """`gke_gpu:cluster` instead of `gke-gpu:cluster`: silently ignored, the defaults win."""
    key = d.namespaced_key(rng)
    if key is None:
        return None
    namespace = rng.choice(["gke_gpu", "gkegpu", "GKE-GPU", "gke.gpu", "gke-gpus"])
    moved = f"{namespace}:{key.removeprefix('gke-gpu:')}"
    d.cfg[moved] = d.cfg.pop(key)
    return Mutation("bad-input", "look-alike-namespace", True, ((moved,),), clobbers=key)


@mutation("bad-input")
def unnamespaced_key(rng: random.Random, d: Doc) -> Mutation | None:
    key = d.namespaced_key(rng)
    if key is None:
        return None
    bare = key.removeprefix("gke-gpu:")
    d.cfg[bare] = d.cfg.pop(key)
    # The CLI itself refuses a key without a namespace when it loads the stack file
    # (pulumi/pulumi sdk/go/common/resource/config/key.go, ParseKey: "configuration keys should
    # be of the form `<namespace>:<name>`"), so only this mistake can be reported.
    return Mutation(
        "bad-input",
        "unnamespaced-key",
        True,
        ((bare, f"config.{bare}"),),
        clobbers=key,
        structural=True,
    )


@mutation("bad-input")
def unknown_nested_key(rng: random.Random, d: Doc) -> Mutation | None:
    places: list[tuple[str, dict[Any, Any], str]] = []
    found = d.workload(rng)
    if found:
        i, w = found
        places += [(f"workloads[{i}].replica", w, "replica"), (f"workloads[{i}].gpus", w, "gpus")]
    found = d.pool(rng)
    if found:
        i, pool = found
        places.append((f"nodePools[{i}].maxNode", pool, "maxNode"))
    cluster = d.cluster()
    if cluster is not None:
        places.append(("cluster.nmae", cluster, "nmae"))
    if not places:
        return None
    path, container, key = rng.choice(places)
    container[key] = 2
    return Mutation("bad-input", "unknown-nested-key", True, ((path,),))


@mutation("bad-input")
def enum_case(rng: random.Random, d: Doc) -> Mutation | None:
    places: list[tuple[str, dict[Any, Any], str, str]] = []
    found = d.workload(rng)
    if found:
        i, w = found
        places.append((f"workloads[{i}].kind", w, "kind", "deployment"))
    found = d.pool(rng)
    if found:
        i, pool = found
        places.append((f"nodePools[{i}].driver", pool, "driver", "Latest"))
    cluster = d.cluster()
    if cluster is not None and d.gke():
        places.append(("cluster.releaseChannel", cluster, "releaseChannel", "regular"))
    path = set_one(rng, places)
    if path is None:
        return None
    return Mutation("bad-input", "enum-case", True, ((path,),))
