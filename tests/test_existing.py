"""cluster.mode: existing — only the Kubernetes half, on a cluster this stack does not manage."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config import (
    ConfigError,
    DevicePluginConfig,
    ExistingClusterConfig,
    StackConfig,
    load,
)
from components.platform.device_plugin import daemonset_spec
from tests import shared
from tests.conftest import (
    CONFIG_MAP,
    DAEMONSET,
    DEPLOYMENT,
    PROVIDER,
    RELEASE,
    ROOT,
    SERVICE,
    Run,
)
from tools import render
from tools.engine import SECRET_MASK, Recording

JOB = "kubernetes:batch/v1:Job"

TOKEN = "kubeconfig-token-that-must-never-leak"
KUBECONFIG = f"""apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster: {{server: "https://192.0.2.10:6443"}}
contexts:
- name: lab
  context: {{cluster: lab, user: admin}}
current-context: lab
users:
- name: admin
  user: {{token: {TOKEN}}}
"""
SECRET_KEYS = ("gke-gpu:kubeconfig",)

EXISTING: dict[str, Any] = {
    "gke-gpu:cluster": {"mode": "existing", "kubeconfig": "kubeconfig"},
    "gke-gpu:kubeconfig": KUBECONFIG,
    "gke-gpu:workloads": [
        {
            "name": "llm",
            "image": "vllm/vllm-openai:v0.6.4",
            "gpu": {"count": 1},
            "port": 8000,
            "probe": {"path": "/health"},
            "nodeSelector": {"gpu": "true"},
            "expose": {"port": 443, "type": "NodePort"},
        }
    ],
}


@pytest.fixture
def existing() -> dict[str, Any]:
    """A valid existing-cluster stack config (kubeconfig secret, static plugin), to edit."""
    return copy.deepcopy(EXISTING)


def _run(run: Run, config: dict[str, Any]) -> Recording:
    return run(config, secret_keys=SECRET_KEYS if "gke-gpu:kubeconfig" in config else ())


# --- config --------------------------------------------------------------------------------


def _raw(**cluster: Any) -> dict[str, Any]:
    return {"cluster": {"mode": "existing", "kubeconfig": "kubeconfig", **cluster}}


def _load(raw: dict[str, Any], secret_keys: frozenset[str] = frozenset({"kubeconfig"})) -> Any:
    return load(raw, project=None, region=None, stack="lab", secret_keys=secret_keys)


def _problems(raw: dict[str, Any], **kwargs: Any) -> list[str]:
    with pytest.raises(ConfigError) as info:
        _load(raw, **kwargs)
    return info.value.problems


def _cluster(config: StackConfig) -> ExistingClusterConfig:
    assert isinstance(config.cluster, ExistingClusterConfig)
    return config.cluster


def test_existing_mode_needs_no_google_cloud_project_or_region() -> None:
    config = _load(_raw())
    assert config.cluster.mode == "existing", "gcp:project/gcp:region configure GKE only"
    assert _cluster(config).kubeconfig == "kubeconfig"


def test_kubeconfig_and_context_together_are_rejected() -> None:
    (problem,) = _problems(_raw(context="lab"))
    assert problem.startswith("cluster.kubeconfig/context: set one, not both"), problem


def test_a_context_alone_is_enough_and_names_the_cluster() -> None:
    config = _load({"cluster": {"mode": "existing", "context": "lab"}}, frozenset())
    assert _cluster(config).name == "lab", "clusterName shows which context was deployed to"


def test_an_empty_context_is_rejected() -> None:
    (problem,) = _problems({"cluster": {"mode": "existing", "context": " "}})
    assert problem.startswith("cluster.context: empty"), problem


def test_kubeconfig_key_that_is_not_a_secret_says_how_to_set_it() -> None:
    (problem,) = _problems(_raw(), secret_keys=frozenset())
    assert problem == (
        "cluster.kubeconfig: config key 'kubeconfig' is not set; it must be a secret (a "
        "kubeconfig grants access to the cluster, and a plain value would sit in the stack file "
        "and the state). Run `pulumi config set --path --secret 'gke-gpu:cluster.kubeconfig' "
        '"$(cat ~/.kube/config)"`.'
    )


def test_kubeconfig_stored_in_plain_text_is_reported_once_and_not_as_an_unknown_key() -> None:
    raw = {**_raw(), "kubeconfig": KUBECONFIG}
    (problem,) = _problems(raw, secret_keys=frozenset())
    assert "'kubeconfig' is stored in plain text" in problem, problem
    assert TOKEN not in problem, "an error message must not print the credentials"


@pytest.mark.parametrize("pasted", [KUBECONFIG, yaml.safe_load(KUBECONFIG)])
def test_a_kubeconfig_pasted_into_cluster_kubeconfig_is_rejected_without_echoing_it(
    pasted: Any,
) -> None:
    (problem,) = _problems(_raw(kubeconfig=pasted))
    assert problem.startswith("cluster.kubeconfig: "), problem
    assert "secret" in problem and "--path --secret" in problem, "the fix stores it as a secret"
    assert TOKEN not in problem and "192.0.2.10" not in problem, (
        "the pasted kubeconfig must not reach CI logs through the error"
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("name", "lab"),
        ("location", "us-central1"),
        ("releaseChannel", "STABLE"),
        ("deletionProtection", False),
        ("masterAuthorizedNetworks", ["203.0.113.0/24"]),
        ("privateNodes", True),
        ("systemPool", {"nodes": 2}),
    ],
)
def test_gke_cluster_settings_are_rejected_in_existing_mode(key: str, value: Any) -> None:
    (problem,) = _problems(_raw(**{key: value}))
    assert problem == (
        f"cluster.{key}: configures a GKE cluster, but mode 'existing' deploys into a cluster "
        "this stack does not manage, so it would do nothing. Remove it."
    )


def test_node_pools_are_rejected_in_existing_mode() -> None:
    raw = {**_raw(), "nodePools": [{"name": "l4", "gpu": {"type": "nvidia-l4"}}]}
    (problem,) = _problems(raw)
    assert problem.startswith("nodePools: node pools exist only in Standard clusters")
    assert "workloads[].nodeSelector" in problem, "the fix says how to reach its own GPU nodes"


def test_device_plugin_defaults_to_nvidias_static_daemonset() -> None:
    plugin = _cluster(_load(_raw())).device_plugin
    assert (plugin.type, plugin.sharing_replicas, plugin.fail_on_init_error) == (
        "static",
        None,
        True,
    )


@pytest.mark.parametrize("mode", ["static", "gpu-operator", "none"])
def test_device_plugin_string_form_selects_the_mode(mode: str) -> None:
    assert _cluster(_load({**_raw(), "devicePlugin": mode})).device_plugin.type == mode


def test_device_plugin_object_form_carries_sharing_and_the_driver_choice() -> None:
    raw = {
        **_raw(),
        "devicePlugin": {
            "type": "gpu-operator",
            "installDriver": False,
            "sharing": {"replicas": 4},
        },
    }
    assert _cluster(_load(raw)).device_plugin == DevicePluginConfig(
        type="gpu-operator", sharing_replicas=4, install_driver=False
    ), "the operator places its own pods: no node terms of ours"


def test_unknown_device_plugin_mode_lists_the_allowed_ones() -> None:
    (problem,) = _problems({**_raw(), "devicePlugin": "nvidia"})
    assert problem.startswith(
        "devicePlugin: 'nvidia' is not a device plugin mode (allowed: static, gpu-operator, none)"
    ), problem


def test_unknown_device_plugin_type_in_the_object_form_is_rejected() -> None:
    (problem,) = _problems({**_raw(), "devicePlugin": {"type": "helm"}})
    assert problem.startswith("devicePlugin.type: 'helm' is not allowed. Use one of"), problem


@pytest.mark.parametrize("mode", ["autopilot", "standard"])
def test_device_plugin_on_gke_is_rejected_because_gke_runs_its_own(mode: str) -> None:
    raw: dict[str, Any] = {"cluster": {"mode": mode}, "devicePlugin": "static"}
    if mode == "standard":
        raw["nodePools"] = [{"name": "l4", "gpu": {"type": "nvidia-l4"}}]
        raw["workloads"] = [{"name": "app", "image": "app:1.0", "gpu": {"type": "nvidia-l4"}}]
    with pytest.raises(ConfigError) as info:
        load(raw, project="acme-ml", region="us-central1", stack="dev")
    (problem,) = info.value.problems
    assert problem.startswith("devicePlugin: only for cluster.mode 'existing'"), problem
    assert "nodePools[].sharing" in problem, "GKE shares GPUs through the node pool instead"


def test_install_driver_is_only_for_the_gpu_operator() -> None:
    (problem,) = _problems({**_raw(), "devicePlugin": {"type": "static", "installDriver": True}})
    assert problem.startswith("devicePlugin.installDriver: only the GPU Operator installs"), problem


def test_sharing_without_a_plugin_to_do_it_is_rejected() -> None:
    (problem,) = _problems({**_raw(), "devicePlugin": {"type": "none", "sharing": {"replicas": 2}}})
    assert problem.startswith("devicePlugin.sharing: type 'none' deploys nothing"), problem


def test_sharing_needs_at_least_two_replicas() -> None:
    (problem,) = _problems({**_raw(), "devicePlugin": {"sharing": {"replicas": 1}}})
    assert problem.startswith("devicePlugin.sharing.replicas: 1 is out of range"), problem


def test_with_time_slicing_a_workload_may_ask_for_only_one_gpu() -> None:
    raw = {
        **_raw(),
        "devicePlugin": {"sharing": {"replicas": 4}},
        "workloads": [{"name": "app", "image": "app:1.0", "gpu": {"count": 2}}],
    }
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].gpu.count: 2 GPUs, but devicePlugin.sharing"), problem
    assert "Set gpu.count to 1" in problem


def test_gpu_type_on_an_existing_cluster_points_to_node_selector() -> None:
    raw = {**_raw(), "workloads": [{"name": "a", "image": "a:1", "gpu": {"type": "nvidia-l4"}}]}
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].gpu.type: 'nvidia-l4' names a GKE accelerator")
    assert "workloads[0].nodeSelector" in problem


def test_spot_on_an_existing_cluster_is_rejected() -> None:
    raw = {**_raw(), "workloads": [{"name": "a", "image": "a:1", "gpu": {}, "spot": True}]}
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].spot: Spot is GKE capacity"), problem


def test_default_workload_on_an_existing_cluster_asks_for_any_one_gpu() -> None:
    (workload,) = _load(_raw()).workloads
    assert workload.gpu_type is None and workload.spec.gpu.count == 1, (
        "an existing cluster has no GKE accelerator labels for an L4 selector to match"
    )
    assert not workload.spec.spot


def test_node_port_with_source_ranges_is_rejected() -> None:
    expose = {"type": "NodePort", "sourceRanges": ["203.0.113.0/24"]}
    raw = {
        **_raw(),
        "workloads": [{"name": "a", "image": "a:1", "gpu": {}, "port": 8080, "expose": expose}],
    }
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].expose.sourceRanges: only a LoadBalancer enforces")


# --- the program -------------------------------------------------------------------------------


def test_existing_mode_registers_no_google_cloud_resource(
    run: Run, existing: dict[str, Any]
) -> None:
    recording = _run(run, existing)
    gcp = [
        r.type for r in recording.resources if r.type.startswith(("gcp:", "pulumi:providers:gcp"))
    ]
    assert gcp == [], f"an existing cluster must not create anything in Google Cloud: {gcp}"
    assert recording.one("gke-gpu:index:ExistingCluster").name == "existing"


def test_kubeconfig_never_appears_in_plain_text(
    run: Run, existing: dict[str, Any], tmp_path: Path
) -> None:
    recording = _run(run, existing)
    inputs = json.dumps([r.inputs for r in recording.resources], default=str)
    assert TOKEN not in inputs, "the kubeconfig reached a recorded input in plain text"
    assert recording.one(PROVIDER).inputs["kubeconfig"] == SECRET_MASK
    assert "kubeconfig" in recording.secret_outputs, "the kubeconfig output must be a secret"
    plan = render.Plan.of("lab", recording, SECRET_KEYS)
    for path in render.write_artifacts(plan, tmp_path):
        assert TOKEN not in path.read_text(), f"{path.name} shows the kubeconfig in plain text"


def test_provider_identity_is_the_config_key_so_a_rotated_kubeconfig_replaces_nothing(
    run: Run, existing: dict
) -> None:
    provider = _run(run, existing).one(PROVIDER).inputs
    assert provider["clusterIdentifier"] == "existing/kubeconfig/kubeconfig", (
        "tied to the kubeconfig's content, new credentials would replace every deployed object"
    )
    assert "deleteUnreachable" not in provider, (
        "the cluster outlives the stack: an outage must not drop its objects from state"
    )


def test_context_mode_targets_that_context_and_exports_no_kubeconfig(
    run: Run, existing: dict
) -> None:
    existing["gke-gpu:cluster"] = {"mode": "existing", "context": "lab"}
    del existing["gke-gpu:kubeconfig"]
    recording = _run(run, existing)
    provider = recording.one(PROVIDER).inputs
    assert provider["context"] == "lab" and "kubeconfig" not in provider
    assert "kubeconfig" not in recording.stack_outputs, (
        "the ambient kubeconfig's credentials are not this stack's to export"
    )
    assert recording.stack_outputs["clusterName"] == "lab"
    assert recording.stack_outputs["clusterMode"] == "existing"


def test_static_device_plugin_is_nvidias_unprivileged_daemonset(
    run: Run, existing: dict[str, Any]
) -> None:
    daemonset = _run(run, existing).one(DAEMONSET).inputs
    assert daemonset["metadata"] == {
        "name": "nvidia-device-plugin-daemonset",
        "namespace": "kube-system",
    }, "the policy pack and NVIDIA's docs know the plugin by this name in kube-system"
    pod = daemonset["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "system-node-critical"
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ], "the plugin must run on tainted GPU nodes, or no GPU is ever advertised"
    (container,) = pod["containers"]
    assert container["image"] == (
        "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
        "@sha256:a61ba9fd8efb82f3a79f877f7580e02c1e8e7593f62473644bc9c79e315c3312"
    ), "NVIDIA's v0.20.0, pinned by the digest NVIDIA's GPU Operator bundle pins (a tag can move)"
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
    }, "the plugin needs only the kubelet socket directory, no privilege"
    assert pod["volumes"] == [
        {
            "name": "kubelet-device-plugins-dir",
            "hostPath": {"path": "/var/lib/kubelet/device-plugins", "type": "Directory"},
        }
    ]
    assert container["volumeMounts"] == [
        {"name": "kubelet-device-plugins-dir", "mountPath": "/var/lib/kubelet/device-plugins"}
    ]
    assert "hostNetwork" not in pod and "hostPID" not in pod


def test_static_time_slicing_mounts_nvidias_config_file(run: Run, existing: dict[str, Any]) -> None:
    existing["gke-gpu:devicePlugin"] = {"type": "static", "sharing": {"replicas": 4}}
    recording = _run(run, existing)
    config_map = recording.served(CONFIG_MAP).inputs
    assert config_map["metadata"]["namespace"] == "kube-system"
    assert yaml.safe_load(config_map["data"]["config.yaml"]) == {
        "version": "v1",
        "sharing": {
            "timeSlicing": {
                "failRequestsGreaterThanOne": True,
                "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
            }
        },
    }, "4 replicas per GPU, and a request for 2 shared GPUs fails instead of silently sharing"
    pod = recording.one(DAEMONSET).inputs["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert {"name": "CONFIG_FILE", "value": "/etc/nvidia-device-plugin/config.yaml"} in (
        container["env"]
    ), "without CONFIG_FILE the plugin never reads the time-slicing config"
    assert {"name": "config", "configMap": {"name": "nvidia-device-plugin-config"}} in pod[
        "volumes"
    ]
    assert {"name": "config", "mountPath": "/etc/nvidia-device-plugin", "readOnly": True} in (
        container["volumeMounts"]
    )
    daemonset = recording.one(DAEMONSET)
    assert recording.named("device-plugin-config").urn in daemonset.dependencies, (
        "the plugin must not start before its config exists"
    )


def test_a_changed_sharing_config_rolls_the_plugin_pods(run: Run, existing: dict[str, Any]) -> None:
    templates = []
    for replicas in (2, 4):
        existing["gke-gpu:devicePlugin"] = {"sharing": {"replicas": replicas}}
        templates.append(_run(run, existing).one(DAEMONSET).inputs["spec"]["template"])
    assert templates[0]["metadata"] != templates[1]["metadata"], (
        "the plugin reads its config at start; an unchanged pod template keeps the old replicas"
    )
    assert "annotations" not in daemonset_spec()["template"]["metadata"], (
        "without sharing there is no config, and nothing to roll on"
    )


def test_gpu_operator_is_a_pinned_helm_release_in_its_own_namespace(
    run: Run, existing: dict
) -> None:
    existing["gke-gpu:devicePlugin"] = {"type": "gpu-operator", "installDriver": False}
    recording = _run(run, existing)
    release = recording.one(RELEASE).inputs
    assert release["chart"] == "gpu-operator" and release["version"] == "v26.7.0", (
        "an unpinned chart changes the GPU stack under a running cluster"
    )
    assert release["repositoryOpts"] == {"repo": "https://helm.ngc.nvidia.com/nvidia"}
    assert release["namespace"] == "gpu-operator"
    assert release["values"] == {"driver": {"enabled": False}}, (
        "installDriver: false must keep the operator off nodes' preinstalled drivers"
    )
    namespace = recording.named("device-plugin-namespace").inputs
    assert namespace["metadata"]["labels"] == {"pod-security.kubernetes.io/enforce": "privileged"}
    assert recording.of_type(DAEMONSET) == [], "the operator brings its own device plugin"


def test_gpu_operator_installs_the_driver_unless_told_otherwise(
    run: Run, existing: dict[str, Any]
) -> None:
    existing["gke-gpu:devicePlugin"] = "gpu-operator"
    values = _run(run, existing).one(RELEASE).inputs["values"]
    assert values == {"driver": {"enabled": True}}, "the chart's own default: driver.enabled"


def test_gpu_operator_time_slicing_uses_its_config_map(run: Run, existing: dict[str, Any]) -> None:
    existing["gke-gpu:devicePlugin"] = {"type": "gpu-operator", "sharing": {"replicas": 3}}
    recording = _run(run, existing)
    config_map = recording.served(CONFIG_MAP).inputs
    assert config_map["metadata"] == {"name": "time-slicing-config", "namespace": "gpu-operator"}
    sharing = yaml.safe_load(config_map["data"]["any"])["sharing"]["timeSlicing"]
    assert sharing["resources"] == [{"name": "nvidia.com/gpu", "replicas": 3}]
    release = recording.one(RELEASE)
    assert release.inputs["values"]["devicePlugin"] == {
        "config": {"name": "time-slicing-config", "default": "any"}
    }, "without devicePlugin.config.default the operator applies the config to no node"
    assert recording.named("device-plugin-sharing").urn in release.dependencies


def test_device_plugin_none_deploys_nothing(run: Run, existing: dict[str, Any]) -> None:
    existing["gke-gpu:devicePlugin"] = "none"
    recording = _run(run, existing)
    assert recording.of_type(DAEMONSET) == [] and recording.of_type(RELEASE) == [], (
        "the cluster already advertises nvidia.com/gpu; a second plugin would fight it"
    )


@pytest.mark.parametrize(
    ("plugin", "gpu_object"),
    [("static", "device-plugin-daemonset"), ("gpu-operator", "device-plugin-operator")],
)
def test_workloads_wait_for_gpus_to_be_advertised(
    run: Run, existing: dict[str, Any], plugin: str, gpu_object: str
) -> None:
    existing["gke-gpu:devicePlugin"] = plugin
    recording = _run(run, existing)
    # The Deployment itself, not its component: a component's depends_on never reaches it.
    assert recording.named(gpu_object).urn in recording.served(DEPLOYMENT).dependencies, (
        "a GPU pod created before the plugin runs waits Pending, or fails a Job's first try"
    )


def test_existing_workload_selects_only_the_configured_node_labels(
    run: Run, existing: dict
) -> None:
    pod = _run(run, existing).served(DEPLOYMENT).inputs["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"gpu": "true"}, (
        "GKE labels (gke-accelerator, gke-spot) match no node of a kubeadm cluster"
    )
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"


def test_node_port_endpoint_says_how_to_reach_it_and_no_url_is_made_up(
    run: Run, existing: dict
) -> None:
    recording = _run(run, existing)
    assert recording.served(SERVICE).inputs["spec"]["type"] == "NodePort"
    endpoint = recording.stack_outputs["endpoints"]["llm"]
    assert "NodePort" in endpoint and "any node's address" in endpoint, endpoint
    assert "kubectl -n gke-gpu get service llm" in endpoint, "the user can look the port up"
    assert "url" not in recording.stack_outputs and "externalIp" not in recording.stack_outputs, (
        "a NodePort has no single address; a null url would look like a failed deploy"
    )


def test_load_balancer_on_an_existing_cluster_still_exports_its_url(
    run: Run, existing: dict
) -> None:
    del existing["gke-gpu:workloads"][0]["expose"]["type"]
    outputs = _run(run, existing).stack_outputs
    assert outputs["url"] == "https://203.0.113.10", "the load balancer's address, over HTTPS"
    assert outputs["endpoints"]["llm"] == outputs["url"]


def test_cuda_vector_add_job_runs_once_on_a_gpu_node(run: Run, existing: dict[str, Any]) -> None:
    existing["gke-gpu:workloads"] = [
        {
            "name": "vector-add",
            "kind": "Job",
            "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
            "gpu": {"count": 1},
            "port": None,
            "nodeSelector": {"gpu": "true"},
            "backoffLimit": 0,
        }
    ]
    job = _run(run, existing).one(JOB).inputs["spec"]
    pod = job["template"]["spec"]
    assert job["backoffLimit"] == 0 and pod["restartPolicy"] == "Never"
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert pod["nodeSelector"] == {"gpu": "true"}


# --- the example stacks ------------------------------------------------------------------------


@pytest.mark.parametrize("example", ["kubeadm", "operator"])
def test_example_stack_renders_valid_manifests_and_passes_policy(example: str) -> None:
    plan = shared.render(example, ROOT / "examples" / f"Pulumi.{example}.yaml")
    assert plan.recording.of_type("gcp:container/cluster:Cluster") == []
    manifests = render.kubernetes_manifests(plan.recording)
    assert all("kind" in m for m in manifests), "a Helm release is not a Kubernetes object"
    assert render.schema_problems(manifests, render.DEFAULT_KUBERNETES_VERSION) == []
    mandatory, _ = render.policy_findings(plan)
    assert mandatory == [], f"the {example} example must pass the policy pack"
