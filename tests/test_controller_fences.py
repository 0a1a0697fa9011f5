"""Kueue and the LeaderWorkerSet controller fenced as KEDA is, and KEDA's accounts split (issue 44
N3, M4r), on what the engine receives.

Each check reads the recorded objects only (no module of the program): what the controllers'
accounts may do is evaluated as Kubernetes' RBAC authorizer does (kubernetes.io, "Using RBAC
Authorization": a request is allowed when a rule of a role bound to the account matches its verb,
group, resource and, where the rule names some, the object's name), and who may reach their pods
as tests/test_keda_fence.py does. The rights a controller keeps are the ones its source calls
(components/platform/kueue_fence.py, lws_fence.py, keda_accounts.py cite the lines): each is
checked too, so a cut that would stop the controller fails here, not on a cluster.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.conftest import DEPLOYMENT, NAMESPACE, ROOT, SERVICE
from tests.test_keda_fence import API_SERVER, Pod, admits
from tests.test_posture import restricted_violations
from tools.engine import Recording, run_program

RBAC = "kubernetes:rbac.authorization.k8s.io/v1"
WEBHOOKS = "kubernetes:admissionregistration.k8s.io/v1"
API_SERVICE = "kubernetes:apiregistration.k8s.io/v1:APIService"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
# Roles Kubernetes ships (not in the recording), as bootstrap policy defines them
# (kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy).
BUILT_IN: dict[str, list[dict[str, Any]]] = {
    "system:auth-delegator": [
        {
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["tokenreviews"],
            "verbs": ["create"],
        },
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["subjectaccessreviews"],
            "verbs": ["create"],
        },
    ],
    "extension-apiserver-authentication-reader": [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["extension-apiserver-authentication"],
            "verbs": ["get", "list", "watch"],
        }
    ],
}
STACK = "gke-gpu"  # the examples' workload namespace
ELSEWHERE = "team-b"  # another team's namespace on the same cluster
KUEUE = ("kueue-system", "kueue-controller-manager")
LWS = ("lws-system", "lws-controller-manager")
# Managed Service for Prometheus' collector pods (docs/monitoring.md).
COLLECTOR = Pod("gmp-system", {"app.kubernetes.io/name": "collector"})


def _example(name: str) -> Recording:
    config = yaml.safe_load((ROOT / "examples" / f"Pulumi.{name}.yaml").read_text())["config"]
    return run_program(config, stack=name)


@pytest.fixture(scope="module")
def batch() -> Recording:
    """A queued Job: Kueue."""
    return _example("batch")


@pytest.fixture(scope="module")
def multihost() -> Recording:
    """A replica over two nodes: the LeaderWorkerSet controller."""
    return _example("multihost")


# --- RBAC, as the authorizer decides ---------------------------------------------------------


def _matches(rule: dict[str, Any], verb: str, group: str, resource: str, name: str | None) -> bool:
    def has(values: list[str], value: str) -> bool:
        return value in values or "*" in values

    if not (has(rule["verbs"], verb) and has(rule.get("apiGroups", []), group)):
        return False
    if not has(rule.get("resources", []), resource):
        return False
    names = rule.get("resourceNames")
    return not names or (name is not None and name in names)


def _rules(recording: Recording, kind: str, name: str, namespace: str | None) -> list[Any]:
    found = [
        r.inputs["rules"]
        for r in recording.of_type(f"{RBAC}:{kind}")
        if r.inputs["metadata"]["name"] == name
        and r.inputs["metadata"].get("namespace") == namespace
    ]
    if not found:
        assert name in BUILT_IN, f"{kind} {name} is bound but neither recorded nor built in"
        return BUILT_IN[name]
    (rules,) = found
    return rules


def can(
    recording: Recording,
    account: tuple[str, str],
    verb: str,
    resource: str,
    namespace: str | None = None,
    name: str | None = None,
) -> bool:
    """Whether the service account (namespace, name) may `verb` the resource ("group:plural",
    "plural" for the core group) in `namespace` (None: cluster-wide or cluster-scoped)."""
    group, _, plural = resource.rpartition(":")
    subject = {"kind": "ServiceAccount", "namespace": account[0], "name": account[1]}
    bindings = [(b.inputs, None) for b in recording.of_type(f"{RBAC}:ClusterRoleBinding")] + [
        (b.inputs, b.inputs["metadata"]["namespace"])
        for b in recording.of_type(f"{RBAC}:RoleBinding")
        if namespace is not None and b.inputs["metadata"]["namespace"] == namespace
    ]
    for binding, where in bindings:
        if subject not in [{k: s.get(k) for k in subject} for s in binding["subjects"]]:
            continue
        ref = binding["roleRef"]
        role_namespace = where if ref["kind"] == "Role" else None
        rules = _rules(recording, ref["kind"], ref["name"], role_namespace)
        if any(_matches(rule, verb, group, plural, name) for rule in rules):
            return True
    return False


def _secret_of(recording: Recording, namespace: str) -> str:
    """The Secret the controller's pods mount: its webhook certificate."""
    (deployment,) = [
        r.inputs
        for r in recording.of_type(DEPLOYMENT)
        if r.inputs["metadata"]["namespace"] == namespace
    ]
    (secret,) = [
        v["secret"]["secretName"]
        for v in deployment["spec"]["template"]["spec"]["volumes"]
        if "secret" in v
    ]
    return secret


def _webhook_configurations(recording: Recording, namespace: str) -> list[tuple[str, str]]:
    """(plural, name) of the webhook configurations whose webhooks are served from `namespace`."""
    return [
        (f"admissionregistration.k8s.io:{kind.lower()}s", r.inputs["metadata"]["name"])
        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
        for r in recording.of_type(f"{WEBHOOKS}:{kind}")
        if r.inputs["webhooks"][0]["clientConfig"]["service"]["namespace"] == namespace
    ]


@pytest.mark.parametrize("controller", ["kueue", "lws"])
def test_a_controllers_account_reads_no_secret_but_its_namespaces_and_writes_only_its_own(
    controller: str, batch: Recording, multihost: Recording
) -> None:
    recording, account = (batch, KUEUE) if controller == "kueue" else (multihost, LWS)
    home = account[0]
    for verb in ("get", "list", "watch", "update"):
        for where in (STACK, ELSEWHERE, "kube-system", None):
            assert not can(recording, account, verb, "secrets", where, "model-api-key"), (
                f"{controller}'s account may {verb} Secrets in {where or 'every namespace'}: "
                "whoever takes its token (its webhook port admits any address) reads the models' "
                "API keys and every other team's credentials"
            )
    own = _secret_of(recording, home)
    assert not can(recording, account, "update", "secrets", home, "another-secret"), (
        f"{controller} writes only its certificate's Secret, {own}"
    )
    # What its certificate rotator does (cert-controller: an informer on its namespace's Secrets,
    # an update of the one Secret): still allowed, or the webhooks never get a certificate.
    for verb in ("list", "watch"):
        assert can(recording, account, verb, "secrets", home), f"{controller}: {verb} Secrets"
    assert can(recording, account, "update", "secrets", home, own), f"{controller}: update {own}"
    for plural, name in _webhook_configurations(recording, home):
        assert can(recording, account, "update", plural, None, name), f"{controller}: {name}"
        assert can(recording, account, "list", plural) and can(recording, account, "watch", plural)
        assert not can(recording, account, "update", plural, None, "another-teams-webhook"), (
            f"{controller} may rewrite any {plural}: point another admission webhook at itself"
        )


def test_kueue_writes_pods_and_jobs_only_in_the_stacks_namespace(batch: Recording) -> None:
    for resource in ("pods", "batch:jobs"):
        for verb in ("patch", "update", "delete"):
            assert not can(batch, KUEUE, verb, resource, ELSEWHERE, "web-0"), (
                f"Kueue's account may {verb} {resource} of every namespace: its token would "
                "rewrite or kill any team's pods; Kueue admits the stack's namespace only"
            )
            assert can(batch, KUEUE, verb, resource, STACK, "nightly-0"), (
                f"Kueue must {verb} the queued {resource} it admits in {STACK}: the Job would "
                "stay suspended"
            )
        for verb in ("get", "list", "watch"):
            assert can(batch, KUEUE, verb, resource), f"Kueue's informers {verb} {resource}"
    assert can(batch, KUEUE, "patch", "pods/status", STACK, "nightly-0")
    assert not can(batch, KUEUE, "patch", "pods/status", ELSEWHERE, "web-0"), (
        "a pod's status decides whether its Service sends it traffic"
    )


def test_the_lws_controller_writes_no_node_and_creates_or_patches_no_pod(
    multihost: Recording,
) -> None:
    for verb in ("patch", "update"):
        assert not can(multihost, LWS, verb, "nodes", None, "gpu-node"), (
            f"LWS's account may {verb} any node (labels, taints): the controller only reads "
            "its leader's node"
        )
    for verb in ("create", "patch", "update"):
        assert not can(multihost, LWS, verb, "pods", ELSEWHERE, "web-0"), (
            f"LWS's account may {verb} any pod of the cluster; it only deletes a failed leader"
        )
    for verb in ("get", "list", "watch"):
        assert can(multihost, LWS, verb, "nodes") and can(multihost, LWS, verb, "pods")
    assert can(multihost, LWS, "delete", "pods", STACK, "r1-group-0"), "restarting a failed group"
    assert can(multihost, LWS, "create", "apps:statefulsets", STACK, "r1-group-0")


# --- who may reach them ---------------------------------------------------------------------


def _pods(recording: Recording, namespace: str) -> Pod:
    (deployment,) = [
        r.inputs
        for r in recording.of_type(DEPLOYMENT)
        if r.inputs["metadata"]["namespace"] == namespace
    ]
    return Pod(namespace, deployment["spec"]["template"]["metadata"]["labels"])


def _port(recording: Recording, namespace: str, service: str, port: int = 443) -> int:
    """The container port a Service's port forwards to."""
    (found,) = [
        r.inputs
        for r in recording.of_type(SERVICE)
        if r.inputs["metadata"]["name"] == service
        and r.inputs["metadata"]["namespace"] == namespace
    ]
    (entry,) = [p for p in found["spec"]["ports"] if p["port"] == port]
    target = entry.get("targetPort", port)
    assert isinstance(target, int), "the vendored Services forward to numbered ports"
    return target


def _used(recording: Recording, namespace: str) -> dict[str, tuple[Pod, int]]:
    """Each path into the controller's namespace a client really uses: (source, port). The API
    server's, read from the recorded webhook configurations and APIServices; the collector's, from
    the metrics Service."""
    paths: dict[str, tuple[Pod, int]] = {}
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for r in recording.of_type(f"{WEBHOOKS}:{kind}"):
            service = r.inputs["webhooks"][0]["clientConfig"]["service"]
            if service["namespace"] == namespace:
                paths[f"API server -> {kind}"] = (
                    API_SERVER,
                    _port(recording, namespace, service["name"], service.get("port", 443)),
                )
    for r in recording.of_type(API_SERVICE):
        service = r.inputs["spec"]["service"]
        if service["namespace"] == namespace:
            paths[f"API server -> {r.inputs['metadata']['name']}"] = (
                API_SERVER,
                _port(recording, namespace, service["name"]),
            )
    (metrics,) = [
        r.inputs["metadata"]["name"]
        for r in recording.of_type(SERVICE)
        if r.inputs["metadata"]["namespace"] == namespace
        and "metrics" in r.inputs["metadata"]["name"]
    ]
    paths["collector -> metrics"] = (COLLECTOR, _port(recording, namespace, metrics, 8443))
    return paths


@pytest.mark.parametrize("controller", ["kueue", "lws"])
def test_a_controllers_namespace_admits_only_the_api_server_and_the_collector(
    controller: str, batch: Recording, multihost: Recording
) -> None:
    recording, (namespace, _) = (batch, KUEUE) if controller == "kueue" else (multihost, LWS)
    pods = _pods(recording, namespace)
    used = _used(recording, namespace)
    assert len(used) == (5 if controller == "kueue" else 3), used  # Kueue: 2 APIServices
    for path, (source, port) in used.items():
        assert admits(recording, source, pods, port), (
            f"{controller}: {path} (port {port}) is blocked: "
            + ("no queued Job would be admitted" if controller == "kueue" else "no group starts")
        )
    (deployment,) = [
        r.inputs
        for r in recording.of_type(DEPLOYMENT)
        if r.inputs["metadata"]["namespace"] == namespace
    ]
    any_pod = [Pod(STACK, {"app.kubernetes.io/name": "gke-gpu-gate"}), Pod(ELSEWHERE, {})]
    for container in deployment["spec"]["template"]["spec"]["containers"]:
        for entry in container["ports"]:
            port = entry["containerPort"]
            if any(p == port and s is API_SERVER for s, p in used.values()):
                continue  # the API server's: from any address (fence.API_SERVER says why)
            for source in any_pod:
                assert not admits(recording, source, pods, port), (
                    f"{controller}'s {entry['name']} port {port} admits pods of {source.namespace}:"
                    " a compromised pod probes the controller that may write other namespaces"
                )


@pytest.mark.parametrize("controller", ["kueue", "lws"])
def test_a_controllers_namespace_enforces_pod_security_restricted_and_its_pod_passes(
    controller: str, batch: Recording, multihost: Recording
) -> None:
    recording, (namespace, _) = (batch, KUEUE) if controller == "kueue" else (multihost, LWS)
    (labels,) = [
        r.inputs["metadata"].get("labels", {})
        for r in recording.of_type(NAMESPACE)
        if r.inputs["metadata"]["name"] == namespace
    ]
    assert labels.get("pod-security.kubernetes.io/enforce") == "restricted", (
        f"{namespace} enforces no Pod Security level: a pod created there (its account may "
        "create none, but a cluster admin's mistake or a compromised chart may) runs privileged"
    )
    (deployment,) = [
        r.inputs
        for r in recording.of_type(DEPLOYMENT)
        if r.inputs["metadata"]["namespace"] == namespace
    ]
    assert restricted_violations(deployment["spec"]["template"]["spec"]) == [], (
        f"the API server would refuse {controller}'s controller pod in a restricted namespace"
    )


# --- KEDA: one account per Deployment (M4r) -------------------------------------------------


def _keda_accounts(dev: Recording) -> dict[str, tuple[str, str]]:
    return {
        r.inputs["metadata"]["name"]: (
            "keda",
            r.inputs["spec"]["template"]["spec"]["serviceAccountName"],
        )
        for r in dev.of_type(DEPLOYMENT)
        if r.inputs["metadata"]["namespace"] == "keda"
        and r.inputs["metadata"]["name"]
        in ("keda-operator", "keda-metrics-apiserver", "keda-admission")
    }


def test_each_keda_deployment_runs_as_its_own_account(dev: Recording) -> None:
    accounts = _keda_accounts(dev)
    assert len(accounts) == 3 and len(set(accounts.values())) == 3, (
        f"KEDA's Deployments share an account ({accounts}): the two any address reaches "
        "(webhooks, metrics server) would hold the operator's rights"
    )


def test_the_keda_pods_any_address_reaches_hold_only_what_they_call(dev: Recording) -> None:
    accounts = _keda_accounts(dev)
    for deployment in ("keda-admission", "keda-metrics-apiserver"):
        account = accounts[deployment]
        for verb, resource, where, name in (
            ("get", "secrets", "keda", "kedaorg-certs"),
            ("list", "secrets", None, None),
            ("create", "batch:jobs", STACK, None),
            ("update", "admissionregistration.k8s.io:validatingwebhookconfigurations", None, "x"),
            ("update", "apiregistration.k8s.io:apiservices", None, "x"),
            ("patch", "apps:deployments/scale", STACK, "llm"),
        ):
            assert not can(dev, account, verb, resource, where, name), (
                f"{deployment}, which takes connections from any address, may {verb} "
                f"{resource}{' ' + name if name else ''}: its token is worth stealing"
            )
    webhooks, metrics = accounts["keda-admission"], accounts["keda-metrics-apiserver"]
    for verb, resource in (
        ("list", "autoscaling:horizontalpodautoscalers"),
        ("list", "keda.sh:scaledobjects"),
        ("get", "apps:deployments"),
        ("list", "limitranges"),
    ):
        assert can(dev, webhooks, verb, resource), f"the webhooks validate with {verb} {resource}"
    assert can(dev, metrics, "create", "authentication.k8s.io:tokenreviews"), (
        "the metrics server authenticates the API server's calls (delegated authentication)"
    )
    assert can(
        dev, metrics, "get", "configmaps", "kube-system", "extension-apiserver-authentication"
    )


def test_kedas_operator_creates_no_job_and_writes_only_its_own_webhook_and_apiservice(
    dev: Recording,
) -> None:
    operator = _keda_accounts(dev)["keda-operator"]
    assert not can(dev, operator, "create", "batch:jobs", ELSEWHERE), (
        "KEDA's operator may create Jobs in every namespace (ScaledJobs, which the program never "
        "makes): a stolen token runs any pod anywhere"
    )
    (webhook,) = [
        r.inputs["metadata"]["name"]
        for r in dev.of_type(f"{WEBHOOKS}:ValidatingWebhookConfiguration")
    ]
    external = "v1beta1.external.metrics.k8s.io"
    for plural, own in (
        ("admissionregistration.k8s.io:validatingwebhookconfigurations", webhook),
        ("apiregistration.k8s.io:apiservices", external),
    ):
        assert can(dev, operator, "update", plural, None, own), f"its certificate rotator: {own}"
        assert can(dev, operator, "list", plural) and can(dev, operator, "watch", plural)
        assert not can(dev, operator, "update", plural, None, "v1.apps"), (
            f"KEDA's operator may rewrite any {plural}: redirect another API or webhook to itself"
        )
    assert can(dev, operator, "update", "apps:deployments/scale", STACK, "llm"), "it scales"


def test_a_vendored_role_the_cut_cannot_bound_is_refused() -> None:
    """A release that grants a wildcard, or whose roles no longer name what the program cuts,
    stops the program instead of installing unreviewed rights."""
    from components.platform import fence, kueue, kueue_fence, lws_fence

    wildcard = [{"apiGroups": [""], "resources": ["*"], "verbs": ["get"]}]
    with pytest.raises(ValueError, match="wildcard"):
        fence.capped(wildcard, {("", "pods"): ("get",)})
    (release,) = [
        o for o in kueue.load(kueue.RELEASE) if o["metadata"]["name"] == "kueue-manager-role"
    ]
    role = {**release, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    with pytest.raises(ValueError, match="changed its pod or Job rules"):
        kueue_fence.least_privilege(role, [])
    lws_role = {"kind": "ClusterRole", "metadata": {"name": lws_fence.MANAGER_ROLE}, "rules": []}
    with pytest.raises(ValueError, match="no longer names Secrets"):
        lws_fence.least_privilege(lws_role, [])
