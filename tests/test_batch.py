"""Batch work that waits for GPUs instead of failing (issue 36), on what the engine receives:
Kueue from its vendored release and the stack's queue objects (validated against Kueue's own CRD
schemas), the queued Job's label, suspension and run length, queued-provisioning pools held to
GKE's rules, the CronJob of a schedule, Indexed shards, the Pod failure policy on Spot, the
output bucket mounted read-write with a grant on that bucket only, and the plan's words.

Admission latency and provisioning (Kueue admitting, GKE granting the ProvisioningRequest) need
a live cluster; they are not claimed here."""

from __future__ import annotations

import copy
import hashlib
import re
from typing import Any

import jsonschema
import pytest
import yaml

from components.config import ConfigError, load
from components.platform import kueue, kueue_fence
from tests.conftest import MINIMAL, ROOT
from tools import render
from tools.crd_schema import crd_file
from tools.engine import Recording, run_program

JOB = "kubernetes:batch/v1:Job"
CRON_JOB = "kubernetes:batch/v1:CronJob"
NODE_POOL = "gcp:container/nodePool:NodePool"
BUCKET_GRANT = "gcp:storage/bucketIAMMember:BucketIAMMember"
EXAMPLE = ROOT / "examples" / "Pulumi.batch.yaml"
QUEUED_POOL = {
    "name": "l4q",
    "gpu": {"type": "nvidia-l4", "count": 1},
    "machineType": "g2-standard-8",
    "maxNodes": 8,
    "queuedProvisioning": True,
}
NIGHTLY = {
    "name": "nightly",
    "kind": "Job",
    "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
    "gpu": {"type": "nvidia-l4", "count": 1},
    "port": None,
    "queue": {"maxRunDuration": "4h"},
}


def stack(pools: list[dict[str, Any]], workloads: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        **MINIMAL,
        "gke-gpu:cluster": {"mode": "standard", "deletionProtection": False},
        "gke-gpu:nodePools": pools,
        "gke-gpu:workloads": workloads,
    }


def problems(pools: list[dict[str, Any]], workloads: list[dict[str, Any]]) -> list[str]:
    raw = {k.partition(":")[2]: v for k, v in stack(pools, workloads).items() if "gke-gpu" in k}
    try:
        load(raw, project="acme-ml-test", region="us-central1", stack="t")
    except ConfigError as error:
        return error.problems
    return []


@pytest.fixture(scope="module")
def example() -> Recording:
    return run_program(yaml.safe_load(EXAMPLE.read_text())["config"], stack="batch")


@pytest.fixture(scope="module")
def queued() -> Recording:
    return run_program(stack([QUEUED_POOL], [NIGHTLY]))


def _kueue_object(recording: Recording, kind: str) -> dict[str, Any]:
    (found,) = [
        r.inputs
        for r in recording.of_type(f"kubernetes:{kueue.API_VERSION}:{kind}")
        if "gke-gpu:index:Kueue" in r.parent
    ]
    return found


# --- Kueue and the queue --------------------------------------------------------------------


def test_the_vendored_kueue_release_is_the_one_the_readme_names() -> None:
    readme = (kueue.VENDOR / "README.md").read_text()
    digest = hashlib.sha256(kueue.RELEASE.read_bytes()).hexdigest()
    assert digest in readme, "kueue-0.19.2.yaml must be upstream's, byte for byte as recorded"
    assert "v0.19.2" in readme and "8eab68778fc1b52affe165fdf5af29d1e9b4f3cb" in readme


def test_every_object_of_the_kueue_release_is_registered_and_its_controller_is_the_release(
    queued: Recording,
) -> None:
    registered = [
        r
        for r in queued.resources
        if "gke-gpu:index:Kueue" in r.parent
        and r.custom
        and "kueue.x-k8s.io/" not in r.type
        # the program's own: the fence (tests/test_controller_fences.py)
        and r.type != "kubernetes:networking.k8s.io/v1:NetworkPolicy"
        and r.inputs["metadata"]["name"] != kueue_fence.WORKLOAD_ROLE
    ]
    assert len(registered) == len(kueue.objects()) == 79, (
        "every object of Kueue's release is applied: a missing RBAC rule or webhook Service "
        "shows only on the cluster"
    )
    (manager,) = [r for r in registered if r.type == "kubernetes:apps/v1:Deployment"]
    (container,) = manager.inputs["spec"]["template"]["spec"]["containers"]
    assert container["image"] == kueue.IMAGE


def test_kueues_controller_runs_the_releases_tag_pinned_by_digest(queued: Recording) -> None:
    (manager,) = [
        r
        for r in queued.of_type("kubernetes:apps/v1:Deployment")
        if "gke-gpu:index:Kueue" in r.parent
    ]
    (container,) = manager.inputs["spec"]["template"]["spec"]["containers"]
    (released,) = [
        c["image"]
        for obj in kueue.load(kueue.RELEASE)
        if obj["kind"] == "Deployment"
        for c in obj["spec"]["template"]["spec"]["containers"]
    ]
    assert re.fullmatch(re.escape(released) + r"@sha256:[0-9a-f]{64}", container["image"]), (
        f"Kueue's controller runs {container['image']}: a tag can be moved to other code, and its "
        f"webhooks admit every queued Job; it must be the release's {released} pinned by digest"
    )


def test_a_kueue_release_whose_image_has_no_pinned_digest_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    newer = [copy.deepcopy(obj) for obj in kueue.load(kueue.RELEASE)]
    for obj in newer:
        if obj["kind"] == "Deployment":
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = (
                "registry.k8s.io/kueue/kueue:v0.19.5"
            )
    monkeypatch.setattr(kueue, "load", lambda _: tuple(newer))
    with pytest.raises(ValueError, match="pin the new release's digest in kueue.IMAGE"):
        kueue.objects()


def test_kueues_workload_webhooks_see_only_queued_objects_so_its_outage_blocks_no_other_pod(
    queued: Recording,
) -> None:
    kinds = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
    webhooks = [
        w
        for kind in kinds
        for w in queued.one(f"kubernetes:admissionregistration.k8s.io/v1:{kind}").inputs["webhooks"]
    ]
    on_workloads = [
        w
        for w in webhooks
        if "pods" in w["rules"][0]["resources"]
        or "deployments" in w["rules"][0]["resources"]
        or "jobs" in w["rules"][0]["resources"]
    ]
    assert len(on_workloads) == 6, [w["name"] for w in on_workloads]
    for webhook in on_workloads:
        assert webhook["failurePolicy"] == "Fail"
        assert webhook["objectSelector"] == kueue.QUEUED_ONLY, (
            f"{webhook['name']} fails closed: without the selector a Kueue outage would stop every "
            "gate, KEDA and model pod of the cluster from being created"
        )


def test_every_kueue_object_the_stack_makes_validates_against_kueues_own_crd_schema(
    queued: Recording,
) -> None:
    crds = {
        o["spec"]["names"]["kind"]: o
        for o in kueue.objects()
        if o["kind"] == "CustomResourceDefinition"
    }
    kinds = ("ResourceFlavor", "ProvisioningRequestConfig", "AdmissionCheck", "ClusterQueue")
    for kind in (*kinds, "LocalQueue"):
        inputs = _kueue_object(queued, kind)
        obj = {"apiVersion": kueue.API_VERSION, "kind": kind, **inputs}
        schema = crd_file(crds[kind], "v1beta2", "")["schema"]
        jsonschema.validate(obj, schema)  # raises with the path of what Kueue would refuse
        broken = copy.deepcopy(obj)
        broken["spec"]["unknownField"] = 1
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)


def test_the_queue_admits_what_the_queued_pools_hold_through_queued_provisioning(
    queued: Recording,
) -> None:
    config = _kueue_object(queued, "ProvisioningRequestConfig")["spec"]
    assert config["provisioningClassName"] == "queued-provisioning.gke.io"
    check = _kueue_object(queued, "AdmissionCheck")["spec"]
    assert check["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    assert (
        check["parameters"]["name"]
        == _kueue_object(queued, "ProvisioningRequestConfig")["metadata"]["name"]
    )
    queue = _kueue_object(queued, "ClusterQueue")["spec"]
    assert queue["admissionChecksStrategy"]["admissionChecks"] == [{"name": kueue.QUEUE}]
    quota = {
        r["name"]: r["nominalQuota"] for r in queue["resourceGroups"][0]["flavors"][0]["resources"]
    }
    assert quota["nvidia.com/gpu"] == "8", "8 nodes of 1 L4: the GPUs GKE could grant at most"
    assert queue["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "gke-gpu"}}
    local = _kueue_object(queued, "LocalQueue")
    assert (
        local["metadata"]["namespace"] == "gke-gpu" and local["spec"]["clusterQueue"] == kueue.QUEUE
    )


def test_a_stack_without_a_queued_job_installs_no_kueue() -> None:
    recording = run_program(
        stack(
            [{**QUEUED_POOL, "queuedProvisioning": False}],
            [{k: v for k, v in NIGHTLY.items() if k != "queue"}],
        )
    )
    assert not [r for r in recording.resources if "Kueue" in r.type or "kueue" in r.type]


# --- the queued Job ---------------------------------------------------------------------------


def test_a_queued_job_carries_the_queue_label_starts_suspended_and_states_its_longest_hold(
    queued: Recording,
) -> None:
    job = queued.one(JOB).inputs
    assert job["metadata"]["labels"][kueue.QUEUE_NAME_LABEL] == kueue.QUEUE
    assert job["metadata"]["annotations"][kueue.MAX_RUN_ANNOTATION] == "14400"
    assert job["spec"]["suspend"] is True, "created running, its pods would not wait for Kueue"
    pod = job["spec"]["template"]["spec"]
    assert kueue.QUEUED_TAINT_TOLERATION in pod["tolerations"]
    assert pod["nodeSelector"]["cloud.google.com/gke-nodepool"].startswith("l4q-")


def test_a_queued_pool_takes_queued_provisioning_flex_start_no_reservation_no_auto_repair(
    queued: Recording,
) -> None:
    pool = queued.named("pool-l4q-pool").inputs
    assert pool["queuedProvisioning"] == {"enabled": True}
    assert pool["nodeConfig"]["flexStart"] is True
    assert pool["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert pool["autoscaling"]["totalMinNodeCount"] == 0
    assert pool["management"]["autoRepair"] is False


@pytest.mark.parametrize(
    ("pool", "path"),
    [
        ({"spot": True}, "nodePools[0].spot"),
        ({"reservation": "any"}, "nodePools[0].reservation"),
        ({"minNodes": 1}, "nodePools[0].minNodes"),
        ({"placement": "compact", "zones": ["us-central1-a"]}, "nodePools[0].placement"),
    ],
)
def test_a_queued_pool_against_gkes_rules_is_refused_with_the_fix(
    pool: dict[str, Any], path: str
) -> None:
    found = problems([{**QUEUED_POOL, **pool}], [NIGHTLY])
    assert any(p.startswith(path) and "queued" in p for p in found), found


def test_a_queued_job_on_a_pool_without_queued_provisioning_is_refused_with_the_fix() -> None:
    found = problems([{**QUEUED_POOL, "queuedProvisioning": False}], [NIGHTLY])
    assert [p for p in found if p.startswith("workloads[0].queue")] and all(
        "queuedProvisioning: true" in p for p in found if p.startswith("workloads[0].queue")
    ), found


def test_a_workload_without_queue_on_a_queued_pool_is_refused_with_the_fix() -> None:
    found = problems([QUEUED_POOL], [{k: v for k, v in NIGHTLY.items() if k != "queue"}])
    assert any("queuedProvisioning: true" in p and "add queue" in p.lower() for p in found), found


def test_a_queue_on_autopilot_is_refused_naming_the_standard_cluster_it_needs() -> None:
    raw = {"cluster": {"mode": "autopilot"}, "workloads": [NIGHTLY]}
    with pytest.raises(ConfigError) as error:
        load(raw, project="acme-ml-test", region="us-central1", stack="t")
    assert any("cluster.mode: standard" in p for p in error.value.problems), error.value.problems


@pytest.mark.parametrize(
    ("keys", "path"),
    [
        ({"queue": {"maxRunDuration": "200h"}}, "queue.maxRunDuration"),
        ({"schedule": "every night"}, "schedule"),
        ({"schedule": "0 3 * * *", "timeZone": "Mars/Olympus"}, "timeZone"),
        ({"parallelism": 4}, "parallelism"),
        ({"output": {"bucket": "gs://acme-results"}}, "output.bucket"),
        ({"kind": "Deployment", "queue": None, "schedule": "0 3 * * *"}, "schedule"),
    ],
)
def test_batch_keys_out_of_bounds_are_refused_at_their_key(keys: dict[str, Any], path: str) -> None:
    workload = {k: v for k, v in {**NIGHTLY, **keys}.items() if v is not None}
    found = problems(
        [QUEUED_POOL if "queue" in workload else {**QUEUED_POOL, "queuedProvisioning": False}],
        [workload],
    )
    assert any(p.startswith(f"workloads[0].{path}") for p in found), found


# --- schedules, shards, Spot, results --------------------------------------------------------


def test_the_example_becomes_a_cron_job_whose_jobs_are_queued_indexed_and_write_to_the_bucket(
    example: Recording,
) -> None:
    assert not example.of_type(JOB), "a scheduled Job is a CronJob's, never a Job of its own"
    cron = example.one(CRON_JOB).inputs
    assert cron["spec"]["schedule"] == "0 3 * * *" and cron["spec"]["timeZone"] == "UTC"
    assert cron["spec"]["concurrencyPolicy"] == "Forbid", "a late run must not double the GPUs"
    assert cron["spec"]["successfulJobsHistoryLimit"] == 3
    assert cron["spec"]["failedJobsHistoryLimit"] == 1
    job = cron["spec"]["jobTemplate"]
    assert job["metadata"]["labels"][kueue.QUEUE_NAME_LABEL] == kueue.QUEUE
    assert job["metadata"]["annotations"][kueue.MAX_RUN_ANNOTATION] == "14400"
    assert job["spec"]["suspend"] is True
    assert (
        job["spec"]["completionMode"],
        job["spec"]["completions"],
        job["spec"]["parallelism"],
    ) == ("Indexed", 16, 4)
    pod = job["spec"]["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "output"]
    assert volume["csi"]["driver"] == "gcsfuse.csi.storage.gke.io"
    assert volume["csi"]["volumeAttributes"]["bucketName"] == "acme-results"
    assert not volume["csi"].get("readOnly"), "results are written: the mount is read-write"
    (container,) = pod["containers"]
    assert {"name": "output", "mountPath": "/out"} in container["volumeMounts"]
    assert pod["serviceAccountName"] == "nightly"
    assert job["spec"]["template"]["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"


def test_the_output_bucket_is_granted_to_the_workloads_account_on_that_bucket_only(
    example: Recording,
) -> None:
    (grant,) = example.of_type(BUCKET_GRANT)
    assert grant.inputs["bucket"] == "acme-results"
    assert grant.inputs["role"] == "roles/storage.objectUser"
    assert grant.inputs["member"].endswith("/ns/gke-gpu/sa/nightly")
    cluster = example.one("gcp:container/cluster:Cluster").inputs
    assert cluster["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}


def test_on_spot_a_preempted_shard_is_retried_free_and_the_programs_own_failure_fails_fast() -> (
    None
):
    spot_pool = {
        "name": "l4s",
        "gpu": {"type": "nvidia-l4", "count": 1},
        "spot": True,
        "maxNodes": 4,
    }
    shard = {
        **{k: v for k, v in NIGHTLY.items() if k != "queue"},
        "spot": True,
        "parallelism": 2,
        "completions": 8,
    }
    job = run_program(stack([spot_pool], [shard])).one(JOB).inputs
    rules = job["spec"]["podFailurePolicy"]["rules"]
    assert rules[0] == {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
    assert rules[1]["action"] == "FailJob"
    assert rules[1]["onExitCodes"] == {
        "containerName": "nightly",
        "operator": "NotIn",
        "values": [0],
    }
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert "suspend" not in job["spec"], "a Job without queue starts at once"


def test_the_plan_says_queue_nodes_longest_hold_cost_schedule_and_where_results_land() -> None:
    plan = render.render("batch", EXAMPLE)
    text = render.summary(plan)
    for words in (
        f"waits in Kueue queue {kueue.QUEUE} (LocalQueue in gke-gpu)",
        "through queued provisioning on pool l4q",
        "holds 4 node(s) 4h at the longest (maxRunDurationSeconds 14400)",
        "'0 3 * * *' (UTC), a CronJob: no run starts while the last one runs",
        "16 (an Indexed Job, 4 at a time",
        "gs://acme-results (mounted read-write at /out",
    ):
        assert words in text, f"the reviewer must read {words!r} in the plan:\n{text}"
    assert "at most $" in text, "the most one run may cost must be stated"
    assert render.schema_problems(plan.manifests, "1.35") == []
    assert render.policy_findings(plan)[0] == [], "the example violates no mandatory policy"


def test_a_plain_job_keeps_the_object_it_always_had() -> None:
    plain = {k: v for k, v in NIGHTLY.items() if k != "queue"}
    job = (
        run_program(stack([{**QUEUED_POOL, "queuedProvisioning": False}], [plain])).one(JOB).inputs
    )
    assert set(job["spec"]) == {"backoffLimit", "template"}
    assert kueue.QUEUE_NAME_LABEL not in job["metadata"]["labels"]


@pytest.mark.parametrize(
    ("kind", "key", "value"),
    [
        ("Deployment", "timeZone", "Europe/Berlin"),
        ("StatefulSet", "queue", {"maxRunDuration": "4h"}),
    ],
)
def test_a_batch_key_on_a_kind_that_does_not_take_it_names_the_kinds_that_do(
    kind: str, key: str, value: Any
) -> None:
    """A long-running kind ignores the batch keys: each is refused, naming what takes it (a
    Deployment's timeZone was taken without a word before KindSpec.takes)."""
    workload = {**NIGHTLY, "kind": kind, key: value}
    del workload["queue"]
    workload[key] = value
    found = problems([QUEUED_POOL], [workload])
    assert f"workloads[0].{key}: is for a Job, and this workload is a {kind}: it runs until " in (
        "\n".join(found)
    ), f"the key would be ignored silently: {found}"
