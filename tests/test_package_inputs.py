"""What another language's program can pass the package, through the real provider host
(issue 41): outputs (known, unknown during a preview, secret) where a value is computed, and bad
input answered at its property path with the fix, never a traceback.

The host is started as the engine starts it (tests/package_host.py); the consumer's inputs are
serialized by the SDK's own serializer as the engine forwards them to a plugin that accepts
outputs (tests/test_package_host.py `_consumer`), then edited the way another language's SDK
would send them: an Output unknown during a preview (the RPC's unknown), a secret output value.
"""

import json
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from pulumi.runtime import known_types, rpc
from pulumi.runtime.proto import errors_pb2, provider_pb2, status_pb2

from components.package import NAME
from components.serve.schema import PLAIN, SECRET_INPUTS, SECRET_OUTPUTS, plain_share
from components.serve.settle import UNKNOWN_REASON
from tests.package_host import Served, ServedMonitor, served_host
from tests.package_samples import SAMPLES
from tests.test_package_host import STACK, Request, _consumer
from tools.engine import PROJECT, CloudMocks

SECRET = "hf-plain-value-that-must-never-show"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    monitor = ServedMonitor(CloudMocks(), PROJECT, STACK)
    with served_host(monitor, tmp_path_factory.mktemp("pwd")) as served:
        yield served


@pytest.fixture(scope="module")
def schema(host: Served) -> dict[str, Any]:
    return json.loads(host.client.GetSchema(provider_pb2.GetSchemaRequest(version=0)).schema)


def construct(host: Served, component: str, request: Request, preview: bool = False) -> Any:
    host.monitor.registrations.clear()
    return host.client.Construct(
        provider_pb2.ConstructRequest(
            project=PROJECT,
            stack=STACK,
            name="sample",
            type=f"{NAME}:index:{component}",
            inputs=request.inputs,
            inputDependencies=request.dependencies,
            providers=request.providers,
            monitorEndpoint=host.address,
            parallel=1,
            dryRun=preview,
        )
    )


def sent(host: Served, component: str) -> Request:
    return _consumer(host.monitor, SAMPLES[component])


def set_path(inputs: struct_pb2.Struct, path: str, value: Any) -> None:
    """inputs[a][b]... = value, `value` as the RPC encodes it (a string, a Struct's dict)."""
    *parents, last = path.split(".")
    target: Any = inputs
    for key in parents:
        target = target[key]
    target[last] = value


def output_value(value: Any, secret: bool = False) -> dict[str, Any]:
    """An output value as a consumer's SDK sends one (rpc.serialize_property)."""
    return {
        rpc._special_sig_key: rpc._special_output_value_sig,  # noqa: SLF001
        "value": value,
        "secret": secret,
    }


def property_errors(error: grpc.RpcError) -> list[tuple[str, str]]:
    """The engine's InputPropertiesError details: (property path, reason) each."""
    trailer = dict(error.trailing_metadata() or ())  # pyright: ignore[reportAttributeAccessIssue]
    status = status_pb2.Status.FromString(trailer["grpc-status-details-bin"])
    found = errors_pb2.InputPropertiesError()
    assert status.details[0].Unpack(found)
    return [(e.property_path, e.reason) for e in found.errors]


def refused(host: Served, component: str, request: Request, preview: bool = False) -> Any:
    with pytest.raises(grpc.RpcError) as caught:
        construct(host, component, request, preview)
    error = caught.value
    text = f"{error.details()}{property_errors(error)}"  # pyright: ignore[reportAttributeAccessIssue]
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (  # pyright: ignore[reportAttributeAccessIssue]
        f"bad input must come back as the engine's invalid-input error, not a crash: {text}"
    )
    assert "Traceback" not in text and 'File "' not in text, f"a traceback reached the user: {text}"
    assert not host.monitor.registrations, "nothing may be registered for bad input"
    return property_errors(error)


def test_at_most_a_fifth_of_the_inputs_are_plain_each_with_its_reason(
    schema: dict[str, Any],
) -> None:
    plain, total = plain_share(schema)
    assert plain / total <= 0.2, (
        f"{plain} of {total} inputs are plain: another language's program cannot pass an output "
        "of its other resources there (pulumi-eks: 11%)"
    )
    kept = [
        f"{token.rsplit(':', 1)[-1]}.{name}"
        for token, t in [*schema["resources"].items(), *schema["types"].items()]
        for name, p in {**t.get("inputProperties", {}), **t.get("properties", {})}.items()
        if p.get("plain") and t.get("type") != "enum"
    ]
    assert sorted(kept) == sorted(PLAIN), "plain inputs are exactly the ones with a reason"
    for key in PLAIN:
        owner, prop = key.split(".")
        described = schema["types"][f"{NAME}:index:{owner}"]["properties"][prop]["description"]
        assert "Plain:" in described, f"{key}: the consumer's SDK must say why it is plain"


def test_every_secret_input_and_output_is_marked_secret(schema: dict[str, Any]) -> None:
    def prop(key: str, where: str) -> dict[str, Any]:
        owner, name = key.split(".")
        if f"{NAME}:index:{owner}" in schema["resources"]:
            return schema["resources"][f"{NAME}:index:{owner}"][where][name]
        return schema["types"][f"{NAME}:index:{owner}"]["properties"][name]

    unmarked = [
        key
        for keys, where in ((SECRET_INPUTS, "inputProperties"), (SECRET_OUTPUTS, "properties"))
        for key in keys
        if not prop(key, where).get("secret")
    ]
    assert not unmarked, (
        f"a generated SDK stores these in clear in the consumer's state: {unmarked}"
    )


def test_the_schema_carries_each_languages_package_name_and_version_ranges(
    schema: dict[str, Any],
) -> None:
    language = schema["language"]
    assert language["nodejs"]["packageName"] == "@gke-gpu/gke-gpu"
    assert language["go"]["importBasePath"] == "github.com/gke-gpu/gke-gpu/sdk/go/gkegpu"
    assert language["python"]["packageName"] == "pulumi_gke_gpu"
    assert language["nodejs"]["dependencies"]["@pulumi/kubernetes"].startswith("^"), (
        "a range, so the consumer's own lock picks the Kubernetes SDK"
    )
    assert schema["description"] and "gpu" in schema["keywords"], "the registry shows these"


def test_a_flowing_input_unknown_during_a_preview_registers_what_a_known_one_does(
    host: Served,
) -> None:
    known = sent(host, "GpuNodePool")
    construct(host, "GpuNodePool", known, preview=True)
    want = sorted((r.type, r.name) for r in host.monitor.registrations)
    unknown = sent(host, "GpuNodePool")
    set_path(unknown.inputs, "clusterName", rpc.UNKNOWN)
    set_path(unknown.inputs, "serviceAccount", output_value(None))
    construct(host, "GpuNodePool", unknown, preview=True)
    got = {(r.type, r.name): r for r in host.monitor.registrations}
    assert sorted(got) == want, (
        "a pool whose cluster is not created yet must preview the same resources"
    )
    pool = got[("gcp:container/nodePool:NodePool", "sample-pool")]
    assert known_types.is_unknown(pool.inputs.get("cluster")), (
        f"the unknown cluster name must reach the NodePool unknown, not made up: {pool.inputs}"
    )


def test_a_deciding_input_unknown_during_a_preview_is_refused_at_its_path(host: Served) -> None:
    request = sent(host, "GpuService")
    set_path(request.inputs, "workload.image", rpc.UNKNOWN)
    errors = refused(host, "GpuService", request, preview=True)
    assert ("workload.image", UNKNOWN_REASON) in errors, errors


def test_a_known_output_where_a_value_decides_is_resolved(host: Served) -> None:
    request = sent(host, "GpuService")
    set_path(request.inputs, "workload.image", output_value("vllm/vllm-openai:v0.6.4"))
    set_path(request.inputs, "region", output_value("us-central1"))
    construct(host, "GpuService", request)
    images = [
        c["image"]
        for r in host.monitor.registrations
        if r.type == "kubernetes:apps/v1:Deployment"
        for c in r.inputs["spec"]["template"]["spec"]["containers"]
    ]
    assert "vllm/vllm-openai:v0.6.4" in images, f"the image an output carried: {images}"


def test_a_secret_env_value_stays_secret_and_never_crashes(host: Served) -> None:
    request = sent(host, "GpuService")
    set_path(request.inputs, "workload.env.HF_API", output_value(SECRET, secret=True))
    construct(host, "GpuService", request)
    leaked = [r.name for r in host.monitor.registrations if SECRET in json.dumps(r.inputs)]
    assert not leaked, f"a secret env value reached these resources in clear: {leaked}"
    held = [
        r
        for r in host.monitor.registrations
        if r.type == "kubernetes:core/v1:Secret" and "HF_API" in json.dumps(r.inputs)
    ]
    assert held, "the secret env value must go into the workload's Kubernetes Secret"


def test_a_secret_where_it_cannot_stay_secret_is_refused(host: Served) -> None:
    request = sent(host, "GpuService")
    set_path(request.inputs, "workload.image", output_value("vllm/vllm-openai:v0.6.4", True))
    errors = refused(host, "GpuService", request)
    assert [p for p, _ in errors] == ["workload.image"], errors
    assert "secrets" in errors[0][1], "the reason names where a secret can go"


def test_an_unknown_key_is_refused_with_the_nearest_known_one(host: Served) -> None:
    request = sent(host, "GpuService")
    set_path(request.inputs, "workload.imgae", "vllm/vllm-openai:v0.6.4")
    set_path(request.inputs, "nodepools", [])
    errors = dict(refused(host, "GpuService", request))
    assert "Did you mean `image`?" in errors["workload.imgae"], errors
    assert "Did you mean `nodePools`?" in errors["nodepools"], errors
