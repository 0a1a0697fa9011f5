"""HOME of a workload with a persistent volume (issue 45): a notebook StatefulSet's ~ lives on its
claim, so ~/.local, ~/.jupyter and ~/.cache survive a restart, and the plan says so."""

from __future__ import annotations

import copy
from typing import Any

from components.config import StackConfig, load
from tests.conftest import Run
from tools import summary

STATEFULSET = "kubernetes:apps/v1:StatefulSet"

NOTEBOOK: dict[str, Any] = {
    "gke-gpu:cluster": {"mode": "existing", "context": "lab"},
    "gke-gpu:workloads": [
        {
            "name": "notebook",
            "kind": "StatefulSet",
            "image": "tensorflow/tensorflow:2.17.0-gpu-jupyter",
            "gpu": {"count": 1},
            "port": 8888,
            "probe": {"path": "/"},
            "resources": {"cpu": "2", "memory": "8Gi"},
            "storage": {"size": "50Gi", "mountPath": "/tf"},
            "nodeSelector": {"gpu": "true"},
        }
    ],
}


def _notebook(**workload: Any) -> dict[str, Any]:
    config = copy.deepcopy(NOTEBOOK)
    config["gke-gpu:workloads"][0].update(workload)
    return config


def _pod(run: Run, config: dict[str, Any]) -> dict[str, Any]:
    return run(config).one(STATEFULSET).inputs["spec"]["template"]["spec"]


def _pod_of_deployment(run: Run, config: dict[str, Any]) -> dict[str, Any]:
    return run(config).served("kubernetes:apps/v1:Deployment").inputs["spec"]["template"]["spec"]


def _env(pod: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}


def _loaded(config: dict[str, Any]) -> StackConfig:
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    return load(raw, project=None, region=None, stack="lab")


def test_a_notebooks_home_and_caches_are_on_its_persistent_volume(run: Run) -> None:
    pod = _pod(run, _notebook())
    env = _env(pod)
    assert env["HOME"] == "/tf", (
        "HOME on an emptyDir is wiped on every restart: the notebook's ~/.local (pip --user), "
        "~/.jupyter settings and shell history must live on its claim"
    )
    assert env["XDG_CACHE_HOME"] == "/tf/.cache", "~/.cache goes with HOME onto the claim"
    volumes = {v["name"] for v in pod["volumes"]}
    assert "home" not in volumes, f"no emptyDir stands in for HOME any more: {volumes}"


def test_a_cache_disk_still_takes_the_caches_when_home_is_on_the_claim(run: Run) -> None:
    env = _env(_pod(run, _notebook(cache={"size": "30Gi", "path": "/cache"})))
    assert (env["HOME"], env["XDG_CACHE_HOME"]) == ("/tf", "/cache"), (
        "big caches (weights) stay on the per-pod cache disk; settings in ~ on the claim"
    )


def test_a_home_the_workload_sets_keeps_its_caches_under_it(run: Run) -> None:
    config = _notebook(env={"HOME": "/tf/me"})
    del config["gke-gpu:workloads"][0]["storage"]
    config["gke-gpu:workloads"][0]["kind"] = "Deployment"
    env = _env(_pod_of_deployment(run, config))
    assert env["HOME"] == "/tf/me" and "XDG_CACHE_HOME" not in env, (
        "with HOME set by the workload the program mounts nothing at /home/gke-gpu: pointing "
        f"XDG_CACHE_HOME there sent every cache to a read-only root filesystem: {env}"
    )


def test_the_plan_says_home_survives_a_restart() -> None:
    loaded = _loaded(_notebook())
    words = " ".join(summary.workload_lines(loaded, loaded.workloads[0]))
    assert "HOME is /tf, its persistent volume" in words and "survives a restart" in words, (
        f"the plan must say where ~ lives: {words}"
    )
    assert "caches on its persistent volume at /tf/.cache" in words, words
