"""`python -m tools.stacks policy-config <stack>`: the pack config CI passes to every preview and
up, production when the stack's GitHub environment or its stack file says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from policy.rules import PRODUCTION_ENV, pack_config
from tools import stacks


def _production(config: dict[str, dict[str, object]]) -> bool:
    (value,) = {properties["production"] for properties in config.values()}
    assert isinstance(value, bool)
    return value


def _run(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], env: str
) -> tuple[int, str, str]:
    monkeypatch.setenv(PRODUCTION_ENV, env)
    code = stacks.main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("value", ["true", "TRUE", "True", " true\n"])
def test_the_github_environment_makes_any_stack_production(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(["policy-config", "dev"], monkeypatch, capsys, value)
    assert code == 0 and json.loads(out) == pack_config(True), (
        "the environment variable is what a pull request cannot change: it must turn the "
        "production rules on whatever the stack file says"
    )


@pytest.mark.parametrize("value", ["", "false", "FALSE"])
def test_a_stack_file_marked_production_stays_production_whatever_the_environment(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(["policy-config", "prod"], monkeypatch, capsys, value)
    assert code == 0 and _production(json.loads(out)), (
        "cluster.production: true in Pulumi.prod.yaml is production even where the environment "
        "sets no variable (or false)"
    )


@pytest.mark.parametrize("value", ["", "false"])
def test_a_dev_stack_without_the_variable_is_not_production(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(["policy-config", "dev"], monkeypatch, capsys, value)
    assert code == 0 and json.loads(out) == pack_config(False), (
        "dev may keep an open endpoint for quick tests; an unset variable is no production"
    )


@pytest.mark.parametrize("value", ["yes", "1", "on", "ture", "production"])
def test_a_value_that_is_neither_true_nor_false_stops_the_run(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(["policy-config", "dev"], monkeypatch, capsys, value)
    assert code == 2 and out == "", (
        f"{PRODUCTION_ENV}={value!r} must not silently mean false and turn production rules off"
    )
    assert f"{PRODUCTION_ENV}={value!r}: expected true or false" in err, "say what to fix"


def test_an_unknown_stack_stops_the_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(["policy-config", "staging"], monkeypatch, capsys, "")
    assert code == 1 and out == "" and "Pulumi.staging.yaml" in err, (
        "a stack without a stack file has no config to write; the workflow must stop"
    )


@pytest.mark.parametrize("args", [["policy-config"], ["policy-config", "dev", "prod"], ["dev"]])
def test_a_malformed_command_line_is_refused(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(args, monkeypatch, capsys, "")
    assert code == 2 and out == "" and "usage:" in err


def test_the_stack_file_is_read_the_way_the_stack_list_reads_it(tmp_path: Path) -> None:
    cluster = {"mode": "standard", "production": True}
    config = {"gcp:project": "acme-ml-test", "gke-gpu:cluster": json.dumps(cluster)}
    (tmp_path / "Pulumi.eu.yaml").write_text(yaml.safe_dump({"config": config}))
    assert _production(stacks.policy_config("eu", {}, root=tmp_path)), (
        "a cluster key set with `pulumi config set` (JSON text) is still read as production"
    )
    assert stacks.discover(tmp_path) == [stacks.Stack("eu", protected=True)]
