"""Tests for the GKE GPU catalog: the facts other modules validate user config against."""

import pytest

from components import catalog
from components.catalog import GPU_TYPES, RETIRED, MachineType


def _names(machines: tuple[MachineType, ...]) -> list[str]:
    return [m.name for m in machines]


# --- smallest machine type per GPU type and count ---------------------------------------------


def test_l4_with_one_gpu_needs_g2_standard_4() -> None:
    m = catalog.smallest_machine_type("nvidia-l4", 1)
    assert m.name == "g2-standard-4", "a 1-GPU L4 pool should default to the cheapest G2 shape"
    assert (m.vcpus, m.memory_gb) == (4, 16), "g2-standard-4 is 4 vCPUs / 16 GB"


def test_l4_with_two_gpus_needs_g2_standard_24() -> None:
    m = catalog.smallest_machine_type("nvidia-l4", 2)
    assert m.name == "g2-standard-24", "g2-standard-24 is the only G2 shape with 2 L4s"


def test_l4_with_eight_gpus_needs_g2_standard_96() -> None:
    assert catalog.smallest_machine_type("nvidia-l4", 8).name == "g2-standard-96", (
        "an 8 x L4 pool can only run on g2-standard-96"
    )


def test_one_l4_fits_five_g2_shapes_smallest_first() -> None:
    assert _names(catalog.machine_types_for("nvidia-l4", 1)) == [
        "g2-standard-4",
        "g2-standard-8",
        "g2-standard-12",
        "g2-standard-16",
        "g2-standard-32",
    ], "users picking a bigger 1-GPU G2 shape must find it, listed smallest first"


def test_t4_with_one_gpu_defaults_to_n1_standard_1() -> None:
    m = catalog.smallest_machine_type("nvidia-tesla-t4", 1)
    assert m.name == "n1-standard-1", "Compute Engine allows a T4 on any N1 from 1 vCPU up"


def test_one_t4_allows_n1_up_to_48_vcpus_but_not_64() -> None:
    names = _names(catalog.machine_types_for("nvidia-tesla-t4", 1))
    assert "n1-standard-32" in names and "n1-highmem-32" in names, "32 vCPUs fit 1 x T4"
    assert "n1-standard-64" not in names, "64 vCPUs exceed the 48-vCPU cap of 1 x T4"


def test_four_t4s_allow_n1_standard_96() -> None:
    assert "n1-standard-96" in _names(catalog.machine_types_for("nvidia-tesla-t4", 4)), (
        "4 x T4 raises the N1 vCPU cap to 96"
    )


def test_one_v100_caps_n1_at_12_vcpus() -> None:
    names = _names(catalog.machine_types_for("nvidia-tesla-v100", 1))
    assert "n1-standard-8" in names, "8 vCPUs fit 1 x V100"
    assert "n1-standard-16" not in names, "16 vCPUs exceed the 12-vCPU cap of 1 x V100"


def test_four_p100s_cap_n1_at_64_vcpus() -> None:
    names = _names(catalog.machine_types_for("nvidia-tesla-p100", 4))
    assert "n1-highcpu-64" in names, "64 vCPUs fit 4 x P100"
    assert "n1-standard-96" not in names, "GKE caps 4 x P100 at 64 vCPUs"


def test_a100_40gb_with_sixteen_gpus_needs_a2_megagpu_16g() -> None:
    m = catalog.smallest_machine_type("nvidia-tesla-a100", 16)
    assert m.name == "a2-megagpu-16g", "16 x A100 40GB only comes on a2-megagpu-16g"
    assert (m.vcpus, m.memory_gb) == (96, 1360), "a2-megagpu-16g is 96 vCPUs / 1360 GB"


def test_a100_80gb_with_one_gpu_needs_a2_ultragpu_1g() -> None:
    assert catalog.smallest_machine_type("nvidia-a100-80gb", 1).name == "a2-ultragpu-1g", (
        "A100 80GB runs on A2 Ultra, not on A2 High"
    )


def test_h100_with_eight_gpus_needs_a3_highgpu_8g() -> None:
    m = catalog.smallest_machine_type("nvidia-h100-80gb", 8)
    assert (m.name, m.vcpus, m.memory_gb) == ("a3-highgpu-8g", 208, 1872), (
        "8 x H100 80GB is a3-highgpu-8g with 208 vCPUs and 1872 GB"
    )


def test_h100_mega_h200_and_b200_each_have_a_single_eight_gpu_shape() -> None:
    expected = {
        "nvidia-h100-mega-80gb": "a3-megagpu-8g",
        "nvidia-h200-141gb": "a3-ultragpu-8g",
        "nvidia-b200": "a4-highgpu-8g",
    }
    for gpu, shape in expected.items():
        assert _names(catalog.machine_types_for(gpu, 8)) == [shape], f"{gpu} only on {shape}"


def test_a_gpu_count_no_machine_carries_raises_value_error_naming_the_allowed_counts() -> None:
    with pytest.raises(ValueError, match=r"1, 2, 4"):
        catalog.smallest_machine_type("nvidia-tesla-t4", 8)


# --- counts per node and on Autopilot -----------------------------------------------------------


@pytest.mark.parametrize(
    ("gpu", "counts"),
    [
        ("nvidia-tesla-t4", (1, 2, 4)),
        ("nvidia-tesla-p4", (1, 2, 4)),
        ("nvidia-tesla-p100", (1, 2, 4)),
        ("nvidia-tesla-v100", (1, 2, 4, 8)),
        ("nvidia-l4", (1, 2, 4, 8)),
        ("nvidia-tesla-a100", (1, 2, 4, 8, 16)),
        ("nvidia-a100-80gb", (1, 2, 4, 8)),
        ("nvidia-h100-80gb", (1, 2, 4, 8)),
        ("nvidia-h100-mega-80gb", (8,)),
        ("nvidia-h200-141gb", (8,)),
        ("nvidia-b200", (8,)),
    ],
)
def test_node_counts_are_the_gpu_counts_compute_engine_offers(
    gpu: str, counts: tuple[int, ...]
) -> None:
    assert catalog.lookup(gpu).node_counts == counts, (
        f"a node pool of {gpu} must offer exactly these GPU counts per node"
    )


def test_autopilot_takes_one_two_or_four_t4s_per_pod() -> None:
    assert catalog.lookup("nvidia-tesla-t4").autopilot_counts == (1, 2, 4), (
        "a T4 pod on Autopilot may ask for 1, 2 or 4 GPUs"
    )


def test_autopilot_takes_up_to_sixteen_a100_40gb_per_pod() -> None:
    assert catalog.lookup("nvidia-tesla-a100").autopilot_counts == (1, 2, 4, 8, 16), (
        "A100 40GB on Autopilot goes up to the 16-GPU a2-megagpu-16g"
    )


def test_p4_p100_and_v100_are_not_offered_on_autopilot() -> None:
    for gpu in ("nvidia-tesla-p4", "nvidia-tesla-p100", "nvidia-tesla-v100"):
        assert catalog.lookup(gpu).autopilot_counts == (), (
            f"{gpu} must be rejected for Autopilot workloads"
        )


def test_every_autopilot_count_is_a_count_a_node_can_have() -> None:
    for gpu in GPU_TYPES.values():
        extra = set(gpu.autopilot_counts) - set(gpu.node_counts)
        assert not extra, f"{gpu.name}: Autopilot counts {extra} have no machine type behind them"


# --- MIG and sharing ------------------------------------------------------------------------------


def test_a100_40gb_mig_partitions_go_from_1g_5gb_to_7g_40gb() -> None:
    assert catalog.lookup("nvidia-tesla-a100").mig_partitions == (
        "1g.5gb",
        "2g.10gb",
        "3g.20gb",
        "7g.40gb",
    ), "GKE accepts exactly these partition sizes on A100 40GB"


def test_a100_80gb_mig_partitions_go_from_1g_10gb_to_7g_80gb() -> None:
    assert catalog.lookup("nvidia-a100-80gb").mig_partitions == (
        "1g.10gb",
        "2g.20gb",
        "3g.40gb",
        "7g.80gb",
    ), "GKE accepts exactly these partition sizes on A100 80GB"


def test_h100_adds_the_1g_20gb_partition() -> None:
    parts = catalog.lookup("nvidia-h100-80gb").mig_partitions
    assert "1g.20gb" in parts and "1g.10gb" in parts, "H100 80GB has both 1g sizes on GKE"
    assert "1g.5gb" not in parts, "1g.5gb is an A100 40GB size, not an H100 one"


def test_gpus_without_mig_have_no_partitions() -> None:
    for gpu in ("nvidia-tesla-t4", "nvidia-tesla-v100", "nvidia-l4"):
        assert catalog.lookup(gpu).mig_partitions == (), f"{gpu} cannot be MIG-partitioned"


def test_mig_partition_names_are_compute_g_dot_memory_gb() -> None:
    for gpu in GPU_TYPES.values():
        for part in gpu.mig_partitions:
            compute, _, memory = part.partition(".")
            assert compute.endswith("g") and compute[:-1].isdigit(), f"{gpu.name}: {part}"
            assert memory.endswith("gb") and memory[:-2].isdigit(), f"{gpu.name}: {part}"


def test_time_sharing_and_mps_are_available_on_every_gpu_type() -> None:
    for gpu in GPU_TYPES.values():
        assert gpu.time_sharing, f"GKE documents time-sharing for all NVIDIA GPUs ({gpu.name})"
        assert gpu.mps, f"GKE documents MPS for all its NVIDIA GPU types ({gpu.name})"


# --- retired and unknown types --------------------------------------------------------------------


def test_retired_k80_points_to_a_supported_replacement() -> None:
    advice = RETIRED["nvidia-tesla-k80"]
    assert "nvidia-tesla-t4" in advice, "the K80 error must tell users what to use instead"
    assert "nvidia-tesla-t4" in GPU_TYPES, "the advised replacement must itself be offered"


def test_retired_types_are_not_offered() -> None:
    assert not set(RETIRED) & set(GPU_TYPES), "a GPU cannot be both retired and offered"


def test_lookup_of_retired_k80_raises_key_error_with_the_advice() -> None:
    with pytest.raises(KeyError, match="nvidia-tesla-t4"):
        catalog.lookup("nvidia-tesla-k80")


def test_lookup_of_an_unknown_type_raises_key_error_listing_known_types() -> None:
    with pytest.raises(KeyError, match="nvidia-l4"):
        catalog.lookup("nvidia-rtx-9090")


def test_machine_types_for_an_unknown_gpu_raises_key_error() -> None:
    with pytest.raises(KeyError):
        catalog.machine_types_for("nvidia-tesla-k80", 1)


def test_machine_type_finds_shapes_by_name_across_the_catalog() -> None:
    m = catalog.machine_type("a3-ultragpu-8g")
    assert m is not None and (m.vcpus, m.memory_gb, m.gpus) == (224, 2952, 8), (
        "pool validation reads vCPUs and memory of the chosen machine type"
    )
    n1 = catalog.machine_type("n1-highmem-8")
    assert n1 is not None and (n1.vcpus, n1.memory_gb) == (8, 52), "n1-highmem-8 is 8 / 52 GB"
    assert catalog.machine_type("e2-standard-4") is None, "a machine without GPUs is not listed"


# --- internal consistency -------------------------------------------------------------------------


def test_every_gpu_type_is_keyed_by_its_own_name() -> None:
    for key, gpu in GPU_TYPES.items():
        assert key == gpu.name, f"GPU_TYPES[{key!r}] holds {gpu.name!r}"


def test_every_gpu_type_has_at_least_one_machine_type() -> None:
    for gpu in GPU_TYPES.values():
        assert gpu.machine_types, f"{gpu.name} would be unusable with no machine type"


def test_every_machine_type_belongs_to_its_gpus_family() -> None:
    for gpu in GPU_TYPES.values():
        for m in gpu.machine_types:
            assert m.name.startswith(f"{gpu.family}-"), (
                f"{m.name} is not in family {gpu.family} of {gpu.name}"
            )


def test_machine_types_are_sorted_by_gpu_count_then_smallest_first() -> None:
    for gpu in GPU_TYPES.values():
        keys = [(m.gpus, m.vcpus, m.memory_gb) for m in gpu.machine_types]
        assert keys == sorted(keys), f"{gpu.name}: machine types out of order, so 'smallest' lies"


def test_no_machine_type_is_listed_twice_for_the_same_gpu_count() -> None:
    for gpu in GPU_TYPES.values():
        pairs = [(m.gpus, m.name) for m in gpu.machine_types]
        assert len(pairs) == len(set(pairs)), f"{gpu.name} lists a shape twice"


def test_accelerator_optimized_shapes_carry_one_gpu_count_each() -> None:
    for gpu in GPU_TYPES.values():
        if gpu.family == "n1":
            continue
        counts: dict[str, set[int]] = {}
        for m in gpu.machine_types:
            counts.setdefault(m.name, set()).add(m.gpus)
        multi = {name: c for name, c in counts.items() if len(c) > 1}
        assert not multi, f"{gpu.name}: fixed-GPU shapes with several counts: {multi}"


def test_machine_type_figures_are_positive() -> None:
    for gpu in GPU_TYPES.values():
        for m in gpu.machine_types:
            assert m.gpus > 0 and m.vcpus > 0 and m.memory_gb > 0, f"{gpu.name}: {m}"


def test_display_names_name_nvidia() -> None:
    for gpu in GPU_TYPES.values():
        assert gpu.display_name.startswith("NVIDIA "), f"{gpu.name}: {gpu.display_name!r}"
