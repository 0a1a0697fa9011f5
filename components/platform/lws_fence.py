"""What the LeaderWorkerSet controller may do, and who may reach it (issue 44 N3).

The release manifest (components/platform/vendor/lws/lws-v0.8.0.yaml, unedited) gives the
controller's account a ClusterRole that reads and updates every Secret of the cluster, writes
every node and pod, and updates every webhook configuration; its namespace admits any pod to its
webhook and metrics ports and carries no Pod Security label. The program cuts the role to what the
controller calls and fences the namespace as it registers them (`least_privilege`, called by
lws.objects; `added`; `DOORS`). Read in kubernetes-sigs/lws@fc19b9ae (v0.8.0):
  - Secrets: only its webhook certificate's. The controller manages that certificate itself
    (cmd/main.go 160-165, pkg/cert/cert.go 31-62: open-policy-agent/cert-controller's rotator
    v0.15.0, go.mod line 10, on the Secret `lws-webhook-server-cert` of its own namespace,
    api/config/v1alpha1/defaults.go 27, the release's Secret). The rotator reads Secrets through a
    cache scoped to that namespace (cert-controller v0.15.0 pkg/rotator/rotator.go 113-126,
    194-216: list and watch there) and writes the one Secret (line 491, `Update`). No other code
    of the controller reads a Secret (pkg/, cmd/: the rbac markers at pkg/cert/cert.go 31-33 are
    the only ones naming Secrets). So the cluster-wide rule goes, and a Role in `lws-system` gives
    get, list and watch on its Secrets (that certificate's is the only one there) and `update` on
    that Secret by name.
  - webhook configurations: the same rotator lists and watches them through its cache (rotator.go
    716-733) and updates the caBundle of its own two (line 867; pkg/cert/cert.go 25-26,
    `lws-validating-webhook-configuration`, `lws-mutating-webhook-configuration`): `get` and
    `update` limited to those names, as Kueue's release already does for its own.
  - nodes: read only, to place a group's workers in its leader's topology (pkg/controllers/
    pod_controller.go 273-295, `Get`); `patch` and `update` are never called (the only writes in
    pkg/ and cmd/ are the Create, Patch, Delete and Status().Update of StatefulSets, Services,
    ControllerRevisions, pods and LeaderWorkerSets at leaderworkerset_controller.go 371, 524,
    pod_controller.go 191, 246, pkg/utils/controller/controller_utils.go 60, pkg/utils/
    revision/revision_utils.go 94, 209). Cut to get, list and watch.
  - pods: listed, watched and read (pod_controller.go 69, 420; leaderworkerset_controller.go
    391, 549) and deleted (a failed group's leader, pod_controller.go 246); never created, patched
    or updated (the pod webhook mutates in admission, with no API call). Cut to those four verbs.
Pod Security: the controller's pod runs as non-root, drops every capability and forbids privilege
escalation, but names no seccomp profile, which `restricted` requires (pod-security-admission
check_seccompProfile_restricted). Its scaffold leaves the profile commented out for Kubernetes
older than 1.19 only (config/manager/manager.yaml 59-67: "Please uncomment the following code if
your project does NOT have to work on old Kubernetes versions < 1.19"); the program sets it,
RuntimeDefault, and the namespace enforces `restricted`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from .fence import API_SERVER, COLLECTOR, Caps, Door, capped, named, namespaced_role

NAMESPACE = "lws-system"
MANAGER_ROLE = "lws-manager-role"
ACCOUNT = (NAMESPACE, "lws-controller-manager")
CERT_ROLE = "lws-webhook-cert-role"
WEBHOOKS = "admissionregistration.k8s.io"
WEBHOOK_KINDS = {
    "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
}
CAPS: Caps = {
    ("", "secrets"): (),
    ("", "nodes"): ("get", "list", "watch"),
    ("", "pods"): ("delete", "get", "list", "watch"),
    **{(WEBHOOKS, plural): ("list", "watch") for plural in WEBHOOK_KINDS.values()},
}
RUNTIME_DEFAULT = {"type": "RuntimeDefault"}

DOORS = (
    # The API server calls the webhooks (lws-webhook-service 443 -> 9443) from any address
    # (fence.API_SERVER says why).
    Door("webhooks-from-api-server", "lws-webhook-service", None, API_SERVER),
    # The metrics endpoint (TLS, authenticated and authorized: cmd/main.go 305-310,
    # filters.WithAuthenticationAndAuthorization) admits Managed Prometheus' collectors only.
    Door("metrics-from-collector", "lws-controller-manager-metrics-service", "https", COLLECTOR),
)


def least_privilege(obj: dict[str, Any], found: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The vendored object (of the release `found`) with the cuts above (a copy; others as
    they are)."""
    kind, name = obj["kind"], obj["metadata"]["name"]
    if kind == "ClusterRole" and name == MANAGER_ROLE:
        kept, cut = capped(obj["rules"], CAPS)
        owned = [
            named(WEBHOOKS, plural, _names(found, kind), cut[(WEBHOOKS, plural)])
            for kind, plural in WEBHOOK_KINDS.items()
            if (WEBHOOKS, plural) in cut
        ]
        if ("", "secrets") not in cut:
            raise ValueError(f"vendored {MANAGER_ROLE} no longer names Secrets: review lws_fence")
        return {**obj, "rules": kept + owned}
    if kind == "Deployment":
        obj = copy.deepcopy(obj)
        obj["spec"]["template"]["spec"]["securityContext"]["seccompProfile"] = dict(RUNTIME_DEFAULT)
    return obj


def _names(found: Sequence[dict[str, Any]], kind: str) -> list[str]:
    return [o["metadata"]["name"] for o in found if o["kind"] == kind]


def added(found: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Role on the webhook certificate's Secret (the release's only Secret), and its binding
    to the controller's account."""
    (secret,) = _names(found, "Secret")
    rules = [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]},
        named("", "secrets", [secret], ["update"]),
    ]
    return list(namespaced_role(CERT_ROLE, NAMESPACE, rules, ACCOUNT))
