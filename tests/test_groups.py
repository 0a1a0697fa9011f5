"""A replica over several nodes (issue 34): `hosts` > 1 makes it a LeaderWorkerSet group, the
stack installs the controller from the vendored release, the model's Service reaches the group
leaders only, vLLM joins its nodes natively, and what cannot run as a group is refused.

The controller (a Go binary on registry.k8s.io) cannot run here; its behaviour is read from its
source at v0.8.0 (components/kinds/leaderworkerset.py and components/platform/lws.py cite it)
and the objects are checked against its CRD's schema.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config import ConfigError, load
from components.platform import lws
from tools import render
from tools.crd_schema import crd_file, file_name
from tools.engine import ROOT, Recording, run_program

EXAMPLE = ROOT / "examples" / "Pulumi.multihost.yaml"
LWS = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
SERVICE = "kubernetes:core/v1:Service"
HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
LEADER = {"leaderworkerset.sigs.k8s.io/worker-index": "0"}


def example_config() -> dict[str, Any]:
    return dict(yaml.safe_load(EXAMPLE.read_text())["config"])


@pytest.fixture(scope="module")
def multihost() -> Recording:
    return run_program(example_config(), stack="multihost")


def _group(recording: Recording) -> dict[str, Any]:
    (found,) = recording.of_type(LWS)
    return found.inputs


def _problems(config: dict[str, Any]) -> list[str]:
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    try:
        load(raw, project="acme-ml-test", region="us-central1", stack="t")
    except ConfigError as error:
        return error.problems
    return []


def _with(**changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(example_config())
    config["gke-gpu:workloads"][0].update(changes)
    return config


def test_the_multihost_example_renders_one_group_of_two_nodes_with_the_controller(
    multihost: Recording,
) -> None:
    group = _group(multihost)
    assert group["metadata"]["name"] == "r1-group"
    template = group["spec"]["leaderWorkerTemplate"]
    assert template["size"] == 2, "hosts: 2 is a group of a leader and one worker"
    for role in ("leaderTemplate", "workerTemplate"):
        (container,) = template[role]["spec"]["containers"]
        assert container["resources"]["limits"]["nvidia.com/gpu"] == "8", (
            f"every pod of the group takes gpu.count GPUs of its own node ({role})"
        )
    registered = [
        r
        for r in multihost.resources
        if "gke-gpu:index:Lws::" in r.parent
        and r.type != "kubernetes:networking.k8s.io/v1:NetworkPolicy"
    ]  # the fence's NetworkPolicies: tests/test_controller_fences.py
    vendored = lws.objects()
    assert len(registered) == len(vendored), "every object of the LWS release is applied"
    (deployment,) = [r for r in registered if r.type.endswith(":Deployment")]
    (image,) = [c["image"] for c in deployment.inputs["spec"]["template"]["spec"]["containers"]]
    assert image == f"registry.k8s.io/lws/lws:v0.8.0@{lws.IMAGES['registry.k8s.io/lws/lws:v0.8.0']}"
    assert not render.schema_problems(
        [{"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", **group}],
        "1.35",
    ), "the LeaderWorkerSet must be one the controller's CRD admits"


def test_the_model_service_and_the_gate_door_reach_the_group_leaders_only(
    multihost: Recording,
) -> None:
    (model,) = [
        r.inputs for r in multihost.of_type(SERVICE) if r.inputs["metadata"]["name"] == "r1-model"
    ]
    assert LEADER.items() <= model["spec"]["selector"].items(), (
        "a worker runs no API server (--headless): requests sent there would fail"
    )
    (door,) = [
        r.inputs
        for r in multihost.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if r.inputs["metadata"]["name"] == "r1-from-gate"
    ]
    assert LEADER.items() <= door["spec"]["podSelector"]["matchLabels"].items()
    (peers,) = [
        r.inputs
        for r in multihost.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if r.inputs["metadata"]["name"] == "r1-group-peers"
    ]
    group = {"podSelector": {"matchLabels": {"leaderworkerset.sigs.k8s.io/name": "r1-group"}}}
    assert peers["spec"]["ingress"] == [{"from": [group]}] and peers["spec"]["egress"] == [
        {"to": [group]}
    ], "the namespace denies pod traffic: a group's nodes must reach each other for NCCL"


def test_vllm_joins_the_group_natively_and_the_workers_run_headless(multihost: Recording) -> None:
    template = _group(multihost)["spec"]["leaderWorkerTemplate"]
    (leader,) = template["leaderTemplate"]["spec"]["containers"]
    (worker,) = template["workerTemplate"]["spec"]["containers"]
    for container in (leader, worker):
        args = container["args"]
        flags = dict(zip(args[::1], args[1:], strict=False))
        assert flags["--nnodes"] == "$(LWS_GROUP_SIZE)"
        assert flags["--node-rank"] == "$(LWS_WORKER_INDEX)"
        assert flags["--master-addr"] == "$(LWS_LEADER_ADDRESS)"
        assert flags["--distributed-executor-backend"] == "mp"
    assert "--headless" in worker["args"] and "--headless" not in leader["args"]
    assert "readinessProbe" in leader and "readinessProbe" not in worker, (
        "a headless worker serves no /health: a probe there would never pass"
    )


def test_an_autoscaled_group_scales_the_leader_worker_set_through_its_scale_subresource() -> None:
    config = _with(autoscale={"minReplicas": 1, "maxReplicas": 2})
    config["gke-gpu:workloads"][0].pop("replicas", None)
    config["gke-gpu:nodePools"][0]["maxNodes"] = 4
    recording = run_program(config, stack="multihost")
    (hpa,) = recording.of_type(HPA)
    assert hpa.inputs["spec"]["scaleTargetRef"] == {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "name": "r1-group",
    }
    assert "replicas" not in _group(recording)["spec"], "the HPA owns the group count"


@pytest.mark.parametrize("kind", ["StatefulSet", "Job"])
def test_a_statefulset_or_job_over_several_hosts_is_refused_with_the_reason(kind: str) -> None:
    problems = _problems(_with(kind=kind, expose=None))
    assert any(
        p.startswith("workloads[0].hosts:") and f"a {kind} cannot span" in p for p in problems
    ), problems


def test_a_group_on_autopilot_is_refused() -> None:
    config = _with()
    config["gke-gpu:cluster"] = {"mode": "autopilot", "deletionProtection": False}
    del config["gke-gpu:nodePools"]
    assert any("needs GKE Standard" in p for p in _problems(config)), _problems(config)


def test_a_sleeping_group_is_refused() -> None:
    config = _with(autoscale={"minReplicas": 0, "maxReplicas": 1})
    assert any("cannot sleep when idle" in p for p in _problems(config)), _problems(config)


def test_parallel_sizes_that_do_not_cover_the_group_are_refused() -> None:
    args = ["deepseek-ai/DeepSeek-R1", "--tensor-parallel-size", "8"]
    problems = _problems(_with(args=args))
    assert any("hosts x gpu.count = 2 x 8 = 16" in p for p in problems), problems


def test_too_many_gpus_for_one_node_points_to_hosts_not_to_gpu_count() -> None:
    args = ["deepseek-ai/DeepSeek-R1", "--tensor-parallel-size", "8", "-pp", "2"]
    problems = _problems(_with(args=args, hosts=1))
    (problem,) = [p for p in problems if "World size" in p]
    assert "hosts: 2" in problem and "Set gpu.count to 16" not in problem, (
        "no GKE node has 16 GPUs: telling the user to set gpu.count 16 sends them in a circle"
    )


def test_a_pool_too_small_for_the_gpu_count_points_to_hosts() -> None:
    config = _with(gpu={"type": "nvidia-h100-80gb", "count": 16}, hosts=1)
    problems = [p for p in _problems(config) if "no node pool fits" in p]
    assert problems and "hosts: 2" in problems[0], problems


def test_the_crd_schema_the_plan_validates_against_is_the_vendored_crd() -> None:
    (crd,) = [
        o
        for o in lws.objects()
        if o["kind"] == "CustomResourceDefinition"
        and o["spec"]["names"]["kind"] == "LeaderWorkerSet"
    ]
    committed = json.loads((ROOT / "tools" / "crds" / file_name(crd, "v1")).read_text())
    assert committed["schema"] == crd_file(crd, "v1", "")["schema"]


def test_the_plan_refuses_a_leader_worker_set_the_crd_would_refuse(multihost: Recording) -> None:
    obj = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet"}
    spec = copy.deepcopy(_group(multihost)["spec"])
    spec["leaderWorkerTemplate"]["restartPolicy"] = "Always"  # not one of LWS's policies
    spec["startupPolicy"] = "LeaderFirst"
    path = render.crd_schema_path(obj)
    assert path is not None
    problems = render._crd_problems("bad", {**obj, "metadata": {}, "spec": spec}, path)
    assert any("restartPolicy" in p for p in problems) and any(
        "startupPolicy" in p for p in problems
    )


def test_the_vendored_release_is_the_one_the_readme_names() -> None:
    readme = (lws.VENDOR / "README.md").read_text()
    assert hashlib.sha256(lws.MANIFESTS.read_bytes()).hexdigest() in readme
    assert "fc19b9ae9b0113d228ba15f4b62b06bea434b510" in readme


def test_a_single_host_workload_registers_no_group_and_no_controller(tmp_path: Path) -> None:
    one_gpu = {"type": "nvidia-h100-80gb", "count": 1}  # a 0.5B model: one GPU, none idle
    recording = run_program(
        _with(hosts=1, gpu=one_gpu, args=["Qwen/Qwen2.5-0.5B-Instruct"]), stack="one"
    )
    assert not recording.of_type(LWS)
    assert not [r for r in recording.resources if "gke-gpu:index:Lws" in r.type]


def test_a_model_bigger_than_one_node_is_refused_with_a_group_that_holds_it() -> None:
    args = ["deepseek-ai/DeepSeek-R1", "--tensor-parallel-size", "8"]
    problems = _problems(_with(args=args, hosts=1))
    (problem,) = [p for p in problems if "of weights" in p]
    assert "671 GB of weights" in problem and "8 x nvidia-h100-80gb give 576 GB" in problem
    assert "gpu.count 8 with hosts: 2" in problem, (
        "no H100 node holds R1: the way out is a group of nodes, not a gpu.count no machine has"
    )
    assert not [p for p in _problems(example_config()) if "of weights" in p], (
        "the same model on the example's group of 2 x 8 H100 fits"
    )


def test_the_plan_says_what_a_group_holds_costs_and_waits_for() -> None:
    from tools.summary import workload_lines

    plan = render.render("multihost", EXAMPLE)
    assert plan.config is not None and not plan.problems, plan.problems
    (w,) = plan.config.workloads
    text = "\n".join(workload_lines(plan.config, w))
    for words in (
        "r1 (LeaderWorkerSet,",
        "16 GPUs per group",
        "at max: 1 group(s) = 2 of pool h100's 2 nodes",
        "a rollout's extra group does not fit",
        "$176.98/h per group",
        "NCCL traffic between a group's nodes: the cluster's VPC network",
        "cold start of a group: all 2 nodes boot",
        "download the whole checkpoint each (about 671 GB in fp8)",
        "LeaderWorkerSet v0.8.0 in lws-system",
        "a group's nodes: all in us-central1-a with compact placement",
    ):
        assert words in text, f"the plan must say {words!r}:\n{text}"


def test_group_flags_set_by_hand_are_refused() -> None:
    args = ["deepseek-ai/DeepSeek-R1", "-tp", "8", "-pp", "2", "--distributed-executor-backend=ray"]
    problems = _problems(_with(args=[*args, "--nnodes", "2"]))
    assert any(
        p.startswith("workloads[0].args: --distributed-executor-backend, --nnodes: the program")
        for p in problems
    ), problems
