"""The docs users read first stay true: README commands, links between the pages, Pulumi.yaml.

The configuration reference (docs/configuration.md, Pulumi.yaml's key list) is generated from the
config schema and checked by tests/test_reference.py.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
DOCS = sorted((ROOT / "docs").glob("*.md"))
PULUMI_YAML = (ROOT / "Pulumi.yaml").read_text()
CI = (ROOT / ".ci" / "run").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCK = tomllib.loads((ROOT / "uv.lock").read_text())
# The README is the quick start and the map; longer sections live in docs/.
README_MAX_LINES = 200


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
    docs = "".join(path.read_text() for path in DOCS)
    pinned = set(re.findall(r"uv==([0-9][0-9A-Za-z.+!-]*)", README + CI + docs))
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
    from packaging.requirements import Requirement

    locked = {package["name"]: package["version"] for package in LOCK["package"]}
    for text in PYPROJECT["project"]["dependencies"]:
        # The library declares ranges (issue 33); the program installs what uv.lock pins, which
        # is the range's floor: the version the tests ran with.
        requirement = Requirement(text)
        floor = [s.version for s in requirement.specifier if s.operator == ">="]
        pinned = locked.get(re.sub(r"[-_.]+", "-", requirement.name).lower())
        assert floor == [pinned], (
            f"{text}: uv.lock pins {pinned}; the range must start at the locked (tested) version"
        )
        assert requirement.specifier.contains(pinned or ""), f"uv.lock's {pinned} is outside {text}"


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


def test_the_node_sizing_allocatable_table_matches_the_formula() -> None:
    from components.facts import allocatable

    page = (ROOT / "docs" / "node-sizing.md").read_text()
    rows = re.findall(
        r"\| (\S+) \((\d+) vCPU, (\d+) GB\) \| ([\d.]+) CPU / ([\d.]+) GiB \| "
        r"([\d.]+) CPU / ([\d.]+) GiB \|",
        page,
    )
    assert len(rows) == 5, "the table under 'What fits on a node' lists five machines"
    for name, vcpus, memory, cpu, mem, pod_cpu, pod_mem in rows:
        node = allocatable.node_allocatable(int(vcpus), int(memory))
        pod = allocatable.pod_allocatable(int(vcpus), int(memory))
        assert (cpu, mem) == (
            f"{node.cpu_millicores / 1000:.2f}",
            f"{node.memory_bytes / 2**30:.2f}",
        ), f"{name}: docs/node-sizing.md's allocatable drifted from components/facts/allocatable.py"
        assert (pod_cpu, pod_mem) == (
            f"{pod.cpu_millicores / 1000:.2f}",
            f"{pod.memory_bytes / 2**30:.2f}",
        ), (
            f"{name}: docs/node-sizing.md's room for pods drifted from "
            "components/facts/allocatable.py"
        )


# --- the README and the docs pages as a whole ---------------------------------------------------

PAGES = [ROOT / "README.md", *DOCS]
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _prose(path: Path) -> str:
    """A page without its code blocks, where brackets are code, not links."""
    return _FENCE.sub("", path.read_text())


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a page's headings (lowercase; punctuation but `-`/`_` dropped;
    spaces to `-`; a repeated heading gets `-1`, `-2`)."""
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", _prose(path), re.M):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def test_every_relative_link_points_to_a_file_and_heading_that_exist() -> None:
    broken = []
    for page in PAGES:
        for target in _LINK.findall(_prose(page)):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            path = (page.parent / file_part).resolve() if file_part else page
            where = f"{page.relative_to(ROOT)} -> {target}"
            if not path.exists():
                broken.append(f"{where}: no such file")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{where}: no heading with that anchor")
    assert broken == [], f"links that lead nowhere: {broken}"


def test_the_readme_is_the_quick_start_and_the_map() -> None:
    lines = README.count("\n")
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines: keep the quick start, the prerequisites and the map there "
        "and move long sections into a docs/ page linked from its Documentation table"
    )
    linked = {
        (ROOT / target.partition("#")[0]).resolve()
        for target in _LINK.findall(_prose(ROOT / "README.md"))
    }
    unlinked = [str(p.relative_to(ROOT)) for p in DOCS if p.resolve() not in linked]
    assert unlinked == [], f"docs pages a reader of the README cannot find: {unlinked}"


def test_every_documented_module_command_exists() -> None:
    missing = []
    for page in PAGES:
        for module in re.findall(r"python -m ([a-z_][a-z0-9_.]*)", page.read_text()):
            top = module.split(".")[0]
            if not (ROOT / top).is_dir():
                continue  # pytest, venv, pip: not this repository's
            base = ROOT.joinpath(*module.split("."))
            if not (base.with_suffix(".py").is_file() or (base / "__main__.py").is_file()):
                missing.append(f"{page.relative_to(ROOT)}: python -m {module}")
    assert missing == [], (
        f"commands the docs tell users to run, with no module behind them: {missing}"
    )


def test_the_key_rotation_command_names_the_dev_stacks_real_password_urn() -> None:
    from tests import shared

    page = (ROOT / "docs" / "day-2.md").read_text()
    (urn,) = re.findall(r"pulumi up --replace '([^']+)'", page)
    passwords = [
        r.urn
        for r in shared.recording("dev").resources
        if r.type == "random:index/randomPassword:RandomPassword"
    ]
    assert passwords == [urn], (
        "`pulumi up --replace` with a URN the state does not hold replaces nothing: the key "
        f"is not rotated (the dev stack's: {passwords})"
    )


# What a comment in an example says to the maintainers rather than to the user copying it: where
# the setup came from, which test or fuzz seed it answers, which upstream source file holds a fact.
NOTES_TO_OURSELVES = re.compile(
    r"\bseed \d|written from the README|e2e tests|\w\.go\b|\bfuzz|\bissue \d", re.IGNORECASE
)


def test_example_comments_speak_to_the_user_copying_them() -> None:
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted((ROOT / "examples").glob("Pulumi.*.yaml"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "#" in line and NOTES_TO_OURSELVES.search(line.split("#", 1)[1])
    ]
    assert not found, (
        "an example is read by someone setting up their own stack: say what it does and why, "
        f"not where we got it:\n{chr(10).join(found)}"
    )
