"""A model that sleeps when idle and wakes on the first request (issue 21), on what the engine
receives: KEDA and its HTTP add-on from the vendored manifests, the HTTPScaledObject wired to the
workload's Deployment and Service, the gate forwarding to the interceptor with the Host the
interceptor routes by, and the config rules around `autoscale.minReplicas: 0`.

The interceptor itself (a Go binary, ghcr.io image) cannot run here: no registry but PyPI, npm
and Debian's is reachable. tests/test_gate.py runs the gate's side of the held request in the
real HAProxy; the interceptor's behaviour is read from its source (components/platform/keda.py
cites the lines) and encoded below.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from components.platform import keda, keda_accounts
from tests import shared
from tests.conftest import STANDARD, Run, stack_config, vllm_workload_problems
from tools import render
from tools.crd_schema import crd_file, file_name
from tools.engine import ROOT, Recording

HTTP_SCALED_OBJECT = "kubernetes:http.keda.sh/v1alpha1:HTTPScaledObject"
HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
API_SERVICE = "kubernetes:apiregistration.k8s.io/v1:APIService"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
SERVICE = "kubernetes:core/v1:Service"


def _named(recording: Recording, type_: str, name: str) -> dict[str, Any]:
    (found,) = [
        r.inputs
        for r in recording.of_type(type_)
        if r.inputs.get("metadata", {}).get("name") == name
    ]
    return found


def _haproxy_cfg(recording: Recording) -> str:
    return recording.named("gate-llm-config").inputs["data"]["haproxy.cfg"]


# --- the vendored manifests -----------------------------------------------------------------------


def test_the_vendored_manifests_are_the_ones_the_readme_names() -> None:
    readme = (keda.VENDOR / "README.md").read_text()
    core = hashlib.sha256(keda.CORE.read_bytes()).hexdigest()
    assert core in readme, (
        "keda-2.20.2.yaml is byte for byte the release asset whose checksum the README records; "
        "an edit to it would no longer be upstream's"
    )
    assert "v2.20.2" in readme and "v0.15.0" in readme


def test_every_vendored_image_is_pinned_by_digest(dev: Recording) -> None:
    images = [
        c["image"]
        for r in dev.of_type(DEPLOYMENT)
        if "gke-gpu:index:Keda::" in r.parent
        for c in r.inputs["spec"]["template"]["spec"]["containers"]
    ]
    assert len(images) == 6, images
    for image in images:
        assert re.fullmatch(r"ghcr\.io/kedacore/[a-z-]+:[0-9.]+@sha256:[0-9a-f]{64}", image), (
            f"{image}: a tag can be moved; KEDA's images are pinned by digest"
        )


def test_every_vendored_object_is_registered_once_and_no_api_is_claimed_twice(
    dev: Recording,
) -> None:
    vendored = [*keda.objects(keda.CORE), *keda.objects(keda.HTTP_ADD_ON)]
    registered = [
        r
        for r in dev.resources
        if "gke-gpu:index:Keda::" in r.parent
        and r.custom
        # the program's own: the interceptor's NetworkPolicy and disruption budget
        and r.type.split(":")[1] not in ("networking.k8s.io/v1", "policy/v1")
    ]
    assert len(registered) == len(vendored) == 47 + len(keda_accounts.added()), (
        "all of KEDA 2.20.2 (24 objects) and the HTTP add-on 0.15.0 (23) are applied, with the "
        "accounts the program adds (one per Deployment): a missing RBAC rule or Service shows "
        "only on the cluster"
    )
    names = [
        (r.type, json.dumps(r.inputs["metadata"].get("namespace")), r.inputs["metadata"]["name"])
        for r in dev.resources
        if r.custom and "metadata" in r.inputs
    ]
    duplicates = {n for n in names if names.count(n) > 1}
    assert not duplicates, f"two resources would fight over one object: {duplicates}"


def test_the_crd_schemas_the_plan_validates_against_are_the_vendored_crds() -> None:
    for path in (keda.CORE, keda.HTTP_ADD_ON):
        for obj in keda.objects(path):
            if obj["kind"] != "CustomResourceDefinition":
                continue
            target = ROOT / "tools" / "crds" / file_name(obj, "v1alpha1")
            if not target.exists():
                continue
            committed = json.loads(target.read_text())
            assert committed["schema"] == crd_file(obj, "v1alpha1", "")["schema"], (
                f"{target.name} must be the vendored CRD's schema: the plan validates the "
                "program's custom resources against it"
            )
    for kind in ("keda.sh_v1alpha1_ScaledObject", "http.keda.sh_v1alpha1_HTTPScaledObject"):
        assert (ROOT / "tools" / "crds" / f"{kind}.json").exists()


def test_the_plan_refuses_an_http_scaled_object_the_crd_would_refuse(dev: Recording) -> None:
    spec = copy.deepcopy(_named(dev, HTTP_SCALED_OBJECT, "llm")["spec"])
    obj = {"apiVersion": "http.keda.sh/v1alpha1", "kind": "HTTPScaledObject", "metadata": {}}
    path = render.crd_schema_path(obj)
    assert path is not None
    assert render._crd_problems("ok", {**obj, "spec": spec}, path) == []
    spec["scaledownPeriodSeconds"] = 900  # a plausible misspelling
    spec["replicas"]["min"] = "0"
    problems = render._crd_problems("bad", {**obj, "spec": spec}, path)
    assert any("scaledownPeriodSeconds" in p for p in problems), problems
    assert any("replicas.min" in p for p in problems), problems


def test_the_interceptor_runs_twice_and_every_keda_pod_is_restricted(dev: Recording) -> None:
    scaled = _named(
        dev, "kubernetes:keda.sh/v1alpha1:ScaledObject", "keda-add-ons-http-interceptor"
    )
    assert scaled["spec"]["minReplicaCount"] == 2, (
        "the interceptor is in every sleeping model's request path: one pod would make a node "
        "drain an outage"
    )
    namespace = _named(dev, "kubernetes:core/v1:Namespace", "keda")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


# --- the scaler, wired to the workload ----------------------------------------------------------


def test_dev_sleeps_through_an_http_scaled_object_on_its_own_deployment_and_service(
    dev: Recording,
) -> None:
    spec = _named(dev, HTTP_SCALED_OBJECT, "llm")["spec"]
    deployment = dev.served(DEPLOYMENT).inputs
    model_service = _named(dev, SERVICE, "llm-model")
    target = spec["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert target["service"] == model_service["metadata"]["name"]
    assert target["port"] == model_service["spec"]["ports"][0]["port"] == 8000
    assert spec["replicas"] == {"min": 0, "max": 1}, "dev goes to zero replicas and at most one"
    assert spec["scaledownPeriod"] == 900, "15 idle minutes, the documented default"
    assert spec["timeouts"]["conditionWait"] == "1800s", (
        "a request that finds no replica is held up to wakeTimeoutSeconds (the add-on's own "
        "default since 0.14 is no limit at all)"
    )
    assert "replicas" not in deployment["spec"], (
        "KEDA owns the replica count; a value here would be reset on every `pulumi up`"
    )
    assert not dev.of_type(HPA), "KEDA's HPA replaces the program's own"
    assert [r.inputs["metadata"]["name"] for r in dev.of_type(API_SERVICE)] == [
        "v1beta1.external.metrics.k8s.io"
    ], "only KEDA serves external metrics in dev (no Stackdriver adapter without an HPA)"


def test_the_scaler_waits_for_the_add_on_it_needs(dev: Recording) -> None:
    scaled = next(r for r in dev.of_type(HTTP_SCALED_OBJECT))
    crd = next(
        r
        for r in dev.resources
        if r.type == "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
        and r.inputs["metadata"]["name"] == "httpscaledobjects.http.keda.sh"
    )
    interceptor = next(
        r
        for r in dev.of_type(DEPLOYMENT)
        if r.inputs["metadata"]["name"] == "keda-add-ons-http-interceptor"
    )
    assert crd.urn in scaled.dependencies and interceptor.urn in scaled.dependencies, (
        "created before its CRD, the HTTPScaledObject fails `pulumi up` on a new cluster"
    )


def test_the_gate_forwards_to_the_interceptor_with_the_host_it_routes_by(dev: Recording) -> None:
    spec = _named(dev, HTTP_SCALED_OBJECT, "llm")["spec"]
    cfg = _haproxy_cfg(dev)
    (host,) = re.findall(r'http-request set-header Host "([^"]+)"', cfg)
    assert spec["hosts"] == [host], (
        "the interceptor routes by Host (port stripped) and answers 404 to any other: the gate "
        "must send exactly a host of the HTTPScaledObject"
    )
    gate = dev.named("gate-llm-deployment").inputs
    env = {
        e["name"]: e.get("value") for e in gate["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    proxy = _named(dev, SERVICE, "keda-add-ons-http-interceptor-proxy")
    assert env["GATE_UPSTREAM"] == (
        f"{proxy['metadata']['name']}.{proxy['metadata']['namespace']}.svc.cluster.local:"
        f"{proxy['spec']['ports'][0]['port']}"
    ), "the gate's upstream is the interceptor's proxy Service, as the vendored manifest names it"


def test_only_gates_reach_the_interceptor_which_routes_by_host_alone(dev: Recording) -> None:
    policy = _named(dev, "kubernetes:networking.k8s.io/v1:NetworkPolicy", "interceptor-from-gates")
    assert policy["metadata"]["namespace"] == "keda"
    spec = policy["spec"]
    interceptor = _named(dev, DEPLOYMENT, "keda-add-ons-http-interceptor")
    pod_labels = interceptor["spec"]["template"]["metadata"]["labels"]
    assert spec["podSelector"]["matchLabels"].items() <= pod_labels.items()
    proxy_rule, admin_rule = spec["ingress"]
    assert proxy_rule["ports"] == [{"protocol": "TCP", "port": 8080}]
    (peer,) = proxy_rule["from"]
    gate_pods = dev.named("gate-llm-deployment").inputs["spec"]["template"]["metadata"]["labels"]
    assert peer["podSelector"]["matchLabels"].items() <= gate_pods.items(), (
        "the proxy port admits the gates' pods"
    )
    assert peer["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "gke-gpu"}, (
        "and only in the stack's namespace: a pod elsewhere could send a sleeping model's Host "
        "and reach it without the gate's key (vLLM skips the key on /invocations)"
    )
    scaler = _named(dev, DEPLOYMENT, "keda-add-ons-http-scaler")["spec"]["template"]["metadata"]
    (admin_peer,) = admin_rule["from"]
    assert admin_rule["ports"] == [{"protocol": "TCP", "port": 9090}]
    assert admin_peer.keys() == {"podSelector"} and (
        admin_peer["podSelector"]["matchLabels"].items() <= scaler["labels"].items()
    ), "the admin port (requests in flight) is for the add-on's scaler, in the keda namespace"
    assert admin_peer["podSelector"]["matchLabels"] != {}, "the scaler only, not every keda pod"


def _seconds(duration: str) -> int:
    assert duration.endswith("s"), duration
    return int(duration[:-1])


def test_the_gate_outwaits_every_silence_of_the_interceptor(dev: Recording) -> None:
    spec = _named(dev, HTTP_SCALED_OBJECT, "llm")["spec"]
    (server,) = re.findall(r"timeout server (\d+)s", _haproxy_cfg(dev))
    held, headers = (_seconds(spec["timeouts"][k]) for k in ("conditionWait", "responseHeader"))
    assert int(server) > held + headers, (
        "the interceptor first holds the request, then waits for the woken replica's headers, "
        "both in silence: a `timeout server` shorter than the sum answers 504 itself to a "
        "replica that woke late and then generated long"
    )
    assert int(server) > _seconds(spec["timeouts"]["responseHeader"]) >= 600, (
        "a non-streamed completion sends headers only when done: the interceptor must wait as "
        "long as the gate lets a model be silent (its own default is 300 s)"
    )


def test_a_stack_with_an_hpa_and_a_sleeping_model_leaves_external_metrics_to_keda(
    run: Run,
) -> None:
    config = copy.deepcopy(STANDARD)
    config["gke-gpu:nodePools"][0]["maxNodes"] = 4
    sleeper = {**config["gke-gpu:workloads"][0], "autoscale": {"minReplicas": 0, "maxReplicas": 1}}
    busy = {
        **config["gke-gpu:workloads"][0],
        "name": "busy",
        "autoscale": {"minReplicas": 1, "maxReplicas": 2},
    }
    config["gke-gpu:workloads"] = [sleeper, busy]
    recording = run(config)
    services = sorted(r.inputs["metadata"]["name"] for r in recording.of_type(API_SERVICE))
    assert services == [
        "v1beta1.custom.metrics.k8s.io",
        "v1beta1.external.metrics.k8s.io",
        "v1beta2.custom.metrics.k8s.io",
    ], "one server per API: KEDA holds external.metrics (kedacore/keda#470), the adapter custom"
    (external,) = [
        r for r in recording.of_type(API_SERVICE) if "external" in r.inputs["metadata"]["name"]
    ]
    assert external.inputs["spec"]["service"]["name"] == "keda-metrics-apiserver"
    assert len(recording.of_type(HPA)) == 1 and len(recording.of_type(HTTP_SCALED_OBJECT)) == 1


def test_an_existing_cluster_can_sleep_a_model(run: Run) -> None:
    config = {
        "gke-gpu:cluster": {"mode": "existing", "context": "kind"},
        "gke-gpu:workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "gpu": {"count": 1},
                "args": ["Qwen/Qwen2.5-0.5B-Instruct"],
                "autoscale": {"minReplicas": 0, "maxReplicas": 2},
                "expose": {"port": 8443, "type": "ClusterIP"},
            }
        ],
    }
    recording = run(config)
    assert len(recording.of_type(HTTP_SCALED_OBJECT)) == 1, (
        "KEDA's HTTP add-on needs no Managed Prometheus: minReplicas 0 works on any cluster"
    )


# --- config -------------------------------------------------------------------------------------


EXPOSED = {"expose": {"port": 443}}


@pytest.mark.parametrize(
    ("workload", "path", "words"),
    [
        (
            {"autoscale": {"minReplicas": 0, "maxReplicas": 1}},
            "workloads[0].autoscale.minReplicas:",
            "needs expose",
        ),
        (
            {**EXPOSED, "autoscale": {"minReplicas": 0, "maxReplicas": 1, "metric": "x:y"}},
            "workloads[0].autoscale.metric:",
            "requests in flight",
        ),
        (
            {**EXPOSED, "autoscale": {"minReplicas": 1, "maxReplicas": 2, "idleSeconds": 600}},
            "workloads[0].autoscale.idleSeconds:",
            "minReplicas: 0",
        ),
        (
            {
                **EXPOSED,
                "autoscale": {"minReplicas": 0, "maxReplicas": 2, "wakeTimeoutSeconds": 30},
            },
            "workloads[0].autoscale.wakeTimeoutSeconds:",
            "60",
        ),
        (
            {**EXPOSED, "replicas": 1, "autoscale": {"minReplicas": 0, "maxReplicas": 2}},
            "workloads[0].replicas:",
            "Remove replicas",
        ),
        (
            # No key at the gate: every scanner that finds the address starts a GPU node.
            {**EXPOSED, "apiKey": False, "autoscale": {"minReplicas": 0, "maxReplicas": 1}},
            "workloads[0].autoscale.minReplicas:",
            "wakes a GPU node",
        ),
    ],
)
def test_a_sleeping_model_that_could_not_wake_is_refused_before_anything_is_created(
    workload: dict[str, Any], path: str, words: str
) -> None:
    problems = vllm_workload_problems(**workload)
    assert any(p.startswith(path) and words in p for p in problems), problems


def test_the_plan_prints_the_idle_period_the_wait_and_the_idle_cost(tmp_path: Path) -> None:
    printed = shared.main(["dev"], tmp_path)
    assert printed.code == render.EXIT_OK
    out = printed.out
    assert "replicas 0-1: sleeps after 900s without a request" in out, out
    assert "held by KEDA's interceptor behind the gate (key and TLS unchanged) up to 1800s" in out
    assert "startup probe allows up to 1800s" in out
    assert re.search(r"KEDA and its HTTP add-on \(7 pods.*idle \$0\.03/h", out), out


# --- what `pulumi destroy` and later `pulumi up`s need ------------------------------------------


def test_destroy_keeps_the_operators_authorised_until_their_finalizers_ran(dev: Recording) -> None:
    keda_children = [r for r in dev.resources if "gke-gpu:index:Keda::" in r.parent]
    access = [
        r
        for r in keda_children
        if r.type.split(":")[-1]
        in ("ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
    ]
    deployments = [r for r in keda_children if r.type == DEPLOYMENT]

    def add_on(r: Any) -> bool:
        return r.inputs["metadata"]["name"].startswith("keda-add-ons-http")

    for deployment in deployments:
        for needed in (a for a in access if add_on(a) == add_on(deployment)):
            assert needed.urn in deployment.dependencies, (
                f"{deployment.name} must be deleted before {needed.name}: an operator that has "
                "lost its account or its RBAC cannot remove the finalizers of the scalers, and "
                "`pulumi destroy` hangs on them"
            )
    scaled = next(r for r in keda_children if r.type.endswith(":ScaledObject"))
    assert {d.urn for d in deployments} <= set(scaled.dependencies), (
        "the interceptor's ScaledObject goes before KEDA's operator, which holds its finalizer"
    )
    http = next(iter(dev.of_type(HTTP_SCALED_OBJECT)))
    operator = next(d for d in deployments if d.inputs["metadata"]["name"] == "keda-operator")
    by_urn = {r.urn: r for r in dev.resources}
    closure, todo = set(), list(http.dependencies)
    while todo:
        urn = todo.pop()
        if urn not in closure:
            closure.add(urn)
            todo += by_urn[urn].dependencies if urn in by_urn else []
    assert operator.urn in closure, (
        "the workload's HTTPScaledObject goes before KEDA's operator, which holds the finalizer "
        "of the ScaledObject the add-on made for it"
    )


def test_the_interceptors_survive_a_node_drain_and_leave_their_count_to_the_hpa(
    dev: Recording,
) -> None:
    interceptor = _named(dev, DEPLOYMENT, "keda-add-ons-http-interceptor")
    assert "replicas" not in interceptor["spec"], (
        "the interceptor's ScaledObject owns its count; a replicas field would conflict on the "
        "next update (server-side apply)"
    )
    spread = interceptor["spec"]["template"]["spec"]["topologySpreadConstraints"]
    assert spread[0]["topologyKey"] == "kubernetes.io/hostname"
    budget = _named(
        dev, "kubernetes:policy/v1:PodDisruptionBudget", "keda-add-ons-http-interceptor"
    )
    assert budget["spec"]["minAvailable"] == 1


def _external(recording: Recording) -> list[Any]:
    return [
        r
        for r in recording.of_type(API_SERVICE)
        if r.inputs["metadata"]["name"] == "v1beta1.external.metrics.k8s.io"
    ]


def _with_workloads(autoscales: list[dict[str, Any]]) -> dict[str, Any]:
    config = copy.deepcopy(STANDARD)
    config["gke-gpu:nodePools"][0]["maxNodes"] = 4
    base = config["gke-gpu:workloads"][0]
    config["gke-gpu:workloads"] = [
        {**base, "name": f"w{i}", "autoscale": scale} for i, scale in enumerate(autoscales)
    ]
    return config


SLEEPS = {"minReplicas": 0, "maxReplicas": 1}
HPA_SCALED = {"minReplicas": 1, "maxReplicas": 2}


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ([HPA_SCALED], [HPA_SCALED, SLEEPS]),
        ([HPA_SCALED, SLEEPS], [SLEEPS]),
        ([SLEEPS], [HPA_SCALED, SLEEPS]),
        ([HPA_SCALED, SLEEPS], [HPA_SCALED]),
    ],
    ids=["first-sleeper", "last-hpa-goes", "first-hpa", "last-sleeper-goes"],
)
def test_the_external_metrics_registration_is_one_object_whoever_holds_it(
    run: Run, before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> None:
    """Pulumi creates before it deletes: two resources for the one cluster-wide APIService would
    fail `pulumi up` with AlreadyExists when KEDA comes or goes next to an HPA."""
    from tests import golden

    old, new = run(_with_workloads(before)), run(_with_workloads(after))
    (was,) = _external(old)
    (now,) = _external(new)
    result = golden.upgrade({was.urn: golden.physical_name(was)}, new.resources)
    assert not result.deleted and not result.renamed, (
        f"the APIService would be created anew ({now.urn}) while {was.urn} still holds it"
    )
    keda_here = SLEEPS in after
    service = now.inputs["spec"]["service"]["name"]
    assert service == (
        "keda-metrics-apiserver" if keda_here else "custom-metrics-stackdriver-adapter"
    )


def test_the_add_on_serves_only_the_stacks_namespace(dev: Recording) -> None:
    """Watching every namespace, the interceptor would route a model's Host to whichever
    HTTPScaledObject claims it with more header matchers (pkg/routing/tablememory.go): one made
    elsewhere could receive the gate's requests, API key included."""
    for name, env_name in (
        ("keda-add-ons-http-interceptor", "KEDA_HTTP_WATCH_NAMESPACE"),
        ("keda-add-ons-http-operator", "KEDA_HTTP_OPERATOR_WATCH_NAMESPACE"),
    ):
        (container,) = _named(dev, DEPLOYMENT, name)["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env[env_name] == "gke-gpu", f"{name} watches only the stack's namespace"


def test_a_sleeping_model_behind_its_key_or_inside_the_cluster_is_accepted() -> None:
    asleep = {"autoscale": {"minReplicas": 0, "maxReplicas": 1}, "cache": {"size": "30Gi"}}
    assert vllm_workload_problems(**EXPOSED, **asleep) == [], "the generated key guards the wake"
    assert vllm_workload_problems(expose={"type": "ClusterIP"}, apiKey=False, **asleep) == [], (
        "only the cluster's own pods can reach a ClusterIP gate"
    )


@pytest.mark.parametrize("namespace", ["keda", "custom-metrics"])
def test_the_namespaces_the_program_installs_components_into_are_refused(
    namespace: str,
) -> None:
    from components.config.rules import names

    (problem,) = names.namespace_problems(namespace)
    assert problem.path == "gke-gpu:namespace" and "KEDA" in problem.message, (
        f"a workload namespace {namespace!r} is a second Namespace object of that name (up fails "
        f"with AlreadyExists) and its default-deny egress cuts the operators off: {problem}"
    )


def test_a_sleeping_statefulset_is_not_awaited_either(run: Run) -> None:
    config = stack_config("dev")
    (workload,) = config["gke-gpu:workloads"]
    config["gke-gpu:workloads"] = [{**workload, "kind": "StatefulSet"}]
    (statefulset,) = run(config).of_type("kubernetes:apps/v1:StatefulSet")
    annotations = statefulset.inputs["metadata"].get("annotations", {})
    assert annotations.get("pulumi.com/skipAwait") == "true", (
        "KEDA removes a sleeping StatefulSet's replica at once: waiting for it would fail "
        "`pulumi up` after the provider's 10 minutes"
    )


def _plan(tmp_path: Path, capsys: pytest.CaptureFixture[str], config: dict[str, Any]) -> str:
    import yaml

    stack_file = tmp_path / "Pulumi.t.yaml"
    stack_file.write_text(yaml.safe_dump({"config": config}))
    code = render.main(["t", "--stack-file", str(stack_file), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == render.EXIT_OK, out
    return out


def _sleeping_standard(pool: dict[str, Any], **workload: Any) -> dict[str, Any]:
    config = copy.deepcopy(STANDARD)
    config["gke-gpu:nodePools"][0].update(pool)
    config["gke-gpu:workloads"][0].update(
        {"autoscale": {"minReplicas": 0, "maxReplicas": 2}, "cache": {"size": "30Gi"}, **workload}
    )
    return config


def test_the_wake_line_says_when_a_warm_node_takes_the_first_replica(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    warm = _plan(tmp_path, capsys, _sleeping_standard({"minNodes": 1}))
    cold = _plan(tmp_path, capsys, _sleeping_standard({"minNodes": 0}))
    assert "expected wake: a warm node takes the first replica" in warm, (
        "a pool with minNodes 1 keeps a GPU node: the first request does not wait for a new one"
    )
    assert "expected wake: a GPU node is created" in cold, cold


def test_a_fallback_class_says_it_streams_the_image_it_streams(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image = "us-docker.pkg.dev/acme-ml-test/serving/vllm-openai:v0.29.0"
    out = _plan(
        tmp_path,
        capsys,
        _sleeping_standard(
            {"minNodes": 0},
            image=image,
            fallback=[{"gpu": {"type": "nvidia-l4", "count": 1}, "spot": False}],
        ),
    )
    assert "image: streamed (image streaming, Artifact Registry image)" in out, (
        "the ComputeClass turns image streaming on for every fallback node "
        "(nodePoolConfig.imageStreaming): the plan must not say the image is pulled whole\n" + out
    )


def test_destroy_deletes_a_sleeping_workload_before_its_scaler(dev: Recording) -> None:
    deployment = dev.served(DEPLOYMENT)
    (scaled,) = dev.of_type(HTTP_SCALED_OBJECT)
    assert scaled.urn in deployment.dependencies, (
        "`pulumi destroy` deletes dependents first: unless the Deployment depends on its "
        "HTTPScaledObject, the scaler may go first, and KEDA's finalizer then restores the "
        "Deployment to one replica, starting a GPU node while the stack is being destroyed"
    )
    assert deployment.urn not in scaled.dependencies, "and never the other way round (a cycle)"


def test_a_sleeping_model_wakes_on_requests_in_flight_not_on_the_rate_0_15_rounds_away(
    dev: Recording,
) -> None:
    """kedacore/http-add-on#1692: on 0.15.0 a lone request after ~33 idle minutes averages to a
    `requestRate` of 0 (pkg/queue/bucketing.go precision 3, fixed by #1708 after 0.15.0) and gets
    a 504 with no scale-up; the concurrency gauge counts the held request itself (docs/
    scaling.md)."""
    spec = _named(dev, HTTP_SCALED_OBJECT, "llm")["spec"]
    assert keda.HTTP_ADD_ON.name == "keda-add-ons-http-0.15.0.yaml", (
        "a new add-on release: check whether it has kedacore/http-add-on#1708, then this test"
    )
    assert list(spec["scalingMetric"]) == ["concurrency"], (
        "the vendored add-on 0.15.0 rounds a lone request's rate to 0 after a long idle: scaling "
        "on requestRate would answer the first request after 30 minutes with a 504 and never wake "
        "the model"
    )
