"""The package's schema as consumers' SDKs read it: the analyzer's schema of the hosted classes,
with what the analyzer cannot say (issue 41).

- **Inputs that take outputs.** The analyzer marks `plain` every property whose Python type is
  not `pulumi.Input`. A remote component's Construct receives its inputs resolved (the
  consumer's SDK awaits each before it sends it, and the engine forwards known values), so the
  provider host settles them (components/serve/settle.py) before the component decides
  anything: every such property is served as an Input, except the few in `PLAIN`, which choose
  the shape of what is registered and are kept plain, their reason in their description. A
  value that is still unknown during a preview and that the component decides from is refused
  naming its property path (settle.py); a value that only flows into a child's inputs
  (`pulumi.Input` in the Python Args) may be unknown.
- **Secrets.** `secret: true` on every secret input and output (`SECRET_INPUTS`,
  `SECRET_OUTPUTS`): a generated SDK wraps a secret input in `secret()` before it leaves the
  consumer's program and marks the outputs `additionalSecretOutputs`.
- **Metadata and language settings**: description, keywords, repository, publisher, and the
  package names each language's SDK gets (`LANGUAGE`), with version ranges for the Pulumi
  packages the SDKs depend on.
"""

import copy
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

PLAIN: dict[str, str] = {
    "Workload.kind": "chooses the Kubernetes kind registered (a Deployment, StatefulSet, Job, "
    "CronJob, or LeaderWorkerSet)",
    "Workload.hosts": "more than 1 registers a LeaderWorkerSet group in place of a single pod",
    "WorkloadExpose.type": "chooses the Service and front door registered (ClusterIP, "
    "internal or external load balancer, NodePort)",
    "ClusterSettings.mode": "chooses the cluster registered (GKE Standard or Autopilot)",
    "ServiceCluster.mode": "chooses what is registered for the cluster's kind (GKE Standard, "
    "Autopilot, or an existing cluster)",
    "DevicePluginSettings.type": "chooses a DaemonSet or a Helm release",
}
"""`<Type or Component>.<property>` kept plain, with why: each chooses which resources exist,
so it must be known when the component is constructed, during a preview too."""

SECRET_INPUTS = frozenset(
    {
        "ExistingCluster.kubeconfig",
        "GpuService.kubeconfig",
        "GpuService.secrets",
        "GpuServiceCa.privateKeyPem",
    }
)
SECRET_OUTPUTS = frozenset(
    {
        "GkeCluster.kubeconfig",
        "ExistingCluster.kubeconfig",
        "GpuService.apiKey",
        "GpuService.consumerKeys",
        "ApiKey.value",
    }
)

KEYWORDS = [
    "pulumi",
    "gke",
    "kubernetes",
    "gpu",
    "vllm",
    "category/infrastructure",
    "kind/component",
]

# Ranges, not the exact versions the analyzer writes: a consumer's own lock decides within them.
LANGUAGE: dict[str, dict[str, Any]] = {
    "nodejs": {
        "packageName": "@gke-gpu/gke-gpu",
        "packageDescription": "A GPU service on Google Kubernetes Engine, as Pulumi components.",
        "dependencies": {
            "@pulumi/pulumi": "^3.142.0",
            "@pulumi/kubernetes": "^4.34.2",
            "@pulumi/gcp": "^10.2.0",
        },
    },
    "python": {
        "packageName": "pulumi_gke_gpu",
        "requires": {
            "pulumi": ">=3.142.0,<4.0.0",
            "pulumi-kubernetes": ">=4.34.2,<5.0.0",
            "pulumi-gcp": ">=10.2.0,<11.0.0",
        },
        "pyproject": {"enabled": True},
    },
    "go": {
        "importBasePath": "github.com/gke-gpu/gke-gpu/sdk/go/gkegpu",
        "rootPackageName": "gkegpu",
        "generateResourceContainerTypes": True,
    },
    "csharp": {
        "rootNamespace": "GkeGpu",
        "packageReferences": {
            "Pulumi": "[3.71.0,4)",
            "Pulumi.Kubernetes": "[4.34.2,5)",
            "Pulumi.Gcp": "[10.2.0,11)",
        },
    },
    "java": {"basePackage": "io.github.gkegpu"},
}


def project_metadata() -> dict[str, Any]:
    """pyproject.toml's [project]: the one place the version, description, license and
    repository are written (the wheel, the schema and a release tag agree)."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]


def finish(schema: dict[str, Any]) -> dict[str, Any]:
    """The analyzer's schema with inputs that take outputs, secrets marked, and metadata."""
    out = copy.deepcopy(schema)
    project = project_metadata()
    urls = project.get("urls", {})
    out.update(
        description=project["description"],
        keywords=KEYWORDS,
        homepage=urls.get("Homepage", ""),
        repository=urls.get("Repository", ""),
        publisher="gke-gpu",
        license=project.get("license", ""),
    )
    for lang, settings in LANGUAGE.items():
        out.setdefault("language", {}).setdefault(lang, {}).update(copy.deepcopy(settings))
    for token, resource in out.get("resources", {}).items():
        owner = token.rsplit(":", 1)[-1]
        _inputs(owner, resource.get("inputProperties", {}))
        _mark(owner, resource.get("properties", {}), SECRET_OUTPUTS)
    for token, typ in out.get("types", {}).items():
        if typ.get("type") == "object":
            _inputs(token.rsplit(":", 1)[-1], typ.get("properties", {}))
    return out


def _inputs(owner: str, props: dict[str, Any]) -> None:
    for name, prop in props.items():
        reason = PLAIN.get(f"{owner}.{name}")
        if reason is None:
            _take_outputs(prop)
        else:
            prop["plain"] = True
            prop["description"] = f"{prop.get('description', '').rstrip()}\n\nPlain: {reason}."
    _mark(owner, props, SECRET_INPUTS)


def _take_outputs(prop: dict[str, Any]) -> None:
    """An Input at every level: the property, and a list's items or a map's values."""
    prop.pop("plain", None)
    for inner in ("items", "additionalProperties"):
        if isinstance(prop.get(inner), dict):
            _take_outputs(prop[inner])


def _mark(owner: str, props: dict[str, Any], secret: frozenset[str]) -> None:
    for name, prop in props.items():
        if f"{owner}.{name}" in secret:
            prop["secret"] = True


def plain_share(schema: dict[str, Any]) -> tuple[int, int]:
    """(plain properties, all properties) among the inputs of the resources and the object
    types: the share issue 41 measures (pulumi-eks 11%, awsx 13%)."""
    props = [
        *(
            p
            for r in schema.get("resources", {}).values()
            for p in r.get("inputProperties", {}).values()
        ),
        *(
            p
            for t in schema.get("types", {}).values()
            if t.get("type") == "object"
            for p in t.get("properties", {}).values()
        ),
    ]
    return sum(1 for p in props if p.get("plain")), len(props)
