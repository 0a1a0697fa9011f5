"""GpuWorkload: a Deployment, StatefulSet or Job whose pods get GPUs in any cluster mode.

The pod template is components/service/pod.py's, placed by components/service/placement.py; this
module registers
the objects around it: the Secret its env reads, the service account a model cache is read as,
the workload object itself, its egress policy and its disruption budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.config import Mode, WorkloadConfig
from components.facts.labels import (
    PATCH_FORCE_ANNOTATION,
    SKIP_AWAIT_ANNOTATION,
    selector_labels,
    workload_labels,
)
from components.manifest import manifest
from components.platform import egress
from components.service.pod import pod_template, secret_env_names

# A GPU node that scales up from zero, pulls a multi-GB inference image and loads a model
# takes many minutes: Pulumi waits this long for the workload to become ready.
READY_TIMEOUT = "40m"


@dataclass(frozen=True)
class GpuWorkloadArgs:
    namespace: pulumi.Input[str]
    mode: Mode
    workload: WorkloadConfig
    secret_values: dict[str, pulumi.Output[str]] | None = None
    """Env var name -> secret value, for `secretEnv` (read from config by the caller)."""
    after: Sequence[pulumi.Resource] = ()
    """What the workload object waits for: its GPU capacity (GKE NodePools and driver
    installer DaemonSets; the device plugin on an existing cluster). Handed to the Deployment,
    StatefulSet or Job itself: a component's `depends_on` does not reach its children
    (pulumi/pulumi sdk/python/lib/pulumi/resource.py lines 992-1004 at commit 1b594989). A
    component listed here stands for its custom descendants (runtime/rpc.py _add_dependency,
    lines 260-334)."""


def awaited(w: WorkloadConfig) -> bool:
    """Whether `pulumi up` waits for the object: for long-running kinds unless they sleep when
    idle; for a Job only with waitForCompletion (otherwise `up` returns once the Job is created).

    A sleeping model's Deployment is created with one replica (spec.replicas is KEDA's), which
    KEDA scales to zero as soon as its ScaledObject exists (keda v2.20.2 pkg/scaling/executor/
    scale_scaledobjects.go: no LastActiveTime yet); waiting for that replica would hold `up` for
    a GPU no request asked for, and fail it without one."""
    if w.autoscale is not None and w.autoscale.to_zero:
        return False
    return w.kind != "Job" or w.wait_for_completion


def await_metadata(w: WorkloadConfig, metadata: dict[str, Any]) -> dict[str, Any]:
    """The object's metadata, with SKIP_AWAIT_ANNOTATION when `pulumi up` must not wait for it
    (`awaited`): every kind, or a sleeping StatefulSet is awaited for the provider's default 10
    minutes for a replica KEDA has already removed."""
    if awaited(w):
        return metadata
    return {**metadata, "annotations": {SKIP_AWAIT_ANNOTATION: "true"}}


def scaled_metadata(w: WorkloadConfig, metadata: dict[str, Any]) -> dict[str, Any]:
    """A Deployment's or StatefulSet's metadata: `await_metadata`'s, and PATCH_FORCE_ANNOTATION
    whenever the program sets spec.replicas (`replicas`).

    spec.replicas keeps the field manager of whoever set it last: the HorizontalPodAutoscaler's
    kube-controller-manager or KEDA (both write the scale subresource), or a `kubectl scale`. When
    a workload goes from `autoscale` (or sleeping) to a fixed count, the program's server-side
    apply of spec.replicas conflicts with that manager and `pulumi up` fails, since
    pulumi-kubernetes does not force by default (issue 31). The program cannot tell a transition
    from a steady fixed count (it reads the stack file, not the previous state), so it forces
    whenever it owns the count; the force settles conflicts on the fields it sends, all of which
    it declares."""
    metadata = await_metadata(w, metadata)
    if not replicas(w):
        return metadata
    annotations = {**metadata.get("annotations", {}), PATCH_FORCE_ANNOTATION: "true"}
    return {**metadata, "annotations": annotations}


def deployment_strategy(w: WorkloadConfig) -> dict[str, Any]:
    """surge: one extra pod at a time, never below the wanted count (the config layer chose it
    only where the pool has a spare GPU at its maximum). replace: one pod down at a time, so a
    rollout never waits for a GPU the pool cannot add; one replica is simply recreated."""
    if w.rollout == "surge":
        return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    if w.max_replicas <= 1:
        return {"type": "Recreate"}
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}


def replicas(w: WorkloadConfig) -> dict[str, int]:
    """spec.replicas, unless the workload is autoscaled.

    An autoscaled workload leaves spec.replicas to its HorizontalPodAutoscaler: a value here would
    reset the count on every `pulumi up`, or fail it with a server-side apply conflict with
    kube-controller-manager's "scale" subresource (pulumi/pulumi-kubernetes#2491; Kubernetes:
    remove spec.replicas when migrating a Deployment to horizontal autoscaling). Without it the
    object starts at 1 and the HPA raises it to minReplicas.
    """
    return {} if w.autoscale is not None else {"replicas": w.replicas}


def data_claims(w: WorkloadConfig) -> list[dict[str, Any]]:
    """A StatefulSet's volumeClaimTemplates: one data disk per pod (workloads[].storage)."""
    if w.storage is None:
        return []
    claim_spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": w.storage.size}},
    }
    if w.storage.storage_class:
        claim_spec["storageClassName"] = w.storage.storage_class
    return [{"metadata": {"name": "data"}, "spec": claim_spec}]


# What Kubernetes does with the claims of a StatefulSet's volumeClaimTemplates when the StatefulSet
# is deleted or scaled down: persistentVolumeClaimRetentionPolicy, stable (GA) in Kubernetes 1.32
# (kubernetes/website@36968e86:content/en/docs/reference/command-line-tools-reference/feature-gates/
# StatefulSetAutoDeletePVC.md: alpha 1.23, beta and on by default 1.27, stable 1.32;
# https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/#persistentvolumeclaim-retention:
# "The default policy of Retain causes PVCs to not be affected by StatefulSet deletion. The Delete
# policy causes those PVCs to be deleted."). Not a force-new field of pulumi-kubernetes
# (tests/golden.py K8S_FORCE_NEW): setting or changing it updates the StatefulSet in place. A
# scaled-down pod's disk is kept (whenScaled Retain) for the pod that comes back with it.
def claim_retention(w: WorkloadConfig) -> dict[str, dict[str, str]]:
    if w.storage is None:
        return {}
    policy = {"whenDeleted": w.storage.retention, "whenScaled": "Retain"}
    return {"persistentVolumeClaimRetentionPolicy": policy}


def disks_at_destroy(w: WorkloadConfig) -> str | None:
    """The plan's words for what becomes of the claims' disks, from what data_claims and
    claim_retention register."""
    if w.kind != "StatefulSet" or w.storage is None:
        return None
    deleted = (
        "kept and still billed, for a StatefulSet of the same name to mount again"
        if w.storage.retention == "Retain"
        else "deleted with it, data and all"
    )
    return (
        f"one {w.storage.size} disk per pod (claims data-{w.name}-0, -1, ...), kept when scaled "
        f"down; when the StatefulSet is deleted (workload removed or replaced): {deleted} "
        f"(storage.retention: {w.storage.retention}). `pulumi destroy` deletes the namespace and "
        "the claims in it; their StorageClass's reclaimPolicy then decides (GKE's own classes: "
        "Delete, not guaranteed while the cluster itself is being deleted: check Compute Engine "
        "disks after a destroy)"
    )


class GpuWorkload(pulumi.ComponentResource):
    """The team's GPU workload with GPU limits, placement, probes, secrets and a tight sandbox."""

    name: pulumi.Output[str]
    """The workload object's name."""
    secret_name: pulumi.Output[str | None]
    """Its Secret (env values from secrets, the API key), if it has one: the gate reads the key."""
    selector: dict[str, str]
    """Labels its pods carry; a Service selects them."""
    port: int | None
    """The container port that serves traffic."""

    def __init__(
        self, name: str, args: GpuWorkloadArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:GpuWorkload", name, None, opts)
        w = args.workload
        self.selector = selector_labels(w.name)
        self.port = w.port
        metadata = {"name": w.name, "namespace": args.namespace, "labels": workload_labels(w.name)}
        secret_name = self._secret(name, args, metadata)
        self.secret_name = pulumi.Output.from_input(None) if secret_name is None else secret_name
        template = pod_template(args.mode, w, secret_name)
        accounts = self._service_accounts(name, w, metadata)
        waits = pulumi.ResourceOptions(
            parent=self,
            # Pods created before their GPUs exist sit Pending (or fail a Job's first try), and
            # destroy must delete them before the pool goes.
            depends_on=[*args.after, *accounts],
            custom_timeouts=(
                pulumi.CustomTimeouts(create=READY_TIMEOUT, update=READY_TIMEOUT)
                if awaited(w)
                else None
            ),
        )
        resource: k8s.apps.v1.Deployment | k8s.apps.v1.StatefulSet | k8s.batch.v1.Job
        if w.kind == "Deployment":
            resource = self._deployment(name, w, metadata, template, waits)
        elif w.kind == "StatefulSet":
            resource = self._statefulset(name, w, metadata, template, waits)
        else:
            resource = self._job(name, w, metadata, template, waits)
        self._egress(name, w, metadata)
        if w.kind != "Job" and w.max_replicas > 1:
            self._disruption_budget(name, metadata)
        self.name = resource.metadata.name
        self.register_outputs({"name": self.name, "secret_name": self.secret_name})

    def _secret(
        self, name: str, args: GpuWorkloadArgs, metadata: dict[str, Any]
    ) -> pulumi.Output[str] | None:
        """The Secret the container's env reads (`secretEnv`, `secure:` values, the API key)."""
        w = args.workload
        if not secret_env_names(w):
            return None
        values = args.secret_values or {}
        missing = sorted(k for k in secret_env_names(w) if k not in values)
        if missing:
            raise ValueError(f"GpuWorkloadArgs.secret_values lacks {missing}")
        secret = k8s.core.v1.Secret(
            f"{name}-secret",
            metadata=manifest({**metadata, "name": f"{w.name}-env"}),
            type="Opaque",
            string_data={k: pulumi.Output.secret(values[k]) for k in secret_env_names(w)},
            opts=pulumi.ResourceOptions(parent=self),
        )
        return secret.metadata.name

    def _service_accounts(
        self, name: str, w: WorkloadConfig, metadata: dict[str, Any]
    ) -> list[pulumi.Resource]:
        """A model cache is read as the workload's own Kubernetes service account (Workload
        Identity is granted to it by name); its pods are admitted only once the account exists."""
        if w.model_cache is None:
            return []
        account = k8s.core.v1.ServiceAccount(
            f"{name}-serviceaccount",
            metadata=manifest(metadata),
            automount_service_account_token=False,
            opts=pulumi.ResourceOptions(parent=self),
        )
        return [account]

    def _deployment(
        self,
        name: str,
        w: WorkloadConfig,
        metadata: dict[str, Any],
        template: dict[str, Any],
        waits: pulumi.ResourceOptions,
    ) -> k8s.apps.v1.Deployment:
        return k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata=manifest(scaled_metadata(w, metadata)),
            spec=manifest(
                {
                    **replicas(w),
                    "selector": {"matchLabels": self.selector},
                    "strategy": deployment_strategy(w),
                    "template": template,
                }
            ),
            opts=waits,
        )

    def _statefulset(
        self,
        name: str,
        w: WorkloadConfig,
        metadata: dict[str, Any],
        template: dict[str, Any],
        waits: pulumi.ResourceOptions,
    ) -> k8s.apps.v1.StatefulSet:
        """The StatefulSet, its headless Service, and a data disk per pod (workloads[].storage)."""
        headless = k8s.core.v1.Service(
            f"{name}-headless",
            metadata=manifest({**metadata, "name": f"{w.name}-headless"}),
            spec=manifest(
                {
                    "clusterIP": "None",
                    "selector": self.selector,
                    "ports": [{"name": "http", "port": w.port or 80, "targetPort": "http"}]
                    if w.port
                    else [],
                }
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        return k8s.apps.v1.StatefulSet(
            f"{name}-statefulset",
            metadata=manifest(scaled_metadata(w, metadata)),
            spec=manifest(
                {
                    **replicas(w),
                    "serviceName": headless.metadata.name,
                    "selector": {"matchLabels": self.selector},
                    "template": template,
                    "volumeClaimTemplates": data_claims(w),
                    **claim_retention(w),
                }
            ),
            opts=waits,
        )

    def _job(
        self,
        name: str,
        w: WorkloadConfig,
        metadata: dict[str, Any],
        template: dict[str, Any],
        waits: pulumi.ResourceOptions,
    ) -> k8s.batch.v1.Job:
        """The Job; `pulumi up` waits for it only with waitForCompletion.

        pulumi-kubernetes waits for a Job until its Complete condition is True (provider/pkg/
        await/job.go lines 49-56), so a training Job would hold `pulumi up` for hours. With
        SKIP_AWAIT_ANNOTATION "true" the provider skips that wait (provider/pkg/await/await.go
        newLegacyReadyCondition, lines 1096-1102, and metadata/overrides.go SkipAwaitLogic,
        line 40; pulumi/pulumi-kubernetes at commit 94977969, checked 2026-11-22).
        """
        return k8s.batch.v1.Job(
            f"{name}-job",
            metadata=manifest(await_metadata(w, metadata)),
            spec=manifest({"backoffLimit": w.backoff_limit, "template": template}),
            opts=waits,
        )

    def _egress(self, name: str, w: WorkloadConfig, metadata: dict[str, Any]) -> None:
        """The namespace denies egress and admits DNS (WorkloadNamespace); this admits the rest of
        what the pods need: the model hub, Cloud Storage, the metadata server,
        workloads[].egress.destinationRanges."""
        rules = egress.workload_egress(w.egress)
        if not rules:
            return
        k8s.networking.v1.NetworkPolicy(
            f"{name}-egress",
            metadata=manifest({**metadata, "name": f"{w.name}-egress"}),
            spec=manifest(egress.egress_policy_spec(self.selector, rules)),
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _disruption_budget(self, name: str, metadata: dict[str, Any]) -> None:
        """Node upgrades, repairs and scale-downs drain one GPU node at a time; without a budget a
        drain may evict every replica at once (kubernetes.io/docs/tasks/run-application/
        configure-pdb). One at a time keeps the service up."""
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb",
            metadata=manifest(metadata),
            spec=manifest({"maxUnavailable": 1, "selector": {"matchLabels": self.selector}}),
            opts=pulumi.ResourceOptions(parent=self),
        )
