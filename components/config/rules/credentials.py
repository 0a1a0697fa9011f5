"""Credentials in plain places: refused, with the command that stores them as secrets.

A plain env value or argument reaches the Deployment, the state, `plan.json` and the preview
comment as written. Only `secure:` env values (and `secretEnv`) travel as Kubernetes Secrets, so a
value that looks like a credential anywhere else is refused. Values are never shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from components.config import formats
from components.config.context import Context
from components.config.model import NAMESPACE
from components.config.problems import Problem, under
from components.config.rules.exposure import API_KEY_ENV, API_KEY_FLAG
from components.config.schema import WorkloadSpec
from components.config.source import KNOWN_KEYS, SECRET_PLACEHOLDER

# Words of an env or flag name (split at `_`, `-`, `.`) that name a credential. Whole words, so
# TOKENIZERS_PARALLELISM and --max-num-batched-tokens are not credentials.
CREDENTIAL_WORDS = frozenset(
    {"TOKEN", "SECRET", "KEY", "APIKEY", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS"}
)
# Suffixes that name one glued to another word (HFTOKEN, DBPASSWORD, OPENAIAPIKEY).
CREDENTIAL_SUFFIXES = ("TOKEN", "SECRET", "APIKEY", "PASSWORD")
# A key of the user's own for the gate and vLLM: at least as many characters as this. The gate
# compares the whole key in constant time and answers 429 after 20 wrong ones a minute from an
# address (components/service/haproxy_limits.py), which slows one guesser, not many; 32 random
# characters are out of any guesser's reach. The generated key has 48
# (components/service/apikey.py).
API_KEY_MIN_LENGTH = 32
# `$(NAME)`: Kubernetes expands it from the container's env (dependent environment variables),
# so it references a secret instead of holding one.
_REFERENCE = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_.-]*\)")


def names_a_credential(name: str) -> bool:
    words = [w for w in re.split(r"[_\-.]+", name.upper()) if w]
    return any(w in CREDENTIAL_WORDS or w.endswith(CREDENTIAL_SUFFIXES) for w in words)


def _holds_a_value(value: str) -> bool:
    """Whether a value could be a credential: not empty, not only `$(NAME)` references."""
    return bool(_REFERENCE.sub("", value).strip())


def _secret_fix(i: int, name: str) -> str:
    return f"pulumi config set --path --secret '{NAMESPACE}:workloads[{i}].env.{name}' <value>"


def env_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """Plain env values named like credentials (HF_TOKEN, OPENAI_API_KEY, DB_PASSWORD)."""
    for name, value in w.env.items():
        path = formats.join(f"workloads[{i}].env", name)
        if ctx.is_secret(path) or not names_a_credential(name) or not _holds_a_value(value):
            continue
        yield Problem(
            path,
            "named like a credential but stored in plain text, so it would sit in the stack file, "
            "the Deployment, the state and every preview. Store it as a secret: "
            f"`{_secret_fix(i, name)}` (the program then passes it through a Kubernetes Secret).",
        )


def _flag_name(arg: str) -> str | None:
    if not arg.startswith("--") or len(arg) <= 2:
        return None
    return arg[2:].split("=", 1)[0]


def arg_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """A literal value after a credential flag (`--api-key sk-...`, `--hf-token=hf_...`) in
    `command` or `args`. `--hf-token $(HF_TOKEN)` references an env value instead: accepted."""
    for field in ("command", "args"):
        items = list(getattr(w, field))
        for j, arg in enumerate(items):
            flag = _flag_name(arg)
            if flag is None or not names_a_credential(flag):
                continue
            if "=" in arg:
                value, where = arg.split("=", 1)[1], j
            elif j + 1 < len(items) and not items[j + 1].startswith("--"):
                value, where = items[j + 1], j + 1
            else:
                continue  # a bare flag (vLLM's `--hf-token` alone uses the login's token)
            if not _holds_a_value(value):
                continue
            env = re.sub(r"[^A-Z0-9]+", "_", flag.upper())
            yield Problem(
                f"workloads[{i}].{field}[{where}]",
                f"the value of --{flag} is written in plain text, so it would sit in the "
                "Deployment, the state and every preview (and the summary could not tell a key is "
                f"set). Store it as a secret env value, `{_secret_fix(i, env)}`, and write "
                f"`--{flag}=$({env})` here: Kubernetes expands it from the env."
                + (
                    " For vLLM's own key, drop --api-key: the stack generates one and requires "
                    "it on every path (apiKey)."
                    if f"--{flag}" == API_KEY_FLAG
                    else ""
                ),
            )


def secret_env_target_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """secretEnv naming the stack's own config keys: `cluster` (or the key cluster.kubeconfig
    names) holds the cluster's credentials, which a pod must never get."""
    for env_name, key in w.secret_env.items():
        where = formats.join(f"workloads[{i}].secretEnv", env_name)
        if key in (ctx.kubeconfig_key, "cluster"):
            yield Problem(
                where,
                f"{key!r} holds the cluster's kubeconfig: handing it to a pod gives everything in "
                "that pod the credentials the stack deploys with. Point secretEnv at a key of its "
                "own (`pulumi config set --secret gke-gpu:<key> <value>`).",
            )
        elif key in KNOWN_KEYS:
            yield Problem(
                where,
                f"{key!r} is the stack's own {key} config, not a secret value. Point secretEnv at "
                "a key of its own (`pulumi config set --secret gke-gpu:<key> <value>`).",
            )


def api_key_length_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """A key of the user's own (a secure env.VLLM_API_KEY, or the key secretEnv.VLLM_API_KEY
    names) shorter than API_KEY_MIN_LENGTH. Neither the key nor its length is shown."""
    lengths: list[tuple[str, int]] = []
    value = w.env.get(API_KEY_ENV)
    if value is not None and value != SECRET_PLACEHOLDER and _holds_a_value(value):
        lengths.append((formats.join(f"workloads[{i}].env", API_KEY_ENV), len(value)))
    key = w.secret_env.get(API_KEY_ENV)
    if key is not None and key in ctx.secret_lengths:
        lengths.append(
            (formats.join(f"workloads[{i}].secretEnv", API_KEY_ENV), ctx.secret_lengths[key])
        )
    for path, length in lengths:
        if length >= API_KEY_MIN_LENGTH:
            continue
        yield Problem(
            path,
            f"the API key (not shown) is shorter than {API_KEY_MIN_LENGTH} characters: short "
            "enough to guess, and the gate lets anyone who reaches it try. Use at least "
            f"{API_KEY_MIN_LENGTH} random characters (`openssl rand -hex 24` prints 48), set with "
            "--secret, or remove it and let the stack generate a 48-character key (apiKey).",
        )


def placement_problems(ctx: Context, workloads: int) -> Iterator[Problem]:
    """`secure:` makes sense only for env values and cluster.kubeconfig: anywhere else the value
    would reach the cluster in plain text (an image, a count), so it is refused, naming the key
    path only; the loader skips those values, so nothing else shows them."""
    secure = sorted(ctx.secure_paths or ())
    for key in ("nodePools", "namespace", "devicePlugin", "monitoring"):
        if key not in ctx.secret_keys:
            continue
        yield from [
            Problem(
                path,
                "a secret (`secure:`) here makes no sense: it configures the cluster in "
                "plain text. Store it without --secret.",
            )
            for path in secure
            if path.split("[")[0].split(".")[0] == key
        ] or [
            Problem(
                key,
                f"holds a secret (`secure:`), but nothing in {key} is secret: it configures "
                "the cluster in plain text. Store it without --secret.",
            )
        ]
    if ctx.secure_paths is None:
        return
    if "cluster" in ctx.secret_keys:
        yield from (
            Problem(
                path,
                "a secret (`secure:`) here makes no sense: this value configures the cluster in "
                "plain text. Store it without --secret; only cluster.kubeconfig can be secret.",
            )
            for path in secure
            if path.startswith(("cluster.", "cluster[")) and path != "cluster.kubeconfig"
        )
    for i in range(workloads if "workloads" in ctx.secret_keys else 0):
        base = f"workloads[{i}]"
        yield from (
            Problem(
                path,
                "a secret (`secure:`) here makes no sense: this value is sent to the "
                "cluster in plain text. Store it without --secret; only env values can be secret.",
            )
            for path in secure
            if under(path, base) and not path[len(base) :].startswith((".env.", ".env["))
        )
