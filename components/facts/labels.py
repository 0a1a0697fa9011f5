"""Every label, annotation and taint key the components write or select on, each with its source.

One fact, one name: a component imports its keys from here and spells none itself. Kubernetes
labels (on objects and nodes) and GCE resource labels (on the cluster and the pools' VMs, whose
keys allow no "/") are different things; each of gke-gpu's own keys says which it is.

Kept elsewhere on purpose:
- the labels of the manifests copied from Google and NVIDIA (components/platform/driver.py,
  components/platform/device_plugin.py, components/platform/metrics_adapter.py: `k8s-app`, `name`,
  `run`,
  `kubernetes.io/cluster-service`), which stay as their manifests spell them;
- policy/rules/props.py, the policy pack's copies of the keys its rules read (the pack cannot
  import components/); tests/test_labels.py keeps them equal to these;
- components/config/rules/workloads.py PROGRAM_SELECTORS and components/config/rules/cluster.py
  NVIDIA_GPU_NODE_LABELS, the config layer's own lists (tests/test_labels.py checks the first
  against the node labels below).
"""

from __future__ import annotations

# --- GKE's node labels and taints ---------------------------------------------------------------
# GKE sets these on the nodes it creates; a pod selects capacity with them (GKE docs,
# cloud.google.com/kubernetes-engine/docs/how-to/gpus, .../how-to/autopilot-gpus,
# .../how-to/timesharing-gpus, .../how-to/gpus-multi, .../how-to/spot-vms).
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
"""The node's GPU type (nvidia-l4, ...): how-to/gpus, how-to/autopilot-gpus."""
SPOT_LABEL = "cloud.google.com/gke-spot"
"""Spot nodes ("true"), and the key of the taint Spot nodes may carry (how-to/spot-vms)."""
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
"""The ComputeClass a pod selects (concepts/about-custom-compute-classes; GoogleCloudPlatform/
kubernetes-engine-samples autoscaling/custom-compute-classes/reservations/deployment-gpu.yaml at
2b503651)."""
DRIVER_VERSION_LABEL = "cloud.google.com/gke-gpu-driver-version"
"""Autopilot: the driver version a pod asks for (components/facts/pins.py quotes the source);
Standard:
"disabled" on pools without a GKE-installed driver (components/platform/driver.py)."""
NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
"""The node pool's GKE name, on each of its nodes."""
GPU_SHARING_STRATEGY_LABEL = "cloud.google.com/gke-gpu-sharing-strategy"
"""time-sharing or mps (how-to/timesharing-gpus, how-to/nvidia-mps-gpus)."""
MAX_SHARED_CLIENTS_LABEL = "cloud.google.com/gke-max-shared-clients-per-gpu"
"""Containers that share one GPU (how-to/timesharing-gpus)."""
GPU_PARTITION_SIZE_LABEL = "cloud.google.com/gke-gpu-partition-size"
"""The MIG partition (1g.5gb, ...) of a multi-instance GPU pool (how-to/gpus-multi)."""
CONFIDENTIAL_NODES_LABEL = "cloud.google.com/gke-confidential-nodes-instance-type"
"""Confidential GPU nodes, which Google's preloaded COS driver installer keeps off
(GoogleCloudPlatform/container-engine-accelerators nvidia-driver-installer/cos/
daemonset-preloaded.yaml, f2cf4197 "cgpu-manifest")."""
TPU_TAINT = "cloud.google.com/gke-tpu"
"""The taint of GKE's TPU nodes, which the Custom Metrics Stackdriver Adapter tolerates
(GoogleCloudPlatform/k8s-stackdriver custom-metrics-stackdriver-adapter/deploy/production/
adapter_new_resource_model.yaml at af49d863)."""
GPU_RESOURCE = "nvidia.com/gpu"
"""NVIDIA's extended resource (what a GPU container requests; NVIDIA/k8s-device-plugin), and the
key of the taint GKE puts on GPU nodes, nvidia.com/gpu=present:NoSchedule (how-to/gpus)."""

# --- Kubernetes' well-known labels ----------------------------------------------------------------
# kubernetes.io/docs/reference/labels-annotations-taints.
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""Set on every namespace; NetworkPolicy's "Targeting a Namespace by its name" selects on it."""
# Recommended labels (kubernetes.io/docs/concepts/overview/working-with-objects/common-labels).
APP_NAME_LABEL = "app.kubernetes.io/name"
APP_INSTANCE_LABEL = "app.kubernetes.io/instance"
PART_OF_LABEL = "app.kubernetes.io/part-of"
APP_COMPONENT_LABEL = "app.kubernetes.io/component"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
# Pod Security Admission's namespace labels (kubernetes.io/docs/concepts/security/
# pod-security-admission).
POD_SECURITY_ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
POD_SECURITY_WARN_LABEL = "pod-security.kubernetes.io/warn"
POD_SECURITY_AUDIT_LABEL = "pod-security.kubernetes.io/audit"

# --- annotations others act on --------------------------------------------------------------------
INTERNAL_LB_ANNOTATION = "networking.gke.io/load-balancer-type"
"""GKE's internal passthrough Network Load Balancer, value "Internal" ("LoadBalancer Service
parameters", cloud.google.com/kubernetes-engine/docs/concepts/service-load-balancer-parameters)."""
# GKE's Cloud Storage FUSE sidecar injector: GoogleCloudPlatform/gcs-fuse-csi-driver at 5fcdc04a,
# pkg/webhook/mutatingwebhook.go lines 49-56.
FUSE_VOLUMES_ANNOTATION = "gke-gcsfuse/volumes"
FUSE_CPU_LIMIT_ANNOTATION = "gke-gcsfuse/cpu-limit"
FUSE_MEMORY_LIMIT_ANNOTATION = "gke-gcsfuse/memory-limit"
SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait"
"""pulumi-kubernetes skips waiting for the object's readiness (provider/pkg/await/await.go
newLegacyReadyCondition and metadata/overrides.go SkipAwaitLogic, pulumi/pulumi-kubernetes at
94977969)."""
PATCH_FORCE_ANNOTATION = "pulumi.com/patchForce"
"""pulumi-kubernetes applies the object with server-side apply's force, taking over fields another
field manager owns instead of failing on the conflict (provider/pkg/await/await.go patchForce,
lines 1030-1034, used by ssaUpdate 662-667; the name in provider/pkg/metadata/annotations.go
line 38; pulumi/pulumi-kubernetes at 94977969)."""

# --- gke-gpu's own keys ------------------------------------------------------------------------
PART_OF = "gke-gpu"
"""The app.kubernetes.io/part-of value of everything the program deploys."""
PRODUCTION_LABEL = "gke-gpu/production"
"""Kubernetes label on a production stack's exposed Services (cluster.production): the policy
pack's production rules read it, never the stack's name."""
PRODUCTION_CLUSTER_LABEL = "gke-gpu-production"
"""GCE resource label on a production stack's GKE cluster (cluster.production), which the policy
pack's cluster rules read. Not PRODUCTION_LABEL: GCE label keys allow no "/"."""
POOL_LABEL = "gke-gpu/pool"
"""Kubernetes node label: the config name of a GPU node's pool (the driver installers select it)."""
POOL_RESOURCE_LABEL = "gke-gpu-pool"
"""GCE resource label: the config name of the pool a VM belongs to (billing)."""
MIN_NODES_REASON_LABEL = "gke-gpu-min-nodes-reason"
"""GCE resource label: why a pool keeps nodes when idle (nodePools[].minNodesReason), which the
policy pack's scale-to-zero rule reads."""
ROLE_LABEL = "gke-gpu/role"
"""Kubernetes node label of the system pool's nodes ("system")."""
WORKLOAD_LABEL = "gke-gpu/workload"
"""The workload a ComputeClass serves."""
FLAVOUR_LABEL = "gke-gpu/flavour"
"""Which driver installer DaemonSet (cos or ubuntu) a pod belongs to."""
GATE_NAME_LABEL = "gke-gpu-gate"
"""The app.kubernetes.io/name of every gate pod (a reserved workload name), which the policy pack
reads to find the Services that serve a gate."""
GATE_CONFIG_HASH_ANNOTATION = "gke-gpu/gate-config-sha256"
"""Pod annotation: the gate's config and certificate, so a change rolls the gates."""
DEVICE_PLUGIN_CONFIG_HASH_ANNOTATION = "gke-gpu/device-plugin-config-sha256"
"""Pod annotation: the device plugin's time-slicing config, so a change rolls the plugin."""


def selector_labels(name: str) -> dict[str, str]:
    """The labels that tie a workload's pods to its Service: the one source for both."""
    return {APP_NAME_LABEL: name, PART_OF_LABEL: PART_OF}


def workload_labels(name: str) -> dict[str, str]:
    """The labels of a workload's objects: its selector labels, managed by Pulumi."""
    return {**selector_labels(name), MANAGED_BY_LABEL: "pulumi"}


# Issue 35 (components/expose/gateway.py): the Gateway annotation that attaches a Certificate
# Manager certificate map (GKE, "Secure a Gateway", cloud.google.com/kubernetes-engine/docs/
# how-to/secure-gateway), and the API version of GKE's Gateway policies (GCPBackendPolicy,
# HealthCheckPolicy: GoogleCloudPlatform/gke-gateway-api@fc40d606 config/crd).
CERTMAP_ANNOTATION = "networking.gke.io/certmap"
GKE_POLICY_API = "networking.gke.io/v1"
# Issue 36 (components/platform/kueue.py): the taint GKE puts on queued-provisioning nodes
# (cluster-toolkit modules/compute/gke-node-pool/main.tf lines 68-76), and the name of the stack's
# Kueue flavor, ClusterQueue and LocalQueue.
QUEUED_TAINT = "cloud.google.com/gke-queued"
QUEUE_NAME = "gke-gpu-queued"
