"""The docs users read first stay true: README commands, config reference, Pulumi.yaml."""

from __future__ import annotations

import re

import pytest
from pydantic import BaseModel

from components.config import schema as config
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
PULUMI_YAML = (ROOT / "Pulumi.yaml").read_text()
CI = (ROOT / ".ci" / "run").read_text()


def _keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Dotted camelCase keys of a config model, nested models expanded."""
    keys = []
    for name, field in model.model_fields.items():
        key = prefix + (field.alias or name)
        nested = [
            arg
            for arg in getattr(field.annotation, "__args__", (field.annotation,))
            if isinstance(arg, type) and issubclass(arg, BaseModel)
        ]
        keys += _keys(nested[0], key + ".") if nested else [key]
    return keys


SECTIONS = {
    "gke-gpu:cluster": config.ClusterSpec,
    "gke-gpu:nodePools": config.NodePoolSpec,
    "gke-gpu:workloads": config.WorkloadSpec,
    "gke-gpu:devicePlugin": config.DevicePluginSpec,
}


def test_readme_opens_with_exactly_the_plan_and_test_commands() -> None:
    block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert block is not None
    commands = block.group(1).strip().splitlines()
    assert commands == [
        "python3 -m venv venv && venv/bin/pip install -r requirements-dev.txt "
        "&& venv/bin/python -m tools.render dev",
        "python3 -m venv venv && venv/bin/pip install -r requirements-dev.txt "
        "&& venv/bin/python -m pytest",
    ], "a newcomer's first two commands: install + offline plan, install + tests"


def test_ci_runs_the_readme_test_command_from_a_fresh_virtualenv() -> None:
    assert "python3 -m venv venv" in CI and "pip install" in CI and "-r requirements-dev.txt" in CI
    assert "venv/bin/python -m pytest" in CI, "CI must run what the README tells users to run"


@pytest.mark.parametrize("section", SECTIONS)
def test_every_config_key_is_in_the_readme_reference(section: str) -> None:
    reference = README.split(f"`{section}`", 1)[1]
    missing = [
        key
        for key in _keys(SECTIONS[section])
        if f"`{key}`" not in reference and not _in_combined_row(key, reference)
    ]
    assert missing == [], f"README's {section} table lacks {missing}"


def _in_combined_row(key: str, text: str) -> bool:
    # `command` / `args` share a row, as do `kubeconfig` / `context`.
    return any(f"`{key}`" in row for row in re.findall(r"\| `[^|]*` / `[^|]*` \|", text))


@pytest.mark.parametrize("section", SECTIONS)
def test_every_config_key_is_described_in_pulumi_yaml(section: str) -> None:
    block = PULUMI_YAML.split(f"# {section}", 1)[1].split("\n#\n", 1)[0]
    described = {m.group(1) for m in re.finditer(r"^#   (\S+)", block, re.M)}
    described |= {part for key in described for part in key.split("/")}
    missing = [k for k in _keys(SECTIONS[section]) if k not in described]
    assert missing == [], f"Pulumi.yaml's {section} comment block lacks {missing}"


def test_pulumi_yaml_config_block_is_one_the_pulumi_cli_accepts() -> None:
    # The CLI refuses to load a project whose config block breaks these rules, so every command
    # (preview, up, destroy) would fail: pulumi/pulumi sdk/go/common/workspace/project.go
    # (Project.Validate) and project.json (configTypeDeclaration).
    import yaml

    document = yaml.safe_load(PULUMI_YAML)
    problems = []
    for key, declaration in (document.get("config") or {}).items():
        if ":" in key and not key.startswith(f"{document['name']}:"):
            if not isinstance(declaration, dict) or set(declaration) != {"value"}:
                problems.append(f"{key}: another package's key may only set `value`")
            continue
        if not isinstance(declaration, dict):
            continue  # a plain default value is allowed
        if declaration.get("type") not in ("string", "integer", "boolean", "array"):
            problems.append(f"{key}: a declaration needs type string|integer|boolean|array")
        if declaration.get("type") == "array" and "items" not in declaration:
            problems.append(f"{key}: an array declaration needs `items`")
        extra = set(declaration) - {"type", "items", "description", "secret", "default"}
        if extra:
            problems.append(f"{key}: unknown attributes {sorted(extra)}")
    assert problems == [], f"`pulumi up` would refuse Pulumi.yaml: {problems}"
