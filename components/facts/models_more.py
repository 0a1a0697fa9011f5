"""DeepSeek V3/R1, OpenAI's gpt-oss and Google's Gemma 3 for the model-fit table
(components/facts/models.py).

Where each row was read (huggingface.co itself is out of reach here; see models.py):
  - DeepSeek V3 and R1: as before issue 45 (models.py's docstring): 61 layers, multi-head latent
    attention caching kv_lora_rank 512 + qk_rope_head_dim 64 per token and layer, FP8 weights,
    671B parameters ("671B total", the model card), context 163840.
  - gpt-oss-120b: huggingface/transformers src/transformers/models/gpt_oss/
    configuration_gpt_oss.py (GptOssConfig's defaults: 36 layers, 128 experts, 8 KV heads,
    head_dim 64, sliding_window 128 on every other layer, max_position_embeddings 131072).
    gpt-oss-20b: EchoCog/gpt-oss-20b docs/gpt-oss-20b-architecture.md (a summary of the
    checkpoint's config: 24 layers, 32 experts, the same attention, 131072, "quant_method":
    "mxfp4" with self_attn, router, embed_tokens and lm_head kept in bf16). Parameters: computed
    from those sizes (every expert's 3 x hidden x intermediate, attention, embeddings): 116.8B
    and 20.9B.
    Weights: the experts in MXFP4, 4-bit E2M1 values with one 8-bit E8M0 scale per block of 32
    ("17 bytes for 32 values", docs.rs/float4 MXFP4Block, after the OCP MX specification): 4.25
    bits a parameter. The rest (attention, router, embeddings, about 2B parameters of the 120b)
    is bf16; counting every parameter at 4.25 bits is the floor the check needs (about 62 GB for
    the 120b, whose checkpoint is nearer 65 GB).
    Attention: the sliding layers are local (window 128); the sinks add no KV cache.
  - Gemma 3 1B, 4B, 12B, 27B (the -it checkpoints litgpt names, and google/gemma-3-4b-pt):
    Lightning-AI/litgpt litgpt/config.py (commit 26857050), rows noted as
    huggingface.co/google/gemma-3-{1b,4b,12b,27b}-it/blob/main/config.json: 26/34/48/62 layers,
    1/4/8/16 KV heads, head_size 256/256/256/128, one global layer in six ((i + 1) % 6 == 0),
    the others sliding with a window of 512 (1B) or 1024. Context: the model card's "128K tokens
    for the 4B, 12B, and 27B sizes, and 32K tokens for the 1B size" (google/gemma-3-4b-pt's card,
    in a mirror of the Hub page): 131072 and 32768. Copies disagree on the 1B's window (512 in
    litgpt and a gemma-3-1B GGUF test, 1024 in another test): the smaller is taken, which only
    lowers the estimate. Parameters: the text decoder computed from those sizes (0.9999B, 3.88B,
    11.77B, 27.01B), rounded down; the vision encoder of the 4B, 12B and 27B (SigLIP, about
    0.4B) is not counted, so the weights are a floor.
"""

from __future__ import annotations

from .model_size import ModelSize

# MLA: one latent of kv_lora_rank 512 + qk_rope_head_dim 64 per token and layer; FP8 weights
# (block-wise quantization_config, fmt e4m3).
_DEEPSEEK_R1 = ModelSize(671e9, 61, 1, 512 + 64, "fp8", 163_840, moe=True)


def _gpt_oss(parameters: float, layers: int) -> ModelSize:
    return ModelSize(parameters, layers, 8, 2 * 64, "mxfp4", 131_072, True, layers // 2, 128)


def _gemma3(parameters: float, layers: int, kv_heads: int, head: int, window: int) -> ModelSize:
    context = 32_768 if layers == 26 else 131_072
    local = layers - layers // 6
    return ModelSize(parameters, layers, kv_heads, 2 * head, "bf16", context, False, local, window)


_GEMMA_3 = {
    "1b": _gemma3(0.99e9, 26, 1, 256, 512),
    "4b": _gemma3(3.88e9, 34, 4, 256, 1024),
    "12b": _gemma3(11.7e9, 48, 8, 256, 1024),
    "27b": _gemma3(27.0e9, 62, 16, 128, 1024),
}

MODELS: dict[str, ModelSize] = {
    "deepseek-ai/DeepSeek-R1": _DEEPSEEK_R1,
    "deepseek-ai/DeepSeek-V3": _DEEPSEEK_R1,
    "openai/gpt-oss-20b": _gpt_oss(20.9e9, 24),
    "openai/gpt-oss-120b": _gpt_oss(116.8e9, 36),
    **{f"google/gemma-3-{size}-it": row for size, row in _GEMMA_3.items()},
    "google/gemma-3-4b-pt": _GEMMA_3["4b"],
}
