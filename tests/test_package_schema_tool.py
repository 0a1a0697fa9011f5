"""tools/package_schema.py (issue 41): the schema the provider host serves, built in this process
and attached to each GitHub release as schema.json (.github/workflows/release.yml)."""

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime.proto import provider_pb2

from components.package import HOSTED, NAME
from tests.package_host import ServedMonitor, engine_side, provider_host
from tools import package_schema
from tools.engine import PROJECT, CloudMocks

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    """`python -m tools.package_schema --out <file> --check`, as the release workflow runs it."""
    out = tmp_path_factory.mktemp("schema") / "schema.json"
    return package_schema.main(["--out", str(out), "--check"]), out


@pytest.fixture(scope="module")
def schema(written: tuple[int, Path]) -> dict[str, Any]:
    return json.loads(written[1].read_text())


def test_the_check_passes_on_this_checkout(written: tuple[int, Path]) -> None:
    code, _ = written
    assert code == 0, (
        "the release workflow runs this check: a failing one stops every release (its problems "
        "are printed above)"
    )


def test_the_written_schema_carries_the_projects_version(schema: dict[str, Any]) -> None:
    assert schema["name"] == NAME and schema["version"] == VERSION, (
        f"the released schema.json must be {NAME} {VERSION}, the version of the tag and the wheel "
        "beside it: a consumer reading it must get the types of the release they install"
    )


def test_the_written_schema_serves_every_hosted_component_under_its_token(
    schema: dict[str, Any],
) -> None:
    tokens = sorted(f"{NAME}:index:{c.__name__}" for c in HOSTED)
    assert sorted(schema["resources"]) == tokens, (
        "schema.json must list exactly the hosted components under gke-gpu:index:<Class>: a "
        "missing one has no type in a consumer's generated SDK, an extra one is not served"
    )


def test_the_written_schema_is_the_one_the_real_host_serves(
    schema: dict[str, Any], tmp_path: Path
) -> None:
    """The host started as the engine starts it (tests/package_host.py), asked over gRPC."""
    monitor = ServedMonitor(CloudMocks(), PROJECT, "test")
    with engine_side(monitor) as (address, _), provider_host(address, tmp_path) as client:
        served = json.loads(client.GetSchema(provider_pb2.GetSchemaRequest(version=0)).schema)
    assert schema == served, (
        "schema.json must be what `pulumi package add` gets from the provider host at the tag: "
        "a consumer generating an SDK from either must get the same types"
    )


def test_the_file_is_sorted_and_indented_so_releases_diff_cleanly(
    written: tuple[int, Path], schema: dict[str, Any]
) -> None:
    assert written[1].read_text() == json.dumps(schema, sort_keys=True, indent=2) + "\n", (
        "two releases' schema.json files compare line by line only when written the same way"
    )


def test_the_check_names_a_wrong_version_and_a_missing_component(schema: dict[str, Any]) -> None:
    gpu_service = f"{NAME}:index:GpuService"
    broken = {
        **schema,
        "version": "0.0.0",
        "resources": {k: v for k, v in schema["resources"].items() if k != gpu_service},
    }
    found = package_schema.problems(broken, VERSION)
    assert len(found) == 2, f"one line per problem, each of the two: {found}"
    assert "0.0.0" in found[0] and VERSION in found[0], (
        "a schema of another version than the tag's must stop the release, naming both"
    )
    assert gpu_service in found[1], (
        "a hosted component missing from the schema must stop the release, naming its token"
    )
    assert package_schema.problems(schema, VERSION) == []


def test_without_components_serve_the_tool_builds_the_sdks_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fallback: the SDK's ComponentProvider over HOSTED, as provider/__main__.py served
    before components.serve (None in sys.modules makes its import fail as a missing module)."""
    monkeypatch.setitem(sys.modules, "components.serve", None)
    schema = package_schema.build_schema(VERSION)
    assert package_schema.problems(schema, VERSION) == [], (
        "without components.serve the tool must still build a releasable schema: the version "
        "and every hosted component's token"
    )
