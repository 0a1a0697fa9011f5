"""What KEDA and its HTTP add-on may read, and who may reach them (issue 30 M4).

Both come from upstream's release manifests (components/platform/vendor/keda/, unedited); the
program cuts their access as it registers them (`least_privilege`, called by keda._adjusted) and
fences their namespace with ingress NetworkPolicies (`fence`). The program uses no
TriggerAuthentication: its scalers need no credential at all.

Access, read in the sources of the pinned releases (kedacore/keda@68a5b502, v2.20.2, and
kedacore/http-add-on@4ea8a863, v0.15.0). The operator, metrics server and admission webhooks run
as one service account (keda-operator) and share its ClusterRole:
  - Secrets, cluster-wide: read only to resolve a scale target's env (secretKeyRef, envFrom) and a
    TriggerAuthentication's references (pkg/scaling/scalers_builder.go line 51 -> pkg/scaling/
    resolver/scale_resolvers.go resolveEnv 483-566, resolveAuthRef 288-456), through the
    manager's cached client: the first read would list and watch every Secret of the cluster
    (cmd/operator/main.go 204-207 caches every namespace). With KEDA_RESTRICT_SECRET_ACCESS=true
    KEDA reads Secrets of its own namespace only (readSecrets 569-574: other namespaces' secret
    env is skipped, not an error; the rest goes through a Secret informer scoped to `keda`,
    main.go 260-263). Its own Secrets (the certificates, pkg/certificates/certificate_manager.go
    36-38, 128-168) stay allowed by the vendored Role in `keda`. A sleeping model's env holds its
    API key as a secretKeyRef: KEDA no longer reads it.
  - `get` on every resource (`*/*`): used to find the scale target when its /scale subresource
    does not answer (controllers/keda/scaledobject_controller.go 463-477) and to read the pod
    template of a kind other than Deployment or StatefulSet (scale_resolvers.go 181-193,
    833-841); Deployments and StatefulSets are read through the cache (list/watch, kept). Cut to
    `get` on the kinds the program scales: a sleeping workload is a Deployment or a StatefulSet
    (expose, which sleeping needs, is refused on Jobs), and so is the interceptor.
  - every `*/scale`: KEDA scales through the scale subresource only (pkg/scaling/executor/
    scale_scaledobjects.go 293, 306; scaledobject_controller.go 410-421, 463): cut to those kinds.
  - the admission webhooks list HPAs, ScaledObjects and LimitRanges and read Deployments and
    StatefulSets (apis/keda/v1alpha1/scaledobject_webhook.go 256-261, 365, 441-470, 650-656);
    the metrics server reads ScaledObjects and asks the operator (cmd/adapter/main.go 97-126):
    all covered by the rules kept.
The add-on: its operator and scaler keep their rules (HTTPScaledObjects, InterceptorRoutes,
ScaledObjects, EndpointSlices: operator/, scaler/main.go 44). The interceptor reads ConfigMaps
only for an InterceptorRoute's cold-start placeholder page (interceptor/middleware/
placeholder.go 52, 99-121), which the program never sets: cut.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..facts.labels import APP_NAME_LABEL, GATE_NAME_LABEL, NAMESPACE_NAME_LABEL

OPERATOR = "keda-operator"
INTERCEPTOR_ROLE = "keda-add-ons-http-interceptor"
RESTRICT_SECRET_ACCESS = {"name": "KEDA_RESTRICT_SECRET_ACCESS", "value": "true"}
# The kinds KEDA scales here: the workloads that may sleep, and the interceptor.
SCALED_GROUP = "apps"
SCALED_RESOURCES = ("deployments", "statefulsets")


def least_privilege(obj: dict[str, Any]) -> dict[str, Any]:
    """The vendored object with the access above cut (a copy; others unchanged)."""
    kind, name = obj["kind"], obj["metadata"]["name"]
    if kind == "ClusterRole" and name == OPERATOR:
        return {**obj, "rules": [r for rule in obj["rules"] for r in _operator_rule(rule)]}
    if kind == "ClusterRole" and name == INTERCEPTOR_ROLE:
        return {**obj, "rules": [_without(rule, {"configmaps"}) for rule in obj["rules"]]}
    if kind == "Deployment" and name == OPERATOR:
        obj = copy.deepcopy(obj)
        (container,) = obj["spec"]["template"]["spec"]["containers"]
        container.setdefault("env", []).append(dict(RESTRICT_SECRET_ACCESS))
    return obj


def _operator_rule(rule: dict[str, Any]) -> Iterator[dict[str, Any]]:
    groups, resources = rule.get("apiGroups", []), rule.get("resources", [])
    if groups == ["*"] and resources == ["*"]:
        yield {**rule, "apiGroups": [SCALED_GROUP], "resources": list(SCALED_RESOURCES)}
    elif groups == ["*"] and resources == ["*/scale"]:
        scale = [f"{r}/scale" for r in SCALED_RESOURCES]
        yield {**rule, "apiGroups": [SCALED_GROUP], "resources": scale}
    elif "*" in groups or any("*" in r for r in resources):
        raise ValueError(f"vendored KEDA ClusterRole has a wildcard rule not cut: {rule}")
    else:
        yield _without(rule, {"secrets"})


def _without(rule: dict[str, Any], cut: set[str]) -> dict[str, Any]:
    return {**rule, "resources": [r for r in rule.get("resources", []) if r not in cut]}


@dataclass(frozen=True)
class Door:
    """One way into namespace `keda`: the pods behind `service`, on the port its `port` forwards
    to, from the pods behind `source` (in `keda`), or from anywhere when `source` is None."""

    name: str
    service: str
    port: str
    source: str | None


# The API server calls the admission webhooks (ValidatingWebhookConfiguration keda-admission) and
# the metrics server (APIService v1beta1.external.metrics.k8s.io). A NetworkPolicy cannot name
# the API server, and on GKE its calls arrive from different sources: the control plane's range
# on clusters peered with it (Google's private-cluster firewall steps open webhook ports from
# master-ipv4-cidr: cloud.google.com/service-mesh/docs/private-cluster-open-port), or the
# konnectivity agents' pod addresses in kube-system where GKE proxies through them (a
# third-party report, tigera/operator#5212, merged 2026-08-18: "On AKS and GKE the apiserver
# proxies admission calls through those pods"; no Google page found saying so). A rule on
# either source would break on the other, and "every address but the pods'" breaks the second.
# So these two ports admit any source, and only they: both serve TLS, the metrics server
# authenticates its callers and asks the API server whether they may read (delegated authn/authz:
# the system:auth-delegator binding), and the webhooks only validate.
API_SERVER = None
DOORS = (
    Door("webhooks-from-api-server", "keda-admission-webhooks", "https", API_SERVER),
    Door("metrics-server-from-api-server", "keda-metrics-apiserver", "https", API_SERVER),
    # The metrics server gets the values from the operator over gRPC (cmd/adapter/main.go 206:
    # keda-operator.<namespace>.svc.cluster.local:9666).
    Door(
        "operator-from-metrics-server", "keda-operator", "metricsservice", "keda-metrics-apiserver"
    ),
    # The operator asks the add-on's scaler (the ScaledObject's external-push trigger,
    # scalerAddress keda-add-ons-http-external-scaler.keda:9090).
    Door("scaler-from-operator", "keda-add-ons-http-external-scaler", "grpc", "keda-operator"),
)
SCALER_SERVICE = "keda-add-ons-http-external-scaler"
# The interceptor: its proxy (what the gates forward to) and its admin port (requests in flight,
# which the scaler polls: scaler/queue_pinger.go, KEDA_HTTP_SCALER_TARGET_ADMIN_SERVICE).
PROXY = Door("interceptor-from-gates", "keda-add-ons-http-interceptor-proxy", "proxy", None)
ADMIN = Door("", "keda-add-ons-http-interceptor-admin", "admin", SCALER_SERVICE)

# Selects every pod of the namespace and admits nothing: "default deny all ingress traffic"
# (kubernetes.io/docs/concepts/services-networking/network-policies, checked 2026-11-22); keda's
# namespace and the workloads' (namespace.py). Kubelet's probes still pass: traffic from the node
# a pod runs on is always allowed (same page).
DEFAULT_DENY_INGRESS: dict[str, Any] = {"podSelector": {}, "policyTypes": ["Ingress"]}


def selector(found: list[dict[str, Any]], service: str) -> dict[str, str]:
    """The pods behind a vendored Service: its selector."""
    return dict(_service(found, service)["spec"]["selector"])


def door_spec(found: list[dict[str, Any]], door: Door) -> dict[str, Any]:
    rule: dict[str, Any] = {"ports": [{"protocol": "TCP", "port": _target_port(found, door)}]}
    if door.source is not None:
        rule["from"] = [{"podSelector": {"matchLabels": selector(found, door.source)}}]
    return {
        "podSelector": {"matchLabels": selector(found, door.service)},
        "policyTypes": ["Ingress"],
        "ingress": [rule],
    }


def interceptor_ingress(found: list[dict[str, Any]], gate_namespace: str) -> dict[str, Any]:
    """Who may reach the interceptor. Its proxy routes by Host alone: any pod that reaches it
    could name a sleeping model's Host and reach the model without passing its gate (and the
    gate's key check, which vLLM itself skips on /invocations). So the proxy port admits only the
    gates' pods in the stack's namespace, and the admin port only the add-on's scaler."""
    gates = {
        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: gate_namespace}},
        "podSelector": {"matchLabels": {APP_NAME_LABEL: GATE_NAME_LABEL}},
    }
    return {
        "podSelector": {"matchLabels": selector(found, PROXY.service)},
        "policyTypes": ["Ingress"],
        "ingress": [
            {"from": [gates], "ports": [{"protocol": "TCP", "port": _target_port(found, PROXY)}]},
            door_spec(found, ADMIN)["ingress"][0],
        ],
    }


def _service(found: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (service,) = [o for o in found if o["kind"] == "Service" and o["metadata"]["name"] == name]
    return service


def _target_port(found: list[dict[str, Any]], door: Door) -> int:
    """The container port the Service's named port forwards to (a number, or a container port's
    name on the pods it selects)."""
    service = _service(found, door.service)
    (port,) = [p for p in service["spec"]["ports"] if p["name"] == door.port]
    target = port.get("targetPort", port["port"])
    if isinstance(target, int):
        return target
    labels = service["spec"]["selector"]
    ports = [
        p["containerPort"]
        for o in found
        if o["kind"] == "Deployment"
        and labels.items() <= o["spec"]["template"]["metadata"]["labels"].items()
        for c in o["spec"]["template"]["spec"]["containers"]
        for p in c.get("ports", [])
        if p.get("name") == target
    ]
    (number,) = ports
    return number
