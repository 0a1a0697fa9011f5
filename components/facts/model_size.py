"""What the model-fit check (components/config/rules/model_fit.py) needs to know of a model: its
weights and what one token of its KV cache takes. The rows are in models_*.py, one module per
family, each with its source; components/facts/models.py joins them.
"""

from __future__ import annotations

from dataclasses import dataclass

HF = "https://huggingface.co/{}/blob/main/config.json"


@dataclass(frozen=True)
class ModelSize:
    parameters: float
    """Every parameter the server loads; of a mixture of experts all its experts (vLLM loads them
    all, only a few run per token), so Qwen3-30B-A3B counts 30.5B, not 3B."""
    layers: int
    """num_hidden_layers."""
    kv_heads: int
    """num_key_value_heads; 1 for multi-head latent attention (DeepSeek), whose one latent vector
    per token and layer vLLM keeps whole on every tensor-parallel rank (get_num_kv_heads returns 1
    when use_mla, vllm-project/vllm vllm/config/model.py)."""
    head_values: int
    """Values one KV head caches per token and layer: 2 x head_dim (a key and a value), or MLA's
    kv_lora_rank + qk_rope_head_dim (vllm/v1/kv_cache_interface.py: "For MLA we only store a
    single latent vector")."""
    dtype: str
    """The checkpoint's weights as served: "bf16", "fp8", or "mxfp4" (gpt-oss: its experts in
    MXFP4, the rest in bf16)."""
    context: int
    """max_position_embeddings: vLLM's max_model_len when --max-model-len is unset."""
    moe: bool = False
    """A mixture of experts: vLLM shards its experts over tensor x data parallel ranks ("MoE layers
    will be sharded according to the product of the tensor parallel size and data parallel
    size", vLLM's --data-parallel-size help), so data parallelism splits its weights too."""
    local_layers: int = 0
    """Layers of sliding-window or chunked local attention: vLLM caches at most the window for
    them (SlidingWindowSpec / ChunkedLocalAttentionSpec.max_memory_usage_bytes, vllm-project/vllm
    vllm/v1/kv_cache_interface.py: min(window + max_num_batched_tokens, max_model_len)); the
    rest cache every token of the sequence."""
    window: int = 0
    """The local layers' window (sliding_window, attention_chunk_size) in tokens."""

    @property
    def kv_values(self) -> int:
        """Values one token's KV cache holds per layer, all heads."""
        return self.kv_heads * self.head_values

    def cached_tokens(self, tokens: int) -> float:
        """Tokens x layers the KV cache holds for one sequence of `tokens`, at least: the local
        layers' window counted without vLLM's extra batch of scheduled tokens (a floor)."""
        full = self.layers - self.local_layers
        return full * tokens + self.local_layers * min(tokens, self.window)


def gqa(parameters: float, layers: int, kv_heads: int, head: int, context: int) -> ModelSize:
    """A dense bf16 model with grouped-query attention over every layer."""
    return ModelSize(parameters, layers, kv_heads, 2 * head, "bf16", context)
