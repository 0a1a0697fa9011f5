"""One service account per KEDA Deployment, each with only its rights (issue 44 M4r).

KEDA's release manifest (components/platform/vendor/keda/keda-2.20.2.yaml) runs its operator,
metrics server and admission webhooks as one account, keda-operator, with the operator's
ClusterRole and its Role on the certificates' Secret: the two pods that take connections from any
address (fence.API_SERVER) held the operator's rights. KEDA's own Helm chart at the same release
gives each Deployment an account of its own (kedacore/charts@v2.20.2 keda/values.yaml 345-372:
keda-operator, keda-metrics-server, keda-webhook), and the program does the same with the
vendored objects (`split`, called by keda_fence.least_privilege; `added`, registered with them).
What each account needs, read in kedacore/keda@68a5b502 (v2.20.2):
  - the metrics server serves the external metrics API from the operator's gRPC service
    (pkg/provider/provider.go 74-112: the Kubernetes client it is handed is never called) and
    reads its certificates from the mounted Secret (--cert-dir=/certs): it needs the delegated
    authentication of an aggregated API server only, system:auth-delegator and kube-system's
    extension-apiserver-authentication-reader (the chart's metrics-server/clusterrolebinding.yaml),
    whose vendored bindings move to its account;
  - the admission webhooks list HPAs and ScaledObjects, get Deployments and StatefulSets and list
    LimitRanges through the manager's cached client (apis/keda/v1alpha1/scaledobject_webhook.go
    261, 365, 431, 656: list and watch, as an informer needs), and record events (line 67): the
    chart's webhooks/clusterrole.yaml, with `watch` on LimitRanges for that informer;
  - the operator keeps its ClusterRole, cut (keda_fence.least_privilege and `operator_rules`
    here): no batch/jobs at all (only a ScaledJob makes KEDA touch Jobs, controllers/keda/
    scaledjob_controller.go 82-95, 275, pkg/scaling/executor/scale_jobs.go; the program makes
    none, and the ScaledJob controller does not watch Jobs), and of ValidatingWebhookConfigurations
    and APIServices only its own two objects to write: its certificate rotator reads them through
    a cache (open-policy-agent/cert-controller v0.16.0 pkg/rotator/rotator.go 194-216, 716-733:
    list and watch on the kind) and updates the caBundle of the ones it is given (line 867),
    keda-admission and v1beta1.external.metrics.k8s.io (cmd/operator/main.go 118, 354).
"""

from __future__ import annotations

import copy
from typing import Any

from ..facts.labels import APP_NAME_LABEL, PART_OF_LABEL
from .fence import RBAC, Caps, capped, named

NAMESPACE = "keda"
OPERATOR = "keda-operator"
# Deployment -> its own service account (the Helm chart's names).
ACCOUNTS = {"keda-metrics-apiserver": "keda-metrics-server", "keda-admission": "keda-webhook"}
METRICS_SERVER_ACCOUNT = ACCOUNTS["keda-metrics-apiserver"]
WEBHOOK_ACCOUNT = ACCOUNTS["keda-admission"]
# The vendored bindings of the aggregated API server's delegated authentication.
METRICS_SERVER_BINDINGS = {
    ("ClusterRoleBinding", "keda-system-auth-delegator"),
    ("RoleBinding", "keda-auth-reader"),
}
WEBHOOK_ROLE = "keda-operator-webhook"
WEBHOOK_RULES: list[dict[str, Any]] = [
    {
        "apiGroups": ["autoscaling"],
        "resources": ["horizontalpodautoscalers"],
        "verbs": ["list", "watch"],
    },
    {"apiGroups": ["keda.sh"], "resources": ["scaledobjects"], "verbs": ["list", "watch"]},
    {
        "apiGroups": ["apps"],
        "resources": ["deployments", "statefulsets"],
        "verbs": ["get", "list", "watch"],
    },
    {"apiGroups": [""], "resources": ["limitranges"], "verbs": ["list", "watch"]},
    {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
]
# The objects the operator's certificate rotator writes a caBundle into (cmd/operator/main.go 118,
# 354), and what the operator may still do to their kind as a whole (its cache's list and watch).
ROTATED = {
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): "keda-admission",
    ("apiregistration.k8s.io", "apiservices"): "v1beta1.external.metrics.k8s.io",
}
OPERATOR_CAPS: Caps = {("batch", "jobs"): (), **{kind: ("list", "watch") for kind in ROTATED}}


def operator_rules(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The operator's ClusterRole rules without Jobs, its webhook and APIService writes limited to
    its own two objects."""
    kept, cut = capped(rules, OPERATOR_CAPS)
    return kept + [named(*kind, [ROTATED[kind]], cut[kind]) for kind in ROTATED if kind in cut]


def split(obj: dict[str, Any]) -> dict[str, Any]:
    """A vendored object moved to the account of the Deployment that uses it (a copy; others
    unchanged)."""
    kind, name = obj["kind"], obj["metadata"]["name"]
    if kind == "Deployment" and name in ACCOUNTS:
        obj = copy.deepcopy(obj)
        obj["spec"]["template"]["spec"]["serviceAccountName"] = ACCOUNTS[name]
    elif (kind, name) in METRICS_SERVER_BINDINGS:
        (subject,) = obj["subjects"]
        if subject != {"kind": "ServiceAccount", "name": OPERATOR, "namespace": NAMESPACE}:
            raise ValueError(f"vendored {kind} {name} binds {subject}, not KEDA's operator")
        subject = {**subject, "name": METRICS_SERVER_ACCOUNT}
        obj = {**obj, "subjects": [subject]}
    return obj


def _labels(name: str) -> dict[str, str]:
    """As the release labels its own accounts and roles (its version label left out)."""
    return {APP_NAME_LABEL: name, PART_OF_LABEL: OPERATOR}


def added() -> list[dict[str, Any]]:
    """The accounts the program adds beside the vendored ones, and the webhooks' role."""
    accounts = [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": account, "namespace": NAMESPACE, "labels": _labels(account)},
        }
        for account in ACCOUNTS.values()
    ]
    role = {"name": WEBHOOK_ROLE, "labels": _labels(WEBHOOK_ROLE)}
    subject = {"kind": "ServiceAccount", "name": WEBHOOK_ACCOUNT, "namespace": NAMESPACE}
    return [
        *accounts,
        {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": role, "rules": WEBHOOK_RULES},
        {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": copy.deepcopy(role),
            "roleRef": {
                "apiGroup": RBAC.split("/")[0],
                "kind": "ClusterRole",
                "name": WEBHOOK_ROLE,
            },
            "subjects": [subject],
        },
    ]
