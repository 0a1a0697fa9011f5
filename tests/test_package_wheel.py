"""The library as a wheel (issue 33): built from pyproject.toml, with its PEP 561 marker
`gke_gpu/py.typed` (issue 41), installed into a fresh virtualenv, imported as `gke_gpu` (never a
top-level `components`), and the Python consumer example (examples/python/) run from there
registers what this repository's program registers.

The tests that build and install need PyPI (marked `network`): `uv build` fetches the build
backend and the install resolves the wheel's dependency ranges (uv's cache serves what it already
holds)."""

import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest

from dev.relative_imports import absolute_imports
from tests.conftest import ROOT, stack_config
from tools.engine import Recording, run_program

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXAMPLE = ROOT / "examples" / "python" / "__main__.py"
IMPORT_NAME = "gke_gpu"


def _uv() -> str:
    """The project's uv (.uv/bin/uv, as the README installs it) or one on PATH."""
    local = ROOT / ".uv" / "bin" / "uv"
    found = str(local) if local.is_file() else shutil.which("uv")
    if found is None:
        pytest.fail("uv is needed to build the wheel: install it as the README does (.uv/bin/uv)")
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel `uv build --wheel` makes of this checkout."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([_uv(), "build", "--wheel", "--out-dir", str(out), "-q"], cwd=ROOT, check=True)
    wheels = sorted(out.glob("*.whl"))
    version = PYPROJECT["project"]["version"]
    assert [w.name for w in wheels] == [f"gke_gpu-{version}-py3-none-any.whl"], (
        "one wheel, named after the project and its version"
    )
    return wheels[0]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """A fresh virtualenv with the built wheel installed, and nothing of this checkout."""
    env = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    subprocess.run(
        [_uv(), "pip", "install", "-q", "--python", str(env / "bin" / "python"), str(wheel)],
        cwd=wheel.parent,  # no project settings of this checkout apply to the install
        check=True,
    )
    return env


def _python(venv: Path, code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        cwd=venv,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": "", **env},
    )


def test_the_library_imports_itself_relatively_so_the_wheel_can_rename_it() -> None:
    left = [
        f"{p.relative_to(ROOT)}:{n.lineno}"
        for p in sorted((ROOT / "components").rglob("*.py"))
        for n in absolute_imports(p.read_text())
    ]
    assert not left, (
        "inside components/ an absolute `from components...` import breaks the installed wheel "
        f"(imported as {IMPORT_NAME}); run `python -m dev.relative_imports`: {len(left)} such, "
        f"first {left[:5]}"
    )


@pytest.mark.network
def test_the_wheel_installs_into_a_fresh_virtualenv_and_gives_gpu_service(venv: Path) -> None:
    result = _python(
        venv,
        "import importlib.util, json\n"
        "from gke_gpu.service.gpu_service import GpuService\n"
        "from gke_gpu.service.apikey import ApiKey\n"
        "import gke_gpu\n"
        "print(json.dumps([GpuService.__module__, gke_gpu.__file__,"
        " importlib.util.find_spec('components') is None]))",
    )
    assert result.returncode == 0, f"the installed wheel does not import:\n{result.stderr}"
    module, path, no_components = json.loads(result.stdout)
    assert module == "gke_gpu.service.gpu_service" and str(venv) in path, (
        "GpuService must come from the wheel in the fresh virtualenv, not from this checkout"
    )
    assert no_components, "the wheel must not install a top-level `components` package"


@pytest.mark.network
def test_the_wheel_ships_py_typed_so_type_checkers_read_its_annotations(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert f"{IMPORT_NAME}/py.typed" in names, (
        f"the wheel must ship {IMPORT_NAME}/py.typed (components/py.typed): without that marker "
        "(PEP 561) mypy and pyright ignore the library's annotations, so a consumer's checker "
        "sees GpuService, its Args and outputs as untyped"
    )


@pytest.mark.network
def test_the_wheel_declares_ranges_and_its_license(venv: Path) -> None:
    result = _python(
        venv,
        "import importlib.metadata as m, json\n"
        "d = m.distribution('gke-gpu')\n"
        "print(json.dumps([d.version, d.metadata['License-Expression'], d.requires]))",
    )
    version, license_, requires = json.loads(result.stdout)
    assert version == PYPROJECT["project"]["version"] and license_ == "Apache-2.0"
    assert requires and all(">=" in r and "<" in r for r in requires), (
        f"a library declares ranges, not pins (the program keeps uv.lock): {requires}"
    )


def _registered(recording: Recording) -> list[tuple[str, str, str]]:
    return sorted(
        (r.urn, r.type, json.dumps(r.inputs, sort_keys=True)) for r in recording.resources
    )


RUN_EXAMPLE = """
import json, sys
sys.path.append({root!r})  # the recording engine (tools/), not the library
from tools.engine import run_program
recording = run_program(json.loads({config!r}), stack="dev", program={example!r},
                        stack_file={stack_file!r})
print(json.dumps(sorted((r.urn, r.type, json.dumps(r.inputs, sort_keys=True))
                        for r in recording.resources)))
"""


def test_the_python_example_read_from_this_checkout_registers_what_the_program_registers(
    dev: Recording, tmp_path: Path
) -> None:
    """The example without the wheel (no network): `gke_gpu` read as this checkout's
    `components`, so a change of the library's API that breaks the example fails here too."""
    program = tmp_path / "__main__.py"
    program.write_text(EXAMPLE.read_text().replace(IMPORT_NAME, "components"))
    recording = run_program(
        stack_config("dev"), stack="dev", program=program, stack_file=ROOT / "Pulumi.dev.yaml"
    )
    assert _registered(recording) == _registered(dev), (
        "the Python example must register the dev stack's resources with the same URNs and "
        "inputs as this repository's program"
    )


@pytest.mark.network
def test_the_python_example_registers_what_the_program_registers(
    venv: Path, dev: Recording
) -> None:
    imported = {
        node.module
        for node in ast.walk(ast.parse(EXAMPLE.read_text()))
        if isinstance(node, ast.ImportFrom)
    } | {
        alias.name
        for node in ast.walk(ast.parse(EXAMPLE.read_text()))
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert {m.split(".")[0] for m in imported if m} == {"pulumi", IMPORT_NAME}, (
        "the example imports the library by its wheel's name only"
    )
    code = RUN_EXAMPLE.format(
        root=str(ROOT),
        config=json.dumps(stack_config("dev")),
        example=str(EXAMPLE),
        stack_file=str(ROOT / "Pulumi.dev.yaml"),
    )
    result = _python(venv, code)
    assert result.returncode == 0, f"the example fails from the wheel:\n{result.stderr[-3000:]}"
    got: list[Any] = [tuple(r) for r in json.loads(result.stdout.splitlines()[-1])]
    assert got == _registered(dev), (
        "the Python example, importing the installed wheel, must register the dev stack's "
        "resources with the same URNs and inputs as this repository's program"
    )
