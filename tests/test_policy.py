"""Policy pack: every rule fires on a violating resource and stays quiet on a compliant one."""

from __future__ import annotations

import copy
import json
import re
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

from components import slices
from components.facts import labels
from components.platform import driver
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
    pack_config,
    pod_spec,
    source_range_problems,
    stack_from_urn,
)
from policy.rules import evaluate as evaluate_rules
from policy.rules.props import POD_SPEC_PATHS, kubernetes_kind
from tests.conftest import stack_config
from tests.test_kinds import workload_of_kind
from tools import stacks
from tools.engine import Recording

POLICY_DIR = Path(__file__).resolve().parent.parent / "policy"
README = (POLICY_DIR / "README.md").read_text()
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
    "gateways-restricted-in-prod": "mandatory",
    "gpu-node-pools-scale-to-zero": "advisory",
    "endpoints-use-tls-in-prod": "mandatory",
    "deletion-protection-in-prod": "mandatory",
    "private-nodes-in-prod": "mandatory",
    "control-plane-restricted-in-prod": "mandatory",
    "secrets-encrypted-in-prod": "mandatory",
    "dataplane-v2-in-prod": "mandatory",
    "binary-authorization-in-prod": "advisory",
    "security-posture-in-prod": "advisory",
    "alerts-notify-someone-in-prod": "advisory",
    "production-marker-kept": "mandatory",
}
PRODUCTION_RULES = {name for name in RULE_LEVELS if name.endswith("-in-prod")} | {
    "production-marker-kept"
}
KMS_KEY = "projects/acme-ml-prod/locations/us-central1/keyRings/gke/cryptoKeys/secrets"


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
    """A pod spec that runs as non-root unless `fields` replace its securityContext."""
    return {"containers": list(containers), "securityContext": {"runAsNonRoot": True}, **fields}


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


def hardened_cluster(production: bool = True, **props: Any) -> dict[str, Any]:
    """A cluster that meets every production rule, marked production unless told otherwise."""
    hardened = {
        "name": "gpu-prod",
        "privateClusterConfig": {"enablePrivateNodes": True, "enablePrivateEndpoint": False},
        "masterAuthorizedNetworksConfig": {
            "cidrBlocks": [{"cidrBlock": "203.0.113.0/24", "displayName": "office"}]
        },
        "databaseEncryption": {"state": "ENCRYPTED", "keyName": KMS_KEY},
        "datapathProvider": "ADVANCED_DATAPATH",
        "binaryAuthorization": {"evaluationMode": "PROJECT_SINGLETON_POLICY_ENFORCE"},
        "securityPostureConfig": {"mode": "BASIC", "vulnerabilityMode": "VULNERABILITY_BASIC"},
    }
    if production:
        hardened["resourceLabels"] = {PRODUCTION_CLUSTER_LABEL: "true"}
    return {**hardened, **props}


def fired(
    rule: str,
    resource_type: str,
    props: dict[str, Any],
    stack: str = "dev",
    production: bool = False,
) -> list[str]:
    """Messages of one rule for one resource (`production`: what the pack config says)."""
    violations = evaluate_rules(resource_type, props, stack, production)
    return [v.message for v in violations if v.rule == rule]


def installer_daemonset(
    name: str = "nvidia-driver-installer-cos", namespace: str = "kube-system"
) -> dict[str, Any]:
    """Google's COS driver installer as components/platform/driver.py renders it, in short."""
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


def test_the_registry_holds_every_rule_with_its_enforcement_level() -> None:
    assert {r.name: r.enforcement for r in RULES} == RULE_LEVELS, (
        "the pack must enforce exactly the rules these tests check, at the same levels"
    )
    assert all(r.description for r in RULES), "CrossGuard shows the description with each finding"


def test_the_readme_table_lists_every_rule_at_its_level() -> None:
    table = re.findall(r"^\| `([a-z0-9-]+)` \| (mandatory|advisory) \|", README, re.MULTILINE)
    assert dict(table) == RULE_LEVELS, (
        "policy/README.md is where a user reads why a preview failed; it must list every rule"
    )


def test_evaluate_reports_each_violation_with_its_rule_and_enforcement_level() -> None:
    props = k8s_object(pod(gpu_container(image="my-model:latest")))
    found = {(v.rule, v.enforcement) for v in evaluate_rules(DEPLOYMENT, props, "dev")}
    assert found == {
        ("no-latest-or-untagged-images", "mandatory"),
        ("gpu-workloads-select-gpu-capacity", "advisory"),
    }, "a mandatory finding blocks the deployment and an advisory one only warns"


def test_the_rules_use_the_same_names_as_the_program() -> None:
    assert GPU_RESOURCE == labels.GPU_RESOURCE
    assert ACCELERATOR_LABEL == labels.ACCELERATOR_LABEL
    assert MIN_NODES_REASON_LABEL == labels.MIN_NODES_REASON_LABEL, (
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


def test_the_policy_pack_knows_where_every_kind_the_program_registers_keeps_its_pod() -> None:
    # The pack runs in its own venv without components/ (policy/README.md), so it keeps its own
    # table; this holds it to the program's registry (components/slices.py KINDS).
    unknown = {
        name: (kubernetes_kind(kind.type_token), kind.pod_spec_path)
        for name, kind in slices.KINDS.items()
        if POD_SPEC_PATHS.get(kubernetes_kind(kind.type_token) or ("", "")) != kind.pod_spec_path
    }
    assert not unknown, (
        f"policy/rules/props.py POD_SPEC_PATHS lacks (group, kind) -> path {unknown}: the pack "
        "would let those pods through unchecked (no GPU limit, root, unpinned image)"
    )


def _at(obj: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


@pytest.mark.parametrize("name", sorted(slices.KINDS))
def test_the_pod_rules_check_the_pod_of_every_kind_the_program_registers(
    tmp_path: Path, name: str
) -> None:
    kind = slices.KINDS[name]
    registered = workload_of_kind(tmp_path, name).one(kind.type_token).inputs
    assert pod_spec(kind.type_token, registered) == _at(registered, kind.pod_spec_path), (
        f"{name}: the pack does not find the pod the program registers"
    )
    ungpued = copy.deepcopy(registered)
    for container in _at(ungpued, kind.pod_spec_path)["containers"]:
        container["resources"]["limits"].pop(GPU_RESOURCE)
    assert "gpu-containers-set-gpu-limits" in {
        v.rule for v in evaluate_rules(kind.type_token, ungpued, "test")
    }, f"{name}: a GPU pod without its GPU limit must fail the pack"


def test_the_pod_rules_check_a_leader_worker_sets_leader_as_well_as_its_workers(
    tmp_path: Path,
) -> None:
    kind = slices.KINDS["LeaderWorkerSet"]
    registered = workload_of_kind(tmp_path, "LeaderWorkerSet").one(kind.type_token).inputs
    assert not evaluate_rules(kind.type_token, registered, "test"), "the program's own LWS passes"
    rooted = copy.deepcopy(registered)
    leader = rooted["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
    leader["containers"][0]["securityContext"]["privileged"] = True
    leader["containers"][0]["image"] = "vllm/vllm-openai:latest"
    found = {v.rule for v in evaluate_rules(kind.type_token, rooted, "test")}
    proxied = evaluate_rules(kind.type_token, unknown_checking_proxy(rooted), "test")
    assert proxied == evaluate_rules(kind.type_token, rooted, "test"), (
        "CrossGuard passes Mapping proxies: the leader's view must read them like plain data"
    )
    assert {"no-privileged-pods", "no-latest-or-untagged-images"} <= found, (
        "a privileged leader on an unpinned image must fail the pack even when the workers are "
        f"clean: the leader is a pod on a GPU node like any other (found {found})"
    )


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
        (
            {"volumes": [{"name": "host-dev", "hostPath": {"path": "/dev"}}]},
            'volume "host-dev" mounts /dev from the node (hostPath)',
        ),
        (
            {"containers": [gpu_container(ports=[{"containerPort": 8000, "hostPort": 8000.0}])]},
            'container "llm" binds hostPort 8000',
        ),
        (
            {
                "containers": [
                    gpu_container(
                        securityContext={"capabilities": {"add": ["NET_BIND_SERVICE", "SYS_ADMIN"]}}
                    )
                ]
            },
            'container "llm" adds the capabilities SYS_ADMIN',
        ),
        (
            {"securityContext": {"runAsNonRoot": True, "runAsUser": 0.0}},
            "the pod sets securityContext.runAsUser: 0: root in a container",
        ),
        (
            {"containers": [gpu_container(securityContext={"runAsUser": 0})]},
            'container "llm" sets securityContext.runAsUser: 0: root in a container',
        ),
        (
            {"securityContext": {}},
            'container "llm" has no runAsNonRoot, so the image\'s own user (often root) runs it',
        ),
        (
            {"containers": [gpu_container(securityContext={"runAsNonRoot": False})]},
            'container "llm" has runAsNonRoot: false',
        ),
    ],
    ids=[
        "hostPID",
        "hostNetwork",
        "hostIPC",
        "privileged",
        "escalation-in-init-container",
        "hostPath",
        "hostPort",
        "added-capability",
        "root-pod",
        "root-container",
        "no-runAsNonRoot",
        "container-overrides-runAsNonRoot",
    ],
)
def test_settings_that_reach_the_node_or_run_as_root_are_rejected(
    fields: dict[str, Any], expected: str
) -> None:
    props = k8s_object({**pod(gpu_container(), **GPU_NODES), **fields})
    (message,) = fired("no-privileged-pods", DEPLOYMENT, props)
    assert message.startswith(f"Deployment gke-gpu/llm: {expected}"), (
        "each of these hands a compromised container the node; the message must say where"
    )


@pytest.mark.parametrize(
    ("fields", "fix"),
    [
        ({"volumes": [{"name": "d", "hostPath": {"path": "/"}}]}, "emptyDir"),
        ({"securityContext": {}}, "workloads[].runAsUser"),
        ({"hostPID": True}, "Remove it."),
    ],
    ids=["hostPath", "no-runAsNonRoot", "hostPID"],
)
def test_each_node_access_message_says_how_to_fix_it(fields: dict[str, Any], fix: str) -> None:
    props = k8s_object({**pod(gpu_container()), **fields})
    (message,) = fired("no-privileged-pods", DEPLOYMENT, props)
    assert fix in message, "a refused deploy must say what to change"


def test_a_restricted_pod_passes() -> None:
    restricted = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
        "runAsUser": 1000.0,
    }
    ports = [{"containerPort": 8000.0, "hostPort": 0}]
    props = k8s_object(
        pod(
            gpu_container(securityContext=restricted, ports=ports),
            hostNetwork=False,
            volumes=[{"name": "cache", "emptyDir": {}}],
        )
    )
    assert fired("no-privileged-pods", DEPLOYMENT, props) == [], (
        "NET_BIND_SERVICE, hostPort 0 and an emptyDir give nothing on the node"
    )


def test_run_as_non_root_may_be_set_on_each_container_instead_of_the_pod() -> None:
    non_root = {"runAsNonRoot": True}
    props = k8s_object(
        pod(
            gpu_container(securityContext=non_root),
            initContainers=[container("fetch", securityContext=non_root)],
            securityContext={},
        )
    )
    assert fired("no-privileged-pods", DEPLOYMENT, props) == [], (
        "Kubernetes applies the container's own runAsNonRoot; the pod's is only a default"
    )


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
        (
            {"loadBalancerSourceRanges": ["203.0.113.0/24", "0.0.0.0/0"]},
            "allows 0.0.0.0/0, which is every IPv4 address",
        ),
        ({"loadBalancerSourceRanges": ["::/0"]}, "allows ::/0, which is every IPv6 address"),
        (
            {"loadBalancerSourceRanges": ["0.0.0.0/1", "128.0.0.0/1"]},
            "allows 0.0.0.0/1, 128.0.0.0/1, which together cover every IPv4 address",
        ),
        (
            {"loadBalancerSourceRanges": ["10.0.0.0/8"]},
            "allows 10.0.0.0/8, wider than a /16, the widest range production admits for IPv4",
        ),
        (
            {"loadBalancerSourceRanges": ["2001:db8::/32"]},
            "allows 2001:db8::/32, wider than a /48, the widest range production admits for IPv6",
        ),
        (
            {"loadBalancerSourceRanges": ["::ffff:0.0.0.0/96"]},
            "allows ::ffff:0.0.0.0/96, which is every IPv4 address",
        ),
        ({"loadBalancerSourceRanges": ["203.0.113.7"]}, "allows '203.0.113.7', which is not"),
        ({"loadBalancerSourceRanges": ["office"]}, "allows 'office', which is not a CIDR range"),
    ],
    ids=[
        "unset",
        "empty",
        "ipv4-everyone",
        "ipv6-everyone",
        "two-halves",
        "ipv4-too-wide",
        "ipv6-too-wide",
        "ipv4-mapped-everyone",
        "address-without-prefix",
        "not-an-address",
    ],
)
def test_an_open_load_balancer_in_prod_is_rejected(spec: dict[str, Any], expected: str) -> None:
    messages = fired("load-balancers-restricted-in-prod", SERVICE, load_balancer(**spec), "prod")
    assert messages, f"{spec}: a production endpoint this open must not deploy"
    assert all(
        m.startswith(
            "Service gke-gpu/llm: a public LoadBalancer in a production stack "
            '(gke-gpu/production: "true", from cluster.production)'
        )
        for m in messages
    )
    assert any(expected in m for m in messages), "the message must say what lets everyone in"
    assert all("workloads[].expose.sourceRanges" in m for m in messages), "and which key fixes it"


@pytest.mark.parametrize("quarters", [["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"]])
def test_ranges_that_cover_all_addresses_together_are_named_together(quarters: list[str]) -> None:
    problems = source_range_problems(quarters)
    assert f"{', '.join(quarters)}, which together cover every IPv4 address" in problems, (
        "four /2s are 0.0.0.0/0 in four pieces; the message must name all four to remove"
    )


def test_a_prod_load_balancer_with_narrow_ranges_passes() -> None:
    props = load_balancer(
        loadBalancerSourceRanges=["203.0.113.0/24", "198.51.0.0/16", "2001:db8:1::/48"]
    )
    assert fired("load-balancers-restricted-in-prod", SERVICE, props, "prod-eu") == [], (
        "a /16 (IPv4) and a /48 (IPv6) are the widest ranges production admits"
    )


def test_the_pack_config_alone_makes_an_unmarked_service_production() -> None:
    unmarked = load_balancer(production=False)
    (message,) = fired("load-balancers-restricted-in-prod", SERVICE, unmarked, "prod", True)
    assert "(GKE_GPU_PRODUCTION=true in the stack's GitHub environment)" in message, (
        "dropping cluster.production from the stack file must not open a production endpoint"
    )


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


def _rules_fired(recording: Recording, stack: str, production: bool = False) -> set[str]:
    return {
        v.rule
        for r in recording.resources
        for v in evaluate_rules(r.type, r.inputs, stack, production)
    }


def test_the_production_stack_serves_only_https_even_without_its_marker(
    run: Callable[..., Recording],
) -> None:
    # With cluster.production the config layer refuses expose.tls: false itself; without it, the
    # pack config from the stack's GitHub environment is what still says production.
    config = stack_config("prod")
    del config["gke-gpu:cluster"]["production"]
    config["gke-gpu:workloads"][0]["expose"]["tls"] = False
    fired_rules = _rules_fired(run(config, stack="prod"), "prod", production=True)
    assert "endpoints-use-tls-in-prod" in fired_rules, (
        "prod with expose.tls: false must fail the policy pack before anything is created, "
        "even when the same pull request drops cluster.production"
    )


# --- deletion-protection-in-prod ---------------------------------------------------------------


def test_a_prod_cluster_without_deletion_protection_is_rejected() -> None:
    props = prod_cluster(deletionProtection=False)
    (message,) = fired("deletion-protection-in-prod", CLUSTER, props, "eu")
    assert message.startswith(
        'cluster "gpu-prod" is production (gke-gpu-production: "true", from cluster.production)'
    ), "the message must say why the cluster counts as production"
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


# --- the production cluster --------------------------------------------------------------------


def test_a_hardened_production_cluster_passes_every_rule() -> None:
    assert evaluate_rules(CLUSTER, hardened_cluster(), "prod", True) == [], (
        "the cluster the production rules ask for must be reachable: private nodes, narrow "
        "authorized networks, Secrets under a KMS key, Binary Authorization, security posture"
    )


@pytest.mark.parametrize(
    ("rule", "change", "expected"),
    [
        (
            "private-nodes-in-prod",
            {"privateClusterConfig": None},
            "its nodes get public IP addresses",
        ),
        (
            "private-nodes-in-prod",
            {"privateClusterConfig": {"enablePrivateNodes": False}},
            "Set cluster.privateNodes: true",
        ),
        (
            "control-plane-restricted-in-prod",
            {"masterAuthorizedNetworksConfig": None},
            "lists no authorized networks",
        ),
        (
            "control-plane-restricted-in-prod",
            {"masterAuthorizedNetworksConfig": {"cidrBlocks": [{"cidrBlock": "0.0.0.0/0"}]}},
            "cidrBlocks allows 0.0.0.0/0, which is every IPv4 address",
        ),
        (
            "control-plane-restricted-in-prod",
            {"masterAuthorizedNetworksConfig": {"cidrBlocks": [{"cidrBlock": "172.16.0.0/12"}]}},
            "cidrBlocks allows 172.16.0.0/12, wider than a /16",
        ),
        (
            "control-plane-restricted-in-prod",
            {
                "masterAuthorizedNetworksConfig": {
                    "cidrBlocks": [{"cidrBlock": "203.0.113.0/24"}],
                    "gcpPublicCidrsAccessEnabled": True,
                }
            },
            "gcpPublicCidrsAccessEnabled: true, which lets every Google Cloud public address",
        ),
        ("secrets-encrypted-in-prod", {"databaseEncryption": None}, "sets no databaseEncryption"),
        (
            "secrets-encrypted-in-prod",
            {"databaseEncryption": {"state": "DECRYPTED"}},
            "sets databaseEncryption.state: DECRYPTED",
        ),
        (
            "secrets-encrypted-in-prod",
            {"databaseEncryption": {"state": "ENCRYPTED"}},
            "ENCRYPTED without a keyName",
        ),
        (
            "binary-authorization-in-prod",
            {"binaryAuthorization": {"evaluationMode": "DISABLED"}},
            "does not enforce Binary Authorization (binaryAuthorization.evaluationMode: DISABLED)",
        ),
        ("security-posture-in-prod", {"securityPostureConfig": None}, "sets no mode"),
        (
            "dataplane-v2-in-prod",
            {"datapathProvider": None},
            "datapathProvider: unset (the provider's default, LEGACY_DATAPATH), so it does not "
            "enforce NetworkPolicies",
        ),
        (
            "dataplane-v2-in-prod",
            {"datapathProvider": "LEGACY_DATAPATH"},
            "Remove cluster.dataplaneV2: false",
        ),
    ],
    ids=[
        "no-private-config",
        "public-nodes",
        "no-authorized-networks",
        "authorized-everyone",
        "authorized-too-wide",
        "google-cloud-addresses",
        "no-encryption",
        "decrypted",
        "no-key",
        "binauthz-off",
        "no-security-posture",
        "legacy-datapath-by-default",
        "legacy-datapath",
    ],
)
def test_a_production_cluster_missing_a_safeguard_is_reported(
    rule: str, change: dict[str, Any], expected: str
) -> None:
    props = {k: v for k, v in {**hardened_cluster(), **change}.items() if v is not None}
    messages = fired(rule, CLUSTER, props, "prod")
    assert any(expected in m for m in messages), f"{rule}: {messages}"
    assert all(m.startswith('cluster "gpu-prod" is production') for m in messages), (
        "the message must name the cluster and why it counts as production"
    )
    (level,) = {v.enforcement for v in evaluate_rules(CLUSTER, props, "prod") if v.rule == rule}
    assert level == RULE_LEVELS[rule], "missing security must block; missing advice only warns"


def test_a_production_autopilot_cluster_passes_dataplane_v2_without_naming_a_datapath() -> None:
    """GKE Dataplane V2 is always on in new Autopilot clusters (cloud.google.com/kubernetes-engine/
    docs/how-to/dataplane-v2), and gke-gpu sets no datapathProvider there."""
    autopilot = hardened_cluster(enableAutopilot=True)
    autopilot.pop("datapathProvider")
    assert fired("dataplane-v2-in-prod", CLUSTER, autopilot, "prod") == [], (
        "an Autopilot cluster always enforces NetworkPolicies: refusing it would block prod"
    )
    unmarked = {"name": "gpu-dev", "datapathProvider": "LEGACY_DATAPATH"}
    assert fired("dataplane-v2-in-prod", CLUSTER, unmarked, "dev") == [], (
        "a dev cluster may keep an older datapath (changing it replaces the cluster)"
    )


def test_a_cluster_that_is_not_production_may_skip_the_production_safeguards() -> None:
    bare = {"name": "gpu-dev", "deletionProtection": False}
    assert evaluate_rules(CLUSTER, bare, "prod") == [], (
        "a dev cluster may have public nodes and an open control plane, even if named prod"
    )
    assert {v.rule for v in evaluate_rules(CLUSTER, bare, "dev", True)} >= {
        "private-nodes-in-prod",
        "control-plane-restricted-in-prod",
        "secrets-encrypted-in-prod",
    }, "the same cluster in a stack whose GitHub environment says production is held to them"


# --- production-marker-kept --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource_type", "props", "marker"),
    [
        (CLUSTER, hardened_cluster(production=False), 'GCE label gke-gpu-production: "true"'),
        (
            SERVICE,
            load_balancer(production=False, loadBalancerSourceRanges=["203.0.113.0/24"]),
            'label gke-gpu/production: "true"',
        ),
    ],
    ids=["cluster", "public-service"],
)
def test_a_production_stack_that_drops_its_marker_is_refused(
    resource_type: str, props: dict[str, Any], marker: str
) -> None:
    (message,) = fired("production-marker-kept", resource_type, props, "prod", True)
    assert "stack prod is production per its GitHub environment variable " in message
    assert "GKE_GPU_PRODUCTION=true" in message and marker in message
    assert "dropped cluster.production: true" in message, "the message must say what changed"
    assert "Set cluster.production: true again in Pulumi.prod.yaml" in message, "and the fix"
    assert "environments prod and prod-preview" in message, (
        "and how to make a stack non-production on purpose: outside the pull request"
    )


@pytest.mark.parametrize(
    ("resource_type", "props", "production"),
    [
        (CLUSTER, hardened_cluster(), True),
        (SERVICE, load_balancer(loadBalancerSourceRanges=["203.0.113.0/24"]), True),
        (CLUSTER, hardened_cluster(production=False), False),
        (SERVICE, {"metadata": {"name": "llm-model"}, "spec": {"clusterIP": "None"}}, True),
    ],
    ids=["marked-cluster", "marked-service", "dev-stack", "internal-only-service"],
)
def test_a_kept_marker_or_a_stack_that_is_not_production_passes(
    resource_type: str, props: dict[str, Any], production: bool
) -> None:
    assert fired("production-marker-kept", resource_type, props, "prod", production) == [], (
        "only the objects gke-gpu marks, in stacks GitHub calls production, need the marker"
    )


# --- the pack config ---------------------------------------------------------------------------


@pytest.mark.parametrize("production", [True, False])
def test_the_pack_config_sets_production_on_every_production_rule(production: bool) -> None:
    assert pack_config(production) == {
        name: {"production": production} for name in PRODUCTION_RULES
    }
    assert json.loads(json.dumps(pack_config(production))) == pack_config(production), (
        "the workflows pass it to `pulumi preview --policy-pack-config` as a JSON file"
    )


def test_every_production_rule_declares_the_production_config_property() -> None:
    schemas = {p.name: p.config_schema for p in build_policies()}
    for name, schema in schemas.items():
        if name in PRODUCTION_RULES:
            assert schema is not None and schema.properties["production"]["type"] == "boolean", (
                f"{name}: Pulumi validates the pack config against each policy's schema"
            )
            assert schema.properties["production"]["default"] is False, (
                "a run without --policy-pack-config decides production by the marker alone"
            )
        else:
            assert schema is None, f"{name} is not a production rule; it takes no config"


# --- the real program --------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_stack_files_comply_with_every_rule(stack: str, run: Callable[..., Recording]) -> None:
    recording = run(stack_config(stack), stack=stack)
    checked = {DEPLOYMENT, SERVICE, CLUSTER}
    assert checked <= {r.type for r in recording.resources}, "the test must see real workloads"
    # The pack config CI passes when the GitHub environment sets no GKE_GPU_PRODUCTION.
    production = stacks.policy_config(stack, {})["production-marker-kept"]["production"] is True
    assert production == (stack == "prod"), "prod's stack file marks it production"
    findings = [
        f"{r.name}: [{v.rule}] {v.message}"
        for r in recording.resources
        for v in evaluate_rules(r.type, r.inputs, stack, production)
    ]
    assert findings == [], f"Pulumi.{stack}.yaml must pass its own policy pack"


def test_the_prod_stack_file_without_its_marker_is_still_held_to_production(
    run: Callable[..., Recording],
) -> None:
    config = stack_config("prod")
    del config["gke-gpu:cluster"]["production"]
    del config["gke-gpu:workloads"][0]["expose"]["sourceRanges"]
    recording = run(config, stack="prod")
    fired_rules = {
        v.rule
        for r in recording.resources
        for v in evaluate_rules(r.type, r.inputs, "prod", production=True)
        if v.enforcement == "mandatory"
    }
    assert {"production-marker-kept", "load-balancers-restricted-in-prod"} <= fired_rules, (
        "a pull request that drops cluster.production and opens the endpoint fails in CI, where "
        "the GitHub environment says production"
    )


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


def _args(
    resource_type: str, props: Any, stack: str, config: dict[str, Any] | None = None
) -> ResourceValidationArgs:
    timeouts = PolicyCustomTimeouts(0, 0, 0)
    opts = PolicyResourceOptions(False, [], None, [], timeouts, [])
    urn = f"urn:pulumi:{stack}::gke-gpu::{resource_type}::r"
    return ResourceValidationArgs(resource_type, props, urn, "r", opts, None, config)


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


def test_a_policy_reads_production_from_its_own_pack_config() -> None:
    (policy,) = [p for p in build_policies() if p.name == "production-marker-kept"]
    reported: list[str] = []

    def report(message: str, urn: str | None = None) -> None:
        reported.append(message)

    unmarked = unknown_checking_proxy(hardened_cluster(production=False))
    policy.validate(_args(CLUSTER, unmarked, "prod", {"production": False}), report)
    policy.validate(_args(CLUSTER, unmarked, "prod"), report)
    assert reported == [], "without the pack config saying production, nothing is missing"
    config = pack_config(True)["production-marker-kept"]
    policy.validate(_args(CLUSTER, unmarked, "prod", config), report)
    assert len(reported) == 1 and "GKE_GPU_PRODUCTION=true" in reported[0], (
        "the config tools.stacks writes must reach the rule"
    )


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
    with_config = {p.name for p in info.policies if "production" in p.configSchema.properties}
    assert with_config == PRODUCTION_RULES, "Pulumi refuses config for a property not declared"
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


def _analyze_open_service(analyzer: analyzer_pb2_grpc.AnalyzerStub) -> list[str]:
    properties = struct_pb2.Struct()
    properties.update(load_balancer(production=False))
    request = analyzer_pb2.AnalyzeRequest(
        type=SERVICE,
        properties=properties,
        urn=f"urn:pulumi:prod::gke-gpu::{SERVICE}::llm",
        name="llm",
    )
    return sorted(d.policyName for d in analyzer.Analyze(request, timeout=30).diagnostics)


def test_the_pack_config_reaches_the_rules_the_way_pulumi_sends_it(
    analyzer: analyzer_pb2_grpc.AnalyzerStub,
) -> None:
    assert _analyze_open_service(analyzer) == [], "unmarked and unconfigured: a dev Service"
    # What the CLI sends after reading --policy-pack-config (pulumi/pulumi pkg/resource/analyzer/
    # config.go ReconcilePolicyPackConfig): each policy's properties and its enforcement level.
    levels = {"mandatory": analyzer_pb2.MANDATORY, "advisory": analyzer_pb2.ADVISORY}
    configure = analyzer_pb2.ConfigureAnalyzerRequest()
    for name, properties in json.loads(json.dumps(pack_config(True))).items():
        configure.policyConfig[name].enforcementLevel = levels[RULE_LEVELS[name]]
        configure.policyConfig[name].properties.update(properties)
    analyzer.Configure(configure, timeout=30)
    assert _analyze_open_service(analyzer) == [
        "load-balancers-restricted-in-prod",
        "production-marker-kept",
    ], "with GKE_GPU_PRODUCTION=true the unmarked open Service is production, and refused"


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


# --- alerts-notify-someone-in-prod ------------------------------------------------------------

ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"


def test_a_production_alert_policy_that_notifies_no_one_is_reported_and_only_warns(
    prod: Recording,
) -> None:
    policy = prod.of_type(ALERT_POLICY)[0].inputs
    assert policy.get("notificationChannels"), "prod's stack file names who is told"
    silent = {k: v for k, v in policy.items() if k != "notificationChannels"}
    violations = [
        v
        for v in evaluate_rules(ALERT_POLICY, silent, "prod")
        if v.rule == "alerts-notify-someone-in-prod"
    ]
    assert [v.enforcement for v in violations] == ["advisory"], (
        "without channels a production incident shows only in the console: the pack must say "
        f"so, as a warning: {violations}"
    )
    assert "monitoring.notificationChannels" in violations[0].message


def test_alert_policies_with_a_channel_or_outside_production_pass(prod: Recording) -> None:
    policy = prod.of_type(ALERT_POLICY)[0].inputs
    channel = "projects/acme-ml-prod/notificationChannels/42"
    notified = {**policy, "notificationChannels": [channel]}
    unmarked = {**policy, "userLabels": {"stack": "dev"}}
    assert fired("alerts-notify-someone-in-prod", ALERT_POLICY, notified, "prod") == []
    assert fired("alerts-notify-someone-in-prod", ALERT_POLICY, unmarked, "dev") == [], (
        "a dev stack's alerts may notify no one"
    )
