"""The program through the real Pulumi engine: the CLI tools/real/build makes, its file backend
and passphrase secrets, and the real Kubernetes provider.

The Python program runs as an Automation API inline program: the CLI is started with
`--client=<address>` and talks to the Python SDK's own language server (pulumi.automation's
LanguageServer, pulumi 3.272.0) in this process, instead of launching pulumi-language-python,
which the Go module proxy does not serve (tools/real/versions.env). Everything after the language
host is the real thing: the engine's plan, diff, state and secrets, and the provider's calls to
the API server.
"""

from __future__ import annotations

import runpy
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pulumi import automation as auto

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools"


def program() -> None:
    """The stack's program, __main__.py, exactly as `pulumi up` runs it."""
    runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__")


def stack(
    name: str,
    config: dict[str, Any],
    secrets: dict[str, str],
    workdir: Path,
    env: dict[str, str],
    run: Callable[[], None] = program,
) -> auto.Stack:
    """A stack of project gke-gpu in `workdir` with the stack file's `config` (its `config:`
    mapping) and `secrets` set as secret values by path (`pulumi config set --path --secret`),
    running `run` (the stack's program unless a test gives a part of it)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}))
    options = auto.LocalWorkspaceOptions(
        work_dir=str(workdir),
        pulumi_home=env["PULUMI_HOME"],
        env_vars=env,
        secrets_provider="passphrase",
        project_settings=auto.ProjectSettings(name="gke-gpu", runtime="python"),
        pulumi_command=auto.PulumiCommand(root=str(TOOLS), skip_version_check=True),
    )
    created = auto.create_or_select_stack(name, "gke-gpu", run, opts=options)
    for key, value in secrets.items():
        created.set_config(key, auto.ConfigValue(value, secret=True), path=True)
    return created


def changes(summary: auto.UpdateSummary | None) -> dict[str, int]:
    """The engine's resource counts of an update, without `same`: what it changed."""
    return changes_of((summary.resource_changes or {}) if summary else {})


def changes_of(counts: Mapping[Any, int]) -> dict[str, int]:
    """Resource counts by operation (an update's, or a preview's change_summary), without `same`."""
    named = {str(getattr(op, "value", op)): n for op, n in counts.items()}  # str or OpType
    return {op: n for op, n in named.items() if op != "same" and n}
