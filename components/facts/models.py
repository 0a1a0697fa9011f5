"""Popular models' sizes, for the model-fit check (components/config/rules/model_fit.py, issue 34).

Each row: parameters, transformer layers, and what one token's KV cache holds per layer (values
per token per layer: 2 x KV heads x head size for grouped-query attention; DeepSeek's multi-head
latent attention caches kv_lora_rank + qk_rope_head_dim), with the checkpoint's dtype. Source:
each model's config.json on the Hugging Face Hub (the URL beside the row: num_hidden_layers,
num_key_value_heads, hidden_size / num_attention_heads or head_dim, torch_dtype,
quantization_config) and its model card for the parameter count. NOT read from huggingface.co
here (no route to it): the values were checked against third-party copies found with the code
search (fitmygpu.com/models/llama-3.1-70b: 70.6B, 80 layers, 8 KV heads; a TensorRT-LLM
config of Llama 3.1 405B: 126 layers, 128 heads, hidden 16384; several benchmark tables of
Llama 3.1 8B/70B/405B and Qwen2.5 7B/72B with the same layers, heads and KV heads), and must be
confirmed against the Hub's config.json before they are relied on for a borderline fit.
"""

from __future__ import annotations

from dataclasses import dataclass

HF = "https://huggingface.co/{}/blob/main/config.json"


@dataclass(frozen=True)
class ModelSize:
    parameters: float
    layers: int
    kv_values: int
    """Values one token's KV cache holds per layer."""
    dtype: str
    """The checkpoint's weights: "bf16" or "fp8"."""
    context: int
    """max_position_embeddings: vLLM's max_model_len when --max-model-len is unset."""

    def kv_bytes_per_token(self, kv_bytes: float = 2) -> float:
        return self.layers * self.kv_values * kv_bytes


def _gqa(parameters: float, layers: int, kv_heads: int, head: int, context: int) -> ModelSize:
    return ModelSize(parameters, layers, 2 * kv_heads * head, "bf16", context)


_LLAMA_8B = _gqa(8.03e9, 32, 8, 128, 131_072)
_LLAMA_70B = _gqa(70.6e9, 80, 8, 128, 131_072)
_LLAMA_405B = _gqa(405.9e9, 126, 8, 128, 131_072)
# MLA: kv_lora_rank 512 + qk_rope_head_dim 64 per token and layer; weights FP8 (block-wise
# quantization_config, fmt e4m3); 671B parameters (the model card: "671B total").
_DEEPSEEK_R1 = ModelSize(671e9, 61, 512 + 64, "fp8", 163_840)

MODELS: dict[str, ModelSize] = {
    "meta-llama/Llama-3.1-8B": _LLAMA_8B,
    "meta-llama/Llama-3.1-8B-Instruct": _LLAMA_8B,
    "meta-llama/Llama-3.1-70B": _LLAMA_70B,
    "meta-llama/Llama-3.1-70B-Instruct": _LLAMA_70B,
    "meta-llama/Llama-3.3-70B-Instruct": _LLAMA_70B,
    "meta-llama/Llama-3.1-405B": _LLAMA_405B,
    "meta-llama/Llama-3.1-405B-Instruct": _LLAMA_405B,
    "meta-llama/Llama-3.1-405B-Instruct-FP8": ModelSize(405.9e9, 126, 2 * 8 * 128, "fp8", 131_072),
    "deepseek-ai/DeepSeek-R1": _DEEPSEEK_R1,
    "deepseek-ai/DeepSeek-V3": _DEEPSEEK_R1,
    "Qwen/Qwen2.5-0.5B-Instruct": _gqa(0.49e9, 24, 2, 64, 32_768),
    "Qwen/Qwen2.5-1.5B-Instruct": _gqa(1.54e9, 28, 2, 128, 32_768),
    "Qwen/Qwen2.5-7B-Instruct": _gqa(7.61e9, 28, 4, 128, 32_768),
    "Qwen/Qwen2.5-72B-Instruct": _gqa(72.7e9, 80, 8, 128, 32_768),
}


def source(model: str) -> str:
    return HF.format(model)


# Models the Hugging Face Hub serves only to an account that accepted their license: every
# meta-llama repository ("You need to agree to share your contact information to access this
# model", huggingface.co/meta-llama/Meta-Llama-3.1-8B). A download without a token of such an
# account fails.
GATED_ORGANIZATIONS = ("meta-llama/",)
# Where huggingface_hub (which vLLM downloads with) reads a token from the environment.
TOKEN_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
