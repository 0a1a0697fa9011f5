"""Fuzz the config layer: generated stack files through `tools.render`, judged by its invariants.

    python -m dev.fuzz --count 1000 --seed 0 [--out build/fuzz] [--jobs 2] [--by-mutation]

Each case is a valid stack (Pulumi.dev.yaml, Pulumi.prod.yaml, examples/*.yaml, tests/conftest.py's
STANDARD) plus one or more mutations from the classes of issue 8 and injection (issue 30: a value
that would be syntax in haproxy.cfg or the container's args), written as YAML *text* (so it
can hold what a dict cannot: duplicate keys, syntax errors, tabs, unquoted dates and `on`/`yes`,
non-string keys, non-mapping documents). Each case is rendered in-process and must end as a plan
(exit 0), plan findings (1) or a config error (2), with:

- no crash (an escaped exception, or any other exit code);
- no leak: no planted ciphertext, and no credential pasted as plain text, in stdout, stderr or
  any file the render wrote;
- no pathless problem: on exit 2 every `  - ` line starts with a key path, e.g.
  `workloads[0].env.HF_TOKEN: `, `gcp:project: `, `gke-gpu:foo: ` or `config: ` (user-chosen keys
  may be quoted: `workloads[0].nodeSelector."cloud.google.com/gke-accelerator": `);
- no bad input accepted: a case with an invalid mutation never exits 0 or 1;
- no unreported mistake: on exit 2 each injected mistake's key path (or one below it) is named;
- no good input rejected and no wrong plan: a case whose mutations are all valid (a nested
  secret, an unquoted date) renders, keeps the user's workloads, and delivers a nested secret env
  value through a Secret and secretKeyRef.

The same generator feeds tests/test_properties.py (hypothesis); `Case.engine_config()` gives the
config as the engine hands it to the program (nested secrets decrypted, whole top-level key
secret), for `tools.engine.run_program`.

Modules: `bases` (the valid stacks), `document` (the tree model and its engine form), `emit` (YAML
text), `planted` (secrets), `mutations/` (one module a class), `case`, `generate`, `run` (render
and engine), `paths` (key paths in problems), `judge` (the invariants), `report` (table and
report.json), `__main__` (the command line).
"""

from __future__ import annotations

from dev.fuzz.bases import base_case, base_stacks, bases, with_secure
from dev.fuzz.case import CLASSES, KNOWN_KEYS, Case, Mutation
from dev.fuzz.document import DupDict, Raw, Secure, walk
from dev.fuzz.emit import emit
from dev.fuzz.generate import case_for, generate
from dev.fuzz.judge import (
    COLUMNS,
    GKE_NAME,
    WORKLOAD_TYPES,
    Verdict,
    check_plan,
    has_key_path,
    judge,
)
from dev.fuzz.mutations import MUTATIONS, Doc, Spec, mutation
from dev.fuzz.paths import normalize, problem_path, reported
from dev.fuzz.planted import ciphertext, kubeconfig, needles, token
from dev.fuzz.run import CaseTimeout, Outcome, run_engine, run_render

__all__ = [
    "CLASSES",
    "COLUMNS",
    "GKE_NAME",
    "KNOWN_KEYS",
    "MUTATIONS",
    "WORKLOAD_TYPES",
    "Case",
    "CaseTimeout",
    "Doc",
    "DupDict",
    "Mutation",
    "Outcome",
    "Raw",
    "Secure",
    "Spec",
    "Verdict",
    "base_case",
    "base_stacks",
    "bases",
    "case_for",
    "check_plan",
    "ciphertext",
    "emit",
    "generate",
    "has_key_path",
    "judge",
    "kubeconfig",
    "mutation",
    "needles",
    "normalize",
    "problem_path",
    "reported",
    "run_engine",
    "run_render",
    "token",
    "walk",
    "with_secure",
]
