"""Lws: the LeaderWorkerSet controller and its CRD, for workloads whose replica spans nodes.

A workload with `hosts` > 1 runs as a LeaderWorkerSet (components/kinds/leaderworkerset.py). The
controller comes from upstream's release manifest, vendored unedited in components/platform/
vendor/lws/ (its README names the tag, commit and how the file was made): the namespace
`lws-system`, the CRDs, RBAC, the webhooks' Service and certificate Secret (the controller writes
its own certificate into it and the caBundles: config/internalcert), and the controller
Deployment (2 replicas, 1 CPU and 1 GiB each). What the program changes as it registers them:
the controller's image pinned by digest (IMAGES below); its access cut to what it calls (no
Secret but its certificate's, no node or pod writes but a pod's deletion, no webhook
configuration but its own two) and its pod given the RuntimeDefault seccomp profile, so that
`lws-system` enforces Pod Security `restricted`; and the namespace fenced: it admits the API
server to the webhooks and Managed Prometheus' collectors to the metrics port, nothing else
(components/platform/lws_fence.py). Installed in stages like KEDA
(components/platform/keda.py): the namespace and CRDs; the RBAC, Services, ConfigMap and Secret;
the Deployment; last the webhook configurations, whose `failurePolicy: Fail` on every pod
labelled `leaderworkerset.sigs.k8s.io/name` would refuse those pods until the controller that
answers them is ready. `pulumi destroy` removes them in reverse.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pulumi

from . import lws_fence
from .fence import door_spec, register_fence
from .keda import POD_SECURITY_LABELS, load, register

VENDOR = Path(__file__).parent / "vendor" / "lws"
MANIFESTS = VENDOR / "lws-v0.8.0.yaml"
NAMESPACE = "lws-system"
VERSION = "v0.8.0"

# The release image's digest, as the Kubernetes image promoter publishes it on registry.k8s.io:
# kubernetes/k8s.io@e10ab5f95c9786e66745737e865fd6f593358eae
# registry.k8s.io/images/k8s-staging-lws/images.yaml, name lws, tags ["v0.8.0", "0.8.0"].
# (Newer LWS tags, v0.9.0 and v0.10.0, exist; no stored promoter file names their digests.)
IMAGES = {
    "registry.k8s.io/lws/lws:v0.8.0": (
        "sha256:00c9d7d7b3422b974c3e5f729c008cf75aeb0539bd1e2f6320ddfcd1281899c7"
    ),
}


def objects() -> list[dict[str, Any]]:
    """The release's objects as the program registers them (the image pinned, the namespace
    labelled, the access cut: lws_fence), and the Role the program adds on the controller's
    certificate Secret."""
    release = load(MANIFESTS)
    found = []
    for obj in release:
        obj = copy.deepcopy(obj)
        if obj["kind"] == "Deployment":
            for container in obj["spec"]["template"]["spec"]["containers"]:
                image = container["image"]
                if image not in IMAGES:
                    raise ValueError(f"vendored LWS image {image} has no pinned digest in IMAGES")
                container["image"] = f"{image}@{IMAGES[image]}"
        if obj["kind"] == "Namespace":
            obj["metadata"].setdefault("labels", {}).update(POD_SECURITY_LABELS)
        found.append(lws_fence.least_privilege(obj, release))
    return [*found, *lws_fence.added(release)]


def stage(obj: dict[str, Any]) -> int:
    kind = obj["kind"]
    if kind in ("Namespace", "CustomResourceDefinition"):
        return 0
    if kind == "Deployment":
        return 2
    if kind.endswith("WebhookConfiguration"):
        return 3
    return 1


def always_on_requests() -> tuple[str, int, str, str]:
    """(Deployment, replicas, cpu, memory) of the controller, read from the vendored file."""
    (deployment,) = [o for o in load(MANIFESTS) if o["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    requests = container["resources"]["requests"]
    name, count = deployment["metadata"]["name"], deployment["spec"]["replicas"]
    return name, count, str(requests["cpu"]), str(requests["memory"])


class Lws(pulumi.ComponentResource):
    """LeaderWorkerSet v0.8.0 in the `lws-system` namespace."""

    ready: list[pulumi.Resource]
    """What a LeaderWorkerSet waits for: its CRD, the controller and its webhooks."""

    def __init__(
        self, name: str, after: list[pulumi.Resource], opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__("gke-gpu:index:Lws", name, None, opts)
        found = objects()
        stages: list[list[pulumi.Resource]] = []
        self.ready = []
        for number in range(4):
            waits = [*after, *(stages[-1] if stages else [])]
            registered = [
                register(obj, pulumi.ResourceOptions(parent=self, depends_on=waits))
                for obj in found
                if stage(obj) == number
            ]
            self.ready += [
                r
                for r, obj in zip(registered, [o for o in found if stage(o) == number], strict=True)
                if obj["kind"] in ("CustomResourceDefinition", "Deployment")
                or obj["kind"].endswith("WebhookConfiguration")
            ]
            stages.append([*(stages[-1] if stages else []), *registered])
        doors = [(door.name, door_spec(found, door)) for door in lws_fence.DOORS]
        register_fence(self, name, NAMESPACE, doors, after=stages[2])
        self.register_outputs({})
