"""ScaleToZero: a workload that sleeps when idle and wakes on the first request.

One HTTPScaledObject (KEDA's HTTP add-on, installed by components/platform/keda.py): the gate
forwards the model API to the add-on's interceptor with the Host below, the interceptor counts
requests in flight for KEDA, and holds one that finds no ready replica (up to the wake timeout)
while KEDA scales the Deployment from zero. After `idleSeconds` without a request KEDA scales it
back to zero, and with it the GPU node (the cluster autoscaler or Autopilot removes the empty
node). Field names and shapes: the CRD vendored in components/platform/vendor/keda/ (checked by
the offline plan against tools/crds/http.keda.sh_v1alpha1_HTTPScaledObject.json).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..config.model import WorkloadConfig
from ..config.sleep import sleeps
from ..facts.labels import workload_labels
from ..manifest import manifest
from ..platform import keda_drain

API_VERSION = "http.keda.sh/v1alpha1"
KIND = "HTTPScaledObject"
# After the interceptor gives up on a held request (504), the gate still waits this long for its
# answer, so the client sees the interceptor's 504 rather than the gate's own.
GATE_MARGIN_SECONDS = 30


def host(workload: str, namespace: str) -> str:
    """The Host the gate sends and the interceptor routes by: the model Service's cluster name."""
    return f"{workload}-model.{namespace}.svc.cluster.local"


def http_scaled_object_spec(
    w: WorkloadConfig, namespace: str, service: str, generation_seconds: int
) -> dict[str, Any]:
    scale = w.spec.autoscale
    assert scale is not None and sleeps(w) and w.spec.port is not None
    return {
        "hosts": [host(w.spec.name, namespace)],
        "scaleTargetRef": {
            "apiVersion": "apps/v1",
            "kind": w.spec.kind,
            "name": w.spec.name,
            "service": service,
            "port": w.spec.port,
        },
        "replicas": {"min": 0, "max": scale.max_replicas},
        "scaledownPeriod": scale.idle_seconds,
        # Requests in flight, a gauge that counts the request the interceptor holds: 0.15.0's
        # requestRate rounds a lone request after a long idle to 0 and never wakes the model
        # (kedacore/http-add-on#1692, fixed by #1708 after 0.15.0; docs/scaling.md).
        "scalingMetric": {"concurrency": {"targetValue": scale.target}},
        "timeouts": {
            "conditionWait": f"{scale.wake_timeout_seconds}s",
            # A non-streamed completion sends its headers only when it is done: as long as the
            # gate lets a server be silent (the add-on's default, 300 s, cuts long ones).
            "responseHeader": f"{generation_seconds}s",
        },
    }


def gate_timeout_seconds(w: WorkloadConfig, generation_seconds: int) -> int:
    """The gate's `timeout server`: the longest the interceptor can be silent on one request,
    holding it (the wake timeout) and then waiting for the replica's headers, plus a margin."""
    scale = w.spec.autoscale
    assert scale is not None
    return (
        keda_drain.held_seconds(scale.wake_timeout_seconds, generation_seconds)
        + GATE_MARGIN_SECONDS
    )


@dataclass(frozen=True)
class ScaleToZeroArgs:
    namespace: str
    workload: WorkloadConfig
    service: pulumi.Input[str]
    """The model's ClusterIP Service the interceptor forwards to (ApiGate's)."""
    generation_seconds: int
    """The longest silence the gate allows a model server (haproxy.GateSettings)."""
    after: list[pulumi.Resource]
    """KEDA's HTTP add-on (Keda.ready): its CRD and operators, and the workload's GPU capacity.
    Not the Deployment: the Deployment depends on this scaler, so `pulumi destroy` deletes it
    first (components/service/gpu_service.py)."""


class ScaleToZero(pulumi.ComponentResource):
    """The HTTPScaledObject that scales one workload between zero and maxReplicas."""

    def __init__(
        self, name: str, args: ScaleToZeroArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:ScaleToZero", name, None, opts)
        w = args.workload
        spec = pulumi.Output.from_input(args.service).apply(
            lambda service: http_scaled_object_spec(
                w, args.namespace, service, args.generation_seconds
            )
        )
        k8s.apiextensions.CustomResource(
            f"{name}-httpscaledobject",
            api_version=API_VERSION,
            kind=KIND,
            metadata=manifest(
                {
                    "name": w.spec.name,
                    "namespace": args.namespace,
                    "labels": workload_labels(w.spec.name),
                }
            ),
            spec=spec,
            opts=pulumi.ResourceOptions(parent=self, depends_on=args.after),
        )
        self.register_outputs({})
