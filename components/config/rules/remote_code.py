"""`--trust-remote-code` runs the model repository's own Python inside the server (issue 44, N7).

The server holds the API key (env VLLM_API_KEY) and, downloading from the Hugging Face Hub,
reaches the internet. Without a pinned revision the code is whatever the repository's default
branch holds when a pod starts: a later push, or whoever takes over the account, runs there next.
So any workload, in any stack, that passes `--trust-remote-code` (in args or command, a shell
script's words included) names the commit it trusts with `--revision <40 hex characters>`.

What a revision pins (read in the stored sources): transformers' get_class_from_dynamic_module
loads the code at `code_revision`, which falls back to the model's `revision` when the code is in
the model's own repository (`if code_revision is None and pretrained_model_name_or_path ==
repo_id: code_revision = revision`, transformers/dynamic_module_utils.py); vLLM's tokenizer
revision falls back to the model's too (vllm/config/model.py: `if self.tokenizer_revision is
None: self.tokenizer_revision = self.revision`). Code another repository holds (an auto_map
entry `other/repo--module.Class`) is pinned only by vLLM's `--code-revision`, so that and
`--tokenizer-revision`, when given, are commits too. vLLM reads `--trust_remote_code` as
`--trust-remote-code` (its FlexibleArgumentParser), so underscores count as hyphens.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..context import Context
from ..problems import Problem
from ..schema import WorkloadSpec

TRUST = "--trust-remote-code"
REVISION = "--revision"
PINNED_TOO = ("--code-revision", "--tokenizer-revision")
COMMIT = re.compile(r"[0-9a-f]{40}", re.ASCII)
_OFF = ("false", "0", "no")


def _words(w: WorkloadSpec, i: int) -> list[tuple[str, str]]:
    """(key path of the item, word) for every word of command, then args."""
    return [
        (f"workloads[{i}].{key}[{j}]", word)
        for key, items in (("command", w.command), ("args", w.args))
        for j, item in enumerate(items)
        for word in item.split()
    ]


def _flag(word: str) -> tuple[str, str | None]:
    """(`--flag` with '_' read as '-', its `=value` or None); ('', None) for a non-flag."""
    if not word.startswith("--"):
        return "", None
    name, eq, value = word.partition("=")
    return name.replace("_", "-"), value if eq else None


def problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    words = _words(w, i)
    trusted = [
        path
        for path, word in words
        if _flag(word)[0] == TRUST and (_flag(word)[1] or "").lower() not in _OFF
    ]
    if not trusted:
        return
    revisions = []
    for k, (path, word) in enumerate(words):
        name, value = _flag(word)
        if name not in (REVISION, *PINNED_TOO):
            continue
        if value is None and k + 1 < len(words):
            path, value = words[k + 1]
        revisions.append((name, path, value))
    if not any(name == REVISION for name, _, _ in revisions):
        yield Problem(
            trusted[0],
            f"{TRUST} runs Python from the model's Hugging Face repository inside this server, "
            "which holds the API key and reaches the internet; without --revision it runs "
            "whatever the repository's main branch holds when each pod starts, so a later push "
            "(or whoever takes over the account) runs there next. Pin the commit you reviewed: "
            "add '--revision', '<commit>' (its 40 hex characters, from the repository's History "
            f"on huggingface.co); or remove {TRUST} for a model vLLM serves without it.",
        )
    for name, path, value in revisions:
        if value is not None and COMMIT.fullmatch(value):
            continue
        shown = ctx.show(path, value) if value is not None else "nothing"
        yield Problem(
            path,
            f"{shown} is not a commit: {name} beside {TRUST} names the code that runs, and a "
            "branch or tag ('main', 'v1.0') can be moved to other code. Give the commit's 40 "
            "lowercase hex characters (the repository's History on huggingface.co).",
        )
