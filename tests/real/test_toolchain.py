"""The toolchain tools/real/build made is the one tools/real/versions.env pins: each binary prints
the pinned version, each wrapper module requires it, and the engine finds the Kubernetes provider
under the version the Python SDK requests."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib

import pytest

from tests.real.conftest import ROOT, TOOLS, require

PINS = dict(
    line.split("=", 1)
    for line in (ROOT / "tools" / "real" / "versions.env").read_text().splitlines()
    if line and not line.startswith("#")
)
MODS = ROOT / "tools" / "real" / "mods"

# wrapper module -> (required module, its pin in versions.env)
REQUIRED = {
    "pulumi": ("github.com/pulumi/pulumi/pkg/v3", "PULUMI_VERSION"),
    "gensdk": ("github.com/pulumi/pulumi/pkg/v3", "PULUMI_VERSION"),
    "yaml": ("github.com/pulumi/pulumi-yaml", "PULUMI_YAML_VERSION"),
    "kubernetes-provider": (
        "github.com/pulumi/pulumi-kubernetes/provider/v4",
        "K8S_PROVIDER_MODULE_VERSION",
    ),
    "kubernetes": ("k8s.io/kubernetes", "KUBERNETES_VERSION"),
    "etcd": ("go.etcd.io/etcd/server/v3", "ETCD_VERSION"),
    "kwok": ("sigs.k8s.io/kwok", "KWOK_VERSION"),
    "keda-http": ("github.com/kedacore/http-add-on", "KEDA_HTTP_ADD_ON_VERSION"),
}


@pytest.mark.parametrize("mod", sorted(REQUIRED))
def test_each_wrapper_module_requires_the_pinned_version(mod: str) -> None:
    """versions.env is the one place a version is chosen: a go.mod that drifted from it would
    build something else than the docs and the closing note say."""
    module, pin = REQUIRED[mod]
    go_mod = (MODS / mod / "go.mod").read_text()
    found = re.search(rf"^\s*(?:require\s+)?{re.escape(module)} (v\S+)", go_mod, re.M)
    assert found and found.group(1) == PINS[pin], (
        f"tools/real/mods/{mod}/go.mod requires {module} {found and found.group(1)}, "
        f"versions.env pins {pin}={PINS[pin]}: change both"
    )


def _printed(*command: str) -> str:
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=True).stdout


def test_the_binaries_print_the_pinned_versions() -> None:
    """What `pulumi version` and `kube-apiserver --version` print is what was pinned."""
    bin_dir = require("pulumi", "kube-apiserver", "etcd")
    assert _printed(str(bin_dir / "pulumi"), "version").strip() == PINS["PULUMI_VERSION"]
    assert PINS["KUBERNETES_VERSION"] in _printed(str(bin_dir / "kube-apiserver"), "--version")
    assert PINS["ETCD_VERSION"].lstrip("v") in _printed(str(bin_dir / "etcd"), "--version")


def test_the_engine_finds_the_provider_the_python_sdk_requests() -> None:
    """The Python SDK in uv.lock asks the engine for kubernetes at its own version; the built
    provider is installed under that version, or every `up` would try to download it."""
    bin_dir = require("pulumi", "pulumi-resource-kubernetes")
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    sdk = next(p["version"] for p in lock["package"] if p["name"] == "pulumi-kubernetes")
    assert sdk == PINS["K8S_PROVIDER_INSTALL_AS"], (
        f"uv.lock's pulumi-kubernetes is {sdk}: set K8S_PROVIDER_INSTALL_AS to it"
    )
    listed = subprocess.run(
        [str(bin_dir / "pulumi"), "plugin", "ls", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PULUMI_HOME": str(TOOLS / "pulumi-home"), "PATH": "/usr/bin:/bin"},
        check=True,
    ).stdout
    plugins = {(p["name"], p["kind"], p["version"]) for p in json.loads(listed)}
    assert ("kubernetes", "resource", sdk) in plugins, f"plugin cache holds {sorted(plugins)}"
