"""Tests for what a pod can request on GKE: each worked number is written out from GKE's formula
(https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes, "Node allocatable
resources", as GKE's autoscaler computes it) and checked against real GKE nodes."""

import pytest

from components.facts import allocatable as capacity
from components.facts.allocatable import (
    GPU_NODE_SYSTEM_OVERHEAD,
    Resources,
    autopilot_default_requests,
    cpu_quantity,
    default_requests,
    kernel_reserved_bytes,
    kube_reserved,
    memory_quantity,
    node_allocatable,
    node_capacity,
    node_ephemeral_allocatable,
    parse_cpu,
    parse_memory,
    pod_allocatable,
)

KiB, MiB, GiB = 2**10, 2**20, 2**30
EVICTION = 100 * MiB

# --- CPU: 6% of the first core, 1% of the next, 0.5% of the next 2, 0.25% above 4 ---------------


def test_a_4_vcpu_node_offers_3920_millicores() -> None:
    reserved = 60 + 10 + 2 * 5  # 6% of 1000m, 1% of 1000m, 0.5% of 2000m
    assert node_allocatable(4, 15).cpu_millicores == 4000 - reserved == 3920, (
        "the issue's 3.92 CPU for n1-standard-4: GKE keeps 80m on a 4-vCPU node"
    )


@pytest.mark.parametrize(
    ("vcpus", "reserved"),
    [(8, 80 + 4 * 2.5), (12, 80 + 8 * 2.5), (208, 80 + 204 * 2.5)],
)
def test_cores_above_four_reserve_a_quarter_percent_each(vcpus: int, reserved: float) -> None:
    assert node_allocatable(vcpus, 64).cpu_millicores == vcpus * 1000 - int(reserved), (
        f"{vcpus} vCPUs: 80m for the first 4 cores plus 2.5m per further core"
    )


def test_more_than_110_pods_per_node_costs_400_more_millicores() -> None:
    default = kube_reserved(8, 32).cpu_millicores
    assert kube_reserved(8, 32, max_pods_per_node=256).cpu_millicores == default + 400, (
        "GKE's kubelet reserves 400m more CPU on nodes allowed more than 110 pods"
    )


# --- memory: 25% / 20% / 10% / 6% / 2% tiers, bounded at GKE's 1000-MiB "GB" ------------------

# Real GKE 1.25 nodes, github.com/2i2c-org/infrastructure/issues/2121: (name, vCPUs, GB,
# capacity Ki, allocatable Ki, allocatable CPU m).
OBSERVED = [
    ("n2-highmem-4", 4, 32, 32880872, 29085928, 3920),
    ("n2-highmem-16", 16, 128, 131919220, 122210676, 15890),
    ("n2-highmem-64", 64, 512, 528365196, 510603916, 63770),
]


@pytest.mark.parametrize(("name", "vcpus", "gb", "cap_ki", "alloc_ki", "cpu"), OBSERVED)
def test_kube_reserved_matches_real_nodes_to_the_mib(
    name: str, vcpus: int, gb: int, cap_ki: int, alloc_ki: int, cpu: int
) -> None:
    reserved_on_node = (cap_ki - alloc_ki) * KiB - EVICTION
    assert kube_reserved(vcpus, gb).memory_bytes == reserved_on_node, (
        f"{name}: GKE's memory tiers must reproduce what the real node reserved"
    )
    assert node_allocatable(vcpus, gb).cpu_millicores == cpu, f"{name}: allocatable CPU"


def test_memory_tiers_are_bounded_at_1000_mib_gigabytes_not_gib() -> None:
    # n2-highmem-4, 32768 MiB: 1000 + 800 + 800 (first 16 "GB") + 6% of (32768 - 16000) MiB.
    gke = 0.25 * 4000 + 0.2 * 4000 + 0.1 * 8000 + 0.06 * (32768 - 16000)
    gib = 0.25 * 4096 + 0.2 * 4096 + 0.1 * 8192 + 0.06 * (32768 - 16384)
    assert kube_reserved(4, 32).memory_bytes == int(gke) * MiB == 3606 * MiB, (
        "GKE's tiers end at 4000/8000/16000/128000 MiB, as the real n2-highmem-4 shows"
    )
    assert int(gib) != int(gke), "with GiB bounds the prediction would miss the real node by 39 MiB"


@pytest.mark.parametrize(("name", "vcpus", "gb", "cap_ki", "alloc_ki", "cpu"), OBSERVED)
def test_predicted_allocatable_never_overstates_a_real_node_by_more_than_16_mib(
    name: str, vcpus: int, gb: int, cap_ki: int, alloc_ki: int, cpu: int
) -> None:
    predicted = node_allocatable(vcpus, gb).memory_bytes
    assert predicted - alloc_ki * KiB <= 16 * MiB, (
        f"{name}: a pod sized to the prediction must still fit (the system-pod margin absorbs "
        "the kernel estimate's few MiB)"
    )
    assert alloc_ki * KiB - predicted <= gb * GiB // 1000, f"{name}: within 0.1% of the real node"
    assert node_capacity(vcpus, gb).memory_bytes < gb * GiB, "the kernel keeps memory first"


def test_a_node_of_1000_mib_or_less_reserves_255_mib() -> None:
    assert kube_reserved(1, 0.5).memory_bytes == 255 * MiB, "GKE's minimum reservation"


def test_image_streaming_reserves_4_percent_more_of_each_memory_tier() -> None:
    extra = int(0.04 * (1000 + 800 + 800 + 0.06 * (32768 - 16000)))  # 144 MiB on 32 GB
    plain = node_allocatable(8, 32).memory_bytes
    assert plain - node_allocatable(8, 32, image_streaming=True).memory_bytes == extra * MiB, (
        "image streaming (GCFS) caches layers in memory GKE reserves on top"
    )


def test_ubuntu_nodes_keep_4_mib_more_for_the_kernel() -> None:
    assert kernel_reserved_bytes(32, "ubuntu") - kernel_reserved_bytes(32) == 4 * MiB


@pytest.mark.parametrize(("vcpus", "gb"), [(0, 16), (4, 0), (-1, 16)])
def test_a_node_without_cpus_or_memory_is_refused(vcpus: int, gb: int) -> None:
    with pytest.raises(ValueError, match="more than 0"):
        node_allocatable(vcpus, gb)


# --- worked figures, written out by hand -------------------------------------------------------


def _kernel(physical: int) -> int:
    """Kernel share (kubernetes/autoscaler gce_reserved.go): 1/64 + 16 MiB + 64 MiB (over
    3 GiB) + 8 MiB (up to 8 GiB) + min(0.175%, 248 MiB)."""
    low = 8 * MiB if physical <= 8 * GiB else 0
    return physical // 64 + 16 * MiB + 64 * MiB + low + min(int(0.00175 * physical), 248 * MiB)


WORKED = [
    # name, vCPUs, GB, kube-reserved MiB written out, allocatable CPU m
    ("n1-standard-4", 4, 15, 1000 + 800 + 0.1 * (15360 - 8000), 3920),
    ("g2-standard-4", 4, 16, 1000 + 800 + 800 + 0.06 * (16384 - 16000), 3920),
    ("g2-standard-8", 8, 32, 2600 + 0.06 * (32768 - 16000), 7910),
    ("g2-standard-12", 12, 48, 2600 + 0.06 * (49152 - 16000), 11900),
    ("a2-highgpu-1g", 12, 85, 2600 + 0.06 * (87040 - 16000), 11900),
    ("a3-highgpu-8g", 208, 1872, 2600 + 6720 + 0.02 * (1916928 - 128000), 207410),
]


@pytest.mark.parametrize(("name", "vcpus", "gb", "reserved_mib", "cpu"), WORKED)
def test_allocatable_of_gpu_machines_worked_by_hand(
    name: str, vcpus: int, gb: int, reserved_mib: float, cpu: int
) -> None:
    physical = gb * GiB
    expected = physical - _kernel(physical) - int(reserved_mib) * MiB - EVICTION
    assert node_allocatable(vcpus, gb) == Resources(cpu, expected), (
        f"{name}: capacity (VM memory less the kernel's) - kube-reserved - 100 MiB eviction"
    )


def test_n1_standard_4_offers_about_12_1_gib_not_the_15_gib_it_is_sold_with() -> None:
    memory = node_allocatable(4, 15).memory_bytes
    assert memory == 12_978_350_982, "15 GiB - 347 MiB kernel - 2536 MiB reserved - 100 MiB"
    assert memory // MiB == 12377, (
        "the issue's 12.4 GiB counts all 15 GiB as capacity; the kernel keeps ~347 MiB first, "
        "so a 12.4Gi request would stay Pending"
    )


def test_the_default_4_cpu_16gi_workload_does_not_fit_g2_standard_4() -> None:
    assert not Resources(4000, 16 * GiB).fits_in(pod_allocatable(4, 16)), (
        "g2-standard-4 leaves ~3.3 CPU / ~12.2 GiB for pods: 4 CPU / 16Gi stays Pending"
    )
    assert Resources(4000, 16 * GiB).fits_in(pod_allocatable(8, 32)), "g2-standard-8 holds it"


# --- GKE's own pods on every GPU node ----------------------------------------------------------


def test_gpu_nodes_keep_597m_and_800mi_for_gke_system_pods() -> None:
    assert Resources(597, 800 * MiB) == GPU_NODE_SYSTEM_OVERHEAD, (
        "the margin the plan subtracts for kube-proxy, logging, metrics, CSI, netd, metadata "
        "server, device plugin (150m with its driver-installer init container), DCGM, GMP"
    )


def test_pod_allocatable_is_allocatable_less_the_system_pods() -> None:
    assert pod_allocatable(8, 32) == node_allocatable(8, 32) - GPU_NODE_SYSTEM_OVERHEAD


def test_a_pool_can_override_the_system_pod_margin() -> None:
    assert pod_allocatable(8, 32, overhead=Resources(0, 0)) == node_allocatable(8, 32), (
        "a pool whose nodes run fewer system pods sets its own margin"
    )


def test_a_margin_larger_than_the_node_leaves_nothing_rather_than_negative() -> None:
    assert pod_allocatable(1, 1, overhead=Resources(10**6, 10**12)) == Resources(0, 0)


# --- default requests: a GPU's share of the node -----------------------------------------------


def test_one_t4_on_n1_standard_4_gets_95_percent_of_the_node_rounded_down_to_mib() -> None:
    room = pod_allocatable(4, 15)
    requests = default_requests(room, gpus_per_node=1, gpus_per_pod=1)
    assert requests == Resources(3156, room.memory_bytes * 95 // 100 // MiB * MiB), (
        "a 1-GPU pod on a 1-GPU node gets 95% of the room (3323m, 11577Mi): 5% stays free"
    )
    assert (cpu_quantity(requests.cpu_millicores), memory_quantity(requests.memory_bytes)) == (
        "3156m",
        "10998Mi",
    ), "whole millicores and whole MiB, as written into the manifest"


@pytest.mark.parametrize(("vcpus", "gb"), [(4, 15), (8, 32), (208, 1872)])
def test_derived_requests_leave_the_autoscalers_5_percent_of_the_room_free(
    vcpus: int, gb: int
) -> None:
    """Issue 45: the multihost example's pods asked for 100% of an estimated room; a node whose
    real room is a MiB smaller (a DaemonSet GKE adds, the kernel's share) never takes them."""
    room = pod_allocatable(vcpus, gb)
    requests = default_requests(room, gpus_per_node=8, gpus_per_pod=8)
    left = room - requests
    assert left.cpu_millicores >= room.cpu_millicores * 5 // 100, (
        "derived CPU must leave the autoscaler's 5% tolerance (DefaultMaxFreeDifferenceRatio) free"
    )
    assert left.memory_bytes >= room.memory_bytes * 5 // 100, (
        "derived memory must leave the autoscaler's 5% tolerance free, or the pod stays Pending "
        "on a node whose room the estimate overstated"
    )
    assert left.memory_bytes < room.memory_bytes * 5 // 100 + MiB, "and take the rest"


@pytest.mark.parametrize(("per_node", "per_pod"), [(8, 1), (8, 2), (8, 3), (4, 1), (2, 1)])
def test_as_many_default_pods_as_the_gpus_allow_fit_on_one_node(
    per_node: int, per_pod: int
) -> None:
    room = pod_allocatable(96, 680)  # a2-highgpu-8g
    each = default_requests(room, per_node, per_pod)
    pods = per_node // per_pod
    assert Resources(each.cpu_millicores * pods, each.memory_bytes * pods).fits_in(room), (
        f"{pods} pods of {per_pod} GPUs must fit together on a {per_node}-GPU node"
    )


def test_a_pod_with_more_gpus_than_its_node_has_no_default() -> None:
    with pytest.raises(ValueError, match="do not fit"):
        default_requests(pod_allocatable(8, 32), gpus_per_node=1, gpus_per_pod=2)


# --- Kubernetes quantities ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "millicores"),
    [("500m", 500), ("0.5", 500), ("2", 2000), ("+1.5", 1500), ("0.1m", 1), ("1e3", 1_000_000)],
)
def test_cpu_quantities_parse_to_millicores_rounding_up(text: str, millicores: int) -> None:
    assert parse_cpu(text) == millicores, "0.1m rounds up to 1m, like Kubernetes"


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("16Gi", 16 * GiB),
        ("12700Mi", 12700 * MiB),
        ("1G", 10**9),
        ("1.5Ki", 1536),
        ("128974848", 128974848),
        ("1E", 10**18),  # exa, not an exponent
        ("1E3", 1000),  # exponent
        ("1Ei", 2**60),
        ("-1Mi", -MiB),  # parsed; the caller judges negatives
    ],
)
def test_memory_quantities_parse_to_bytes(text: str, size: int) -> None:
    assert parse_memory(text) == size


@pytest.mark.parametrize("text", ["", "Gi", "1gi", "1 Gi", "1.2.3", "1e", "ten", "1e99"])
def test_malformed_quantities_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="quantity|range"):
        parse_memory(text)


def test_quantities_are_written_in_the_largest_exact_unit() -> None:
    assert [cpu_quantity(4000), cpu_quantity(3920)] == ["4", "3920m"]
    assert [memory_quantity(12 * GiB), memory_quantity(12700 * MiB), memory_quantity(1000)] == [
        "12Gi",
        "12700Mi",
        "1000",
    ]
    assert parse_memory(memory_quantity(13942210429 // MiB * MiB)) == 13942210429 // MiB * MiB


# --- ephemeral storage ---------------------------------------------------------------------------


def test_a_default_100_gb_boot_disk_offers_about_43_8_gib_to_pods() -> None:
    disk = 100 * GiB
    os_share = -(-15635 * disk // 1_000_000) + -(-4148 * GiB // 1000) + 100 * MiB  # COS
    kube = min(50, 6 + 35, 100) * GiB
    expected = (disk - os_share) - kube - (disk - os_share) // 10
    assert node_ephemeral_allocatable() == expected, "(disk - OS) - reserved - 10% eviction"
    observed = 47060071478  # allocatable ephemeral-storage of the 2i2c nodes (100 GB disks)
    assert 0 <= observed - expected <= observed // 500, "within 0.2% of a real node, never above"


@pytest.mark.parametrize(("gb", "kube_gib"), [(10, 5), (200, 76), (500, 100)])
def test_ephemeral_reservation_is_the_least_of_half_6_plus_35_percent_and_100_gib(
    gb: int, kube_gib: int
) -> None:
    disk = gb * GiB
    os_share = -(-15635 * disk // 1_000_000) + -(-4148 * GiB // 1000)
    os_share += min(100 * MiB, -(-disk // 1000))
    expected = (disk - os_share) - kube_gib * GiB - (disk - os_share) // 10
    assert node_ephemeral_allocatable(gb) == expected


def test_the_default_model_cache_fits_one_pod_on_a_default_boot_disk() -> None:
    cache = parse_memory(capacity.DEFAULT_MODEL_CACHE)
    assert cache <= node_ephemeral_allocatable(capacity.BOOT_DISK_DEFAULT_GB) < 2 * cache, (
        "one model server's cache fits a 100 GB node; two do not, so pools with more pods per "
        "node need a larger diskSizeGb"
    )


def test_a_boot_disk_of_zero_gb_is_refused() -> None:
    with pytest.raises(ValueError, match="more than 0 GB"):
        node_ephemeral_allocatable(0)


# --- Autopilot ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("gpu", "count"), [("nvidia-l4", 1), ("nvidia-tesla-t4", 2)])
def test_autopilot_default_requests_are_4_cpu_and_16_gib_per_gpu(gpu: str, count: int) -> None:
    assert autopilot_default_requests(gpu, count) == Resources(4000 * count, 16 * GiB * count)


def test_autopilot_defaults_never_exceed_the_largest_node_for_the_gpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(capacity, "AUTOPILOT_REQUEST_PER_GPU", Resources(10**6, 10**15))
    room = pod_allocatable(12, 85)  # a2-highgpu-1g, the only 1 x A100 40GB shape
    room = Resources(room.cpu_millicores * 95 // 100, room.memory_bytes * 95 // 100)
    assert autopilot_default_requests("nvidia-tesla-a100", 1) == Resources(
        room.cpu_millicores // 1000 * 1000, room.memory_bytes // GiB * GiB
    ), "a default no A100 node can hold would never schedule (and 5% of its room stays free)"


def test_autopilot_defaults_need_a_gpu_count_some_machine_carries() -> None:
    with pytest.raises(ValueError, match="no machine type carries 3"):
        autopilot_default_requests("nvidia-l4", 3)
