"""Qwen2.5 and Qwen3 (dense and mixture-of-experts) for the model-fit table
(components/facts/models.py).

Where each row was read (huggingface.co itself is out of reach here; see models.py):
  - Qwen2.5: as before issue 45 (models.py's docstring).
  - Qwen3 0.6B, 1.7B, 4B, 8B, 14B, 32B, 30B-A3B, 235B-A22B and the -2507 Instruct/Thinking
    releases of 4B, 30B-A3B and 235B-A22B: Lightning-AI/litgpt litgpt/config.py (commit
    26857050), whose rows name the Hub config.json each was read from: n_layer, n_query_groups
    (num_key_value_heads), head_size 128 (or hidden / heads = 128), block_size
    (max_position_embeddings: 40960, and 262144 for the -2507 releases), n_expert for the MoE.
    Cross-checked against verbatim config.json copies: citsjtu2020/LLM-Prof
    sglang/Model_Config.md (Qwen3-4B, 8B, 14B, 32B, 30B-A3B: the same layers, KV heads, head_dim,
    40960, "torch_dtype": "bfloat16") and, for 235B-A22B, Ascend/MindSpeed-RL
    configs/model/qwen3_235b_a22b.yaml (94 layers, 4 query groups, kv_channels 128,
    max_position_embeddings 40960).
  - Parameters: computed from those sizes (embeddings, attention, MLP or every expert, norms),
    rounded down: 0.596B, 1.72B, 4.02B, 8.19B, 14.77B, 32.76B, 30.53B and 235.09B. Model cards
    read (in copies): Qwen3-30B-A3B and its -2507 releases, "Number of Parameters: 30.5B in total
    and 3.3B activated"; Qwen3-235B-A22B as quoted on
    b-lab.team/en/content/b76fff15-f533-46f7-828f-0254e65ffc36, "235 billion parameters ... 94
    layers ... 4 for Keys/Values".
  - The -FP8 checkpoints are not in the table (their quantization_config not read): `model:
    {parameters, dtype: fp8}` describes one.
"""

from __future__ import annotations

from .model_size import ModelSize, gqa


def _moe(parameters: float, layers: int, kv_heads: int, context: int) -> ModelSize:
    return ModelSize(parameters, layers, kv_heads, 2 * 128, "bf16", context, moe=True)


_QWEN3_4B = gqa(4.02e9, 36, 8, 128, 40_960)
_QWEN3_30B = _moe(30.5e9, 48, 4, 40_960)
_QWEN3_235B = _moe(235e9, 94, 4, 40_960)

MODELS: dict[str, ModelSize] = {
    "Qwen/Qwen2.5-0.5B-Instruct": gqa(0.49e9, 24, 2, 64, 32_768),
    "Qwen/Qwen2.5-1.5B-Instruct": gqa(1.54e9, 28, 2, 128, 32_768),
    "Qwen/Qwen2.5-7B-Instruct": gqa(7.61e9, 28, 4, 128, 32_768),
    "Qwen/Qwen2.5-72B-Instruct": gqa(72.7e9, 80, 8, 128, 32_768),
    "Qwen/Qwen3-0.6B": gqa(0.596e9, 28, 8, 128, 40_960),
    "Qwen/Qwen3-1.7B": gqa(1.72e9, 28, 8, 128, 40_960),
    "Qwen/Qwen3-4B": _QWEN3_4B,
    "Qwen/Qwen3-8B": gqa(8.19e9, 36, 8, 128, 40_960),
    "Qwen/Qwen3-14B": gqa(14.7e9, 40, 8, 128, 40_960),
    "Qwen/Qwen3-32B": gqa(32.7e9, 64, 8, 128, 40_960),
    "Qwen/Qwen3-30B-A3B": _QWEN3_30B,
    "Qwen/Qwen3-235B-A22B": _QWEN3_235B,
    **{
        f"Qwen/Qwen3-{size}-{kind}-2507": ModelSize(
            row.parameters, row.layers, row.kv_heads, row.head_values, "bf16", 262_144, row.moe
        )
        for size, row in (("4B", _QWEN3_4B), ("30B-A3B", _QWEN3_30B), ("235B-A22B", _QWEN3_235B))
        for kind in ("Instruct", "Thinking")
    },
}
