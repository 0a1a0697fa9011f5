"""Open-weight models' sizes, for the model-fit check (components/config/rules/model_fit.py,
issues 34 and 45): one module per family (models_llama.py, models_qwen.py, models_more.py), each
row with where it was read; the sizes' meaning in model_size.py.

Each row: parameters (all of a mixture of experts'), transformer layers, KV heads and what one
head caches per token and layer (2 x head_dim for grouped-query attention; DeepSeek's multi-head
latent attention caches kv_lora_rank + qk_rope_head_dim), the layers of local attention and
their window, the checkpoint's dtype and its context. Source: each model's config.json on the
Hugging Face Hub (HF below: num_hidden_layers, num_key_value_heads, head_dim or hidden_size /
num_attention_heads, sliding_window, torch_dtype, quantization_config) and its model card for
the parameter count.

NOT read from huggingface.co here (no route to it): the values were checked against copies found
with the code and docs search, named in each family's module. The rows before issue 45 were
checked against third-party copies (fitmygpu.com/models/llama-3.1-70b: 70.6B, 80 layers, 8 KV
heads; a TensorRT-LLM config of Llama 3.1 405B: 126 layers, 128 heads, hidden 16384; benchmark
tables of Llama 3.1 8B/70B/405B and Qwen2.5 7B/72B with the same layers, heads and KV heads).
Where copies disagree, or a value could not be read, the family module says so and takes the
value that gives the smaller estimate: the check is a floor, so a refusal holds whatever the
exact figure. Confirm against the Hub's config.json before relying on a borderline fit.

Left out (not confirmed here): the Qwen3 -FP8 checkpoints, Gemma 3's -pt checkpoints other than
4B, DeepSeek's distilled models; `model: {parameters, dtype}` describes any model the table
does not know.
"""

from __future__ import annotations

from .model_size import HF, ModelSize
from .models_llama import MODELS as _LLAMA
from .models_more import MODELS as _MORE
from .models_qwen import MODELS as _QWEN

__all__ = ["GATED_ORGANIZATIONS", "MODELS", "TOKEN_ENV", "ModelSize", "source"]

MODELS: dict[str, ModelSize] = {**_LLAMA, **_QWEN, **_MORE}


def source(model: str) -> str:
    return HF.format(model)


# Models the Hugging Face Hub serves only to an account that accepted their license: every
# meta-llama repository ("You need to agree to share your contact information to access this
# model", huggingface.co/meta-llama/Meta-Llama-3.1-8B) and Google's Gemma 3 ("This repository is
# publicly accessible, but you have to accept the conditions to access its files and content. To
# access Gemma on Hugging Face, you're required to review and agree to Google's usage license",
# the page of google/gemma-3-4b-pt in a mirror; the -it cards carry the same extra_gated_prompt).
# A download without a token of such an account fails.
GATED_ORGANIZATIONS = ("meta-llama/", "google/gemma-3-")
# Where huggingface_hub (which vLLM downloads with) reads a token from the environment.
TOKEN_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
