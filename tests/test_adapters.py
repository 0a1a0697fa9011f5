"""LoRA adapters (workloads[].adapters) and fallback pools that start as fast as primary ones
(issue 21), on what the engine receives and what the config refuses before anything is created.

vLLM cannot run here (it needs a GPU); the flags and forms are read from the vLLM 0.29.0 wheel
(components/config/rules/adapters.py cites the lines) and checked below against what the
Deployment receives.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from components.config.rules import adapters
from components.config.schema import WorkloadSpec
from tests.conftest import STANDARD, Run, vllm_workload_problems
from tools.engine import ROOT, Recording

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
EXAMPLE = ROOT / "examples" / "Pulumi.adapters.yaml"


def _example() -> dict[str, Any]:
    return dict(yaml.safe_load(EXAMPLE.read_text())["config"])


def _args(recording: Recording) -> list[str]:
    deployment = recording.served(DEPLOYMENT).inputs
    args: list[str] = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


def test_the_example_serves_two_adapters_on_one_gpu(run: Run) -> None:
    recording = run(_example())
    args = _args(recording)
    deployment = recording.served(DEPLOYMENT).inputs
    limits = deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits["nvidia.com/gpu"] == "1", "both adapters share the base model's one GPU"
    assert "--enable-lora" in args
    assert args[args.index("--max-loras") + 1] == "2", (
        "--max-loras is the number of adapters in one batch (vLLM's default 1 would make the "
        "second adapter wait for the first)"
    )
    assert args[args.index("--max-lora-rank") + 1] == "16"
    modules = args[args.index("--lora-modules") + 1 :]
    assert modules == ["sql=/models/adapters/sql", "support=/models/adapters/support"], (
        "vLLM's `name=path` form, one value per adapter: each name becomes a model in /v1/models"
    )
    mounts = deployment["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    assert any(m["mountPath"] == "/models" for m in mounts), "the adapters' folder is mounted"


def test_the_models_output_lists_the_base_model_then_each_adapter(run: Run) -> None:
    models = run(_example()).stack_outputs["models"]
    assert models == {"llm": ["Qwen/Qwen2.5-1.5B-Instruct", "sql", "support"]}, (
        "each adapter is a model name a client can ask for, and the smoke test expects it in "
        f"/v1/models: {models}"
    )


@pytest.mark.parametrize(
    ("workload", "path", "words"),
    [
        (
            {
                "image": "ghcr.io/acme/server:1",
                "port": 8000,
                "adapters": [{"name": "a", "path": "org/a"}],
            },
            "workloads[0].adapters:",
            "not a vLLM image",
        ),
        (
            {"adapters": [{"name": "a", "path": "org/a"}, {"name": "a", "path": "org/b"}]},
            "workloads[0].adapters[1].name:",
            "already",
        ),
        (
            {"adapters": [{"name": "a", "path": "/opt/adapters/a"}]},
            "workloads[0].adapters[0].path:",
            "not inside the model bucket's folder",
        ),
        (
            # The per-pod cache disk is made empty with each pod: vLLM would find nothing there.
            {"cache": {"size": "30Gi"}, "adapters": [{"name": "a", "path": "/cache/adapters/a"}]},
            "workloads[0].adapters[0].path:",
            "cache and storage disks start empty",
        ),
        (
            {"cache": {"size": "30Gi"}, "adapters": [{"name": "a", "path": "/cache/../etc/a"}]},
            "workloads[0].adapters[0].path:",
            "not inside",
        ),
        (
            {"adapters": [{"name": "a", "path": "just-a-name"}]},
            "workloads[0].adapters[0].path:",
            "Hugging Face repo id",
        ),
        (
            {"adapters": [{"name": "a", "path": "org/a,b"}]},
            "workloads[0].adapters[0].path:",
            "adapter path",
        ),
        (
            {
                "args": ["Qwen/Qwen2.5-0.5B-Instruct", "--enable-lora"],
                "adapters": [{"name": "a", "path": "org/a"}],
            },
            "workloads[0].args:",
            "set from adapters",
        ),
        ({"adapterMaxRank": 24}, "workloads[0].adapterMaxRank:", "16"),
        # A quoted rank reads as a string in YAML: say so, not just "not allowed".
        ({"adapterMaxRank": "16"}, "workloads[0].adapterMaxRank:", "without quotes"),
        ({"adapterMaxRank": 32}, "workloads[0].adapterMaxRank:", "has none"),
        (
            {"secondaryBootDisk": "global/images/vllm-cache"},
            "workloads[0].secondaryBootDisk:",
            "no fallback",
        ),
    ],
)
def test_an_adapter_vllm_would_refuse_at_start_is_refused_now(
    workload: dict[str, Any], path: str, words: str
) -> None:
    problems = vllm_workload_problems(**workload)
    assert any(p.startswith(path) and words in p for p in problems), problems


def test_an_adapter_from_the_hub_opens_https_egress_and_nothing_more(run: Run) -> None:
    config = _example()
    workload = config["gke-gpu:workloads"][0]
    workload.pop("modelCache")
    workload["env"] = {"HF_HUB_OFFLINE": "1"}  # the base model is in the image
    workload["cache"] = {"size": "30Gi"}
    workload["args"] = ["/opt/model"]
    workload["adapters"] = [{"name": "sql", "path": "org/sql-lora"}]
    recording = run(config)
    policies = [
        r.inputs["spec"]
        for r in recording.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if r.inputs["metadata"]["name"] == "llm-egress"
    ]
    assert policies, "the workload has its own egress policy"
    assert any(
        peer.get("ipBlock", {}).get("cidr") == "0.0.0.0/0"
        for rule in policies[0]["egress"]
        for peer in rule.get("to", [])
    ), "vLLM downloads a repo-id adapter from the Hub at start: public HTTPS must be open"


# --- fallback pools start as fast as primary ones ------------------------------------------------


def test_fallback_nodes_stream_images_and_carry_the_preloaded_disk(run: Run) -> None:
    config = copy.deepcopy(STANDARD)
    config["gke-gpu:workloads"][0].update(
        {"fallback": [{"spot": False}], "secondaryBootDisk": "global/images/vllm-cache"}
    )
    recording = run(config)
    spec = recording.one(COMPUTE_CLASS).inputs["spec"]
    assert spec["nodePoolConfig"] == {"imageStreaming": {"enabled": True}}, (
        "a fallback node would otherwise pull the whole multi-GB image before the pod starts"
    )
    for rule in spec["priorities"]:
        assert rule["storage"]["secondaryBootDisks"] == [
            {
                "diskImageName": "vllm-cache",
                "project": "acme-ml-test",
                "mode": "CONTAINER_IMAGE_CACHE",
            }
        ], "every priority gets the preloaded images (priorityDefaults has no storage)"
    roles = [r.inputs["role"] for r in recording.of_type("gcp:projects/iAMMember:IAMMember")]
    assert "roles/serviceusage.serviceUsageConsumer" in roles, (
        "GKE requires it of a custom node service account that streams images"
    )


@pytest.mark.parametrize(
    ("count", "rank", "slots", "on_cpu"),
    [
        (2, 16, "2", None),
        (8, 16, "8", None),
        (9, 16, "8", "9"),
        (4, 64, "2", "4"),
        (3, 512, "1", "3"),
    ],
)
def test_adapters_share_a_batch_only_while_their_gpu_buffers_stay_in_budget(
    count: int, rank: int, slots: str, on_cpu: str | None
) -> None:
    spec = WorkloadSpec.model_validate(
        {
            "name": "llm",
            "image": "vllm/vllm-openai:v0.29.0",
            "adapters": [{"name": f"a{n}", "path": f"org/a{n}"} for n in range(count)],
            "adapterMaxRank": rank,
        }
    )
    args = list(adapters.vllm_args(spec))
    assert args[args.index("--max-loras") + 1] == slots, (
        f"{count} adapters of rank {rank}: vLLM reserves max-loras x rank buffers on the GPU at "
        f"load; more than {adapters.LORA_RANK_BUDGET} rank-slots starve the KV cache or fail"
    )
    cpu = args[args.index("--max-cpu-loras") + 1] if "--max-cpu-loras" in args else None
    assert cpu == on_cpu, "adapters beyond the GPU's slots wait in CPU memory, all of them"
