"""GpuWorkload: a Deployment, StatefulSet or Job whose pods get GPUs in any cluster mode.

The pod template is components/service/pod.py's, placed by components/service/placement.py; the
workload object itself is its kind's (components/kinds/, listed in components/slices.py). This
module registers the objects around it: the Secret its env reads, the service account a model
cache is read as, its egress policy and its disruption budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .. import slices
from ..config import Mode, WorkloadConfig
from ..facts.labels import selector_labels, workload_labels
from ..kinds.base import Request
from ..manifest import manifest
from ..platform import egress
from .pod import pod_template, secret_env_names

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
        kind = slices.kind_of(w)
        pods = selector_labels(w.spec.name)
        # What serves requests (the model's Service, the gate's NetworkPolicy): a group's leaders
        # only; the egress policy and the disruption budget cover every pod.
        self.selector = kind.serving_selector(pods)
        self.port = w.spec.port
        metadata = {
            "name": w.spec.name,
            "namespace": args.namespace,
            "labels": workload_labels(w.spec.name),
        }
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
                if kind.awaited(w)
                else None
            ),
        )
        resource = kind.register(
            Request(name, w, metadata, pods, template, parent=self, waits=waits)
        )
        self._egress(name, w, metadata, pods)
        if kind.holds_replicas and w.max_replicas > 1:
            self._disruption_budget(name, metadata, pods)
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
            metadata=manifest({**metadata, "name": f"{w.spec.name}-env"}),
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
        if w.model_cache is None and w.spec.output is None:
            return []
        account = k8s.core.v1.ServiceAccount(
            f"{name}-serviceaccount",
            metadata=manifest(metadata),
            automount_service_account_token=False,
            opts=pulumi.ResourceOptions(parent=self),
        )
        return [account]

    def _egress(
        self, name: str, w: WorkloadConfig, metadata: dict[str, Any], pods: dict[str, str]
    ) -> None:
        """The namespace denies egress and admits DNS (WorkloadNamespace); this admits the rest of
        what the pods need: the model hub, Cloud Storage, the metadata server,
        workloads[].egress.destinationRanges."""
        rules = egress.workload_egress(w.egress)
        if not rules:
            return
        k8s.networking.v1.NetworkPolicy(
            f"{name}-egress",
            metadata=manifest({**metadata, "name": f"{w.spec.name}-egress"}),
            spec=manifest(egress.egress_policy_spec(pods, rules)),
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _disruption_budget(self, name: str, metadata: dict[str, Any], pods: dict[str, str]) -> None:
        """Node upgrades, repairs and scale-downs drain one GPU node at a time; without a budget a
        drain may evict every replica at once (kubernetes.io/docs/tasks/run-application/
        configure-pdb). One at a time keeps the service up."""
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb",
            metadata=manifest(metadata),
            spec=manifest({"maxUnavailable": 1, "selector": {"matchLabels": pods}}),
            opts=pulumi.ResourceOptions(parent=self),
        )
