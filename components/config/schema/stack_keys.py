"""The top-level keys of a stack file, for the reference, and the keys a model accepts."""

from __future__ import annotations

from typing import NamedTuple

from .. import formats
from .base import (
    Model,
)
from .cluster import (
    ClusterSpec,
    DevicePluginSpec,
)
from .monitoring import MonitoringSpec
from .pools import (
    NodePoolSpec,
)
from .workloads import (
    WorkloadSpec,
)


def aliases(model: type[Model]) -> list[str]:
    """The camelCase keys a model accepts, as the user writes them."""
    return sorted(field.alias or name for name, field in model.model_fields.items())


# --- documentation only ------------------------------------------------------------------------


class StackKey(NamedTuple):
    """A top-level key of a stack file, for the reference (the loader reads each one itself)."""

    key: str
    type: str
    doc: str  # as a field's docstring: summary, detail, `Default:`
    model: type[Model] | None = None  # the schema of its value, or of each item of a list
    pattern: str | None = None  # the format of a plain string value (formats.*)


STACK_KEYS: tuple[StackKey, ...] = (
    StackKey(
        "gcp:project",
        "string",
        """Google Cloud project of the cluster (not needed with `cluster.mode: existing`).

        Default: required
        """,
        pattern=formats.PROJECT_ID,
    ),
    StackKey(
        "gcp:region",
        "string",
        """Region of the cluster, e.g. `us-central1` (not needed with `cluster.mode: existing`).

        Default: required
        """,
        pattern=formats.REGION,
    ),
    StackKey(
        "gke-gpu:cluster",
        "object",
        """The cluster: GKE Standard or Autopilot, created by the stack, or an existing one.

        Default: `{}`: every key's default (an Autopilot cluster)
        """,
        ClusterSpec,
    ),
    StackKey(
        "gke-gpu:nodePools",
        "list of objects",
        """Standard only: the GPU node pools, each autoscaled from `minNodes` to `maxNodes`.

        A workload with `fallback`s needs no pool: GKE creates its class's pools itself.

        Default: none (a Standard cluster needs one, unless every workload has `fallback`s)
        """,
        NodePoolSpec,
    ),
    StackKey(
        "gke-gpu:workloads",
        "list of objects",
        """The GPU workloads: Deployments, StatefulSets or Jobs, each with its Service and gate.

        Default: one vLLM server on 1 L4 Spot GPU, exposed over HTTPS on port 443 behind its
        gate and a generated API key (below)
        """,
        WorkloadSpec,
    ),
    StackKey(
        "gke-gpu:devicePlugin",
        "string or object",
        """Existing clusters only: what advertises their GPUs to Kubernetes.

        A string is the `type` alone (`static`, `gpu-operator`, `none`). GKE runs its own NVIDIA
        device plugin on GPU nodes, so the key is refused with the other modes.

        Default: `static`
        """,
        DevicePluginSpec,
    ),
    StackKey(
        "gke-gpu:namespace",
        "string",
        """Kubernetes namespace for the workloads.

        `default`, `kube-*` and GKE-managed namespaces are refused.

        Default: `gke-gpu`
        """,
        pattern=formats.K8S_NAME,
    ),
    StackKey(
        "gke-gpu:monitoring",
        "object",
        """The stack's Cloud Monitoring dashboard and alert policies, and who the alerts notify.

        An existing cluster gets the alerts as a Prometheus rules file instead (a ConfigMap for
        your own Prometheus). See [Monitoring](monitoring.md).

        Default: `{}`: a dashboard and the three alerts, notifying no one until
        `notificationChannels` or `emails` are set
        """,
        MonitoringSpec,
    ),
)
