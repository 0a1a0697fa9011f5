"""crash: shapes that crashed the render (exit 1 with a traceback), now config errors."""

from __future__ import annotations

import random
from typing import Any

from dev.fuzz.case import KNOWN_KEYS, Mutation
from dev.fuzz.document import Raw
from dev.fuzz.mutations.registry import Doc, mapping, mutation, set_one, wname


@mutation("crash")
def unquoted_date(rng: random.Random, d: Doc) -> Mutation | None:
    """`BUILD_DATE: 2024-01-01` is a string to the CLI (YAML 1.2), not a date."""
    found = d.workload(rng)
    if not found or not wname(found[1]):
        return None
    i, w = found
    date = f"20{rng.randint(10, 39)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if rng.random() < 0.7:
        if mapping(w, "env") is None:
            return None  # a wrong shape an earlier mutation put there stays
        w["env"]["BUILD_DATE"] = Raw(date, date)
        checks: tuple[tuple[str, ...], ...] = (("env-value", wname(w), "BUILD_DATE", date),)
        written = f"workloads[{i}].env.BUILD_DATE"
    else:
        args = w.setdefault("args", [])
        if not isinstance(args, list):
            return None
        args += ["--since", Raw(date, date)]
        checks = (("workload-kept", wname(w)),)
        written = f"workloads[{i}].args"
    return Mutation("crash", "unquoted-date", False, checks=checks, writes=(written,))


@mutation("crash")
def yaml11_word_in_env(rng: random.Random, d: Doc) -> Mutation | None:
    """`on`, `yes`, `off`, `no` are strings in YAML 1.2 (go-yaml v3 resolve.go: only true/false
    are booleans), so an env value `on` stays the string "on"."""
    found = d.workload(rng)
    if not found or not wname(found[1]):
        return None
    i, w = found
    word = rng.choice(["on", "off", "yes", "no", "y", "n", "On", "NO"])
    if mapping(w, "env") is None:
        return None  # a wrong shape an earlier mutation put there stays
    w["env"]["FEATURE_FLAG"] = Raw(word, word)
    return Mutation(
        "crash",
        "yaml11-word-in-env",
        False,
        checks=(("env-value", wname(w), "FEATURE_FLAG", word),),
        writes=(f"workloads[{i}].env.FEATURE_FLAG",),
    )


@mutation("crash")
def wrong_shape_top_level(rng: random.Random, d: Doc) -> Mutation | None:
    """`nodePools: true`, `workloads: {name: x}`, `cluster: 5`: a config error, not a crash."""
    key = rng.choice(KNOWN_KEYS)
    shapes: dict[str, list[Any]] = {
        "cluster": [Raw("true", True), 5, ["standard"], "standard"],
        "nodePools": [Raw("true", True), Raw("yes", "yes"), 5, {"name": "l4"}, [5], ["l4"]],
        "workloads": [Raw("true", True), {"name": "llm"}, [7], "llm", [[1]]],
        "namespace": [["gke-gpu"], {"name": "gke-gpu"}],
        "devicePlugin": [[1], Raw("true", True), 3.5],
    }
    d.cfg[f"gke-gpu:{key}"] = rng.choice(shapes[key])
    path = f"gke-gpu:{key}"
    return Mutation("crash", "wrong-shape-top-level", True, ((path,),), clobbers=path)


@mutation("crash")
def wrong_shape_nested(rng: random.Random, d: Doc) -> Mutation | None:
    """A list where a mapping belongs, a string where a list belongs, and so on."""
    places: list[tuple[str, Any, Any, Any]] = []
    found = d.workload(rng)
    if found:
        i, w = found
        p = f"workloads[{i}]"
        places += [
            (f"{p}.env", w, "env", ["HF_HOME=/data"]),
            (f"{p}.gpu", w, "gpu", 1),
            (f"{p}.resources", w, "resources", "4"),
            (f"{p}.args", w, "args", "--model Qwen/Qwen2.5-0.5B-Instruct"),
            (f"{p}.probe", w, "probe", "/health"),
            (p, d.cfg["gke-gpu:workloads"], i, "llm"),
        ]
    found = d.pool(rng)
    if found:
        i, pool = found
        places += [
            (f"nodePools[{i}].zones", pool, "zones", "us-central1-a"),
            (f"nodePools[{i}].gpu", pool, "gpu", "nvidia-l4"),
        ]
    path = set_one(rng, places)
    if path is None:
        return None
    return Mutation("crash", "wrong-shape-nested", True, ((path,),), clobbers=path)


@mutation("crash", text=True, engine=False)
def non_mapping_document(rng: random.Random, d: Doc) -> Mutation | None:
    """A stack file that is a list, a string, or whose `config:` is not a mapping."""
    choice = rng.randrange(6)
    if choice == 0:
        d.case.document = [{"config": d.cfg}]
    elif choice == 1:
        d.case.document = "config"
    elif choice == 2:
        d.case.document = {"config": [f"{k}={v}" for k, v in d.cfg.items() if isinstance(v, str)]}
    elif choice == 3:
        d.case.document = {"config": rng.choice([42, "acme-ml-dev", Raw("yes", "yes")])}
    elif choice == 4:
        d.case.document = {"config": None}
    else:
        d.case.document = None  # an empty file
    paths: tuple[tuple[str, ...], ...] = (("config",),) if choice in (2, 3) else ()
    return Mutation(
        "crash",
        "non-mapping-document",
        True,
        paths,
        clobbers="",
        text_only=True,
        unreadable=choice in (0, 1),
    )


def _insert_after_config(text: str, line: str) -> str:
    head, sep, tail = text.partition("config:\n")
    return head + sep + line + "\n" + tail if sep else text + line + "\n"


@mutation("crash", text=True, engine=False)
def yaml_syntax_error(rng: random.Random, d: Doc) -> Mutation | None:
    """An unclosed bracket or quote, a stray `]`, `a: b: c`: the text is not YAML at all."""
    broken = rng.choice(
        [
            "  gke-gpu:extra: {mode: standard",
            '  gcp:zone: "us-central1-a',
            "  gke-gpu:zones: [us-central1-a]]",
            "  gke-gpu:note: mode: standard",
            "  gke-gpu:list: [a, {b: c]",
        ]
    )
    d.case.text_edits.append(lambda text: _insert_after_config(text, broken))
    return Mutation(
        "crash", "yaml-syntax-error", True, clobbers="", text_only=True, unreadable=True
    )


@mutation("crash", text=True, engine=False)
def tab_indentation(rng: random.Random, d: Doc) -> Mutation | None:
    """A tab where YAML allows only spaces (an editor's doing): a syntax error."""
    seed = rng.random()

    def edit(text: str) -> str:
        lines = text.split("\n")
        candidates = [
            n
            for n, line in enumerate(lines)
            if line.startswith("  ") and not line.lstrip().startswith("-") and ":" in line
        ]
        if not candidates:
            return text
        n = candidates[int(seed * len(candidates))]
        stripped = lines[n].lstrip(" ")
        lines[n] = "\t" * max(1, (len(lines[n]) - len(stripped)) // 2) + stripped
        return "\n".join(lines)

    d.case.text_edits.append(edit)
    return Mutation("crash", "tab-indentation", True, clobbers="", text_only=True, unreadable=True)


@mutation("crash", engine=False)
def non_string_key(rng: random.Random, d: Doc) -> Mutation | None:
    """`env: {1: x}`, `nodeSelector: {true: "yes"}`, `42:` under config."""
    found = d.workload(rng)
    choice = rng.randrange(3) if found else 2
    if found and choice in (0, 1):
        i, w = found
        where, key, value = [
            ("env", Raw("1", 1), "one"),
            ("nodeSelector", Raw("true", True), "yes"),
        ][choice]
        container = mapping(w, where)
        if container is None:
            return None  # a wrong shape an earlier mutation put there stays
        container[key] = value
        return Mutation(
            "crash",
            "non-string-key",
            True,
            ((f"workloads[{i}].{where}",),),
            text_only=True,
            structural=True,
        )
    d.cfg[Raw("42", 42)] = "answer"
    return Mutation("crash", "non-string-key", True, text_only=True, structural=True)


@mutation("crash", engine=False)
def hostile_yaml(rng: random.Random, d: Doc) -> Mutation | None:
    """YAML that hung or crashed the plan, or that the CLI reads differently: a tag without a
    JSON form (`!!binary`, `!!set`), a Go-octal number (`010` is 8 to the CLI), nesting deeper
    than any key (components/config/yaml_guard.py). Only this mistake is reported: the file is
    refused before it is read as config."""
    found = d.workload(rng)
    if not found or not wname(found[1]):
        return None
    i, w = found
    choice = rng.randrange(4)
    if choice == 0:
        w["image"] = Raw("!!binary aGVsbG8=", b"hello")
        where = f"workloads[{i}].image"
    elif choice == 1:
        w["env"] = Raw("!!set {a, b}", {"a", "b"})
        where = f"workloads[{i}].env"
    elif choice == 2:
        w["replicas"] = Raw("0" + str(rng.randint(10, 77)).replace("8", "1").replace("9", "2"), 0)
        where = f"workloads[{i}].replicas"
    else:
        depth = rng.randint(33, 60)
        w["args"] = Raw("[" * depth + "]" * depth, None)
        where = "workloads"
    return Mutation(
        "crash",
        "hostile-yaml",
        True,
        ((where,),),
        text_only=True,
        structural=True,
        writes=(where,),
        unreadable=choice == 3,  # too deep to read on: nothing else can be reported
    )
