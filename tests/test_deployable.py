"""Every shipped stack (dev, prod, the examples, issue 10's stacks) would finish `pulumi up` from
CI: identities and permissions, networks, GPU enablement, zones, probes and money, asserted on
what the engine would receive."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config import ClusterConfig, ConfigError, ExistingClusterConfig, load
from components.config.rules.registry import READER_ROLE, repository_of
from components.platform import device_plugin, driver, metrics_adapter
from policy.rules import props
from tests import shared
from tests.conftest import CLUSTER, DAEMONSET, NODE_POOL, ROOT
from tools import render

STACK_FILES = {
    "dev": ROOT / "Pulumi.dev.yaml",
    "prod": ROOT / "Pulumi.prod.yaml",
    **{
        p.name.removeprefix("Pulumi.").removesuffix(".yaml"): p
        for p in sorted(
            [
                *(ROOT / "examples").glob("Pulumi.*.yaml"),
                *(ROOT / "tests" / "stacks").glob("Pulumi.*.yaml"),
            ]
        )
    },
}
REPO_READER = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"
NAT = "gcp:compute/routerNat:RouterNat"


@pytest.fixture(scope="module")
def plans() -> dict[str, render.Plan]:
    return {name: shared.render(name, path) for name, path in STACK_FILES.items()}


def _gke(plans: dict[str, render.Plan]) -> list[tuple[str, render.Plan, ClusterConfig]]:
    found = []
    for name, plan in plans.items():
        assert plan.config is not None
        if isinstance(plan.config.cluster, ClusterConfig):
            found.append((name, plan, plan.config.cluster))
    return found


def test_every_shipped_stack_is_covered(plans: dict[str, render.Plan]) -> None:
    assert {"dev", "prod", "fast-start", "kubeadm", "t4-standard"} <= set(plans), (
        "the deployability checks below run over every stack a user may copy"
    )


def test_every_node_a_cluster_creates_runs_as_the_node_account(
    plans: dict[str, render.Plan],
) -> None:
    for name, plan, cfg in _gke(plans):
        cluster = plan.recording.one(CLUSTER).inputs
        if cfg.mode == "autopilot":
            accounts = [cluster["clusterAutoscaling"]["autoProvisioningDefaults"]["serviceAccount"]]
        else:
            accounts = [cluster["nodeConfig"]["serviceAccount"]]
            accounts += [
                p.inputs["nodeConfig"]["serviceAccount"] for p in plan.recording.of_type(NODE_POOL)
            ]
            auto = (cluster.get("clusterAutoscaling") or {}).get("autoProvisioningDefaults")
            if auto:
                accounts.append(auto["serviceAccount"])
        assert all(accounts) and len(set(accounts)) == 1, (
            f"{name}: every pool GKE creates (the temporary default pool too) must run as the "
            f"stack's node account, never the Compute Engine default account: {accounts}"
        )


def test_the_nodes_can_read_every_artifact_registry_image_of_the_project(
    plans: dict[str, render.Plan],
) -> None:
    seen = 0
    for name, plan, _ in _gke(plans):
        assert plan.config is not None
        grants = {
            (g.inputs["project"], g.inputs["location"], g.inputs["repository"]): g.inputs
            for g in plan.recording.of_type(REPO_READER)
        }
        for w in plan.config.workloads:
            repo = repository_of(w.spec.image)
            if repo is None or repo.project != plan.config.project:
                continue
            seen += 1
            grant = grants.get((repo.project, repo.location, repo.repository))
            assert grant is not None and grant["role"] == READER_ROLE, (
                f"{name}: {w.spec.image} is private to the project and the node account is not the "
                "default compute account: without reader on its repository the pods stay in "
                "ImagePullBackOff and `pulumi up` waits 40 minutes"
            )
            assert grant["member"].startswith("serviceAccount:"), grant
    assert seen, "fast-start runs vLLM from the project's Artifact Registry"


def test_the_provider_waits_for_the_registry_grants(plans: dict[str, render.Plan]) -> None:
    recording = plans["fast-start"].recording
    (grant,) = recording.of_type(REPO_READER)
    provider = next(r for r in recording.resources if r.type == "pulumi:providers:kubernetes")
    assert grant.urn in provider.dependencies, (
        "no pod may start pulling before the node account may read the image"
    )


def test_cloud_nat_touches_only_the_cluster_subnetwork(plans: dict[str, render.Plan]) -> None:
    nats = [(name, r) for name, plan in plans.items() for r in plan.recording.of_type(NAT)]
    assert nats, "prod and internal-vpc have private nodes, hence a NAT"
    for name, nat in nats:
        assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS", name
        (subnet,) = nat.inputs["subnetworks"]
        assert "/subnetworks/" in subnet["name"], (name, subnet)
        assert subnet["sourceIpRangesToNats"] == ["ALL_IP_RANGES"], (
            f"{name}: pods use the subnet's secondary range; they need NAT too"
        )


def _matches(affinity: dict[str, Any], labels: dict[str, str]) -> bool:
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    return any(
        all(
            e["operator"] == "In" and labels.get(e["key"]) in e["values"]
            for e in term["matchExpressions"]
        )
        for term in terms
    )


def test_the_device_plugin_runs_only_on_gpu_nodes(plans: dict[str, render.Plan]) -> None:
    checked = 0
    for name, plan in plans.items():
        if not isinstance(plan.config and plan.config.cluster, ExistingClusterConfig):
            continue
        for ds in plan.recording.of_type(DAEMONSET):
            spec = ds.inputs["spec"]["template"]["spec"]
            affinity = spec.get("affinity")
            assert affinity, (
                f"{name}: without node affinity the plugin starts on CPU nodes, exits there "
                "(FAIL_ON_INIT_ERROR), and the DaemonSet the workloads wait for never gets ready"
            )
            cpu_node = {"kubernetes.io/os": "linux", "kubernetes.io/hostname": "cpu-1"}
            assert not _matches(affinity, cpu_node), f"{name}: a CPU node must not match"
            assert _matches(affinity, {"nvidia.com/gpu.present": "true"}), (
                f"{name}: a node NVIDIA's chart calls a GPU node gets the plugin"
            )
            checked += 1
    assert checked, "kubeadm deploys NVIDIA's static plugin"


def test_the_device_plugin_follows_the_workloads_node_selectors(
    plans: dict[str, render.Plan],
) -> None:
    (ds,) = plans["kubeadm"].recording.of_type(DAEMONSET)
    affinity = ds.inputs["spec"]["template"]["spec"]["affinity"]
    assert _matches(affinity, {"gpu": "true"}), (
        "the kubeadm example's GPU nodes carry only gpu=true: the plugin must run where the "
        "vector-add Job is sent, or nvidia.com/gpu is never advertised there"
    )


def _gke_problems(cluster: dict[str, Any]) -> list[str]:
    raw = {
        "cluster": {"mode": "standard", **cluster},
        "nodePools": [{"gpu": {"type": "nvidia-l4"}}],
    }
    raw["workloads"] = [
        {"name": "llm", "image": "nvidia/cuda:12.4.1-base-ubuntu22.04", "port": None}
    ]
    with pytest.raises(ConfigError) as info:
        load(raw, project="acme-ml", region="us-central1", stack="dev")
    return info.value.problems


def test_a_nat_on_a_custom_network_needs_the_cluster_subnetwork() -> None:
    (problem,) = _gke_problems({"privateNodes": True, "network": "acme-vpc"})
    assert problem.startswith("cluster.subnetwork:") and "cloudNat: false" in problem, problem


def test_a_nat_for_public_nodes_is_refused() -> None:
    (problem,) = _gke_problems({"cloudNat": True})
    assert problem.startswith("cluster.cloudNat:") and "privateNodes" in problem, problem


def test_cloud_nat_false_leaves_the_network_to_your_own_nat(run: Any, standard: Any) -> None:
    standard["gke-gpu:cluster"] |= {"privateNodes": True, "cloudNat": False}
    recording = run(standard)
    assert not recording.of_type(NAT), "a NAT of yours serves the subnet: the stack adds none"


def test_device_plugin_node_selector_replaces_the_default_terms() -> None:
    raw = {
        "cluster": {"mode": "existing", "context": "lab"},
        "devicePlugin": {"type": "static", "nodeSelector": {"accelerator": "a100"}},
        "workloads": [
            {
                "name": "job",
                "kind": "Job",
                "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
                "port": None,
            }
        ],
    }
    cluster = load(raw, project=None, region=None, stack="lab").cluster
    assert isinstance(cluster, ExistingClusterConfig)
    assert cluster.device_plugin.node_selector_terms == ((("accelerator", "a100"),),), (
        "the admin's own GPU node label decides where the plugin runs"
    )


PROBED_KINDS = ("kubernetes:apps/v1:Deployment", "kubernetes:apps/v1:StatefulSet")


def test_every_pod_has_a_probe_it_can_pass(plans: dict[str, render.Plan]) -> None:
    checked = 0
    for name, plan in plans.items():
        assert plan.config is not None
        workloads = {w.spec.name: w for w in plan.config.workloads}
        for kind in PROBED_KINDS:
            for obj in plan.recording.of_type(kind, outside_gates=True):
                w = workloads.get(obj.inputs["metadata"]["name"])
                if w is None:
                    continue  # a system component (metrics adapter) with its vendor's probes
                c = obj.inputs["spec"]["template"]["spec"]["containers"][0]
                ports = {p["containerPort"] for p in c.get("ports", [])}
                for probe_kind in ("startupProbe", "readinessProbe", "livenessProbe"):
                    probe = c.get(probe_kind)
                    assert (probe is None) == (not ports), (
                        f"{name}/{w.spec.name}: a server with a port gets probes; one without "
                        "none (a probe on a port nobody opens keeps it unready for ever)"
                    )
                    if probe is None:
                        continue
                    check = probe.get("httpGet") or probe.get("tcpSocket")
                    assert check and check["port"] in ports, (
                        f"{name}/{w.spec.name}: {probe_kind} knocks on {check} where the container "
                        f"listens on {ports}: never ready, and `up` times out"
                    )
                    if "vllm-openai" in c["image"]:
                        assert probe.get("httpGet", {}).get("path") == "/health", (
                            f"{name}/{w.spec.name}: vLLM answers 404 on /; its health is /health"
                        )
                    checked += 1
    assert checked, "dev and prod run vLLM servers"


def test_a_server_of_unknown_paths_gets_a_tcp_probe(run: Any, standard: Any) -> None:
    standard["gke-gpu:workloads"][0] |= {"image": "ghcr.io/acme/server:1.0", "probe": {}}
    recording = run(standard)
    container = recording.served("kubernetes:apps/v1:Deployment").inputs["spec"]["template"][
        "spec"
    ]["containers"][0]
    assert container["readinessProbe"].get("tcpSocket") == {"port": 8000}, (
        "a GET on / may answer 404 for ever; a TCP connect only asks that the server listens"
    )


def test_a_workload_without_a_port_gets_no_http_probe() -> None:
    raw = {
        "workloads": [
            {
                "name": "sleeper",
                "image": "busybox:1.36",
                "command": ["sleep", "inf"],
                "cache": {"size": "1Gi"},
            }
        ]
    }
    (w,) = load(raw, project="acme-ml", region="us-central1", stack="dev").workloads
    assert w.spec.port is None and w.probe is None, (
        "`sleep` answers nothing: an HTTP probe on 8000 would keep it unready for ever"
    )


def _refused(workload: dict[str, Any], **extra: Any) -> list[str]:
    raw = {"workloads": [{"name": "llm", "cache": {"size": "30Gi"}, **workload}], **extra}
    with pytest.raises(ConfigError) as info:
        load(raw, project="acme-ml", region="us-central1", stack="dev")
    return info.value.problems


def test_tensor_parallel_over_the_pods_gpus_is_refused() -> None:
    (problem,) = _refused(
        {
            "image": "vllm/vllm-openai:v0.29.0",
            "gpu": {"type": "nvidia-l4", "count": 1},
            "args": ["m", "--tensor-parallel-size", "4"],
        }
    )
    assert problem.startswith("workloads[0].args:") and "gpu.count is 1" in problem, problem
    assert "World size (4)" in problem, "the error vLLM itself would print at start"


def test_short_parallel_flags_multiply() -> None:
    (problem,) = _refused(
        {
            "image": "vllm/vllm-openai:v0.29.0",
            "gpu": {"type": "nvidia-l4", "count": 4},
            "args": ["m", "-tp", "4", "-pp=2"],
        }
    )
    assert "need 8 GPUs" in problem, problem


def test_autopilot_cpu_over_what_a_t4_node_holds_is_refused() -> None:
    (problem,) = _refused(
        {
            "image": "vllm/vllm-openai:v0.29.0",
            "gpu": {"type": "nvidia-tesla-t4", "count": 1},
            "resources": {"cpu": "60"},
        }
    )
    assert problem.startswith("workloads[0].resources:") and "Autopilot rejects" in problem, problem
    assert "at most about" in problem, "the error gives the allowed maximum"


def test_vllm_port_comes_from_its_own_port_flag() -> None:
    raw = {
        "workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "args": ["m", "--port", "9000"],
                "cache": {"size": "30Gi"},
            }
        ]
    }
    (w,) = load(raw, project="acme-ml", region="us-central1", stack="dev").workloads
    assert w.spec.port == 9000 and w.probe is not None and w.probe.port == 9000, (
        "the Service and the probes must reach the port vLLM was told to listen on"
    )


def test_existing_cluster_workloads_assume_no_gke_machine(plans: dict[str, render.Plan]) -> None:
    plan = plans["kubeadm"]
    assert plan.config is not None
    raw = {
        "cluster": {"mode": "existing", "context": "lab"},
        "workloads": [
            {"name": "job", "kind": "Job", "image": "nvidia/cuda:12.4.1-base-ubuntu22.04"}
        ],
    }
    (w,) = load(raw, project=None, region=None, stack="lab").workloads
    assert (w.cpu, w.memory, w.spec.port) == (None, None, None), (
        "nodes of unknown size: no 4 CPU / 16Gi request that may fit none of them, no port 8000"
    )


def test_ephemeral_storage_is_requested() -> None:
    raw = {
        "workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "cache": {"size": "30Gi"},
                "resources": {"ephemeralStorage": "20Gi"},
            }
        ]
    }
    (w,) = load(raw, project="acme-ml", region="us-central1", stack="dev").workloads
    assert w.spec.resources.ephemeral_storage == "20Gi"


def test_the_plan_summary_shows_each_probe(plans: dict[str, render.Plan]) -> None:
    text = render.summary(plans["dev"])
    assert "probe     HTTP GET /health on port 8000" in text, text


def test_a_positional_model_is_read_from_the_model_cache() -> None:
    from components.config.rules.coldstart import vllm_args_for_cache

    args = vllm_args_for_cache(("Qwen/Qwen2.5-0.5B-Instruct", "--max-model-len", "4096"), "/models")
    assert args == (
        "/models",
        "--max-model-len",
        "4096",
        "--served-model-name",
        "Qwen/Qwen2.5-0.5B-Instruct",
    ), "vLLM loads the mounted weights and clients keep asking for the same model name"


def test_the_readme_quotes_the_plans_costs(plans: dict[str, render.Plan]) -> None:
    import re

    from tools import cost

    readme = (ROOT / "README.md").read_text()
    quoted = {
        "dev": re.search(r"`dev` costs \$([\d.]+)/h idle .*?and \$([\d.]+)/h awake", readme, re.S),
        "prod": re.search(r"`prod` \$([\d.]+)/h idle .*?and\s+\$([\d.]+)/h at max", readme, re.S),
    }
    for stack, match in quoted.items():
        assert match is not None, f"the README quotes {stack}'s cost"
        config = plans[stack].config
        assert config is not None
        stack_cost = cost.stack_cost(config)
        assert stack_cost is not None
        idle = round(stack_cost.total("idle", "configured")[0], 2)
        peak = round(stack_cost.total("max", "configured")[0], 2)
        assert float(match.group(1)) == idle, f"{stack}: README idle {match.group(1)}, plan {idle}"
        assert float(match.group(2)) == peak, f"{stack}: README max {match.group(2)}, plan {peak}"
        if stack == "prod":
            assert idle >= 2 * 0.85, "prod's two replicas hold two L4 nodes at idle"


def test_a_pool_starts_no_more_nodes_than_its_minimum(plans: dict[str, render.Plan]) -> None:
    for name, plan in plans.items():
        for pool in plan.recording.of_type(NODE_POOL):
            zones = len(pool.inputs.get("nodeLocations") or []) or 1
            total = pool.inputs.get("initialNodeCount", 0) * zones
            scaling = pool.inputs.get("autoscaling") or {}
            minimum = scaling.get("totalMinNodeCount", pool.inputs.get("nodeCount", 0))
            assert total <= minimum, (
                f"{name}/{pool.name}: initial_node_count is per zone: {total} nodes at creation "
                f"over a minimum of {minimum} would be billed from day one"
            )


def test_a_foreign_key_gets_a_did_you_mean() -> None:
    raw = {
        "cluster": {"mode": "standard"},
        "nodePools": [{"gpu": {"type": "nvidia-l4"}, "preemptible": True}],
        "workloads": [{"name": "x", "image": "a:1", "port": 80}],
    }
    with pytest.raises(ConfigError) as info:
        load(raw, project="acme-ml", region="us-central1", stack="dev")
    (problem,) = info.value.problems
    assert problem.startswith("nodePools[0].preemptible: unknown key. Did you mean 'spot'?"), (
        "GKE's and Terraform's word for Spot VMs is what a user types first"
    )


def test_bare_render_plans_the_dev_stack(tmp_path: Path) -> None:
    assert shared.main([], tmp_path).code == render.EXIT_OK, (
        "`python -m tools.render` with no stack plans dev, as the README's first command does"
    )


# Images the program chooses that are not pinned by digest, each with why.
UNPINNED_BY_CHOICE = {
    driver.COS_INSTALLER_IMAGE: "preloaded on GKE's COS nodes and never pulled (pull policy "
    "Never): no registry to pin it in",
    driver.UBUNTU_INSTALLER_IMAGE: "preloaded on GKE's Ubuntu nodes: no registry to pin it in",
    metrics_adapter.IMAGE: "Google publishes no digest for it in any source read (the "
    "k8s-stackdriver manifest names the tag only): unconfirmed, so left on its tag",
}
IMAGE_KINDS = {
    "kubernetes:apps/v1:Deployment",
    "kubernetes:apps/v1:DaemonSet",
    "kubernetes:apps/v1:StatefulSet",
    "kubernetes:batch/v1:Job",
    "kubernetes:batch/v1:CronJob",
    "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet",
}


def _pod_images(resource_type: str, inputs: dict[str, Any]) -> list[str]:
    """Every container image of the object's pod templates, found where the policy pack finds
    them (a CronJob's jobTemplate, a LeaderWorkerSet's worker and leader templates)."""
    pods = [props.pod_spec(resource_type, view) for view in props.pod_views(resource_type, inputs)]
    return [c["image"] for p in pods if p for c in [*p.get("initContainers", []), *p["containers"]]]


def _user_images(path: Path) -> set[str]:
    """The images the stack file itself names (workloads[].image): the user's choice."""
    config = yaml.safe_load(path.read_text())["config"]
    return {w["image"] for w in config.get("gke-gpu:workloads") or [] if "image" in w}


def test_every_image_the_program_chooses_is_pinned_by_digest(
    plans: dict[str, render.Plan],
) -> None:
    checked = set()
    for name, plan in plans.items():
        for r in plan.recording.resources:
            if r.type not in IMAGE_KINDS:
                continue
            for image in _pod_images(r.type, r.inputs):
                if image in _user_images(STACK_FILES[name]) or image in UNPINNED_BY_CHOICE:
                    continue
                checked.add(image)
                assert re.fullmatch(r"[^@\s]+@sha256:[0-9a-f]{64}", image), (
                    f"{name}: {r.name} runs {image}: a tag can be moved to other code; every "
                    "image the program picks is pinned by digest (image:tag@sha256:...)"
                )
    assert device_plugin.IMAGE in checked, "the kubeadm example runs NVIDIA's device plugin"
    assert len(checked) >= 10, f"the walk found too few images to mean anything: {checked}"
