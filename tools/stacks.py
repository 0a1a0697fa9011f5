"""The stacks CI deploys: every Pulumi.<stack>.yaml, split into protected and unprotected.

`python -m tools.stacks` prints GitHub Actions outputs (append them to $GITHUB_OUTPUT):

    all=["dev","prod"]
    unprotected=["dev"]
    protected=["prod"]

The deploy workflow runs `pulumi up` on the unprotected stacks first and on the protected ones
only after those succeeded (and after the protected stacks' environment reviewers approved).
A stack is protected when its cluster keeps deletion protection (`cluster.deletionProtection`,
default true, on a GKE cluster) or it is marked `cluster.production`. Adding a stack is adding
its Pulumi.<stack>.yaml (and its GitHub environments, docs/delivery.md): nothing else names it.

`ci_deployment(path)` says whether and how CI deploys a stack file: every Pulumi.<stack>.yaml at
the root through deploy.yml (on each push to main; protected stacks after their reviewers), and
.github/cloud-test/Pulumi.cloud-test.yaml through cloud-test.yml (weekly, cluster and all created
and destroyed in each run). The offline plan names the broad grants such a stack needs.

`python -m tools.stacks policy-config <stack>` prints the policy pack config of one stack (JSON,
for `pulumi preview|up --policy-pack policy --policy-pack-config <file>`). The stack is
production when its GitHub environment sets GKE_GPU_PRODUCTION=true (a variable a pull request
cannot change) or its stack file sets `cluster.production: true`; any other value of
GKE_GPU_PRODUCTION than true or false stops the run (exit 2), so a typo cannot turn production
off.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.config.source import read_stack_file
from policy.rules import PRODUCTION_ENV, pack_config
from tools.engine import ROOT

# Stack names as the workflows accept them: they end up in environment names, concurrency groups
# and file names, so nothing but lowercase letters, digits and hyphens.
STACK_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


# The real-cloud test's stack file: cloud-test.yml copies it to the root for each run. It lives
# outside the root so that discover() (and so deploy.yml) never picks it up.
SANDBOX_STACK_FILE = Path(".github") / "cloud-test" / "Pulumi.cloud-test.yaml"


@dataclass(frozen=True)
class Stack:
    name: str
    protected: bool


@dataclass(frozen=True)
class Deployment:
    """How CI runs `pulumi up` on a stack file (docs/delivery.md, the workflows)."""

    workflow: str
    trigger: str
    reviewed: bool
    """Its GitHub environment waits for required reviewers (a protected stack's, step 7)."""
    fresh_cluster: bool
    """Every run creates the cluster anew and destroys it: nothing bound in it by hand lasts."""


def _cluster(config: dict[str, Any]) -> dict[str, Any]:
    cluster = config.get("gke-gpu:cluster")
    if isinstance(cluster, str):  # set with `pulumi config set` as JSON text
        try:
            cluster = json.loads(cluster)
        except json.JSONDecodeError:
            return {}
    return cluster if isinstance(cluster, dict) else {}


def is_production(config: dict[str, Any]) -> bool:
    """The stack file marks the stack production (`cluster.production: true`)."""
    return _cluster(config).get("production") is True


def is_protected(config: dict[str, Any]) -> bool:
    cluster = _cluster(config)
    if is_production(config):
        return True
    if cluster.get("mode") == "existing":
        return False  # no GKE deletion protection: nothing this stack owns is protected
    return cluster.get("deletionProtection", True) is not False


def discover(root: Path = ROOT) -> list[Stack]:
    """Every Pulumi.<stack>.yaml of the project directory, sorted by name."""
    stacks = []
    for path in sorted(root.glob("Pulumi.*.yaml")):
        name = path.name[len("Pulumi.") : -len(".yaml")]
        if not STACK_NAME.fullmatch(name):
            raise ValueError(
                f"{path.name}: stack names are 1-63 lowercase letters, digits and hyphens "
                "(they name GitHub environments and concurrency groups). Rename the file."
            )
        stacks.append(Stack(name, is_protected(read_stack_file(path).config)))
    if not stacks:
        raise ValueError(f"no Pulumi.<stack>.yaml in {root}")
    return stacks


def ci_deployment(path: Path, root: Path = ROOT) -> Deployment | None:
    """How CI deploys the stack file at `path`, or None when no workflow deploys it."""
    path = path.resolve()
    if path == (root / SANDBOX_STACK_FILE).resolve():
        return Deployment("cloud-test.yml", "every week", reviewed=False, fresh_cluster=True)
    name = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    if path.parent != root.resolve() or not path.name.startswith("Pulumi."):
        return None
    if not path.name.endswith(".yaml") or not STACK_NAME.fullmatch(name):
        return None
    protected = is_protected(read_stack_file(path).config)
    return Deployment("deploy.yml", "on every push to main", protected, fresh_cluster=False)


def outputs(stacks: Sequence[Stack]) -> dict[str, str]:
    def names(selected: Sequence[Stack]) -> str:
        return json.dumps([s.name for s in selected], separators=(",", ":"))

    return {
        "all": names(stacks),
        "unprotected": names([s for s in stacks if not s.protected]),
        "protected": names([s for s in stacks if s.protected]),
    }


class UsageError(ValueError):
    """A mistake in how the tool was called (exit 2), not in a stack file (exit 1)."""


def environment_production(environ: Mapping[str, str]) -> bool:
    """What the GitHub environment says: GKE_GPU_PRODUCTION true or false (any case), or unset.

    Anything else is refused rather than read as false: "yes", "1" or "ture" must not turn a
    production stack's rules off.
    """
    value = environ.get(PRODUCTION_ENV, "").strip()
    if value.lower() in ("", "false"):
        return False
    if value.lower() == "true":
        return True
    raise UsageError(
        f"{PRODUCTION_ENV}={value!r}: expected true or false. Set the variable of the stack's "
        "GitHub environments (<stack> and <stack>-preview) to true for a production stack, or "
        "remove it."
    )


def policy_config(
    stack: str, environ: Mapping[str, str], root: Path = ROOT
) -> dict[str, dict[str, object]]:
    """The policy pack config of `stack`: production if its GitHub environment or its stack file
    says so (either is enough; the environment is the one a pull request cannot drop)."""
    if not STACK_NAME.fullmatch(stack):
        raise UsageError(f"{stack!r} is not a stack name (lowercase letters, digits, hyphens).")
    production = environment_production(environ)
    path = root / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{path.name}: no such stack file in {root}")
    return pack_config(production or is_production(read_stack_file(path).config))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["policy-config"]:
        if len(args) != 2:
            print("usage: python -m tools.stacks policy-config <stack>", file=sys.stderr)
            return 2
        try:
            config = policy_config(args[1], os.environ)
        except UsageError as error:
            print(f"::error::{error}", file=sys.stderr)
            return 2
        except Exception as error:  # a stack file CI cannot read stops the run, with its reason
            print(f"::error::{error}", file=sys.stderr)
            return 1
        print(json.dumps(config))
        return 0
    if args:
        print("usage: python -m tools.stacks [policy-config <stack>]", file=sys.stderr)
        return 2
    try:
        stacks = discover()
    except Exception as error:  # a stack file CI cannot read stops the run, with its reason
        print(f"::error::{error}", file=sys.stderr)
        return 1
    for key, value in outputs(stacks).items():
        print(f"{key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
