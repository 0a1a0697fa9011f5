"""GpuService's Args and their check: what a Python, TypeScript or YAML consumer hands the
component (TypedDicts the SDK's analyzer reads: issue 32), and the one function that decides the
workload from them with the config layer's rules, reporting every problem at once at its property
path before anything is registered (components/service/gpu_service.py uses both)."""

import dataclasses
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ..config import ConfigError, defaults, formats
from ..config.one_workload import Resolved, resolve, to_raw
from ..config.problems import Problem
from ..config.rules.names import namespace_problems
from ..config.schema import ClusterSpec
from ..config.workload_args import ServiceCluster, ServiceNodePool, Workload


class GpuServiceCa(TypedDict):
    """The CA that signs the certificate of a workload served over TLS (`expose.tls`)."""

    cert_pem: pulumi.Input[str]
    """Its certificate (public: clients trust it)."""
    private_key_pem: pulumi.Input[str]
    """Its private key (a secret)."""


class GpuServiceWaits(TypedDict):
    """What the service's objects wait for: outputs of resources of any package (their `urn`,
    or another output of them; a component's stands for every resource in it). A component's
    own `dependsOn` does not reach its children, so each child is handed the ones it needs."""

    namespace: NotRequired[list[pulumi.Input[str]]]
    """The namespace (e.g. its Namespace's `metadata.name`): every object placed in it."""
    gpu_capacity: NotRequired[list[pulumi.Input[str]]]
    """The GPU capacity pods need: node pools, driver installers, the device plugin."""
    cluster: NotRequired[list[pulumi.Input[str]]]
    """The cluster: the model bucket's access is granted to its workload identity pool."""
    keda: NotRequired[list[pulumi.Input[str]]]
    """KEDA and its HTTP add-on, ready (a workload with `autoscale.minReplicas: 0`)."""
    metrics_adapter: NotRequired[list[pulumi.Input[str]]]
    """The custom metrics adapter the HorizontalPodAutoscaler reads (`autoscale`, GKE)."""
    kueue: NotRequired[list[pulumi.Input[str]]]
    """Kueue and the stack's queue objects, ready (a Job with `queue`)."""
    lws: NotRequired[list[pulumi.Input[str]]]
    """The LeaderWorkerSet controller, its CRD and webhooks, ready (`hosts` > 1)."""


class GpuServiceArgs(TypedDict):
    """One GPU workload and everything that makes it a service, on a cluster built elsewhere."""

    workload: Workload
    """The workload, as a stack file's `gke-gpu:workloads` entry writes it."""
    cluster: ServiceCluster
    """The cluster's keys its decisions read, as the stack file's `gke-gpu:cluster` writes them
    (`name` and `location` as the cluster has them)."""
    kubernetes: NotRequired[k8s.Provider]
    """The Kubernetes provider of the cluster every Kubernetes object is created through (or
    `kubeconfig`)."""
    kubeconfig: NotRequired[pulumi.Input[str]]
    """The cluster's kubeconfig (a secret; e.g. GkeCluster's `kubeconfig`), when no
    `kubernetes` provider is given: the service makes its own provider on it."""
    node_pools: NotRequired[list[ServiceNodePool]]
    """Standard: the cluster's GPU node pools, as `gke-gpu:nodePools` entries, each with the
    `machineType` and `driver` it has; the workload lands on the smallest that fits."""
    project: NotRequired[str]
    """The Google Cloud project (GKE: required)."""
    region: NotRequired[str]
    """The region of the cluster (GKE: required)."""
    namespace: NotRequired[str]
    """The Kubernetes namespace the workload lives in. Default: `gke-gpu`."""
    secrets: NotRequired[dict[str, pulumi.Input[str]]]
    """The values `workload.secretEnv` names, by name (secrets)."""
    env_secrets: NotRequired[list[str]]
    """Keys of `workload.env` whose values are secrets: kept in the workload's Secret."""
    secret_args: NotRequired[bool]
    """`workload.args` may hold a secret: passed through the Secret (every env value too)."""
    ca: NotRequired[GpuServiceCa]
    """Signs the certificate of a workload exposed with TLS (required then)."""
    monitored: NotRequired[bool]
    """GKE with a dashboard or alerts: Managed Service for Prometheus scrapes the gate."""
    waits: NotRequired[GpuServiceWaits]
    """What its objects wait for."""


def keep_secret(path: str, inputs: dict[str, Any]) -> bool:
    """Whether a secret another language's program sent at `path` (schema names) stays secret,
    and how (`inputs` updated): an env value goes into the workload's Secret (`envSecrets`), a
    secret in the args sends the args through it (`secretArgs`). The package's provider asks
    (components/serve/provider.py); a secret anywhere else would be written in clear."""
    parts = path.split(".")
    if parts[:2] == ["workload", "env"] and len(parts) == 3:
        inputs["envSecrets"] = sorted({*inputs.get("envSecrets", []), parts[2]})
        return True
    if path.startswith("workload.args"):
        inputs["secretArgs"] = True
        return True
    return False


def decide(args: GpuServiceArgs, where: str) -> Resolved:
    """The workload decided from the Args by the config layer's rules; every problem at once."""
    missing = [
        Problem(key, f"is required {why}. Set it.")
        for key, why in _required(args)
        if key not in args
    ]
    try:
        resolved = resolve(
            args.get("workload", {}),
            args.get("cluster", {}),
            args.get("node_pools", []),
            region=args.get("region", ""),
            project=args.get("project", ""),
            secret_env=args.get("env_secrets", ()),
            secret_args=args.get("secret_args", False),
        )
    except ConfigError as error:
        raise ConfigError([*missing, *error.problems], where) from None
    problems = [
        *missing,
        *_problems(args, resolved),
        *_kubernetes_problems(args),
        *_place_problems(args),
    ]
    if problems:
        raise ConfigError(problems, where)
    return resolved


def _required(args: GpuServiceArgs) -> list[tuple[str, str]]:
    mode = _mode(args)
    gke = [] if mode == "existing" else [("project", "on GKE"), ("region", "on GKE")]
    return [("workload", "always"), ("cluster", "always"), *gke]


def _mode(args: GpuServiceArgs) -> str:
    mode = args.get("cluster", {}).get("mode")
    return to_raw(mode, None) if mode is not None else ClusterSpec.model_fields["mode"].default


def _place_problems(args: GpuServiceArgs) -> list[Problem]:
    """The namespace, region and project by the stack keys' own rules (a name Kubernetes or
    Google Cloud would refuse only at `pulumi up`)."""
    found = [
        dataclasses.replace(p, path="namespace")
        for p in namespace_problems(args.get("namespace", defaults.DEFAULT_NAMESPACE))
    ]
    shapes = (
        ("region", formats.REGION, "a Google Cloud region like `us-central1`"),
        ("project", formats.PROJECT_ID, "a project ID like `acme-ml-dev`"),
    )
    for key, pattern, shape in shapes:
        value = args.get(key)
        if isinstance(value, str) and value and not formats.matches(pattern, value):
            found.append(Problem(key, f"{formats.show(value)} is not {shape}: set it so."))
    return found


def _kubernetes_problems(args: GpuServiceArgs) -> list[Problem]:
    """Exactly one way to reach the cluster: a provider, or a kubeconfig."""
    given = [key for key in ("kubernetes", "kubeconfig") if key in args]
    if len(given) == 1:
        return []
    fix = "set one" if not given else "keep one"
    return [Problem("kubernetes", f"a Kubernetes provider, or `kubeconfig`: {fix}.")]


def _problems(args: GpuServiceArgs, resolved: Resolved) -> list[Problem]:
    """What only the Args can get wrong: a secret not handed over, a TLS workload without a CA,
    a GKE cluster without its name."""
    w, cluster = resolved.workload, resolved.cluster
    secrets = args.get("secrets", {})
    found = [
        Problem(f"secrets.{key}", f"workload.secretEnv.{env} names it: add it to secrets.")
        for env, key in sorted(w.spec.secret_env.items())
        if key not in secrets
    ]
    if w.expose is not None and w.expose.spec.tls and "ca" not in args:
        found.append(Problem("ca", "workload.expose.tls needs a CA to sign its certificate."))
    reserves = w.expose is not None and w.expose.static_ip and cluster.mode != "existing"
    if reserves and cluster.name is None:
        found.append(Problem("cluster.name", "names the reserved address: set it."))
    return found
