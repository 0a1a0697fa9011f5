"""Cold starts and load: image streaming, preloaded images, model cache, autoscaling, GPU metrics.

Each test reads what the recording engine received (or what the config layer answered) and names
the consequence a user would meet on a real cluster.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from components.config import ConfigError, StackConfig, load
from components.config.rules import coldstart
from components.facts import pins
from components.platform.nodepool import gke_pool_name, replacement_settings
from tests import shared
from tests.conftest import CLUSTER, DEPLOYMENT, MINIMAL, NODE_POOL, ROOT, STANDARD, Run
from tools import render
from tools.engine import PROJECT_NUMBER, Recording

HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
POD_MONITORING = "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
BUCKET_IAM = "gcp:storage/bucketIAMMember:BucketIAMMember"
PROJECT_IAM = "gcp:projects/iAMMember:IAMMember"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
API_SERVICE = "kubernetes:apiregistration.k8s.io/v1:APIService"
AR_IMAGE = "us-docker.pkg.dev/acme-ml/vllm/vllm-openai:v0.29.0"
DISK_IMAGE = "global/images/vllm-v0-29-0-cache"


def _standard(pool: dict[str, Any] | None = None, **workload: Any) -> dict[str, Any]:
    """The shared Standard stack with extra pool keys and workload keys."""
    config = copy.deepcopy(STANDARD)
    config["gke-gpu:nodePools"][0].update(pool or {})
    config["gke-gpu:workloads"][0].update(workload)
    return config


def _autopilot(**workload: Any) -> dict[str, Any]:
    return {
        **MINIMAL,
        "gke-gpu:cluster": {"deletionProtection": False},
        "gke-gpu:workloads": [
            {
                "name": "llm",
                "image": AR_IMAGE,
                "gpu": {"type": "nvidia-l4", "count": 1},
                "args": ["--model", "Qwen/Qwen2.5-0.5B-Instruct"],
                "cache": {"size": "30Gi"},
                **workload,
            }
        ],
    }


def _gpu_pool(recording: Recording) -> dict[str, Any]:
    (pool,) = [
        r for r in recording.of_type(NODE_POOL) if r.inputs["nodeConfig"].get("guestAccelerators")
    ]
    return pool.inputs


def _workload(recording: Recording) -> Any:
    return next(r for r in recording.of_type(DEPLOYMENT) if r.inputs["metadata"]["name"] == "llm")


def _pod(recording: Recording) -> dict[str, Any]:
    spec: dict[str, Any] = _workload(recording).inputs["spec"]["template"]["spec"]
    return spec


def _load(raw: dict[str, Any]) -> StackConfig:
    return load(raw, project="acme-ml", region="us-central1", stack="dev")


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        _load(raw)
    return info.value.problems


def _raw(config: dict[str, Any]) -> dict[str, Any]:
    """A program config (gke-gpu:* keys) as the config layer's raw input."""
    return {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("gke-gpu:")}


# --- image streaming and preloaded images (node pools) ------------------------------------------


def test_a_pool_with_image_streaming_asks_gke_for_gcfs(run: Run) -> None:
    node = _gpu_pool(run(_standard({"imageStreaming": True})))["nodeConfig"]
    assert node.get("gcfsConfig") == {"enabled": True}, (
        "without gcfsConfig.enabled the node pulls the whole multi-GB image before the pod starts"
    )
    assert "secondaryBootDisks" not in node, "no disk image was named, so none may be attached"


def test_a_pool_without_cold_start_keys_keeps_its_settings_and_its_name(run: Run) -> None:
    recording = run(_standard())
    node = _gpu_pool(recording)["nodeConfig"]
    assert "gcfsConfig" not in node and "secondaryBootDisks" not in node, (
        "a stack that asks for neither must see no change on its pools"
    )
    (pool,) = _load(_raw(_standard())).node_pools
    assert "secondaryBootDisks" not in replacement_settings(pool), (
        "hashing an unset disk would rename, and so replace, every existing pool on upgrade"
    )


def test_a_secondary_boot_disk_is_an_image_cache_and_turns_on_image_streaming(run: Run) -> None:
    node = _gpu_pool(run(_standard({"secondaryBootDisk": DISK_IMAGE})))["nodeConfig"]
    assert node["secondaryBootDisks"] == [
        {"diskImage": DISK_IMAGE, "mode": "CONTAINER_IMAGE_CACHE"}
    ], "without CONTAINER_IMAGE_CACHE mode GKE attaches the disk but never reads images from it"
    assert node.get("gcfsConfig") == {"enabled": True}, (
        "GKE reads preloaded images only with image streaming on (its secondary boot disk page)"
    )


def test_a_new_disk_image_renames_the_pool_so_the_replacement_is_created_first() -> None:
    def name(disk: str) -> str:
        (pool,) = _load(_raw(_standard({"secondaryBootDisk": disk}))).node_pools
        return gke_pool_name(pool)

    assert name("global/images/cache-v1") != name("global/images/cache-v2"), (
        "GKE cannot change a pool's disk image in place: the new pool needs a new name to be "
        "created next to the old one before the old one is deleted"
    )


def test_the_node_service_account_may_use_the_image_streaming_service(run: Run) -> None:
    def roles(recording: Recording) -> set[str]:
        return {r.inputs["role"] for r in recording.of_type(PROJECT_IAM)}

    consumer = "roles/serviceusage.serviceUsageConsumer"
    assert consumer in roles(run(_standard({"imageStreaming": True}))), (
        "GKE streams images for a custom node service account only with Service Usage Consumer"
    )
    assert consumer in roles(run(_autopilot())), "Autopilot always streams eligible images"
    assert consumer not in roles(run(_standard())), "no streaming pool: no extra role"


def test_image_streaming_on_ubuntu_is_refused() -> None:
    problems = _problems(
        _raw(_standard({"imageStreaming": True, "imageType": "UBUNTU_CONTAINERD"}))
    )
    assert any(p.startswith("nodePools[0].imageStreaming:") for p in problems), (
        "GKE streams images only on Container-Optimized OS nodes: the setting would do nothing"
    )


def test_a_disk_image_with_streaming_turned_off_is_refused() -> None:
    problems = _problems(
        _raw(_standard({"secondaryBootDisk": DISK_IMAGE, "imageStreaming": False}))
    )
    assert any(p.startswith("nodePools[0].imageStreaming: false") for p in problems), (
        "container-image-cache mode needs image streaming; the disk would be ignored"
    )


def test_a_secondary_boot_disk_must_name_a_compute_engine_image() -> None:
    problems = _problems(_raw(_standard({"secondaryBootDisk": "gs://acme/cache.tar"})))
    assert any(p.startswith("nodePools[0].secondaryBootDisk:") for p in problems), (
        "GKE takes a disk image resource, not a file; the pool would fail to create"
    )


def test_a_channel_starting_below_the_disk_minimum_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert coldstart.version_problems("x", "STABLE") == [], (
        "every channel's 2026 default is above GKE's minimum for secondary boot disks"
    )
    monkeypatch.setitem(pins.CHANNEL_DEFAULT_VERSION, "STABLE", "1.29.9-gke.1000000")
    (problem,) = map(str, coldstart.version_problems("nodePools[0].secondaryBootDisk", "STABLE"))
    assert "1.30.1-gke.1329000" in problem and "STABLE" in problem, (
        "a cluster older than GKE's minimum would refuse the pool at create time"
    )


def test_an_image_outside_artifact_registry_on_a_streaming_pool_is_an_advisory() -> None:
    for image in ("vllm/vllm-openai:v0.29.0", "nvcr.io/nvidia/tritonserver:25.01-py3"):
        raw = _raw(_standard({"imageStreaming": True}))
        raw["workloads"][0]["image"] = image
        config = _load(raw)  # not an error: the image is still pulled, just not streamed
        # (Triton behind the default /v1/* allowlist gets expose.paths' advisory as well.)
        (advisory,) = [a for a in config.advisories if "stream" in a]
        assert image in advisory and "Artifact Registry" in advisory, (
            "a user who turned on streaming must learn that this image is pulled whole anyway"
        )


def test_an_artifact_registry_image_gets_no_advisory() -> None:
    raw = _raw(_standard({"imageStreaming": True}))
    raw["workloads"][0]["image"] = AR_IMAGE
    assert _load(raw).advisories == (), "an Artifact Registry image streams: nothing to warn about"


def test_the_advisory_reaches_the_plan_summary(tmp_path: Any) -> None:
    stack_file = tmp_path / "Pulumi.hub.yaml"
    config = _standard({"imageStreaming": True})
    stack_file.write_text(json.dumps({"config": config}))
    plan = render.render("hub", stack_file)
    assert "advisory  workloads llm" in render.summary(plan), (
        "the reviewer of a plan must see that the image will not stream"
    )


# --- model cache ---------------------------------------------------------------------------------


MODEL_CACHE = {"bucket": "acme-models", "path": "Qwen/Qwen2.5-0.5B-Instruct"}
# The bucket mounted through Cloud Storage FUSE, where vLLM would otherwise stream it
# (tests/test_streamer.py).
MOUNTED = {**MODEL_CACHE, "stream": False}


def test_model_cache_mounts_the_bucket_through_the_fuse_csi_driver(run: Run) -> None:
    recording = run(_standard(modelCache=MODEL_CACHE))
    addons = recording.one(CLUSTER).inputs["addonsConfig"]
    assert addons == {"gcsFuseCsiDriverConfig": {"enabled": True}}, (
        "Standard clusters do not run the Cloud Storage FUSE CSI driver unless the add-on is on"
    )
    template = _workload(recording).inputs["spec"]["template"]
    assert template["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true", (
        "without the annotation GKE injects no FUSE sidecar and the volume never mounts"
    )
    volume = next(v for v in template["spec"]["volumes"] if v["name"] == "model")
    assert volume["csi"]["driver"] == "gcsfuse.csi.storage.gke.io"
    assert volume["csi"]["volumeAttributes"]["bucketName"] == "acme-models"
    assert volume["csi"]["readOnly"] is True, "a model server must not write to the model bucket"
    options = volume["csi"]["volumeAttributes"]["mountOptions"].split(",")
    assert "file-cache:enable-parallel-downloads:true" in options, (
        "parallel downloads are what make the weights load fast (Google's tuned setup)"
    )
    assert "only-dir:Qwen/Qwen2.5-0.5B-Instruct" in options, "the model's folder, not the bucket"
    cache = next(v for v in template["spec"]["volumes"] if v["name"] == "gke-gcsfuse-cache")
    size = cache["ephemeral"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"]
    (limit,) = [o for o in options if o.startswith("file-cache:max-size-mb:")]
    assert int(limit.rsplit(":", 1)[1]) < 30 * 1024 and size == "30Gi", (
        "the file cache must stay below its disk, or downloads fail when the disk fills"
    )
    (container,) = template["spec"]["containers"]
    mount = next(m for m in container["volumeMounts"] if m["name"] == "model")
    assert mount == {"name": "model", "mountPath": "/models", "readOnly": True}


def test_model_cache_pods_run_as_their_own_account_without_a_token(run: Run) -> None:
    recording = run(_standard(modelCache=MODEL_CACHE))
    pod = _pod(recording)
    (account,) = [
        r
        for r in recording.of_type(SERVICE_ACCOUNT)
        if r.inputs["metadata"]["namespace"] == "gke-gpu"
    ]
    assert pod["serviceAccountName"] == account.inputs["metadata"]["name"] == "llm", (
        "the bucket grant names this Kubernetes service account; another one gets a 403"
    )
    assert pod["automountServiceAccountToken"] is False, (
        "the FUSE driver gets its token from the kubelet, so the pod needs none mounted"
    )
    assert account.inputs["automountServiceAccountToken"] is False
    assert account.urn in _workload(recording).dependencies, (
        "pods naming a service account that does not exist yet are refused by admission"
    )
    assert pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsGroup"], (
        "the FUSE sidecar runs as 65534 and must be able to write its file cache disk: fsGroup "
        "makes the disk group-writable and is a supplemental group of every container, the "
        "injected sidecar's too"
    )


def test_the_bucket_is_readable_by_exactly_that_service_account(run: Run) -> None:
    recording = run(_standard(modelCache=MODEL_CACHE))
    grant = recording.one(BUCKET_IAM).inputs
    assert grant["bucket"] == "acme-models" and grant["role"] == "roles/storage.objectViewer"
    assert grant["member"] == (
        f"principal://iam.googleapis.com/projects/{PROJECT_NUMBER}/locations/global/"
        "workloadIdentityPools/acme-ml-test.svc.id.goog/subject/ns/gke-gpu/sa/llm"
    ), "Workload Identity principals name the project by number, then namespace and account"
    assert ("gcp:organizations/getProject:getProject", {"projectId": "acme-ml-test"}) in (
        recording.invokes
    ), "the project number is looked up, never guessed from the project id"


def test_the_grant_waits_for_the_cluster_and_the_workload_for_the_grant(run: Run) -> None:
    recording = run(_standard(modelCache=MODEL_CACHE))
    grant = recording.one(BUCKET_IAM)
    assert recording.one(CLUSTER).urn in grant.dependencies, (
        "IAM refuses a principal of a workload identity pool that no cluster has created yet"
    )
    assert grant.urn in _workload(recording).dependencies, (
        "pods started before the grant fail to mount the bucket"
    )


def test_autopilot_uses_its_built_in_fuse_driver_and_default_sidecar_limits(run: Run) -> None:
    recording = run(_autopilot(modelCache=MOUNTED))
    assert "addonsConfig" not in recording.one(CLUSTER).inputs, (
        "Autopilot enables the Cloud Storage FUSE CSI driver by default"
    )
    annotations = _workload(recording).inputs["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {"gke-gcsfuse/volumes": "true"}, (
        'Autopilot refuses "0" sidecar limits; the driver\'s defaults apply there'
    )


def test_vllm_loads_from_the_mount_and_keeps_serving_the_same_model_name(run: Run) -> None:
    (container,) = _pod(run(_autopilot(modelCache=MOUNTED)))["containers"]
    args = container["args"]
    assert args[args.index("--model") + 1] == "/models", (
        "vLLM would otherwise download the weights from Hugging Face on every new pod"
    )
    assert args[args.index("--served-model-name") + 1] == "Qwen/Qwen2.5-0.5B-Instruct", (
        "clients keep asking for the Hugging Face name; vLLM would serve it as '/models'"
    )


def test_fuse_sidecar_requests_leave_room_on_the_node() -> None:
    def cpu(workload: dict[str, Any]) -> str:
        raw = _raw(_standard(**workload))
        return _load(raw).workloads[0].cpu

    without, with_cache = cpu({}), cpu({"modelCache": MODEL_CACHE})
    from components.facts.allocatable import DERIVED_SHARE, parse_cpu

    # Derived requests take 95% of what the node leaves after the sidecar (DERIVED_SHARE).
    sidecar = coldstart.FUSE_SIDECAR_MILLICORES * DERIVED_SHARE
    assert parse_cpu(without) - parse_cpu(with_cache) >= sidecar, (
        "the injected FUSE sidecar requests 250m: a pod sized to the whole node would not fit"
    )


@pytest.mark.parametrize(
    ("cache", "key"),
    [
        ({"bucket": "gs://acme-models"}, "bucket"),
        ({"bucket": "Acme"}, "bucket"),
        ({"bucket": "acme-models", "path": "/abs/path"}, "path"),
        ({"bucket": "acme-models", "path": "a,b"}, "path"),
        ({"bucket": "acme-models", "mountPath": "/cache"}, "mountPath"),
        ({"bucket": "acme-models", "fileCacheSize": "100Mi"}, "fileCacheSize"),
    ],
)
def test_a_model_cache_that_cannot_mount_is_refused(cache: dict[str, Any], key: str) -> None:
    raw = _raw(_standard(modelCache=cache, cache={"size": "30Gi"}))
    assert any(p.startswith(f"workloads[0].modelCache.{key}:") for p in _problems(raw)), (
        f"a bad {key} fails only at mount time, on the cluster, after minutes of waiting"
    )


def test_model_cache_and_autoscale_are_refused_on_existing_clusters() -> None:
    raw = {
        "cluster": {"mode": "existing", "context": "kind"},
        "workloads": [
            {
                "name": "llm",
                "image": AR_IMAGE,
                "gpu": {"count": 1},
                "modelCache": {"bucket": "acme-models"},
                "autoscale": {"maxReplicas": 2},
            }
        ],
    }
    problems = _problems(raw)
    for key in ("modelCache", "autoscale.minReplicas"):
        assert any(p.startswith(f"workloads[0].{key}:") for p in problems), (
            "the FUSE driver, Workload Identity and Managed Prometheus are GKE's"
        )
    assert any("minReplicas: 0" in p for p in problems), (
        "the refusal names what does work on an existing cluster: scale to zero with KEDA"
    )


# --- autoscaling ---------------------------------------------------------------------------------


AUTOSCALE = {"minReplicas": 1, "maxReplicas": 3}


def _autoscaled(run: Run) -> Recording:
    return run(_autopilot(autoscale=AUTOSCALE))


def test_an_autoscaled_workload_gets_an_hpa_on_the_servers_queue(run: Run) -> None:
    spec = _autoscaled(run).one(HPA).inputs["spec"]
    assert (spec["minReplicas"], spec["maxReplicas"]) == (1, 3), "the configured bounds"
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "llm"}
    (metric,) = spec["metrics"]
    assert metric["pods"]["metric"]["name"] == (
        "prometheus.googleapis.com|vllm:num_requests_waiting|gauge"
    ), "the adapter serves Managed Prometheus gauges under this name; any other finds nothing"
    assert metric["pods"]["target"] == {"type": "AverageValue", "averageValue": "10"}


def test_pod_monitoring_scrapes_the_port_the_server_listens_on(run: Run) -> None:
    recording = _autoscaled(run)
    monitoring = recording.one(POD_MONITORING).inputs
    template = _workload(recording).inputs["spec"]["template"]
    (endpoint,) = monitoring["spec"]["endpoints"]
    ports = {p["name"]: p["containerPort"] for p in template["spec"]["containers"][0]["ports"]}
    assert endpoint["port"] in ports and endpoint["path"] == "/metrics", (
        "vLLM serves its metrics on its API port at /metrics; another port scrapes nothing"
    )
    labels = template["metadata"]["labels"]
    assert monitoring["spec"]["selector"]["matchLabels"].items() <= labels.items(), (
        "the PodMonitoring must select the workload's pods, or the HPA never gets a value"
    )


def test_an_autoscaled_deployment_leaves_its_replica_count_to_the_hpa(run: Run) -> None:
    spec = _workload(_autoscaled(run)).inputs["spec"]
    assert "replicas" not in spec, (
        "a fixed replicas resets the HPA's count on every `pulumi up` (or conflicts with it)"
    )
    assert "replicas" in _workload(run(_autopilot())).inputs["spec"], "fixed workloads keep it"


def test_the_metrics_adapter_is_pinned_in_its_own_namespace_and_reads_monitoring(
    run: Run,
) -> None:
    recording = _autoscaled(run)
    adapter = next(
        r
        for r in recording.of_type(DEPLOYMENT)
        if r.inputs["metadata"]["name"] == "custom-metrics-stackdriver-adapter"
    )
    assert adapter.inputs["metadata"]["namespace"] == "custom-metrics"
    (container,) = adapter.inputs["spec"]["template"]["spec"]["containers"]
    assert container["image"].endswith(":v0.16.9-gke.0"), "a pinned adapter, not a moving tag"
    viewer = [
        r for r in recording.of_type(PROJECT_IAM) if r.inputs["role"] == "roles/monitoring.viewer"
    ]
    assert [r.inputs["member"].rsplit("/subject/", 1)[1] for r in viewer] == [
        "ns/custom-metrics/sa/custom-metrics-stackdriver-adapter"
    ], "without Monitoring Viewer the adapter reads no metric and the HPA never scales"


def test_the_hpa_waits_for_the_metrics_apis_to_be_registered(run: Run) -> None:
    recording = _autoscaled(run)
    apis = {r.inputs["metadata"]["name"]: r.urn for r in recording.of_type(API_SERVICE)}
    assert set(apis) == {
        "v1beta1.custom.metrics.k8s.io",
        "v1beta2.custom.metrics.k8s.io",
        "v1beta1.external.metrics.k8s.io",
    }
    assert set(apis.values()) <= set(recording.one(HPA).dependencies), (
        "an HPA created before the custom metrics API exists reports errors until it appears"
    )


def test_no_autoscale_means_no_adapter_hpa_or_podmonitoring(run: Run) -> None:
    recording = run(_autopilot())
    assert not recording.of_type(HPA)
    assert all("StackMonitoring" in r.parent for r in recording.of_type(POD_MONITORING)), (
        "a fixed-size workload is scraped only for the stack's dashboard (docs/monitoring.md)"
    )
    quiet = run({**_autopilot(), "gke-gpu:monitoring": {"dashboard": False, "alerts": False}})
    assert not quiet.of_type(POD_MONITORING), "with monitoring off nothing scrapes the server"
    assert not recording.of_type(API_SERVICE), "nothing extra runs for a fixed-size workload"


def test_capacity_checks_count_max_replicas() -> None:
    raw = _raw(_standard(autoscale={"minReplicas": 1, "maxReplicas": 3}))
    raw["nodePools"][0]["maxNodes"] = 2
    assert any(p.startswith("nodePools[0].maxNodes:") for p in _problems(raw)), (
        "a third replica the pool cannot hold would stay Pending whenever the HPA asks for it"
    )


@pytest.mark.parametrize(
    ("workload", "key"),
    [
        ({"replicas": 2, "autoscale": AUTOSCALE}, "replicas"),
        ({"autoscale": {"minReplicas": 4, "maxReplicas": 2}}, "autoscale.minReplicas"),
        ({"kind": "Job", "autoscale": AUTOSCALE, "expose": None}, "autoscale"),
        ({"image": "acme/server:1.0", "autoscale": AUTOSCALE}, "autoscale.metric"),
        ({"autoscale": {**AUTOSCALE, "metric": "queue depth"}}, "autoscale.metric"),
        ({"port": None, "expose": None, "probe": None, "autoscale": AUTOSCALE}, "autoscale"),
    ],
)
def test_an_autoscale_that_cannot_work_is_refused(workload: dict[str, Any], key: str) -> None:
    raw = _raw(_autopilot(**workload))
    assert any(p.startswith(f"workloads[0].{key}:") for p in _problems(raw)), (
        f"{workload}: the HPA would never scale, or fight the Deployment"
    )


# --- GPU metrics ---------------------------------------------------------------------------------


@pytest.mark.parametrize("config", [_standard(), _autopilot()], ids=["standard", "autopilot"])
def test_gpu_metrics_are_collected_and_gkes_default_packages_kept(
    run: Run, config: dict[str, Any]
) -> None:
    monitoring = run(config).one(CLUSTER).inputs["monitoringConfig"]
    assert monitoring["managedPrometheus"] == {"enabled": True}, (
        "without managed collection no PodMonitoring is scraped and no DCGM metric exported"
    )
    components = set(monitoring["enableComponents"])
    assert "DCGM" in components, "GKE's DCGM package: GPU utilisation in Cloud Monitoring"
    assert {"SYSTEM_COMPONENTS", "POD", "DEPLOYMENT", "CADVISOR", "KUBELET"} <= components, (
        "setting the list replaces GKE's defaults: dropping them would turn existing metrics off"
    )


# --- the plan ------------------------------------------------------------------------------------


def test_the_plan_names_each_acceleration_on_the_cold_path() -> None:
    plan = shared.render("fast-start", ROOT / "examples" / "Pulumi.fast-start.yaml")
    text = render.summary(plan)
    assert "cold start: pool l4 scales from zero" in text
    assert f"image: preloaded from secondary boot disk {DISK_IMAGE}" in text
    assert (
        "weights: streamed from gs://acme-models/Qwen/Qwen2.5-0.5B-Instruct by vLLM's Run:ai"
        in (text)
    ), "the pinned vLLM image streams a bucket's weights (tests/test_streamer.py)"
    mounted = render.summary(shared.render("adapters", ROOT / "examples" / "Pulumi.adapters.yaml"))
    assert "mounted: an adapter is read from modelCache.mountPath" in mounted, (
        "a bucket that must be mounted says why it is not streamed"
    )
    assert "7x" in mounted and "AchievingFasterPodStartup.md" in mounted, "a figure has a source"
    assert "still slow: node boot" in text, "what no key removes is said too"
    assert "replicas 1-3 by vllm:num_requests_waiting" in text


def test_the_plan_says_what_stays_slow_without_any_acceleration() -> None:
    plan = shared.render("dev", ROOT / "Pulumi.dev.yaml")
    text = render.summary(plan)
    assert "cold start: Autopilot creates a node for each new pod" in text
    assert "pulled whole from docker.io" in text, (
        "Autopilot streams only Artifact Registry images; the default image is on Docker Hub"
    )
    assert "downloaded from Hugging Face" in text, "no modelCache: weights come over the internet"


def test_the_vendored_pod_monitoring_schema_catches_a_misspelt_field() -> None:
    good = {
        "apiVersion": "monitoring.googleapis.com/v1",
        "kind": "PodMonitoring",
        "metadata": {"name": "llm", "namespace": "gke-gpu"},
        "spec": {
            "selector": {"matchLabels": {"app": "llm"}},
            "endpoints": [{"port": "http", "path": "/metrics", "interval": "15s"}],
        },
    }
    assert render.schema_problems([good], "1.35") == []
    bad = copy.deepcopy(good)
    bad["spec"]["endpoint"] = bad["spec"].pop("endpoints")
    assert render.schema_problems([bad], "1.35"), (
        "the API server would drop an unknown field and the PodMonitoring would scrape nothing"
    )
