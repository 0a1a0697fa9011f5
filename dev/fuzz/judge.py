"""The judge: an outcome checked for crashes, leaks, key paths, bad input accepted, mistakes
unreported, good input rejected and wrong plans."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from components import slices
from components.kinds.leaderworkerset import group_name
from dev.fuzz.case import KNOWN_KEYS, Case
from dev.fuzz.paths import problem_path, reported, root
from dev.fuzz.planted import needles
from dev.fuzz.run import Outcome

# Each kind's object type and where its pod spec sits (components/slices.py KINDS): a CronJob's
# pods are in its job template.
POD_SPEC_PATHS = {k.type_token: k.pod_spec_path for k in slices.KINDS.values()}
WORKLOAD_TYPES = set(POD_SPEC_PATHS)
# GKE cluster names: 1-40 lowercase letters, digits and hyphens, starting with a letter and ending
# with a letter or digit (`gcloud container clusters create --help`; components/config/formats.py
# GKE_NAME).
GKE_NAME = re.compile(r"[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?")
COLUMNS = ("crash", "leaks", "pathless", "accepted", "unreported", "rejected", "wrong_plan")
"""Verdict's checks, in the order of report.json's `failures` and of the table's columns."""


def has_key_path(problem: str, case: Case) -> bool:
    """The problem starts with a key path of this stack: namespaced (`gcp:project`), a key of
    the gke-gpu namespace, `config`, or a top-level key the stack file has."""
    path = problem_path(problem)
    if path is None:
        return False
    if case.unreadable and path == f"Pulumi.{case.stack}.yaml":
        return True  # followed by the line and column: a file YAML cannot read has no key paths
    top = root(path)
    known = (*KNOWN_KEYS, *(f"gke-gpu:{k}" for k in KNOWN_KEYS), "config")
    return ":" in top or top in known or top in case.top_keys()


def _workload(resources: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    for r in resources:
        meta = (r.get("inputs") or {}).get("metadata") or {}
        if r.get("type") in WORKLOAD_TYPES and meta.get("name") in (name, group_name(name)):
            template: Any = r["inputs"]
            for key in POD_SPEC_PATHS[r["type"]][:-1]:  # down to the pod template
                template = (template or {}).get(key)
            return {**r["inputs"], "spec": {"template": template or {}}}
    return None


def _env(obj: dict[str, Any], name: str) -> dict[str, Any] | None:
    containers = ((obj.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers")
    for container in containers or []:
        for entry in container.get("env") or []:
            if entry.get("name") == name:
                return entry
    return None


def check_plan(check: tuple[str, ...], resources: list[dict[str, Any]]) -> str | None:
    """Why a valid plan fails `check`, or None."""
    kind = check[0]
    if kind in ("workload-kept", "secret-env", "env-value"):
        obj = _workload(resources, check[1])
        if obj is None:
            return f"workload {check[1]!r} is not in the plan (replaced or dropped)"
        if kind == "secret-env":
            entry = _env(obj, check[2])
            ref = ((entry or {}).get("valueFrom") or {}).get("secretKeyRef")
            if not ref:
                return f"{check[1]}: env {check[2]} does not come from a Secret (secretKeyRef)"
            secrets = [
                r["inputs"]
                for r in resources
                if r.get("type") == "kubernetes:core/v1:Secret"
                and (r["inputs"].get("metadata") or {}).get("name") == ref.get("name")
            ]
            keys = {
                k for s in secrets for k in {**(s.get("stringData") or {}), **(s.get("data") or {})}
            }
            if ref.get("key") not in keys:
                return f"{check[1]}: env {check[2]} refers to a Secret key the plan does not hold"
        if kind == "env-value":
            entry = _env(obj, check[2]) or {}
            if (entry.get("valueFrom") or {}).get("secretKeyRef"):
                # Its key is secret as a whole (a nested secret beside it): a masked value.
                return None
            value = entry.get("value")
            if not (isinstance(value, str) and value.startswith(check[3])):
                return f"{check[1]}: env {check[2]} is {value!r}, expected the string {check[3]!r}"
        return None
    if kind == "cluster-name-valid":
        names = [
            (r.get("inputs") or {}).get("name")
            for r in resources
            if r.get("type") == "gcp:container/cluster:Cluster"
        ]
        bad = [n for n in names if not (isinstance(n, str) and GKE_NAME.fullmatch(n))]
        return f"cluster name(s) {bad!r} are not valid GKE names" if bad or not names else None
    if kind == "kubeconfig-secret":
        providers = [r for r in resources if r.get("type") == "pulumi:providers:kubernetes"]
        if not providers or any(
            (r.get("inputs") or {}).get("kubeconfig") != "[secret]" for r in providers
        ):
            return "the Kubernetes provider does not get the nested kubeconfig as a secret"
        return None
    raise ValueError(f"unknown check {check!r}")


@dataclass
class Verdict:
    """What went wrong in one case's outcome; empty fields where nothing did."""

    crash: str | None = None
    leaks: list[str] = field(default_factory=list)
    pathless: list[str] = field(default_factory=list)
    accepted: bool = False
    unreported: list[str] = field(default_factory=list)
    rejected: bool = False
    wrong_plan: list[str] = field(default_factory=list)

    def failures(self) -> dict[str, Any]:
        """The failed checks by name, in COLUMNS order (report.json's `failures`)."""
        return {k: getattr(self, k) for k in COLUMNS if getattr(self, k)}


def judge(case: Case, outcome: Outcome, *, engine: bool = False) -> Verdict:
    """The invariants checked on one outcome (`engine`: the program saw decrypted secrets)."""
    v = Verdict(crash=outcome.crash)
    for secret in sorted(case.secrets(engine)):
        if any(n in outcome.output for n in needles(secret)):
            v.leaks.append(secret[:8] + "...")
    if outcome.code == 2:
        v.pathless = [p for p in outcome.problems if not has_key_path(p, case)]
        if not outcome.problems:
            v.pathless = ["(exit 2 without any `  - ` problem line)"]
        if case.invalid:
            v.unreported = [
                " or ".join(alts)
                for alts in case.expected_paths()
                if not reported(outcome.problems, alts)
            ]
        else:
            v.rejected = True
    if outcome.code in (0, 1):
        if case.invalid:
            v.accepted = True
        else:
            v.wrong_plan = [
                why for c in case.checks() if (why := check_plan(c, outcome.resources)) is not None
            ]
    return v
