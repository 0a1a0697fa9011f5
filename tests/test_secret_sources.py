"""Secrets stay secret wherever config comes from: a Pulumi ESC environment, `--config-file`.

The engine marks a key secret when a `secure:` leaf (or an ESC secret) is anywhere inside, and
hands the whole key over decrypted (pulumi/pulumi sdk/go/common/resource/config `Map.Decrypt`).
The program learns which leaves were secure only from the stack file beside it, and only when
the run's config is that file's. These tests drive the real program the way the engine does in
those cases: the config it hands over is not what the stack file says.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from components.config import ConfigError, load
from components.config.source import read_stack_file
from tests.conftest import DEPLOYMENT, MINIMAL, ROOT
from tools import render
from tools.engine import Recording, run_program

TOKEN = "hf_ESCSECRETTOKEN987"
CIPHERTEXT = "v1:c2VjcmV0IGNpcGhlcnRleHQ=abc"
STACK_FILE = """\
config:
  gcp:project: acme-ml-test
  gcp:region: us-central1
  gke-gpu:workloads:
    - name: llm
      image: vllm/vllm-openai:v0.29.0
      gpu: {type: nvidia-l4, count: 1}
      cache: {size: 30Gi}
      env:
        LOG_LEVEL: info
"""


def _engine_config(env: dict[str, str]) -> dict[str, Any]:
    """The config the engine hands over: the stack file's workload with `env` merged in."""
    workload = {
        "name": "llm",
        "image": "vllm/vllm-openai:v0.29.0",
        "gpu": {"type": "nvidia-l4", "count": 1},
        "cache": {"size": "30Gi"},
        "env": {"LOG_LEVEL": "info", **env},
    }
    return {**MINIMAL, "gke-gpu:workloads": [workload]}


def _env(recording: Recording) -> dict[str, Any]:
    (deployment,) = recording.of_type(DEPLOYMENT, outside_gates=True)
    container = deployment.inputs["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e for e in container["env"]}


def _everything_plain(recording: Recording, stack: str) -> str:
    """Every resource input, stack output and offline-plan artifact, as text."""
    plan = render.Plan.of(stack, recording, ("gke-gpu:workloads",))
    return json.dumps(
        [
            [r.inputs for r in recording.resources],
            recording.stack_outputs,
            render.plan_document(plan),
            plan.manifests,
        ],
        default=str,
    )


def _run(tmp_path: Path, stack_file: str, env: dict[str, str]) -> Recording:
    path = tmp_path / "Pulumi.esc.yaml"
    path.write_text(stack_file)
    return run_program(
        _engine_config(env), stack="esc", secret_keys=("gke-gpu:workloads",), stack_file=path
    )


def test_config_from_an_esc_environment_is_all_secret(tmp_path: Path) -> None:
    recording = _run(
        tmp_path, "environment:\n  - acme/llm-prod\n" + STACK_FILE, {"HF_TOKEN": TOKEN}
    )
    env = _env(recording)
    assert "valueFrom" in env["HF_TOKEN"], (
        "HF_TOKEN came from an ESC environment, which the stack file cannot show: it must be "
        "read from the Kubernetes Secret, not written into the Deployment"
    )
    assert "valueFrom" in env["LOG_LEVEL"], (
        "with an environment imported, the stack file cannot prove any leaf was plain: fail closed"
    )
    assert TOKEN not in _everything_plain(recording, "esc"), (
        "the ESC secret must not reach any plain input, output, plan.json or manifest"
    )


def test_a_differing_config_file_makes_every_value_secret(tmp_path: Path) -> None:
    """`pulumi up --config-file other.yaml`: the engine's config is other.yaml's, the file beside
    the program is Pulumi.<stack>.yaml, which shows no secure leaf at all."""
    recording = _run(tmp_path, STACK_FILE, {"HF_TOKEN": TOKEN})
    assert "valueFrom" in _env(recording)["HF_TOKEN"], (
        "the engine marked workloads secret and the stack file does not match what it handed "
        "over: which leaf was secret is unknown, so each env value is read from the Secret"
    )
    assert TOKEN not in _everything_plain(recording, "esc")


def test_a_plain_value_in_the_file_that_differs_from_the_engines_is_not_trusted(
    tmp_path: Path,
) -> None:
    """The file says HF_TOKEN is a plain placeholder; the engine hands over a real token (an
    environment or another config file overrides it): the file proves nothing about it."""
    stack_file = STACK_FILE + "        HF_TOKEN: placeholder\n        OTHER:\n"
    stack_file += f"          secure: {CIPHERTEXT}\n"
    recording = _run(tmp_path, stack_file, {"HF_TOKEN": TOKEN, "OTHER": "x"})
    assert "valueFrom" in _env(recording)["HF_TOKEN"], (
        "a value the stack file shows as plain but the engine hands over differently must be "
        "treated as secret"
    )
    assert TOKEN not in _everything_plain(recording, "esc")


def test_when_the_file_matches_only_its_secure_leaves_are_secret(tmp_path: Path) -> None:
    stack_file = STACK_FILE + f"        HF_TOKEN:\n          secure: {CIPHERTEXT}\n"
    recording = _run(tmp_path, stack_file, {"HF_TOKEN": TOKEN})
    env = _env(recording)
    assert "valueFrom" in env["HF_TOKEN"], "the secure leaf is read from the Secret"
    assert env["LOG_LEVEL"] == {"name": "LOG_LEVEL", "value": "info"}, (
        "the run's config is the stack file's: its plain values may stay plain and readable"
    )
    assert TOKEN not in _everything_plain(recording, "esc")


def _problems(config: dict[str, Any]) -> list[str]:
    try:
        run_program(config, stack="creds")
    except ConfigError as error:
        return error.problems
    return []


def test_settings_named_like_tokens_are_not_taken_for_credentials() -> None:
    """Whole words only: Hugging Face's TOKENIZERS_PARALLELISM and vLLM's token-count flags are
    settings, and an `$(ENV)` reference after a credential flag holds no credential."""
    config = _engine_config({"TOKENIZERS_PARALLELISM": "false", "MAX_TOKENS": "512"})
    config["gke-gpu:workloads"][0]["args"] = [
        "Qwen/Qwen2.5-7B-Instruct",
        "--max-num-batched-tokens",
        "8192",
        "--hf-token=$(HF_TOKEN)",
    ]
    assert _problems(config) == [], "settings must not be refused as credentials"


def test_a_plain_credential_is_refused_with_the_command_that_stores_it_as_a_secret() -> None:
    config = _engine_config({"OPENAI_API_KEY": "sk-PLAINVALUE"})
    (problem,) = _problems(config)
    assert problem.startswith("workloads[0].env.OPENAI_API_KEY: named like a credential"), problem
    assert (
        "pulumi config set --path --secret 'gke-gpu:workloads[0].env.OPENAI_API_KEY' <value>"
        in problem
    ), "the message carries the command that fixes it"
    assert "sk-PLAINVALUE" not in problem, "the value is never shown"


# Made-up credentials of each shape (none is real): AWS's documented example key id, jwt.io's
# example token, and filler of the right length for the others.
SHAPES = {
    "hugging-face": ("hf_" + "AbCdEfGhIjKlMnOpQr" * 2)[:37],
    "openai": "sk-proj-" + "Ab3dEf6hIj" * 5,
    "github": "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8",
    "github-fine-grained": "github_pat_11AAAAAAA0" + "aB3_" * 18,
    "google-api-key": "AIza" + "SyD-" + "a1B2c3D4e5" * 3 + "f",
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "pem-private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + "A" * 60 + "\n-----END",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4"
    "gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("name", ["HF_AUTH", "SETTING"], ids=["credential-name", "any-name"])
def test_a_credential_in_a_plain_env_value_is_refused_by_its_shape_whatever_its_name(
    shape: str, name: str
) -> None:
    value = SHAPES[shape]
    problems = _problems(_engine_config({name: value}))
    assert [p.split(": ", 1)[0] for p in problems] == [f"workloads[0].env.{name}"], (
        f"a {shape} in plain text would sit in the Deployment, the state and the plan: {problems}"
    )
    assert "looks like" in problems[0] and (
        f"pulumi config set --path --secret 'gke-gpu:workloads[0].env.{name}' <value>"
        in problems[0]
    ), "the message says what it looks like and carries the command that stores it as a secret"
    assert value[:12] not in problems[0] and value[-12:] not in problems[0], "never shown"


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_credential_in_args_or_a_login_line_is_refused_by_its_shape(shape: str) -> None:
    value = SHAPES[shape]
    config = _engine_config({})
    workload = config["gke-gpu:workloads"][0]
    workload["args"] = ["Qwen/Qwen2.5-0.5B-Instruct", "--hf-tok", value]
    workload["command"] = ["sh", "-c", f"login --with {value} && vllm serve"]
    problems = _problems(config)
    assert [p.split(": ", 1)[0] for p in problems] == [
        "workloads[0].command[2]",
        "workloads[0].args[2]",
    ], f"each place the {shape} is written is refused: {problems}"
    assert all("looks like" in p and "write `$(" in p for p in problems), (
        "the fix moves it to a secret env value and references it with $(NAME)"
    )
    assert not [p for p in problems if value[:12] in p or value[-12:] in p], "never shown"


@pytest.mark.parametrize("name", ["PASS", "DB_PASS", "BEARER", "BEARER_VALUE", "HF_AUTH", "AUTH"])
def test_passwords_bearers_and_auth_values_are_credentials_by_name(name: str) -> None:
    (problem,) = _problems(_engine_config({name: "hunter2"}))
    assert problem.startswith(f"workloads[0].env.{name}: named like a credential"), problem
    assert "hunter2" not in problem


def test_settings_that_only_mention_pass_or_auth_and_model_names_are_not_credentials() -> None:
    config = _engine_config({"PASS_THROUGH": "1", "AUTH_ENABLED": "true", "SKIP": "sk-1"})
    config["gke-gpu:workloads"][0]["args"] = ["Qwen/Qwen2.5-7B-Instruct", "--hf-token=$(HF_TOK)"]
    assert _problems(config) == [], "settings, short values and $(NAME) references pass"


def test_a_token_in_the_command_from_an_environment_is_sent_as_a_secret(tmp_path: Path) -> None:
    """Fail closed covers the free-text leaves too: an environment may put a secret in `args` or
    `command` (a login line), and the program cannot tell which leaf it was."""
    path = tmp_path / "Pulumi.esc.yaml"
    path.write_text("environment:\n  - acme/llm\n" + STACK_FILE)
    config = _engine_config({})
    config["gke-gpu:workloads"][0]["command"] = ["sh", "-c", f"hf auth login --token {TOKEN}"]
    recording = run_program(
        config, stack="esc", secret_keys=("gke-gpu:workloads",), stack_file=path
    )
    assert TOKEN not in _everything_plain(recording, "esc"), (
        "a secret in command or args from an environment must not reach the Deployment in clear"
    )


def test_an_environment_that_leaves_the_workloads_as_the_file_has_them_changes_nothing(
    tmp_path: Path,
) -> None:
    """`environment:` imports other keys (a project, a region): the secret key's value is the
    file's, so the file proves its secure leaves and plain values stay readable."""
    stack_file = STACK_FILE + f"        HF_TOKEN:\n          secure: {CIPHERTEXT}\n"
    recording = _run(tmp_path, "environment:\n  - acme/gcp\n" + stack_file, {"HF_TOKEN": TOKEN})
    assert _env(recording)["LOG_LEVEL"] == {"name": "LOG_LEVEL", "value": "info"}
    assert "valueFrom" in _env(recording)["HF_TOKEN"]


@pytest.mark.parametrize("stack_file", [True, False], ids=["secure-leaf", "from-elsewhere"])
def test_a_secret_namespace_is_refused_without_echoing_it(tmp_path: Path, stack_file: bool) -> None:
    path = tmp_path / "Pulumi.ns.yaml"
    if stack_file:
        path.write_text(f"config:\n  gke-gpu:namespace:\n    secure: {CIPHERTEXT}\n")
    config = {**MINIMAL, "gke-gpu:namespace": TOKEN}
    with pytest.raises(ConfigError) as info:
        run_program(config, stack="ns", secret_keys=("gke-gpu:namespace",), stack_file=path)
    problems = info.value.problems
    assert [p.split(": ", 1)[0] for p in problems] == ["namespace"], (
        f"one problem, at the key: a namespace's name is sent in plain text ({problems})"
    )
    assert TOKEN not in str(problems), "the secret value (not a valid name) is never shown"


def test_a_secret_where_none_makes_sense_is_not_echoed_by_a_rule_on_another_key() -> None:
    """A `secure:` gpu.type is refused by its path, and its value is skipped before parsing: the
    compact placement rule, whose message names the pool's GPU type, never sees it (a leak the
    property tests found: tests/test_properties.py, secret-that-is-also-invalid)."""
    secret = "Bad_Secret_aaaaaaaaaaaaaaaa"
    pool = {
        "name": "a100",
        "gpu": {"type": secret},
        "placement": "compact",
        "zones": ["us-central1-a"],
    }
    raw = {"cluster": {"mode": "standard"}, "nodePools": [pool]}
    with pytest.raises(ConfigError) as raised:
        load(
            raw,
            project="acme-ml-test",
            region="us-central1",
            stack="esc",
            secret_keys=frozenset({"nodePools"}),
            secure_paths=frozenset({"nodePools[0].gpu.type"}),
        )
    problems = raised.value.problems
    assert any(p.startswith("nodePools[0].gpu.type: a secret (`secure:`)") for p in problems)
    assert not [p for p in problems if secret in p], "a secret value must appear in no message"


# --- problems where which leaves were secret is unknown ----------------------------------------

REFUSED = "hf_NOTSHOWN_" + "q7" * 10 + " !"  # a pasted token that no field accepts


def _unknown_mode_problems(workload: dict[str, Any], secure_paths: frozenset[str] | None) -> str:
    """The problems of an Autopilot stack with `workload` on top of a valid one, `workloads`
    secret; secure_paths None: which leaves were secret is unknown (ESC, --config-file)."""
    raw = {
        "workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "gpu": {"type": "nvidia-l4", "count": 1},
                "cache": {"size": "30Gi"},
                **workload,
            }
        ]
    }
    with pytest.raises(ConfigError) as info:
        load(
            raw,
            project="acme-ml-test",
            region="us-central1",
            stack="esc",
            secret_keys=frozenset({"workloads"}),
            secure_paths=secure_paths,
        )
    return "\n".join(info.value.problems)


@pytest.mark.parametrize(
    ("workload", "where"),
    [
        ({"gpu": {"type": REFUSED}}, "workloads[0].gpu.type: (a secret, not shown) is not a GKE"),
        (
            {"nodeSelector": {"gpu": REFUSED}},
            "workloads[0].nodeSelector.gpu: (a secret, not shown) is not a Kubernetes label value",
        ),
        ({"env": {REFUSED: "1"}}, "workloads[0].env: a key (not shown: this config may hold"),
        ({REFUSED: "1"}, "workloads[0]: a key (not shown: this config may hold secrets anywhere)"),
        (
            {"secretEnv": {"HF_TOKEN": REFUSED.replace(" !", "")}},
            "workloads[0].secretEnv.HF_TOKEN: config key (a secret, not shown) is not set",
        ),
        (
            {"expose": {"port": 443, "paths": [f"/{REFUSED}"]}},
            "workloads[0].expose.paths[0]: (a secret, not shown) is not a path the gate can match",
        ),
    ],
    ids=["gpu-type", "node-selector-value", "env-name", "unknown-key", "secret-env-key", "path"],
)
def test_where_secrets_are_unknown_a_refused_value_or_key_is_reported_but_not_shown(
    workload: dict[str, Any], where: str
) -> None:
    problems = _unknown_mode_problems(workload, secure_paths=None)
    assert where in problems, f"the problem is still reported at its key path:\n{problems}"
    assert REFUSED[:12] not in problems, (
        "with config from an ESC environment or another --config-file any leaf may have been "
        f"secret: a value pasted in the wrong place must not reach the CI log:\n{problems}"
    )
    assert REFUSED[:12] in _unknown_mode_problems(workload, secure_paths=frozenset()), (
        "where the stack file proves the value plain, the message shows it (a typo is found)"
    )


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[str, tuple[Any, ...]]]:
    """Every string value ("value", path) and map key ("key", path) under a config key."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield "key", (*path, key)
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _leaves(value, (*path, i))
    elif isinstance(node, str):
        yield "value", path


def _planted(raw: dict[str, Any], what: str, path: tuple[Any, ...], token: str) -> dict[str, Any]:
    planted = copy.deepcopy(raw)
    parent = planted
    for part in path[:-1]:
        parent = parent[part]
    if what == "value":
        parent[path[-1]] = token
    else:
        parent[token] = parent.pop(path[-1])
    return planted


def _plantings(raw: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(what was planted, the config, the token): each string value and each map key but the
    top-level ones replaced by a token in turn, once one every field refuses and once one names
    and labels accept; and a valid token as the name of two items of a list, and as a workload's
    name whose objects take another's (`<token>-model`)."""
    for n, (what, where) in enumerate(_leaves(raw)):
        if what == "key" and len(where) == 1:
            continue  # Pulumi config keys, never secret (`pulumi config` lists them)
        for token in (f"zqv{n:04d}tokenshownqv", f"ZQ_{n:04d}TOKEN SHOWN!"):
            yield f"{what} {'.'.join(map(str, where))}", _planted(raw, what, where, token), token
    token = "zqvnametokenshownqv"
    for key in ("workloads", "nodePools"):
        items = raw.get(key)
        if isinstance(items, list) and items and isinstance(items[0], dict):
            first = {**items[0], "name": token}
            twice = [first, *items[1:], first]
            yield f"{key}: a name twice", {**raw, key: twice}, token
            if key == "workloads" and first.get("expose"):
                taken = [first, *items[1:], {**first, "name": f"{token}-model"}]
                yield f"{key}: {token}-model", {**raw, key: taken}, token


# A stack with the free-text leaves the shipped stacks lack: env, secretEnv, args, command, egress,
# hosts, paths, monitoring.
RICH = """\
config:
  gcp:project: acme-ml-dev
  gcp:region: us-central1
  gke-gpu:hfToken:
    secure: v1:AAAA
  gke-gpu:monitoring:
    emails: [oncall@example.com]
    notificationChannels: [projects/acme-ml-dev/notificationChannels/123]
  gke-gpu:workloads:
    - name: llm
      image: vllm/vllm-openai:v0.29.0
      args: [Qwen/Qwen2.5-0.5B-Instruct, --served-model-name, chat]
      gpu: {type: nvidia-l4, count: 1}
      env: {LOG_LEVEL: info}
      secretEnv: {HF_TOKEN: hfToken}
      cache: {size: 30Gi}
      egress: {destinationRanges: [10.1.0.0/16]}
      autoscale: {minReplicas: 1, maxReplicas: 3}
      expose:
        sourceRanges: [203.0.113.0/24]
        hosts: [llm.example.com]
        paths: [/v1/models, /v1/chat/completions]
    - name: batch
      kind: Job
      image: nvidia/cuda:12.4.1-base-ubuntu22.04
      command: [sh, -c, nvidia-smi]
      gpu: {type: nvidia-l4, count: 1}
"""
STACKS = [
    *(p.relative_to(ROOT).as_posix() for p in sorted(ROOT.glob("Pulumi.*.yaml"))),
    *(p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "examples").glob("Pulumi.*.yaml"))),
    *(p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "tests/stacks").glob("*.yaml"))),
    "RICH",
]


@pytest.mark.parametrize("stack", STACKS)
def test_where_secrets_are_unknown_no_problem_shows_a_value_planted_anywhere_in_the_config(
    stack: str, tmp_path: Path
) -> None:
    """With every key secret and no stack file to tell which leaf was (ESC, --config-file), no
    problem may show a token planted anywhere in the stack's gke-gpu keys (_plantings)."""
    path = tmp_path / "Pulumi.rich.yaml"
    path.write_text(RICH)
    read = read_stack_file(path if stack == "RICH" else ROOT / stack)
    raw = {k.split(":", 1)[1]: v for k, v in read.config.items() if k.startswith("gke-gpu:")}
    leaks: dict[str, str] = {}
    for label, planted, token in _plantings(raw):
        try:
            load(
                planted,
                project=read.config.get("gcp:project"),
                region=read.config.get("gcp:region"),
                stack="esc",
                secret_keys=frozenset(planted),
                secure_paths=None,
            )
        except ConfigError as error:
            shown = [p for p in error.problems if token[:12] in p]
            if shown:
                leaks[label] = shown[0]
    assert not leaks, (
        "a value (or refused key) of a possibly-secret config key is shown in a problem, which "
        "CI logs print:\n" + "\n".join(f"{k}: {v}" for k, v in leaks.items())
    )
