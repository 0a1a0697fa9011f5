"""Real consumers of the gke-gpu component package (issue 40 item 2): the schema the real CLI gets
from the real plugin, the SDKs Pulumi's own generators write from it, and the examples compiled,
built, imported and previewed against them with the languages' own tools.

- TypeScript: the generated SDK compiles itself as `npm install` does (its postinstall), then
  `tsc --noEmit` checks examples/typescript/ against it with the real @pulumi/pulumi,
  @pulumi/kubernetes, @pulumi/gcp and @pulumi/tls that tests/real/node/package-lock.json pins
  (`npm ci --prefix tests/real/node --ignore-scripts`, which .ci/run does).
- Go: `go build` of examples/go/ with the generated SDK where its go.mod's replace points.
- Python: the generated SDK installed (uv, --target) and imported by .venv's interpreter.
- Pulumi YAML: `pulumi preview` of examples/yaml-existing/ by the real engine, Pulumi YAML's host,
  the gke-gpu plugin and the Kubernetes provider, against the session's local API server.

The plugin is tools/real/pulumi-resource-gke-gpu (the command Pulumi's Python host would run for
provider/, whose host the proxy does not serve); gcp's schema comes from a stand-in
(tests/real/gcp_schema_plugin.py says what it serves and why). Every command runs with a
PULUMI_HOME of this module's: the engine caches each plugin's schema there under the plugin's
version and the file's mtime, which the wrapper script keeps while provider/ changes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.package import HOSTED, NAME
from tests.real.conftest import ROOT, require
from tests.real.control_plane import ControlPlane

PLUGIN = ROOT / "tools" / "real" / "pulumi-resource-gke-gpu"
GCP_STANDIN = ROOT / "tests" / "real" / "gcp_schema_plugin.py"
NODE = ROOT / "tests" / "real" / "node"
EXAMPLES = ROOT / "examples"
PYTHON = ROOT / ".venv" / "bin" / "python"
TOKENS = {f"{NAME}:index:{c.__name__}" for c in HOSTED}


def run(command: Sequence[str | Path], *, timeout: float = 600, **kwargs: Any) -> str:
    """Runs a command; its stdout and stderr, or AssertionError with them and the exit code."""
    result = subprocess.run(
        [str(c) for c in command], capture_output=True, text=True, timeout=timeout, **kwargs
    )
    output = f"{result.stdout}\n{result.stderr}".strip()
    if result.returncode != 0:
        raise AssertionError(
            f"`{' '.join(map(str, command))}` exited {result.returncode}:\n{output}"
        )
    return output


def need(path: Path | None, what: str) -> Path:
    """`path`, when it exists; skips the test otherwise, or fails it under GKE_GPU_REQUIRE_REAL=1
    (as conftest.require does for the toolchain's binaries)."""
    if path is not None and path.exists():
        return path
    if os.environ.get("GKE_GPU_REQUIRE_REAL") == "1":
        pytest.fail(what)
    pytest.skip(what)


def which(name: str) -> Path | None:
    found = shutil.which(name)
    return Path(found) if found else None


def project_plugins(*plugins: tuple[str, Path]) -> dict[str, Any]:
    """Pulumi.yaml's `plugins:` for local provider plugins, each a folder holding
    pulumi-resource-<name>: the engine runs those, before its plugin cache (PATH is not searched:
    pulumi_env sets PULUMI_IGNORE_AMBIENT_PLUGINS)."""
    return {"providers": [{"name": name, "path": str(folder)} for name, folder in plugins]}


@pytest.fixture(scope="module")
def env(pulumi_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """pulumi_env with a PULUMI_HOME of this module's, whose plugins are the shared cache's."""
    require("pulumi", "gensdk", "pulumi-resource-kubernetes")
    home = tmp_path_factory.mktemp("pulumi-home")
    shared = Path(pulumi_env["PULUMI_HOME"]) / "plugins"
    if shared.is_dir():
        (home / "plugins").symlink_to(shared)
    return {**pulumi_env, "PULUMI_HOME": str(home)}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose Pulumi.yaml gives the engine the gcp stand-in as a local plugin: the CLI and
    gensdk bind the schema there."""
    folder = tmp_path_factory.mktemp("workspace")
    gcp = folder / "gcp-plugin" / "pulumi-resource-gcp"
    gcp.parent.mkdir()
    gcp.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{GCP_STANDIN}" "$@"\n')
    gcp.chmod(0o755)
    project = {
        "name": "package-sdks",
        "runtime": "yaml",
        "plugins": project_plugins(("gcp", gcp.parent)),
    }
    (folder / "Pulumi.yaml").write_text(yaml.safe_dump(project))
    return folder


@pytest.fixture(scope="module")
def schema_file(env: dict[str, str], workspace: Path) -> Path:
    """`pulumi package get-schema tools/real/pulumi-resource-gke-gpu`, as the real CLI prints it."""
    printed = subprocess.run(
        [str(env_bin(env, "pulumi")), "package", "get-schema", str(PLUGIN)],
        capture_output=True, text=True, env=env, cwd=workspace, timeout=300,
    )  # fmt: skip
    assert printed.returncode == 0, (
        f"the real CLI cannot get or bind the package's schema (exit {printed.returncode}): "
        f"`pulumi package add` would fail the same way:\n{printed.stderr}"
    )
    path = workspace / "schema.json"
    path.write_text(printed.stdout)
    return path


def env_bin(env: dict[str, str], name: str) -> Path:
    found = shutil.which(name, path=env["PATH"])
    assert found, f"{name} is not on PATH"
    return Path(found)


@pytest.fixture(scope="module")
def sdks(
    env: dict[str, str],
    workspace: Path,
    schema_file: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Path]:
    """The Node.js, Go and Python SDKs Pulumi's generators write from that schema, as `pulumi
    package add` does (tools/real/mods/gensdk)."""
    out = tmp_path_factory.mktemp("sdks")
    for language in ("nodejs", "go", "python"):
        run([env_bin(env, "gensdk"), schema_file, language, out / language], env=env, cwd=workspace)
    return {language: out / language for language in ("nodejs", "go", "python")}


def test_the_real_cli_gets_every_hosted_component_from_the_plugin(schema_file: Path) -> None:
    schema = json.loads(schema_file.read_text())
    assert set(schema["resources"]) == TOKENS, (
        "the schema the real CLI gets from the plugin must serve exactly components.package."
        f"HOSTED: a consumer can only use what it lists (got {sorted(schema['resources'])})"
    )
    service = schema["resources"][f"{NAME}:index:GpuService"]
    kubernetes = service["inputProperties"]["kubernetes"]["$ref"]
    assert kubernetes.endswith("#/resources/pulumi:providers:kubernetes"), (
        "GpuService's `kubernetes` is a reference to a Kubernetes provider, so a consumer passes "
        f"the provider object it deploys with (got {kubernetes})"
    )


def link_node_modules(project: Path) -> Path:
    """project/node_modules: a link to each package tests/real/node installed (@pulumi's one by
    one, so that the SDK can sit beside them as @pulumi/gke-gpu); TypeScript resolves the links
    to one copy of each, so the SDK and the example share @pulumi/pulumi's classes."""
    installed = need(
        NODE / "node_modules", "run `npm ci --prefix tests/real/node --ignore-scripts`"
    )
    modules = project / "node_modules"
    (modules / "@pulumi").mkdir(parents=True)
    for entry in installed.iterdir():
        if entry.name != "@pulumi":
            (modules / entry.name).symlink_to(entry)
    for entry in (installed / "@pulumi").iterdir():
        (modules / "@pulumi" / entry.name).symlink_to(entry)
    return modules


def test_the_typescript_example_type_checks_against_the_generated_sdk(
    sdks: dict[str, Path], tmp_path: Path
) -> None:
    modules = link_node_modules(tmp_path)
    # Where `npm install` puts the SDK: under its package.json name (the schema's
    # language.nodejs.packageName, which examples/typescript imports).
    name = json.loads((sdks["nodejs"] / "package.json").read_text())["name"]
    assert name == "@gke-gpu/gke-gpu", f"the Node.js SDK is named {name}, not what docs say"
    sdk = modules / name
    sdk.parent.mkdir(exist_ok=True)
    shutil.copytree(sdks["nodejs"], sdk)
    path = f"{modules / '.bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    # What `npm install` of the linked SDK runs: its postinstall compiles it into bin/ (`main`).
    run(["node", "scripts/postinstall.js"], cwd=sdk, env={**os.environ, "PATH": path})
    for name in ("index.ts", "tsconfig.json"):
        shutil.copy(EXAMPLES / "typescript" / name, tmp_path / name)
    tsc = subprocess.run(
        [str(modules / ".bin" / "tsc"), "--noEmit", "-p", "."],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert tsc.returncode == 0, (
        "examples/typescript/index.ts does not type-check against the SDK `pulumi package add` "
        f"generates: `pulumi up` of it stops on these errors:\n{tsc.stdout}{tsc.stderr}"
    )


def test_the_go_example_builds_against_the_generated_sdk(
    sdks: dict[str, Path], tmp_path: Path
) -> None:
    go = need(which("go"), "go is not on PATH")
    for name in ("main.go", "go.mod", "go.sum"):
        shutil.copy(EXAMPLES / "go" / name, tmp_path / name)
    # Where go.mod's replace points: `pulumi package add` writes the SDK to sdks/<package>.
    shutil.copytree(sdks["go"], tmp_path / "sdks" / "gke-gpu")
    build = subprocess.run(
        [str(go), "build", "-o", os.devnull, "."],
        capture_output=True, text=True, cwd=tmp_path, timeout=3600,
        env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"},
    )  # fmt: skip
    assert build.returncode == 0, (
        "examples/go does not build against the SDK Pulumi's Go generator writes (go.sum pins "
        f"every module it needs):\n{build.stdout}{build.stderr}"
    )


PYTHON_CHECK = """
import inspect, json, sys
sys.path.insert(0, sys.argv[1])
import pulumi_gke_gpu as sdk
kubernetes = inspect.signature(sdk.GpuServiceArgs.__init__).parameters["kubernetes"]
print(json.dumps({
    "file": sdk.__file__,
    "classes": sorted(n for n, c in vars(sdk).items() if inspect.isclass(c)),
    "kubernetes": str(kubernetes.annotation),
}))
"""


def test_the_generated_python_sdk_imports_with_every_component(
    sdks: dict[str, Path], tmp_path: Path
) -> None:
    uv = ROOT / ".uv" / "bin" / "uv"  # .ci/run's; else one on PATH
    uv = need(uv if uv.exists() else which("uv"), "no uv: .ci/run installs it into .uv")
    site = tmp_path / "site"
    # Installed, not only put on sys.path: the SDK reads its own version from the installed
    # distribution's metadata on import (_utilities.py, importlib.metadata.version).
    run(
        [uv, "pip", "install", "--offline", "--quiet", "--python", PYTHON, "--no-deps"]
        + ["--no-build-isolation", "--target", site, sdks["python"]]
    )
    found = json.loads(run([PYTHON, "-c", PYTHON_CHECK, site], cwd=tmp_path).splitlines()[-1])
    assert found["file"].startswith(str(site)), f"imported another pulumi_gke_gpu: {found}"
    missing = {
        name
        for component in HOSTED
        for name in (component.__name__, f"{component.__name__}Args")
        if name not in found["classes"]
    }
    assert not missing, f"a Python consumer cannot import {sorted(missing)} from the SDK"
    assert "pulumi_kubernetes.Provider" in found["kubernetes"], (
        "GpuServiceArgs' kubernetes takes the consumer's pulumi_kubernetes Provider (got "
        f"{found['kubernetes']})"
    )


def preview(env: dict[str, str], project: Path, kubeconfig: str) -> dict[str, Any]:
    """`pulumi stack init`, the kubeconfig as a secret, and `pulumi preview --json`: its result."""
    pulumi = env_bin(env, "pulumi")
    run([pulumi, "stack", "init", "test", "--secrets-provider", "passphrase"], cwd=project, env=env)
    run([pulumi, "config", "set", "--secret", "kubeconfig", kubeconfig], cwd=project, env=env)
    result = subprocess.run(
        [str(pulumi), "preview", "--json", "--non-interactive"],
        capture_output=True, text=True, cwd=project, env=env, timeout=600,
    )  # fmt: skip
    output = f"{result.stdout}\n{result.stderr}"
    assert "Traceback" not in output, f"a Python traceback reached the user:\n{output}"
    try:
        printed: dict[str, Any] = json.loads(result.stdout)
    except json.JSONDecodeError:
        printed = {}
    # What the user reads of a failed preview: the engine's errors, each with its line.
    errors = [
        d["message"]
        for d in printed.get("diagnostics", [])
        if d.get("severity") == "error" or d["message"].startswith("error:")
    ]
    assert result.returncode == 0 and not errors, (
        f"pulumi preview failed (exit {result.returncode}), the engine's summary "
        f"{printed.get('changeSummary')}:\n" + ("\n".join(errors) or output)
    )
    return printed


def up_again_destroy(env: dict[str, str], project: Path, plane: ControlPlane) -> None:
    """`pulumi up`, then a preview that must find nothing to change (no perpetual diff), then
    `pulumi destroy`, after which the API server holds nothing of the stack."""
    pulumi = str(env_bin(env, "pulumi"))
    quiet = ["--yes", "--non-interactive", "--skip-preview"]
    run([pulumi, "up", *quiet], cwd=project, env=env)
    assert "gke-gpu" in plane.kubectl("get", "namespace", "gke-gpu", "-o", "name", check=False)
    second = subprocess.run(
        [pulumi, "preview", "--expect-no-changes", "--non-interactive", "--diff"],
        capture_output=True, text=True, cwd=project, env=env, timeout=600,
    )  # fmt: skip
    assert second.returncode == 0, f"a second up would change something:\n{second.stdout}"
    run([pulumi, "destroy", *quiet], cwd=project, env=env)
    left = plane.kubectl("get", "namespace", "gke-gpu", "-o", "name", check=False)
    assert "NotFound" in left, f"destroy left the namespace: {left}"


def test_the_existing_cluster_yaml_example_previews_ups_and_destroys_through_the_real_engine(
    env: dict[str, str], plane: ControlPlane, tmp_path: Path
) -> None:
    require("pulumi-language-yaml")
    text = (EXAMPLES / "yaml-existing" / "Pulumi.yaml").read_text()
    # The gke-gpu plugin is the local one here (`packages:` would clone the repository), on as
    # many lines, so that the engine's messages name the example's own line numbers.
    plugins = json.dumps(project_plugins(("gke-gpu", PLUGIN.parent)))
    packages = re.compile(r"^packages:\n  gke-gpu: .*\n", re.MULTILINE)
    text, found = packages.subn(f"# the local plugin:\nplugins: {plugins}\n", text)
    assert found == 1, "examples/yaml-existing/Pulumi.yaml's packages: entry moved"
    (tmp_path / "Pulumi.yaml").write_text(text)
    result = preview(env, tmp_path, plane.kubeconfig.read_text())
    types = sorted(step["newState"]["type"] for step in result["steps"] if step["op"] == "create")
    assert result["changeSummary"] == {"create": len(types)} and len(types) == 6, (
        "the stack, the provider, the namespace, GpuService, its workload and the Job: "
        f"{result['changeSummary']}, {types}"
    )
    assert "kubernetes:batch/v1:Job" in types, f"the workload's Job is not created: {types}"
    up_again_destroy(env, tmp_path, plane)
    job = next(s["newState"] for s in result["steps"] if s["newState"]["type"].endswith(":Job"))
    container = job["inputs"]["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] in (1, "1"), (
        f"the Job's container must ask the scheduler for one GPU: {container['resources']}"
    )
