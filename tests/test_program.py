"""The whole program under the recording engine: what `pulumi up` would register, per stack."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from components.config import ConfigError, load
from tests.conftest import (
    CLUSTER,
    DEPLOYMENT,
    MINIMAL,
    NODE_POOL,
    PROVIDER,
    SERVICE,
    Run,
    stack_config,
)
from tools import summary
from tools.engine import SECRET_MASK, Recording


def _pod(recording: Recording, type_: str = DEPLOYMENT) -> dict[str, Any]:
    obj = recording.served(type_)
    spec: dict[str, Any] = obj.inputs["spec"]["template"]["spec"]
    return spec


def _gpu_pools(recording: Recording) -> list[Any]:
    return [
        r for r in recording.of_type(NODE_POOL) if r.inputs["nodeConfig"].get("guestAccelerators")
    ]


# --- the dev stack -----------------------------------------------------------------------------


def test_dev_stack_is_an_autopilot_cluster_that_destroy_can_delete(dev: Recording) -> None:
    cluster = dev.one(CLUSTER).inputs
    assert cluster["enableAutopilot"] is True, "dev is the cheapest path: Autopilot, no pools"
    assert cluster["deletionProtection"] is False, "dev must be removable by `pulumi destroy`"
    assert not dev.one(CLUSTER).protect, "a protected dev cluster would block `pulumi destroy`"


def test_autopilot_stack_creates_no_node_pools(dev: Recording) -> None:
    assert dev.of_type(NODE_POOL) == [], "Autopilot provisions GPU nodes from pod specs"


def test_autopilot_nodes_use_the_dedicated_service_account(dev: Recording) -> None:
    defaults = dev.one(CLUSTER).inputs["clusterAutoscaling"]["autoProvisioningDefaults"]
    assert defaults["serviceAccount"].startswith("gpu-dev-nodes@"), (
        "nodes must not run as the default Compute Engine account (Editor on the project)"
    )


def test_dev_workload_requests_one_l4_on_spot(dev: Recording) -> None:
    pod = _pod(dev)
    (container,) = pod["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1", (
        "a GPU pod without an nvidia.com/gpu limit is never scheduled on a GPU"
    )
    assert pod["nodeSelector"] == {
        "cloud.google.com/gke-accelerator": "nvidia-l4",
        "cloud.google.com/gke-spot": "true",
        # The default image is a CUDA 13 build: Autopilot must install its latest (R580) driver.
        "cloud.google.com/gke-gpu-driver-version": "latest",
    }, "Autopilot picks the GPU, Spot capacity and driver version from exactly these selectors"


def test_dev_endpoint_is_exposed_on_port_443_to_the_gates_tls_port(dev: Recording) -> None:
    service = dev.served(SERVICE).inputs["spec"]
    assert service["type"] == "LoadBalancer"
    assert service["ports"][0] == {
        "name": "https",
        "port": 443,
        "targetPort": 8443,
        "protocol": "TCP",
    }, "the load balancer serves HTTPS on 443, terminated by the gate"
    gate = dev.named("gate-llm-deployment").inputs["spec"]["template"]["metadata"]["labels"]
    assert service["selector"].items() <= gate.items(), "the Service must select the gate's pods"
    assert not service["selector"].items() <= _pod_labels_subset(dev).items(), (
        "the Service must never reach the model server's pods around the gate"
    )


def _pod_labels_subset(recording: Recording) -> dict[str, str]:
    labels = recording.served(DEPLOYMENT).inputs["spec"]["template"]["metadata"]["labels"]
    selector = recording.served(SERVICE).inputs["spec"]["selector"]
    return {k: labels[k] for k in selector if k in labels}


def test_stack_outputs_give_the_url_ip_and_endpoints(dev: Recording) -> None:
    outputs = dev.stack_outputs
    assert outputs["externalIp"] == "203.0.113.20", "the reserved address the certificate names"
    assert outputs["url"] == "https://203.0.113.20", "port 443 needs no port in the URL"
    assert outputs["endpoints"] == {"llm": "https://203.0.113.20"}
    assert outputs["caCertificate"].startswith("-----BEGIN CERTIFICATE-----"), (
        "clients verify the endpoint with the stack's CA: `curl --cacert`"
    )
    assert outputs["clusterName"] == "gpu-dev" and outputs["clusterMode"] == "autopilot"


def test_stack_outputs_name_the_model_each_workload_answers_to(dev: Recording) -> None:
    assert dev.stack_outputs["models"] == {"llm": ["Qwen/Qwen2.5-0.5B-Instruct"]}, (
        'the name clients put in "model" (and `python -m tools.smoke` expects in /v1/models)'
    )
    assert "models" not in dev.secret_outputs, "model names are public, not secrets"


def test_kubeconfig_output_is_a_secret_using_the_gke_auth_plugin(dev: Recording) -> None:
    assert "kubeconfig" in dev.secret_outputs, "a kubeconfig in plain text leaks cluster access"
    user = yaml.safe_load(dev.stack_outputs["kubeconfig"])["users"][0]["user"]
    assert user["exec"]["command"] == "gke-gcloud-auth-plugin", "no static token in the file"


def test_provider_kubeconfig_input_is_masked_as_a_secret(dev: Recording) -> None:
    assert dev.one(PROVIDER).inputs["kubeconfig"] == SECRET_MASK


def test_provider_survives_unrelated_cluster_changes(dev: Recording) -> None:
    provider = dev.one(PROVIDER).inputs
    assert provider["clusterIdentifier"].endswith("/clusters/gpu-dev"), (
        "without cluster_identifier, a new endpoint or CA replaces every workload"
    )


def test_every_kubernetes_object_goes_through_the_cluster_provider(dev: Recording) -> None:
    provider_urn = dev.one(PROVIDER).urn
    for obj in dev.kubernetes_objects():
        if obj.type == PROVIDER:
            continue
        assert obj.provider.startswith(provider_urn + "::"), (
            f"{obj.name} would be applied to whatever cluster the ambient kubeconfig names"
        )


def test_workload_runs_in_a_restricted_sandbox(dev: Recording) -> None:
    pod = _pod(dev)
    container = pod["containers"][0]["securityContext"]
    assert pod["automountServiceAccountToken"] is False, "the model server needs no API token"
    assert container["allowPrivilegeEscalation"] is False
    assert container["capabilities"] == {"drop": ["ALL"]}
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}


def test_workload_waits_long_enough_for_a_gpu_node_from_zero(
    dev: Recording, prod: Recording
) -> None:
    deployment = prod.served(DEPLOYMENT)
    assert deployment.custom_timeouts["create"] == "40m", (
        "scale-up from zero plus a multi-GB image pull exceeds the 10 minute default"
    )
    sleeping = dev.served(DEPLOYMENT)
    assert sleeping.inputs["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}, (
        "dev's model sleeps: KEDA scales the new Deployment to zero at once, so `pulumi up` "
        "must not wait for (or fail without) a GPU no request asked for"
    )
    startup = _pod(dev)["containers"][0]["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 1800, (
        "liveness must not kill the pod while the model is still loading"
    )


def test_namespace_enforces_restricted_pod_security(dev: Recording) -> None:
    labels = dev.served("kubernetes:core/v1:Namespace").inputs["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted", (
        "every pod the stack makes runs as non-root (tests/test_posture.py); the namespace "
        "refuses the ones that do not"
    )


# --- the prod stack ----------------------------------------------------------------------------


def test_prod_cluster_is_standard_hardened_and_protected(prod: Recording) -> None:
    cluster = prod.one(CLUSTER)
    inputs = cluster.inputs
    assert inputs["removeDefaultNodePool"] is True, "the default pool runs as the default SA"
    assert inputs["workloadIdentityConfig"]["workloadPool"] == "acme-ml-prod.svc.id.goog"
    assert inputs["enableShieldedNodes"] is True
    assert inputs["privateClusterConfig"]["enablePrivateNodes"] is True
    assert inputs["masterAuthorizedNetworksConfig"]["cidrBlocks"][0]["cidrBlock"] == (
        "203.0.113.0/24"
    )
    assert inputs["deletionProtection"] is True and cluster.protect, (
        "prod must survive an accidental `pulumi destroy`"
    )
    assert inputs["releaseChannel"] == {"channel": "STABLE"}


def test_private_nodes_get_cloud_nat_for_the_cluster_subnetwork_only(prod: Recording) -> None:
    nat = prod.one("gcp:compute/routerNat:RouterNat").inputs
    assert nat["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS", (
        "ALL_SUBNETWORKS_ALL_IP_RANGES becomes the egress of every subnet of the network and is "
        "refused by the Compute API when any other NAT serves the network in the region"
    )
    (subnet,) = nat["subnetworks"]
    assert subnet == {
        "name": "projects/acme-ml-prod/regions/us-central1/subnetworks/default",
        "sourceIpRangesToNats": ["ALL_IP_RANGES"],
    }, "the cluster's own subnet (the default network's, named default), pod ranges included"


def test_standard_cluster_creates_its_default_pool_as_the_node_account(prod: Recording) -> None:
    cluster = prod.one("gcp:container/cluster:Cluster")
    node_config = cluster.inputs.get("nodeConfig") or {}
    account = "gpu-prod-nodes@acme-ml-prod.iam.gserviceaccount.com"  # cluster.nodeServiceAccount
    assert node_config.get("serviceAccount") == account, (
        "without a cluster nodeConfig GKE creates the temporary default pool as the Compute "
        "Engine default account: the deploy identity may not act as it, and creation fails"
    )
    assert node_config.get("workloadMetadataConfig") == {"mode": "GKE_METADATA"}
    assert node_config.get("shieldedInstanceConfig") == {
        "enableSecureBoot": True,
        "enableIntegrityMonitoring": True,
    }
    assert "nodeConfig" in cluster.ignore_changes, (
        "the default pool is deleted after creation: its settings must not diff on deployed stacks"
    )


def test_prod_gpu_pool_scales_between_one_and_four_over_two_zones(prod: Recording) -> None:
    (pool,) = _gpu_pools(prod)
    inputs = pool.inputs
    assert inputs["autoscaling"]["totalMinNodeCount"] == 1
    assert inputs["autoscaling"]["totalMaxNodeCount"] == 4
    assert inputs["nodeLocations"] == ["us-central1-a", "us-central1-b"]
    assert inputs["nodeConfig"]["resourceLabels"]["gke-gpu-min-nodes-reason"] == (
        "serving-latency-slo"
    ), "a pool kept warm must say why (policy pack, billing)"


def test_gpu_pool_carries_the_accelerator_and_driver_mode(prod: Recording) -> None:
    node = _gpu_pools(prod)[0].inputs["nodeConfig"]
    (accelerator,) = node["guestAccelerators"]
    assert accelerator["type"] == "nvidia-l4" and accelerator["count"] == 1
    assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "LATEST"}, (
        "prod's vLLM image is a CUDA 13 build: only GKE's `latest` driver (R580) runs it"
    )
    assert node["machineType"] == "g2-standard-8" and node["spot"] is False


def test_gpu_pool_nodes_are_hardened(prod: Recording) -> None:
    node = _gpu_pools(prod)[0].inputs["nodeConfig"]
    assert node["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert node["shieldedInstanceConfig"]["enableSecureBoot"] is True
    assert node["serviceAccount"].startswith("gpu-prod-nodes@"), "not the default compute SA"
    assert "taints" not in node, (
        "GKE adds the nvidia.com/gpu taint itself; declaring it makes the pool drift"
    )


def test_gpu_pool_ignores_its_create_only_node_count(prod: Recording) -> None:
    assert "initialNodeCount" in _gpu_pools(prod)[0].ignore_changes, (
        "a diff on initial_node_count replaces the pool and drains every GPU node"
    )


def test_prod_workload_is_pinned_to_its_pool(prod: Recording) -> None:
    selector = _pod(prod)["nodeSelector"]
    (pool,) = _gpu_pools(prod)
    assert selector["cloud.google.com/gke-nodepool"] == pool.inputs["name"], (
        "GKE labels each node with its pool's GKE name; any other value matches no node"
    )
    assert "cloud.google.com/gke-spot" not in selector, "prod runs on on-demand capacity"


def test_prod_replicas_prefer_different_zones(prod: Recording) -> None:
    (spread,) = _pod(prod)["topologySpreadConstraints"]
    assert spread["topologyKey"] == "topology.kubernetes.io/zone"
    assert spread["whenUnsatisfiable"] == "ScheduleAnyway", (
        "a hard spread would leave a replica Pending when only one zone has a free GPU"
    )


def test_single_replica_has_no_spread_constraint(dev: Recording) -> None:
    assert "topologySpreadConstraints" not in _pod(dev)


def test_prod_load_balancer_accepts_only_the_listed_ranges(prod: Recording) -> None:
    spec = prod.served(SERVICE).inputs["spec"]
    assert spec["loadBalancerSourceRanges"] == ["203.0.113.0/24", "198.51.100.0/24"]


def test_system_pool_is_small_and_separate(prod: Recording) -> None:
    system = prod.named("gke-system").inputs
    assert system["nodeConfig"]["machineType"] == "e2-standard-2"
    assert "guestAccelerators" not in system["nodeConfig"]


# --- behaviours across configs -----------------------------------------------------------------


def test_invalid_config_registers_no_resource(standard: dict[str, Any]) -> None:
    from tools.engine import RecordingMonitor, run_program

    seen: list[str] = []
    original = RecordingMonitor.RegisterResource

    def spy(self: RecordingMonitor, request: Any) -> Any:
        if request.type != "pulumi:pulumi:Stack":  # the stack itself exists before the program
            seen.append(request.type)
        return original(self, request)

    standard["gke-gpu:nodePools"][0]["minNodes"] = 5
    RecordingMonitor.RegisterResource = spy  # type: ignore[method-assign]
    try:
        with pytest.raises(ConfigError):
            run_program(standard)
    finally:
        RecordingMonitor.RegisterResource = original  # type: ignore[method-assign]
    assert seen == [], f"a bad config must stop before any resource, registered {seen}"


def test_secret_env_becomes_a_kubernetes_secret_and_never_appears_in_plain_text(run: Run) -> None:
    token = "hf_super_secret_value_123"
    config = {
        **MINIMAL,
        "gke-gpu:workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.6.4",
                "cache": {"size": "30Gi"},
                "secretEnv": {"HF_TOKEN": "hfToken"},
            }
        ],
        "gke-gpu:hfToken": token,
    }
    recording = run(config, secret_keys=("gke-gpu:hfToken",))
    secret = recording.one("kubernetes:core/v1:Secret").inputs
    assert secret["stringData"] == {"HF_TOKEN": SECRET_MASK}, "the token travels as a secret"
    env = {e["name"]: e for e in _pod(recording)["containers"][0]["env"]}
    assert env["HF_TOKEN"] == {
        "name": "HF_TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "llm-env", "key": "HF_TOKEN"}},
    }, "the pod reads the token from the Secret, never from its own spec"
    dumped = json.dumps([r.inputs for r in recording.resources], default=str)
    assert token not in dumped, "a config secret must never reach a plan in plain text"


def test_installer_driver_deploys_googles_daemonset_for_exactly_those_pools(
    run: Run, standard: dict[str, Any]
) -> None:
    standard["gke-gpu:nodePools"][0].update(driver="installer", imageType="UBUNTU_CONTAINERD")
    recording = run(standard)
    accelerator = _gpu_pools(recording)[0].inputs["nodeConfig"]["guestAccelerators"][0]
    assert accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"] == "INSTALLATION_DISABLED"
    daemonset = recording.one("kubernetes:apps/v1:DaemonSet").inputs
    assert daemonset["metadata"] == {
        "name": "nvidia-driver-installer-ubuntu",
        "namespace": "kube-system",
        "labels": {"k8s-app": "nvidia-driver-installer"},
    }
    terms = daemonset["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert all(
        {"key": "gke-gpu/pool", "operator": "In", "values": ["l4"]} in t["matchExpressions"]
        for t in terms
    )
    init = daemonset["spec"]["template"]["spec"]["initContainers"][0]
    assert init["image"] == "gke-nvidia-installer:fixed", "Ubuntu pools need the Ubuntu installer"


def test_default_driver_deploys_no_installer(run: Run, standard: dict[str, Any]) -> None:
    assert run(standard).of_type("kubernetes:apps/v1:DaemonSet") == [], (
        "GKE installs the driver itself; a second installer would fight it"
    )


def test_time_sharing_pool_and_its_workloads_agree(run: Run, standard: dict[str, Any]) -> None:
    standard["gke-gpu:nodePools"][0]["sharing"] = {
        "strategy": "TIME_SHARING",
        "maxClientsPerGpu": 4,
    }
    recording = run(standard)
    accelerator = _gpu_pools(recording)[0].inputs["nodeConfig"]["guestAccelerators"][0]
    assert accelerator["gpuSharingConfig"] == {
        "gpuSharingStrategy": "TIME_SHARING",
        "maxSharedClientsPerGpu": 4,
    }
    selector = _pod(recording)["nodeSelector"]
    assert selector["cloud.google.com/gke-gpu-sharing-strategy"] == "time-sharing"
    assert selector["cloud.google.com/gke-max-shared-clients-per-gpu"] == "4"


def test_statefulset_gets_its_volume_claim_and_headless_service(run: Run) -> None:
    config = {
        **MINIMAL,
        "gke-gpu:workloads": [
            {
                "name": "notebook",
                "kind": "StatefulSet",
                "image": "tensorflow/tensorflow:2.17.0-gpu-jupyter",
                "gpu": {"type": "nvidia-tesla-t4"},
                "port": 8888,
                "storage": {"size": "100Gi", "mountPath": "/tf"},
                "expose": {"port": 443},
            }
        ],
    }
    recording = run(config)
    statefulset = recording.one("kubernetes:apps/v1:StatefulSet").inputs["spec"]
    (claim,) = statefulset["volumeClaimTemplates"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "100Gi"
    mounts = statefulset["template"]["spec"]["containers"][0]["volumeMounts"]
    assert {"name": "data", "mountPath": "/tf"} in mounts
    assert statefulset["serviceName"] == "notebook-headless"


def _notebook(**storage: Any) -> dict[str, Any]:
    workload = {
        "name": "notebook",
        "kind": "StatefulSet",
        "image": "tensorflow/tensorflow:2.17.0-gpu-jupyter",
        "gpu": {"type": "nvidia-tesla-t4"},
        "port": 8888,
        "storage": {"size": "100Gi", "mountPath": "/tf", **storage},
    }
    return {**MINIMAL, "gke-gpu:workloads": [workload]}


def _plan_disks(config: dict[str, Any]) -> str:
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    loaded = load(raw, project="acme-ml-test", region="us-central1", stack="test")
    (line,) = [
        line for line in summary.workload_lines(loaded, loaded.workloads[0]) if "disks:" in line
    ]
    return line


@pytest.mark.parametrize(
    ("retention", "kept"), [(None, "Retain"), ("Retain", "Retain"), ("Delete", "Delete")]
)
def test_a_statefulsets_claims_outlive_it_unless_the_stack_says_delete_and_the_plan_says_which(
    run: Run, retention: str | None, kept: str
) -> None:
    config = _notebook(**({"retention": retention} if retention else {}))
    spec = run(config).one("kubernetes:apps/v1:StatefulSet").inputs["spec"]
    assert spec["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": kept,
        "whenScaled": "Retain",
    }, "the stack's storage.retention must reach Kubernetes, Retain unless it says Delete"
    line = _plan_disks(config)
    assert "one 100Gi disk per pod (claims data-notebook-0, -1, ...), kept when scaled" in line
    if kept == "Retain":
        assert "kept and still billed" in line, (
            "a reviewer must see that removing the workload leaves disks that cost money"
        )
    else:
        assert "deleted with it, data and all (storage.retention: Delete)" in line
    assert "`pulumi destroy` deletes the namespace and the claims in it" in line, (
        "the namespace goes at destroy, taking the claims whatever the policy says"
    )


def test_job_runs_to_completion_without_probes(run: Run) -> None:
    config = {
        **MINIMAL,
        "gke-gpu:workloads": [
            {
                "name": "vector-add",
                "kind": "Job",
                "image": "nvidia/samples:vectoradd-cuda12.5.0",
                "port": None,
            }
        ],
    }
    recording = run(config)
    job = recording.one("kubernetes:batch/v1:Job").inputs["spec"]
    pod = job["template"]["spec"]
    assert pod["restartPolicy"] == "Never" and job["backoffLimit"] == 3
    assert "readinessProbe" not in pod["containers"][0]
    assert recording.of_type(SERVICE) == [] and "url" not in recording.stack_outputs


# --- update safety -----------------------------------------------------------------------------

INFRA = (CLUSTER, NODE_POOL, PROVIDER, "gcp:serviceaccount/account:Account")


def _inputs_by_urn(recording: Recording, types: tuple[str, ...]) -> dict[str, Any]:
    return {r.urn: r.inputs for r in recording.resources if r.type in types}


def test_editing_only_a_workload_leaves_cluster_pools_and_provider_unchanged(
    run: Run, standard: dict[str, Any]
) -> None:
    before = run(copy.deepcopy(standard))
    workload = standard["gke-gpu:workloads"][0]
    workload.update(image="vllm/vllm-openai:v0.6.5", replicas=2, env={"LOG_LEVEL": "debug"})
    after = run(standard)
    assert _inputs_by_urn(after, INFRA) == _inputs_by_urn(before, INFRA), (
        "a workload edit must never touch the cluster, its pools or the provider"
    )
    assert after.served(DEPLOYMENT).inputs != before.served(DEPLOYMENT).inputs, "the edit must land"


def test_running_the_program_twice_gives_identical_inputs(run: Run) -> None:
    config = stack_config("prod")
    first, second = run(config, stack="prod"), run(config, stack="prod")
    # Registration order is asynchronous; what must not vary is each resource's inputs.
    assert {r.urn: r.inputs for r in first.resources} == {
        r.urn: r.inputs for r in second.resources
    }, "non-deterministic inputs would show a diff on every `pulumi up`"


def test_a_full_pool_rolls_out_by_replacing_pods_and_keeps_a_disruption_budget(
    run: Run, standard: dict[str, Any]
) -> None:
    standard["gke-gpu:nodePools"][0]["maxNodes"] = 2
    standard["gke-gpu:workloads"][0]["replicas"] = 2
    recording = run(standard)
    strategy = recording.served(DEPLOYMENT).inputs["spec"]["strategy"]
    assert strategy == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
    }, "with both GPUs of the pool in use, a surge pod would wait forever for a third"
    (pdb,) = [
        r
        for r in recording.of_type("kubernetes:policy/v1:PodDisruptionBudget")
        if r.name == "workload-llm-pdb"
    ]
    assert pdb.inputs["spec"]["maxUnavailable"] == 1, (
        "a node drain must not evict both replicas at once"
    )


def test_a_single_replica_on_a_one_node_pool_is_recreated(
    run: Run, standard: dict[str, Any]
) -> None:
    standard["gke-gpu:nodePools"][0]["maxNodes"] = 1
    recording = run(standard)
    assert recording.served(DEPLOYMENT).inputs["spec"]["strategy"] == {"type": "Recreate"}, (
        "the only GPU is held by the running pod: the new one can start only after it stops"
    )
    assert not recording.of_type("kubernetes:policy/v1:PodDisruptionBudget", outside_gates=True), (
        "a budget of one replica with maxUnavailable 1 protects nothing"
    )
