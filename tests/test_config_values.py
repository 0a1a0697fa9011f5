"""Config values that land in generated files (haproxy.cfg, container args and env), refused by
their grammar with their key path before anything is rendered, and keys of the user's own long
enough to stand at a gate anyone can reach. Problems never show a secret value."""

from __future__ import annotations

from typing import Any

import pytest

from components.config import ConfigError, StackConfig, load
from components.config.rules.credentials import API_KEY_MIN_LENGTH
from components.config.source import SECRET_PLACEHOLDER

VLLM = "vllm/vllm-openai:v0.29.0"
KEY_REF = '"${GATE_API_KEY}"'


def _load(raw: dict[str, Any], **kwargs: Any) -> StackConfig:
    return load(raw, project="acme-ml", region="us-central1", stack="dev", **kwargs)


def _problems(raw: dict[str, Any], **kwargs: Any) -> list[str]:
    with pytest.raises(ConfigError) as info:
        _load(raw, **kwargs)
    return info.value.problems


def _vllm(**workload: Any) -> dict[str, Any]:
    return {
        "workloads": [
            {"name": "llm", "image": VLLM, "cache": {"size": "30Gi"}, "expose": {}, **workload}
        ]
    }


@pytest.mark.parametrize(
    "path",
    [
        f"/health?x={KEY_REF}",
        "/health?x=$(VLLM_API_KEY)",
        "/health#x",
        "/health x",
        "/health\\x",
        "/health'",
        "/health?x=%zz",
    ],
)
def test_a_probe_path_the_gates_config_would_read_as_syntax_is_refused(path: str) -> None:
    (problem,) = _problems(_vllm(probe={"path": path}))
    assert problem.startswith("workloads[0].probe.path: "), problem
    assert "is not an HTTP path a probe can request" in problem and "percent-encoded" in problem, (
        "the message says what a probe path may hold and how to write the rest"
    )


def test_a_probe_path_with_a_query_and_percent_encoding_is_valid() -> None:
    config = _load(_vllm(probe={"path": "/health?ready=1&detail=%2Fv1"}))
    assert config.workloads[0].probe.path == "/health?ready=1&detail=%2Fv1"


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("cache", {"size": "30Gi", "path": "/cache/$(VLLM_API_KEY)"}, "cache.path"),
        ("storage", {"size": "10Gi", "mountPath": "/data/$(VLLM_API_KEY)"}, "storage.mountPath"),
        (
            "modelCache",
            {"bucket": "acme-models", "mountPath": "/models/$(VLLM_API_KEY)"},
            "modelCache.mountPath",
        ),
        ("adapters", [{"name": "sql", "path": "$(VLLM_API_KEY)"}], "adapters[0].path"),
    ],
)
def test_a_path_that_kubernetes_would_expand_in_env_or_args_is_refused(
    field: str, value: Any, where: str
) -> None:
    """cache.path becomes HF_HOME and friends, modelCache.mountPath vLLM's model argument, an
    adapter's path --lora-modules: Kubernetes expands `$(NAME)` in each, so the key would be read
    as a folder name and printed in the server's log."""
    raw = _vllm(**{field: value}, kind="StatefulSet" if field == "storage" else "Deployment")
    problems = _problems(raw)
    mine = [p for p in problems if p.startswith(f"workloads[0].{where}: ")]
    assert mine and ("'$'" in mine[0] or "letters, digits" in mine[0]), problems


def _own_key(length: int, how: str) -> dict[str, Any]:
    """A workload given its own key of `length` characters, as the engine hands it over."""
    key = "k" * length
    if how == "env":  # a secure value inside `workloads`: the whole key is secret
        raw = _vllm(env={"VLLM_API_KEY": key})
        return {"raw": raw, "secret_keys": frozenset({"workloads"}), "secure_paths": None}
    raw = {**_vllm(secretEnv={"VLLM_API_KEY": "llmKey"}), "llmKey": key}
    return {"raw": raw, "secret_keys": frozenset({"llmKey"})}


@pytest.mark.parametrize("how", ["env", "secretEnv"])
def test_a_key_of_the_users_own_shorter_than_32_characters_is_refused(how: str) -> None:
    given = _own_key(API_KEY_MIN_LENGTH - 1, how)
    problems = _problems(**given)
    (problem,) = [p for p in problems if "API key" in p]
    assert problem.startswith(f"workloads[0].{how}.VLLM_API_KEY: "), problem
    assert f"shorter than {API_KEY_MIN_LENGTH} characters" in problem and "--secret" in problem
    assert "k" * 8 not in problem and str(API_KEY_MIN_LENGTH - 1) not in problem, (
        "neither the key nor its length is shown"
    )


@pytest.mark.parametrize("how", ["env", "secretEnv"])
def test_a_key_of_32_characters_is_accepted(how: str) -> None:
    given = _own_key(API_KEY_MIN_LENGTH, how)
    config = _load(**given)
    assert config.workloads[0].api_key is False, "the stack generates none: the user's is used"


def test_the_offline_plan_cannot_see_a_secret_key_and_does_not_guess() -> None:
    raw = {**_vllm(secretEnv={"VLLM_API_KEY": "llmKey"}), "llmKey": SECRET_PLACEHOLDER}
    assert _load(raw, secret_keys=frozenset({"llmKey"})).workloads[0].spec.secret_env


def test_a_broken_adapter_path_hides_no_other_problem_of_its_workload() -> None:
    """An adapter's path is required: once refused, the adapter could not be read at all, and
    the workload's rules (here its gate paths) would not run (found by dev/fuzz's injection)."""
    raw = _vllm(
        adapters=[{"name": "sql", "path": "$(VLLM_API_KEY)"}],
        expose={"paths": ["/v1/models", "/v1/a b"]},
    )
    paths = {p.split(": ", 1)[0] for p in _problems(raw)}
    assert {"workloads[0].adapters[0].path", "workloads[0].expose.paths[1]"} <= paths, paths
