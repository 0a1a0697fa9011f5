"""Reading config as the Pulumi engine hands it over, and stack files as the Pulumi CLI reads them.

How the engine passes config (pulumi/pulumi sdk/go/common/resource/config, `Map.Decrypt` and
`Object.Secure()`): every key arrives as a string; a structured value arrives as JSON, decrypted;
a secure value anywhere inside a structured key makes the whole top-level key secret (listed in
the run's secret keys). The program therefore receives `gke-gpu:workloads` decrypted, with only
the knowledge that *something* in it was secret. Which leaves were `secure:` is known only from
the stack file; `secure_paths` reads that (paths only, never values) when the file is there.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from . import yaml_guard
from .formats import join
from .model import NAMESPACE
from .problems import ConfigError, Problem

# Keys whose value is a JSON object or list; the others are plain strings.
STRUCTURED = ("cluster", "nodePools", "workloads", "devicePlugin", "monitoring")
KNOWN_KEYS = ("cluster", "nodePools", "workloads", "namespace", "devicePlugin", "monitoring")
# Namespaces a stack of this project legitimately carries.
OTHER_NAMESPACES = ("gcp", "kubernetes", "random", "pulumi")
SECRET_PLACEHOLDER = "<secret>"
# Set by tools.render to the stack file it renders (the engine runs the program in the project
# directory, where Pulumi.<stack>.yaml is found without it).
STACK_FILE_ENV = "GKE_GPU_STACK_FILE"


@dataclass(frozen=True)
class EngineConfig:
    """The gke-gpu config of one run, as the engine passed it."""

    raw: dict[str, Any]
    """Top-level key (without namespace) -> value, JSON decoded for structured keys."""
    secret_keys: frozenset[str]
    """Top-level keys the engine marked secret."""
    secure_paths: frozenset[str] | None
    """Key paths of the `secure:` leaves, from the stack file; None when it cannot be read."""
    project: str | None
    region: str | None
    problems: tuple[Problem, ...]
    """Keys in look-alike namespaces."""
    hidden: frozenset[str] = frozenset()
    """Secret keys of other namespaces (e.g. gcp:project): their values are never shown."""


def decode(name: str, text: str) -> Any:
    """A config string as the program uses it: JSON for structured keys, else the string."""
    if name in STRUCTURED:
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text  # e.g. `devicePlugin: static`
        except RecursionError:
            raise ConfigError([f"{name}: {yaml_guard.DEEP}"]) from None
    return text


def namespace_problems(keys: list[str]) -> list[Problem]:
    """Keys whose namespace looks like gke-gpu but is not (`gke_gpu:cluster`): silently ignored
    by everything, they would leave the stack on defaults."""
    problems = []
    for key in keys:
        namespace, colon, name = key.partition(":")
        if not colon:
            problems.append(
                Problem(
                    f"config.{key}",
                    "a config key needs a namespace (the Pulumi CLI refuses it). "
                    f"Write {NAMESPACE}:{key}.",
                )
            )
            continue
        if namespace in (NAMESPACE, *OTHER_NAMESPACES):
            continue
        if difflib.get_close_matches(namespace.lower(), [NAMESPACE], n=1, cutoff=0.7):
            problems.append(
                Problem(
                    key,
                    f"the namespace {namespace!r} is not {NAMESPACE!r}, so this key would be "
                    f"ignored. Rename it to {NAMESPACE}:{name}.",
                )
            )
    return problems


def from_engine() -> EngineConfig:
    """The current run's config, secret keys included (their values are in-process)."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    values: dict[str, str] = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    secret = set(runtime_config.get_config_secret_keys_env())
    raw: dict[str, Any] = {}
    secret_keys: set[str] = set()
    for key in sorted(values):
        namespace, _, name = key.partition(":")
        if namespace != NAMESPACE:
            continue
        raw[name] = decode(name, values[key])
        if runtime_config.is_config_secret(key) or key in secret:
            secret_keys.add(name)
    return EngineConfig(
        raw=raw,
        secret_keys=frozenset(secret_keys),
        secure_paths=(
            secure_paths(pulumi.get_stack(), raw, frozenset(secret_keys))
            if secret_keys
            else frozenset()
        ),
        project=values.get("gcp:project"),
        region=values.get("gcp:region"),
        problems=tuple(namespace_problems(sorted(values))),
        hidden=frozenset(
            k
            for k in values
            if not k.startswith(NAMESPACE + ":")
            and (runtime_config.is_config_secret(k) or k in secret)
        ),
    )


# --- stack files ---------------------------------------------------------------------------------


def _yaml() -> YAML:
    """YAML 1.2 as the Pulumi CLI reads stack files (Go yaml.v3): `on`/`yes` are strings,
    timestamps stay strings, duplicate keys are errors."""
    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    yaml.allow_duplicate_keys = False
    yaml.constructor.add_constructor(
        "tag:yaml.org,2002:timestamp", lambda _loader, node: node.value
    )
    return yaml


@dataclass(frozen=True)
class StackFile:
    config: dict[str, Any]
    """Fully-qualified key -> value, every `secure:` leaf replaced by SECRET_PLACEHOLDER."""
    secret_keys: tuple[str, ...]
    """Fully-qualified keys holding a `secure:` value anywhere inside (as the engine marks them)."""
    secure_paths: frozenset[str]
    """Paths of the secure leaves inside gke-gpu keys, e.g. workloads[0].env.HF_TOKEN."""


def _is_secure(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"secure"}


def _mask(value: Any, path: str, found: list[str], problems: list[str]) -> Any:
    if _is_secure(value):
        found.append(path)
        return SECRET_PLACEHOLDER
    if isinstance(value, Mapping):
        masked = {}
        for key, item in value.items():
            if not isinstance(key, str):
                problems.append(
                    f"{path}: the key {key!r} is not a string. Quote it (e.g. '{key}': ...)."
                )
                continue
            masked[key] = _mask(item, join(path, key), found, problems)
        return masked
    if isinstance(value, list):
        return [_mask(item, join(path, i), found, problems) for i, item in enumerate(value)]
    return value


def read_stack_file(path: Path) -> StackFile:
    """A stack file's config as the CLI would pass it to the engine; secure values are never
    decrypted. Raises ConfigError for what the CLI itself would refuse to read, and for YAML
    that would hang, crash or be read differently by it (components/config/yaml_guard.py)."""
    document, guarded = _document(path)
    if document is None:
        document = {}
    if not isinstance(document, Mapping):
        raise ConfigError(
            [
                f"{path.name}: the document is a {type(document).__name__}, not a mapping. "
                "A stack file is a mapping with a `config:` key."
            ]
        )
    config = document.get("config")
    config = {} if config is None else config
    if not isinstance(config, Mapping):
        raise ConfigError(
            [f"config: expected a mapping of keys to values, got {type(config).__name__}."]
        )
    problems = list(guarded)
    values: dict[str, Any] = {}
    secret_keys: list[str] = []
    paths: list[str] = []
    for key, value in config.items():
        if not isinstance(key, str) or ":" not in key:
            # The CLI refuses keys without a namespace (config.ParseKey).
            problems.append(
                f"config.{key}: a config key needs a namespace. Write {NAMESPACE}:{key} "
                "(or gcp:..., kubernetes:...)."
            )
            continue
        namespace, _, name = key.partition(":")
        found: list[str] = []
        base = name if namespace == NAMESPACE else key
        values[key] = _mask(value, base, found, problems)
        if found:
            secret_keys.append(key)
            if namespace == NAMESPACE:
                paths += found
    if problems:
        raise ConfigError(problems)
    return StackFile(values, tuple(secret_keys), frozenset(paths))


def _document(path: Path) -> tuple[Any, list[str]]:
    """The file's YAML document, and the problems yaml_guard found that leave it readable."""
    guarded: list[str] = []
    try:
        too_big = yaml_guard.oversized(path)
        if too_big is not None:
            raise ConfigError([too_big])
        yaml = _yaml()
        node, guarded = yaml_guard.compose(yaml, path.read_text(encoding="utf-8"), path.name)
        if guarded and node is None:
            raise ConfigError(guarded)
        # Tag and number problems leave the document readable: read on, report them all.
        try:
            document = yaml_guard.constructed(yaml, node) if node is not None else None
        except (ValueError, KeyError, TypeError):  # a value its tag cannot build
            raise ConfigError(
                guarded
                or [f"{path.name}: a tagged value cannot be read as its tag says. Remove the tag."]
            ) from None
    except (MarkedYAMLError, YAMLError) as error:
        if guarded:  # e.g. a custom tag (`!foo`) that the constructor cannot build
            raise ConfigError(guarded) from None
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = _without_values(getattr(error, "problem", None) or type(error).__name__)
        raise ConfigError(
            [f"{path.name}:{where}: not valid YAML ({problem}). Fix the file's syntax."]
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError([f"{path.name}: cannot be read ({type(error).__name__})."]) from None
    return document, guarded


# ruamel's duplicate-key message quotes both values (constructor.py DuplicateKeyError: 'found
# duplicate key "{}" with value "{}" (original value: "{}")'): a kubeconfig or a token, in an
# error printed to every CI log. Only the key is kept.
_DUPLICATE_KEY = re.compile(r'found duplicate key "(?P<key>[^"\n]{0,200})" with value')


def _without_values(problem: str) -> str:
    if (duplicate := _DUPLICATE_KEY.match(problem)) is not None:
        return f'the key "{duplicate["key"]}" appears twice in one mapping; keep one'
    if " with value " in problem or "original value" in problem:
        return "a key appears twice in one mapping; keep one"
    return problem


def secure_paths(
    stack: str, raw: Mapping[str, Any], secret_keys: frozenset[str]
) -> frozenset[str] | None:
    """Paths of the secure leaves of this run's secret keys, or None when the stack file cannot
    prove them. The engine marks a whole key secret and hands it over decrypted; which leaves were
    `secure:` is known only when each secret key's value is the stack file's. It is not when the
    file cannot be read, or when a secret key's value differs from the file's: a Pulumi ESC
    environment (`environment:`) supplied or overrode part of it, or `pulumi up --config-file
    other.yaml` ran with other config. Then every value of a secret key is treated as secret. (An
    environment that leaves the key as the file has it changes nothing secret in it.)"""
    path = Path(os.environ.get(STACK_FILE_ENV) or f"Pulumi.{stack}.yaml")
    try:
        read = read_stack_file(path)
    except (ConfigError, OSError):
        return None
    for name in secret_keys:
        key = f"{NAMESPACE}:{name}"
        if key not in read.secret_keys or not agrees(read.config.get(key), raw.get(name)):
            return None
    return read.secure_paths


def agrees(masked: Any, value: Any) -> bool:
    """Whether the engine's `value` is what the stack file says, its secure leaves aside."""
    if masked == SECRET_PLACEHOLDER:
        return True
    if isinstance(masked, Mapping):
        return (
            isinstance(value, Mapping)
            and set(masked) == set(value)
            and all(agrees(masked[k], value[k]) for k in masked)
        )
    if isinstance(masked, list):
        return (
            isinstance(value, list)
            and len(masked) == len(value)
            and all(agrees(m, v) for m, v in zip(masked, value, strict=True))
        )
    if isinstance(value, str) and not isinstance(masked, str):
        return json.dumps(masked) == value  # a plain key's value arrives as text
    if isinstance(masked, bool) != isinstance(value, bool):
        return False  # True == 1 in Python, not in the config
    return masked == value
