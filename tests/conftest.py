"""Shared fixtures: stack files, and the recording engine that runs the real program."""

from __future__ import annotations

import copy
import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import Phase, settings

from tests import shared
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


def vllm_workload_problems(**workload: Any) -> list[str]:
    """What the config layer says of an Autopilot stack with one vLLM workload (with `workload`'s
    keys on top): its problems, or [] when it loads."""
    from components.config import ConfigError, load

    raw = {
        "cluster": {"mode": "autopilot"},
        "workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "args": ["Qwen/Qwen2.5-0.5B-Instruct"],
                "gpu": {"type": "nvidia-l4", "count": 1},
                **workload,
            }
        ],
    }
    try:
        load(raw, project=MINIMAL["gcp:project"], region="us-central1", stack="t")
    except ConfigError as error:
        return error.problems
    return []


def stack_config(stack: str) -> dict[str, Any]:
    """The `config:` block of Pulumi.<stack>.yaml."""
    document = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())
    return dict(document["config"])


@pytest.fixture
def standard() -> dict[str, Any]:
    """A small valid Standard stack config, fresh for each test to edit."""
    return copy.deepcopy(STANDARD)


@pytest.fixture
def run(request: pytest.FixtureRequest) -> Callable[..., Recording]:
    """Run the program for a config under the recording engine: once per distinct config in the
    test process (tests/shared.py, each call gets its own copy), or afresh for a test that
    monkeypatches what the program reads."""
    patches = "monkeypatch" in request.fixturenames

    def _run(
        config: dict[str, Any], stack: str = "test", secret_keys: tuple[str, ...] = ()
    ) -> Recording:
        if patches:
            return run_program(config, stack=stack, secret_keys=secret_keys)
        return shared.run(config, stack=stack, secret_keys=secret_keys)

    return _run


# Property-based tests (tests/test_properties.py): the profile HYPOTHESIS_PROFILE names, else `ci`
# where CI is set (GitHub Actions sets it; .ci/run and pull-request.yml name `ci` too), else `dev`.
# - ci: derandomized, so every CI run checks the same examples and a failure reproduces from the
#   commit alone; CI_EXAMPLES per property keeps tests/test_properties.py near 12 s (15 s with
#   the interpreter's start). It does not shrink: a failing example is printed as generated (its
#   stack file as a note) instead of minimised for minutes.
# - dev (local runs): as many examples, but random ones, so each run tries new cases; a failure is
#   shrunk, and replayed first by the next run (.hypothesis/).
# - long: the weekly run (.github/workflows/long-checks.yml) and deep local runs.
# print_blob: a failure prints the @reproduce_failure decorator that replays it.
CI_EXAMPLES = 30
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=CI_EXAMPLES,
    deadline=None,
    database=None,
    print_blob=True,
    phases=(Phase.explicit, Phase.generate),
)
settings.register_profile("dev", max_examples=CI_EXAMPLES, deadline=None, print_blob=True)
settings.register_profile("long", max_examples=2000, deadline=None, print_blob=True)
_in_ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _in_ci else "dev"))


# The shipped stacks, run once per test session: tests read their recordings, never change them.
@pytest.fixture(scope="session")
def dev() -> Recording:
    return shared.recording("dev")


@pytest.fixture(scope="session")
def prod() -> Recording:
    return shared.recording("prod")


# pytest-xdist (`-n auto --dist loadfile`, pyproject.toml): a test file runs whole on one worker,
# so its module fixtures are made once, and every file that starts the real HAProxy is one unit
# more: one worker runs them one after the other. The gate's config binds fixed ports and HAProxy
# binds them with SO_REUSEPORT (on unless `noreuseport`: docs.haproxy.org/2.6/configuration.html
# #3.2-noreuseport), so two gates at once on one machine would share their ports and
# answer each other's clients. A file starts the real proxy when it names HAPROXY
# (tests/test_gate.py's, which the others import). (`xdist_group` marks are not used: pytest-xdist
# 3.8 writes its group into `item._nodeid`, which pytest 9 no longer reads.)
REAL_PROXY_UNIT = "real-haproxy"


@functools.cache
def _starts_the_real_proxy(test_file: str) -> bool:
    path = ROOT / test_file
    return path.suffix == ".py" and path.is_file() and "HAPROXY" in path.read_text()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/real/ (the real-engine suite: the Pulumi CLI, providers and a Kubernetes control plane
    built by tools/real/build) runs only when named: `python -m pytest tests/real -n 0`. The
    README's test command stays the fast suite."""
    real = ROOT / "tests" / "real"
    if collection_path == real and not any(
        Path(arg.split("::")[0]).resolve().is_relative_to(real) for arg in config.args
    ):
        return True
    return None


def pytest_configure(config: pytest.Config) -> None:
    """The session's controller (or the only process, with `-n 0`) makes the folder its workers
    keep their renders in (tests/shared.py); they inherit its name in the environment."""
    if hasattr(config, "workerinput") or os.environ.get(shared.SHARED_FOLDER):
        return
    folder = tempfile.mkdtemp(prefix="gke-gpu-renders-")
    os.environ[shared.SHARED_FOLDER] = folder

    def forget() -> None:
        os.environ.pop(shared.SHARED_FOLDER, None)
        shutil.rmtree(folder, ignore_errors=True)

    config.add_cleanup(forget)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None  # pytest-xdist's own scheduler for the mode asked for
    from xdist.scheduler import LoadFileScheduling

    class FilesAndTheRealProxy(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            test_file = super()._split_scope(nodeid)
            return REAL_PROXY_UNIT if _starts_the_real_proxy(test_file) else test_file

        def _assign_work_unit(self, node: Any) -> None:
            # The next unit a worker gets is the longest one left (LONGEST_FIRST), else the next
            # in collection order: a long unit handed out last would run alone at the end.
            for unit in LONGEST_FIRST:
                if unit in self.workqueue:
                    self.workqueue.move_to_end(unit, last=False)
                    break
            super()._assign_work_unit(node)

    return FilesAndTheRealProxy(config, log)


# The units that take longest on one worker, longest first (seconds on this 2-core machine,
# `--durations=0` summed per file, issue 32): every real-HAProxy file (about 80 s, mostly the
# proxy's own timers), the wheel's install into a fresh virtualenv (26 s), the secret properties
# (31 s of CPU), the permissions of every stack (12 s), the golden upgrades (10 s). In collection
# order they came last and ran alone while the other workers had finished.
LONGEST_FIRST = (
    REAL_PROXY_UNIT,
    "tests/test_properties_secrets.py",
    "tests/test_package_wheel.py",
    "tests/test_properties.py",
    "tests/test_permissions.py",
    "tests/test_upgrades.py",
    "tests/test_scale_to_zero.py",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker per core, and one more. The worker that runs every real-HAProxy file
    (above) spends most of its time waiting on the proxy's own timers (a held wake, a slow client,
    a keepalive), leaving its core idle; the extra worker uses it. On this 2-core machine, 3
    workers ran the suite in 149 s where 2 took 165 s (issue 32)."""
    del config
    return (os.cpu_count() or 1) + 1
