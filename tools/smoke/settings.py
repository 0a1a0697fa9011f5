"""What the smoke test sends, expects and waits for."""

from __future__ import annotations

import http.client

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_WAIT_SECONDS = 1800  # wakeTimeoutSeconds' default: the longest a sleeping model is held
DEFAULT_TIMEOUT_SECONDS = 60
MODELS_PATH = "/v1/models"
COMPLETIONS_PATH = "/v1/completions"
# vLLM answers these without its own key (docs/security.md): only the gate keeps them closed.
OPEN_IN_VLLM = ("/metrics", "/invocations", "/health")
REFUSED = (401, 403)
# What a service says while it is not ready yet: the load balancer or gate before the model.
WAKING = (502, 503, 504)
RETRIED_ERRORS = (ConnectionError, TimeoutError, http.client.RemoteDisconnected)
FIRST_RETRY_SECONDS, LONGEST_RETRY_SECONDS = 0.5, 30.0
# A request answered later than this was held (a sleeping model waking up), not merely slow.
HELD_SECONDS = 3.0
PROMPT = "GPUs are"
MAX_TOKENS = 8
# The shortest run of the key that is still hidden when a server echoes part of it.
SHORTEST_HIDDEN = 8


def hide(text: str, secret: str | None) -> str:
    """`text` with the key, and any part of it a server cut short (8 characters or more), shown
    as <apiKey>: what is printed, and what reaches a CI log, never holds it."""
    if not secret:
        return text
    for length in range(len(secret), SHORTEST_HIDDEN - 1, -1):
        for start in range(len(secret) - length + 1):
            part = secret[start : start + length]
            if part in text:
                text = text.replace(part, "<apiKey>")
    return text
