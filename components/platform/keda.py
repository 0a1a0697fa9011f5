"""Keda: KEDA and its HTTP add-on, the field's engine for a model that sleeps when idle.

A workload with `autoscale.minReplicas: 0` gets an HTTPScaledObject (components/service/
scale_to_zero.py). The add-on's interceptor receives its requests from the gate, counts them for
KEDA, and holds one that finds no ready replica until a replica is ready; KEDA scales the
Deployment between 0 and maxReplicas on that count. Both are installed from upstream's release
manifests, vendored unedited in components/platform/vendor/keda/ (its README names the tags,
commits and checksums). What the program changes as it registers them:
  - images pinned by digest (IMAGES below);
  - the `keda` namespace labelled to enforce Pod Security `restricted` (every KEDA and add-on pod
    runs as non-root, drops all capabilities and uses the RuntimeDefault seccomp profile);
  - the interceptor's own ScaledObject starts at two replicas, not one: the interceptor is in
    every sleeping model's request path, and one pod would make a node drain an outage;
  - their access cut to what the program's scalers need (no Secret outside `keda`, `get` and
    scale on Deployments and StatefulSets only, no Jobs, no webhook configuration or APIService
    but KEDA's own to write), each Deployment under an account of its own (components/platform/
    keda_accounts.py), and the namespace fenced: it admits only the traffic KEDA's pods exchange
    (components/platform/keda_fence.py).

Facts read from the add-on's source at v0.15.0 (kedacore/http-add-on@4ea8a863):
  - the interceptor routes by the Host header (port stripped) and the path, no match answers
    404 (pkg/routing/table.go 187-200, key.go 27-40; interceptor/middleware/routing.go 40-47),
    and forwards to the Service, <service>.<namespace>:<port> (routing.go 118-133);
  - with no ready endpoint it waits on the Service's EndpointSlices up to the HTTPScaledObject's
    timeouts.conditionWait (interceptor/middleware/endpoint_resolver.go 43-101; the global
    KEDA_HTTP_READINESS_TIMEOUT defaults to "0s", no limit: interceptor/config/timeouts.go
    19-24), then answers 504; response headers must arrive within timeouts.responseHeader
    (global default KEDA_HTTP_RESPONSE_HEADER_TIMEOUT 300s, timeouts.go 15-18;
    interceptor/handler/upstream.go 81-94), else 504;
  - the operator creates a ScaledObject of the same name with an external-push trigger on
    keda-add-ons-http-external-scaler.keda:9090, its cooldownPeriod the scaledownPeriod
    (operator/controllers/http/scaled_object.go 29-47); KEDA makes the HPA keda-hpa-<name>.
KEDA's metrics server registers v1beta1.external.metrics.k8s.io, which only one server per
cluster may hold (kedacore/keda#470, #4378): the Custom Metrics Stackdriver Adapter then leaves
that registration to KEDA (components/platform/metrics_adapter.py).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from ..facts.labels import (
    APP_COMPONENT_LABEL,
    APP_INSTANCE_LABEL,
    APP_NAME_LABEL,
    HOSTNAME_LABEL,
    PART_OF_LABEL,
    POD_SECURITY_AUDIT_LABEL,
    POD_SECURITY_ENFORCE_LABEL,
    POD_SECURITY_WARN_LABEL,
)
from ..manifest import manifest
from . import keda_accounts, keda_fence
from .keda_drain import drained

VENDOR = Path(__file__).parent / "vendor" / "keda"
CORE = VENDOR / "keda-2.20.2.yaml"
HTTP_ADD_ON = VENDOR / "keda-add-ons-http-0.15.0.yaml"
NAMESPACE = "keda"

# The interceptor: the gate forwards a sleeping model's requests here, with the model's Host.
INTERCEPTOR_SERVICE = "keda-add-ons-http-interceptor-proxy"
INTERCEPTOR_PORT = 8080
# The interceptor pods' labels (the add-on's config/interceptor/deployment.yaml, as vendored).
INTERCEPTOR_LABELS = {
    APP_COMPONENT_LABEL: "add-on",
    APP_INSTANCE_LABEL: "interceptor",
    APP_NAME_LABEL: "http",
    PART_OF_LABEL: "keda",
}
INTERCEPTOR_MIN_REPLICAS = 2
POD_SECURITY_LABELS = {
    label: "restricted"
    for label in (POD_SECURITY_ENFORCE_LABEL, POD_SECURITY_WARN_LABEL, POD_SECURITY_AUDIT_LABEL)
}

# Index digests of the release tags. Upstream ships tags only; these come from two third-party
# pin tables (found with the code search; the first also records the checksum of the release
# asset keda-2.20.2.yaml, which the vendored file matches byte for byte). Not checked against
# ghcr.io from here: `crane digest ghcr.io/kedacore/keda:2.20.2` confirms one.
IMAGES = {
    "ghcr.io/kedacore/keda:2.20.2": (
        "sha256:fe74c7b8849586a67ad2201bcb89e7f5ac221ff90399ecaa8fd28427f1ef11e6"
    ),
    "ghcr.io/kedacore/keda-metrics-apiserver:2.20.2": (
        "sha256:27286536a8a775aeeee37a7e343f8ecebb27ebf680ee1181a4f99e82eefb253b"
    ),
    "ghcr.io/kedacore/keda-admission-webhooks:2.20.2": (
        "sha256:41f74102aba7959c6e8d08b433ab8a5fd6cae7c5646c78f7fe3de40a52df3439"
    ),
    "ghcr.io/kedacore/http-add-on-operator:0.15.0": (
        "sha256:d579b952ff0a0c3046a49d0e066bc06d33d1944b5f89b5fac5145d89f9f78959"
    ),
    "ghcr.io/kedacore/http-add-on-scaler:0.15.0": (
        "sha256:f748178bc4af9e546d5da38c4e1b1d8d236a343bb30927b292131c6f4c978394"
    ),
    "ghcr.io/kedacore/http-add-on-interceptor:0.15.0": (
        "sha256:4e88e7808652e7c438f66d67bc8a53ce6261b6081c81475bd4758602460af499"
    ),
}


def interceptor_address() -> str:
    return f"{INTERCEPTOR_SERVICE}.{NAMESPACE}.svc.cluster.local:{INTERCEPTOR_PORT}"


@cache
def load(path: Path) -> tuple[dict[str, Any], ...]:
    """The documents of a vendored release file (KEDA's here, Kueue's, LWS's), read once."""
    # libyaml's safe loader where PyYAML has it: the 13,500 vendored lines of KEDA take a second
    # in the pure-Python one, on every `pulumi up`.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return tuple(doc for doc in yaml.load_all(path.read_text(), Loader=loader) if doc)


def objects(path: Path) -> list[dict[str, Any]]:
    """The file's objects as the program registers them: images pinned, the namespace labelled,
    access cut; with KEDA's own, the accounts the program adds (one per Deployment:
    keda_accounts.py)."""
    added = keda_accounts.added() if path == CORE else []
    return [_adjusted(copy.deepcopy(obj)) for obj in [*load(path), *added]]


def _containers(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if obj["kind"] == "Deployment":
        yield from obj["spec"]["template"]["spec"]["containers"]


def _adjusted(obj: dict[str, Any]) -> dict[str, Any]:
    for container in _containers(obj):
        image = container["image"]
        if image not in IMAGES:
            raise ValueError(f"vendored KEDA image {image} has no pinned digest in IMAGES")
        container["image"] = f"{image}@{IMAGES[image]}"
    if obj["kind"] == "Namespace":
        obj["metadata"].setdefault("labels", {}).update(POD_SECURITY_LABELS)
    if obj["kind"] == "ScaledObject" and obj["metadata"]["name"] == "keda-add-ons-http-interceptor":
        obj["spec"]["minReplicaCount"] = INTERCEPTOR_MIN_REPLICAS
    if obj["kind"] == "Deployment" and obj["metadata"]["name"] == "keda-add-ons-http-interceptor":
        # Its ScaledObject's HPA owns the count: a replicas field here would conflict with it
        # on the next update (server-side apply, pulumi/pulumi-kubernetes#2491). Spread over
        # nodes, so one node going away leaves an interceptor (the PodDisruptionBudget below).
        obj["spec"].pop("replicas", None)
        obj["spec"]["template"]["spec"]["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": HOSTNAME_LABEL,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": dict(INTERCEPTOR_LABELS)},
            }
        ]
    return keda_fence.least_privilege(obj)


# Environment that limits the add-on to the stack's namespace (kedacore/http-add-on v0.15.0
# interceptor/config/serving.go line 14 and interceptor/main.go 106-110; operator/controllers/
# http/config/config.go line 23 and operator/main.go 88-92; empty watches every namespace).
# The interceptor routes a Host to whichever HTTPScaledObject claims it, the one with more header
# matchers first (pkg/routing/tablememory.go): watching every namespace, whoever may create one
# elsewhere could claim a model's Host and receive its requests, API key included.
WATCH_NAMESPACE_ENV = {
    "keda-add-ons-http-interceptor": "KEDA_HTTP_WATCH_NAMESPACE",
    "keda-add-ons-http-operator": "KEDA_HTTP_OPERATOR_WATCH_NAMESPACE",
}


def scoped(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    """The add-on's Deployments watching only `namespace`, the stack's."""
    env_name = WATCH_NAMESPACE_ENV.get(obj["metadata"]["name"])
    if obj["kind"] != "Deployment" or env_name is None:
        return obj
    obj = copy.deepcopy(obj)
    (container,) = obj["spec"]["template"]["spec"]["containers"]
    container.setdefault("env", []).append({"name": env_name, "value": namespace})
    return obj


@cache
def always_on_requests() -> tuple[tuple[str, int, str, str], ...]:
    """(Deployment, replicas, cpu, memory) of the pods KEDA keeps up whatever the load: read
    from the vendored objects as they are (no copy: nothing here changes them)."""
    found = []
    for path in (CORE, HTTP_ADD_ON):
        for obj in load(path):
            for container in _containers(obj):
                requests = container["resources"]["requests"]
                name = obj["metadata"]["name"]
                replicas = (
                    INTERCEPTOR_MIN_REPLICAS
                    if name == "keda-add-ons-http-interceptor"
                    else obj["spec"].get("replicas", 1)
                )
                found.append((name, replicas, requests["cpu"], requests["memory"]))
    return tuple(found)


# apiVersion -> the pulumi_kubernetes module of typed classes.
_MODULES = {
    "v1": k8s.core.v1,
    "apps/v1": k8s.apps.v1,
    "rbac.authorization.k8s.io/v1": k8s.rbac.v1,
    "apiextensions.k8s.io/v1": k8s.apiextensions.v1,
    "apiregistration.k8s.io/v1": k8s.apiregistration.v1,
    "admissionregistration.k8s.io/v1": k8s.admissionregistration.v1,
}
# Top-level fields whose Python argument name differs.
_ARGS = {"roleRef": "role_ref"}


def resource_name(obj: dict[str, Any]) -> str:
    """A stable, unique resource name: kind and (namespace/)name, as pulumi_kubernetes' yaml
    module names them."""
    meta = obj["metadata"]
    where = f"{meta['namespace']}/" if "namespace" in meta else ""
    return f"{obj['kind'].lower()}-{where}{meta['name']}".replace("/", "-")


def register(obj: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    fields = {_ARGS.get(k, k): v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    module = _MODULES.get(obj["apiVersion"])
    if module is None:
        return k8s.apiextensions.CustomResource(
            resource_name(obj),
            api_version=obj["apiVersion"],
            kind=obj["kind"],
            metadata=fields.pop("metadata"),
            spec=fields.pop("spec"),
            opts=opts,
        )
    return getattr(module, obj["kind"])(resource_name(obj), opts=opts, **fields)


@dataclass(frozen=True)
class KedaArgs:
    after: list[pulumi.Resource]
    """What must exist first (the cluster and its nodes' grants)."""
    gate_namespace: str
    """Where the gates run: the only pods the interceptor's proxy admits."""
    adapter_registers_external: bool = False
    """The Custom Metrics Stackdriver Adapter is installed too and holds the external metrics
    APIService (pointing at KEDA's metrics server): KEDA's own is not registered."""
    held_seconds: int = 0
    """The longest a sleeping model's request may take in the interceptor before its answer
    streams (keda_drain.held_seconds): the interceptor drains that long when it stops; 0 keeps
    upstream's."""


class Keda(pulumi.ComponentResource):
    """KEDA 2.20.2 and the HTTP add-on 0.15.0 in the `keda` namespace."""

    ready: list[pulumi.Resource]
    """What an HTTPScaledObject waits for: the add-on's CRDs and its operator, interceptor and
    scaler Deployments (which wait for KEDA's)."""

    def __init__(self, name: str, args: KedaArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gke-gpu:index:Keda", name, None, opts)
        self._args = args
        found = [*objects(CORE), *objects(HTTP_ADD_ON)]
        core = self._install(objects(CORE), list(args.after))
        self.ready = self._install(objects(HTTP_ADD_ON), core)
        doors = [
            k8s.networking.v1.NetworkPolicy(
                f"{name}-interceptor-ingress",
                metadata=manifest({"name": "interceptor-from-gates", "namespace": NAMESPACE}),
                spec=manifest(keda_fence.interceptor_ingress(found, args.gate_namespace)),
                opts=pulumi.ResourceOptions(parent=self, depends_on=core),
            ),
            *self._doors(name, found, core),
        ]
        # Last in, first out: the namespace never denies what its doors have not admitted yet.
        k8s.networking.v1.NetworkPolicy(
            f"{name}-default-deny-ingress",
            metadata=manifest({"name": "default-deny-ingress", "namespace": NAMESPACE}),
            spec=manifest(keda_fence.DEFAULT_DENY_INGRESS),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*core, *doors]),
        )
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-interceptor-pdb",
            metadata=manifest({"name": "keda-add-ons-http-interceptor", "namespace": NAMESPACE}),
            spec=manifest(
                {"minAvailable": 1, "selector": {"matchLabels": dict(INTERCEPTOR_LABELS)}}
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=core),
        )
        self.register_outputs({})

    def _doors(
        self, name: str, found: list[dict[str, Any]], core: list[pulumi.Resource]
    ) -> list[pulumi.Resource]:
        """The other ways into `keda` (keda_fence.DOORS): the API server to the webhooks and the
        metrics server, the metrics server to the operator, the operator to the scaler."""
        return [
            k8s.networking.v1.NetworkPolicy(
                f"{name}-{door.name}",
                metadata=manifest({"name": door.name, "namespace": NAMESPACE}),
                spec=manifest(keda_fence.door_spec(found, door)),
                opts=pulumi.ResourceOptions(parent=self, depends_on=core),
            )
            for door in keda_fence.DOORS
        ]

    def _install(
        self, found: list[dict[str, Any]], after: list[pulumi.Resource]
    ) -> list[pulumi.Resource]:
        """In stages, each waiting for the one before: the namespace and CRDs; the RBAC, service
        accounts, Services and registrations; the Deployments; the custom resources. `pulumi
        destroy` runs them in reverse, so the operators still hold their permissions while they
        remove their finalizers (the add-on's from each HTTPScaledObject, KEDA's from each
        ScaledObject); deleted together, the finalizers stay and the delete hangs. Returns the
        CRDs and the Deployments (Pulumi waits until a Deployment's pods are ready)."""
        stages: list[list[pulumi.Resource]] = []
        ready: list[pulumi.Resource] = []
        for stage in range(4):
            waits = [*after, *(stages[-1] if stages else [])]
            registered = []
            for obj in found:
                if _stage(obj) != stage or self._registered_elsewhere(obj):
                    continue
                options = pulumi.ResourceOptions(
                    parent=self, depends_on=waits, aliases=self._alias_urns(obj)
                )
                ours = drained(scoped(obj, self._args.gate_namespace), self._args.held_seconds)
                resource = register(ours, options)
                registered.append(resource)
                if obj["kind"] in ("CustomResourceDefinition", "Deployment"):
                    ready.append(resource)
            stages.append([*(stages[-1] if stages else []), *registered])
        return ready

    def _registered_elsewhere(self, obj: dict[str, Any]) -> bool:
        """The external metrics registration, when the Custom Metrics Stackdriver Adapter holds
        it for KEDA (components/platform/metrics_adapter.py, EXTERNAL_METRICS)."""
        return obj["kind"] == "APIService" and self._args.adapter_registers_external

    def _alias_urns(self, obj: dict[str, Any]) -> list[pulumi.Input[str]] | None:
        """The external metrics registration moves here from the adapter when the last HPA goes:
        one object, so the alias keeps Pulumi from creating it (AlreadyExists) before deleting
        the adapter's."""
        if obj["kind"] != "APIService":
            return None
        return [urn(self, f"{ADAPTER_TYPE}${API_SERVICE_TYPE}", ADAPTER_EXTERNAL_NAME)]


def urn(beside: pulumi.Resource, types: str, name: str) -> pulumi.Output[str]:
    """The URN of a resource under the stack's root (pulumi's resource.NewURN), from that of
    `beside`, a root-level resource: its stack and project, read from no stack setting."""
    return beside.urn.apply(lambda own: f"{'::'.join(own.split('::')[:2])}::{types}::{name}")


# Where each component registers the external metrics APIService (the same object).
API_SERVICE_TYPE = "kubernetes:apiregistration.k8s.io/v1:APIService"
EXTERNAL_METRICS = "v1beta1.external.metrics.k8s.io"
ADAPTER_TYPE = "gke-gpu:index:CustomMetricsAdapter"
ADAPTER_EXTERNAL_NAME = "metrics-adapter-v1beta1-external"
KEDA_TYPE = "gke-gpu:index:Keda"
KEDA_EXTERNAL_NAME = f"apiservice-{EXTERNAL_METRICS}"


def external_metrics_spec() -> dict[str, Any]:
    """KEDA's own APIService spec for external metrics (its operator injects the caBundle)."""
    (found,) = [o for o in objects(CORE) if o["kind"] == "APIService"]
    return found["spec"]


def _stage(obj: dict[str, Any]) -> int:
    kind = obj["kind"]
    if kind in ("Namespace", "CustomResourceDefinition"):
        return 0
    if kind == "Deployment":
        return 2
    if "." in obj["apiVersion"].split("/")[0] and not obj["apiVersion"].endswith(".k8s.io/v1"):
        return 3  # a custom resource (the interceptor's ScaledObject)
    return 1
