"""The model-fit table's families (issue 45): the open-weight models users run today are checked,
as vLLM lays them out: every expert of a mixture of experts loaded, gpt-oss's MXFP4 experts,
sliding-window and chunked layers that cache only their window."""

from __future__ import annotations

from typing import Any

from components.config import StackConfig, load
from components.facts import models
from tests.conftest import vllm_workload_problems

H100 = {"type": "nvidia-h100-80gb", "count": 1}
L4 = {"type": "nvidia-l4", "count": 1}


def _refusals(**workload: Any) -> list[str]:
    """The model-fit refusals of an Autopilot stack with one vLLM workload."""
    problems = vllm_workload_problems(cache={"size": "1000Gi"}, **workload)
    return [p for p in problems if "of weights" in p or "has no --max-model-len" in p]


def _config(**workload: Any) -> StackConfig:
    raw = {
        "cluster": {"mode": "autopilot"},
        "workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "cache": {"size": "200Gi"},
                **workload,
            }
        ],
    }
    return load(raw, project="acme-ml-test", region="us-central1", stack="t")


def test_the_families_the_issue_names_are_in_the_table() -> None:
    wanted = [
        *(f"Qwen/Qwen3-{s}" for s in ("0.6B", "1.7B", "4B", "8B", "14B", "32B")),
        "Qwen/Qwen3-30B-A3B",
        "Qwen/Qwen3-235B-A22B",
        "meta-llama/Llama-3.2-1B-Instruct",
        "meta-llama/Llama-3.2-3B-Instruct",
        "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
        "deepseek-ai/DeepSeek-V3",
        "deepseek-ai/DeepSeek-R1",
        "openai/gpt-oss-20b",
        "openai/gpt-oss-120b",
        *(f"google/gemma-3-{s}-it" for s in ("1b", "4b", "12b", "27b")),
    ]
    missing = [name for name in wanted if name not in models.MODELS]
    assert not missing, f"a model users run gets 'fit not checked' instead of a check: {missing}"


def test_a_mixture_of_experts_loads_every_expert() -> None:
    # Qwen3-30B-A3B runs 3B parameters a token but loads all 30.5B: 61 GB in bf16.
    (problem,) = _refusals(args=["Qwen/Qwen3-30B-A3B", "--max-model-len", "8192"], gpu=L4)
    assert "61 GB of weights" in problem, problem
    assert not _refusals(args=["Qwen/Qwen3-30B-A3B", "--max-model-len", "8192"], gpu=H100)
    eight = {"type": "nvidia-h100-80gb", "count": 8}
    big = ["Qwen/Qwen3-235B-A22B", "--max-model-len", "8192"]
    assert not _refusals(args=[*big, "-tp", "8"], gpu=eight), "470 GB over 8 x 80 GB fits"
    (half,) = _refusals(args=[*big, "-tp", "4"], gpu={**eight, "count": 4})
    assert "470 GB of weights, 118 GB on each GPU split 4 (tensor)" in half, half


def test_gpt_oss_120b_fits_one_80_gb_gpu_in_mxfp4() -> None:
    # Its experts are MXFP4 (4.25 bits a parameter): about 62 GB, on one H100 with its whole
    # 131,072-token context; bf16 would be 234 GB.
    config = _config(args=["openai/gpt-oss-120b"], gpu=H100)
    assert not [a for a in config.advisories if "not checked" in a], config.advisories
    (problem,) = _refusals(args=["openai/gpt-oss-120b", "--max-model-len", "8192"], gpu=L4)
    assert "openai/gpt-oss-120b in mxfp4 needs about 62 GB of weights" in problem, problem


def test_gemma_3_caches_only_the_window_on_its_sliding_layers() -> None:
    # Five layers in six keep the last 1,024 tokens: gemma-3-27b-it's full 131,072-token context
    # needs about 11 GB of KV cache, not the 67 GB every layer keeping every token would.
    config = _config(args=["google/gemma-3-27b-it"], gpu=H100)
    assert not [a for a in config.advisories if "not checked" in a], config.advisories
    assert not _refusals(args=["google/gemma-3-27b-it"], gpu=H100)


def test_llama_4_scout_without_max_model_len_is_refused_for_its_ten_million_tokens() -> None:
    eight = {"type": "nvidia-h100-80gb", "count": 8}
    scout = "meta-llama/Llama-4-Scout-17B-16E-Instruct"
    (problem,) = _refusals(args=[scout, "-tp", "8"], gpu=eight)
    assert "its own context of 10,000,000 tokens" in problem, problem
    length = int(problem.split("Add --max-model-len ")[1].split()[0])
    assert not _refusals(args=[scout, "-tp", "8", "--max-model-len", str(length)], gpu=eight), (
        "the length the refusal names is accepted"
    )


def test_gemma_3_is_gated_like_llama() -> None:
    config = _config(args=["google/gemma-3-4b-it", "--max-model-len", "8192"], gpu=L4)
    assert any("gated" in a and "HF_TOKEN" in a for a in config.advisories), config.advisories
