"""A LeaderWorkerSet: each replica a group of `hosts` pods on as many nodes (issue 34).

A model bigger than one node runs as a group: a leader pod (the API server, the only pod the
model's Service reaches) and `hosts - 1` worker pods, each with `gpu.count` GPUs, which
kubernetes-sigs/lws starts, restarts and scales together. The controller and its CRD are installed
by the stack (components/platform/lws.py). Facts from kubernetes-sigs/lws v0.8.0
(fc19b9ae9b0113d228ba15f4b62b06bea434b510):
  - api/leaderworkerset/v1/leaderworkerset_types.go: the pod labels
    `leaderworkerset.sigs.k8s.io/name` and `/worker-index` ("0" for the leader), and the env
    LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and LWS_WORKER_INDEX;
  - pkg/utils/pod/pod_utils.go AddLWSVariables: the pod webhook puts those env vars first in
    every container (so `$(LWS_...)` in args expands), the leader address
    `<lws>-<group>.<subdomain>.<namespace>`;
  - config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml: the scale subresource
    (spec.replicas, status.hpaPodSelector) an HPA scales groups through, its selector the
    leaders (pkg/controllers/leaderworkerset_controller.go lines 500-513); restartPolicy
    RecreateGroupOnPodRestart (the default): one pod's restart recreates its group.
vLLM across nodes as the pinned release does it, natively, without Ray: `--nnodes`, `--node-rank`,
`--master-addr` with the multiprocessing backend, the workers `--headless` (vllm/config/
parallel.py ParallelConfig.master_addr, node_rank, nnodes: "for multi-node distributed inference
when distributed_executor_backend is mp"; vllm-project/vllm@00193b82, a stored main-branch copy:
the v0.29.0 tag itself was not read).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..config import WorkloadConfig, formats
from ..manifest import manifest
from .base import Kind, Registered, Request, named, replicas
from .leaderworkerset_spec import LEADERWORKERSET

API_VERSION = "leaderworkerset.x-k8s.io/v1"
SET_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
PROBES = ("startupProbe", "readinessProbe", "livenessProbe")


def vllm_group_args(leader: bool) -> list[str]:
    """What a vLLM server adds to join its group: the node count, its rank and the leader's
    address from the LWS env; a worker runs no API server (`--headless`)."""
    args = [
        "--distributed-executor-backend",
        "mp",
        "--nnodes",
        "$(LWS_GROUP_SIZE)",
        "--node-rank",
        "$(LWS_WORKER_INDEX)",
        "--master-addr",
        "$(LWS_LEADER_ADDRESS)",
    ]
    return args if leader else [*args, "--headless"]


def group_template(w: WorkloadConfig, template: dict[str, Any], leader: bool) -> dict[str, Any]:
    """The leader's or a worker's pod template, from the workload's: a vLLM server gets its group
    flags; a worker has no probes (the leader's readiness stands for the group, whose API only
    the leader serves); no zone spread, which would put a group's nodes in different zones."""
    template = _copied(template)
    spec = template["spec"]
    spec.pop("topologySpreadConstraints", None)
    container = spec["containers"][0]
    if formats.is_vllm_image(w.spec.image):
        container["args"] = [*container.get("args", []), *vllm_group_args(leader)]
    if not leader:
        for probe in PROBES:
            container.pop(probe, None)
    return template


def _copied(value: Any) -> Any:
    """Dicts and lists copied, their leaves shared: a template holds pulumi Outputs (the Secret's
    name), which cannot be deep-copied."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


def group_policy(set_name: str) -> dict[str, Any]:
    """A group's pods reach each other on any port (vLLM's rendezvous, its ZeroMQ and NCCL
    traffic), in and out; the namespace denies both otherwise. The controller labels every pod
    with its LeaderWorkerSet's name."""
    group = {"podSelector": {"matchLabels": {SET_NAME_LABEL: set_name}}}
    return {
        "podSelector": {"matchLabels": {SET_NAME_LABEL: set_name}},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [group]}],
        "egress": [{"to": [group]}],
    }


class LeaderWorkerSet(Kind):
    spec = LEADERWORKERSET
    pod_spec_path = ("spec", "leaderWorkerTemplate", "workerTemplate", "spec")
    rollout_words = (
        "a group at a time: LeaderWorkerSet's rolling update recreates a whole group (leader and "
        "workers) and waits for it before the next"
    )

    def serving_selector(self, selector: dict[str, str]) -> dict[str, str]:
        """The group leaders only: a worker serves no API."""
        return {**selector, WORKER_INDEX_LABEL: "0"}

    def register(self, request: Request) -> Registered:
        """The LeaderWorkerSet and the NetworkPolicy that lets its groups talk."""
        w = request.workload
        k8s.networking.v1.NetworkPolicy(
            f"{request.name}-group-policy",
            metadata=manifest({**request.metadata, "name": f"{w.spec.name}-group-peers"}),
            spec=manifest(group_policy(self.object_name(w))),
            opts=pulumi.ResourceOptions(parent=request.parent),
        )
        surge = 1 if w.rollout == "surge" else 0
        group_set = k8s.apiextensions.CustomResource(
            f"{request.name}-leaderworkerset",
            api_version=API_VERSION,
            kind=self.name,
            metadata=manifest(
                self.object_metadata(w, {**request.metadata, "name": self.object_name(w)})
            ),
            spec=manifest(
                {
                    **replicas(w),
                    "leaderWorkerTemplate": {
                        "size": w.spec.hosts,
                        "restartPolicy": "RecreateGroupOnPodRestart",
                        "leaderTemplate": group_template(w, request.template, leader=True),
                        "workerTemplate": group_template(w, request.template, leader=False),
                    },
                    "rolloutStrategy": {
                        "type": "RollingUpdate",
                        "rollingUpdateConfiguration": {"maxSurge": surge, "maxUnavailable": 1},
                    },
                    "startupPolicy": "LeaderCreated",
                }
            ),
            opts=request.waits,
        )
        return named(group_set, self.object_name(w))


def group_name(workload: str) -> str:
    """The LeaderWorkerSet of a workload, `<name>-group`: the controller creates a headless Service
    of the LeaderWorkerSet's own name for its pods' DNS (kubernetes-sigs/lws v0.8.0
    pkg/controllers/leaderworkerset_controller.go line 194), and an exposed workload's Service
    already takes `<name>` (components/config/rules/names.py reserves both)."""
    return f"{workload}{LEADERWORKERSET.object_suffix}"
