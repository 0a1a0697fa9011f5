"""The real-engine suite's fixtures: the toolchain tools/real/build makes (.tools/bin), a
Kubernetes control plane on loopback, and the environment that points the real Pulumi CLI at a
local file backend with a passphrase secrets provider (nothing leaves the machine).

Run it with `python -m pytest tests/real -n 0` after `bash tools/real/build`
(docs/development.md, "The real engine"). Without the toolchain its tests skip; with
GKE_GPU_REQUIRE_REAL=1 (.ci/run sets it) a missing binary fails them instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.real import control_plane

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools"
BIN = TOOLS / "bin"


def require(*names: str) -> Path:
    """The toolchain's bin folder, once every named binary is in it; skips the test otherwise,
    or fails it when GKE_GPU_REQUIRE_REAL=1 (CI must not pass by skipping)."""
    missing = [name for name in names if not (BIN / name).is_file()]
    if missing:
        message = (
            f"{', '.join(missing)} not built: run `bash tools/real/build` (docs/development.md)"
        )
        if os.environ.get("GKE_GPU_REQUIRE_REAL") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return BIN


@pytest.fixture(scope="session")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[control_plane.ControlPlane]:
    """One control plane for the session: etcd, kube-apiserver, kube-controller-manager,
    kube-scheduler and KWOK on 127.0.0.1, stopped when the tests end."""
    bin_dir = require(
        "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok"
    )
    with control_plane.running(bin_dir, tmp_path_factory.mktemp("control-plane")) as running:
        yield running


@pytest.fixture(scope="session")
def pulumi_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of every real `pulumi` command: the built CLI and language host first on
    PATH, the plugin cache tools/real/build installed the providers into, a file backend and a
    passphrase in a folder of this session's."""
    bin_dir = require("pulumi", "pulumi-resource-kubernetes")
    state = tmp_path_factory.mktemp("pulumi-state")
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PULUMI_HOME": str(TOOLS / "pulumi-home"),
        "PULUMI_BACKEND_URL": state.as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": "real-engine-suite",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        # The providers come from the plugin cache tools/real/build installed them into, not
        # from PATH (where .tools/bin would also offer them).
        "PULUMI_IGNORE_AMBIENT_PLUGINS": "true",
        "PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK": "true",
        "NO_COLOR": "1",
    }
