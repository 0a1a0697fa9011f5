"""Config rules as plain functions: every rule has a valid and an invalid case."""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pytest

from components.config import ConfigError, StackConfig, load
from components.facts import pins

REGION = "us-central1"


def _load(raw: dict[str, Any], secret_keys: frozenset[str] = frozenset()) -> StackConfig:
    return load(raw, project="acme-ml", region=REGION, stack="dev", secret_keys=secret_keys)


def _problems(raw: dict[str, Any], **kwargs: Any) -> list[str]:
    with pytest.raises(ConfigError) as info:
        _load(raw, **kwargs)
    return info.value.problems


def _standard(**pool: Any) -> dict[str, Any]:
    return {
        "cluster": {"mode": "standard"},
        "nodePools": [{"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, **pool}],
        "workloads": [
            {"name": "app", "image": "app:1.0", "port": 8000, "gpu": {"type": "nvidia-l4"}}
        ],
    }


def _autopilot_workload(**workload: Any) -> dict[str, Any]:
    return {"workloads": [{"name": "app", "image": "app:1.0", "port": 8000, **workload}]}


# --- defaults ------------------------------------------------------------------------------


def test_only_project_and_region_give_an_exposed_gpu_endpoint_on_autopilot() -> None:
    config = _load({})
    assert config.cluster.mode == "autopilot", "the zero-config path needs no node pools"
    (workload,) = config.workloads
    assert workload.gpu_type == "nvidia-l4" and workload.spec.gpu.count == 1, (
        "the default workload must request a GPU, or the stack is not a GPU service"
    )
    assert (
        workload.expose is not None
        and workload.expose.spec.port == 443
        and workload.expose.spec.tls
    ), "a stack with only gcp:project and gcp:region must still yield an HTTPS endpoint"
    assert workload.expose.static_ip, "its certificate names an address reserved beforehand"
    assert workload.probe is not None, "traffic must wait for the model server to be ready"


def test_cluster_name_defaults_to_the_stack_name() -> None:
    assert _load({}).cluster.name == "gke-gpu-dev", "one cluster per stack, named after it"


def test_deletion_protection_is_on_unless_turned_off() -> None:
    assert _load({}).cluster.deletion_protection, "a forgotten setting must not lose a cluster"


def test_cluster_location_defaults_to_the_region() -> None:
    assert _load({}).cluster.location == REGION


def test_a_pool_without_machine_type_gets_the_smallest_that_carries_its_gpus() -> None:
    raw = _standard()
    raw["workloads"][0]["resources"] = {"cpu": "2", "memory": "8Gi"}
    assert _load(raw).node_pools[0].machine_type == "g2-standard-4", (
        "the cheapest machine that carries one L4 and holds the workload is g2-standard-4"
    )


def test_a_pool_without_machine_type_grows_to_fit_its_workloads_requests() -> None:
    raw = _standard()
    raw["workloads"][0]["resources"] = {"cpu": "6", "memory": "24Gi"}
    assert _load(raw).node_pools[0].machine_type == "g2-standard-8", (
        "a 6-CPU, 24Gi pod does not fit g2-standard-4 (4 vCPU, 16 GB); the pool must grow"
    )


def test_a_t4_pool_default_fits_the_default_workload_resources() -> None:
    raw = _standard()
    raw["nodePools"][0]["gpu"]["type"] = "nvidia-tesla-t4"
    raw["workloads"][0]["gpu"]["type"] = "nvidia-tesla-t4"
    machine = _load(raw).node_pools[0].machine_type
    assert machine.startswith("n1-") and machine != "n1-standard-1", (
        "the default 4 CPU / 16Gi pod would never schedule on n1-standard-1"
    )


# --- reporting -----------------------------------------------------------------------------


def test_every_problem_is_reported_at_once() -> None:
    raw = _standard(minNodes=3, maxNodes=1, driver="latest", imageType="UBUNTU_CONTAINERD")
    raw["workloads"][0]["kind"] = "Job"
    raw["workloads"][0]["expose"] = {"port": 80}
    problems = _problems(raw)
    assert len(problems) == 3, f"one run must list every problem, got {problems}"


def test_config_error_is_a_pulumi_run_error_so_users_see_no_traceback() -> None:
    assert issubclass(ConfigError, pulumi.RunError)


def test_error_names_the_key_path_the_value_and_the_fix() -> None:
    raw = _standard()
    raw["nodePools"][0]["gpu"] = {"type": "nvidia-tesla-t4", "count": 3}
    (problem,) = [p for p in _problems(raw) if "count" in p]
    assert problem == (
        "nodePools[0].gpu.count: 3 GPUs is not a valid count for nvidia-tesla-t4 "
        "(allowed: 1, 2, 4). Set count to 4."
    )


def test_unknown_keys_are_reported_with_the_allowed_ones() -> None:
    (problem,) = _problems({"cluster": {"mdoe": "standard"}})
    assert problem.startswith("cluster.mdoe: unknown key") and "mode" in problem


def test_unknown_top_level_key_is_reported() -> None:
    (problem,) = _problems({"nodepools": []})
    assert problem.startswith("gke-gpu:nodepools: unknown key")


def test_missing_project_and_region_are_both_reported() -> None:
    with pytest.raises(ConfigError) as info:
        load({}, project=None, region=None, stack="dev")
    assert [p.split(":")[0] + ":" + p.split(":")[1] for p in info.value.problems] == [
        "gcp:project",
        "gcp:region",
    ]


def test_a_broken_cluster_block_does_not_hide_node_pool_problems() -> None:
    raw = _standard(minNodes=2, maxNodes=1)
    raw["cluster"]["bogus"] = True
    problems = _problems(raw)
    assert any(p.startswith("nodePools[0].minNodes") for p in problems), problems
    assert not any("exist only in Standard" in p for p in problems), (
        "the readable mode must still drive the checks when another cluster key is wrong"
    )


# --- GPU types and counts --------------------------------------------------------------------


def test_retired_gpu_names_its_replacement() -> None:
    (problem,) = _problems(_autopilot_workload(gpu={"type": "nvidia-tesla-k80"}))
    assert problem.startswith("workloads[0].gpu.type: 'nvidia-tesla-k80' is no longer offered")
    assert "nvidia-tesla-t4" in problem, "the message must say what replaces a K80"


def test_unknown_gpu_type_lists_the_known_ones() -> None:
    (problem,) = _problems(_autopilot_workload(gpu={"type": "nvidia-rtx-4090"}))
    assert "is not a GKE GPU type" in problem and "nvidia-l4" in problem


def test_a_retired_gpu_is_reported_even_when_the_same_item_has_other_errors() -> None:
    raw = _standard()
    raw["nodePools"][0] = {"name": "BAD_NAME", "gpu": {"type": "nvidia-tesla-k80"}}
    problems = _problems(raw)
    assert any("nodePools[0].gpu.type: 'nvidia-tesla-k80'" in p for p in problems), problems


def test_autopilot_rejects_a_per_pod_gpu_count_it_does_not_offer() -> None:
    (problem,) = _problems(_autopilot_workload(gpu={"type": "nvidia-l4", "count": 3}))
    assert problem.startswith("workloads[0].gpu.count: 3 GPUs per pod is not allowed")
    assert "1, 2, 4, 8" in problem


def test_autopilot_accepts_eight_l4s_per_pod() -> None:
    raw = _autopilot_workload(gpu={"type": "nvidia-l4", "count": 8})
    assert _load(raw).workloads[0].spec.gpu.count == 8


def test_autopilot_admits_p100_as_gkes_own_admission_message_lists_it() -> None:
    # GKE Warden (2025) lists nvidia-tesla-p100 among Autopilot's allowed GPU types.
    (workload,) = _load(_autopilot_workload(gpu={"type": "nvidia-tesla-p100"})).workloads
    assert workload.gpu_type == "nvidia-tesla-p100", "refusing what GKE admits is a wrong refusal"


def test_autopilot_rejects_a_gpu_count_per_pod_the_type_has_no_node_for() -> None:
    (problem,) = _problems(_autopilot_workload(gpu={"type": "nvidia-h200-141gb", "count": 1}))
    assert "Autopilot" in problem and "8" in problem, "H200 comes only 8 to a node"


def test_standard_pool_rejects_a_gpu_count_per_node_the_type_does_not_offer() -> None:
    problems = _problems(_standard(gpu={"type": "nvidia-l4", "count": 3}))
    assert problems[0].startswith("nodePools[0].gpu.count: 3 GPUs is not a valid count")


# --- machine types ---------------------------------------------------------------------------


def test_machine_type_of_the_wrong_family_is_rejected_with_the_valid_ones() -> None:
    (problem,) = _problems(_standard(machineType="n1-standard-8"))
    assert problem.startswith(
        "nodePools[0].machineType: 'n1-standard-8' is N1, but nvidia-l4 runs on G2 machine types"
    )
    assert "g2-standard-4" in problem


def test_machine_type_too_small_for_the_gpu_count_is_rejected() -> None:
    problems = _problems(
        _standard(gpu={"type": "nvidia-l4", "count": 2}, machineType="g2-standard-8")
    )
    assert problems[0].startswith(
        "nodePools[0].machineType: 'g2-standard-8' carries 1 x nvidia-l4, not 2"
    )


def test_valid_explicit_machine_type_is_kept() -> None:
    assert _load(_standard(machineType="g2-standard-16")).node_pools[0].machine_type == (
        "g2-standard-16"
    )


def test_workload_larger_than_an_explicit_machine_type_is_rejected() -> None:
    raw = _standard(machineType="g2-standard-4")
    raw["workloads"][0]["resources"] = {"cpu": "8", "memory": "8Gi"}
    (problem,) = _problems(raw)
    assert problem.startswith(
        "workloads[0].resources.cpu: 8 CPU is more than the 3.323 CPU a node of node pool 'l4'"
    )


# --- drivers ---------------------------------------------------------------------------------


def test_latest_driver_needs_cos() -> None:
    (problem,) = _problems(_standard(driver="latest", imageType="UBUNTU_CONTAINERD"))
    assert problem.startswith("nodePools[0].driver: 'latest' needs imageType COS_CONTAINERD")


def test_latest_driver_on_cos_is_valid() -> None:
    assert _load(_standard(driver="latest")).node_pools[0].driver == "latest"


def test_installer_driver_on_ubuntu_is_valid() -> None:
    pool = _load(_standard(driver="installer", imageType="UBUNTU_CONTAINERD")).node_pools[0]
    assert (pool.driver, pool.image_type) == ("installer", "UBUNTU_CONTAINERD")


def test_installer_driver_outside_standard_is_rejected() -> None:
    raw = _standard(driver="installer")
    raw["cluster"]["mode"] = "autopilot"
    problems = _problems(raw)
    assert any(p.startswith("nodePools: node pools exist only in Standard") for p in problems)


def test_unknown_driver_mode_lists_the_allowed_ones() -> None:
    (problem,) = _problems(_standard(driver="manual"))
    assert problem.startswith("nodePools[0].driver: 'manual'") and "'installer'" in problem


# --- modes and pools -------------------------------------------------------------------------


def test_node_pools_on_autopilot_are_rejected() -> None:
    raw = _standard()
    del raw["cluster"]
    problems = _problems(raw)
    assert problems[0].startswith("nodePools: node pools exist only in Standard clusters")


def test_standard_without_node_pools_is_rejected() -> None:
    raw = _standard()
    del raw["nodePools"]
    assert _problems(raw) == [
        "nodePools: a Standard cluster needs at least one GPU node pool for its workloads. "
        "Add one, e.g. {name: l4, gpu: {type: nvidia-l4, count: 1}}."
    ]


def test_existing_mode_without_a_kubeconfig_or_context_is_rejected() -> None:
    # Every other existing-mode rule is in tests/test_existing.py.
    (problem,) = _problems({"cluster": {"mode": "existing"}})
    assert problem.startswith("cluster: mode 'existing' needs to know which cluster"), problem


def test_min_nodes_above_max_nodes_is_rejected() -> None:
    (problem,) = _problems(_standard(minNodes=3, maxNodes=2))
    assert (
        problem == "nodePools[0].minNodes: 3 is more than maxNodes (2). Set minNodes <= maxNodes."
    )


def test_min_nodes_equal_to_max_nodes_is_valid() -> None:
    assert _load(_standard(minNodes=2, maxNodes=2)).node_pools[0].min_nodes == 2


def test_zone_outside_the_region_is_rejected() -> None:
    (problem,) = _problems(_standard(zones=["europe-west4-a"]))
    assert problem.startswith("nodePools[0].zones[0]: 'europe-west4-a' is not in the cluster's")


def test_zones_of_the_region_are_valid() -> None:
    pool = _load(_standard(zones=["us-central1-a", "us-central1-b"])).node_pools[0]
    assert pool.zones == ("us-central1-a", "us-central1-b")


def test_zone_other_than_a_zonal_clusters_own_is_rejected() -> None:
    raw = _standard(zones=["us-central1-b"])
    raw["cluster"]["location"] = "us-central1-a"
    (problem,) = _problems(raw)
    assert "differs from the zonal cluster's location" in problem


def test_autopilot_cluster_in_a_zone_is_rejected() -> None:
    (problem,) = _problems({"cluster": {"location": "us-central1-a"}})
    assert problem.startswith("cluster.location: Autopilot clusters are regional")


def test_cluster_location_in_another_region_is_rejected() -> None:
    (problem,) = _problems({"cluster": {"location": "europe-west4"}})
    assert problem.startswith("cluster.location: 'europe-west4' is neither the region")


def test_duplicate_pool_names_are_rejected() -> None:
    raw = _standard()
    raw["nodePools"].append(copy.deepcopy(raw["nodePools"][0]))
    assert "nodePools[1].name: 'l4' is used twice. Rename one." in _problems(raw)


# --- sharing and MIG -------------------------------------------------------------------------


def test_time_sharing_pool_is_valid_and_serves_one_gpu_per_container() -> None:
    config = _load(_standard(sharing={"strategy": "TIME_SHARING", "maxClientsPerGpu": 4}))
    assert config.node_pools[0].sharing is not None
    assert config.workloads[0].node_pool is not None


def test_a_shared_gpu_serves_only_one_gpu_per_container() -> None:
    raw = _standard(gpu={"type": "nvidia-l4", "count": 2}, sharing={"strategy": "MPS"})
    raw["workloads"][0]["gpu"]["count"] = 2
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].gpu: no node pool fits 2 x nvidia-l4")
    assert "shared (1 GPU per container)" in problem


def test_mig_partition_on_a_gpu_without_mig_is_rejected() -> None:
    (problem,) = _problems(_standard(partitionSize="1g.10gb"))
    assert problem.startswith("nodePools[0].partitionSize: '1g.10gb' is not a MIG partition")


def test_mig_partition_of_the_wrong_size_lists_the_valid_ones() -> None:
    raw = _standard(gpu={"type": "nvidia-tesla-a100", "count": 1}, partitionSize="1g.10gb")
    raw["workloads"][0]["gpu"]["type"] = "nvidia-tesla-a100"
    (problem,) = _problems(raw)
    assert "1g.5gb" in problem, "A100 40GB's smallest partition is 1g.5gb"


def test_valid_mig_partition_pins_workloads_to_the_partition() -> None:
    raw = _standard(gpu={"type": "nvidia-tesla-a100", "count": 1}, partitionSize="1g.5gb")
    raw["workloads"][0]["gpu"]["type"] = "nvidia-tesla-a100"
    raw["workloads"][0]["resources"] = {"cpu": "4", "memory": "16Gi"}
    pool = _load(raw).workloads[0].node_pool
    assert pool is not None and pool.partition_size == "1g.5gb"


def test_mps_with_mig_is_rejected() -> None:
    raw = _standard(
        gpu={"type": "nvidia-tesla-a100", "count": 1},
        partitionSize="1g.5gb",
        sharing={"strategy": "MPS"},
    )
    raw["workloads"][0]["gpu"]["type"] = "nvidia-tesla-a100"
    assert any("MPS cannot be combined with MIG" in p for p in _problems(raw))


# --- workloads fit pools ---------------------------------------------------------------------


def test_workload_without_a_fitting_pool_is_rejected() -> None:
    raw = _standard()
    raw["workloads"][0]["gpu"] = {"type": "nvidia-tesla-t4", "count": 1}
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].gpu: no node pool fits 1 x nvidia-tesla-t4")
    assert "l4: 1 x nvidia-l4" in problem, "the message must list the pools that exist"


def test_spot_workload_needs_a_spot_pool() -> None:
    raw = _standard()
    raw["workloads"][0]["spot"] = True
    (problem,) = _problems(raw)
    assert "1 x nvidia-l4 on Spot" in problem


def test_workload_goes_to_the_smallest_pool_that_fits() -> None:
    raw = _standard(gpu={"type": "nvidia-l4", "count": 4})
    raw["nodePools"].append({"name": "l4-single", "gpu": {"type": "nvidia-l4", "count": 1}})
    pool = _load(raw).workloads[0].node_pool
    assert pool is not None and pool.name == "l4-single", (
        "a 1-GPU pod on a 4-GPU node would leave three GPUs paid for and idle"
    )


def test_workload_needing_more_gpus_than_a_node_has_is_rejected() -> None:
    raw = _standard()
    raw["workloads"][0]["gpu"]["count"] = 2
    assert "no node pool fits 2 x nvidia-l4" in _problems(raw)[0]


# --- workload shape --------------------------------------------------------------------------


def test_storage_on_a_deployment_is_rejected() -> None:
    raw = _autopilot_workload(storage={"size": "100Gi", "mountPath": "/data"})
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].storage: only a StatefulSet gets a volume claim")


def test_storage_on_a_statefulset_is_valid() -> None:
    raw = _autopilot_workload(kind="StatefulSet", storage={"size": "100Gi", "mountPath": "/data"})
    storage = _load(raw).workloads[0].spec.storage
    assert storage is not None and storage.size == "100Gi"


def test_expose_on_a_job_is_rejected() -> None:
    (problem,) = _problems(_autopilot_workload(kind="Job", expose={"port": 80}, probe=None))
    assert problem.startswith("workloads[0].expose: a Job runs to completion")


def test_job_without_expose_is_valid_and_gets_no_probe() -> None:
    workload = _load(_autopilot_workload(kind="Job")).workloads[0]
    assert workload.spec.kind == "Job" and workload.probe is None, (
        "a Job's pods serve nothing, so a readiness probe would only delay completion"
    )


def test_expose_without_a_port_is_rejected() -> None:
    raw = _autopilot_workload(port=None, probe=None, expose={"port": 80})
    assert any("has no port to expose" in p for p in _problems(raw))


def test_invalid_workload_name_is_rejected_with_the_naming_rule() -> None:
    (problem,) = _problems(_autopilot_workload(name="My_App"))
    assert problem.startswith("workloads[0].name: 'My_App' is not a valid Kubernetes name")


def test_invalid_pool_name_is_rejected_with_the_naming_rule() -> None:
    problems = _problems(_standard(name="gpu_pool"))
    assert problems[0].startswith("nodePools[0].name: 'gpu_pool' is not a valid GKE name")


def test_invalid_cidr_in_source_ranges_is_rejected() -> None:
    (problem,) = _problems(_autopilot_workload(expose={"sourceRanges": ["10.0.0.1/8"]}))
    assert problem.startswith("workloads[0].expose.sourceRanges[0]: '10.0.0.1/8' is not a CIDR")


def test_invalid_cidr_in_master_authorized_networks_is_rejected() -> None:
    (problem,) = _problems({"cluster": {"masterAuthorizedNetworks": ["office"]}})
    assert problem.startswith("cluster.masterAuthorizedNetworks[0]: 'office' is not a CIDR")


def test_valid_cidrs_are_kept() -> None:
    raw = _autopilot_workload(expose={"sourceRanges": ["203.0.113.0/24", "2001:db8::/32"]})
    expose = _load(raw).workloads[0].expose
    assert expose is not None and expose.spec.source_ranges == ["203.0.113.0/24", "2001:db8::/32"]


def test_bad_memory_quantity_says_how_to_write_one() -> None:
    (problem,) = _problems(_autopilot_workload(resources={"memory": "16GB"}))
    assert problem.startswith("workloads[0].resources.memory: '16GB' is not a memory quantity")


def test_node_port_on_gke_is_rejected() -> None:
    (problem,) = _problems(_autopilot_workload(expose={"type": "NodePort"}))
    assert problem.startswith("workloads[0].expose.type: NodePort is for existing clusters")


def test_duplicate_workload_names_are_rejected() -> None:
    raw = {"workloads": [{"name": "a", "image": "a:1"}, {"name": "a", "image": "b:1"}]}
    assert _problems(raw) == ["workloads[1].name: 'a' is used twice. Rename one."]


def test_a_workload_named_like_the_gates_label_is_refused() -> None:
    """Its pods would carry app.kubernetes.io/name: gke-gpu-gate, which KEDA's interceptor admits
    from the workload namespace: a way to every sleeping model that skips its gate's key."""
    (problem,) = _problems(_autopilot_workload(name="gke-gpu-gate"))
    assert problem.startswith("workloads[0].name: 'gke-gpu-gate' is reserved"), problem
    assert "label of every gate's pods" in problem and "Rename the workload." in problem


@pytest.mark.parametrize(
    ("name", "expose", "clash"),
    [
        ("default-deny", None, "NetworkPolicy called 'default-deny-egress', which is the "),
        ("default-deny", {"port": 443}, "NetworkPolicy called 'default-deny-ingress', which is "),
    ],
    ids=["egress", "ingress"],
)
def test_a_workload_whose_policy_would_take_the_namespaces_default_deny_name_is_refused(
    name: str, expose: dict[str, Any] | None, clash: str
) -> None:
    raw = _autopilot_workload(name=name, **({"expose": expose} if expose else {}))
    problems = _problems(raw)
    assert any(p.startswith(f"workloads[0].name: {name!r} makes a {clash}") for p in problems), (
        f"the workload's own policy would replace the namespace's default deny: {problems}"
    )


def test_a_workload_named_like_another_ones_gate_objects_is_refused_whatever_its_kind() -> None:
    """`llm-gate` as a StatefulSet makes no Deployment `llm-gate`, but its egress policy and its
    disruption budget have the names of llm's gate's: one would overwrite the other's."""
    raw = {
        "workloads": [
            {"name": "llm", "image": "app:1.0", "port": 8000, "expose": {"port": 443}},
            {"name": "llm-gate", "kind": "StatefulSet", "image": "app:1.0", "port": 8000},
        ]
    }
    problems = _problems(raw)
    assert problems == [
        "workloads[1].name: 'llm-gate' makes a NetworkPolicy called 'llm-gate-egress', which the "
        "workload 'llm' also makes. Rename one of them."
    ], problems


# --- secrets ---------------------------------------------------------------------------------


def test_secret_env_needs_its_key_set_as_a_secret() -> None:
    (problem,) = _problems(_autopilot_workload(secretEnv={"HF_TOKEN": "hfToken"}))
    assert problem.startswith("workloads[0].secretEnv.HF_TOKEN: config key 'hfToken' is not set")
    assert "pulumi config set --secret gke-gpu:hfToken" in problem


def test_secret_env_with_its_secret_set_is_valid() -> None:
    raw = _autopilot_workload(secretEnv={"HF_TOKEN": "hfToken"})
    config = _load(raw, secret_keys=frozenset({"hfToken"}))
    assert config.workloads[0].spec.secret_env == {"HF_TOKEN": "hfToken"}
    assert config.secrets == ("hfToken",)


def test_a_secret_stored_in_plain_text_is_rejected() -> None:
    raw = _autopilot_workload(secretEnv={"HF_TOKEN": "hfToken"})
    raw["hfToken"] = "hf_plaintext"
    problems = _problems(raw)
    assert any("not set as a secret" in p for p in problems), problems


# --- system pool and cluster ---------------------------------------------------------------


def test_system_pool_on_autopilot_is_rejected() -> None:
    (problem,) = _problems({"cluster": {"systemPool": {"nodes": 2}}})
    assert problem.startswith("cluster.systemPool: Autopilot manages its own nodes")


def test_kubeconfig_on_a_gke_mode_is_rejected() -> None:
    (problem,) = _problems({"cluster": {"kubeconfig": "apiVersion: v1"}})
    assert problem.startswith("cluster.kubeconfig/context: only for mode 'existing'")


def test_min_nodes_reason_must_be_a_label_value() -> None:
    problems = _problems(_standard(minNodesReason="Latency SLO!"))
    assert problems[0].startswith(
        "nodePools[0].minNodesReason: 'Latency SLO!' is not a valid label"
    )


# --- capacity and rollouts -----------------------------------------------------------------


def test_more_replicas_than_the_pool_can_hold_at_max_nodes_is_rejected() -> None:
    raw = _standard(maxNodes=1)
    raw["workloads"][0]["replicas"] = 3
    (problem,) = _problems(raw)
    assert problem.startswith("nodePools[0].maxNodes: 1 node(s) of g2-standard-8 hold"), problem
    assert "workloads[0] (3 pods, 1 per node)" in problem and "Raise maxNodes to 3" in problem, (
        "two of three pods would stay Pending forever: the error names replicas and maxNodes"
    )


def test_time_sharing_counts_each_shared_slot_as_capacity() -> None:
    raw = _standard(maxNodes=1, sharing={"strategy": "TIME_SHARING", "maxClientsPerGpu": 4})
    raw["workloads"][0]["replicas"] = 4
    assert _load(raw).workloads[0].replicas == 4, "one L4 time-shared by 4 holds 4 pods"


def test_a_pool_with_a_spare_gpu_at_max_scale_gets_a_surging_rollout() -> None:
    raw = _standard(maxNodes=2)
    assert _load(raw).workloads[0].rollout == "surge", (
        "1 replica on a pool of up to 2 GPUs: the surge pod gets the second GPU"
    )


def test_a_pool_full_at_max_scale_replaces_pods_instead_of_surging() -> None:
    raw = _standard(maxNodes=2)
    raw["workloads"][0]["replicas"] = 2
    assert _load(raw).workloads[0].rollout == "replace", (
        "a surge pod would wait forever for a third GPU the pool cannot add"
    )


def test_an_explicit_rollout_is_kept() -> None:
    raw = _standard(maxNodes=1)
    raw["workloads"][0]["rollout"] = "surge"
    assert _load(raw).workloads[0].rollout == "surge"


# --- allocatable, drivers (issue 9, 10) ----------------------------------------------------

VLLM = "vllm/vllm-openai:v0.29.0"  # components/facts/pins.py VLLM_RELEASES, a CUDA 13 build
CUDA13_DIGEST = "sha256:c2914767605584b6d8f45686b82de173ecc99e781897aa3d0a66dacd72c51ae1"
CUDA12_DIGEST = "sha256:7ef5a35d1ef8ce2cf9d671dd91eec6e367c5849262e0362b4d3d4a26be0d87d2"


def test_unset_resources_on_a_default_machine_get_a_node_that_leaves_room_for_a_model_server() -> (
    None
):
    pool = _load(_standard()).node_pools[0]
    assert pool.machine_type == "g2-standard-8", (
        "g2-standard-4 leaves a pod 3.3 CPU / 12.2 GiB: too little for the default server"
    )


def test_unset_resources_on_a_named_machine_take_the_share_that_fits_it() -> None:
    raw = _standard(machineType="n1-standard-4")
    raw["nodePools"][0]["gpu"]["type"] = "nvidia-tesla-t4"
    raw["workloads"][0]["gpu"]["type"] = "nvidia-tesla-t4"
    workload = _load(raw).workloads[0]
    # n1-standard-4: allocatable 3920m / 12377 MiB less 597m / 800Mi of system pods, 95% of it
    # (the 5% headroom of components/facts/allocatable.py DERIVED_SHARE).
    assert (workload.cpu, workload.memory) == ("3156m", "10998Mi"), (
        "seed 000 (T4 on n1-standard-4, no resources) must schedule: requests within allocatable"
    )


def test_n1_custom_machine_types_carry_a_t4() -> None:
    raw = _standard(machineType="n1-custom-4-20480")
    raw["nodePools"][0]["gpu"]["type"] = "nvidia-tesla-t4"
    raw["workloads"][0]["gpu"]["type"] = "nvidia-tesla-t4"
    assert _load(raw).node_pools[0].machine_type == "n1-custom-4-20480", (
        "seed 003's 5 GB per vCPU custom machine takes attached GPUs"
    )


def test_a_request_above_the_pods_share_of_the_node_names_both_numbers() -> None:
    raw = _standard(machineType="g2-standard-8")
    raw["workloads"][0]["resources"] = {"cpu": "4", "memory": "30Gi"}
    (problem,) = _problems(raw)
    assert problem.startswith(
        "workloads[0].resources.memory: 30.0 GiB is more than the 27.0 GiB"
    ), problem


def test_a_request_one_mib_above_the_room_shows_two_different_numbers() -> None:
    """27,613 MiB on a g2-standard-8 (room 27,612.7 MiB) both round to 27.0 GiB: the message must
    not say '27.0 GiB is more than the 27.0 GiB' (tests/real/test_fit_agrees.py finds this
    boundary with the real scheduler)."""
    raw = _standard(machineType="g2-standard-8")
    raw["workloads"][0]["resources"] = {"cpu": "1", "memory": "27613Mi"}
    (problem,) = _problems(raw)
    assert problem.startswith(
        "workloads[0].resources.memory: 28,954,329,088 bytes is more than the 28,953,968,378 bytes"
    ), problem


def test_the_default_image_on_a_standard_pool_gets_the_latest_driver() -> None:
    raw = _standard()
    raw["workloads"][0]["image"] = VLLM
    assert _load(raw).node_pools[0].driver == "latest", (
        "a CUDA 13 image needs R580, which GKE installs only as its `latest` driver"
    )


def test_the_default_image_on_a_pool_pinned_to_the_default_driver_is_rejected() -> None:
    raw = _standard(driver="default")
    raw["workloads"][0]["image"] = VLLM
    (problem,) = _problems(raw)
    assert problem.startswith(f"workloads[0].image: {VLLM} is built for CUDA 13.0"), problem
    assert "set nodePools[0].driver: latest" in problem


def test_the_default_image_on_a_v100_is_rejected_naming_the_cuda_12_build() -> None:
    (problem,) = _problems(
        _autopilot_workload(image=VLLM, gpu={"type": "nvidia-tesla-v100"}, cache={"size": "30Gi"})
    )
    assert "compute capability 7.5 or newer" in problem and f"{VLLM}-cu129" in problem, problem


def test_vllm_on_autopilot_without_a_cache_disk_is_rejected() -> None:
    (problem,) = _problems(_autopilot_workload(image=VLLM, gpu={"type": "nvidia-l4"}))
    assert problem.startswith("workloads[0].cache: the model server downloads its weights"), (
        "Autopilot's 1 GiB default ephemeral storage cannot hold a model: the pod is evicted"
    )


def test_a_mirrored_cuda_13_vllm_image_also_gets_the_latest_driver() -> None:
    raw = _standard()
    raw["workloads"][0]["image"] = "us-docker.pkg.dev/acme/mirror/vllm-openai:v0.29.0"
    assert _load(raw).node_pools[0].driver == "latest", (
        "a mirror in Artifact Registry is the same CUDA 13 build: it needs R580 just the same"
    )


def test_the_cuda_12_vllm_build_keeps_gkes_default_driver() -> None:
    raw = _standard()
    raw["workloads"][0]["image"] = "vllm/vllm-openai:v0.29.0-cu129"
    assert _load(raw).node_pools[0].driver == "default"


@pytest.mark.parametrize(
    "image",
    [
        f"vllm/vllm-openai@{CUDA13_DIGEST}",
        f"us-docker.pkg.dev/acme/mirror/llm-server@{CUDA13_DIGEST}",
        "vllm/vllm-openai:v0.29.0-cu130",
        "vllm/vllm-openai:v0.29.0-ubuntu2404",
    ],
)
def test_cuda_13_builds_named_by_digest_or_by_any_listed_tag_get_the_latest_driver(
    image: str,
) -> None:
    raw = _standard()
    raw["workloads"][0]["image"] = image
    config = _load(raw)
    assert config.node_pools[0].driver == "latest", (
        f"{image} is vLLM's CUDA 13 build (the release table knows its digest or tag): GKE's "
        "default driver would crash it at its first CUDA call"
    )
    assert not config.advisories, "a known image needs no cudaVersion"


def test_the_digest_decides_over_a_tag_that_says_otherwise() -> None:
    raw = _standard()
    raw["workloads"][0]["image"] = f"vllm/vllm-openai:v0.29.0@{CUDA12_DIGEST}"
    assert _load(raw).node_pools[0].driver == "default", (
        "the runtime pulls the digest, here the CUDA 12.9 build, whatever the tag reads"
    )


def test_a_cuda_13_vllm_image_on_an_installer_pool_is_refused_offering_the_cuda_12_build() -> None:
    raw = _standard(driver="installer")
    raw["workloads"][0]["image"] = "vllm/vllm-openai:v0.29.0-cu130"
    (problem,) = _problems(raw)
    assert problem.startswith(
        "workloads[0].image: vllm/vllm-openai:v0.29.0-cu130 is built for CUDA 13.0"
    ), problem
    assert "set nodePools[0].driver: latest" in problem, problem
    assert f"keep the installer and use the CUDA 12 build {pins.VLLM_IMAGE_CUDA12}" in problem, (
        "a team that runs Google's installer DaemonSet on purpose needs the image that works there"
    )


def test_an_unknown_vllm_release_asks_for_its_cuda_version_and_then_follows_it() -> None:
    raw = _standard()
    raw["workloads"][0]["image"] = "vllm/vllm-openai:v0.31.0"
    config = _load(raw)
    (advisory,) = config.advisories
    assert advisory.startswith("workloads[0].image: vllm/vllm-openai:v0.31.0 is a vLLM server"), (
        advisory
    )
    assert "Set workloads[0].cudaVersion" in advisory, "the plan must say what it needs to know"
    assert config.node_pools[0].driver == "default"
    raw["workloads"][0]["cudaVersion"] = "13.0"
    config = _load(raw)
    assert config.node_pools[0].driver == "latest" and not config.advisories, (
        "the stack's own word on the CUDA decides the driver of an image the table lacks"
    )


def test_a_cuda_version_the_release_table_contradicts_is_refused() -> None:
    raw = _standard()
    raw["workloads"][0].update(image=VLLM, cudaVersion="12.9")
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].cudaVersion: '12.9', but vllm/vllm-openai:v0.29.0"), (
        problem
    )


def test_any_image_declared_cuda_13_is_kept_off_gpus_too_old_for_it() -> None:
    (problem,) = _problems(
        _autopilot_workload(cudaVersion="13.0", gpu={"type": "nvidia-tesla-v100"})
    )
    assert problem.startswith(
        "workloads[0].image: app:1.0 is a CUDA 13.0 build (workloads[0].cudaVersion)"
    ), problem
    assert "an image built for CUDA 12" in problem and "cu129" not in problem, (
        "a vLLM image is no fix for someone else's server"
    )


def test_a_cuda_version_that_is_a_yaml_number_or_lacks_its_minor_says_how_to_write_it() -> None:
    (number,) = _problems(_autopilot_workload(cudaVersion=13.0))
    assert number.startswith("workloads[0].cudaVersion: expected a string") and "Quote" in number
    (bare,) = _problems(_autopilot_workload(cudaVersion="13"))
    assert bare == (
        "workloads[0].cudaVersion: '13' is not a CUDA version: use MAJOR.MINOR as a quoted "
        "string (e.g. '13.0'; a bare 13.0 is a YAML number)."
    )


def test_two_workloads_share_the_slots_of_a_mig_pool_at_max_scale() -> None:
    raw = {
        "cluster": {"mode": "standard"},
        "nodePools": [
            {"gpu": {"type": "nvidia-a100-80gb"}, "partitionSize": "1g.10gb", "maxNodes": 2}
        ],
        "workloads": [
            {"name": "a", "image": "a:1", "gpu": {"type": "nvidia-a100-80gb"}, "replicas": 10},
            {"name": "b", "image": "b:1", "gpu": {"type": "nvidia-a100-80gb"}, "replicas": 4},
        ],
    }
    assert len(_load(raw).workloads) == 2, (
        "14 one-slice pods fill two nodes of seven 1g.10gb slices: pods of different workloads "
        "share a node, so the pool holds them"
    )
    raw["workloads"][1]["replicas"] = 5
    (problem,) = _problems(raw)
    assert problem.startswith("nodePools[0].maxNodes: 2 node(s)") and "3 nodes" in problem, (
        "the fifteenth pod needs a third node"
    )
