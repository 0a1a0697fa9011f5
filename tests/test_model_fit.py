"""The model-fit check (issue 34): a vLLM server's weights plus a KV-cache floor against the
memory of the GPUs its replica gets, refused with the shapes that fit; a model the table does not
know and the stack does not describe is an advisory, never a silent OK."""

from __future__ import annotations

from typing import Any

from components.config import ConfigError, StackConfig, load
from components.facts import catalog, models
from tests.conftest import vllm_workload_problems


def _fit_problems(**workload: Any) -> list[str]:
    return [
        p for p in vllm_workload_problems(cache={"size": "200Gi"}, **workload) if "of weights" in p
    ]


def _loaded(secrets: dict[str, str] | None = None, **workload: Any) -> StackConfig:
    """An Autopilot stack with one vLLM workload; `secrets`: top-level keys set as secrets."""
    raw = {
        **(secrets or {}),
        "cluster": {"mode": "autopilot"},
        "workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "gpu": {"type": "nvidia-l4", "count": 1},
                "cache": {"size": "40Gi"},
                **workload,
            }
        ],
    }
    hidden = frozenset(secrets or {})
    return load(raw, project="acme-ml-test", region="us-central1", stack="t", secret_keys=hidden)


def test_70b_in_bf16_on_four_l4_is_refused_with_shapes_that_fit() -> None:
    (problem,) = _fit_problems(
        args=["meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"],
        gpu={"type": "nvidia-l4", "count": 4},
    )
    assert problem.startswith("workloads[0].gpu:"), problem
    assert "141 GB of weights" in problem and "4 x nvidia-l4 give 86 GB" in problem, (
        "140 GB of bf16 weights do not fit 96 GB of L4s: the user must hear it before paying"
    )
    for shape in ("gpu.count 8 of nvidia-l4", "2 x nvidia-h100-80gb", "--quantization fp8"):
        assert shape in problem, f"the refusal names a shape that fits ({shape}): {problem}"


def test_8b_on_one_l4_fits() -> None:
    assert not _fit_problems(
        args=["meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"],
        gpu={"type": "nvidia-l4", "count": 1},
    )


def test_without_max_model_len_the_models_own_context_must_fit_and_the_fix_is_named() -> None:
    # Found by a new user's review: vLLM's max_model_len defaults to the model's context (131,072
    # tokens for Llama 3.1), and vLLM exits at start when one such sequence does not fit.
    (problem,) = _fit_problems(
        args=["meta-llama/Llama-3.1-8B-Instruct"], gpu={"type": "nvidia-l4", "count": 1}
    )
    assert problem.startswith("workloads[0].args: has no --max-model-len"), problem
    assert "its own context of 131,072 tokens" in problem and "17 GB" in problem, problem
    fitting = int(problem.split("Add --max-model-len ")[1].split()[0])
    assert 4096 <= fitting < 131072 and fitting % 1024 == 0, (
        f"the refusal names a length that fits ({fitting}): the user copies it into args"
    )
    assert not _fit_problems(
        args=["meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", str(fitting)],
        gpu={"type": "nvidia-l4", "count": 1},
    ), "the length the refusal names is accepted"
    assert not _fit_problems(
        args=["meta-llama/Llama-3.1-8B-Instruct"], gpu={"type": "nvidia-h100-80gb", "count": 1}
    ), "on an 80 GB GPU the full context fits: no flag needed"


def test_a_quantization_flag_shrinks_the_weights_the_check_counts() -> None:
    assert not _fit_problems(
        args=[
            "meta-llama/Llama-3.1-70B-Instruct",
            "-tp",
            "4",
            "--quantization",
            "fp8",
            "--max-model-len",
            "8192",
        ],  # fmt: skip
        gpu={"type": "nvidia-l4", "count": 4},
    ), "70B in FP8 (71 GB) fits 4 x L4 (86 GB usable)"


def test_a_long_max_model_len_counts_its_kv_cache() -> None:
    (problem,) = _fit_problems(
        args=["meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "131072"],
        gpu={"type": "nvidia-l4", "count": 1},
    )
    assert "17 GB of KV cache for one 131072-token sequence" in problem, problem


def test_a_model_the_table_does_not_know_is_an_advisory_not_a_silent_ok() -> None:
    config = _loaded(args=["acme/in-house-llm"])
    assert any("acme/in-house-llm" in a and "not checked" in a for a in config.advisories), (
        config.advisories
    )


def test_the_stacks_model_key_describes_an_unknown_model_to_the_check() -> None:
    try:
        _loaded(args=["acme/in-house-llm"], model={"parameters": 30e9, "dtype": "bf16"})
    except ConfigError as error:
        assert any("60 GB of weights" in p for p in error.problems), error.problems
    else:
        raise AssertionError("30B parameters in bf16 (60 GB) cannot fit one L4 (24 GB)")
    quantized = _loaded(args=["acme/in-house-llm"], model={"parameters": 30e9, "dtype": "int4"})
    assert not [a for a in quantized.advisories if "not checked" in a]


def test_every_table_row_names_a_positive_size() -> None:
    for name, size in models.MODELS.items():
        assert size.parameters > 0 and size.layers > 0 and size.kv_values > 0, name
        assert size.dtype in ("bf16", "fp8"), name
    assert catalog.GPU_TYPES["nvidia-l4"].memory_gb == 24


def test_model_parameters_read_the_same_as_yaml_1_1_and_1_2_write_them() -> None:
    # PyYAML (the offline plan) reads `parameters: 30e9` as the string "30e9"; the engine's
    # YAML 1.2 as the number: both must describe the same model.
    for written in ("30e9", 30e9):
        try:
            _loaded(args=["acme/in-house-llm"], model={"parameters": written})
        except ConfigError as error:
            assert any("60 GB of weights" in p for p in error.problems), (written, error.problems)
        else:
            raise AssertionError(f"parameters {written!r}: 60 GB of bf16 weights on one L4")


def test_a_gated_model_without_a_token_is_an_advisory() -> None:
    # Found by a new user's review: Llama 3.1 without HF_TOKEN rendered clean, and its pods would
    # fail their download (the Hub serves meta-llama models only to accounts that accepted them).
    args = ["meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
    bare = _loaded(args=args)
    assert any("gated" in a and "HF_TOKEN" in a for a in bare.advisories), bare.advisories
    with_token = _loaded({"hfToken": "a token"}, args=args, secretEnv={"HF_TOKEN": "hfToken"})
    assert not [a for a in with_token.advisories if "gated" in a], with_token.advisories
    open_model = _loaded(args=["Qwen/Qwen2.5-0.5B-Instruct"])
    assert not [a for a in open_model.advisories if "gated" in a], "an open model needs no token"
