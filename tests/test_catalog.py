"""Tests for the GKE GPU catalog: the facts other modules validate user config against."""

import re
from pathlib import Path

import kubernetes_validate
import pytest

from components.facts import catalog, pins
from components.facts.catalog import GPU_TYPES, RETIRED, MachineType
from components.platform import device_plugin, driver
from tests import golden, shared
from tests.conftest import ROOT
from tools import gpus as gpus_tool
from tools import render


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
        ("nvidia-gb200", (4,)),
        ("nvidia-gb300", (4,)),
        ("nvidia-rtx-pro-6000", (1, 2, 4, 8)),
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


def test_autopilot_admits_p4_p100_and_v100_as_gkes_own_admission_message_lists_them() -> None:
    # GKE Warden, May 2025: "allowed values are: [..., nvidia-tesla-p100, nvidia-tesla-p4,
    # nvidia-tesla-t4, nvidia-tesla-v100]".
    for gpu in ("nvidia-tesla-p4", "nvidia-tesla-p100", "nvidia-tesla-v100"):
        assert catalog.lookup(gpu).autopilot_counts, (
            f"{gpu}: refusing a GPU type that Autopilot admits is worse than GKE's own error"
        )


def test_autopilot_takes_a_pod_with_eight_h200s() -> None:
    # Google's own Autopilot manifest gpudirect-rdma/nccl-test-autopilot.yaml asks for 8 x H200.
    assert 8 in catalog.lookup("nvidia-h200-141gb").autopilot_counts, (
        "an Autopilot workload on 8 H200 must render OK"
    )
    assert 1 not in catalog.lookup("nvidia-h200-141gb").autopilot_counts, (
        "H200 comes only on the 8-GPU a3-ultragpu-8g, so a 1-GPU H200 pod has no node"
    )


def test_autopilot_takes_eight_b200s_and_runs_rtx_pro_6000() -> None:
    assert catalog.lookup("nvidia-b200").autopilot_counts == (8,), (
        "Google's nccl-test-a4-autopilot.yaml runs 8 x B200 pods on Autopilot"
    )
    assert 1 in catalog.lookup("nvidia-rtx-pro-6000").autopilot_counts, (
        "Google's Autopilot device injector targets nvidia-rtx-pro-6000 nodes"
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


def test_mig_partition_names_are_compute_g_dot_memory_gb_with_nvidias_profile_suffixes() -> None:
    # NVIDIA's profile names: "1g.24gb", with +me / +gfx / +me.all / -me on RTX PRO 6000.
    pattern = re.compile(r"^[1-7]g\.\d+gb(\+me|\+gfx|\+me\.all|-me)?$")
    for gpu in GPU_TYPES.values():
        for part in gpu.mig_partitions:
            assert pattern.match(part), f"{gpu.name}: {part!r} is not a MIG profile name"


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


def test_machine_types_are_sorted_by_gpu_count_defaults_first_then_smallest() -> None:
    for gpu in GPU_TYPES.values():
        keys = [(m.gpus, not m.by_default, m.vcpus, m.memory_gb) for m in gpu.machine_types]
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


# --- G4 (RTX PRO 6000), A4X (GB200), A4X Max (GB300), A3 Edge ----------------------------------


def test_rtx_pro_6000_runs_on_g4_standard_48_with_one_gpu() -> None:
    # cluster-toolkit machine_mappings.json: "rtx-6000-1": "g4-standard-48"; GKE's autoscaler
    # registry: g4-standard-48 is 48 vCPUs / 180 GB with 1 x nvidia-rtx-pro-6000.
    m = catalog.machine_for("nvidia-rtx-pro-6000", 1, "g4-standard-48")
    assert m is not None and (m.vcpus, m.memory_gb, m.gpu_share) == (48, 180, 1.0), (
        "an RTX PRO 6000 pool on g4-standard-48 must render OK with the node's real size"
    )
    assert catalog.smallest_machine_type("nvidia-rtx-pro-6000", 1).name == "g4-standard-48", (
        "a 1-GPU default must be a whole GPU, never a 1/8 vGPU slice"
    )


def test_g4_shapes_carry_one_two_four_or_eight_rtx_pro_6000() -> None:
    for count, shape in ((2, "g4-standard-96"), (4, "g4-standard-192"), (8, "g4-standard-384")):
        assert catalog.smallest_machine_type("nvidia-rtx-pro-6000", count).name == shape
    problem = catalog.machine_problem("nvidia-rtx-pro-6000", 1, "g4-standard-96")
    assert problem is not None and "2 x nvidia-rtx-pro-6000" in problem, (
        "naming a 2-GPU shape for a 1-GPU pool must say what the shape carries"
    )


def test_fractional_g4_shapes_are_accepted_when_named_but_never_defaulted() -> None:
    m = catalog.machine_for("nvidia-rtx-pro-6000", 1, "g4-standard-6")
    assert m is not None and m.gpu_share == 0.125 and not m.by_default, (
        "g4-standard-6 is a 1/8 vGPU shape GKE takes only when named (autoscaler registry)"
    )
    defaults = catalog.machine_types_for("nvidia-rtx-pro-6000", 1)
    assert "g4-standard-6" not in _names(defaults), "a default must never pick a GPU slice"


def test_gb200_comes_on_a4x_highgpu_4g_with_four_gpus_by_reservation_only() -> None:
    m = catalog.smallest_machine_type("nvidia-gb200", 4)
    assert (m.name, m.vcpus, m.memory_gb) == ("a4x-highgpu-4g", 140, 884)
    assert m.consumption == {catalog.RESERVATION}, (
        "flex-start and Spot are 'any GPU machine except A4X': A4X needs a reservation"
    )
    with pytest.raises(ValueError, match="GPUs per node: 4"):
        catalog.smallest_machine_type("nvidia-gb200", 8)


def test_gb300_comes_on_the_bare_metal_a4x_max_shape_without_mig() -> None:
    gpu = catalog.lookup("nvidia-gb300")
    assert _names(catalog.machine_types_for("nvidia-gb300", 4)) == ["a4x-maxgpu-4g-metal"]
    assert gpu.mig_partitions == (), "GKE's device plugin (mig.go) has no GB300 partition size"


def test_a3_edge_is_accepted_when_named_and_8_x_h100_still_defaults_to_a3_high() -> None:
    assert catalog.machine_for("nvidia-h100-80gb", 8, "a3-edgegpu-8g") is not None, (
        "A3 Edge carries 8 x nvidia-h100-80gb and must not be refused"
    )
    assert catalog.smallest_machine_type("nvidia-h100-80gb", 8).name == "a3-highgpu-8g", (
        "A3 Edge is a regional inference shape: a default stays on A3 High"
    )
    edge = catalog.machine_type("a3-edgegpu-8g")
    assert edge is not None and catalog.FLEX_START not in edge.consumption, (
        "GKE's autoscaler disables flex-start (DWS) for a3-edgegpu-8g"
    )


# --- MIG sizes of the newer GPUs (container-engine-accelerators mig.go) ---------------------------


@pytest.mark.parametrize(
    ("gpu", "size"),
    [
        ("nvidia-h200-141gb", "4g.71gb"),
        ("nvidia-b200", "4g.90gb"),
        ("nvidia-gb200", "7g.186gb"),
        ("nvidia-rtx-pro-6000", "1g.24gb"),
        ("nvidia-rtx-pro-6000", "4g.96gb"),
    ],
)
def test_mig_sizes_gkes_device_plugin_accepts_are_offered(gpu: str, size: str) -> None:
    assert size in catalog.lookup(gpu).mig_partitions, (
        f"GKE's device plugin accepts {size} on {gpu}; refusing it blocks a working pool"
    )


def test_a_size_of_another_gpu_is_not_a_partition_of_h200() -> None:
    assert "4g.90gb" not in catalog.lookup("nvidia-h200-141gb").mig_partitions, (
        "4g.90gb is a B200 size; an H200 node would fail to partition"
    )


# --- N1 custom machine types ----------------------------------------------------------------------


def test_t4_runs_on_n1_custom_4_20480_with_5_gb_per_core() -> None:
    m = catalog.machine_for("nvidia-tesla-t4", 1, "n1-custom-4-20480")
    assert m is not None and (m.vcpus, m.memory_gb, m.gpus, m.custom) == (4, 20, 1, True), (
        "a T4 pool on an N1 custom machine (4 vCPUs, 20 GB) must render OK with that size"
    )
    assert catalog.machine_for("nvidia-tesla-t4", 1, "custom-4-20480") is not None, (
        "Compute Engine's own spelling of the same N1 custom type"
    )


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("n1-custom-3-12288", "1 or an even number of vCPUs"),
        ("n1-custom-4-20000", "multiple of 256 MB"),
        ("n1-custom-4-2048", "at least 922 MB per vCPU"),
        ("n1-custom-2-16384", "add -ext"),
        ("n1-custom-64-65536", "at most 48 vCPUs"),
    ],
)
def test_n1_custom_types_outside_compute_engines_rules_are_refused_with_the_rule(
    name: str, reason: str
) -> None:
    problem = catalog.machine_problem("nvidia-tesla-t4", 1, name)
    assert problem is not None and reason in problem, (
        f"{name} breaks a Compute Engine custom-machine rule; the message must name it"
    )
    assert catalog.machine_for("nvidia-tesla-t4", 1, name) is None


def test_extended_memory_lifts_the_per_vcpu_memory_cap_of_n1_custom_types() -> None:
    m = catalog.machine_for("nvidia-tesla-t4", 1, "n1-custom-2-16384-ext")
    assert m is not None and m.memory_gb == 16, "-ext allows more than 6.5 GB per vCPU"


def test_n1_custom_types_take_only_n1_gpus() -> None:
    problem = catalog.machine_problem("nvidia-l4", 1, "n1-custom-4-20480")
    assert problem is not None and "G2" in problem, "an L4 needs a G2 machine, not N1"


def test_predefined_n1_over_the_vcpu_cap_names_the_cap() -> None:
    problem = catalog.machine_problem("nvidia-tesla-v100", 1, "n1-standard-16")
    assert problem is not None and "at most 12 vCPUs" in problem, (
        "1 x V100 caps N1 at 12 vCPUs; the message must say so"
    )
    assert catalog.machine_problem("nvidia-tesla-v100", 1, "n1-standard-8") is None


def test_custom_machine_parses_vcpus_and_memory_from_the_name() -> None:
    m = catalog.custom_machine("n1-custom-6-20480")
    assert m is not None and (m.vcpus, m.memory_gb) == (6, 20)
    assert catalog.custom_machine("n1-custom-5-20480") is None, "odd vCPU counts are invalid"
    assert catalog.custom_machine("e2-custom-4-8192") is None, "only N1 takes attached GPUs"


# --- how each machine is sold ---------------------------------------------------------------------


def test_a4_and_a3_ultra_are_sold_by_reservation_flex_start_and_spot_not_on_demand() -> None:
    for gpu, shape in (("nvidia-b200", "a4-highgpu-8g"), ("nvidia-h200-141gb", "a3-ultragpu-8g")):
        m = catalog.smallest_machine_type(gpu, 8)
        assert m.name == shape
        assert m.consumption == {catalog.RESERVATION, catalog.FLEX_START, catalog.SPOT}, (
            f"{shape} is reservation-bound, flex-start or Spot; there is no on-demand capacity"
        )


def test_g2_and_g4_are_sold_on_demand_and_as_spot() -> None:
    for gpu in ("nvidia-l4", "nvidia-rtx-pro-6000"):
        ways = catalog.smallest_machine_type(gpu, 1).consumption
        assert {catalog.ON_DEMAND, catalog.SPOT} <= ways, f"{gpu} pools run on demand or on Spot"


def test_every_machine_is_sold_some_known_way() -> None:
    for gpu in GPU_TYPES.values():
        for m in gpu.machine_types:
            assert m.consumption and m.consumption <= catalog.ALL_CONSUMPTION, f"{m.name}"


# --- discoverability: docs/gpus.md table and `python -m tools.gpus` -----------------------------


def test_readme_gpu_table_is_the_catalog() -> None:
    readme = (ROOT / "docs" / "gpus.md").read_text()
    start, end = "<!-- gpu-catalog:start -->\n", "<!-- gpu-catalog:end -->"
    assert start in readme and end in readme, "docs/gpus.md must carry the GPU catalog section"
    table = readme.split(start, 1)[1].split(end, 1)[0]
    assert table == catalog.readme_table(), (
        "docs/gpus.md GPU table drifted from the catalog: regenerate it with "
        "`python -m tools.gpus --markdown`"
    )


def test_readme_table_has_a_row_per_gpu_type() -> None:
    rows = [line for line in catalog.readme_table().splitlines() if line.startswith("| `")]
    assert len(rows) == len(GPU_TYPES), "every GPU type must be visible in docs/gpus.md"


def test_tools_gpus_prints_one_type_with_its_machine_shapes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert gpus_tool.main(["--type", "nvidia-l4"]) == gpus_tool.EXIT_OK
    out = capsys.readouterr().out
    assert "g2-standard-4" in out and "24 GB" in out, "users pick a shape from this listing"


def test_tools_gpus_names_the_replacement_of_a_retired_type(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert gpus_tool.main(["--type", "nvidia-tesla-k80"]) == gpus_tool.EXIT_UNKNOWN
    assert "nvidia-tesla-t4" in capsys.readouterr().err, "K80 users must learn what to use"


def test_tools_gpus_lists_every_type_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert gpus_tool.main([]) == gpus_tool.EXIT_OK
    out = capsys.readouterr().out
    assert all(name in out for name in GPU_TYPES), "the summary must list every GPU type"


# --- pins -----------------------------------------------------------------------------------------


def test_default_vllm_image_is_a_pinned_cuda_13_release_needing_an_r580_driver() -> None:
    assert re.fullmatch(r"vllm/vllm-openai:v\d+\.\d+\.\d+@sha256:[0-9a-f]{64}", pins.VLLM_IMAGE), (
        "the default image must be pulled by digest (a tag can be moved), its release tag kept "
        "for readers"
    )
    assert pins.VLLM_CUDA.startswith("13.") and pins.VLLM_MIN_DRIVER.startswith("580."), (
        "CUDA 13 builds need NVIDIA's R580 driver (CUDA 13.0 release notes)"
    )
    assert pins.GKE_DRIVER_FOR_VLLM == "latest", "GKE's `default` driver (R535) is too old"


def test_the_default_images_are_the_release_tables_own_digests_each_row_cited() -> None:
    main = pins.vllm_release(pins.VLLM_VERSION)
    cuda12 = pins.vllm_release(f"{pins.VLLM_VERSION}-cu129")
    assert f"vllm/vllm-openai:{main.tag}@{main.digest}" == pins.VLLM_IMAGE
    assert f"vllm/vllm-openai:{cuda12.tag}@{cuda12.digest}" == pins.VLLM_IMAGE_CUDA12, (
        "the CUDA 12.9 build the errors offer must be pinned by digest as well"
    )
    assert (main.cuda, cuda12.cuda) == ("13.0", "12.9")
    assert main.digest != cuda12.digest
    for row in pins.VLLM_RELEASES:
        assert row.source.startswith(pins.RELEASE_NOTES), f"{row.tag}: its CUDA needs a source"
        if row.digest is not None:
            assert re.fullmatch(r"sha256:[0-9a-f]{64}", row.digest)
            assert "; digest: " in row.source, f"{row.tag}: a digest names where it was read"


def test_every_shipped_stack_pulls_vllms_docker_hub_image_by_digest() -> None:
    pulled: dict[str, set[str]] = {}
    sandbox = ("cloud-test", ROOT / ".github" / "cloud-test" / "Pulumi.cloud-test.yaml")
    for name, path in [*golden.stacks(), sandbox]:
        for obj in golden.render(name, path).manifests:
            pod = obj.get("spec", {}).get("template", {}).get("spec", {})
            for c in pod.get("containers", []):
                if c["image"].startswith(pins.VLLM_REPOSITORY + ":"):
                    pulled.setdefault(c["image"], set()).add(name)
    assert {"dev", "prod", "cloud-test"} <= pulled.get(pins.VLLM_IMAGE, set()), (
        f"{pulled}: the stacks users copy and the weekly real-cloud test run the pinned default"
    )
    moving = {image: stacks for image, stacks in pulled.items() if "@sha256:" not in image}
    assert not moving, f"{moving}: a tag can be moved to other bytes; pin the digest too"


def test_default_vllm_image_does_not_run_on_volta_or_older() -> None:
    too_old = {
        g.name
        for g in GPU_TYPES.values()
        if g.compute_capability < pins.VLLM_MIN_COMPUTE_CAPABILITY
    }
    assert too_old == {"nvidia-tesla-v100", "nvidia-tesla-p100", "nvidia-tesla-p4"}, (
        "CUDA 13 dropped Volta and older: these need another image"
    )


def test_schema_version_is_gkes_regular_channel_and_kubernetes_validate_has_it() -> None:
    assert pins.KUBERNETES_SCHEMA_VERSION == "1.35", "GKE REGULAR's default, September 2026"
    schemas = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    assert (schemas / f"v{pins.KUBERNETES_SCHEMA_VERSION}.0-local").is_dir(), (
        "kubernetes-validate must ship the schema the plan is checked against"
    )
    assert render.DEFAULT_KUBERNETES_VERSION == pins.KUBERNETES_SCHEMA_VERSION


def test_cos_driver_installer_keeps_off_confidential_nodes_and_skips_loaded_drivers() -> None:
    spec = driver.daemonset_spec("COS_CONTAINERD", ("pool-a",))["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    for term in terms:
        assert {
            "key": "cloud.google.com/gke-confidential-nodes-instance-type",
            "operator": "DoesNotExist",
        } in term["matchExpressions"], "confidential GPU nodes take Google's confidential installer"
    installer, partition = spec["initContainers"]
    assert "lsmod | grep nvidia" in installer["command"][-1], (
        "Google's installer leaves a node with a loaded driver alone"
    )
    assert partition["image"].endswith(
        "@sha256:de12f85ebfb4fb6c1893cd30c23aab662a72fa0448f97ef74fccb82d7522ef17"
    ), "the partition image must be upstream's current multi-arch digest (H200/B200 sizes)"


def test_ubuntu_driver_installer_has_no_confidential_term() -> None:
    spec = driver.daemonset_spec("UBUNTU_CONTAINERD", ("pool-b",))["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    keys = {e["key"] for term in terms for e in term["matchExpressions"]}
    assert "cloud.google.com/gke-confidential-nodes-instance-type" not in keys, (
        "Google's Ubuntu manifest has no confidential-nodes term"
    )


def test_device_plugin_is_nvidias_current_release_and_fails_loudly_by_default() -> None:
    assert device_plugin.IMAGE.startswith("nvcr.io/nvidia/k8s-device-plugin:v0.20.0@sha256:")
    (container,) = device_plugin.daemonset_spec()["template"]["spec"]["containers"]
    assert container["env"] == [{"name": "FAIL_ON_INIT_ERROR", "value": "true"}], (
        "NVIDIA dropped FAIL_ON_INIT_ERROR=false: it silently hides GPU discovery failures; the "
        "plugin is kept off CPU nodes by its node affinity instead"
    )
    assert device_plugin.OPERATOR_VERSION == "v26.7.0", "GPU Operator's newest release"


@pytest.mark.parametrize(
    "stack", ["catalog-standard", "catalog-autopilot"], ids=["standard", "autopilot"]
)
def test_issue_10_stacks_render_ok(stack: str, tmp_path: Path) -> None:
    # An RTX PRO 6000 pool on g4-standard-48, an H200 pool with 4g.71gb MIG slices, a T4 pool
    # on an N1 custom machine; an Autopilot workload on 8 x H200: all offered by GKE today.
    stack_file = Path(__file__).parent / "stacks" / f"Pulumi.{stack}.yaml"
    code = shared.main([stack, "--stack-file", str(stack_file)], tmp_path).code
    assert code == render.EXIT_OK, "GKE offers every one of these GPUs and shapes"
