"""Fifty bad inputs a consumer's program can send the package, through the real provider host
(issue 41): each is refused before anything is registered, as the engine's invalid-input error
with every problem at its property path, and none shows a Python traceback.

Each case edits one sample of tests/package_samples.py the way a TypeScript or YAML program
would get it wrong: a wrong type, a value out of range, a misspelt key, a missing input, an
unknown enum value, a name GKE or Kubernetes refuses.
"""

import pytest
from google.protobuf import struct_pb2

from tests.package_host import Served
from tests.test_package_inputs import host, refused, sent  # noqa: F401 - the fixture


class _Delete:
    def __repr__(self) -> str:
        return "DELETE"


DELETE = _Delete()
"""The key removed: a required input left out."""

CASES: list[tuple[str, str, object]] = [
    # GpuService: the workload, as a stack file's workloads[] entry writes it.
    ("GpuService", "workload.gpu.count", "two"),
    ("GpuService", "workload.gpu.count", -1),
    ("GpuService", "workload.gpu.type", "nvidia-l5"),
    ("GpuService", "workload.name", "Bad_Name"),
    ("GpuService", "workload.image", ""),
    ("GpuService", "workload.kind", "Pod"),
    ("GpuService", "workload.replicas", -3),
    ("GpuService", "workload.expose.port", 70000),
    ("GpuService", "workload.expose.type", "Ingress"),
    ("GpuService", "workload.expose.sourceRanges", ["not-a-cidr"]),
    ("GpuService", "workload.env", "LOG_LEVEL=info"),
    ("GpuService", "workload.args", "--max-model-len 4096"),
    ("GpuService", "workload.port", "http"),
    ("GpuService", "workload.imgae", "vllm/vllm-openai:v0.6.4"),
    ("GpuService", "workload.cache.size", "lots"),
    ("GpuService", "workload.secretEnv.HF_TOKEN", "notHanded"),
    ("GpuService", "workload.gpu", 1),
    ("GpuService", "workload.spot", "yes"),
    ("GpuService", "workload.resources", {"memory": "lots"}),
    ("GpuService", "workload", "llm"),
    ("GpuService", "workload", DELETE),
    ("GpuService", "cluster.mode", "gke"),
    ("GpuService", "cluster", DELETE),
    ("GpuService", "cluster.name", "Not A GKE Name"),
    ("GpuService", "project", 7),
    ("GpuService", "region", "US-Central1"),
    ("GpuService", "nodepool", []),
    ("GpuService", "waits.namespace", "gke-gpu"),
    ("GpuService", "namespace", "Bad Namespace"),
    ("GpuService", "ca", DELETE),
    ("GpuService", "kubernetes", DELETE),
    # GpuNodePool: the pool's settings.
    ("GpuNodePool", "pool.gpuType", "nvidia-l5"),
    ("GpuNodePool", "pool.maxNodes", -1),
    ("GpuNodePool", "pool.minNodes", 5),
    ("GpuNodePool", "pool.driver", "newest"),
    ("GpuNodePool", "pool.zones", ["mars-a"]),
    ("GpuNodePool", "pool.name", "L4!"),
    ("GpuNodePool", "pool", "l4"),
    ("GpuNodePool", "pool.gpuCount", 3),
    ("GpuNodePool", "pool.sharing", {"strategy": "SHARE", "maxClientsPerGpu": 2}),
    ("GpuNodePool", "pool.partitionSize", "1g.10gb"),
    ("GpuNodePool", "pool.imageType", "WINDOWS"),
    ("GpuNodePool", "clusterName", DELETE),
    # The cluster, built or existing, and the rest.
    ("GkeCluster", "cluster.mode", "serverless"),
    ("GkeCluster", "cluster.name", "x" * 60),
    ("GkeCluster", "cluster.systemNodes", -2),
    ("GkeCluster", "cluster.masterAuthorizedNetworks", ["everyone"]),
    ("ExistingCluster", "context", "lab"),
    ("NvidiaDriverInstaller", "imageType", "WINDOWS"),
    ("NvidiaDevicePlugin", "plugin.type", "operator-ish"),
]


# Where the error is rightly reported at another property than the one edited.
REPORTED_AT = {
    # A secretEnv entry names a key of `secrets`: the fix is to hand that secret over.
    ("GpuService", "workload.secretEnv.HF_TOKEN"): "secrets",
    # A context and the sample's kubeconfig: one of the two must go.
    ("ExistingCluster", "context"): "kubeconfig",
}


def edit(inputs: struct_pb2.Struct, path: str, value: object) -> None:
    *parents, last = path.split(".")
    target = inputs
    for key in parents:
        target = target[key]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value


def test_there_are_fifty_cases() -> None:
    assert len(CASES) == 50, "issue 41 asks for 50 bad inputs from a consumer's side"


@pytest.mark.parametrize(("component", "path", "value"), CASES, ids=lambda v: repr(v)[:40])
def test_a_bad_input_is_refused_at_its_path_without_a_traceback(
    host: Served,  # noqa: F811 - the fixture
    component: str,
    path: str,
    value: object,
) -> None:
    request = sent(host, component)
    edit(request.inputs, path, value)
    errors = refused(host, component, request)
    top = REPORTED_AT.get((component, path), path.split(".")[0])
    named = [p for p, _ in errors if p.split(".")[0].split("[")[0] in (top, "(inputs)")]
    assert named, (
        f"{component} {path}={value!r}: the error must name the property the consumer set "
        f"({path}), got {errors}"
    )
    assert all(reason.strip() for _, reason in errors), f"an error without its reason: {errors}"
