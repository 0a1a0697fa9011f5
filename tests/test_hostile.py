"""Hostile stack files end in a clear error, fast: exit 2, a key path, no traceback, in < 5 s.

Each case runs the real `python -m tools.render` (what CI and a user run) on a stack file an
attacker or a slip of the keyboard could write. Each case is timed on its own, in the CPU seconds
its process used: on a shared machine (parallel tests, other jobs) the wall clock also counts the
time the process waited for a core, which says nothing of the input. A process that stalls without
computing is stopped by the 60 s timeout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from components.config import ConfigError
from components.config.source import read_stack_file
from tests.conftest import MINIMAL, ROOT, Run

HEAD = "config:\n  gcp:project: acme-ml-dev\n  gcp:region: us-central1\n"
WORKLOAD = (
    "  gke-gpu:workloads:\n"
    "    - name: llm\n"
    "      image: vllm/vllm-openai:v0.29.0\n"
    "      gpu: {type: nvidia-l4, count: 1}\n"
    "      cache: {size: 30Gi}\n"
)
LIMIT_SECONDS = 5.0


def _alias_bomb() -> str:
    """~1 KB that expands to 9^10 values (a "billion laughs")."""
    lines = ["  gke-gpu:namespace: &a [x, x, x, x, x, x, x, x, x]"]
    previous = "a"
    for name in "bcdefghij":
        lines.append(f"  x-{name}:y: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    return "\n".join(lines) + "\n"


# name -> (stack file body after the project and region, text every message must contain)
CASES: dict[str, tuple[str, str]] = {
    "alias-bomb": (_alias_bomb(), "aliases (*name) expand to"),
    "deep-list": ("  gke-gpu:workloads: " + "[" * 5000 + "]" * 5000 + "\n", "workloads"),
    "unclosed-list": ("  gke-gpu:workloads: " + "[" * 400_000 + "\n", "workloads"),
    "deep-but-parseable": ("  gke-gpu:workloads: " + "[" * 40 + "]" * 40 + "\n", "workloads"),
    "binary-tag": (WORKLOAD + "      env: {A: !!binary aGVsbG8=}\n", "workloads[0].env.A"),
    "set-tag": (WORKLOAD + "      env: !!set {a, b}\n", "workloads[0].env"),
    "custom-tag": (WORKLOAD + "      args: [!python/object x]\n", "workloads[0].args[0]"),
    "octal-replicas": (WORKLOAD + "      replicas: 010\n", "workloads[0].replicas"),
    "big-file": (WORKLOAD + "      env: {BIG: " + "x" * 2_000_000 + "}\n", "workloads: makes"),
    "values-without-aliases": ("  gke-gpu:workloads: [" + "1," * 520_000 + "1]\n", "workloads"),
    "string-alias-bomb": (
        WORKLOAD + '      args: [&a "' + "A" * 20_000 + '"' + ", *a" * 2_000 + "]\n",
        "aliases (*name) expand to",
    ),
    "explicit-int-tag": (WORKLOAD + "      replicas: !!int abc\n", "workloads[0].replicas"),
    "explicit-bool-tag": (WORKLOAD + "      spot: !!bool maybe\n", "workloads[0].spot"),
    "quoted-octal-with-tag": (WORKLOAD + "      replicas: !!int '010'\n", "workloads[0].replicas"),
    "thousands-of-workloads": (
        "  gke-gpu:workloads:\n"
        + "".join(f"    - {{name: w{i}, image: 'cuda:12'}}\n" for i in range(3000)),
        "workloads: 3000 entries",
    ),
    "duplicate-mount": (
        WORKLOAD.replace("cache: {size: 30Gi}", "cache: {size: 30Gi, path: /dev/shm}"),
        "workloads[0].cache.path",
    ),
    "secret-env-kubeconfig": (
        "  gke-gpu:cluster: {mode: existing, kubeconfig: kubeconfig}\n"
        "  gke-gpu:kubeconfig:\n    secure: v1:AAAA\n"
        "  gke-gpu:workloads:\n"
        "    - {name: job, kind: Job, image: 'cuda:12', nodeSelector: {gpu: 'true'},\n"
        "       secretEnv: {KUBECONFIG: kubeconfig}}\n",
        "workloads[0].secretEnv.KUBECONFIG",
    ),
    "plain-token": (WORKLOAD + "      env: {HF_TOKEN: hf_PLAINTOKEN123}\n", "workloads[0].env"),
    "literal-api-key": (
        WORKLOAD + "      args: [Qwen/Qwen2.5-7B-Instruct, --api-key, sk-PLAINKEY123]\n",
        "workloads[0].args[2]",
    ),
    # A pattern that could split a run of letters into path segments many ways backtracked
    # exponentially on a long path with a bad character (found by tests/test_secret_sources.py).
    "gate-path-backtracking": (
        WORKLOAD + "      expose: {port: 443, paths: ['/" + "a" * 40 + " !']}\n",
        "workloads[0].expose.paths[0]",
    ),
    # Issue 44: a schedule whose numbers overflow Go's int64 (robfig/cron's strconv.Atoi), and a
    # shell script that trusts a repository's code at a branch.
    "schedule-overflow": (
        "  gke-gpu:workloads:\n    - name: nightly\n      kind: Job\n      image: 'cuda:12'\n"
        "      gpu: {type: nvidia-l4, count: 1}\n"
        "      schedule: '*/99999999999999999999 0-4294967296 * * *'\n",
        "workloads[0].schedule",
    ),
    "remote-code-at-a-branch": (
        WORKLOAD + "      command: [sh, -c, 'vllm serve m --trust-remote-code --revision main']\n",
        "workloads[0].command[2]",
    ),
    # ruamel's own message quotes both values of a duplicate key (found by the weekly fuzz).
    "duplicate-key": (
        "  gke-gpu:cluster:\n    mode: existing\n"
        "    kubeconfig: 'apiVersion: v1, token: KUBE_TOKEN_123'\n    kubeconfig: other\n",
        'the key "kubeconfig" appears twice',
    ),
}
# Values that must never be echoed back.
NEVER_SHOWN = ("hf_PLAINTOKEN123", "sk-PLAINKEY123", "v1:AAAA", "KUBE_TOKEN_123")


@dataclass
class Result:
    code: int
    output: str
    seconds: float
    """CPU seconds (user and system) the render process used."""


# One process renders every case through the CLI's entry point (tools.render.main), one after the
# other, and times each in its own CPU seconds (time.process_time around the call): the imports,
# the same for every case, are paid once instead of once per case (about 1 s of CPU each).
DRIVER = """\
import contextlib, io, json, sys, time, traceback
from tools import render
results = {}
for name, path, out in json.loads(sys.argv[1]):
    buffer = io.StringIO()
    start = time.process_time()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            code = render.main([f"hostile-{name}", "--stack-file", path, "--out", out])
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
    results[name] = [code, buffer.getvalue(), time.process_time() - start]
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    """Every case rendered by one process, one after the other, each timed on its own."""
    directory = tmp_path_factory.mktemp("hostile")
    cases = []
    for name, (body, _) in CASES.items():
        path = directory / f"Pulumi.hostile-{name}.yaml"
        path.write_text(HEAD + body)
        cases.append([name, str(path), str(directory / name)])
    command = [sys.executable, "-c", DRIVER, json.dumps(cases)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"the driver itself failed:\n{done.stderr[-3000:]}"
    # Whatever reached the process's own streams rather than a case's (a logger bound at import).
    assert not [v for v in NEVER_SHOWN if v in done.stderr], "a credential was echoed back"
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return {name: Result(code, output, seconds) for name, (code, output, seconds) in found.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input_is_refused_fast_with_a_key_path(
    results: dict[str, Result], name: str
) -> None:
    result, where = results[name], CASES[name][1]
    assert result.code == 2, (
        f"{name}: a config problem exits 2 (CI tells it from a crash, 1), got {result.code}:\n"
        f"{result.output[-2000:]}"
    )
    assert "Traceback" not in result.output, f"{name}: the user gets a message, not a traceback"
    assert where in result.output, f"{name}: the message names {where!r}:\n{result.output[:2000]}"
    assert result.seconds < LIMIT_SECONDS, (
        f"{name}: took {result.seconds:.1f} s of CPU; hostile input must not stall a CI run"
    )
    for value in NEVER_SHOWN:
        assert value not in result.output, f"{name}: a credential was echoed back"


@pytest.mark.parametrize(
    ("text", "go_reads"),
    # gopkg.in/yaml.v3 resolve.go: `_` stripped, then strconv.ParseInt(plain, 0, 64).
    [("0x10", 16), ("0o10", 8), ("0b10", 2), ("1_000", 1000), ("+10", 10), ("08", 8)],
)
def test_integer_forms_are_read_as_the_pulumi_cli_reads_them(
    tmp_path: Path, text: str, go_reads: int
) -> None:
    path = tmp_path / "Pulumi.int.yaml"
    path.write_text(f"config:\n  gke-gpu:namespace: {text}\n")
    value = read_stack_file(path).config["gke-gpu:namespace"]
    assert value == go_reads, (
        f"{text}: the Pulumi CLI reads {go_reads}; the offline plan must read the same ({value})"
    )


def _engine_workload(env: dict[str, Any]) -> dict[str, Any]:
    return {
        **MINIMAL,
        "gke-gpu:workloads": [
            {"name": "llm", "image": "vllm/vllm-openai:v0.29.0", "cache": {"size": "30Gi"}}
            | {"gpu": {"type": "nvidia-l4", "count": 1}, "env": env}
        ],
    }


def test_an_oversized_value_from_outside_the_stack_file_is_refused_by_path(run: Run) -> None:
    """Config from an ESC environment never passes through the stack-file reader: the program
    checks sizes on what the engine hands over."""
    config = _engine_workload({"BIG": "x" * 2_000_000})
    with pytest.raises(ConfigError) as info:
        run(config, secret_keys=("gke-gpu:workloads",))
    (problem,) = info.value.problems
    assert problem.startswith("workloads[0].env.BIG: workloads[0] adds up to 1.9 MiB"), problem
    assert "xxxx" not in problem, "a big value may be a secret: it is never shown"


def test_a_deeply_nested_value_from_the_engine_is_refused_by_key(run: Run) -> None:
    # As the engine passes it: JSON text (json.dumps itself could not write it).
    config = {**MINIMAL, "gke-gpu:workloads": "[" * 5000 + '"x"' + "]" * 5000}
    with pytest.raises(ConfigError) as info:
        run(config)
    assert info.value.problems == [
        "workloads: nested more than 32 levels deep. No gke-gpu key nests that deep; check the "
        "brackets and indentation."
    ]


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"cache": {"size": "30Gi", "path": "/tmp"}}, "workloads[0].cache.path: /tmp is already"),
        (
            {"cache": None, "modelCache": {"bucket": "acme-models", "mountPath": "/home/gke-gpu/"}},
            "workloads[0].modelCache.mountPath: /home/gke-gpu/ is already",
        ),
    ],
    ids=["cache-on-tmp", "model-cache-on-home"],
)
def test_a_mount_path_the_program_uses_is_refused_before_anything_is_created(
    run: Run, change: dict[str, Any], where: str
) -> None:
    """The API server refuses two mounts at one path only when the pod is created: after the
    cluster and its GPU nodes are up. The config check says so first."""
    config = _engine_workload({})
    workload = config["gke-gpu:workloads"][0]
    workload.update(change)
    if workload.get("cache") is None:
        workload.pop("cache")
    with pytest.raises(ConfigError) as info:
        run(config)
    assert any(p.startswith(where) for p in info.value.problems), info.value.problems


def test_a_document_too_deep_to_have_keys_names_the_file_as_its_path(tmp_path: Path) -> None:
    """Every problem starts with a path; a list nested 40 deep at the top has no key, so the
    file is the path, written as every file-level problem is (`<file>: line N: ...`)."""
    path = tmp_path / "Pulumi.deep.yaml"
    path.write_text("- " + "[" * 40 + "1" + "]" * 40 + "\n")
    command = [sys.executable, "-m", "tools.render", "deep", "--stack-file", str(path)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "  - Pulumi.deep.yaml: line 1: nested more than" in done.stderr + done.stdout, (
        done.stderr
    )
