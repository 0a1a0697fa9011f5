"""Weights streamed from Cloud Storage (issue 46): a vLLM workload whose model is in a bucket
(`modelCache`) reads it with vLLM's Run:ai Model Streamer on the pinned image, as its own
Kubernetes service account, with a buffer sized to its pod; where the streamer cannot run, the
bucket is mounted as before and the plan says why (components/config/rules/streamer.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.config.rules import streamer
from components.facts.allocatable import parse_memory
from tests.conftest import Run
from tests.test_cold_start import (
    AR_IMAGE,
    BUCKET_IAM,
    MODEL_CACHE,
    _autopilot,
    _load,
    _pod,
    _problems,
    _raw,
    _standard,
    _workload,
)

STREAMED_URI = "gs://acme-models/Qwen/Qwen2.5-0.5B-Instruct"


def _args(pod: dict[str, Any]) -> list[str]:
    (container,) = pod["containers"]
    return list(container["args"])


def test_a_bucket_model_is_streamed_by_vllm_with_a_buffer_sized_to_its_pod(run: Run) -> None:
    pod = _pod(run(_autopilot(modelCache=MODEL_CACHE)))
    args = _args(pod)
    assert args[args.index("--model") + 1] == STREAMED_URI, "vLLM reads the gs:// model itself"
    assert args[args.index("--load-format") + 1] == "runai_streamer", (
        "without the streamer's load format vLLM would try to download a gs:// model"
    )
    assert args[args.index("--served-model-name") + 1] == "Qwen/Qwen2.5-0.5B-Instruct", (
        "clients keep asking for the Hugging Face name"
    )
    extra = json.loads(args[args.index("--model-loader-extra-config") + 1])
    (container,) = pod["containers"]
    memory = parse_memory(container["resources"]["limits"]["memory"])
    assert set(extra) == {"memory_limit"} and extra["memory_limit"] == int(memory / 4), (
        "the streamer's 40 GB default buffer would not fit an L4 pod: a quarter of its memory"
    )


def test_a_streamed_model_has_no_mount_no_sidecar_and_reads_as_its_own_account(run: Run) -> None:
    recording = run(_autopilot(modelCache=MODEL_CACHE))
    pod = _pod(recording)
    assert not any("csi" in v for v in pod["volumes"]), "no Cloud Storage FUSE volume to mount"
    annotations = _workload(recording).inputs["spec"]["template"]["metadata"].get("annotations")
    assert not annotations or "gke-gcsfuse/volumes" not in annotations, (
        "no FUSE sidecar: it would take a node's CPU and memory for nothing"
    )
    assert pod["serviceAccountName"] == "llm", "Workload Identity grants the bucket to this account"
    roles = {r.inputs["role"] for r in recording.of_type(BUCKET_IAM)}
    assert roles == {"roles/storage.objectViewer", "roles/storage.legacyBucketReader"}, (
        "the streamer reads the bucket's metadata (get_bucket: storage.buckets.get) before its "
        "objects; objectViewer alone is a 403"
    )
    members = {r.inputs["member"] for r in recording.of_type(BUCKET_IAM)}
    assert len(members) == 1 and "/sa/llm" in members.pop(), "both grants name the same account"


def test_a_huge_pod_keeps_the_streamers_own_buffer() -> None:
    assert streamer.buffer_bytes(1800 * 2**30) == streamer.STREAMER_DEFAULT_BUFFER_BYTES, (
        "never more than the streamer's own default"
    )


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"modelCache": {**MODEL_CACHE, "stream": False}}, "modelCache.stream: false"),
        ({"image": "vllm/vllm-openai:v0.6.4"}, "vLLM v0.6.4 is not an image"),
        ({"args": ["--load-format", "safetensors"]}, "args set --load-format"),
        (
            {"adapters": [{"name": "sql", "path": "/models/adapters/sql"}]},
            "an adapter is read from modelCache.mountPath",
        ),
        ({"args": ["--tokenizer=/models/tok"]}, "args read files from modelCache.mountPath"),
        ({"args": ["/models/Qwen"]}, "args read files from modelCache.mountPath"),
        ({"modelCache": {"bucket": "acme-models"}}, "modelCache.path is not set"),
        ({"args": ["--load_format=auto"]}, "args set --load-format"),
        ({"command": ["vllm", "serve", "--load-format", "auto"]}, "args set --load-format"),
    ],
)
def test_a_bucket_the_streamer_cannot_read_is_mounted_and_the_plan_says_why(
    change: dict[str, Any], why: str
) -> None:
    workload = {"image": AR_IMAGE, "modelCache": MODEL_CACHE, **change}
    config = _load(_raw(_standard(**workload)))
    cache = config.workloads[0].model_cache
    assert cache is not None and not cache.streams, f"{change} must fall back to the mount"
    assert cache.mounted_because is not None and why in cache.mounted_because, (
        f"the plan says why it is mounted: {cache.mounted_because}"
    )
    assert "runai_streamer" not in config.workloads[0].args, "a mounted model is not streamed"


def test_stream_true_where_the_streamer_cannot_run_is_refused_with_the_reason() -> None:
    raw = _raw(
        _standard(image="vllm/vllm-openai:v0.6.4", modelCache={**MODEL_CACHE, "stream": True})
    )
    found = [p for p in _problems(raw) if p.startswith("workloads[0].modelCache.stream:")]
    assert (
        found
        and "vLLM v0.6.4 is not an image its Cloud Storage backend is confirmed in" in (found[0])
    ), f"a stream the image cannot do would fail at start: {found}"


def test_a_hub_model_is_still_downloaded_without_the_streamer(run: Run) -> None:
    args = _args(_pod(run(_autopilot())))
    assert "--load-format" not in args and not any(a.startswith("gs://") for a in args), (
        "no bucket: vLLM downloads the Hugging Face model as before"
    )


def test_each_gpu_process_gets_its_share_and_the_ranks_split_the_reading(run: Run) -> None:
    """Every tensor-parallel rank stages its own buffer (the loader's limit is per process): a
    quarter of the pod's memory per rank would be the whole pod's memory at 4 GPUs."""
    pod = _pod(run(_autopilot(modelCache=MODEL_CACHE, gpu={"type": "nvidia-l4", "count": 4},
                              args=["--tensor-parallel-size", "4"])))  # fmt: skip
    args = _args(pod)
    extra = json.loads(args[args.index("--model-loader-extra-config") + 1])
    (container,) = pod["containers"]
    memory = parse_memory(container["resources"]["limits"]["memory"])
    assert extra["memory_limit"] * 4 <= memory / 4, "the four ranks' buffers within the share"
    assert extra["distributed"] is True, "the ranks split the reading, as Google's reference does"


def test_a_loader_config_of_the_users_own_is_kept(run: Run) -> None:
    own = '{"concurrency":32}'
    args = _args(_pod(run(_autopilot(modelCache=MODEL_CACHE,
                                     args=["--model-loader-extra-config", own]))))  # fmt: skip
    assert args.count("--model-loader-extra-config") == 1 and own in args, (
        "a second --model-loader-extra-config would silently replace the user's (the last wins)"
    )


def test_a_gs_model_in_another_bucket_is_refused() -> None:
    raw = _raw(_standard(image=AR_IMAGE, modelCache=MODEL_CACHE, args=["gs://other/Qwen"]))
    assert any(
        p.startswith("workloads[0].args: name 'gs://other/Qwen', a model in another bucket")
        for p in (_problems(raw))
    ), "the pod may read only modelCache.bucket: the streamer would get a 403 at start"
