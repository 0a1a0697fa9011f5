"""The configuration reference is the schema's: generated, complete and current.

components/config/schema/ describes every key (field docstrings, STACK_KEYS); tools/reference/
renders docs/configuration.md and Pulumi.yaml's key list from it. These tests fail when a committed
file is stale, when a key is missing from either, and when a fact the docs quote drifts from the
code that decides it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from components.config import defaults, schema
from components.config.rules import coldstart
from components.config.source import KNOWN_KEYS
from components.facts import allocatable
from tests.conftest import ROOT
from tools import reference

REGENERATE = f"run `{reference.COMMAND}` and commit the result"


def _section(text: str, start: str, end: str) -> str:
    assert start in text and end in text, f"the markers {start.strip()!r} / {end!r} are missing"
    return text.split(start, 1)[1].split(end, 1)[0]


def _keys(model: type[schema.Model]) -> list[str]:
    return [entry.key for entry in reference.entries(model)]


def _all_models() -> list[type[schema.Model]]:
    return [
        value
        for value in vars(schema).values()
        if isinstance(value, type)
        and issubclass(value, schema.Model)
        and value is not schema.Model
        and value.__module__ == schema.__name__
    ]


@pytest.mark.parametrize("path", [reference.MARKDOWN, reference.PULUMI_YAML], ids=lambda p: p.name)
def test_the_committed_reference_is_generated_from_the_schema(path: Path) -> None:
    assert path.read_text() == reference.expected()[path], (
        f"{path.relative_to(ROOT)} differs from what components/config/schema/ generates: "
        f"{REGENERATE}"
    )


def test_the_check_command_agrees() -> None:
    assert reference.main(["--check"]) == reference.EXIT_OK, REGENERATE


def test_every_model_is_reachable_from_a_top_level_key() -> None:
    orphans = [m.__name__ for m in _all_models() if m not in reference.models()]
    assert orphans == [], (
        f"config models no top-level key leads to, so the reference leaves them out: {orphans}"
    )


def test_every_field_has_a_description() -> None:
    missing = [
        f"{model.__name__}.{name}"
        for model in _all_models()
        for name, info in model.model_fields.items()
        if not (info.description or "").strip()
    ]
    assert missing == [], (
        f"fields without a docstring in components/config/schema/: {missing}; each key's "
        "docstring is its documentation"
    )


@pytest.mark.parametrize(
    "key", [k for k in schema.STACK_KEYS if k.model is not None], ids=lambda k: k.key
)
def test_every_schema_field_is_in_both_references(key: schema.StackKey) -> None:
    assert key.model is not None
    markdown = (
        _section(reference.MARKDOWN.read_text(), reference.MD_START, reference.MD_END)
        .split(f"\n## {key.key}\n", 1)[1]
        .split("\n## ", 1)[0]
    )
    pulumi = (
        _section(reference.PULUMI_YAML.read_text(), reference.YAML_START, reference.YAML_END)
        .split(f"\n# {key.key} (", 1)[1]
        .split("\n#\n", 1)[0]
    )
    keys = _keys(key.model)
    leaves = {name for name, _ in _field_paths(key.model)}
    assert leaves <= {k.replace("[]", "") for k in keys}, "every field has a row of its own"
    missing_md = [k for k in keys if f"| `{k}` |" not in markdown]
    missing_yaml = [k for k in keys if not re.search(rf"^#   {re.escape(k)}\s", pulumi, re.M)]
    assert missing_md == [], f"docs/configuration.md's {key.key} table lacks {missing_md}"
    assert missing_yaml == [], f"Pulumi.yaml's {key.key} comment block lacks {missing_yaml}"


def _field_paths(model: type[schema.Model], prefix: str = "") -> list[tuple[str, str]]:
    """(dotted camelCase key, field name) for every field, nested models expanded."""
    paths = []
    for name, info in model.model_fields.items():
        key = prefix + (info.alias or name)
        paths.append((key, name))
        nested = reference.model_of(info.annotation)
        if nested is not None:
            paths += _field_paths(nested, key + ".")
    return paths


def test_the_top_level_keys_are_the_ones_the_loader_reads() -> None:
    documented = {
        k.key.partition(":")[2] for k in schema.STACK_KEYS if k.key.startswith("gke-gpu:")
    }
    assert documented == set(KNOWN_KEYS), (
        "schema.STACK_KEYS documents the gke-gpu keys components/config/source.py KNOWN_KEYS "
        "accepts, no more and no fewer"
    )
    assert {"gcp:project", "gcp:region"} <= {k.key for k in schema.STACK_KEYS}


def test_pulumi_declares_only_plain_keys_with_the_documented_summary() -> None:
    document = yaml.safe_load(reference.PULUMI_YAML.read_text())
    declared = document.get("config") or {}
    plain = {
        k.key.partition(":")[2]: k
        for k in schema.STACK_KEYS
        if k.key.startswith("gke-gpu:") and k.model is None
    }
    assert set(declared) == set(plain), "Pulumi.yaml declares exactly the plain gke-gpu keys"
    for name, declaration in declared.items():
        assert declaration["type"] == plain[name].type
        summary = reference.parse_doc(plain[name].doc, name).summary.replace("`", "").rstrip(".")
        assert declaration["description"].startswith(summary)


def test_every_format_is_described_in_words() -> None:
    for key in schema.STACK_KEYS:
        if key.model is not None:
            list(reference.entries(key.model))  # a pattern without words raises, naming the fix
        else:
            assert reference.pattern_format(key.pattern or "", key.key)
    with pytest.raises(KeyError, match="FORMATS"):
        reference.pattern_format("^(?:[x]+)$", "Model.field")


# --- the facts the reference quotes are the code's -----------------------------------------------


def _entry(model: type[schema.Model], key: str) -> reference.Entry:
    (entry,) = [e for e in reference.entries(model) if e.key == key]
    return entry


def test_quoted_defaults_are_the_programs() -> None:
    workloads, pools = schema.WorkloadSpec, schema.NodePoolSpec
    overhead = allocatable.GPU_NODE_SYSTEM_OVERHEAD
    namespace = next(k for k in schema.STACK_KEYS if k.key == "gke-gpu:namespace")
    assert reference.parse_doc(namespace.doc, "").default == f"`{defaults.DEFAULT_NAMESPACE}`"
    assert _entry(workloads, "runAsUser").default == f"`{defaults.RUN_AS_USER}`"
    assert f"`{schema.VLLM_PORT}`" in _entry(workloads, "port").default
    assert f"`{coldstart.VLLM_QUEUE_METRIC}`" in _entry(workloads, "autoscale.metric").default
    assert f"`{overhead.cpu_millicores}m`" == _entry(pools, "systemOverhead.cpu").default
    assert f"`{overhead.memory_bytes // 2**20}Mi`" == _entry(pools, "systemOverhead.memory").default
    assert f"{{size: {defaults.DEFAULT_CACHE_SIZE}}}" in _entry(workloads, "cache").default


def test_quoted_device_plugin_versions_are_the_pinned_ones() -> None:
    from components.platform import device_plugin

    text = _entry(schema.DevicePluginSpec, "type").text
    assert device_plugin.VERSION in text, "the device plugin's tag"
    assert device_plugin.OPERATOR_VERSION in text, "the GPU Operator chart's version"


def test_the_default_workload_shown_is_the_programs() -> None:
    text = reference.markdown()
    shown = yaml.safe_load(text.split("```yaml\n", 1)[1].split("```", 1)[0])
    assert shown == {"gke-gpu:workloads": defaults.default_workloads("autopilot")}
