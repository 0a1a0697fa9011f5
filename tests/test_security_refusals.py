"""Issue 44's findings: each mistake is refused before anything is registered, at its key path,
with what is allowed and the fix, never echoing a secret, every problem at once.

Stack files are the shipped ones (Pulumi.prod.yaml, examples/) with one realistic change each,
read as `pulumi up` and `python -m tools.render` read them (components.config.from_stack_file);
the whole-secret case goes through the recording engine as an ESC environment hands config over.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from components.config import ConfigError, StackConfig, from_stack_file
from components.config.source import read_stack_file
from components.platform import metrics_adapter
from tests.conftest import MINIMAL, ROOT, Run
from tools import render

PROD = (ROOT / "Pulumi.prod.yaml").read_text()
GATEWAY_PROD = (ROOT / "examples/Pulumi.gateway-prod.yaml").read_text()
MULTIHOST = (ROOT / "examples/Pulumi.multihost.yaml").read_text()
BATCH = (ROOT / "examples/Pulumi.batch.yaml").read_text()
FAST_START = (ROOT / "examples/Pulumi.fast-start.yaml").read_text()
DIGEST = "@sha256:c2914767605584b6d8f45686b82de173ecc99e781897aa3d0a66dacd72c51ae1"
PINNED = f"vllm/vllm-openai:v0.29.0{DIGEST}"
R1_REVISION = "56d4cbbb4d29f4355bab4b9a39ccb717a14ad5ad"


def _load(tmp_path: Path, text: str, stack: str = "t") -> StackConfig:
    path = tmp_path / f"Pulumi.{stack}.yaml"
    path.write_text(text)
    return from_stack_file(read_stack_file(path), stack)


def _problems(tmp_path: Path, text: str) -> dict[str, str]:
    """Each refused key path and its message (one problem per path here)."""
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    found: dict[str, str] = {}
    for problem in info.value.details:
        assert problem.path not in found, f"{problem.path} is reported twice: {found}"
        found[problem.path] = problem.message
    return found


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} is not in the stack file once"
    return text.replace(old, new)


# --- M5r: production pins images by digest; the adapter's tag is flagged -----------------------


def test_production_refuses_a_workload_image_named_by_tag_only(tmp_path: Path) -> None:
    found = _problems(tmp_path, _edit(PROD, DIGEST, ""))
    assert list(found) == ["workloads[0].image"], found
    message = found["workloads[0].image"]
    assert "production" in message and "tag" in message, message
    assert "vllm/vllm-openai:v0.29.0@sha256:<digest>" in message, (
        "the fix is the image pinned by its digest, written out"
    )


def test_outside_production_a_tag_is_still_enough(tmp_path: Path) -> None:
    text = _edit(PROD, "    production: true\n", "")
    _load(tmp_path, _edit(text, DIGEST, ""))


def test_the_plan_says_the_metrics_adapter_runs_by_tag(tmp_path: Path) -> None:
    assert "@sha256:" not in metrics_adapter.IMAGE, (
        "the adapter is pinned now: drop the advisory (rules/images.py ADAPTER_IMAGE) and this test"
    )
    config = _load(tmp_path, FAST_START)
    (advisory,) = [a for a in config.advisories if "Custom Metrics" in a]
    assert metrics_adapter.IMAGE in advisory, "the plan names the exact tag the cluster pulls"
    assert advisory.startswith("workloads[0].autoscale:") and "digest" in advisory, advisory


# --- N7: --trust-remote-code needs a pinned --revision ------------------------------------------


def test_the_multihost_example_pins_the_revision_of_the_code_it_trusts() -> None:
    args = re.findall(r"^\s+- (\S+)$", MULTIHOST, flags=re.M)
    assert "--trust-remote-code" in args and args[args.index("--revision") + 1] == R1_REVISION


def test_trust_remote_code_without_a_revision_is_refused(tmp_path: Path) -> None:
    text = _edit(MULTIHOST, f"        - --revision\n        - {R1_REVISION}\n", "")
    found = _problems(tmp_path, text)
    assert list(found) == ["workloads[0].args[7]"], found
    message = found["workloads[0].args[7]"]
    assert "--revision" in message and "40" in message and "main" in message, message


def test_a_branch_as_the_revision_is_refused_at_its_value(tmp_path: Path) -> None:
    text = _edit(MULTIHOST, R1_REVISION, "main")
    found = _problems(tmp_path, text)
    assert list(found) == ["workloads[0].args[9]"], found
    assert "'main' is not a commit" in found["workloads[0].args[9]"], found


def test_trust_remote_code_in_a_shell_command_counts_too(tmp_path: Path) -> None:
    script = "'vllm run-batch -i /in.jsonl -o /out/r.jsonl --model acme/embed --trust-remote-code'"
    found = _problems(
        tmp_path, _edit(BATCH, "'nvidia-smi > /out/shard-$JOB_COMPLETION_INDEX.txt'", script)
    )
    assert list(found) == ["workloads[0].command[2]"], found


# --- N8: production refuses apiKey: false on a public endpoint ----------------------------------


@pytest.mark.parametrize("stack", ["prod", "gateway-prod"])
def test_production_refuses_a_public_endpoint_without_a_key(tmp_path: Path, stack: str) -> None:
    text = PROD if stack == "prod" else _edit(GATEWAY_PROD, "        keys: [web-app, batch]\n", "")
    text = _edit(
        text, "      cache: {size: 30Gi}", "      cache: {size: 30Gi}\n      apiKey: false"
    )
    found = _problems(tmp_path, text)
    assert list(found) == ["workloads[0].apiKey"], found
    message = found["workloads[0].apiKey"]
    assert "production" in message and "Remove apiKey: false" in message, message


# --- N6: results buckets -------------------------------------------------------------------------

SERVED = (
    "    - name: llm\n"
    f"      image: {PINNED}\n"
    "      gpu: {type: nvidia-l4, count: 1}\n"
    "      args: [Qwen/Qwen2.5-0.5B-Instruct]\n"
    "      cache: {size: 30Gi}\n"
    "      modelCache: {bucket: acme-models, path: Qwen/Qwen2.5-0.5B-Instruct}\n"
)
SERVING_POOL = "    - name: l4\n      gpu: {type: nvidia-l4, count: 1}\n      maxNodes: 2\n"


def _batch(output: str = "{bucket: acme-results, mountPath: /out}") -> str:
    text = _edit(BATCH, "  gke-gpu:nodePools:\n", "  gke-gpu:nodePools:\n" + SERVING_POOL)
    text = _edit(text, "  gke-gpu:workloads:\n", "  gke-gpu:workloads:\n" + SERVED)
    return _edit(text, "{bucket: acme-results, mountPath: /out}", output)


def test_the_results_bucket_cannot_be_a_served_models_bucket(tmp_path: Path) -> None:
    found = _problems(tmp_path, _batch("{bucket: acme-models, mountPath: /out}"))
    assert list(found) == ["workloads[1].output.bucket"], found
    message = found["workloads[1].output.bucket"]
    assert "workloads[0].modelCache.bucket" in message and "overwrite" in message, message


@pytest.mark.parametrize("where", ["/", "/etc", "/usr/lib/results", "//etc", "/lib64", "/root"])
def test_the_results_cannot_be_mounted_over_a_system_folder(tmp_path: Path, where: str) -> None:
    found = _problems(tmp_path, _batch(f"{{bucket: acme-results, mountPath: '{where}'}}"))
    assert list(found) == ["workloads[1].output.mountPath"], found
    assert "system folder" in found["workloads[1].output.mountPath"], found


def test_no_bucket_or_disk_is_mounted_over_a_system_folder(tmp_path: Path) -> None:
    text = _edit(FAST_START, "cache: {size: 30Gi}", "cache: {size: 30Gi, path: /root/.cache}")
    text = _edit(text, "path: Qwen/Qwen2.5-0.5B-Instruct}", "path: Qwen, mountPath: /usr/models}")
    found = _problems(tmp_path, text)
    assert sorted(found) == ["workloads[0].cache.path", "workloads[0].modelCache.mountPath"]


def test_the_plan_says_whose_bucket_the_results_go_to_and_who_may_write(tmp_path: Path) -> None:
    config = _load(tmp_path, _batch())
    (own,) = [a for a in config.advisories if "workloads[1].output" in a]
    assert "acme-results" in own and "acme-ml-dev" in own and "roles/storage.objectUser" in own
    assert "ns/gke-gpu/sa/nightly" in own and "every cluster" in own, (
        "the grant's principal is shared by every cluster of the project (identity sameness)"
    )
    foreign = _load(tmp_path, _batch("{bucket: acme-results, project: acme-data-lake}"))
    (theirs,) = [a for a in foreign.advisories if "workloads[1].output" in a]
    assert "acme-data-lake" in theirs and "not this stack's" in theirs, theirs


def test_a_malformed_results_project_is_refused(tmp_path: Path) -> None:
    found = _problems(tmp_path, _batch("{bucket: acme-results, project: 'Acme Data'}"))
    assert list(found) == ["workloads[1].output.project"], found


# --- cron schedules as the API server checks them ------------------------------------------------


@pytest.mark.parametrize(
    ("schedule", "said"),
    [
        ("99 99 99 99 99", "above 59"),
        ("*/0 * * * *", "step"),
        ("0-1000 * * * *", "above 59"),
        ("0 3 * * *\\n", "line"),
        ("CRON_TZ=Europe/Berlin 0 3 * * *", "timeZone"),
        ("0 3 * *", "five fields"),
        ("0 3 * * 7", "above 6"),
        ("0 3 31-1 * *", "beyond"),
        ("@every 0s", "@every"),
        ("@fortnightly", "@hourly"),
    ],
)
def test_a_schedule_the_api_server_refuses_is_refused(
    tmp_path: Path, schedule: str, said: str
) -> None:
    found = _problems(tmp_path, _edit(BATCH, 'schedule: "0 3 * * *"', f'schedule: "{schedule}"'))
    assert list(found) == ["workloads[0].schedule"], found
    message = found["workloads[0].schedule"]
    assert said in message and "'0 3 * * *'" in message, message


@pytest.mark.parametrize(
    "schedule",
    [
        "@hourly",
        "@every 90m",
        "*/15 9-17 * * mon-fri",
        "0 0 1 JAN,jul *",
        "? * * * *",
        "5/20 * * * *",
    ],
)
def test_a_schedule_the_api_server_takes_is_taken(tmp_path: Path, schedule: str) -> None:
    from components.config.rules import cron

    _load(tmp_path, _edit(BATCH, 'schedule: "0 3 * * *"', f'schedule: "{schedule}"'))
    assert cron.problem(schedule) is None


# --- bucket names Cloud Storage refuses ----------------------------------------------------------


@pytest.mark.parametrize(
    ("bucket", "said"),
    [
        ("192.168.5.4", "IP address"),
        ("a" * 64, "63"),
        ("acme..results", "empty"),
        ("goog-results", "goog"),
        ("acme-google-results", "google"),
        ("acme-g00gle", "google"),
        ("Acme-Results", "lowercase"),
    ],
)
def test_a_bucket_name_cloud_storage_refuses_is_refused_for_every_bucket_key(
    tmp_path: Path, bucket: str, said: str
) -> None:
    found = _problems(tmp_path, _batch(f"{{bucket: '{bucket}', mountPath: /out}}"))
    assert list(found) == ["workloads[1].output.bucket"], found
    assert said in found["workloads[1].output.bucket"], found
    text = _edit(FAST_START, "bucket: acme-models", f"bucket: '{bucket}'")
    found = _problems(tmp_path, text)
    assert list(found) == ["workloads[0].modelCache.bucket"], found


# --- L3r: a duplicate consumer is not echoed when the workloads key is secret --------------------


def test_a_duplicate_consumer_of_a_secret_workloads_key_is_not_echoed(run: Run) -> None:
    workload: dict[str, Any] = {
        "name": "llm",
        "image": "vllm/vllm-openai:v0.29.0",
        "gpu": {"type": "nvidia-l4", "count": 1},
        "cache": {"size": "30Gi"},
        "expose": {"port": 443, "keys": ["partner-7731", "batch", "partner-7731"]},
    }
    with pytest.raises(ConfigError) as info:
        run({**MINIMAL, "gke-gpu:workloads": [workload]}, secret_keys=("gke-gpu:workloads",))
    (problem,) = info.value.details
    assert problem.path == "workloads[0].expose.keys[2]", problem
    assert "listed twice" in problem.message and "partner-7731" not in problem.message, problem


# --- everything at once, before anything is registered -------------------------------------------


def test_every_problem_is_listed_at_once_and_nothing_is_written(tmp_path: Path) -> None:
    text = _edit(
        PROD, "      cache: {size: 30Gi}", "      cache: {size: 30Gi}\n      apiKey: false"
    )
    text = _edit(_edit(text, DIGEST, ""), '"8192"]', '"8192", --trust-remote-code]')
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(text)
    out = tmp_path / "out"
    code = render.main(["prod", "--stack-file", str(path), "--out", str(out)])
    assert code == render.EXIT_CONFIG and not out.exists(), "nothing is planned or written"
    with pytest.raises(ConfigError) as info:
        from_stack_file(read_stack_file(path), "prod")
    assert sorted(p.path for p in info.value.details) == [
        "workloads[0].apiKey",
        "workloads[0].args[3]",
        "workloads[0].image",
    ]


def test_the_cron_module_follows_robfig_parse_standard_on_its_edges() -> None:
    """robfig/cron v3.0.1 parser.go: `*-5` reads as `*`, `+5` is a number, names are any case."""
    from components.config.rules import cron

    for taken in ("*-5 * * * *", "+5 * * * *", "0 0 * * SUN", "1-5/2 * * * *"):
        assert cron.problem(taken) is None, taken
    for refused in ("5-- * * * *", "*/ * * * *", "1/2/3 * * * *", "0 24 * * *", "0 0 0 * *"):
        assert cron.problem(refused) is not None, refused
