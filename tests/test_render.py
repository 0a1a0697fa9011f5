"""The offline plan: what `python -m tools.render <stack>` writes, prints and refuses."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import shared
from tests.conftest import ROOT
from tools import render

SECRET_TOKEN = "v1:ZXhhbXBsZS1jaXBoZXJ0ZXh0LW5vdC1hLXJlYWwtdG9rZW4="


def _write_stack(tmp_path: Path, name: str, config: dict[str, Any]) -> Path:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return path


@pytest.fixture(scope="module")
def dev_plan(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    out = tmp_path_factory.mktemp("dev")
    return shared.main(["dev"], out).code, out


def test_dev_stack_renders_clean(dev_plan: tuple[int, Path]) -> None:
    code, out = dev_plan
    assert code == render.EXIT_OK, "the dev stack must pass schema and policy checks"
    assert sorted(p.name for p in out.iterdir()) == ["graph.md", "manifests.yaml", "plan.json"]


def test_plan_lists_every_resource_with_what_a_reviewer_needs(dev_plan: tuple[int, Path]) -> None:
    plan = json.loads((dev_plan[1] / "plan.json").read_text())
    types = {r["type"] for r in plan["resources"]}
    assert {"gcp:container/cluster:Cluster", "kubernetes:apps/v1:Deployment"} <= types
    deployment = next(r for r in plan["resources"] if r["name"] == "workload-llm-deployment")
    assert set(deployment) >= {
        "type", "name", "urn", "parent", "provider", "dependencies", "protect",
        "ignoreChanges", "customTimeouts", "inputs",
    }  # fmt: skip
    gate = next(r for r in plan["resources"] if r["name"] == "gate-llm-deployment")
    assert set(gate["customTimeouts"]) <= {"create", "update", "delete"}
    assert deployment["inputs"]["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}, (
        "dev's model sleeps: `up` does not wait for the replica KEDA removes at once"
    )
    assert deployment["parent"].endswith("GpuWorkload::workload-llm")


def test_plan_marks_outputs_only_the_cloud_can_know(dev_plan: tuple[int, Path]) -> None:
    outputs = json.loads((dev_plan[1] / "plan.json").read_text())["outputs"]
    assert outputs["externalIp"]["computed"] is True, "the IP is a placeholder until `pulumi up`"
    assert outputs["clusterName"]["computed"] is False
    assert outputs["kubeconfig"] == {"value": "[secret]", "secret": True, "computed": True}


def test_manifests_are_every_kubernetes_object_as_applied(dev_plan: tuple[int, Path]) -> None:
    from components.config import defaults, from_stack_file
    from components.config.source import read_stack_file
    from components.platform import keda, keda_drain

    everything = list(yaml.safe_load_all((dev_plan[1] / "manifests.yaml").read_text()))
    # dev's one sleeping model: the interceptor drains as long as it may hold its requests.
    (llm,) = from_stack_file(read_stack_file(ROOT / "Pulumi.dev.yaml"), "dev").workloads
    assert llm.spec.autoscale is not None
    held = keda_drain.held_seconds(
        llm.spec.autoscale.wake_timeout_seconds, defaults.GENERATION_SECONDS
    )
    vendored = [
        keda_drain.drained(keda.scoped(o, "gke-gpu"), held)
        for o in [*keda.objects(keda.CORE), *keda.objects(keda.HTTP_ADD_ON)]
    ]
    applied = [d for d in everything if d in vendored]
    assert len(applied) == len(vendored) and all(v in applied for v in vendored), (
        "dev's model sleeps when idle: KEDA and its HTTP add-on are applied, every object of "
        "the vendored manifests as the program adjusts them"
    )
    documents = [d for d in everything if d not in vendored]
    assert sorted((d["apiVersion"], d["kind"]) for d in documents) == [
        ("apps/v1", "Deployment"),
        ("apps/v1", "Deployment"),
        ("http.keda.sh/v1alpha1", "HTTPScaledObject"),
        ("monitoring.googleapis.com/v1", "PodMonitoring"),
        ("monitoring.googleapis.com/v1", "PodMonitoring"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
        *[("networking.k8s.io/v1", "NetworkPolicy")] * 6,
        ("policy/v1", "PodDisruptionBudget"),
        ("policy/v1", "PodDisruptionBudget"),
        ("v1", "ConfigMap"),
        ("v1", "Namespace"),
        ("v1", "Secret"),
        ("v1", "Secret"),
        ("v1", "Service"),
        ("v1", "Service"),
    ], (
        "the dev stack applies a namespace closed by default (ingress and egress, DNS allowed), "
        "the model server with its API key Secret and its egress to the model hub, its gate "
        "(config, certificate, Deployment, budget, egress to KEDA's interceptor only), the "
        "model's in-cluster Service with the NetworkPolicy that admits only the interceptor, "
        "the HTTPScaledObject that scales it from zero, the NetworkPolicy that admits only "
        "gates to KEDA's interceptor, the keda namespace's default deny and the four doors its "
        "pods use (API server to webhooks and metrics server, metrics server to operator, "
        "operator to scaler), the interceptors' disruption budget, the public "
        "Service with the NetworkPolicy that admits the gate's TLS port, and the dashboard's "
        "PodMonitorings of the server and of the gate, each with the NetworkPolicy that admits "
        "only the collectors"
    )
    service = next(
        d for d in documents if d["kind"] == "Service" and d["spec"]["type"] == "LoadBalancer"
    )
    assert service["spec"]["ports"][0]["port"] == 443, "ports must stay integers in the YAML"


def test_graph_draws_components_around_their_resources(dev_plan: tuple[int, Path]) -> None:
    graph = (dev_plan[1] / "graph.md").read_text()
    assert "```mermaid" in graph and "flowchart LR" in graph
    assert "subgraph" in graph and "gke-gpu:index:GkeCluster" in graph
    assert "-.->" in graph, "dependencies are drawn"


def test_summary_shows_pools_workloads_and_outputs(tmp_path: Path) -> None:
    shown = shared.main(["prod"], tmp_path)
    assert shown.code == render.EXIT_OK
    printed = shown.out
    # The pool's GKE name: its config name and a hash of its replacement-forcing settings.
    assert re.search(
        r"pool      l4 \(GKE name l4-[0-9a-f]{8}\): g2-standard-8 with 1 x nvidia-l4, 1-4 nodes, "
        r"on-demand VMs",
        printed,
    ), printed
    assert "each node: 7.91 CPU / 27.7 GiB allocatable, 7.31 CPU / 27.0 GiB for your pods" in (
        printed
    ), "a reviewer sees what GKE leaves for pods on a g2-standard-8 (allocatable.py)"
    assert "requests 6 CPU / 24.0 GiB of the 7.31 CPU / 27.0 GiB a node leaves" in printed
    assert "GPUs at max scale: 2 of 4" in printed, "2 replicas on a pool of up to 4 L4 nodes"
    assert "rollout: one extra pod at a time" in printed
    assert (
        "exposed: HTTPS, public (external load balancer) port 443, reserved static address, "
        "from 203.0.113.0/24" in printed
    )
    assert "requires the key on every request" in printed and "Dataplane V2 enforces it" in printed
    assert (
        "reaches the model server directly: no client; NetworkPolicy admits only the gate and "
        in (printed)
    ), "the collector pods reach the server's port too: the plan must not say nothing does"
    assert 'url = "https://203.0.113.20" *' in printed, (
        "computed outputs carry a star (the reserved address)"
    )


def test_secure_values_become_placeholders_and_never_reach_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = {
        "gcp:project": "acme-ml",
        "gcp:region": "us-central1",
        "gke-gpu:hfToken": {"secure": SECRET_TOKEN},
        "gke-gpu:workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.6.4",
                "cache": {"size": "30Gi"},
                "secretEnv": {"HF_TOKEN": "hfToken"},
            }
        ],
    }
    stack_file = _write_stack(tmp_path, "sec", config)
    code = render.main(["sec", "--stack-file", str(stack_file), "--out", str(tmp_path / "out")])
    assert code == render.EXIT_OK
    written = "".join(p.read_text() for p in (tmp_path / "out").iterdir())
    written += capsys.readouterr().out
    assert SECRET_TOKEN not in written, "the ciphertext is never copied into a plan"
    assert "<secret gke-gpu:hfToken>" not in written, "even the placeholder is masked"
    manifests = list(yaml.safe_load_all((tmp_path / "out" / "manifests.yaml").read_text()))
    secret = next(d for d in manifests if d["kind"] == "Secret")
    assert secret["stringData"] == {"HF_TOKEN": "[secret]"}


def test_invalid_config_exits_2_listing_every_problem_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = {
        "gcp:project": "acme-ml",
        "gcp:region": "us-central1",
        "gke-gpu:cluster": {"mode": "standard"},
        "gke-gpu:nodePools": [{"name": "t4", "gpu": {"type": "nvidia-tesla-k80"}, "minNodes": 2}],
    }
    stack_file = _write_stack(tmp_path, "bad", config)
    assert render.main(["bad", "--stack-file", str(stack_file)]) == render.EXIT_CONFIG
    err = capsys.readouterr().err
    assert "nodePools[0].gpu.type: 'nvidia-tesla-k80' is no longer offered" in err
    assert "nodePools[0].minNodes: 2 is more than maxNodes (1)" in err
    assert "Traceback" not in err


def test_mandatory_policy_violation_exits_1_naming_the_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = {
        **{
            k: v
            for k, v in yaml.safe_load((ROOT / "Pulumi.prod.yaml").read_text())["config"].items()
        },
    }
    # (An open prod LoadBalancer no longer gets this far: the config refuses it first,
    # tests/test_cluster_posture.py.) Deletion protection is the pack's alone to check.
    config["gke-gpu:cluster"]["deletionProtection"] = False
    stack_file = _write_stack(tmp_path, "prod-eu", config)
    code = render.main(["prod-eu", "--stack-file", str(stack_file), "--out", str(tmp_path / "o")])
    assert code == render.EXIT_FAILED, "an unprotected prod cluster must fail the plan"
    assert "[deletion-protection-in-prod]" in capsys.readouterr().err


def test_schema_problems_name_the_object_and_the_field() -> None:
    bad = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "x"},
        "spec": {"selector": {}, "template": {}, "replicass": 2},
    }
    (problem,) = render.schema_problems([bad], render.DEFAULT_KUBERNETES_VERSION)
    assert problem.startswith("Deployment/x: spec:") and "replicass" in problem, (
        "strict validation catches misspelled fields the API server would silently drop"
    )


def test_every_stack_file_renders_clean(tmp_path: Path) -> None:
    for stack_file in sorted(ROOT.glob("Pulumi.*.yaml")):
        stack = stack_file.name.removeprefix("Pulumi.").removesuffix(".yaml")
        assert shared.main([stack], tmp_path / stack).code == render.EXIT_OK, stack


STACK_FILES = sorted([*ROOT.glob("Pulumi.*.yaml"), *ROOT.glob("examples/Pulumi.*.yaml")])


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=lambda p: p.name)
def test_every_recorded_gpu_pod_fits_the_allocatable_of_its_pools_machine(stack_file: Path) -> None:
    from components.config.rules import coldstart
    from components.facts import allocatable, catalog

    stack = stack_file.name.removeprefix("Pulumi.").removesuffix(".yaml")
    plan = shared.render(stack, stack_file)
    pools = {
        r.inputs["name"]: r.inputs
        for r in plan.recording.of_type("gcp:container/nodePool:NodePool")
        if r.inputs["nodeConfig"].get("guestAccelerators")
    }
    for obj in plan.manifests:
        if obj["kind"] not in ("Deployment", "StatefulSet", "Job"):
            continue
        pod = obj["spec"]["template"]["spec"]
        pool = pools.get((pod.get("nodeSelector") or {}).get("cloud.google.com/gke-nodepool"))
        if pool is None:
            continue  # Autopilot or an existing cluster: no node pool of ours
        node = pool["nodeConfig"]
        accelerator = node["guestAccelerators"][0]
        machine = catalog.machine_for(
            accelerator["type"], accelerator["count"], node["machineType"]
        )
        assert machine is not None
        streaming = bool((node.get("gcfsConfig") or {}).get("enabled"))
        room = allocatable.pod_allocatable(
            machine.vcpus, machine.memory_gb, image_streaming=streaming
        )
        # GKE injects the Cloud Storage FUSE sidecar into annotated pods; it requests too.
        annotations = obj["spec"]["template"]["metadata"].get("annotations") or {}
        if annotations.get("gke-gcsfuse/volumes") == "true":
            room -= allocatable.Resources(
                coldstart.FUSE_SIDECAR_MILLICORES, coldstart.FUSE_SIDECAR_MEMORY_BYTES
            )
        requests = pod["containers"][0]["resources"]["requests"]
        assert allocatable.parse_cpu(requests["cpu"]) <= room.cpu_millicores, (
            f"{stack}: a pod above its node's allocatable CPU stays Pending forever"
        )
        assert allocatable.parse_memory(requests["memory"]) <= room.memory_bytes, (
            f"{stack}: a pod above its node's allocatable memory stays Pending forever"
        )
