"""Credentials in plain places: refused, with the command that stores them as secrets.

A plain env value or argument reaches the Deployment, the state, `plan.json` and the preview
comment as written. Only `secure:` env values (and `secretEnv`) travel as Kubernetes Secrets, so a
value that looks like a credential anywhere else is refused. Values are never shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .. import formats
from ..context import Context
from ..model import NAMESPACE
from ..problems import Problem, under
from ..schema import WorkloadSpec
from ..source import KNOWN_KEYS, SECRET_PLACEHOLDER
from .exposure import API_KEY_ENV, API_KEY_FLAG

# Words of an env or flag name (split at `_`, `-`, `.`) that name a credential. Whole words, so
# TOKENIZERS_PARALLELISM and --max-num-batched-tokens are not credentials.
CREDENTIAL_WORDS = frozenset(
    {
        "TOKEN",
        "SECRET",
        "KEY",
        "APIKEY",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "BEARER",
    }
)
# Suffixes that name one glued to another word (HFTOKEN, DBPASSWORD, OPENAIAPIKEY).
CREDENTIAL_SUFFIXES = ("TOKEN", "SECRET", "APIKEY", "PASSWORD")
# A key of the user's own for the gate and vLLM: at least as many characters as this. The gate
# compares the whole key in constant time and answers 429 after 20 wrong ones a minute from an
# address (components/service/haproxy_limits.py), which slows one guesser, not many; 32 random
# characters are out of any guesser's reach. The generated key has 48
# (components/service/apikey.py).
API_KEY_MIN_LENGTH = 32
# Words that name a credential only as a name's last word: DB_PASS, HF_AUTH, BASIC_AUTH, PASS, but
# not PASS_THROUGH or AUTH_ENABLED.
CREDENTIAL_LAST_WORDS = frozenset({"PASS", "AUTH"})
# `$(NAME)`: Kubernetes expands it from the container's env (dependent environment variables),
# so it references a secret instead of holding one.
_REFERENCE = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_.-]*\)")
# Credentials known by their shape, whatever the env name or flag around them: what they are, the
# pattern, and the env name a fix suggests. The shapes are gitleaks' rules (gitleaks/gitleaks@
# b58d3f10 config/gitleaks.toml, rule ids in brackets), widened where a looser match costs
# nothing: [huggingface-access-token] is hf_ and 34 letters (here 30 or more letters or digits);
# [openai-api-key] wants OpenAI's T3BlbkFJ marker (here any sk- key of 20 or more characters, as
# other providers' keys look alike, e.g. [anthropic-api-key] sk-ant-api03-); [github-pat],
# [github-oauth], [github-app-token], [github-refresh-token] (gh[pousr]_ and 36) and
# [github-fine-grained-pat];
# [gcp-api-key] (AIza and 35); [aws-access-token] (AKIA or ASIA and 16, gitleaks' base32 widened
# to every capital and digit, as in Yelp/detect-secrets@5e141933 detect_secrets/plugins/aws.py);
# [private-key] (a PEM header); [jwt] (here: three base64url parts, the first two JSON, eyJ).
# A table, not detect-secrets: its plugins (Yelp/detect-secrets@5e141933 detect_secrets/plugins/)
# have no Hugging Face or Google API key detector, and it would bring pyyaml and requests along.
CREDENTIAL_VALUES: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (what, re.compile(pattern, re.ASCII), env)
    for what, pattern, env in (
        ("a Hugging Face token (hf_...)", r"\bhf_[A-Za-z0-9]{30,}", "HF_TOKEN"),
        ("a secret API key (sk-...)", r"\bsk-[A-Za-z0-9_-]{20,}", "OPENAI_API_KEY"),
        (
            "a GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_...)",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_\w{82})",
            "GITHUB_TOKEN",
        ),
        ("a Google API key (AIza...)", r"\bAIza[\w-]{35}", "GOOGLE_API_KEY"),
        (
            "an AWS access key (AKIA.../ASIA...)",
            r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
            "AWS_ACCESS_KEY_ID",
        ),
        (
            "a private key (-----BEGIN ... PRIVATE KEY-----)",
            r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
            "PRIVATE_KEY",
        ),
        (
            "a JSON Web Token (eyJ...)",
            r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
            "TOKEN",
        ),
    )
)


def names_a_credential(name: str) -> bool:
    words = [w for w in re.split(r"[_\-.]+", name.upper()) if w]
    return any(w in CREDENTIAL_WORDS or w.endswith(CREDENTIAL_SUFFIXES) for w in words) or (
        bool(words) and words[-1] in CREDENTIAL_LAST_WORDS
    )


def looks_like_a_credential(value: str) -> tuple[str, str] | None:
    """(what it looks like, the env name a fix suggests) when `value` holds a known credential
    shape anywhere (a login line in `sh -c` too), else None."""
    for what, pattern, env in CREDENTIAL_VALUES:
        if pattern.search(value):
            return what, env
    return None


def _holds_a_value(value: str) -> bool:
    """Whether a value could be a credential: not empty, not only `$(NAME)` references."""
    return bool(_REFERENCE.sub("", value).strip())


def _secret_fix(i: int, name: str) -> str:
    return f"pulumi config set --path --secret '{NAMESPACE}:workloads[{i}].env.{name}' <value>"


_IN_CLEAR = "so it would sit in the stack file, the Deployment, the state and every preview"


def env_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """Plain env values named like credentials (HF_TOKEN, OPENAI_API_KEY, DB_PASSWORD, HF_AUTH)
    or shaped like one (HF_AUTH: hf_..., BEARER: sk-...). The value is never shown."""
    for name, value in w.env.items():
        path = formats.join(f"workloads[{i}].env", name)
        if ctx.is_secret(path) or not _holds_a_value(value):
            continue
        found = looks_like_a_credential(value)
        if found is None and not names_a_credential(name):
            continue
        what = (
            f"holds what looks like {found[0]} in plain text"
            if found is not None
            else "named like a credential but stored in plain text"
        )
        yield Problem(
            path,
            f"{what}, {_IN_CLEAR}. Store it as a secret: `{_secret_fix(i, name)}` (the program "
            "then passes it through a Kubernetes Secret).",
        )


def _flag_name(arg: str) -> str | None:
    if not arg.startswith("--") or len(arg) <= 2:
        return None
    return arg[2:].split("=", 1)[0]


def _flag_value(items: list[str], j: int) -> tuple[str, int] | None:
    """The literal after a credential flag at `j` (`--flag=value` or `--flag value`) and where
    it is; None for a bare flag (vLLM's `--hf-token` alone uses the login's token)."""
    flag = _flag_name(items[j])
    if flag is None or not names_a_credential(flag):
        return None
    if "=" in items[j]:
        return items[j].split("=", 1)[1], j
    if j + 1 < len(items) and not items[j + 1].startswith("--"):
        return items[j + 1], j + 1
    return None


def arg_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """A literal value after a credential flag (`--api-key sk-...`, `--hf-token=hf_...`) in
    `command` or `args`, and any item holding a credential by its shape (`--hf-tok hf_...`, a
    login line in `sh -c`). `--hf-token $(HF_TOKEN)` references an env value instead: accepted.
    Values are never shown."""
    for field in ("command", "args"):
        items = list(getattr(w, field))
        flagged: set[int] = set()
        for j in range(len(items)):
            found = _flag_value(items, j)
            if found is None or not _holds_a_value(found[0]):
                continue
            flag = str(_flag_name(items[j]))
            env = re.sub(r"[^A-Z0-9]+", "_", flag.upper())
            flagged.add(found[1])
            yield Problem(
                f"workloads[{i}].{field}[{found[1]}]",
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
        for j, item in enumerate(items):
            shape = None if j in flagged else looks_like_a_credential(_REFERENCE.sub("", item))
            if shape is not None:
                what, env = shape
                yield Problem(
                    f"workloads[{i}].{field}[{j}]",
                    f"holds what looks like {what} in plain text, {_IN_CLEAR}. Store it as a "
                    f"secret env value, `{_secret_fix(i, env)}`, and write `$({env})` in its "
                    "place: Kubernetes expands it from the env.",
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
