"""The docs users read first stay true: README commands, config reference, Pulumi.yaml."""

from __future__ import annotations

import re
import tomllib

import pytest
from pydantic import BaseModel

from components.config import schema as config
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
PULUMI_YAML = (ROOT / "Pulumi.yaml").read_text()
CI = (ROOT / ".ci" / "run").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCK = tomllib.loads((ROOT / "uv.lock").read_text())


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


def _readme_commands() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert block is not None, "README.md must open with a bash block of commands"
    return block.group(1).strip().splitlines()


def _uv_version() -> str:
    match = re.search(r"^UV_VERSION=(\S+)$", CI, re.M)
    assert match is not None, ".ci/run must name the project's uv version as UV_VERSION=X.Y.Z"
    return match.group(1)


def test_readme_opens_with_exactly_the_plan_and_test_commands() -> None:
    bootstrap = f"python3 -m venv .uv && .uv/bin/pip install -q uv=={_uv_version()} && "
    assert _readme_commands() == [
        bootstrap + ".uv/bin/uv run --frozen --group plan python -m tools.render dev",
        bootstrap + ".uv/bin/uv run --frozen --group test python -m pytest",
    ], (
        "a newcomer's first two commands, on a machine with only Python: install from the lock +"
        " offline plan, install the test group + tests"
    )


def test_ci_runs_both_readme_commands_verbatim() -> None:
    ci_lines = [line.strip() for line in CI.splitlines()]
    for command in _readme_commands():
        assert any(line.startswith(command) for line in ci_lines), (
            f"CI must run what the README tells users to run, word for word: {command}"
        )


def test_every_install_uses_the_one_pinned_uv() -> None:
    version = _uv_version()
    delivery = (ROOT / "docs" / "delivery.md").read_text()
    pinned = set(re.findall(r"uv==([0-9][^\s\"']*)", README + CI + delivery))
    workflows = {
        path.name: path.read_text() for path in (ROOT / ".github" / "workflows").glob("*.yml")
    }
    for text in workflows.values():
        for step in re.findall(r"uses: astral-sh/setup-uv@.*?(?=\n      - |\Z)", text, re.S):
            pinned |= set(re.findall(r'version: "([^"]+)"', step))
    assert pinned == {version}, (
        f"README, docs, .ci/run and the workflows must install the same uv ({version}); found"
        f" {pinned}:"
        " another uv may write or read uv.lock differently"
    )
    required = PYPROJECT["tool"]["uv"]["required-version"]
    assert required == f">={version}", (
        f"pyproject.toml's required-version {required!r} must admit the pinned uv and no older one"
    )


def test_workflows_install_only_from_the_lock_with_a_pinned_setup_uv() -> None:
    problems = []
    for path in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
        text = path.read_text()
        if "pip install" in text or "requirements" in text:
            problems.append(f"{path.name}: installs with pip/requirements, not from uv.lock")
        commands = [line.split(" #")[0] for line in text.splitlines()]
        for sync in (c for c in commands if "uv sync" in c and not c.lstrip().startswith("#")):
            if "--frozen" not in sync:
                problems.append(f"{path.name}: `{sync}` may re-resolve instead of using uv.lock")
        for ref in re.findall(r"uses: astral-sh/setup-uv@(\S+)", text):
            if not re.fullmatch(r"[0-9a-f]{40}", ref):
                problems.append(f"{path.name}: setup-uv@{ref} is not pinned to a commit SHA")
        if "pulumi/actions@" in text and not re.search(r"UV_FROZEN: \"1\"", text):
            problems.append(f"{path.name}: Pulumi's own `uv sync` could re-lock (set UV_FROZEN)")
    assert problems == [], f"a deploy could run packages nobody tested: {problems}"


def test_pulumi_installs_exactly_the_locked_runtime_dependencies() -> None:
    import yaml

    options = yaml.safe_load(PULUMI_YAML)["runtime"]["options"]
    assert options["toolchain"] == "uv", "`pulumi up` must install from uv.lock (uv toolchain)"
    # Pulumi runs a bare `uv sync`, which also installs uv's default groups (`dev` unless set).
    assert PYPROJECT["tool"]["uv"]["default-groups"] == [], (
        "`pulumi up` would install test or lint tools into the program's environment"
    )
    locked = {package["name"]: package["version"] for package in LOCK["package"]}
    for requirement in PYPROJECT["project"]["dependencies"]:
        name, _, version = requirement.partition("==")
        assert version, f"{requirement}: runtime dependencies are pinned exactly"
        assert locked.get(re.sub(r"[-_.]+", "-", name).lower()) == version, (
            f"uv.lock does not pin {requirement}"
        )


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


def test_the_readme_allocatable_table_matches_the_formula() -> None:
    from components import allocatable

    rows = re.findall(
        r"\| (\S+) \((\d+) vCPU, (\d+) GB\) \| ([\d.]+) CPU / ([\d.]+) GiB \| "
        r"([\d.]+) CPU / ([\d.]+) GiB \|",
        README,
    )
    assert len(rows) == 5, "the table under 'What fits on a node' lists five machines"
    for name, vcpus, memory, cpu, mem, pod_cpu, pod_mem in rows:
        node = allocatable.node_allocatable(int(vcpus), int(memory))
        pod = allocatable.pod_allocatable(int(vcpus), int(memory))
        assert (cpu, mem) == (
            f"{node.cpu_millicores / 1000:.2f}",
            f"{node.memory_bytes / 2**30:.2f}",
        ), f"{name}: README's allocatable drifted from components/allocatable.py"
        assert (pod_cpu, pod_mem) == (
            f"{pod.cpu_millicores / 1000:.2f}",
            f"{pod.memory_bytes / 2**30:.2f}",
        ), f"{name}: README's room for pods drifted from components/allocatable.py"
