"""The public components take typed, self-contained Args that Pulumi's schema analyzer accepts
(issue 32, item 3): a consumer in TypeScript or YAML sees each input with its type and whether it
must be set; bad Args are refused with every problem at its property path before anything is
registered; no component reads the stack's config or name behind its caller's back."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from pulumi.provider.experimental.analyzer import (
    Analyzer,
    AnalyzeResult,
    PropertyDefinition,
    PropertyType,
)

from components.config import (
    ClusterConfig,
    ClusterSettings,
    DevicePluginConfig,
    DevicePluginKind,
    GpuDriver,
    GpuPool,
    NodeImageType,
    NodeLabel,
    typed,
)
from components.config.component_checks import (
    cluster_args_problems,
    existing_args_problems,
    installer_args_problems,
    plugin_args_problems,
    pool_args_problems,
)
from components.platform.nodepool import GpuNodePoolArgs
from components.public import PLATFORM_COMPONENTS, PUBLIC_COMPONENTS
from tests.conftest import MINIMAL, NODE_POOL, ROOT
from tools import component_args
from tools.engine import run_program


@pytest.fixture(scope="module")
def schema() -> AnalyzeResult:
    return Analyzer("gke-gpu").analyze(list(PUBLIC_COMPONENTS))


def _inputs(schema: AnalyzeResult, component: str) -> dict[str, PropertyDefinition]:
    return schema["component_definitions"][component].inputs


def _type(schema: AnalyzeResult, ref: str | None) -> str:
    assert ref is not None and ref.startswith("#/types/gke-gpu:index:"), ref
    return ref.rsplit(":", 1)[-1]


@pytest.mark.parametrize("component", PUBLIC_COMPONENTS, ids=lambda c: c.__name__)
def test_every_public_component_is_read_by_pulumis_schema_analyzer(component: type) -> None:
    result = Analyzer("gke-gpu").analyze([component])
    definition = result["component_definitions"][component.__name__]
    assert definition.inputs, f"{component.__name__} shows a consumer no input at all"
    assert definition.outputs, f"{component.__name__} shows a consumer no output at all"


def test_the_platform_components_are_all_public() -> None:
    names = {c.__name__ for c in PLATFORM_COMPONENTS}
    assert names == {
        "GkeCluster",
        "ExistingCluster",
        "GpuNodePool",
        "NvidiaDriverInstaller",
        "NvidiaDevicePlugin",
    }
    assert set(PLATFORM_COMPONENTS) <= set(PUBLIC_COMPONENTS), "the package host reads this list"


def test_a_gpu_pools_gpu_type_is_a_required_string_and_its_defaults_may_be_left_out(
    schema: AnalyzeResult,
) -> None:
    inputs = _inputs(schema, "GpuNodePool")
    required = {name for name, p in inputs.items() if not p.optional}
    assert required == {"project", "location", "clusterName", "serviceAccount", "pool"}, (
        "a consumer must set exactly what the pool cannot work out itself"
    )
    assert inputs["clusterName"].plain is None, "the cluster's name is another resource's output"
    pool = schema["type_definitions"][_type(schema, inputs["pool"].ref)].properties
    assert pool["gpuType"].type == PropertyType.STRING and not pool["gpuType"].optional, (
        "a GPU pool without a GPU type means nothing"
    )
    optional = {"gpuCount", "machineType", "spot", "minNodes", "maxNodes", "zones", "driver"}
    assert all(pool[k].optional for k in optional), (
        "a stack file may leave these out (their defaults), so a TypeScript consumer may too"
    )
    driver = schema["type_definitions"][_type(schema, pool["driver"].ref)]
    assert [e.value for e in driver.enum or []] == [d.value for d in GpuDriver], (
        "the driver choices are the stack file's"
    )
    after = inputs["after"].items
    assert after is not None and after.ref and "gcp" in after.ref, (
        "a pool waits for another package's NodePool, passed as a resource reference"
    )


def test_the_driver_installer_and_the_clusters_take_enums_and_resources(
    schema: AnalyzeResult,
) -> None:
    installer = _inputs(schema, "NvidiaDriverInstaller")
    image = schema["type_definitions"][_type(schema, installer["imageType"].ref)]
    assert {e.value for e in image.enum or []} == {t.value for t in NodeImageType}
    cluster = schema["type_definitions"][
        _type(schema, _inputs(schema, "GkeCluster")["cluster"].ref)
    ]
    mode = schema["type_definitions"][_type(schema, cluster.properties["mode"].ref)]
    assert {e.value for e in mode.enum or []} == {"standard", "autopilot"}
    assert [k for k, p in cluster.properties.items() if not p.optional] == ["name"], (
        "a stack file needs to set no cluster key (its name comes from the stack), so a "
        "consumer sets only the name"
    )
    existing = _inputs(schema, "ExistingCluster")
    assert existing["kubeconfig"].optional and existing["context"].optional, (
        "an existing cluster is reached through either"
    )
    for cluster_class in ("GkeCluster", "ExistingCluster"):
        outputs = schema["component_definitions"][cluster_class].outputs
        assert "provider" not in outputs and "kubeconfig" in outputs, (
            f"{cluster_class} hands on its kubeconfig, not a provider output: TypeScript refuses "
            "an Output<Provider> as a resource option and Pulumi YAML as a provider (issue 41)"
        )


def test_the_provider_hosts_plain_values_become_the_typed_args() -> None:
    # What pulumi/provider/experimental/component.py hands the constructor: camelCase mapped to
    # Python names, nested objects as dicts, numbers as floats, lists as lists.
    args = typed.build(
        GpuNodePoolArgs,
        {
            "project": "p",
            "location": "us-central1",
            "cluster_name": "c",
            "service_account": "sa@p.iam.gserviceaccount.com",
            "pool": {"name": "l4", "gpu_type": "nvidia-l4", "gpu_count": 2.0, "zones": ["a"]},
        },
    )
    assert isinstance(args.pool, GpuPool), "a nested dataclass arrives as one"
    assert args.pool.gpu_count == 2 and isinstance(args.pool.gpu_count, int)
    assert args.pool.zones == ("a",), "a list arrives as the frozen model's tuple"


def test_a_bad_pool_reports_every_problem_at_its_property_path() -> None:
    pool = GpuPool(name="l4", gpu_type="nvidia-l4", gpu_count=3, min_nodes=4, max_nodes=2)
    problems = [str(p) for p in pool_args_problems(pool, "us-central1")]
    assert any(p.startswith("pool.gpuCount: 3 GPUs is not a valid count") for p in problems), (
        problems
    )
    assert any(p.startswith("pool.minNodes: 4 is more than maxNodes") for p in problems), problems


BAD_POOL_PROGRAM = """
import pulumi
from components.config import GpuPool
from components.config.component_checks import ArgsError
from components.platform.nodepool import GpuNodePool, GpuNodePoolArgs

try:
    GpuNodePool("l4", GpuNodePoolArgs(
        project="acme-ml-test", location="us-central1", cluster_name="c", service_account="sa",
        pool=GpuPool(name="l4", gpu_type="nvidia-l4", gpu_count=3, min_nodes=4, max_nodes=2),
    ))
except ArgsError as error:
    pulumi.export("problems", error.problems)
"""


def test_a_component_with_bad_args_registers_nothing_and_names_every_problem(
    tmp_path: Path,
) -> None:
    program = tmp_path / "__main__.py"
    program.write_text(BAD_POOL_PROGRAM)
    recording = run_program(MINIMAL, program=program)
    problems = recording.stack_outputs.get("problems")
    assert problems, "a pool GKE cannot create must be refused"
    assert any(p.startswith('GpuNodePool "l4": pool.gpuCount: 3') for p in problems), problems
    assert any(p.startswith('GpuNodePool "l4": pool.minNodes: 4') for p in problems), problems
    assert not recording.of_type(NODE_POOL), "nothing is registered for refused Args"
    assert not recording.of_type("gke-gpu:index:GpuNodePool"), (
        "the component itself is not registered either"
    )


MINIMAL_POOL_PROGRAM = """
from components.config import GpuPool
from components.platform.nodepool import GpuNodePool, GpuNodePoolArgs

GpuNodePool("l4", GpuNodePoolArgs(
    project="acme-ml-test", location="us-central1", cluster_name="c", service_account="sa",
    pool=GpuPool(name="l4", gpu_type="nvidia-l4"),
))
"""


def test_a_pool_given_only_its_name_and_gpu_type_gets_the_stack_files_defaults(
    tmp_path: Path,
) -> None:
    program = tmp_path / "__main__.py"
    program.write_text(MINIMAL_POOL_PROGRAM)
    pool = run_program(MINIMAL, program=program).one(NODE_POOL).inputs
    node = pool["nodeConfig"]
    assert node["machineType"] == "g2-standard-4", "the smallest machine that carries one L4"
    assert node["guestAccelerators"][0]["count"] == 1
    assert node["guestAccelerators"][0]["gpuDriverInstallationConfig"] == {
        "gpuDriverVersion": "DEFAULT"
    }
    assert not node.get("spot"), "on-demand unless asked"
    assert pool["autoscaling"]["totalMinNodeCount"] == 0, "scales to zero when idle"
    assert pool["autoscaling"]["totalMaxNodeCount"] == 1


HOST_POOL_PROGRAM = """
from components.config import GpuDriver
from components.platform.nodepool import GpuNodePool

# As the provider host hands it over: Python names, nested dicts, floats, lists; Enums converted.
GpuNodePool("l4", {
    "project": "acme-ml-test", "location": "us-central1", "cluster_name": "c",
    "service_account": "sa",
    "pool": {"name": "l4", "gpu_type": "nvidia-l4", "gpu_count": 2.0, "driver": GpuDriver.LATEST,
             "zones": ["us-central1-a"], "max_nodes": 3.0},
})
"""


def test_a_pool_from_the_provider_hosts_plain_values_registers_as_a_typed_one(
    tmp_path: Path,
) -> None:
    program = tmp_path / "__main__.py"
    program.write_text(HOST_POOL_PROGRAM)
    pool = run_program(MINIMAL, program=program).one(NODE_POOL).inputs
    accelerator = pool["nodeConfig"]["guestAccelerators"][0]
    assert accelerator["count"] == 2, "the wire's 2.0 is the pool's 2 GPUs"
    assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "LATEST"}
    assert pool["nodeLocations"] == ["us-central1-a"]
    assert pool["autoscaling"]["totalMaxNodeCount"] == 3


def test_a_valid_pool_passes_its_components_own_checks() -> None:
    pool = GpuPool(name="l4", gpu_type="nvidia-l4", gpu_count=1, spot=True, max_nodes=2)
    assert pool_args_problems(pool, "us-central1") == []


def _paths(problems: object) -> list[str]:
    return [str(p).split(":", 1)[0] for p in problems]  # type: ignore[attr-defined]


def test_the_other_components_report_each_bad_arg_at_its_path() -> None:
    cluster = ClusterConfig.of(
        ClusterSettings(
            name="Bad_Name", location="europe-west4", master_authorized_networks=["10.0.0.1/8"]
        ),
        "us-central1",
    )
    assert _paths(cluster_args_problems(cluster, "us-central1")) == [
        "cluster.name",
        "cluster.location",
        "cluster.masterAuthorizedNetworks[0]",
    ]
    assert _paths(existing_args_problems(None, None)) == ["kubeconfig"], "neither is given"
    assert _paths(existing_args_problems("kubeconfig", "ctx")) == ["kubeconfig"], "both given"
    plugin = DevicePluginConfig(
        type=DevicePluginKind.NONE,
        sharing_replicas=1,
        node_selector_terms=((NodeLabel("gpu", "yes please"),),),
    )
    assert _paths(plugin_args_problems(plugin)) == [
        "plugin.sharingReplicas",
        "plugin.sharingReplicas",
        "plugin.nodeSelectorTerms[0][0].value",
    ], "replicas below 2, time-slicing with no plugin, a label value Kubernetes refuses"
    assert _paths(installer_args_problems([])) == ["pools"]
    assert _paths(installer_args_problems(["l4", "L4!"])) == ["pools[1]"]


def test_a_consumers_cluster_takes_the_stack_files_defaults() -> None:
    cluster = ClusterConfig.of(ClusterSettings(name="gpu", private_nodes=True), "us-central1")
    assert cluster.mode == "autopilot" and cluster.location == "us-central1"
    assert cluster.deletion_protection, "a cluster is protected unless asked otherwise"
    assert cluster.cloud_nat, "private nodes reach public registries only through Cloud NAT"
    assert cluster.release_channel == "REGULAR" and cluster.system_nodes == 1


# --- no component reads the stack's config or name ----------------------------------------------

STACK_READS = {"Config", "get_stack", "get_project", "get_organization"}


def stack_reads(source: str) -> list[str]:
    """`pulumi.Config`, `pulumi.get_stack()` and the like, by attribute or imported name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in STACK_READS:
            found.append(f"line {node.lineno}: .{node.attr}")
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pulumi"):
            found += [f"line {node.lineno}: {a.name}" for a in node.names if a.name in STACK_READS]
    return found


def test_the_stack_read_scanner_sees_every_form() -> None:
    source = textwrap.dedent(
        """
        import pulumi
        from pulumi import get_stack
        a = pulumi.Config("gke-gpu").require("x")
        b = pulumi.get_stack()
        """
    )
    assert len(stack_reads(source)) == 3


def test_no_platform_component_reads_pulumi_config_or_the_stack_name() -> None:
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in sorted((ROOT / "components" / "platform").rglob("*.py"))
        if (found := stack_reads(path.read_text()))
    }
    assert not offenders, (
        "a component takes what it needs as Args; reading the stack's config or name ties it to "
        f"this one program: {offenders}"
    )


def test_the_architecture_docs_list_the_current_args_of_every_public_component() -> None:
    text = component_args.DOC.read_text()
    assert component_args.current(text) == text, (
        f"docs/architecture.md lists Args the components no longer take: run "
        f"`{component_args.COMMAND}` and commit the result"
    )
    for component in PUBLIC_COMPONENTS:
        assert f"### {component.__name__}\n" in text, f"{component.__name__} is not listed"
