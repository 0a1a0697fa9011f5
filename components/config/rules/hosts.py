"""`workloads[].hosts`: a replica over several nodes, a LeaderWorkerSet group (issue 34).

A group is a leader pod and `hosts - 1` worker pods, each on a node of its own with `gpu.count`
GPUs; they start, restart and scale together (kubernetes-sigs/lws v0.8.0, components/kinds/
leaderworkerset.py). What cannot run that way is refused here, with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import formats
from ..context import Context
from ..problems import Problem
from ..schema import WorkloadSpec
from ..sleep import sleeps
from ..variants import kind_spec


def problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    if w.hosts == 1:
        return
    path = f"workloads[{i}].hosts"
    if not kind_spec(w).spans_nodes:
        yield Problem(
            path,
            f"a {w.kind} cannot span nodes: a group of {w.hosts} nodes per replica is a "
            "LeaderWorkerSet, whose leader and workers start, restart and scale together; a "
            f"{w.kind}'s pods are independent (a StatefulSet's each claims its own disk and "
            "replaces one at a time; a Job runs one pod to completion). Remove kind (a served "
            "model), or set hosts: 1.",
        )
    if ctx.mode == "autopilot":
        yield Problem(
            path,
            "a group of nodes per replica needs GKE Standard: Google's multi-host GPU guide runs "
            "LeaderWorkerSet groups on a Standard cluster's GPU node pool "
            "(cloud.google.com/kubernetes-engine/docs/tutorials/serve-multihost-gpu), and the "
            "program keeps a group's nodes in one pool (one zone). Autopilot support for it is "
            "not confirmed; use cluster.mode: standard with a node pool of the GPU.",
        )
    yield from _group_flag_problems(i, w)
    if sleeps(w):
        yield Problem(
            f"workloads[{i}].autoscale.minReplicas",
            "a group of nodes cannot sleep when idle: KEDA's access is cut to scaling "
            "Deployments and StatefulSets (components/platform/keda_fence.py), and its HTTP "
            "add-on waits on the Service's endpoints, which a waking group fills only once every "
            f"one of its {w.hosts} nodes has loaded its share. Set minReplicas: 1 or more.",
        )


# What the program adds to a vLLM server in a group (components/kinds/leaderworkerset.py
# vllm_group_args), from the LeaderWorkerSet's env: set by hand they would contradict it, and
# vLLM's multi-node mode takes only the mp backend ("nnodes > 1 can only be set when distributed
# executor backend is mp, uni or external_launcher", vllm/config/parallel.py, vllm@00193b82).
GROUP_FLAGS = (
    "--nnodes",
    "--node-rank",
    "--master-addr",
    "--master-port",
    "--headless",
    "--distributed-executor-backend",
)


def _group_flag_problems(i: int, w: WorkloadSpec) -> Iterator[Problem]:
    if not formats.is_vllm_image(w.image):
        return
    given = sorted(
        {flag for a in [*w.command, *w.args] for flag in GROUP_FLAGS if a.split("=")[0] == flag}
    )
    if given:
        yield Problem(
            f"workloads[{i}].args",
            f"{', '.join(given)}: the program sets these for each pod of a group from the "
            "LeaderWorkerSet's environment (--nnodes $(LWS_GROUP_SIZE), --node-rank "
            "$(LWS_WORKER_INDEX), --master-addr $(LWS_LEADER_ADDRESS), the mp backend, "
            "--headless on the workers). Remove them.",
        )
