"""Planted secrets: realistic ciphertexts, tokens and kubeconfigs, and what counts as an echo."""

from __future__ import annotations

import base64
import random
import string


def _b64(rng: random.Random, n: int) -> str:
    return base64.b64encode(rng.getrandbits(8 * n).to_bytes(n, "big")).decode()


def ciphertext(rng: random.Random) -> str:
    """A realistic `secure:` value: passphrase provider (`v1:<nonce>:<data>`) or service backend."""
    if rng.random() < 0.5:
        return f"v1:{_b64(rng, 12)}:{_b64(rng, rng.choice((24, 33, 48)))}"
    return "AAABA" + _b64(rng, rng.choice((30, 45, 60)))


def token(rng: random.Random, prefix: str = "hf_") -> str:
    """A plaintext secret that is also invalid for every field (upper case, underscore)."""
    return prefix + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(30))


def kubeconfig(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """A kubeconfig with credentials, and the credential strings that must never be echoed."""
    bearer = token(rng, "kube_")
    key_data = _b64(rng, 48)
    text = (
        "apiVersion: v1\nkind: Config\nclusters:\n- name: lab\n  cluster:\n"
        "    server: https://192.0.2.10:6443\n"  # RFC 5737 documentation address
        f"    certificate-authority-data: {_b64(rng, 30)}\n"
        "contexts:\n- name: lab\n  context:\n    cluster: lab\n    user: admin\n"
        "current-context: lab\nusers:\n- name: admin\n  user:\n"
        f"    token: {bearer}\n    client-key-data: {key_data}\n"
    )
    return text, (bearer, key_data)


def needles(secret: str) -> set[str]:
    """What counts as echoing a secret: the whole, or a 16-character head or tail of it."""
    return {secret} if len(secret) < 24 else {secret, secret[:16], secret[-16:]}
