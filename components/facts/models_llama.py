"""Meta's Llama 3.1, 3.2, 3.3 and 4 for the model-fit table (components/facts/models.py).

Where each row was read (huggingface.co itself is out of reach here; see models.py):
  - Llama 3.1 8B/70B/405B and 3.3 70B: as before issue 45 (models.py's docstring).
  - Llama 3.2 1B and 3B: Lightning-AI/litgpt litgpt/config.py (commit 26857050), the rows it
    notes as huggingface.co/meta-llama/Llama-3.2-{1B,3B}/blob/main/config.json: 16 and 28 layers,
    8 KV heads (n_query_groups), block_size 131072; head_dim 64 (1B: 2048 / 32 heads, also
    "head_dim": 64 in kevinstephano/thunder_model_blocks hf_llama/llama_config.py, a copy of
    Llama-3.2-1B-Instruct's config) and 128 (3B, "head_dim": 128 in citsjtu2020/LLM-Prof
    sglang/Model_Config.md). Parameters: computed from those sizes (1.236B and 3.213B, embeddings
    tied), rounded down.
  - Llama 4 Scout and Maverick: huggingface/transformers src/transformers/models/llama4/
    configuration_llama4.py (Llama4TextConfig, whose defaults are the Scout checkpoint's): 48
    layers, 8 KV heads, head_dim 128, attention_chunk_size 8192 with every 4th layer global
    (no_rope_layer_interval 4: layer_types "chunked_attention" for the other three). Maverick:
    Ollama's GGUF metadata of it (ollama.com/aravhawk/llama4:maverick-q4_K_M: block_count 48,
    head_count_kv 8, key_length 128, context_length 1048576, expert_count 128); its chunked
    layers are taken to be Scout's (not confirmed; counting them local can only lower the
    estimate). Parameters: the text decoder computed from those sizes (Scout 107.8B, Maverick
    400.7B), the vision encoder not counted; Hugging Face's Llama 4 pages say "~109B" and "~400B"
    total (huggingface.co/docs/transformers/model_doc/llama4). Scout's context: the "10M
    context window" of Meta's announcement as Hugging Face relayed it
    (huggingface.co/posts/merterbak/558288701198389), as a round figure (its config's exact
    max_position_embeddings not read; a lower figure only lowers the estimate). Weights bf16;
    the -FP8 checkpoint taken as all FP8 (a floor: Meta's FP8 build may keep some layers in
    bf16, not confirmed).
"""

from __future__ import annotations

from .model_size import ModelSize, gqa

_LLAMA_8B = gqa(8.03e9, 32, 8, 128, 131_072)
_LLAMA_70B = gqa(70.6e9, 80, 8, 128, 131_072)
_LLAMA_405B = gqa(405.9e9, 126, 8, 128, 131_072)
_LLAMA_3_2_1B = gqa(1.23e9, 16, 8, 64, 131_072)
_LLAMA_3_2_3B = gqa(3.21e9, 28, 8, 128, 131_072)
_SCOUT = ModelSize(107.7e9, 48, 8, 2 * 128, "bf16", 10_000_000, True, 36, 8192)
_MAVERICK = ModelSize(400e9, 48, 8, 2 * 128, "bf16", 1_048_576, True, 36, 8192)

MODELS: dict[str, ModelSize] = {
    "meta-llama/Llama-3.1-8B": _LLAMA_8B,
    "meta-llama/Llama-3.1-8B-Instruct": _LLAMA_8B,
    "meta-llama/Llama-3.1-70B": _LLAMA_70B,
    "meta-llama/Llama-3.1-70B-Instruct": _LLAMA_70B,
    "meta-llama/Llama-3.3-70B-Instruct": _LLAMA_70B,
    "meta-llama/Llama-3.1-405B": _LLAMA_405B,
    "meta-llama/Llama-3.1-405B-Instruct": _LLAMA_405B,
    "meta-llama/Llama-3.1-405B-Instruct-FP8": ModelSize(405.9e9, 126, 8, 2 * 128, "fp8", 131_072),
    "meta-llama/Llama-3.2-1B": _LLAMA_3_2_1B,
    "meta-llama/Llama-3.2-1B-Instruct": _LLAMA_3_2_1B,
    "meta-llama/Llama-3.2-3B": _LLAMA_3_2_3B,
    "meta-llama/Llama-3.2-3B-Instruct": _LLAMA_3_2_3B,
    # The four Llama 4 repositories huggingface.co/meta-llama lists.
    "meta-llama/Llama-4-Scout-17B-16E": _SCOUT,
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": _SCOUT,
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct": _MAVERICK,
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8": ModelSize(
        400e9, 48, 8, 2 * 128, "fp8", 1_048_576, True, 36, 8192
    ),
}
