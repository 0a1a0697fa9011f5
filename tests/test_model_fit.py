"""The model-fit check (issue 34): a vLLM server's weights plus a KV-cache floor against the
memory of the GPUs its replica gets, refused with the shapes that fit; a model the table does not
know and the stack does not describe is an advisory, never a silent OK."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from components.config import ConfigError, StackConfig, load
from components.config.rules import model_need
from components.config.schema import WorkloadSpec
from components.facts import catalog, models
from tests.conftest import vllm_workload_problems
from tools import render


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


def load_workload(**workload: Any) -> WorkloadSpec:
    """The parsed spec of _loaded's workload."""
    (w,) = _loaded(**workload).workloads
    return w.spec


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
        assert size.dtype in ("bf16", "fp8", "mxfp4"), name
        assert 0 <= size.local_layers < size.layers, f"{name}: some layer keeps every token"
        assert (size.window > 0) == (size.local_layers > 0), f"{name}: a local layer's window"
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


# --- sharding (issue 45) ---------------------------------------------------------------------


def _idle(problems: list[str]) -> list[str]:
    return [p for p in problems if "sit idle" in p]


def test_gpus_the_args_do_not_split_over_are_refused_with_the_flag_that_uses_them() -> None:
    # Found in issue 45: 70B in FP8 (71 GB) on 4 x L4 planned OK without -tp 4, and vLLM would
    # load it whole on one 24 GB GPU while three sat idle.
    args = ["meta-llama/Llama-3.1-70B-Instruct", "--quantization", "fp8", "--max-model-len", "8192"]
    problems = vllm_workload_problems(
        cache={"size": "200Gi"}, args=args, gpu={"type": "nvidia-l4", "count": 4}
    )
    (idle,) = _idle(problems)
    assert idle.startswith("workloads[0].args:") and "3 of the pod's GPUs" in idle, idle
    assert "Add --tensor-parallel-size 4 to args" in idle and "or set gpu.count: 1" in idle, (
        f"the refusal names the exact fix: {idle}"
    )
    assert not [p for p in problems if "of weights" in p], (
        "the fit is checked as the fix would split it (18 GB a GPU): the flag is the one fix"
    )
    fixed = vllm_workload_problems(
        cache={"size": "200Gi"}, args=[*args, "-tp", "4"], gpu={"type": "nvidia-l4", "count": 4}
    )
    assert not _idle(fixed) and not [p for p in fixed if "of weights" in p], fixed


def test_following_the_plans_shape_needs_the_flag_it_names() -> None:
    args = ["meta-llama/Llama-3.1-70B-Instruct", "--max-model-len", "8192", "-tp", "4"]
    (refusal,) = _fit_problems(args=args, gpu={"type": "nvidia-l4", "count": 4})
    assert "gpu.count 8 of nvidia-l4 with --tensor-parallel-size 8" in refusal, refusal
    half = [a for a in args if a not in ("-tp", "4")]
    followed = vllm_workload_problems(
        cache={"size": "200Gi"}, args=half, gpu={"type": "nvidia-l4", "count": 8}
    )
    assert _idle(followed), "gpu.count 8 without -tp 8 loads 141 GB on one GPU: refused, not OK"
    assert not vllm_workload_problems(
        cache={"size": "200Gi"},
        args=[*half, "--tensor-parallel-size", "8"],
        gpu={"type": "nvidia-l4", "count": 8},
    ), "the shape with its flag fits"


def test_data_parallel_copies_a_dense_model_and_splits_a_mixture_of_experts() -> None:
    # vLLM: data parallelism "replicates the entire model"; "MoE layers will be sharded
    # according to the product of the tensor parallel size and data parallel size".
    split = ["-tp", "2", "-dp", "2", "--max-model-len", "8192"]
    four = {"type": "nvidia-l4", "count": 4}
    (dense,) = _fit_problems(args=["Qwen/Qwen3-32B", *split], gpu=four)
    assert "33 GB on each GPU split 2 (tensor)," in dense, (
        f"each data-parallel rank holds half of Qwen3-32B's 65 GB, more than an L4: {dense}"
    )
    assert not _fit_problems(args=["Qwen/Qwen3-30B-A3B", *split], gpu=four), (
        "Qwen3-30B-A3B's 61 GB of experts are split over all four GPUs: 15 GB each fits"
    )


def test_a_latent_kv_cache_is_whole_on_every_tensor_parallel_rank() -> None:
    # vLLM's get_num_kv_heads returns 1 under MLA: every rank keeps the whole latent, so
    # DeepSeek-R1's KV cache does not shrink with -tp (61 layers x 576 values x 2 bytes a token).
    args = ["deepseek-ai/DeepSeek-R1", "-tp", "8", "--max-model-len", "131072"]
    (problem,) = _fit_problems(args=args, gpu={"type": "nvidia-h100-80gb", "count": 8})
    assert "9.2 GB of KV cache for one 131072-token sequence on each GPU" in problem, problem


def test_kv_heads_are_replicated_not_split_below_one_per_gpu() -> None:
    # vLLM: max(1, num_key_value_heads // tensor_parallel_size): Qwen3-30B-A3B's 4 KV heads on
    # 8 ranks are one head each, not half a head.
    w = load_workload(args=["Qwen/Qwen3-30B-A3B"], gpu={"type": "nvidia-h100-80gb", "count": 1})
    found = model_need.need(w, list(w.args))
    assert found is not None
    assert found.kv(model_need.Split(tp=8)) == found.kv(model_need.Split(tp=4)), (
        "the KV cache a GPU holds stops shrinking at one head"
    )
    assert found.kv(model_need.Split(tp=2)) == 2 * found.kv(model_need.Split(tp=4))


def test_a_human_readable_max_model_len_is_read_as_vllm_reads_it() -> None:
    # vLLM takes --max-model-len 8k (8,000) and 8K (8,192); read as unset, the check refused the
    # model's whole 131,072-token context.
    for length in ("8k", "8K", "25.6k"):
        assert not _fit_problems(
            args=["meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", length],
            gpu={"type": "nvidia-l4", "count": 1},
        ), length


def test_a_switch_before_max_model_len_does_not_hide_it() -> None:
    assert not _fit_problems(
        args=["meta-llama/Llama-3.1-8B-Instruct", "--enforce-eager", "--max-model-len", "8192"],
        gpu={"type": "nvidia-l4", "count": 1},
    ), "--enforce-eager takes no value: --max-model-len 8192 still counts"


def test_a_model_outside_the_table_ends_the_plan_with_a_bang_line(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.unknown.yaml"
    stack.write_text(
        "config:\n  gcp:project: acme-ml-test\n  gcp:region: us-central1\n"
        "  gke-gpu:workloads:\n    - name: llm\n      image: vllm/vllm-openai:v0.29.0\n"
        "      gpu: {type: nvidia-l4, count: 1}\n      args: [acme/in-house-llm]\n"
        "      cache: {size: 30Gi}\n"
    )
    plan = render.render("unknown", stack)
    assert not plan.problems, plan.problems
    text = render.summary(plan)
    last = text.splitlines()[-1]
    assert last.startswith("  ! workloads[0] (llm): model fit not checked"), (
        f"the plan's last line says the fit was not checked, above its OK: {last}"
    )
    assert "workloads[0].model.parameters" in last and "dtype" in last, last
    assert text.count("model fit not checked") == 1, "said once, at the end"
