"""Upgrades lose nothing: a stack deployed with any release recorded in tests/golden/,
upgraded to this program, keeps every resource (no delete, no replacement by a new name)."""

from __future__ import annotations

import pytest

from tests import golden
from tools.engine import Registration

# Golden URNs this release deliberately lets go (replaced or deleted on upgrade), each with the
# reason users read in the release notes.
_SLEEPS = (
    "issue 21: dev's model now sleeps when idle, so its gate forwards to KEDA's interceptor "
    "(a Host header and a longer server timeout in haproxy.cfg); pulumi-kubernetes replaces a "
    "ConfigMap whose data changes, and the gates roll onto the new one. Any stack that switches "
    "a workload to autoscale.minReplicas 0 replaces that workload's gate ConfigMap the same way."
)
_ROUTES = (
    "issue 21: a gate in front of two or more replicas routes by prompt prefix and load to each "
    "replica (a hash-balanced backend over the headless Service's records in haproxy.cfg); "
    "pulumi-kubernetes replaces the ConfigMap whose data changes, and the gates roll onto it. "
    "Any stack with an exposed workload of 2 or more replicas that does not sleep does the same "
    "(routing: round-robin keeps the old config)."
)
_HARDENED = (
    "issue 30: every gate's haproxy.cfg changes (a connection share for the API and one for the "
    "health port, 5 s client and request timeouts, TLS 1.2 AEAD ciphers only, a 429 after 20 "
    "wrong keys a minute from one address, client-sent X-Forwarded-For replaced): "
    "pulumi-kubernetes replaces each gate's ConfigMap, and the gates roll onto the new one. Any "
    "stack with an exposed workload replaces its gates' ConfigMaps the same way, once. Issue 31 "
    "changes the same haproxy.cfg again in the same release (HAProxy's Prometheus exporter on a "
    "port of its own for the error alert, TCP keepalive on client connections, WebSockets let "
    "through where expose.websockets asks, one hash ring on every gate of a cache-aware model): "
    "still one replacement of each gate's ConfigMap."
)
_KEYED = (
    "issue 30: every exposed server gets a generated API key that its gate checks, whatever its "
    "image is called (a mirror, `vllm serve` in a team's own image, any HTTP server), unless the "
    "stack says apiKey: false. The key check is new in haproxy.cfg; pulumi-kubernetes replaces "
    "the ConfigMap whose data changes, and the gates roll onto it. Callers then need the key "
    "(stack output apiKeys.<workload>). Any stack exposing an image not named *vllm-openai does "
    "the same."
)
_GATE_CONFIG = (
    "urn:pulumi:{stack}::gke-gpu::gke-gpu:index:ApiGate$kubernetes:core/v1:ConfigMap::"
    "gate-{gate}-config",
    "urn:pulumi:{stack}::gke-gpu::gke-gpu:index:GpuService$gke-gpu:index:ApiGate$"
    "kubernetes:core/v1:ConfigMap::gate-{gate}-config",
)
_GATE_ERRORS = (
    "issue 31: the error alert reads the 5xx each gate answered (HAProxy's exporter) beside vLLM's "
    "aborted or failed requests, and is titled 'Requests failing'; an existing cluster's alerts "
    "live in the rules ConfigMap gke-gpu-alerts, whose data changes, so pulumi-kubernetes "
    "replaces it (same name, same key). Reload it into your Prometheus, which must now scrape the "
    "gates' port 8405 too (docs/monitoring.md, Existing clusters)."
)
_FRONT_END = (
    "issue 43: a gate behind a Gateway (expose.domain) keeps an idle connection 620 s, past the "
    "600 s Google's front end reuses one for (a shorter keep-alive cost clients 502s), and counts "
    "wrong keys per client as the front end names it in X-Forwarded-For, not per front end: its "
    "haproxy.cfg changes, so pulumi-kubernetes replaces the gate's ConfigMap (same name) and the "
    "gates roll onto it. Any stack with expose.domain does the same, once; other gates' configs "
    "are unchanged."
)
_RULES = "urn:pulumi:{stack}::gke-gpu::gke-gpu:index:StackMonitoring$kubernetes:core/v1:ConfigMap::monitoring-rules"  # noqa: E501
_SHORTER_CERTIFICATES = (
    "issue 30 L9: a server certificate lives 180 days (a year before) and is renewed by any "
    "`pulumi up` in its last 60; every input of a tls certificate forces a new one, so the upgrade "
    "issues each gate's next certificate from the same CA (clients, who trust the CA, notice "
    "nothing) and the gates roll onto it. The CA keeps its lifetime until rotated (docs/day-2.md)."
)
_SERVER_CERTIFICATE = (
    "urn:pulumi:{stack}::gke-gpu::gke-gpu:index:ServerCertificate$"
    "tls:index/locallySignedCert:LocallySignedCert::cert-{workload}-cert",
    "urn:pulumi:{stack}::gke-gpu::gke-gpu:index:GpuService$gke-gpu:index:ServerCertificate$"
    "tls:index/locallySignedCert:LocallySignedCert::cert-{workload}-cert",
)
# The exposed workloads (each behind a gate) of the stacks tests/golden.py renders.
_GATES = {
    "dev": ("llm",),
    "prod": ("llm",),
    "adapters": ("llm",),
    "fallback": ("llm",),
    "fast-start": ("llm",),
    "internal-vpc": ("llm", "batch"),
    "operator": ("notebook",),
    "reservation": ("llm",),
    "t4-standard": ("notebook",),
    "catalog-autopilot": ("big",),
    "catalog-standard": ("pro",),
}


def _gate_configs(stack: str, gate: str = "llm") -> list[str]:
    return [urn.format(stack=stack, gate=gate) for urn in _GATE_CONFIG]


INTENDED_REPLACEMENTS: dict[str, str] = {
    **{
        urn.format(stack=stack, workload=workload): _SHORTER_CERTIFICATES
        for stack, workloads in _GATES.items()
        for workload in workloads
        for urn in _SERVER_CERTIFICATE
    },
    **{
        urn: _HARDENED
        for stack, gates in _GATES.items()
        for gate in gates
        for urn in _gate_configs(stack, gate)
    },
    **{_RULES.format(stack=stack): _GATE_ERRORS for stack in ("kubeadm", "operator")},
    # Replaced for issue 21 already (from an earlier release), now for issue 30 as well.
    **{urn: f"{_SLEEPS} {_HARDENED}" for urn in _gate_configs("dev")},
    **{
        urn: f"{_ROUTES} {_HARDENED}"
        for stack in ("prod", "fast-start", "reservation")
        for urn in _gate_configs(stack)
    },
    **{urn: f"{_KEYED} {_HARDENED}" for urn in _gate_configs("t4-standard", "notebook")},
    **{
        urn: _FRONT_END
        for stack in ("gateway", "gateway-auto", "gateway-prod")
        for urn in _gate_configs(stack)
    },
}
# Issue 43: an `auto` domain is named after the cluster and the workload (a second stack of the
# project with a workload `llm` took the name and its certificate). The Endpoints service under
# the new name, its certificate and map entry are created, then the old ones deleted; the old
# name stops resolving (clients move to the new URL, the stack's `url` output).
_AUTO_NAME = (
    "issue 43: `domain: auto` is <cluster>-<workload>.endpoints.<project>.cloud.goog, no longer "
    "<workload>.endpoints...: the Endpoints service, the Google-managed certificate and the "
    "certificate map entry are replaced for the new name (the old service is deleted: "
    "deletionPolicy DELETE), and clients move to the new URL."
)
_LB = (
    "urn:pulumi:gateway-auto::gke-gpu::gke-gpu:index:GpuService$gke-gpu:index:LoadBalancerService$"
)
INTENDED_REPLACEMENTS.update(
    {
        _LB + "gcp:certificatemanager/certificate:Certificate::service-llm-certificate": _AUTO_NAME,
        _LB + "gcp:certificatemanager/certificateMapEntry:CertificateMapEntry::"
        "service-llm-certificate-map-entry": _AUTO_NAME,
        _LB + "gcp:endpoints/service:Service::service-llm-endpoints": _AUTO_NAME,
    }
)
# Issue 44, M1: every directly exposed gate counts connections per client address (at most 48),
# a new rule and table in haproxy.cfg: pulumi-kubernetes replaces each such gate's ConfigMap (same
# name) once and the gates roll onto it. Gates behind a Gateway are unchanged.
_PER_SOURCE = (
    "issue 44 M1: a per-address connection cap in haproxy.cfg: the gate's ConfigMap is replaced "
    "under the same name and the gates roll."
)
for _stack, _gates in {**_GATES, "keys": ("llm",), "multihost": ("r1",)}.items():
    for _gate in _gates:
        for _urn in _gate_configs(_stack, _gate):
            INTENDED_REPLACEMENTS[_urn] = f"{INTENDED_REPLACEMENTS.get(_urn, '')} {_PER_SOURCE}"
# The Namespace before it moved into WorkloadNamespace (c1cc197 moved it without an alias): stacks
# deployed before then hold it at the root, and the alias keeps it (and everything in it).
PRE_COMPONENT_NAMESPACE = "urn:pulumi:{stack}::gke-gpu::kubernetes:core/v1:Namespace::namespace"


@pytest.fixture(scope="module")
def recorded() -> dict[str, list[Registration]]:
    return {name: golden.render(name, path).recording.resources for name, path in golden.stacks()}


RELEASES = golden.releases()


def test_every_shipped_stack_has_a_golden_state(recorded):
    guarded = {stack for olds in RELEASES.values() for stack in olds}
    missing = sorted(set(recorded) - guarded)
    assert not missing, (
        f"stacks {missing} have no golden state in any release, so nothing guards their "
        "upgrades: add this release's with `python -m tests.golden --write RELEASE`"
    )


@pytest.mark.parametrize("release", sorted(RELEASES))
@pytest.mark.parametrize("stack", [name for name, _ in golden.stacks()])
def test_upgrade_from_each_golden_release_deletes_and_replaces_nothing(release, stack, recorded):
    olds = RELEASES[release].get(stack)
    if olds is None:
        pytest.skip(f"{stack} did not ship in {release}")
    result = golden.upgrade(olds, recorded[stack])
    deleted = [urn for urn in result.deleted if urn not in INTENDED_REPLACEMENTS]
    renamed = [r for r in result.renamed if r[0] not in INTENDED_REPLACEMENTS]
    assert not result.errors, f"`pulumi up` of {stack} from {release} would stop: {result.errors}"
    assert not deleted, (
        f"`pulumi up` of a {stack} stack deployed with {release} would DELETE "
        f"{len(deleted)} resource(s) no resource claims by URN or alias: {deleted[:5]}. Give the "
        "moved resource `aliases` (its old name/parent), or name it in INTENDED_REPLACEMENTS."
    )
    assert not renamed, (
        f"`pulumi up` of {stack} from {release} would REPLACE resources whose name or "
        f"replacement-forcing inputs changed (golden URN, old, new): {renamed[:3]}"
    )


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_stack_from_before_the_namespace_component_keeps_its_namespace(stack, recorded):
    old = PRE_COMPONENT_NAMESPACE.format(stack=stack)
    (namespace,) = [
        r
        for r in recorded[stack]
        if r.type == "kubernetes:core/v1:Namespace" and r.name == "namespace-namespace"
    ]
    result = golden.upgrade({old: golden.physical_name(namespace)}, recorded[stack])
    assert not result.deleted and not result.renamed, (
        f"a {stack} stack deployed before WorkloadNamespace holds its namespace at {old}; "
        "without an alias the engine deletes it, and every workload in it"
    )
    assert result.aliased == {namespace.urn: old}


# The replay itself, on hand-made registrations: it must see a move without an alias.
STACK = "urn:pulumi:t::gke-gpu::pulumi:pulumi:Stack::gke-gpu-t"


def _reg(
    type_: str, name: str, urn: str, parent: str = STACK, aliases=(), inputs=None
) -> Registration:
    return Registration(
        type=type_, name=name, urn=urn, parent=parent, custom=inputs is not None, provider="",
        dependencies=[], protect=False, ignore_changes=[], custom_timeouts={},
        delete_before_replace=False, inputs=inputs or {}, aliases=list(aliases),
    )  # fmt: skip


OLD_CHILD = "urn:pulumi:t::gke-gpu::gke-gpu:index:GpuWorkload::workload-a"
OLD_GRANDCHILD = "urn:pulumi:t::gke-gpu::gke-gpu:index:GpuWorkload$kubernetes:apps/v1:Deployment::workload-a-deployment"  # noqa: E501
SERVICE = "urn:pulumi:t::gke-gpu::gke-gpu:index:GpuService::a"
NEW_CHILD = "urn:pulumi:t::gke-gpu::gke-gpu:index:GpuService$gke-gpu:index:GpuWorkload::workload-a"
NEW_GRANDCHILD = "urn:pulumi:t::gke-gpu::gke-gpu:index:GpuService$gke-gpu:index:GpuWorkload$kubernetes:apps/v1:Deployment::workload-a-deployment"  # noqa: E501


def _moved(aliases) -> list[Registration]:
    return [
        _reg("gke-gpu:index:GpuService", "a", SERVICE),
        _reg("gke-gpu:index:GpuWorkload", "workload-a", NEW_CHILD, SERVICE, aliases),
        _reg("kubernetes:apps/v1:Deployment", "workload-a-deployment", NEW_GRANDCHILD, NEW_CHILD),
    ]


def test_the_replay_sees_a_component_moved_without_an_alias():
    result = golden.upgrade({OLD_CHILD: None, OLD_GRANDCHILD: None}, _moved(()))
    assert result.deleted == sorted([OLD_CHILD, OLD_GRANDCHILD]), (
        "moving a component under a new parent without aliases changes its URN and its "
        "children's: the engine deletes both, and the replay must say so"
    )


def test_the_replay_carries_a_parent_alias_to_its_children():
    alias = {"name": "", "type": "", "stack": "", "project": "", "parentUrn": "", "noParent": True}
    result = golden.upgrade({OLD_CHILD: None, OLD_GRANDCHILD: None}, _moved([alias]))
    assert not result.deleted, (
        "an alias to the root on the moved component covers its children too (the engine's "
        f"inheritedChildAlias); deleted: {result.deleted}"
    )
    assert result.aliased == {NEW_CHILD: OLD_CHILD, NEW_GRANDCHILD: OLD_GRANDCHILD}


def test_the_replay_stops_on_a_duplicate_alias_as_the_engine_does():
    old = "urn:pulumi:t::gke-gpu::gke-gpu:index:ApiKey::a"
    renamed = _reg("gke-gpu:index:ApiKey", "b", old.replace("::a", "::b"), aliases=[{"name": "a"}])
    taken = _reg("gke-gpu:index:ApiKey", "a", old)
    for order in ([renamed, taken], [taken, renamed]):
        assert golden.upgrade({old: None}, order).errors, (
            "two resources claiming one old URN (one by alias) is the engine's 'Duplicate "
            "resource alias' error: `pulumi up` stops, and the replay must say so"
        )


DEPLOYMENT_URN = "urn:pulumi:t::gke-gpu::kubernetes:apps/v1:Deployment::d"


def _deployment(selector: dict[str, str], replicas: int) -> Registration:
    spec = {"selector": {"matchLabels": selector}, "replicas": replicas}
    inputs = {"metadata": {"name": "llm", "namespace": "gke-gpu"}, "spec": spec}
    return _reg("kubernetes:apps/v1:Deployment", "d", DEPLOYMENT_URN, inputs=inputs)


def test_the_replay_sees_a_replacement_the_provider_forces_and_not_an_update():
    olds = golden.snapshot([_deployment({"app": "llm"}, 1)])
    assert not golden.upgrade(olds, [_deployment({"app": "llm"}, 3)]).renamed, (
        "replicas is an in-place update: the replay must not call it a replacement"
    )
    assert golden.upgrade(olds, [_deployment({"app": "model"}, 1)]).renamed, (
        "a Deployment's selector is immutable: pulumi-kubernetes replaces the Deployment "
        "(diff.go forceNewProperties), and the replay must say so"
    )
