"""KEDA and its HTTP add-on with no more access than the program's scalers need, in a namespace
that admits only the traffic they exchange (issue 30 M4), on what the engine receives.

The network checks evaluate the recorded NetworkPolicies as Kubernetes does (kubernetes.io,
"Network Policies": a pod selected by an ingress policy admits only what some rule of those
policies admits) for the paths the program really uses, each read from the recorded objects: the
gate's upstream, the scaler's admin target, the interceptor's ScaledObject's scaler address,
KEDA's metrics-service address, the webhook configuration and the APIService.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from components.platform import keda_fence
from tests.conftest import DEPLOYMENT, SERVICE, stack_config
from tools.engine import Recording, run_program

CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
CLUSTER_ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
HTTP_SCALED_OBJECT = "kubernetes:http.keda.sh/v1alpha1:HTTPScaledObject"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
KEDA = "keda"
# Built-in roles KEDA's accounts are bound to: TokenReviews and SubjectAccessReviews, which an
# aggregated API server needs to check its callers (not in the recording: Kubernetes ships them).
BUILT_IN = {"system:auth-delegator"}
# Where KEDA's metrics server finds the operator: kedacore/keda@68a5b502 cmd/adapter/main.go 206.
METRICS_SERVICE = "keda-operator.keda.svc.cluster.local:9666"


def _sleeping_statefulset() -> Recording:
    config = stack_config("dev")
    (workload,) = config["gke-gpu:workloads"]
    config["gke-gpu:workloads"] = [{**workload, "kind": "StatefulSet"}]
    return run_program(config, stack="dev")


@pytest.fixture(scope="module", params=["Deployment", "StatefulSet"])
def sleeping(request: pytest.FixtureRequest, dev: Recording) -> Recording:
    """dev, whose model sleeps, and the same model as a StatefulSet."""
    return dev if request.param == "Deployment" else _sleeping_statefulset()


def _keda_roles(recording: Recording) -> dict[str, list[dict[str, Any]]]:
    """ClusterRole name -> rules, for every ClusterRole bound to a service account in `keda`."""
    roles = {
        r.inputs["metadata"]["name"]: r.inputs["rules"] for r in recording.of_type(CLUSTER_ROLE)
    }
    bound: dict[str, list[dict[str, Any]]] = {}
    for binding in recording.of_type(CLUSTER_ROLE_BINDING):
        subjects = binding.inputs["subjects"]
        if any(s["kind"] == "ServiceAccount" and s.get("namespace") == KEDA for s in subjects):
            name = binding.inputs["roleRef"]["name"]
            assert name in roles or name in BUILT_IN, f"{name}: a role nobody reviewed"
            bound[name] = roles.get(name, [])
    return bound


def test_no_keda_account_reads_the_clusters_secrets(dev: Recording) -> None:
    roles = _keda_roles(dev)
    assert {"keda-operator", "keda-add-ons-http-interceptor"} <= set(roles)
    for name, rules in roles.items():
        for rule in rules:
            assert "secrets" not in rule["resources"], (
                f"{name} may read every Secret of the cluster (API keys, tokens, other teams'), "
                f"though the program uses no TriggerAuthentication: {rule}"
            )
    (operator,) = _named(dev, DEPLOYMENT, "keda-operator")["spec"]["template"]["spec"]["containers"]
    assert keda_fence.RESTRICT_SECRET_ACCESS in operator["env"], (
        "without KEDA_RESTRICT_SECRET_ACCESS the operator still resolves the model's secret env "
        "(its API key is a secretKeyRef), is refused, and the scaler never builds: the model "
        "would never wake"
    )
    model = dev.served(DEPLOYMENT).inputs["spec"]["template"]["spec"]["containers"][0]
    assert any("secretKeyRef" in e.get("valueFrom", {}) for e in model["env"]), (
        "the case above is real: the sleeping model's env reads its Secret"
    )


def test_keda_reads_and_scales_only_the_kinds_the_program_scales(sleeping: Recording) -> None:
    rules = [rule for rules in _keda_roles(sleeping).values() for rule in rules]
    for rule in rules:
        assert "*" not in rule["apiGroups"] and not any("*" in r for r in rule["resources"]), (
            f"a wildcard lets KEDA's account read (or scale) anything in the cluster: {rule}"
        )
    targets = [
        r.inputs["spec"]["scaleTargetRef"]
        for r in [*sleeping.of_type(HTTP_SCALED_OBJECT), *sleeping.of_type(SCALED_OBJECT)]
    ]
    assert len(targets) == 2, "the model's scaler and the interceptor's"
    for target in targets:
        group = target["apiVersion"].split("/")[0] if "/" in target["apiVersion"] else ""
        plural = target["kind"].lower() + "s"
        for resource, verbs in ((f"{plural}/scale", {"get", "update"}), (plural, {"get"})):
            assert any(
                group in rule["apiGroups"]
                and resource in rule["resources"]
                and verbs <= set(rule["verbs"])
                for rule in rules
            ), f"KEDA must {sorted(verbs)} {group}/{resource}: it scales {target['name']}"
    scale = {r for rule in rules for r in rule["resources"] if r.endswith("/scale")}
    assert scale == {f"{r}/scale" for r in keda_fence.SCALED_RESOURCES}


def test_the_interceptor_in_the_request_path_reads_no_configmap(dev: Recording) -> None:
    rules = _keda_roles(dev)["keda-add-ons-http-interceptor"]
    assert not any("configmaps" in rule["resources"] for rule in rules), (
        "the interceptor reads ConfigMaps only for placeholder pages, which the program never "
        "sets; it is the KEDA pod that takes traffic, so it holds the least"
    )


def test_a_vendored_wildcard_the_program_does_not_cut_is_refused() -> None:
    role = {
        "kind": "ClusterRole",
        "metadata": {"name": "keda-operator"},
        "rules": [{"apiGroups": ["*"], "resources": ["secrets"], "verbs": ["get"]}],
    }
    with pytest.raises(ValueError, match="wildcard rule not cut"):
        keda_fence.least_privilege(role)


# --- the namespace's doors ------------------------------------------------------------------


@dataclass(frozen=True)
class Pod:
    namespace: str | None
    """None: not a pod (the API server, from wherever GKE sends its calls)."""
    labels: dict[str, str]


API_SERVER = Pod(None, {})


def _named(recording: Recording, type_: str, name: str) -> dict[str, Any]:
    (found,) = [r.inputs for r in recording.of_type(type_) if r.inputs["metadata"]["name"] == name]
    return found


def _pods(recording: Recording, deployment: str) -> Pod:
    found = [r for r in recording.of_type(DEPLOYMENT) if r.inputs["metadata"]["name"] == deployment]
    (r,) = found
    return Pod(
        r.inputs["metadata"]["namespace"], r.inputs["spec"]["template"]["metadata"]["labels"]
    )


def _behind(recording: Recording, address: str, namespace: str = KEDA) -> tuple[Pod, int]:
    """The pods and container port a Service address (name[.namespace...][:port]) reaches."""
    host, _, port = address.partition(":")
    name, _, rest = host.partition(".")
    namespace = rest.split(".")[0] if rest else namespace
    (service,) = [
        r.inputs
        for r in recording.of_type(SERVICE)
        if r.inputs["metadata"]["name"] == name and r.inputs["metadata"]["namespace"] == namespace
    ]
    (entry,) = [p for p in service["spec"]["ports"] if p["port"] == int(port or 443)]
    target = entry.get("targetPort", entry["port"])
    deployment = next(
        d.inputs
        for d in recording.of_type(DEPLOYMENT)
        if d.inputs["metadata"]["namespace"] == namespace
        and service["spec"]["selector"].items()
        <= d.inputs["spec"]["template"]["metadata"]["labels"].items()
    )
    if isinstance(target, str):
        (target,) = [
            p["containerPort"]
            for c in deployment["spec"]["template"]["spec"]["containers"]
            for p in c.get("ports", [])
            if p.get("name") == target
        ]
    return Pod(namespace, deployment["spec"]["template"]["metadata"]["labels"]), target


def _peer_admits(peer: dict[str, Any], policy_namespace: str, source: Pod) -> bool:
    if "ipBlock" in peer:
        return source.namespace is None and peer["ipBlock"]["cidr"] == "0.0.0.0/0"
    if source.namespace is None:
        return False
    if "namespaceSelector" in peer:
        wanted = peer["namespaceSelector"].get("matchLabels", {})
        if not wanted.items() <= {"kubernetes.io/metadata.name": source.namespace}.items():
            return False
    elif source.namespace != policy_namespace:
        return False
    wanted = peer.get("podSelector", {}).get("matchLabels", {})
    return wanted.items() <= source.labels.items()


def admits(recording: Recording, source: Pod, target: Pod, port: int) -> bool:
    """Whether the namespace's ingress policies let `source` reach `target` on `port`."""
    selecting = [
        p
        for p in (r.inputs for r in recording.of_type(NETWORK_POLICY))
        if p["metadata"]["namespace"] == target.namespace
        and "Ingress" in p["spec"]["policyTypes"]
        and p["spec"]["podSelector"].get("matchLabels", {}).items() <= target.labels.items()
    ]
    if not selecting:
        return True
    for policy in selecting:
        for rule in policy["spec"].get("ingress", []):
            peers = rule.get("from")
            ports = rule.get("ports")
            if (
                peers is None or any(_peer_admits(p, target.namespace, source) for p in peers)
            ) and (ports is None or any(p["port"] == port for p in ports)):
                return True
    return False


def _paths(dev: Recording) -> dict[str, tuple[Pod, Pod, int]]:
    """Every path into `keda` the program uses: (source, target pods, container port)."""
    gate = dev.named("gate-llm-deployment").inputs["spec"]["template"]
    upstream = {e["name"]: e.get("value") for e in gate["spec"]["containers"][0]["env"]}
    gate_pods = Pod("gke-gpu", gate["metadata"]["labels"])
    scaler = _named(dev, DEPLOYMENT, "keda-add-ons-http-scaler")
    scaler_env = {
        e["name"]: e.get("value")
        for e in scaler["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    admin = (
        f"{scaler_env['KEDA_HTTP_SCALER_TARGET_ADMIN_SERVICE']}:"
        + (scaler_env["KEDA_HTTP_SCALER_TARGET_ADMIN_PORT"])
    )
    (trigger,) = _named(dev, SCALED_OBJECT, "keda-add-ons-http-interceptor")["spec"]["triggers"]
    (webhook, *_) = _named(
        dev,
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration",
        "keda-admission",
    )["webhooks"]
    (api_service,) = dev.of_type("kubernetes:apiregistration.k8s.io/v1:APIService")
    return {
        "gate -> interceptor proxy": (gate_pods, *_behind(dev, upstream["GATE_UPSTREAM"])),
        "scaler -> interceptor admin": (
            _pods(dev, "keda-add-ons-http-scaler"),
            *_behind(dev, admin),
        ),
        "operator -> scaler": (
            _pods(dev, "keda-operator"),
            *_behind(dev, trigger["metadata"]["scalerAddress"]),
        ),
        "metrics server -> operator": (
            _pods(dev, "keda-metrics-apiserver"),
            *_behind(dev, METRICS_SERVICE),
        ),
        "API server -> webhooks": (
            API_SERVER,
            *_behind(dev, webhook["clientConfig"]["service"]["name"]),
        ),
        "API server -> metrics server": (
            API_SERVER,
            *_behind(dev, api_service.inputs["spec"]["service"]["name"]),
        ),
    }


def test_every_path_the_program_uses_into_keda_is_admitted(dev: Recording) -> None:
    for path, (source, target, port) in _paths(dev).items():
        assert admits(dev, source, target, port), (
            f"{path} (port {port}) is blocked: a sleeping model would never wake or never scale"
        )


def test_the_keda_namespace_denies_everything_else(dev: Recording) -> None:
    deny = dev.named("keda-default-deny-ingress").inputs
    assert deny["metadata"] == {"name": "default-deny-ingress", "namespace": KEDA}
    assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}, (
        "every KEDA pod is isolated for ingress, whatever port it listens on"
    )
    model = Pod("gke-gpu", dev.served(DEPLOYMENT).inputs["spec"]["template"]["metadata"]["labels"])
    elsewhere = Pod("team-b", {"app": "anything"})
    paths = _paths(dev)
    gate = paths["gate -> interceptor proxy"][0]
    interceptor, proxy = paths["gate -> interceptor proxy"][1:]
    admin = paths["scaler -> interceptor admin"][2]
    scaler, grpc = paths["operator -> scaler"][1:]
    operator, metrics_service = paths["metrics server -> operator"][1:]
    refused = {
        "a model pod -> the interceptor's admin port (it would read request counts)": (
            model,
            interceptor,
            admin,
        ),
        "a pod of another namespace -> the interceptor's proxy (it skips the gate's key)": (
            elsewhere,
            interceptor,
            proxy,
        ),
        "a pod of another namespace -> the scaler's gRPC (it would feed KEDA)": (
            elsewhere,
            scaler,
            grpc,
        ),
        "KEDA's webhooks, not the scaler -> the interceptor's admin port": (
            _pods(dev, "keda-admission"),
            interceptor,
            admin,
        ),
        "the gate -> the operator's metrics service": (gate, operator, metrics_service),
        "the API server -> the operator's metrics service": (API_SERVER, operator, metrics_service),
        "anything -> the interceptor's TLS proxy port, unused": (gate, interceptor, 8443),
    }
    for path, (source, target, port) in refused.items():
        assert not admits(dev, source, target, port), f"{path} is admitted"
    for deployment in dev.of_type(DEPLOYMENT):
        if deployment.inputs["metadata"].get("namespace") != KEDA:
            continue
        pods = _pods(dev, deployment.inputs["metadata"]["name"])
        for container in deployment.inputs["spec"]["template"]["spec"]["containers"]:
            for port in container.get("ports", []):
                used = any(t == pods and p == port["containerPort"] for _, t, p in paths.values())
                assert used or not admits(dev, elsewhere, pods, port["containerPort"]), (
                    f"{deployment.name} port {port['containerPort']} ({port.get('name')}) is open "
                    "to any pod though nothing the program runs calls it"
                )


def test_the_namespace_denies_only_after_its_doors_exist(dev: Recording) -> None:
    deny = dev.named("keda-default-deny-ingress")
    doors = [
        r
        for r in dev.of_type(NETWORK_POLICY)
        if "gke-gpu:index:Keda::" in r.parent and r is not deny
    ]
    assert len(doors) == 1 + len(keda_fence.DOORS)
    assert {d.urn for d in doors} <= set(deny.dependencies), (
        "created first, the default deny would cut the webhooks and the interceptor off until the "
        "doors follow; destroyed last, likewise"
    )
