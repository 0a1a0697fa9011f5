"""GpuService takes typed, self-contained Args (issue 32 item 3): Pulumi's schema analyzer
accepts it, a Python program builds one without a stack file and gets the children the stack
file gets, bad Args are refused whole before anything is registered, and the component reads
nothing from the stack."""

import ast
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pulumi.provider.experimental.analyzer import Analyzer

from components.service import gpu_service
from components.service.gpu_service import GpuService
from tests.conftest import MINIMAL, STANDARD
from tools import args as generator
from tools.engine import Registration, run_program

SERVICE_TYPE = "gke-gpu:index:GpuService"

# One TLS workload with an API key on Autopilot: the stack file's way ...
STACK: dict[str, Any] = {
    **MINIMAL,
    "gke-gpu:cluster": {"mode": "autopilot", "deletionProtection": False},
    "gke-gpu:workloads": [
        {
            "name": "llm",
            "image": "vllm/vllm-openai:v0.6.4",
            "args": ["Qwen/Qwen2.5-0.5B-Instruct"],
            "gpu": {"type": "nvidia-l4", "count": 1},
            "spot": True,
            "expose": {"port": 443, "staticIp": True, "sourceRanges": ["203.0.113.0/24"]},
            "env": {"LOG_LEVEL": "info"},
            "cache": {"size": "30Gi"},
            "secretEnv": {"HF_TOKEN": "hfToken"},
        }
    ],
    "gke-gpu:hfToken": "hf-secret-value",
}

# ... and a Python program's, with no stack file: the same workload, written as Args.
PROGRAM = """
import pulumi
import pulumi_kubernetes as k8s

from components.platform.certificate import CertificateAuthority, CertificateAuthorityArgs
from components.service.gpu_service import GpuService, GpuServiceArgs
from components.config.workload_args import (
    ServiceClusterMode, ServiceNodePoolDriver, WorkloadExposeType,
)

provider = k8s.Provider("k8s", kubeconfig="{}")
namespace = k8s.core.v1.Namespace(
    "ns", metadata={"name": "gke-gpu"}, opts=pulumi.ResourceOptions(provider=provider)
)
ca = CertificateAuthority("ca", CertificateAuthorityArgs(stack="test"))
args = GpuServiceArgs(
    workload=WORKLOAD,
    cluster={"mode": MODE, "name": "gke-gpu-test",
             "location": "us-central1", "deletion_protection": False},
    node_pools=POOLS,
    kubernetes=provider,
    project="acme-ml-test",
    region="us-central1",
    namespace="gke-gpu",
    secrets={"hfToken": pulumi.Output.secret("hf-secret-value")},
    ca={"cert_pem": ca.cert_pem, "private_key_pem": ca.private_key_pem},
    monitored=True,
    waits={"namespace": [namespace.metadata.name]},
)
try:
    GpuService("llm", args)
except Exception as error:
    pulumi.export("problems", getattr(error, "problems", [repr(error)]))
    pulumi.export("error", str(error).splitlines()[0])
"""

GOOD_WORKLOAD = """{
    "name": "llm",
    "image": "vllm/vllm-openai:v0.6.4",
    "args": ["Qwen/Qwen2.5-0.5B-Instruct"],
    "gpu": {"type": "nvidia-l4", "count": 1},
    "spot": True,
    "expose": {"port": 443, "static_ip": True, "source_ranges": ["203.0.113.0/24"],
               "type": WorkloadExposeType.LoadBalancer},
    "env": {"LOG_LEVEL": "info"},
    "cache": {"size": "30Gi"},
    "secret_env": {"HF_TOKEN": "hfToken"},
}"""


def _program(
    tmp_path: Path,
    workload: str,
    mode: str = "ServiceClusterMode.Autopilot",
    pools: str = "[]",
) -> Path:
    path = tmp_path / "program.py"
    text = PROGRAM.replace("WORKLOAD", workload).replace("MODE", mode)
    path.write_text(textwrap.dedent(text).replace("POOLS", pools))
    return path


def _in_service(recording: list[Registration]) -> dict[tuple[str, str], Registration]:
    """The resources inside the GpuService, by (type, name)."""
    return {(r.type, r.name): r for r in recording if SERVICE_TYPE + "$" in r.urn}


# --- the analyzer -------------------------------------------------------------------------------


def _schema() -> dict[str, Any]:
    return Analyzer("gke-gpu").analyze([GpuService])


def test_pulumis_analyzer_accepts_gpu_service_with_the_stack_files_key_names() -> None:
    schema = _schema()
    inputs = schema["component_definitions"]["GpuService"].inputs
    types = schema["type_definitions"]
    assert inputs["workload"].ref == "#/types/gke-gpu:index:Workload", (
        "a TypeScript user writes the workload as one typed object"
    )
    image = types["Workload"].properties["image"]
    assert (image.type.value, image.optional) == ("string", False), (
        "image is the one key a workload cannot do without, as in the stack file"
    )
    count = types["WorkloadGpu"].properties["count"]
    assert count.type.value == "integer", "gpu.count is a whole number of GPUs"
    expose_type = types["WorkloadExpose"].properties["type"]
    assert expose_type.ref == "#/types/gke-gpu:index:WorkloadExposeType"
    assert [m.value for m in types["WorkloadExposeType"].enum] == [
        "LoadBalancer",
        "Internal",
        "ClusterIP",
        "NodePort",
    ], "expose.type offers exactly the stack file's four ways to reach a model"
    workload_keys = set(types["Workload"].properties)
    assert {"secretEnv", "nodeSelector", "modelCache", "readOnlyRootFilesystem"} <= workload_keys
    assert set(types["WorkloadAutoscale"].properties) >= {"minReplicas", "wakeTimeoutSeconds"}
    assert inputs["kubernetes"].ref and "kubernetes" in inputs["kubernetes"].ref, (
        "the cluster arrives as a Kubernetes provider, a resource any Pulumi program has"
    )


def test_every_workload_key_of_the_stack_file_is_an_input_with_its_description() -> None:
    from components.config.schema import WorkloadSpec

    types = _schema()["type_definitions"]
    keys = {f.alias or n for n, f in WorkloadSpec.model_fields.items()}
    assert set(types["Workload"].properties) == keys, (
        "the Args' workload must have exactly the stack file's keys, or a stack file's workload "
        "could not be written as Args"
    )
    undocumented = [k for k, p in types["Workload"].properties.items() if not p.description]
    assert not undocumented, f"inputs without a description in the package schema: {undocumented}"


def test_the_generated_workload_types_are_current() -> None:
    assert generator.TARGET.read_text() == generator.generate(), (
        f"components/config/workload_args.py differs from the schema: run `{generator.COMMAND}`"
    )


# --- a Python program without a stack file ------------------------------------------------------


@pytest.fixture(scope="module")
def from_stack() -> list[Registration]:
    return run_program(STACK, stack="test", secret_keys=("gke-gpu:hfToken",)).resources


def test_a_gpu_service_built_from_args_registers_what_the_stack_file_registers(
    tmp_path: Path, from_stack: list[Registration]
) -> None:
    direct = run_program({}, stack="test", program=_program(tmp_path, GOOD_WORKLOAD))
    assert "problems" not in direct.stack_outputs, direct.stack_outputs.get("problems")
    mine, theirs = _in_service(direct.resources), _in_service(from_stack)
    assert sorted(mine) == sorted(theirs), (
        "a program that writes the Args itself must get the same resources as the stack file"
    )
    assert len(mine) > 10, "the service's gate, workload, Service and certificate"
    for key, registration in theirs.items():
        assert mine[key].inputs == registration.inputs, f"{key}: inputs differ"


# The Standard stack of tests/conftest.py, as Args: its pool with the machine and driver the stack
# decided for it (g2-standard-8: the smallest L4 machine whose node holds the default-sized pod).
STANDARD_WORKLOAD = """{
    "name": "llm",
    "image": "vllm/vllm-openai:v0.6.4",
    "gpu": {"type": "nvidia-l4", "count": 1},
    "spot": True,
    "port": 8000,
    "probe": {"path": "/health"},
    "expose": {"port": 443},
}"""
STANDARD_POOLS = """[{
    "name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "spot": True, "max_nodes": 2,
    "machine_type": "g2-standard-8", "driver": ServiceNodePoolDriver.Default,
}]"""


def test_on_standard_a_gpu_service_from_args_lands_on_its_pool_as_the_stack_files_does(
    tmp_path: Path,
) -> None:
    stack = run_program(STANDARD, stack="test").resources
    program = _program(tmp_path, STANDARD_WORKLOAD, "ServiceClusterMode.Standard", STANDARD_POOLS)
    direct = run_program({}, stack="test", program=program)
    assert "problems" not in direct.stack_outputs, direct.stack_outputs.get("problems")
    mine, theirs = _in_service(direct.resources), _in_service(stack)
    assert sorted(mine) == sorted(theirs)
    deployment = ("kubernetes:apps/v1:Deployment", "workload-llm-deployment")
    assert mine[deployment].inputs == theirs[deployment].inputs, (
        "the pod must select the same GKE pool (its hashed name), request the same share of the "
        "node and roll out the same way"
    )


# Two workloads on one pool: the pool's machine (g2-standard-32, for b's 20 CPUs) and a's rollout
# (no room for a surge pod beside b's at maxNodes) are the stack's decisions, not a's alone (which
# would be g2-standard-8 and surge).
SHARED: dict[str, Any] = {
    **MINIMAL,
    "gke-gpu:cluster": {"mode": "standard", "deletionProtection": False},
    "gke-gpu:nodePools": [{"name": "l4", "gpu": {"type": "nvidia-l4", "count": 1}, "maxNodes": 2}],
    "gke-gpu:workloads": [
        {
            "name": "a",
            "image": "vllm/vllm-openai:v0.6.4",
            "gpu": {"type": "nvidia-l4", "count": 1},
            "port": 8000,
            "cache": {"size": "30Gi"},
        },
        {
            "name": "b",
            "image": "ghcr.io/acme/batch:1",
            "gpu": {"type": "nvidia-l4", "count": 1},
            "resources": {"cpu": "20", "memory": "64Gi"},
        },
    ],
}


def test_each_gpu_service_gets_what_the_stack_decided_for_its_shared_pool() -> None:
    from components.config import load

    raw = {k.partition(":")[2]: v for k, v in SHARED.items() if k.startswith("gke-gpu:")}
    a = load(raw, project="acme-ml-test", region="us-central1", stack="test").workloads[0]
    recording = run_program(SHARED, stack="test")
    spec = next(r for r in recording.resources if r.name == "workload-a-deployment").inputs["spec"]
    requests = spec["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert (requests["cpu"], requests["memory"]) == (a.cpu, a.memory), (
        "the pod must request its share of the machine the stack chose for the pool with all its "
        "workloads, which the offline plan and the cost show"
    )
    assert spec["strategy"] == {"type": "Recreate"}, (
        f"rollout {a.rollout!r}: a surge pod beside b's pods would wait for a node the pool "
        "cannot add"
    )


def test_objects_wait_for_the_namespace_passed_as_an_output(tmp_path: Path) -> None:
    direct = run_program({}, stack="test", program=_program(tmp_path, GOOD_WORKLOAD))
    namespace = next(r for r in direct.resources if r.type == "kubernetes:core/v1:Namespace")
    deployment = next(
        r for r in direct.resources if r.name == "workload-llm-deployment" and r.custom
    )
    assert namespace.urn in deployment.dependencies, (
        "the Deployment must wait for its namespace, or its create fails on a new cluster"
    )


# What Pulumi's provider host hands GpuService when a TypeScript or YAML program creates one
# (issue 33): the wire's camelCase keys, enum values as strings, numbers as floats, mapped to the
# Args by the SDK's ComponentProvider (the resource reference deserialized to a Provider).
WIRE_PROGRAM = """
import pulumi
import pulumi_kubernetes as k8s
from pulumi.provider.experimental.component import ComponentProvider

from components.platform.certificate import CertificateAuthority, CertificateAuthorityArgs
from components.service.gpu_service import GpuService

provider = k8s.Provider("k8s", kubeconfig="{}")
namespace = k8s.core.v1.Namespace(
    "ns", metadata={"name": "gke-gpu"}, opts=pulumi.ResourceOptions(provider=provider)
)
ca = CertificateAuthority("ca", CertificateAuthorityArgs(stack="test"))
inputs = {
    "workload": {
        "name": "llm",
        "image": "vllm/vllm-openai:v0.6.4",
        "args": ["Qwen/Qwen2.5-0.5B-Instruct"],
        "gpu": {"type": "nvidia-l4", "count": 1.0},
        "spot": True,
        "expose": {"port": 443.0, "staticIp": True, "sourceRanges": ["203.0.113.0/24"],
                   "type": "LoadBalancer"},
        "env": {"LOG_LEVEL": "info"},
        "cache": {"size": "30Gi"},
        "secretEnv": {"HF_TOKEN": "hfToken"},
    },
    "cluster": {"mode": "autopilot", "name": "gke-gpu-test", "location": "us-central1",
                "deletionProtection": False},
    "kubernetes": provider,
    "project": "acme-ml-test",
    "region": "us-central1",
    "namespace": "gke-gpu",
    "secrets": {"hfToken": pulumi.Output.secret("hf-secret-value")},
    "ca": {"certPem": ca.cert_pem, "privateKeyPem": ca.private_key_pem},
    "monitored": True,
    "waits": {"namespace": [namespace.metadata.name]},
}
ComponentProvider([GpuService], "gke-gpu").construct(
    "llm", "gke-gpu:index:GpuService", inputs, None
)
"""


def test_the_provider_hosts_wire_inputs_build_the_same_gpu_service(
    tmp_path: Path, from_stack: list[Registration]
) -> None:
    program = tmp_path / "wire.py"
    program.write_text(WIRE_PROGRAM)
    wire = run_program({}, stack="test", program=program)
    mine, theirs = _in_service(wire.resources), _in_service(from_stack)
    assert sorted(mine) == sorted(theirs), (
        "a TypeScript program's GpuService must register what the stack file's does"
    )
    for key, registration in theirs.items():
        assert mine[key].inputs == registration.inputs, f"{key}: inputs differ"


# --- bad Args -----------------------------------------------------------------------------------

BAD_WORKLOAD = """{
    "name": "LLM",
    "gpu": {"type": "nvidia-l4", "count": 3},
    "expose": {"port": 70000},
    "secret_env": {"HF_TOKEN": "missingKey"},
}"""


def test_bad_args_report_every_problem_with_its_path_and_register_nothing(
    tmp_path: Path,
) -> None:
    direct = run_program({}, stack="test", program=_program(tmp_path, BAD_WORKLOAD))
    problems = direct.stack_outputs.get("problems") or []
    paths = {p.split(":", 1)[0] for p in problems}
    assert {"workload.name", "workload.image", "workload.expose.port"} <= paths, problems
    assert any(p.startswith("workload.gpu.count") for p in problems), problems
    assert "the Args of GpuService 'llm'" in direct.stack_outputs["error"], (
        "the error must say which component's Args are wrong"
    )
    assert not [r for r in direct.resources if SERVICE_TYPE in r.urn], (
        "nothing of a GpuService with bad Args may be registered"
    )


def test_a_secret_env_without_its_secret_is_a_problem_of_the_args(tmp_path: Path) -> None:
    workload = GOOD_WORKLOAD.replace('"hfToken"}', '"otherKey"}')
    direct = run_program({}, stack="test", program=_program(tmp_path, workload))
    problems = direct.stack_outputs.get("problems") or []
    assert [p for p in problems if p.startswith("secrets.otherKey:")], (
        f"secretEnv naming a secret the Args do not hand over must be reported: {problems}"
    )
    assert "hf-secret-value" not in str(problems), "a problem never shows a secret"


# --- nothing read from the stack ----------------------------------------------------------------


def test_gpu_service_reads_no_stack_config_and_evaluates_its_annotations() -> None:
    source = Path(gpu_service.__file__).read_text()
    tree = ast.parse(source)
    reads = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in ("Config", "get_stack", "get_project", "require_secret")
    ]
    assert not reads, f"GpuService must take what it needs as Args, not read it: {reads}"
    futures = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    assert not futures, "string annotations hide the Args' types from Pulumi's analyzer"


def test_the_architecture_pages_python_example_registers_a_gpu_service(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    start = text.index("```python\n") + len("```python\n")
    code = text[start : text.index("```", start)]
    program = tmp_path / "example.py"
    program.write_text(code.replace("kubeconfig=kubeconfig", 'kubeconfig="{}"'))
    recording = run_program({}, stack="test", program=program)
    deployments = [r for r in recording.resources if r.type == "kubernetes:apps/v1:Deployment"]
    assert any(SERVICE_TYPE + "$" in r.urn for r in deployments), (
        "the documented way to use GpuService from Python must deploy the model"
    )
