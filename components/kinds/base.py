"""How a workload runs: the protocol every kind (Deployment, StatefulSet, Job) implements.

A kind knows its Kubernetes type, where its pod spec sits (policy/rules/props.py POD_SPEC_PATHS
reads the same path; tests/test_policy.py holds the two equal), whether `pulumi up` waits for it,
whether it holds replicas the program sets or an autoscaler scales, and how to register its object
under the workload's component, names unchanged (`<component>-<suffix>`). components/slices.py
lists them (KINDS); nothing outside a kind's module decides by its name.

A kind module imports components.config, components.facts, components.platform,
components.manifest and this module only (tests/test_layout.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import pulumi
import pulumi_kubernetes as k8s

from ..config import WorkloadConfig
from ..config.rules.batch import seconds
from ..config.sleep import sleeps
from ..facts.labels import PATCH_FORCE_ANNOTATION, SKIP_AWAIT_ANNOTATION
from ..platform.kueue import (
    MAX_RUN_ANNOTATION,
    QUEUE,
    QUEUE_NAME_LABEL,
    QUEUED_TAINT_TOLERATION,
)
from .spec import KindSpec


@dataclass(frozen=True)
class Request:
    """What a kind's `register` builds its object from: all decided by GpuWorkload."""

    name: str
    """The workload component's resource name (`workload-<name>`): children are `<name>-...`."""
    workload: WorkloadConfig
    metadata: dict[str, Any]
    """The object's name, namespace and labels (the kind adds its annotations)."""
    selector: dict[str, str]
    """The labels its pods carry: the object's selector."""
    template: dict[str, Any]
    """The pod template (components/service/pod.py)."""
    parent: pulumi.Resource
    waits: pulumi.ResourceOptions
    """The object's own options: its parent, what it waits for, its timeouts."""


class Registered(Protocol):
    """The workload object a kind registers, as GpuWorkload reads it (its name)."""

    @property
    def metadata(self) -> pulumi.Output[k8s.meta.v1.outputs.ObjectMeta]: ...


class _Named:
    def __init__(self, resource: pulumi.CustomResource, name: str) -> None:
        self.metadata: pulumi.Output[k8s.meta.v1.outputs.ObjectMeta] = resource.urn.apply(
            lambda _: k8s.meta.v1.outputs.ObjectMeta(name=name)
        )


def named(resource: pulumi.CustomResource, name: str) -> Registered:
    """A custom resource's object as GpuWorkload reads it (its name, once registered): an untyped
    CustomResource (a LeaderWorkerSet) declares no typed metadata output."""
    return _Named(resource, name)


def placed(pod_spec_path: tuple[str, ...], template: dict[str, Any]) -> dict[str, Any]:
    """An object's spec holding `template` where `pod_spec_path` ends ("spec", ..., "template",
    "spec": the object's spec, the fields down to the template, the template's own spec)."""
    spec: dict[str, Any] = template
    for key in reversed(pod_spec_path[1:-1]):
        spec = {key: spec}
    return spec


class Kind(ABC):
    """One way a workload runs: a Kubernetes object that holds its pods."""

    spec: ClassVar[KindSpec]
    """What it declares of itself, below the config layer (components/kinds/<kind>_spec.py): its
    name, the stack kind it serves, its type and its capabilities, which the properties below
    read rather than restate."""
    pod_spec_path: ClassVar[tuple[str, ...]]
    """Where the pod spec sits in the object's inputs (the policy pack checks it there)."""
    unprobed: ClassVar[str] = "no port: Kubernetes calls it ready once started"
    """The plan's words for a workload of this kind without a probe."""
    rollout_words: ClassVar[str | None] = None
    """The plan's words for how its pods are replaced, when the kind decides it alone (None:
    the workload's rollout does)."""
    restart_policy: ClassVar[str | None] = None
    """The pod's restartPolicy, where Kubernetes' default (Always) does not fit the kind: Never
    for one that completes, unless it says otherwise (__init_subclass__)."""
    builds_batch_keys: ClassVar[bool] = False
    """Its object carries the batch keys its descriptor `takes` (Batch builds them)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A kind that completes restarts no pod in place (a Job's pods may not restart Always:
        Batch has the source); one that declares batch keys builds them into its object, or the
        plan would describe a queue, a time cap or shards the object does not have."""
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("spec")
        if spec is None:
            return
        if spec.completes and cls.restart_policy is None:
            cls.restart_policy = "Never"
        if spec.takes and not cls.builds_batch_keys:
            raise TypeError(
                f"{cls.__name__} declares takes={sorted(spec.takes)}, and its registrar does not "
                "build them into its object: declare takes=frozenset(), or build them "
                "(components/kinds/base.py Batch does, for a Job's object)"
            )

    @property
    def name(self) -> str:
        """The kind's name in KINDS."""
        return self.spec.name

    @property
    def stack_kind(self) -> str:
        """The stack file's `kind` it serves (a CronJob is a Job with `schedule`)."""
        return self.spec.stack_kind

    @property
    def type_token(self) -> str:
        """The Pulumi type it registers (`kubernetes:apps/v1:Deployment`)."""
        return self.spec.type_token

    @property
    def holds_replicas(self) -> bool:
        """Whether it keeps a count of long-running pods (spec.replicas) that the program sets or
        an autoscaler scales; a Job runs its pod to completion instead."""
        return self.spec.holds_replicas

    def serves(self, w: WorkloadConfig) -> bool:
        """Whether `w` (of this kind's stack_kind) runs as this kind."""
        return self.spec.serves(w.spec)

    def awaited(self, w: WorkloadConfig) -> bool:
        """Whether `pulumi up` waits for the object: for long-running kinds unless they sleep when
        idle (a kind that does not hold replicas says otherwise).

        A sleeping model's Deployment is created with one replica (spec.replicas is KEDA's), which
        KEDA scales to zero as soon as its ScaledObject exists (keda v2.20.2 pkg/scaling/executor/
        scale_scaledobjects.go: no LastActiveTime yet); waiting for that replica would hold `up`
        for a GPU no request asked for, and fail it without one."""
        return not sleeps(w)

    def object_metadata(self, w: WorkloadConfig, metadata: dict[str, Any]) -> dict[str, Any]:
        """The object's metadata: `await_metadata`'s, and for a kind that holds replicas
        `scaled_metadata`'s."""
        if self.holds_replicas:
            return self.scaled_metadata(w, metadata)
        return self.await_metadata(w, metadata)

    def await_metadata(self, w: WorkloadConfig, metadata: dict[str, Any]) -> dict[str, Any]:
        """The object's metadata, with SKIP_AWAIT_ANNOTATION when `pulumi up` must not wait for it
        (`awaited`): every kind, or a sleeping StatefulSet is awaited for the provider's default 10
        minutes for a replica KEDA has already removed."""
        if self.awaited(w):
            return metadata
        return {**metadata, "annotations": {SKIP_AWAIT_ANNOTATION: "true"}}

    def scaled_metadata(self, w: WorkloadConfig, metadata: dict[str, Any]) -> dict[str, Any]:
        """`await_metadata`'s, and PATCH_FORCE_ANNOTATION whenever the program sets spec.replicas
        (`replicas`).

        spec.replicas keeps the field manager of whoever set it last: the HorizontalPodAutoscaler's
        kube-controller-manager or KEDA (both write the scale subresource), or a `kubectl scale`.
        When a workload goes from `autoscale` (or sleeping) to a fixed count, the program's
        server-side apply of spec.replicas conflicts with that manager and `pulumi up` fails, since
        pulumi-kubernetes does not force by default (issue 31). The program cannot tell a
        transition from a steady fixed count (it reads the stack file, not the previous state), so
        it forces whenever it owns the count; the force settles conflicts on the fields it sends,
        all of which it declares."""
        metadata = self.await_metadata(w, metadata)
        if not replicas(w):
            return metadata
        annotations = {**metadata.get("annotations", {}), PATCH_FORCE_ANNOTATION: "true"}
        return {**metadata, "annotations": annotations}

    def object_name(self, w: WorkloadConfig) -> str:
        """The object's name: the workload's, with the kind's suffix (KindSpec.object_suffix)."""
        return w.spec.name + self.spec.object_suffix

    def scale_target(self, w: WorkloadConfig) -> dict[str, str]:
        """The object as an autoscaler's scaleTargetRef names it (its scale subresource), read
        from `type_token` ("kubernetes:apps/v1:Deployment")."""
        _, api_version, kind = self.type_token.split(":")
        return {"apiVersion": api_version, "kind": kind, "name": self.object_name(w)}

    def serving_selector(self, selector: dict[str, str]) -> dict[str, str]:
        """The labels of the pods that serve requests, which the model's Service and the gate's
        NetworkPolicy select: every pod of the workload, unless the kind says fewer."""
        return selector

    def disks_at_destroy(self, w: WorkloadConfig) -> str | None:
        """The plan's words for what becomes of the disks the object claims (None: it claims
        none)."""
        del w
        return None

    @abstractmethod
    def register(self, request: Request) -> Registered:
        """Register the object (and what only it needs) under `request.parent`."""


def replicas(w: WorkloadConfig) -> dict[str, int]:
    """spec.replicas, unless the workload is autoscaled.

    An autoscaled workload leaves spec.replicas to its HorizontalPodAutoscaler: a value here would
    reset the count on every `pulumi up`, or fail it with a server-side apply conflict with
    kube-controller-manager's "scale" subresource (pulumi/pulumi-kubernetes#2491; Kubernetes:
    remove spec.replicas when migrating a Deployment to horizontal autoscaling). Without it the
    object starts at 1 and the HPA raises it to minReplicas.
    """
    return {} if w.spec.autoscale is not None else {"replicas": w.replicas}


class Batch(Kind):
    """A kind that runs pods to completion (a Job, or the Jobs a CronJob creates): what the Job
    object carries for Kueue, for shards and for Spot (issue 36)."""

    # A Job's pods may not restart Always (https://kubernetes.io/docs/concepts/workloads/
    # controllers/job/#pod-template: "Only a RestartPolicy equal to Never or OnFailure is
    # allowed"); Never: a failed try is a new pod, counted against backoffLimit (and a Pod
    # failure policy needs it: "only allowed when restartPolicy is Never", job/#pod-failure-policy).
    restart_policy = "Never"
    unprobed = "a Job"
    builds_batch_keys = True

    def job_metadata(self, w: WorkloadConfig, metadata: dict[str, Any]) -> dict[str, Any]:
        """The Job's metadata: with `queue`, the LocalQueue's label and the longest its nodes are
        held (Kueue passes it to the ProvisioningRequest: components/platform/kueue.py)."""
        if w.queue is None:
            return metadata
        labels = {**metadata.get("labels", {}), QUEUE_NAME_LABEL: QUEUE}
        annotations = {
            **metadata.get("annotations", {}),
            MAX_RUN_ANNOTATION: str(w.queue.max_run_seconds),
        }
        return {**metadata, "labels": labels, "annotations": annotations}

    def job_spec(self, w: WorkloadConfig, template: dict[str, Any]) -> dict[str, Any]:
        """The Job's spec: retries, and what `activeDeadline`, `queue`, `completions` and Spot
        add."""
        spec: dict[str, Any] = {"backoffLimit": w.spec.backoff_limit, "template": template}
        deadline = active_deadline_seconds(w)
        if deadline is not None:
            spec["activeDeadlineSeconds"] = deadline
        if w.queue is not None:
            # Kueue starts a queued Job once admitted; created running, its pods would start
            # before the ProvisioningRequest is granted (cluster-toolkit sample-job.yaml:
            # `suspend: true`). Its pods tolerate the queued nodes' taint.
            spec["suspend"] = True
            pod = template["spec"]
            template = {
                **template,
                "spec": {
                    **pod,
                    "tolerations": [*pod.get("tolerations", []), dict(QUEUED_TAINT_TOLERATION)],
                },
            }
            spec["template"] = template
        if w.spec.completions is not None:
            # An Indexed Job: each pod gets its shard in JOB_COMPLETION_INDEX
            # (https://kubernetes.io/docs/concepts/workloads/controllers/job/#completion-mode).
            spec["completionMode"] = "Indexed"
            spec["completions"] = w.spec.completions
            spec["parallelism"] = w.spec.parallelism or 1
        if on_spot(w) and batch(w):
            spec["podFailurePolicy"] = pod_failure_policy(w)
        return spec


def on_spot(w: WorkloadConfig) -> bool:
    """Its pods may run on Spot VMs (its own setting, or a fallback's)."""
    return w.spec.spot or any(c.spot for c in w.capacity)


def batch(w: WorkloadConfig) -> bool:
    """A Job that uses the batch keys (queue, activeDeadline, schedule, completions, output; issues
    36 and 45). A Job without them keeps the object it always had (the plans of existing stacks
    stay the same)."""
    keys = (w.queue, w.spec.active_deadline, w.spec.schedule, w.spec.completions, w.spec.output)
    return any(x is not None for x in keys)


def active_deadline_seconds(w: WorkloadConfig) -> int | None:
    """`activeDeadline` in seconds: the Job's spec.activeDeadlineSeconds (a CronJob's, each run's).

    Kubernetes fails the Job once it has been active that long, whatever its retries ("Job
    termination and cleanup": it "applies to the duration of the job, no matter how many Pods are
    created ... the Job status will become type: Failed with reason: DeadlineExceeded", and "takes
    precedence over its .spec.backoffLimit"). It counts from the Job's startTime, which a resume
    resets ("Suspending a Job": "the .spec.activeDeadlineSeconds timer will be stopped and reset
    when a Job is suspended and resumed"): a queued Job's time in the queue does not count, and
    one Kueue evicts and admits again starts its count afresh. (kubernetes.io/docs/concepts/
    workloads/controllers/job/, kubernetes/website at 003349eb.)
    """
    given = w.spec.active_deadline
    return None if given is None else seconds(given)


def pod_failure_policy(w: WorkloadConfig) -> dict[str, Any]:
    """On Spot: a pod the node's preemption or drain evicted is retried without counting against
    backoffLimit (its DisruptionTarget condition: Ignore), and the program's own failure (a
    non-zero exit of its container) fails the Job at once instead of retrying it
    (https://kubernetes.io/docs/concepts/workloads/controllers/job/#pod-failure-policy, and its
    example: "Ignore ... DisruptionTarget", "FailJob ... onExitCodes")."""
    return {
        "rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            {
                "action": "FailJob",
                "onExitCodes": {"containerName": w.spec.name, "operator": "NotIn", "values": [0]},
            },
        ]
    }
