"""What Kueue may do, and who may reach it (issue 44 N3).

The release manifest (components/platform/vendor/kueue/kueue-0.19.2.yaml, unedited) lets Kueue's
account delete, patch and update every pod and every Job of the cluster, update every Secret of
`kueue-system`, and leaves the namespace open: any pod reaches its webhooks, its visibility API
server and its metrics port, and no Pod Security label is set. The program cuts and fences them as
it registers them (`least_privilege`, called by kueue._adjusted; `workload_role`; `DOORS`). Read
in kubernetes-sigs/kueue@8eab6877 (v0.19.2):
  - pods and Jobs: Kueue writes the pods and Jobs of the workloads it manages: it ungates and
    finalizes a queued pod (pkg/controller/jobs/pod/pod_controller.go 311, 989, 1024), ungates a
    topology-assigned or an elastic Job's pods (pkg/controller/tas/topology_ungater.go 308,
    pkg/controller/elasticjobs/elastic_job_ungater.go 183), fails pods on an unhealthy node
    (pkg/controller/tas/node_controller.go 616), and suspends, resumes and updates queued Jobs
    (pkg/controller/jobs/job/job_controller.go 77-79). It manages only what carries the queue label
    (manageJobsWithoutQueueName is off in the release's config, and the program's webhooks see
    nothing else: kueue.QUEUED_ONLY), and admits only the stack's namespace (the ClusterQueue's
    namespaceSelector, kueue.queue_objects). So those writes move from the cluster-wide role to a
    Role in the stack's namespace (`workload_role`); reading pods and Jobs everywhere stays, as
    its informers list and watch them cluster-wide. A pod or Job that carries the queue label in
    another namespace never runs anyway (no LocalQueue admits it there); Kueue now cannot touch
    it, so such a pod keeps the finalizer Kueue's webhook gave it (pkg/controller/jobs/pod/
    pod_webhook.go 171-174) until removed by hand.
  - Secrets: the release already limits them to `kueue-system` (the Role
    kueue-manager-secrets-role), where Kueue caches them (pkg/config/config.go 121-125) for its
    certificate rotator (pkg/util/cert/cert.go 143-147: open-policy-agent/cert-controller
    v0.16.0, which lists and watches through that cache and updates one Secret, rotator.go 491)
    and MultiKueue's kubeconfigs (read only: pkg/controller/admissionchecks/multikueue/
    multikueuecluster.go 1064, 1261). `update` is cut to the certificate's Secret,
    `kueue-webhook-server-cert` (apis/config/v1beta2/defaults.go 35, the release's Secret).
  - webhook configurations and CRDs: the release already limits their writes to Kueue's own by
    name (pkg/util/cert/cert.go 40-51): kept.
Pod Security: the controller's pod passes `restricted` as released (non-root, RuntimeDefault
seccomp, every capability dropped, no privilege escalation, configMap, secret and emptyDir
volumes only): the namespace enforces it.
Not cut: the rules on the other integrations' kinds (Ray, Kubeflow, JobSet, AppWrapper,
TrainJob, LeaderWorkerSet status) act only on objects of CRDs this stack does not install, or
(LeaderWorkerSet) on queued ones, and Kueue's own kinds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .fence import API_SERVER, COLLECTOR, Caps, Door, capped, named, namespaced_role, rules_for

NAMESPACE = "kueue-system"
MANAGER_ROLE = "kueue-manager-role"
SECRETS_ROLE = "kueue-manager-secrets-role"
ACCOUNT = (NAMESPACE, "kueue-controller-manager")
# What stays cluster-wide of Kueue's rights on pods and Jobs: reading them.
READ = ("get", "list", "watch")
WORKLOAD_CAPS: Caps = {
    ("", "pods"): READ,
    ("", "pods/status"): ("get",),
    ("", "pods/finalizers"): ("get",),
    ("batch", "jobs"): READ,
    ("batch", "jobs/status"): ("get",),
    ("batch", "jobs/finalizers"): ("get",),
}
# The Role in the stack's namespace holding the writes cut above.
WORKLOAD_ROLE = "kueue-queued-workloads"

DOORS = (
    # The API server calls the webhooks (kueue-webhook-service 443 -> 9443) and the visibility
    # API server (APIServices v1beta1 and v1beta2.visibility.kueue.x-k8s.io -> kueue-visibility-
    # server 443 -> 8082, on by default: the VisibilityOnDemand gate, pkg/features/
    # kube_features.go 663-666), from any address (fence.API_SERVER says why).
    Door("webhooks-from-api-server", "kueue-webhook-service", None, API_SERVER),
    Door("visibility-from-api-server", "kueue-visibility-server", "https", API_SERVER),
    # The metrics endpoint (TLS, authenticated and authorized: cmd/kueue/main.go 188-192,
    # filters.WithAuthenticationAndAuthorization) admits Managed Prometheus' collectors only.
    Door("metrics-from-collector", "kueue-controller-manager-metrics-service", "https", COLLECTOR),
)


def least_privilege(obj: dict[str, Any], found: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The vendored object (of the release `found`) with the cuts above (a copy; others as
    they are)."""
    kind, name = obj["kind"], obj["metadata"]["name"]
    if kind == "ClusterRole" and name == MANAGER_ROLE:
        kept, cut = capped(obj["rules"], WORKLOAD_CAPS)
        if set(cut) != set(WORKLOAD_CAPS):
            raise ValueError(f"vendored {MANAGER_ROLE} changed its pod or Job rules: {cut}")
        return {**obj, "rules": kept}
    if kind == "Role" and name == SECRETS_ROLE:
        kept, cut = capped(obj["rules"], {("", "secrets"): READ})
        (secret,) = [o["metadata"]["name"] for o in found if o["kind"] == "Secret"]
        return {**obj, "rules": [*kept, named("", "secrets", [secret], cut[("", "secrets")])]}
    return obj


def workload_role(found: Sequence[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    """The Role in the stack's namespace with the pod and Job writes cut from Kueue's cluster-wide
    role (exactly those), and its binding to Kueue's account."""
    (role,) = [
        o for o in found if o["kind"] == "ClusterRole" and o["metadata"]["name"] == MANAGER_ROLE
    ]
    _, cut = capped(role["rules"], WORKLOAD_CAPS)
    return list(namespaced_role(WORKLOAD_ROLE, namespace, rules_for(cut), ACCOUNT))
