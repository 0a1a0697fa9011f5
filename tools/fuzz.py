"""Fuzz the config layer: generated stack files through `tools.render`, judged by its invariants.

    python -m tools.fuzz --count 1000 --seed 0 [--out build/fuzz] [--jobs 2] [--by-mutation]

Each case is a valid stack (Pulumi.dev.yaml, Pulumi.prod.yaml, examples/*.yaml, tests/conftest.py's
STANDARD) plus one or more mutations from the classes of issue 8, written as YAML *text* (so it
can hold what a dict cannot: duplicate keys, syntax errors, tabs, unquoted dates and `on`/`yes`,
non-string keys, non-mapping documents). Each case is rendered in-process and must end as a plan
(exit 0), plan findings (1) or a config error (2), with:

- no crash (an escaped exception, or any other exit code);
- no leak: no planted ciphertext, and no credential pasted as plain text, in stdout, stderr or
  any file the render wrote;
- no pathless problem: on exit 2 every `  - ` line starts with a key path, e.g.
  `workloads[0].env.HF_TOKEN: `, `gcp:project: `, `gke-gpu:foo: ` or `config: ` (user-chosen keys
  may be quoted: `workloads[0].nodeSelector."cloud.google.com/gke-accelerator": `);
- no bad input accepted: a case with an invalid mutation never exits 0 or 1;
- no unreported mistake: on exit 2 each injected mistake's key path (or one below it) is named;
- no good input rejected and no wrong plan: a case whose mutations are all valid (a nested
  secret, an unquoted date) renders, keeps the user's workloads, and delivers a nested secret env
  value through a Secret and secretKeyRef.

The same generator feeds tests/test_properties.py (hypothesis); `Case.engine_config()` gives the
config as the engine hands it to the program (nested secrets decrypted, whole top-level key
secret), for `tools.engine.run_program`.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import io
import json
import random
import re
import shutil
import signal
import string
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import yaml

from tools.engine import ROOT

# --- the document model: what the YAML text says, including what a dict cannot ------------------


@dataclass(frozen=True)
class Secure:
    """`{secure: <ciphertext>}`; the engine hands the program `plaintext` (decrypted)."""

    ciphertext: str
    plaintext: str
    needles: tuple[str, ...] = ()
    """Distinctive parts of the plaintext to look for (default: the plaintext itself)."""


@dataclass(frozen=True)
class Raw:
    """A scalar written unquoted as `text`; `value` is what YAML 1.2 (the Pulumi CLI) reads."""

    text: str
    value: Any


class DupDict(dict):
    """A mapping whose YAML text repeats some keys after its own items (the CLI rejects it)."""

    dups: list[tuple[Any, Any]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dups = []


# Words YAML 1.1 (PyYAML) reads as booleans or null; keys that are such words are quoted when
# emitted, so that only Raw scalars carry the 1.1/1.2 difference on purpose.
_YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}
_PLAIN_KEY = re.compile(r"[A-Za-z_][\w./:-]*")
_PLAIN_VALUE = re.compile(r"[A-Za-z/][\w./@+-]*")


def _key(k: Any) -> str:
    if isinstance(k, Raw):
        return k.text
    if isinstance(k, str):
        plain = _PLAIN_KEY.fullmatch(k) and k.lower() not in _YAML_WORDS
        return k if plain else json.dumps(k, ensure_ascii=False)
    return _scalar(k)


def _scalar(v: Any) -> str:
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, Secure):
        return "{secure: " + json.dumps(v.ciphertext) + "}"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    if _PLAIN_VALUE.fullmatch(v) and v.lower() not in _YAML_WORDS:
        return v  # as people write it; starts with a letter, so never a number or a date
    return json.dumps(v, ensure_ascii=False)


def _items(v: Any) -> list[tuple[Any, Any]]:
    if isinstance(v, dict):
        return list(v.items()) + (v.dups if isinstance(v, DupDict) else [])
    return []


def _literal_ok(v: str) -> bool:
    lines = v.split("\n")
    return (
        not v.startswith((" ", "\n"))
        and "\t" not in v
        and "\r" not in v
        and all(line == line.rstrip() for line in lines)
        and not v.endswith("\n\n")
    )


def _emit_value(v: Any, indent: int, head: str, lines: list[str]) -> None:
    if _items(v):
        lines.append(head)
        _emit_mapping(_items(v), indent + 2, lines)
    elif isinstance(v, list) and v:
        lines.append(head)
        _emit_sequence(v, indent + 2, lines)
    elif isinstance(v, str) and "\n" in v and _literal_ok(v):
        # A pasted file (a kubeconfig) as the user would paste it: a literal block.
        lines.append(head + (" |" if v.endswith("\n") else " |-"))
        lines.extend(
            " " * (indent + 2) + line if line else "" for line in v.rstrip("\n").split("\n")
        )
    else:
        lines.append(f"{head} {_scalar(v)}")


def _emit_mapping(
    items: list[tuple[Any, Any]], indent: int, lines: list[str], first: str | None = None
) -> None:
    for n, (k, v) in enumerate(items):
        prefix = first if n == 0 and first is not None else " " * indent
        _emit_value(v, indent, f"{prefix}{_key(k)}:", lines)


def _emit_sequence(seq: list[Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for item in seq:
        if _items(item):
            _emit_mapping(_items(item), indent + 2, lines, first=pad + "- ")
        elif isinstance(item, list) and item:
            lines.append(pad + "-")
            _emit_sequence(item, indent + 2, lines)
        else:
            lines.append(f"{pad}- {_scalar(item)}")


def emit(document: Any) -> str:
    """Block-style YAML text of a document tree (Secure, Raw and DupDict included)."""
    lines: list[str] = []
    if _items(document):
        _emit_mapping(_items(document), 0, lines)
    elif isinstance(document, list) and document:
        _emit_sequence(document, 0, lines)
    elif document is not None:
        lines.append(_scalar(document))
    return "\n".join(lines) + "\n"


def walk(node: Any) -> Iterator[Any]:
    """Every node of a tree, keys included."""
    yield node
    if isinstance(node, dict):
        for k, v in _items(node):
            yield from walk(k)
            yield from walk(v)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item)


# --- planted secrets -------------------------------------------------------------------------


def _b64(rng: random.Random, n: int) -> str:
    return base64.b64encode(rng.getrandbits(8 * n).to_bytes(n, "big")).decode()


def ciphertext(rng: random.Random) -> str:
    """A realistic `secure:` value: passphrase provider (`v1:<nonce>:<data>`) or service backend."""
    if rng.random() < 0.5:
        return f"v1:{_b64(rng, 12)}:{_b64(rng, rng.choice((24, 33, 48)))}"
    return "AAABA" + _b64(rng, rng.choice((30, 45, 60)))


def token(rng: random.Random, prefix: str = "hf_") -> str:
    """A plaintext secret that is also invalid for every field (upper case, underscore)."""
    return prefix + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(30))


def kubeconfig(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """A kubeconfig with credentials, and the credential strings that must never be echoed."""
    bearer = token(rng, "kube_")
    key_data = _b64(rng, 48)
    text = (
        "apiVersion: v1\nkind: Config\nclusters:\n- name: lab\n  cluster:\n"
        "    server: https://192.0.2.10:6443\n"  # RFC 5737 documentation address
        f"    certificate-authority-data: {_b64(rng, 30)}\n"
        "contexts:\n- name: lab\n  context:\n    cluster: lab\n    user: admin\n"
        "current-context: lab\nusers:\n- name: admin\n  user:\n"
        f"    token: {bearer}\n    client-key-data: {key_data}\n"
    )
    return text, (bearer, key_data)


def needles(secret: str) -> set[str]:
    """What counts as echoing a secret: the whole, or a 16-character head or tail of it."""
    return {secret} if len(secret) < 24 else {secret, secret[:16], secret[-16:]}


# --- cases -----------------------------------------------------------------------------------

CLASSES = ("nested-secret", "crash", "bad-input", "secret-echo", "hide-another")
KNOWN_KEYS = ("cluster", "nodePools", "workloads", "namespace", "devicePlugin")
WORKLOAD_TYPES = {
    "kubernetes:apps/v1:Deployment",
    "kubernetes:apps/v1:StatefulSet",
    "kubernetes:batch/v1:Job",
}
# GKE cluster names: 1-40 lowercase letters, digits and hyphens, starting with a letter and ending
# with a letter or digit (`gcloud container clusters create --help`, as components/config.py says).
GKE_NAME = re.compile(r"[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?")


@dataclass(frozen=True)
class Mutation:
    cls: str
    name: str
    invalid: bool
    paths: tuple[tuple[str, ...], ...] = ()
    """Each injected mistake, as the key paths any one of which a problem must start with."""
    plain_secrets: tuple[str, ...] = ()
    """Credentials pasted as plain text: never to be echoed."""
    checks: tuple[tuple[str, ...], ...] = ()
    """What a valid plan must show: ("workload-kept", name), ("secret-env", name, env), ..."""
    clobbers: str | None = None
    """A key path this mutation replaced wholesale ("" = the whole document)."""
    text_only: bool = False
    """No engine form: a duplicate key, a non-string key, a YAML-level edit, or a secure value
    whose position only the stack file shows (the engine marks the whole top-level key)."""
    writes: tuple[str, ...] = ()
    """Key paths it set or removed besides its mistakes: an earlier mistake there is gone."""
    unreadable: bool = False
    """The CLI cannot read the file at all (syntax error, tab, duplicate key, a document that is
    not a mapping): nothing else can be reported, and the file's own name (with line and column)
    is where the problem is."""
    structural: bool = False
    """A shape no config can have (a non-string key): only this mistake must be reported."""


@dataclass
class Case:
    index: int
    base: str
    stack: str
    cls: str
    document: Any
    mutations: list[Mutation] = field(default_factory=list)
    text_edits: list[Callable[[str], str]] = field(default_factory=list)

    def _live(self) -> list[tuple[Mutation, list[tuple[str, ...]]]]:
        """Each mutation with its mistakes that no later mutation overwrote."""
        live: list[tuple[Mutation, list[tuple[str, ...]]]] = []
        for m in self.mutations:
            written = [*m.writes, *(alts[0] for alts in m.paths)]
            if m.clobbers is not None:
                written.append(m.clobbers)
            for _, mistakes in live:
                mistakes[:] = [
                    alts for alts in mistakes if not any(_under(alts[0], w) for w in written)
                ]
            live.append((m, list(m.paths)))
        return live

    @property
    def invalid(self) -> bool:
        return any(m.invalid and (mistakes or not m.paths) for m, mistakes in self._live())

    @property
    def unreadable(self) -> bool:
        return any(m.unreadable for m in self.mutations)

    @property
    def text(self) -> str:
        text = emit(self.document)
        for edit in self.text_edits:
            text = edit(text)
        return text

    @property
    def classes(self) -> list[str]:
        return sorted({m.cls for m in self.mutations}, key=CLASSES.index)

    def expected_paths(self) -> list[tuple[str, ...]]:
        """The mistakes still in the document that a config error must each name."""
        if self.unreadable:
            return []
        live = self._live()
        if any(m.structural for m, _ in live):
            live = [(m, mistakes) for m, mistakes in live if m.structural]
        return [alts for _, mistakes in live for alts in mistakes]

    def checks(self) -> list[tuple[str, ...]]:
        return [c for m in self.mutations for c in m.checks]

    def top_keys(self) -> set[str]:
        config = self.document.get("config") if isinstance(self.document, dict) else None
        return {str(_key(k)).strip('"') for k, _ in _items(config)}

    def secrets(self, engine: bool) -> set[str]:
        """Strings that must appear in no output: ciphertexts, pasted credentials and, for the
        engine (which decrypts), the plaintexts of secure values."""
        found: set[str] = set()
        for node in walk(self.document):
            if isinstance(node, Secure):
                found.add(node.ciphertext)
                if engine:
                    found.update(node.needles or (node.plaintext,))
        for m in self.mutations:
            found.update(m.plain_secrets)
        return found

    def engine_config(self) -> tuple[dict[str, Any], tuple[str, ...]] | None:
        """The config as the engine hands it to the program: fully-qualified keys, structured
        values decrypted, a top-level key secret when any value inside it is (pulumi/pulumi
        sdk/go/common/resource/config: Object.Secure()); None when only YAML can say it."""
        if any(m.text_only for m in self.mutations) or self.text_edits:
            return None
        if not isinstance(self.document, dict):
            return None
        config = self.document.get("config")
        if not isinstance(config, dict):
            return None
        out: dict[str, Any] = {}
        secret: list[str] = []
        for key, value in _items(config):
            if not isinstance(key, str) or key in out:
                return None
            plain, is_secret = _decrypted(value)
            if plain is _NO_ENGINE_FORM:
                return None
            if isinstance(plain, dict | list):
                out[key] = plain
            else:
                # A top-level scalar is a string to the program (the CLI stores its text).
                out[key] = str(plain) if is_secret else _scalar_text(value)
            if is_secret:
                secret.append(key)
        return out, tuple(secret)


_NO_ENGINE_FORM = object()


def _scalar_text(value: Any) -> Any:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _decrypted(node: Any) -> tuple[Any, bool]:
    if isinstance(node, Secure):
        return node.plaintext, True
    if isinstance(node, Raw):
        return node.value, False
    if isinstance(node, DupDict) and node.dups:
        return _NO_ENGINE_FORM, False
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        secret = False
        for k, v in node.items():
            if not isinstance(k, str):
                return _NO_ENGINE_FORM, False
            out[k], inner = _decrypted(v)
            if out[k] is _NO_ENGINE_FORM:
                return _NO_ENGINE_FORM, False
            secret |= inner
        return out, secret
    if isinstance(node, list):
        items = [_decrypted(v) for v in node]
        if any(v is _NO_ENGINE_FORM for v, _ in items):
            return _NO_ENGINE_FORM, False
        return [v for v, _ in items], any(s for _, s in items)
    return node, False


# --- bases -----------------------------------------------------------------------------------


def with_secure(node: Any, rng: random.Random, key: str = "") -> Any:
    """A parsed stack file's tree with `{secure: ...}` as Secure nodes."""
    if isinstance(node, dict):
        if set(node) == {"secure"}:
            if "kubeconfig" in key:
                text, creds = kubeconfig(rng)
                return Secure(str(node["secure"]), text, creds)
            return Secure(str(node["secure"]), token(rng))
        return {k: with_secure(v, rng, str(k)) for k, v in node.items()}
    if isinstance(node, list):
        return [with_secure(v, rng, key) for v in node]
    return node


def base_stacks() -> dict[str, tuple[str, dict[str, Any]]]:
    """Base name -> (stack name, config), each a valid stack today."""
    from tests.conftest import STANDARD

    files = {
        "dev": ("dev", ROOT / "Pulumi.dev.yaml"),
        "prod": ("prod", ROOT / "Pulumi.prod.yaml"),
        **{
            f"examples/{p.name}": (p.name.removeprefix("Pulumi.").removesuffix(".yaml"), p)
            for p in sorted((ROOT / "examples").glob("Pulumi.*.yaml"))
        },
    }
    bases = {
        name: (stack, dict(yaml.safe_load(path.read_text())["config"]))
        for name, (stack, path) in files.items()
    }
    bases["STANDARD"] = ("test", copy.deepcopy(STANDARD))
    return bases


# --- the mutations ---------------------------------------------------------------------------


class Doc:
    """The case being built: its config tree and its stack name."""

    def __init__(self, case: Case) -> None:
        self.case = case

    @property
    def cfg(self) -> dict[Any, Any]:
        return self.case.document["config"]

    def mode(self) -> str:
        cluster = self.cfg.get("gke-gpu:cluster")
        mode = cluster.get("mode", "autopilot") if isinstance(cluster, dict) else "autopilot"
        return mode if isinstance(mode, str) else "autopilot"

    def gke(self) -> bool:
        return self.mode() in ("standard", "autopilot")

    def region(self) -> str:
        region = self.cfg.get("gcp:region")
        return region if isinstance(region, str) else "us-central1"

    def items(self, key: str) -> list[tuple[int, dict[Any, Any]]]:
        value = self.cfg.get(f"gke-gpu:{key}")
        if not isinstance(value, list):
            return []
        return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]

    def workload(self, rng: random.Random) -> tuple[int, dict[Any, Any]] | None:
        found = self.items("workloads")
        return rng.choice(found) if found else None

    def pool(self, rng: random.Random) -> tuple[int, dict[Any, Any]] | None:
        found = self.items("nodePools") if self.mode() == "standard" else []
        return rng.choice(found) if found else None

    def cluster(self) -> dict[Any, Any] | None:
        cluster = self.cfg.get("gke-gpu:cluster")
        return cluster if isinstance(cluster, dict) else None


Mutator = Callable[[random.Random, Doc], Mutation | None]


@dataclass(frozen=True)
class Spec:
    cls: str
    name: str
    fn: Mutator
    text: bool
    """Applied after every tree mutation (it edits the YAML text or replaces the document)."""
    engine: bool
    """Has an engine form (a config dict), so run_program can take it."""


MUTATIONS: list[Spec] = []


def mutation(cls: str, *, text: bool = False, engine: bool = True) -> Callable[[Mutator], Mutator]:
    def register(fn: Mutator) -> Mutator:
        MUTATIONS.append(Spec(cls, fn.__name__.replace("_", "-"), fn, text, engine))
        return fn

    return register


def _mapping(container: dict[Any, Any], key: str) -> dict[Any, Any] | None:
    """container[key] as a mapping, created when absent; None when it holds something else."""
    if container.get(key) is None:
        container[key] = {}
    value = container[key]
    return value if isinstance(value, dict) else None


def _wname(w: dict[Any, Any]) -> str:
    name = w.get("name")
    return name if isinstance(name, str) else ""


def _int_fields(d: Doc, rng: random.Random) -> list[tuple[str, dict[Any, Any], str]]:
    """(path, container, key) of integer settings present in or addable to this stack."""
    fields: list[tuple[str, dict[Any, Any], str]] = []
    found = d.workload(rng)
    if found:
        i, w = found
        p = f"workloads[{i}]"
        fields += [(f"{p}.replicas", w, "replicas"), (f"{p}.port", w, "port")]
        if isinstance(w.get("gpu"), dict):
            fields.append((f"{p}.gpu.count", w["gpu"], "count"))
        if isinstance(w.get("expose"), dict):
            fields.append((f"{p}.expose.port", w["expose"], "port"))
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
    fields = _int_fields(d, rng)
    if not fields:
        return None
    path, container, key = rng.choice(fields)
    container[key] = rng.choice(values)
    return Mutation(cls, name, True, ((path,),))


# nested-secret: a `secure:` value inside a structured key ------------------------------------


@mutation("nested-secret")
def secure_env_value(rng: random.Random, d: Doc) -> Mutation | None:
    """`pulumi config set --path --secret 'gke-gpu:workloads[0].env.HF_TOKEN'`: the workload
    stays, and the value reaches it through a Secret."""
    found = d.workload(rng)
    if not found or not _wname(found[1]):
        return None
    i, w = found
    env = rng.choice(["HF_TOKEN", "API_KEY", "WANDB_API_KEY", "NGC_API_KEY"])
    if _mapping(w, "env") is None:
        return None  # a wrong shape an earlier mutation put there stays
    w["env"][env] = Secure(ciphertext(rng), token(rng))
    name = _wname(w)
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
            (f"workloads[{i}].name", w, "name", _wname(w) or "llm"),
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
    if not places:
        return None
    path, container, key, plaintext = rng.choice(places)
    container[key] = Secure(ciphertext(rng), plaintext)
    return Mutation(
        "nested-secret", "secure-where-no-secret-belongs", True, ((path,),), text_only=True
    )


# crash: shapes that crashed the render (exit 1 with a traceback) -------------------------------


@mutation("crash")
def unquoted_date(rng: random.Random, d: Doc) -> Mutation | None:
    """`BUILD_DATE: 2024-01-01` is a string to the CLI (YAML 1.2), not a date."""
    found = d.workload(rng)
    if not found or not _wname(found[1]):
        return None
    i, w = found
    date = f"20{rng.randint(10, 39)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if rng.random() < 0.7:
        if _mapping(w, "env") is None:
            return None  # a wrong shape an earlier mutation put there stays
        w["env"]["BUILD_DATE"] = Raw(date, date)
        checks: tuple[tuple[str, ...], ...] = (("env-value", _wname(w), "BUILD_DATE", date),)
        written = f"workloads[{i}].env.BUILD_DATE"
    else:
        args = w.setdefault("args", [])
        if not isinstance(args, list):
            return None
        args += ["--since", Raw(date, date)]
        checks = (("workload-kept", _wname(w)),)
        written = f"workloads[{i}].args"
    return Mutation("crash", "unquoted-date", False, checks=checks, writes=(written,))


@mutation("crash")
def yaml11_word_in_env(rng: random.Random, d: Doc) -> Mutation | None:
    """`on`, `yes`, `off`, `no` are strings in YAML 1.2 (go-yaml v3 resolve.go: only true/false
    are booleans), so an env value `on` stays the string "on"."""
    found = d.workload(rng)
    if not found or not _wname(found[1]):
        return None
    i, w = found
    word = rng.choice(["on", "off", "yes", "no", "y", "n", "On", "NO"])
    if _mapping(w, "env") is None:
        return None  # a wrong shape an earlier mutation put there stays
    w["env"]["FEATURE_FLAG"] = Raw(word, word)
    return Mutation(
        "crash",
        "yaml11-word-in-env",
        False,
        checks=(("env-value", _wname(w), "FEATURE_FLAG", word),),
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
    if not places:
        return None
    path, container, key, value = rng.choice(places)
    container[key] = value
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
    if found and choice == 0:
        i, w = found
        if _mapping(w, "env") is None:
            return None  # a wrong shape an earlier mutation put there stays
        w["env"][Raw("1", 1)] = "one"
        return Mutation(
            "crash",
            "non-string-key",
            True,
            ((f"workloads[{i}].env",),),
            text_only=True,
            structural=True,
        )
    if found and choice == 1:
        i, w = found
        if _mapping(w, "nodeSelector") is None:
            return None  # a wrong shape an earlier mutation put there stays
        w["nodeSelector"][Raw("true", True)] = "yes"
        return Mutation(
            "crash",
            "non-string-key",
            True,
            ((f"workloads[{i}].nodeSelector",),),
            text_only=True,
            structural=True,
        )
    d.cfg[Raw("42", 42)] = "answer"
    return Mutation("crash", "non-string-key", True, text_only=True, structural=True)


# bad-input: values the config layer accepted --------------------------------------------------


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
    if found and _wname(found[1]):
        i, w = found
        places.append((f"workloads[{i}].name", w, "name", _wname(w)))
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
    path, container, key, value = rng.choice(places)
    container[key] = value + "\n"
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
    resources = _mapping(w, "resources")
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
    if _mapping(w, "nodeSelector") is None:
        return None  # a wrong shape an earlier mutation put there stays
    w["nodeSelector"][key] = labels[key]
    return Mutation("bad-input", "selector-override", True, ((f"workloads[{i}].nodeSelector",),))


@mutation("bad-input")
def service_collision(rng: random.Random, d: Doc) -> Mutation | None:
    """Two workloads with one name: their Services (and workload objects) would be one."""
    found = d.workload(rng)
    if not found or not _wname(found[1]):
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
    keys = [k for k in d.cfg if isinstance(k, str) and k.startswith("gke-gpu:")]
    if not keys:
        return None
    key = rng.choice(keys)
    namespace = rng.choice(["gke_gpu", "gkegpu", "GKE-GPU", "gke.gpu", "gke-gpus"])
    moved = f"{namespace}:{key.removeprefix('gke-gpu:')}"
    d.cfg[moved] = d.cfg.pop(key)
    return Mutation("bad-input", "look-alike-namespace", True, ((moved,),), clobbers=key)


@mutation("bad-input")
def unnamespaced_key(rng: random.Random, d: Doc) -> Mutation | None:
    keys = [k for k in d.cfg if isinstance(k, str) and k.startswith("gke-gpu:")]
    if not keys:
        return None
    key = rng.choice(keys)
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
    if not places:
        return None
    path, container, key, value = rng.choice(places)
    container[key] = value
    return Mutation("bad-input", "enum-case", True, ((path,),))


# secret-echo: credentials and ciphertext must never be printed ---------------------------------


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
        if isinstance(w.get("gpu"), dict):
            places.append((f"workloads[{i}].gpu.count", w["gpu"], "count"))
        if isinstance(w.get("expose"), dict):
            places.append((f"workloads[{i}].expose.port", w["expose"], "port"))
        if _mapping(w, "env") is None:
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


# hide-another: one problem must not hide the next ----------------------------------------------


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
            # nvidia-l4 pools take 1, 2, 4 or 8 GPUs per node (components/catalog.py, G2 shapes).
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
        if _mapping(w, "env") is None:
            return None  # a wrong shape an earlier mutation put there stays
        key = rng.choice(["HF_TOKEN", "MAX_MODEL_LEN", "hf_home"])
        w["env"][key] = ["a", "b"]
        path = f"workloads[{i}].env.{key}"
    else:
        if _mapping(w, "nodeSelector") is None:
            return None  # a wrong shape an earlier mutation put there stays
        key = rng.choice(["team_name", "gpu_pool"])
        w["nodeSelector"][key] = ["a"]
        path = f"workloads[{i}].nodeSelector.{key}"
    return Mutation("hide-another", "user-key-as-written", True, ((path,),))


# --- generation ------------------------------------------------------------------------------

_BASES: dict[str, tuple[str, dict[str, Any]]] | None = None


def bases() -> dict[str, tuple[str, dict[str, Any]]]:
    global _BASES
    if _BASES is None:
        _BASES = base_stacks()
    return _BASES


def _apply(spec: Spec, rng: random.Random, case: Case) -> bool:
    before = copy.deepcopy(case.document), case.stack, len(case.text_edits)
    m = spec.fn(rng, Doc(case))
    if m is None:
        case.document, case.stack = before[0], before[1]
        del case.text_edits[before[2] :]
        return False
    case.mutations.append(m)
    return True


def generate(
    rng: random.Random,
    index: int = 0,
    cls: str | None = None,
    *,
    engine_only: bool = False,
    base_names: Sequence[str] | None = None,
) -> Case:
    """One case: a base stack plus 1-3 mutations of `cls` (and sometimes one of another class).
    `engine_only`: only mutations that have an engine form (for run_program)."""
    cls = cls or rng.choice(CLASSES)
    names = list(base_names or bases())
    specs = [s for s in MUTATIONS if s.engine or not engine_only]
    own = [s for s in specs if s.cls == cls]
    others = [s for s in specs if s.cls != cls and not s.text]
    # Every base in a random order, every mutation of the class in a random order: the first
    # base that takes one gets up to `wanted` of them.
    for base in rng.sample(names, len(names)):
        stack, config = bases()[base]
        secure_rng = random.Random(rng.random())
        case = Case(index, base, stack, cls, {"config": with_secure(config, secure_rng)})
        wanted = rng.choice((1, 1, 2, 3))
        deferred: list[Spec] = []
        applied = 0
        for spec in rng.sample(own, len(own)):
            if applied + len(deferred) >= wanted:
                break
            if spec.text:  # edits the text or replaces the document: after the tree mutations
                deferred.append(spec)
            elif _apply(spec, rng, case):
                applied += 1
        # Sometimes one mutation of another class too, never one that replaces the document.
        if rng.random() < 0.25:
            _apply(rng.choice(others), rng, case)
        for spec in deferred:
            _apply(spec, rng, case)
        if any(m.cls == cls for m in case.mutations):
            return case
    raise RuntimeError(f"no base takes a mutation of class {cls}")


def case_for(seed: int, index: int) -> Case:
    """Case `index` of a run: its own random stream, so any case can be regenerated alone."""
    rng = random.Random(f"{seed}:{index}")
    return generate(rng, index, CLASSES[index % len(CLASSES)])


# --- running and judging -----------------------------------------------------------------------


@dataclass
class Outcome:
    code: int | None
    """0 plan, 1 findings, 2 config error; None for a crash."""
    crash: str | None
    problems: list[str]
    """The `  - ` lines of a config error, without the marker."""
    output: str
    """Everything printed or written, to search for secrets."""
    resources: list[dict[str, Any]]
    """Registered resources: type, name, inputs (secrets masked)."""
    registered: int = 0


class CaseTimeout(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"no outcome after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_render(case: Case, workdir: Path, timeout: int = 60) -> Outcome:
    """`python -m tools.render` on the case's stack file, in-process."""
    from tools import render

    workdir.mkdir(parents=True, exist_ok=True)
    stack_file = workdir / f"Pulumi.{case.stack}.yaml"
    stack_file.write_text(case.text)
    out = workdir / "out"
    stdout, stderr = io.StringIO(), io.StringIO()
    code: int | None = None
    crash: str | None = None
    argv = [case.stack, "--stack-file", str(stack_file), "--out", str(out)]
    try:
        with (
            _deadline(timeout),
            contextlib.redirect_stdout(stdout),
            contextlib.redirect_stderr(stderr),
        ):
            code = render.main(argv)
    except SystemExit as exc:  # argparse's parser.error
        code = exc.code if isinstance(exc.code, int) else None
        if code is None:
            crash = f"SystemExit({exc.code!r})"
    except BaseException as exc:  # noqa: BLE001 - counting every escape is the point
        crash = f"{type(exc).__name__}: {exc}"[:500]
    if code not in (0, 1, 2) and crash is None:
        crash = f"exit code {code!r}"
        code = None
    written = ""
    resources: list[dict[str, Any]] = []
    if out.exists():
        for path in sorted(out.rglob("*")):
            if path.is_file():
                written += path.read_text(errors="replace")
        plan = out / "plan.json"
        if plan.exists():
            with contextlib.suppress(ValueError):
                resources = json.loads(plan.read_text()).get("resources", [])
    err = stderr.getvalue()
    return Outcome(
        code=code,
        crash=crash,
        problems=[line[4:] for line in err.splitlines() if line.startswith("  - ")]
        if code == 2
        else [],
        output=stdout.getvalue() + err + written,
        resources=resources,
    )


def run_engine(
    config: dict[str, Any],
    secret_keys: tuple[str, ...],
    stack: str,
    stack_file: Path | None = None,
) -> Outcome:
    """The program under the recording engine, in-process, as `pulumi up` would hand it config;
    `stack_file`: the Pulumi.<stack>.yaml the program may read beside it (a missing path: none)."""
    from components.config import ConfigError
    from tools import engine

    registered: list[str] = []

    class Counting(engine.RecordingMonitor):
        def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
            if request.type != "pulumi:pulumi:Stack":
                registered.append(request.type)
            return super().RegisterResource(request)

    stdout, stderr = io.StringIO(), io.StringIO()
    code: int | None = None
    crash: str | None = None
    problems: list[str] = []
    text = ""
    resources: list[dict[str, Any]] = []
    try:
        with (
            _deadline(60),
            mock.patch.object(engine, "RecordingMonitor", Counting),
            contextlib.redirect_stdout(stdout),
            contextlib.redirect_stderr(stderr),
        ):
            recording = engine.run_program(
                config, stack=stack, secret_keys=secret_keys, stack_file=stack_file
            )
        code = 0
        resources = [
            {"type": r.type, "name": r.name, "inputs": r.inputs, "outputs": r.outputs}
            for r in recording.resources
        ]
        outputs = {
            k: v for k, v in recording.stack_outputs.items() if k not in recording.secret_outputs
        }
        text = json.dumps([resources, outputs, recording.invokes], default=str)
    except ConfigError as exc:
        code = 2
        problems = [str(p) for p in exc.problems]
        text = str(exc) + "\n" + "\n".join(problems)
    except BaseException as exc:  # noqa: BLE001 - counting every escape is the point
        crash = f"{type(exc).__name__}: {exc}"[:500]
    return Outcome(
        code=code,
        crash=crash,
        problems=problems,
        output=text + stdout.getvalue() + stderr.getvalue(),
        resources=resources,
        registered=len(registered),
    )


# A key path at the start of a problem: segments (namespaced `ns:key` allowed), `.key`,
# `[0]`, quoted user keys (`."a/b"`, `["a/b"]`), alternatives joined by '/', then ': '.
_QUOTED = r"\"[^\"\n]*\"|'[^'\n]*'"
_SEGMENT = rf"(?:[\w][\w.-]*(?::[\w][\w.-]*)?|{_QUOTED})"
_PATH = rf"{_SEGMENT}(?:\.{_SEGMENT}|\[(?:\d+|{_QUOTED})\])*"
_PROBLEM = re.compile(rf"({_PATH}(?:/{_PATH})*):(?: |$)")


def problem_path(problem: str) -> str | None:
    match = _PROBLEM.match(problem)
    return match.group(1) if match else None


def normalize(path: str) -> str:
    """One spelling per path: quotes and brackets around keys removed, `gke-gpu:` dropped."""
    path = re.sub(r"\[(\"|')(.*?)\1\]", r".\2", path)
    path = re.sub(r"\.(\"|')(.*?)\1", r".\2", path)
    return path.removeprefix("gke-gpu:")


def _under(path: str, prefix: str) -> bool:
    path, prefix = normalize(path), normalize(prefix)
    return prefix == "" or path == prefix or path.startswith((prefix + ".", prefix + "["))


def _root(path: str) -> str:
    """The first key of a path, namespace kept (`gke-gpu:cluster.name` -> `gke-gpu:cluster`)."""
    path = re.sub(r"\[(\"|')(.*?)\1\]", r".\2", path)
    if path.startswith(('"', "'")):
        return path[1:].split(path[0], 1)[0]
    namespace = re.match(r"[\w.-]+:", path)  # `gke.gpu:cluster`: the namespace may hold dots
    head = namespace.group() if namespace else ""
    return head + re.split(r"[.\[]", path[len(head) :], maxsplit=1)[0]


def has_key_path(problem: str, case: Case) -> bool:
    """The problem starts with a key path of this stack: namespaced (`gcp:project`), a key of
    the gke-gpu namespace, `config`, or a top-level key the stack file has."""
    path = problem_path(problem)
    if path is None:
        return False
    if case.unreadable and path == f"Pulumi.{case.stack}.yaml":
        return True  # followed by the line and column: a file YAML cannot read has no key paths
    root = _root(path)
    known = (*KNOWN_KEYS, *(f"gke-gpu:{k}" for k in KNOWN_KEYS), "config")
    return ":" in root or root in known or root in case.top_keys()


def reported(problems: list[str], alternatives: tuple[str, ...]) -> bool:
    paths = [p for p in (problem_path(x) for x in problems) if p]
    named = [q for p in paths for q in [p, *p.split("/")]]
    return any(_under(p, alt) for p in named for alt in alternatives)


def _workload(resources: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    for r in resources:
        meta = (r.get("inputs") or {}).get("metadata") or {}
        if r.get("type") in WORKLOAD_TYPES and meta.get("name") == name:
            return r["inputs"]
    return None


def _env(obj: dict[str, Any], name: str) -> dict[str, Any] | None:
    containers = ((obj.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers")
    for container in containers or []:
        for entry in container.get("env") or []:
            if entry.get("name") == name:
                return entry
    return None


def check_plan(check: tuple[str, ...], resources: list[dict[str, Any]]) -> str | None:
    """Why a valid plan fails `check`, or None."""
    kind = check[0]
    if kind in ("workload-kept", "secret-env", "env-value"):
        obj = _workload(resources, check[1])
        if obj is None:
            return f"workload {check[1]!r} is not in the plan (replaced or dropped)"
        if kind == "secret-env":
            entry = _env(obj, check[2])
            ref = ((entry or {}).get("valueFrom") or {}).get("secretKeyRef")
            if not ref:
                return f"{check[1]}: env {check[2]} does not come from a Secret (secretKeyRef)"
            secrets = [
                r["inputs"]
                for r in resources
                if r.get("type") == "kubernetes:core/v1:Secret"
                and (r["inputs"].get("metadata") or {}).get("name") == ref.get("name")
            ]
            keys = {
                k for s in secrets for k in {**(s.get("stringData") or {}), **(s.get("data") or {})}
            }
            if ref.get("key") not in keys:
                return f"{check[1]}: env {check[2]} refers to a Secret key the plan does not hold"
        if kind == "env-value":
            entry = _env(obj, check[2]) or {}
            if (entry.get("valueFrom") or {}).get("secretKeyRef"):
                # Its key is secret as a whole (a nested secret beside it): a masked value.
                return None
            value = entry.get("value")
            if not (isinstance(value, str) and value.startswith(check[3])):
                return f"{check[1]}: env {check[2]} is {value!r}, expected the string {check[3]!r}"
        return None
    if kind == "cluster-name-valid":
        names = [
            (r.get("inputs") or {}).get("name")
            for r in resources
            if r.get("type") == "gcp:container/cluster:Cluster"
        ]
        bad = [n for n in names if not (isinstance(n, str) and GKE_NAME.fullmatch(n))]
        return f"cluster name(s) {bad!r} are not valid GKE names" if bad or not names else None
    if kind == "kubeconfig-secret":
        providers = [r for r in resources if r.get("type") == "pulumi:providers:kubernetes"]
        if not providers or any(
            (r.get("inputs") or {}).get("kubeconfig") != "[secret]" for r in providers
        ):
            return "the Kubernetes provider does not get the nested kubeconfig as a secret"
        return None
    raise ValueError(f"unknown check {check!r}")


@dataclass
class Verdict:
    crash: str | None = None
    leaks: list[str] = field(default_factory=list)
    pathless: list[str] = field(default_factory=list)
    accepted: bool = False
    unreported: list[str] = field(default_factory=list)
    rejected: bool = False
    wrong_plan: list[str] = field(default_factory=list)

    def failures(self) -> dict[str, Any]:
        return {
            k: v
            for k, v in {
                "crash": self.crash,
                "leaks": self.leaks,
                "pathless": self.pathless,
                "accepted": self.accepted,
                "unreported": self.unreported,
                "rejected": self.rejected,
                "wrong_plan": self.wrong_plan,
            }.items()
            if v
        }


def judge(case: Case, outcome: Outcome, *, engine: bool = False) -> Verdict:
    v = Verdict(crash=outcome.crash)
    for secret in sorted(case.secrets(engine)):
        if any(n in outcome.output for n in needles(secret)):
            v.leaks.append(secret[:8] + "...")
    if outcome.code == 2:
        v.pathless = [p for p in outcome.problems if not has_key_path(p, case)]
        if not outcome.problems:
            v.pathless = ["(exit 2 without any `  - ` problem line)"]
        if case.invalid:
            v.unreported = [
                " or ".join(alts)
                for alts in case.expected_paths()
                if not reported(outcome.problems, alts)
            ]
        else:
            v.rejected = True
    if outcome.code in (0, 1):
        if case.invalid:
            v.accepted = True
        else:
            v.wrong_plan = [
                why for c in case.checks() if (why := check_plan(c, outcome.resources)) is not None
            ]
    return v


# --- the command line --------------------------------------------------------------------------

COLUMNS = ("crash", "leaks", "pathless", "accepted", "unreported", "rejected", "wrong_plan")
HEADERS = (
    "crashes",
    "leaks",
    "pathless",
    "bad accepted",
    "unreported",
    "good rejected",
    "wrong plan",
)


def run_case(seed: int, index: int, out: Path, keep: bool) -> dict[str, Any]:
    case = case_for(seed, index)
    workdir = out / "cases" / f"{index:05d}"
    started = time.perf_counter()
    outcome = run_render(case, workdir)
    verdict = judge(case, outcome)
    failures = verdict.failures()
    if not failures and not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return {
        "index": index,
        "base": case.base,
        "stack": case.stack,
        "classes": case.classes,
        "mutations": [m.name for m in case.mutations],
        "expectedInvalid": case.invalid,
        "code": outcome.code,
        "seconds": round(time.perf_counter() - started, 3),
        "failures": failures,
        "problems": outcome.problems[:20],
    }


def _run_in_worker(job: tuple[int, int, str, bool]) -> dict[str, Any]:
    seed, index, out, keep = job
    return run_case(seed, index, Path(out), keep)


def table(results: list[dict[str, Any]], group: str) -> list[list[str]]:
    rows: dict[str, list[int]] = {}
    keys = CLASSES if group == "classes" else sorted({m for r in results for m in r[group]})
    for key in keys:
        rows[key] = [0] * (1 + len(COLUMNS))
    rows["total"] = [0] * (1 + len(COLUMNS))
    for r in results:
        for key in [*sorted(set(r[group])), "total"]:
            row = rows.setdefault(key, [0] * (1 + len(COLUMNS)))
            row[0] += 1
            for n, column in enumerate(COLUMNS, start=1):
                row[n] += bool(r["failures"].get(column))
    return [[key, *map(str, row)] for key, row in rows.items()]


def print_table(rows: list[list[str]], first: str) -> None:
    header = [first, "cases", *HEADERS]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    for row in [header, *rows]:
        print(
            "  ".join(
                str(x).rjust(w) if n else str(x).ljust(w)
                for n, (x, w) in enumerate(zip(row, widths, strict=True))
            )
        )


def check_bases(out: Path) -> list[str]:
    """Bases that do not render as a valid plan unchanged: mutating them proves nothing."""
    broken = []
    for name, (stack, _) in bases().items():
        case = Case(
            0, name, stack, "base", {"config": with_secure(bases()[name][1], random.Random(0))}
        )
        outcome = run_render(case, out / "bases" / name.replace("/", "_"))
        if outcome.code not in (0, 1):
            broken.append(f"{name} (exit {outcome.code}, {outcome.crash or outcome.problems[:2]})")
    return broken


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.fuzz", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "fuzz")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--keep", action="store_true", help="keep passing cases' files too")
    parser.add_argument("--by-mutation", action="store_true", help="also a row per mutation")
    args = parser.parse_args(argv)

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    started = time.perf_counter()
    broken = check_bases(args.out)
    if broken:
        print("bases that are not valid stacks unchanged (their cases are still run):")
        for line in broken:
            print(f"  {line}")
    jobs = [(args.seed, i, str(args.out), args.keep) for i in range(args.count)]
    if args.jobs > 1:
        import multiprocessing

        # spawn, not fork: the parent has grpc threads running after the base renders.
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            results = pool.map(_run_in_worker, jobs, chunksize=8)
    else:
        results = [_run_in_worker(job) for job in jobs]
    elapsed = time.perf_counter() - started

    (args.out / "report.json").write_text(
        json.dumps(
            {"seed": args.seed, "count": args.count, "seconds": elapsed, "cases": results}, indent=1
        )
        + "\n"
    )
    print_table(table(results, "classes"), "class")
    if args.by_mutation:
        print()
        print_table(table(results, "mutations"), "mutation")
    codes = {c: sum(r["code"] == c for r in results) for c in (0, 1, 2, None)}
    print(
        f"\n{args.count} cases in {elapsed:.0f} s (exit 0: {codes[0]}, 1: {codes[1]}, "
        f"2: {codes[2]}, crashed: {codes[None]}); details in {args.out / 'report.json'}"
    )
    failed = sum(bool(r["failures"]) for r in results)
    return 1 if failed or broken else 0


if __name__ == "__main__":
    sys.exit(main())
