"""Shared fixtures: stack files, and the recording engine that runs the real program."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import Phase, settings

from tools.engine import Recording, run_program

ROOT = Path(__file__).resolve().parent.parent

Run = Callable[..., Recording]

# Type tokens the tests look resources up by.
CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
PROVIDER = "pulumi:providers:kubernetes"
NAMESPACE = "kubernetes:core/v1:Namespace"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
SERVICE = "kubernetes:core/v1:Service"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
RELEASE = "kubernetes:helm.sh/v3:Release"

MINIMAL: dict[str, Any] = {"gcp:project": "acme-ml-test", "gcp:region": "us-central1"}

STANDARD: dict[str, Any] = {
    **MINIMAL,
    "gke-gpu:cluster": {"mode": "standard", "deletionProtection": False},
    "gke-gpu:nodePools": [
        {"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "spot": True, "maxNodes": 2}
    ],
    "gke-gpu:workloads": [
        {
            "name": "llm",
            "image": "vllm/vllm-openai:v0.6.4",
            "gpu": {"type": "nvidia-l4", "count": 1},
            "spot": True,
            "port": 8000,
            "probe": {"path": "/health"},
            "expose": {"port": 443},
        }
    ],
}


def stack_config(stack: str) -> dict[str, Any]:
    """The `config:` block of Pulumi.<stack>.yaml."""
    document = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())
    return dict(document["config"])


@pytest.fixture
def standard() -> dict[str, Any]:
    """A small valid Standard stack config, fresh for each test to edit."""
    return copy.deepcopy(STANDARD)


@pytest.fixture
def run() -> Callable[..., Recording]:
    """Run the program for a config under the recording engine."""

    def _run(
        config: dict[str, Any], stack: str = "test", secret_keys: tuple[str, ...] = ()
    ) -> Recording:
        return run_program(config, stack=stack, secret_keys=secret_keys)

    return _run


# Property-based tests (tests/test_properties.py): `ci` (derandomized, the default, within the
# CI budget) and `long` for local runs (HYPOTHESIS_PROFILE=long).
# ci does not shrink: a failing example is printed as generated (its stack file as a note), so a
# broken invariant fails within the budget instead of minimising for minutes.
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=60,
    deadline=None,
    database=None,
    phases=(Phase.explicit, Phase.generate),
)
settings.register_profile("long", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
