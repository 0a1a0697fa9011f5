"""Policy pack: every rule fires on a violating resource and stays quiet on a compliant one."""

from __future__ import annotations

import copy
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from pulumi_policy import PolicyCustomTimeouts, PolicyResourceOptions, ResourceValidationArgs
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from components import driver, nodepool, workload
from policy.__main__ import PACK_NAME, build_policies
from policy.rules import (
    ACCELERATOR_LABEL,
    GPU_RESOURCE,
    MIN_NODES_REASON_LABEL,
    PRIVILEGED_DAEMONSET_PREFIXES,
    PRODUCTION_CLUSTER_LABEL,
    PRODUCTION_LABEL,
    RULES,
    SYSTEM_NAMESPACE,
    image_problem,
    is_production,
    pod_spec,
    stack_from_urn,
)
from policy.rules import evaluate as evaluate_rules
from tests.conftest import stack_config
from tools.engine import Recording

POLICY_DIR = Path(__file__).resolve().parent.parent / "policy"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
SERVICE = "kubernetes:core/v1:Service"
NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
IMAGE = "vllm/vllm-openai:v0.6.4"
DIGEST = "sha256:" + "0123456789abcdef" * 4
GPU_NODES = {"nodeSelector": {ACCELERATOR_LABEL: "nvidia-l4"}}

RULE_LEVELS = {
    "gpu-containers-set-gpu-limits": "mandatory",
    "gpu-workloads-select-gpu-capacity": "advisory",
    "no-privileged-pods": "mandatory",
    "no-latest-or-untagged-images": "mandatory",
    "load-balancers-restricted-in-prod": "mandatory",
    "gpu-node-pools-scale-to-zero": "advisory",
    "endpoints-use-tls-in-prod": "mandatory",
    "deletion-protection-in-prod": "mandatory",
}


# --- builders ----------------------------------------------------------------------------------


def container(
    name: str = "llm",
    image: str = IMAGE,
    limits: dict[str, str] | None = None,
    requests: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if limits is not None:
        resources["limits"] = limits
    if requests is not None:
        resources["requests"] = requests
    return {"name": name, "image": image, "resources": resources, **extra}


def gpu_container(name: str = "llm", **extra: Any) -> dict[str, Any]:
    return container(name, limits={GPU_RESOURCE: "1", "memory": "16Gi"}, **extra)


def pod(*containers: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"containers": list(containers), **fields}


def k8s_object(
    pod_spec: dict[str, Any],
    resource_type: str = DEPLOYMENT,
    name: str = "llm",
    namespace: str = "gke-gpu",
) -> dict[str, Any]:
    """An object of any pod-bearing type with `pod_spec` where that type keeps it."""
    metadata = {"name": name, "namespace": namespace}
    template = {"metadata": {"labels": {"app": name}}, "spec": pod_spec}
    kind = resource_type.rsplit(":", 1)[-1]
    if kind == "Pod":
        return {"metadata": metadata, "spec": pod_spec}
    if kind == "CronJob":
        return {
            "metadata": metadata,
            "spec": {"schedule": "@hourly", "jobTemplate": {"spec": {"template": template}}},
        }
    return {"metadata": metadata, "spec": {"template": template}}


def gpu_pool(**fields: Any) -> dict[str, Any]:
    node_config: dict[str, Any] = {
        "machineType": "g2-standard-8",
        "guestAccelerators": [{"type": "nvidia-l4", "count": 1.0}],
        "resourceLabels": {"gke-gpu-pool": "l4"},
    }
    node_config.update(fields.pop("nodeConfig", {}))
    return {"name": "l4", "nodeConfig": node_config, **fields}


def load_balancer(production: bool = True, **spec: Any) -> dict[str, Any]:
    """A LoadBalancer Service, by default of a production stack (the program's marker label)."""
    labels = {PRODUCTION_LABEL: "true"} if production else {}
    return {
        "metadata": {"name": "llm", "namespace": "gke-gpu", "labels": labels},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80.0}], **spec},
    }


def prod_cluster(**props: Any) -> dict[str, Any]:
    return {"name": "gpu-prod", "resourceLabels": {PRODUCTION_CLUSTER_LABEL: "true"}, **props}


def fired(rule: str, resource_type: str, props: dict[str, Any], stack: str = "dev") -> list[str]:
    """Messages of one rule for one resource."""
    return [v.message for v in evaluate_rules(resource_type, props, stack) if v.rule == rule]


def installer_daemonset(
    name: str = "nvidia-driver-installer-cos", namespace: str = "kube-system"
) -> dict[str, Any]:
    """Google's COS driver installer as components/driver.py renders it, in short."""
    return k8s_object(
        pod(
            container("pause", image=f"gke.gcr.io/pause:3.8@{DIGEST}"),
            hostNetwork=True,
            hostPID=True,
            initContainers=[
                container(
                    "nvidia-driver-installer",
                    image="cos-nvidia-installer:fixed",
                    securityContext={"privileged": True},
                )
            ],
        ),
        DAEMONSET,
        name=name,
        namespace=namespace,
    )


# --- the registry ------------------------------------------------------------------------------


def test_the_registry_holds_the_seven_rules_with_their_enforcement_levels() -> None:
    assert {r.name: r.enforcement for r in RULES} == RULE_LEVELS, (
        "the README's rules table and the pack must list the same rules at the same levels"
    )
    assert all(r.description for r in RULES), "CrossGuard shows the description with each finding"


def test_evaluate_reports_each_violation_with_its_rule_and_enforcement_level() -> None:
    props = k8s_object(pod(gpu_container(image="my-model:latest")))
    found = {(v.rule, v.enforcement) for v in evaluate_rules(DEPLOYMENT, props, "dev")}
    assert found == {
        ("no-latest-or-untagged-images", "mandatory"),
        ("gpu-workloads-select-gpu-capacity", "advisory"),
    }, "a mandatory finding blocks the deployment and an advisory one only warns"


def test_the_rules_use_the_same_names_as_the_program() -> None:
    assert GPU_RESOURCE == workload.GPU_RESOURCE
    assert ACCELERATOR_LABEL == workload.ACCELERATOR_LABEL
    assert MIN_NODES_REASON_LABEL == nodepool.MIN_NODES_REASON_LABEL, (
        "minNodesReason only silences the scale-to-zero rule if both sides use one label"
    )
    assert driver.NAMESPACE == SYSTEM_NAMESPACE and driver.NAME.startswith(
        PRIVILEGED_DAEMONSET_PREFIXES
    ), "the program's own driver installer must stay on the privileged allowlist"


@pytest.mark.parametrize("stack", ["prod", "production", "dev", "my-stack"])
def test_production_is_the_resources_own_marker_not_the_stack_name(stack: str) -> None:
    marked, unmarked = load_balancer(), load_balancer(production=False)
    assert is_production(SERVICE, marked) and not is_production(SERVICE, unmarked), (
        "production rules follow the stack's own cluster.production marker"
    )
    assert fired("load-balancers-restricted-in-prod", SERVICE, marked, stack), (
        f"an open production LoadBalancer fails under any stack name, {stack!r} included"
    )
    assert fired("load-balancers-restricted-in-prod", SERVICE, unmarked, stack) == [], (
        f"a stack named {stack!r} without the marker is not production"
    )


def test_the_stack_name_is_read_from_the_resource_urn() -> None:
    urn = "urn:pulumi:prod-eu::gke-gpu::gke-gpu:index:GkeCluster$gcp:container/cluster:Cluster::c"
    assert stack_from_urn(urn) == "prod-eu", "prod rules key off the stack that owns the resource"


@pytest.mark.parametrize(
    "resource_type",
    [
        "kubernetes:core/v1:Pod",
        DEPLOYMENT,
        "kubernetes:apps/v1:StatefulSet",
        DAEMONSET,
        "kubernetes:apps/v1:ReplicaSet",
        "kubernetes:batch/v1:Job",
        "kubernetes:batch/v1:CronJob",
    ],
)
def test_the_pod_spec_is_found_in_every_pod_bearing_type(resource_type: str) -> None:
    spec = pod(gpu_container())
    assert pod_spec(resource_type, k8s_object(spec, resource_type)) == spec, (
        f"{resource_type}: a rule that cannot find the pod spec silently checks nothing"
    )


def test_non_pod_types_have_no_pod_spec() -> None:
    for resource_type in (SERVICE, "kubernetes:helm.sh/v3:Release", NODE_POOL):
        assert pod_spec(resource_type, {"spec": {"template": {"spec": {}}}}) is None


# --- gpu-containers-set-gpu-limits -----------------------------------------------------------


@pytest.mark.parametrize(
    "resource_type",
    [
        "kubernetes:core/v1:Pod",
        DEPLOYMENT,
        "kubernetes:batch/v1:Job",
        "kubernetes:batch/v1:CronJob",
    ],
)
def test_a_gpu_request_without_a_gpu_limit_is_rejected(resource_type: str) -> None:
    props = k8s_object(
        pod(container(requests={GPU_RESOURCE: "1"}), **GPU_NODES), resource_type, name="train"
    )
    (message,) = fired("gpu-containers-set-gpu-limits", resource_type, props)
    kind = resource_type.rsplit(":", 1)[-1]
    assert f'{kind} gke-gpu/train: container "llm"' in message, (
        "the message must name the object and the container to fix"
    )
    assert "workloads[].gpu.count" in message, "the message must point at the gke-gpu config key"


def test_a_pod_on_gpu_nodes_without_any_gpu_limit_is_rejected() -> None:
    props = k8s_object(pod(container(limits={"memory": "1Gi"}), **GPU_NODES))
    (message,) = fired("gpu-containers-set-gpu-limits", DEPLOYMENT, props)
    assert "nodeSelector cloud.google.com/gke-accelerator: nvidia-l4" in message
    assert 'container "llm"' in message, "a GPU node without a GPU container wastes the node"


def test_a_gpu_request_that_differs_from_the_limit_is_rejected() -> None:
    props = k8s_object(
        pod(container(limits={GPU_RESOURCE: "1"}, requests={GPU_RESOURCE: "2"}), **GPU_NODES)
    )
    (message,) = fired("gpu-containers-set-gpu-limits", DEPLOYMENT, props)
    assert "requests 2 nvidia.com/gpu but limits it to 1" in message, (
        "Kubernetes rejects differing requests and limits for GPUs"
    )


def test_a_gpu_container_with_a_limit_passes_and_its_sidecar_needs_none() -> None:
    props = k8s_object(
        pod(
            gpu_container(requests={GPU_RESOURCE: "1"}),
            container("metrics", image="prom/statsd-exporter:v0.26.0"),
            **GPU_NODES,
        )
    )
    assert fired("gpu-containers-set-gpu-limits", DEPLOYMENT, props) == [], (
        "one GPU container per pod is enough; a sidecar without a GPU is normal"
    )


def test_a_cpu_only_pod_is_not_asked_for_gpu_limits() -> None:
    props = k8s_object(pod(container(limits={"memory": "1Gi"})))
    assert fired("gpu-containers-set-gpu-limits", DEPLOYMENT, props) == []


# --- gpu-workloads-select-gpu-capacity ---------------------------------------------------------


def test_a_gpu_pod_without_any_node_selection_gets_an_advisory() -> None:
    props = k8s_object(pod(gpu_container()))
    violations = [
        v
        for v in evaluate_rules(DEPLOYMENT, props, "dev")
        if v.rule == "gpu-workloads-select-gpu-capacity"
    ]
    (violation,) = violations
    assert violation.enforcement == "advisory", "clusters where every node has GPUs need none"
    assert 'Deployment gke-gpu/llm: container "llm"' in violation.message
    assert "workloads[].nodeSelector" in violation.message, "existing clusters fix it in config"


@pytest.mark.parametrize(
    "placement",
    [
        GPU_NODES,
        {"nodeSelector": {"gpu": "true"}},
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "nvidia.com/gpu.present", "operator": "Exists"}
                                ]
                            }
                        ]
                    }
                }
            }
        },
    ],
    ids=["gke-accelerator", "custom-label", "node-affinity"],
)
def test_a_gpu_pod_that_selects_nodes_in_any_way_passes(placement: dict[str, Any]) -> None:
    props = k8s_object(pod(gpu_container(), **placement))
    assert fired("gpu-workloads-select-gpu-capacity", DEPLOYMENT, props) == [], (
        "existing clusters label GPU nodes their own way; any selection is accepted"
    )


# --- no-privileged-pods ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"hostPID": True}, "the pod sets hostPID: true"),
        ({"hostNetwork": True}, "the pod sets hostNetwork: true"),
        ({"hostIPC": True}, "the pod sets hostIPC: true"),
        (
            {"containers": [gpu_container(securityContext={"privileged": True})]},
            'container "llm" sets securityContext.privileged: true',
        ),
        (
            {
                "initContainers": [
                    container("fetch", securityContext={"allowPrivilegeEscalation": True})
                ]
            },
            'init container "fetch" sets securityContext.allowPrivilegeEscalation: true',
        ),
    ],
    ids=["hostPID", "hostNetwork", "hostIPC", "privileged", "escalation-in-init-container"],
)
def test_privileged_settings_are_rejected(fields: dict[str, Any], expected: str) -> None:
    props = k8s_object({**pod(gpu_container(), **GPU_NODES), **fields})
    (message,) = fired("no-privileged-pods", DEPLOYMENT, props)
    assert message.startswith(f"Deployment gke-gpu/llm: {expected}"), (
        "each of these gives root on the node; the message must say where"
    )


def test_a_restricted_pod_passes() -> None:
    restricted = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    props = k8s_object(pod(gpu_container(securityContext=restricted), hostNetwork=False))
    assert fired("no-privileged-pods", DEPLOYMENT, props) == []


@pytest.mark.parametrize("name", ["nvidia-driver-installer-cos", "nvidia-device-plugin-daemonset"])
def test_the_kube_system_nvidia_daemonsets_may_run_privileged(name: str) -> None:
    props = installer_daemonset(name=name)
    assert fired("no-privileged-pods", DAEMONSET, props) == [], (
        "drivers and the device plugin must reach the host, or no GPU works"
    )


def test_a_driver_installer_look_alike_outside_kube_system_is_rejected() -> None:
    props = installer_daemonset(namespace="default")
    messages = fired("no-privileged-pods", DAEMONSET, props)
    assert len(messages) == 3, "hostNetwork, hostPID and the privileged init container"
    assert all(m.startswith("DaemonSet default/nvidia-driver-installer-cos:") for m in messages), (
        "a name alone must not buy root on the node; only kube-system is trusted"
    )


def test_the_allowlist_covers_daemonsets_only() -> None:
    # A Deployment keeps its pod template where a DaemonSet does, so the same props fit.
    assert fired("no-privileged-pods", DEPLOYMENT, installer_daemonset()), (
        "a Deployment in kube-system with an installer's name is not the installer"
    )


# --- no-latest-or-untagged-images --------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "problem"),
    [
        ("vllm/vllm-openai", "has no tag (Kubernetes pulls :latest)"),
        ("localhost:5000/app", "has no tag (Kubernetes pulls :latest)"),
        ("app:", "has no tag (Kubernetes pulls :latest)"),
        ("app:latest", 'uses the tag "latest"'),
        ("localhost:5000/app:latest", 'uses the tag "latest"'),
        ("app@sha256:abc", "has a malformed digest 'sha256:abc'"),
        ("vllm/vllm-openai:v0.6.4", None),
        ("localhost:5000/app:1.0", None),
        ("cos-nvidia-installer:fixed", None),
        (f"gcr.io/gke-release/nvidia-partition-gpu@{DIGEST}", None),
        (f"gke.gcr.io/pause:3.8@{DIGEST}", None),
        (f"app:latest@{DIGEST}", None),
    ],
)
def test_image_references_are_pinned_by_a_tag_or_a_digest(image: str, problem: str | None) -> None:
    assert image_problem(image) == problem, (
        f"{image!r}: a registry port is not a tag, and a digest pins whatever the tag says"
    )


def test_an_untagged_image_in_an_init_container_is_rejected() -> None:
    props = k8s_object(
        pod(gpu_container(), initContainers=[container("fetch", image="busybox")], **GPU_NODES)
    )
    (message,) = fired("no-latest-or-untagged-images", DEPLOYMENT, props)
    assert message.startswith('Deployment gke-gpu/llm: init container "fetch" image "busybox"')
    assert "workloads[].image" in message, "the message must point at the gke-gpu config key"


def test_pinned_images_pass() -> None:
    props = k8s_object(pod(gpu_container(), **GPU_NODES))
    assert fired("no-latest-or-untagged-images", DEPLOYMENT, props) == []


# --- load-balancers-restricted-in-prod ---------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, "sets no loadBalancerSourceRanges"),
        ({"loadBalancerSourceRanges": []}, "sets no loadBalancerSourceRanges"),
        ({"loadBalancerSourceRanges": ["203.0.113.0/24", "0.0.0.0/0"]}, "allows 0.0.0.0/0"),
        ({"loadBalancerSourceRanges": ["::/0"]}, "allows ::/0"),
    ],
    ids=["unset", "empty", "ipv4-everyone", "ipv6-everyone"],
)
def test_an_open_load_balancer_in_prod_is_rejected(spec: dict[str, Any], expected: str) -> None:
    (message,) = fired("load-balancers-restricted-in-prod", SERVICE, load_balancer(**spec), "prod")
    assert message.startswith(
        "Service gke-gpu/llm: a public LoadBalancer in a production stack "
        '(gke-gpu/production: "true")'
    )
    assert expected in message, "the message must say what makes the endpoint public"
    assert "workloads[].expose.sourceRanges" in message, "and which config key fixes it"


def test_a_prod_load_balancer_with_restricted_ranges_passes() -> None:
    props = load_balancer(loadBalancerSourceRanges=["203.0.113.0/24", "2001:db8::/32"])
    assert fired("load-balancers-restricted-in-prod", SERVICE, props, "prod-eu") == []


def test_open_load_balancers_are_allowed_outside_prod_and_other_services_everywhere() -> None:
    dev = load_balancer(production=False)
    assert fired("load-balancers-restricted-in-prod", SERVICE, dev, "prod") == [], (
        "dev stays reachable for quick tests, whatever its stack is called"
    )
    cluster_ip = {
        "metadata": {"name": "llm-headless", "labels": {PRODUCTION_LABEL: "true"}},
        "spec": {"clusterIP": "None"},
    }
    assert fired("load-balancers-restricted-in-prod", SERVICE, cluster_ip, "prod") == []


def test_an_internal_load_balancer_in_production_may_accept_the_whole_vpc() -> None:
    internal = load_balancer()
    internal["metadata"]["annotations"] = {"networking.gke.io/load-balancer-type": "Internal"}
    assert fired("load-balancers-restricted-in-prod", SERVICE, internal, "prod") == [], (
        "an internal load balancer is reachable from the VPC only, never from the internet"
    )


# --- gpu-node-pools-scale-to-zero --------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"autoscaling": {"totalMinNodeCount": 1.0, "totalMaxNodeCount": 4.0}},
            "keeps 1 or more GPU nodes running (autoscaling.totalMinNodeCount)",
        ),
        (
            {"autoscaling": {"minNodeCount": 2.0, "maxNodeCount": 4.0}},
            "keeps 2 or more GPU nodes running (autoscaling.minNodeCount)",
        ),
        ({"nodeCount": 2.0}, "has no autoscaling and a fixed nodeCount of 2"),
        ({}, "has no autoscaling and no node count of 0"),
    ],
    ids=["total-min", "per-zone-min", "fixed-size", "no-autoscaling"],
)
def test_a_warm_gpu_pool_without_a_reason_gets_an_advisory(
    fields: dict[str, Any], expected: str
) -> None:
    (message,) = fired("gpu-node-pools-scale-to-zero", NODE_POOL, gpu_pool(**fields))
    assert message.startswith(f'node pool "l4" (1 x nvidia-l4) {expected}'), (
        "the message must name the pool and what keeps it warm"
    )
    assert "nodePools[].minNodes: 0 or minNodesReason" in message


@pytest.mark.parametrize(
    "fields",
    [
        {"autoscaling": {"totalMinNodeCount": 0.0, "totalMaxNodeCount": 4.0}},
        {"autoscaling": {"minNodeCount": 0, "maxNodeCount": 1}},
        {"autoscaling": {"totalMaxNodeCount": 4.0}},
        {"nodeCount": 0},
        {
            "autoscaling": {"totalMinNodeCount": 1.0, "totalMaxNodeCount": 4.0},
            "nodeConfig": {"resourceLabels": {MIN_NODES_REASON_LABEL: "serving-latency-slo"}},
        },
    ],
    ids=["total-min-0", "per-zone-min-0", "min-unset", "parked-at-0", "warm-with-reason"],
)
def test_a_gpu_pool_that_scales_to_zero_or_says_why_passes(fields: dict[str, Any]) -> None:
    assert fired("gpu-node-pools-scale-to-zero", NODE_POOL, gpu_pool(**fields)) == []


def test_a_cpu_node_pool_may_stay_warm() -> None:
    system = {"name": "system", "nodeCount": 1.0, "nodeConfig": {"machineType": "e2-standard-2"}}
    assert fired("gpu-node-pools-scale-to-zero", NODE_POOL, system) == [], (
        "the system pool must run all the time; only GPU pools are costly when idle"
    )


# --- endpoints-use-tls-in-prod ----------------------------------------------------------------


def _gate_service(port_name: str, production: bool = True) -> dict[str, Any]:
    service = load_balancer(production, loadBalancerSourceRanges=["203.0.113.0/24"])
    service["spec"]["selector"] = {"app.kubernetes.io/name": "gke-gpu-gate"}
    service["spec"]["ports"] = [{"name": port_name, "port": 80.0, "targetPort": 8080.0}]
    return service


def test_a_production_endpoint_in_plain_http_is_rejected() -> None:
    (message,) = fired("endpoints-use-tls-in-prod", SERVICE, _gate_service("http"), "eu")
    assert "plain HTTP on port 80" in message and "expose.tls: false" in message, (
        "a production key and prompts must not cross the network in clear"
    )


def test_https_endpoints_and_plain_http_outside_production_pass() -> None:
    assert fired("endpoints-use-tls-in-prod", SERVICE, _gate_service("https")) == []
    assert fired("endpoints-use-tls-in-prod", SERVICE, _gate_service("http", False)) == [], (
        "dev may serve plain HTTP when it says so (expose.tls: false)"
    )


def _rules_fired(recording: Recording, stack: str) -> set[str]:
    return {v.rule for r in recording.resources for v in evaluate_rules(r.type, r.inputs, stack)}


def test_the_production_stack_serves_only_https(run: Callable[..., Recording]) -> None:
    config = stack_config("prod")
    config["gke-gpu:workloads"][0]["expose"]["tls"] = False
    assert "endpoints-use-tls-in-prod" in _rules_fired(run(config, stack="prod"), "prod"), (
        "prod with expose.tls: false must fail the policy pack before anything is created"
    )


# --- deletion-protection-in-prod ---------------------------------------------------------------


def test_a_prod_cluster_without_deletion_protection_is_rejected() -> None:
    props = prod_cluster(deletionProtection=False)
    (message,) = fired("deletion-protection-in-prod", CLUSTER, props, "eu")
    assert message.startswith('cluster "gpu-prod" is marked production')
    assert "set cluster.deletionProtection: true in Pulumi.eu.yaml".lower() in message.lower()


@pytest.mark.parametrize(
    ("props", "stack"),
    [
        (prod_cluster(deletionProtection=True), "prod"),
        (prod_cluster(), "prod"),
        ({"name": "gpu-dev", "deletionProtection": False}, "prod"),
    ],
    ids=["on", "unset-defaults-to-on", "unmarked-may-turn-it-off-even-if-named-prod"],
)
def test_deletion_protection_on_or_outside_prod_passes(props: dict[str, Any], stack: str) -> None:
    assert fired("deletion-protection-in-prod", CLUSTER, props, stack) == []


# --- the real program --------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_stack_files_comply_with_every_rule(stack: str, run: Callable[..., Recording]) -> None:
    recording = run(stack_config(stack), stack=stack)
    checked = {DEPLOYMENT, SERVICE, CLUSTER}
    assert checked <= {r.type for r in recording.resources}, "the test must see real workloads"
    findings = [
        f"{r.name}: [{v.rule}] {v.message}"
        for r in recording.resources
        for v in evaluate_rules(r.type, r.inputs, stack)
    ]
    assert findings == [], f"Pulumi.{stack}.yaml must pass its own policy pack"


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "Job"])
def test_every_workload_kind_the_program_renders_complies(
    kind: str, standard: dict[str, Any], run: Callable[..., Recording]
) -> None:
    spec = standard["gke-gpu:workloads"][0]
    spec["kind"] = kind
    if kind == "StatefulSet":
        spec["storage"] = {"size": "100Gi", "mountPath": "/models"}
    if kind == "Job":
        spec.update(expose=None, probe=None)
    recording = run(standard)
    findings = [
        f"{r.name}: [{v.rule}] {v.message}"
        for r in recording.resources
        for v in evaluate_rules(r.type, r.inputs, "test")
    ]
    assert findings == [], f"a {kind} rendered by gke-gpu must pass the pack"


def test_the_programs_driver_installers_pass_through_the_allowlist(
    standard: dict[str, Any], run: Callable[..., Recording]
) -> None:
    config = copy.deepcopy(standard)
    config["gke-gpu:nodePools"][0]["driver"] = "installer"
    config["gke-gpu:nodePools"].append(
        {
            "name": "l4-ubuntu",
            "gpu": {"type": "nvidia-l4", "count": 2},
            "spot": True,
            "maxNodes": 1,
            "driver": "installer",
            "imageType": "UBUNTU_CONTAINERD",
        }
    )
    recording = run(config)
    daemonsets = recording.of_type(DAEMONSET)
    assert len(daemonsets) == 2, "one installer per node OS"
    for daemonset in daemonsets:
        assert evaluate_rules(DAEMONSET, daemonset.inputs, "test") == [], (
            f"{daemonset.name}: the privileged driver installer must not block GPU pools"
        )


# --- the CrossGuard pack -----------------------------------------------------------------------


def _args(resource_type: str, props: Any, stack: str) -> ResourceValidationArgs:
    timeouts = PolicyCustomTimeouts(0, 0, 0)
    opts = PolicyResourceOptions(False, [], None, [], timeouts, [])
    urn = f"urn:pulumi:{stack}::gke-gpu::{resource_type}::r"
    return ResourceValidationArgs(resource_type, props, urn, "r", opts, None)


def test_the_pack_has_one_policy_per_rule_with_the_same_level() -> None:
    served = [
        (p.name, p.enforcement_level.value if p.enforcement_level else None)
        for p in build_policies()
    ]
    assert served == [(r.name, r.enforcement) for r in RULES], (
        "the pack must enforce exactly the rules the tests and tools check"
    )
    assert PACK_NAME == "gke-gpu-policies"


def test_a_policy_reports_its_rules_messages_by_the_resources_marker() -> None:
    (policy,) = [p for p in build_policies() if p.name == "load-balancers-restricted-in-prod"]
    reported: list[str] = []

    def report(message: str, urn: str | None = None) -> None:
        reported.append(message)

    policy.validate(_args(SERVICE, unknown_checking_proxy(load_balancer()), "prod"), report)
    assert len(reported) == 1 and "sets no loadBalancerSourceRanges" in reported[0]
    reported.clear()
    unmarked = load_balancer(production=False)
    policy.validate(_args(SERVICE, unknown_checking_proxy(unmarked), "prod"), report)
    assert reported == [], "the same Service without the production marker passes, even in 'prod'"


def test_the_rules_read_crossguards_proxies_like_plain_data() -> None:
    props = installer_daemonset(namespace="default")
    plain = evaluate_rules(DAEMONSET, props, "prod")
    assert plain, "the look-alike must have findings for this comparison to mean anything"
    assert evaluate_rules(DAEMONSET, unknown_checking_proxy(props), "prod") == plain, (
        "CrossGuard passes Mapping/Sequence proxies, not dicts and lists"
    )


def test_a_value_unknown_during_preview_is_not_reported_as_a_violation() -> None:
    props = k8s_object(pod(gpu_container(image=UNKNOWN_STRING_VALUE), **GPU_NODES))
    with pytest.raises(UnknownValueError):
        evaluate_rules(DEPLOYMENT, unknown_checking_proxy(props), "dev")
    unknown_namespace = k8s_object(pod(gpu_container(image="app"), **GPU_NODES))
    unknown_namespace["metadata"]["namespace"] = UNKNOWN_STRING_VALUE
    (violation,) = evaluate_rules(DEPLOYMENT, unknown_checking_proxy(unknown_namespace), "dev")
    message = violation.message
    assert message.startswith("Deployment llm:"), (
        "a namespace created in the same run is unknown in preview; naming must not fail on it"
    )


@pytest.fixture
def analyzer() -> Iterator[analyzer_pb2_grpc.AnalyzerStub]:
    """The pack served the way `pulumi preview --policy-pack policy` starts it."""
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1", "."],
        cwd=POLICY_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        port = process.stdout.readline().decode().strip()
        if not port.isdigit():
            process.kill()
            _, stderr = process.communicate(timeout=10)
            pytest.fail(f"the policy pack did not start: {stderr.decode()[-2000:]}")
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield analyzer_pb2_grpc.AnalyzerStub(channel)
    finally:
        process.kill()
        process.wait(timeout=10)


def test_the_pack_starts_as_pulumi_runs_it_and_reports_violations(
    analyzer: analyzer_pb2_grpc.AnalyzerStub,
) -> None:
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=30)
    assert info.name == "gke-gpu-policies"
    assert [p.name for p in info.policies] == list(RULE_LEVELS), "every rule must be served"
    properties = struct_pb2.Struct()
    properties.update(k8s_object(pod(gpu_container(image="app:latest"), **GPU_NODES)))
    request = analyzer_pb2.AnalyzeRequest(
        type=DEPLOYMENT,
        properties=properties,
        urn=f"urn:pulumi:prod::gke-gpu::{DEPLOYMENT}::llm",
        name="llm",
    )
    response = analyzer.Analyze(request, timeout=30)
    assert [d.policyName for d in response.diagnostics] == ["no-latest-or-untagged-images"]
    assert 'container "llm" image "app:latest"' in response.diagnostics[0].message


def test_the_pack_manifest_installs_its_own_locked_venv() -> None:
    manifest = yaml.safe_load((POLICY_DIR / "PulumiPolicy.yaml").read_text())
    assert manifest["runtime"]["name"] == "python"
    assert manifest["runtime"]["options"] == {"toolchain": "uv", "virtualenv": ".venv"}, (
        "with uv, Pulumi installs the pack into policy/.venv itself; no manual step before"
        " `pulumi preview --policy-pack policy`"
    )
    pack = tomllib.loads((POLICY_DIR / "pyproject.toml").read_text())
    root = tomllib.loads((POLICY_DIR.parent / "pyproject.toml").read_text())
    assert "policy" in root["tool"]["uv"]["workspace"]["members"], (
        "the pack must resolve into the repository's uv.lock, or it installs unlocked versions"
    )
    pin = f"pulumi-policy=={version('pulumi-policy')}"
    assert pin in pack["project"]["dependencies"], (
        "the tests must run against the pulumi-policy the pack pins"
    )
    assert pin in root["dependency-groups"]["policy"]
