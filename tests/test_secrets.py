"""Nested secrets as the engine passes them: the whole top-level key secret, decrypted as JSON.

pulumi/pulumi sdk/go/common/resource/config: a `secure:` value anywhere inside a structured key
makes `Object.Secure()` true, so `Map.Decrypt` hands the program the whole key decrypted and the
run lists the key among its secret keys. `run_program(config, secret_keys=...)` does the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components.config import ConfigError
from tests.conftest import DEPLOYMENT, MINIMAL, PROVIDER, Run
from tools import render

TOKEN = "hf_TOPSECRETTOKEN123"
CIPHERTEXT = "v1:QWxhZGRpbjpvcGVuIHNlc2FtZQ==ciphertextXYZ"


def _workloads(env: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": "llm",
            "image": "vllm/vllm-openai:v0.6.4",
            "gpu": {"type": "nvidia-l4", "count": 1},
            "env": env,
            "cache": {"size": "30Gi"},
            "expose": {"port": 443},
        }
    ]


def _env(recording: Any) -> dict[str, Any]:
    container = recording.served(DEPLOYMENT).inputs["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e for e in container["env"]}


def test_a_secret_workloads_key_keeps_the_users_workloads(run: Run) -> None:
    config = {**MINIMAL, "gke-gpu:workloads": _workloads({"HF_TOKEN": TOKEN})}
    recording = run(config, secret_keys=("gke-gpu:workloads",))
    (deployment,) = recording.of_type(DEPLOYMENT, outside_gates=True)
    assert deployment.inputs["metadata"]["name"] == "llm", (
        "a secret workloads key must be read, not replaced by the default workload"
    )


def test_without_the_stack_file_every_env_value_of_a_secret_key_goes_into_the_secret(
    run: Run,
) -> None:
    config = {
        **MINIMAL,
        "gke-gpu:workloads": _workloads({"HF_TOKEN": TOKEN, "LOG_LEVEL": "info"}),
    }
    recording = run(config, secret_keys=("gke-gpu:workloads",))
    env = _env(recording)
    assert all("valueFrom" in env[name] for name in ("HF_TOKEN", "LOG_LEVEL")), (
        "the engine does not say which env value was secure: each must be read from the Secret"
    )
    everything = json.dumps([r.inputs for r in recording.resources])
    everything += json.dumps(recording.stack_outputs, default=str)
    assert TOKEN not in everything, "the decrypted token must never reach a resource in clear"


def test_with_the_stack_file_only_the_secure_env_value_goes_into_the_secret(
    tmp_path: Path,
) -> None:
    stack_file = tmp_path / "Pulumi.sec.yaml"
    stack_file.write_text(
        "config:\n"
        "  gcp:project: acme-ml-dev\n"
        "  gcp:region: us-central1\n"
        "  gke-gpu:workloads:\n"
        "    - name: llm\n"
        "      image: vllm/vllm-openai:v0.6.4\n"
        "      cache: {size: 30Gi}\n"
        "      env:\n"
        "        LOG_LEVEL: info\n"
        "        HF_TOKEN:\n"
        f"          secure: {CIPHERTEXT}\n"
    )
    plan = render.render("sec", stack_file)
    env = _env(plan.recording)
    assert env["LOG_LEVEL"] == {"name": "LOG_LEVEL", "value": "info"}, (
        "a plain env value stays plain where the stack file shows it was not secure"
    )
    assert "valueFrom" in env["HF_TOKEN"], "the secure one is read from the Kubernetes Secret"
    assert CIPHERTEXT not in json.dumps(plan.manifests), "ciphertext never reaches a manifest"


def test_secure_where_a_secret_makes_no_sense_names_the_path_only(tmp_path: Path) -> None:
    stack_file = tmp_path / "Pulumi.sec.yaml"
    stack_file.write_text(
        "config:\n"
        "  gcp:project: acme-ml-dev\n"
        "  gcp:region: us-central1\n"
        "  gke-gpu:workloads:\n"
        "    - name: llm\n"
        "      image:\n"
        f"        secure: {CIPHERTEXT}\n"
    )
    with pytest.raises(ConfigError) as info:
        render.render("sec", stack_file)
    (problem,) = info.value.problems
    assert problem.startswith("workloads[0].image: a secret (`secure:`) here makes no sense"), (
        problem
    )
    assert CIPHERTEXT not in str(info.value), "the message names the key path, not the value"


def test_a_nested_secret_kubeconfig_feeds_the_provider_as_a_secret(run: Run) -> None:
    kubeconfig = "apiVersion: v1\nkind: Config\nusers: [{name: a, user: {token: s3cr3t}}]\n"
    config = {
        "gke-gpu:cluster": {"mode": "existing", "kubeconfig": kubeconfig},
        "gke-gpu:workloads": [
            {"name": "job", "kind": "Job", "image": "cuda:12", "nodeSelector": {"gpu": "true"}}
        ],
    }
    recording = run(config, secret_keys=("gke-gpu:cluster",))
    provider = recording.one(PROVIDER)
    assert provider.inputs["kubeconfig"] == "[secret]", (
        "cluster.kubeconfig set with --path --secret reaches the provider as a secret"
    )
    assert "s3cr3t" not in json.dumps([r.inputs for r in recording.resources])


def test_a_secret_nodepools_key_is_refused_naming_only_the_key(run: Run) -> None:
    config = {
        **MINIMAL,
        "gke-gpu:cluster": {"mode": "standard", "deletionProtection": False},
        "gke-gpu:nodePools": [{"name": "l4", "gpu": {"type": "nvidia-l4"}, "spot": True}],
    }
    with pytest.raises(ConfigError) as info:
        run(config, secret_keys=("gke-gpu:nodePools",))
    assert any(p.startswith("nodePools: holds a secret") for p in info.value.problems), (
        "nothing in a node pool is secret: a secure value there is a mistake"
    )


def _kubeconfig(server: str, token: str) -> str:
    return (
        "apiVersion: v1\nkind: Config\ncurrent-context: lab\n"
        f"clusters: [{{name: lab, cluster: {{server: '{server}'}}}}]\n"
        "contexts: [{name: lab, context: {cluster: lab, user: lab}}]\n"
        f"users: [{{name: lab, user: {{token: {token}}}}}]\n"
    )


def _identifier(run: Run, kubeconfig: str) -> str:
    config = {
        "gke-gpu:cluster": {"mode": "existing", "kubeconfig": kubeconfig},
        "gke-gpu:workloads": [
            {"name": "job", "kind": "Job", "image": "cuda:12", "nodeSelector": {"gpu": "true"}}
        ],
    }
    return run(config, secret_keys=("gke-gpu:cluster",)).one(PROVIDER).inputs["clusterIdentifier"]


def test_an_inline_kubeconfig_identifies_its_cluster_by_server_not_credentials(run: Run) -> None:
    first = _identifier(run, _kubeconfig("https://192.0.2.10:6443", "old"))
    rotated = _identifier(run, _kubeconfig("https://192.0.2.10:6443", "new"))
    other = _identifier(run, _kubeconfig("https://192.0.2.99:6443", "old"))
    assert first == rotated, "rotating the token must not replace everything deployed there"
    assert first != other, (
        "another cluster must change the identifier, or Pulumi would think the objects exist there"
    )
    assert "192.0.2" not in first and "old" not in first, "the identifier shows no secret part"
