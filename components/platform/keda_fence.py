"""What KEDA and its HTTP add-on may read, and who may reach them (issue 30 M4).

Both come from upstream's release manifests (components/platform/vendor/keda/, unedited); the
program cuts their access as it registers them (`least_privilege`, called by keda._adjusted) and
fences their namespace with ingress NetworkPolicies (`DOORS`, `interceptor_ingress`; the shared
parts in fence.py). The program uses no TriggerAuthentication: its scalers need no credential.

Access, read in the sources of the pinned releases (kedacore/keda@68a5b502, v2.20.2, and
kedacore/http-add-on@4ea8a863, v0.15.0). The release runs the operator, metrics server and
admission webhooks as one service account (keda-operator); the program gives each its own
(keda_accounts.py, which also cuts the operator's Jobs and webhook writes). The operator's
ClusterRole:
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
    StatefulSets (apis/keda/v1alpha1/scaledobject_webhook.go 256-261, 365, 441-470, 650-656),
    under their own account now; the metrics server asks the operator (cmd/adapter/main.go
    97-126) and reads nothing from the API (keda_accounts.py).
The add-on: its operator and scaler keep their rules (HTTPScaledObjects, InterceptorRoutes,
ScaledObjects, EndpointSlices: operator/, scaler/main.go 44). The interceptor reads ConfigMaps
only for an InterceptorRoute's cold-start placeholder page (interceptor/middleware/
placeholder.go 52, 99-121), which the program never sets: cut.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from ..facts.labels import APP_NAME_LABEL, GATE_NAME_LABEL, NAMESPACE_NAME_LABEL
from .fence import API_SERVER, DEFAULT_DENY_INGRESS, Door, door_spec, selector, target_port
from .keda_accounts import operator_rules, split

__all__ = ["DEFAULT_DENY_INGRESS", "door_spec"]  # re-exported: namespace.py, keda.py

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
        rules = [r for rule in obj["rules"] for r in _operator_rule(rule)]
        return {**obj, "rules": operator_rules(rules)}
    if kind == "ClusterRole" and name == INTERCEPTOR_ROLE:
        return {**obj, "rules": [_without(rule, {"configmaps"}) for rule in obj["rules"]]}
    if kind == "Deployment" and name == OPERATOR:
        obj = copy.deepcopy(obj)
        (container,) = obj["spec"]["template"]["spec"]["containers"]
        container.setdefault("env", []).append(dict(RESTRICT_SECRET_ACCESS))
    return split(obj)


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


# The doors into `keda` (fence.Door). The API server calls the admission webhooks
# (ValidatingWebhookConfiguration keda-admission) and the metrics server (APIService
# v1beta1.external.metrics.k8s.io): from any address (fence.API_SERVER says why).
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
            {"from": [gates], "ports": [{"protocol": "TCP", "port": target_port(found, PROXY)}]},
            door_spec(found, ADMIN)["ingress"][0],
        ],
    }
