"""The variants the config layer knows, by what they declare (issue 42): how a workload runs
(KIND_SPECS) and how it is reached (EXPOSURE_SPECS).

Rules, the platform and the plan ask a variant's capabilities (`kind_spec(w).completes`,
`exposure_spec(e.type).load_balanced`), never compare its name. Each descriptor sits beside the
module that registers it (components/kinds/<kind>_spec.py, components/expose/<type>_spec.py);
components/slices.py maps each to its registrar. The exposure a workload has is decided here
alone (exposure_of): a stack file picks the Gateway with expose.domain, the others by
expose.type; everything else asks the descriptor, never reads `domain` to decide.
"""

from __future__ import annotations

from collections.abc import Callable

from ..expose.cluster_ip_spec import CLUSTER_IP
from ..expose.gateway_spec import GATEWAY
from ..expose.internal_spec import INTERNAL
from ..expose.load_balancer_spec import LOAD_BALANCER
from ..expose.node_port_spec import NODE_PORT
from ..expose.spec import ExposureKeys, ExposureSpec
from ..kinds.cron_job_spec import CRON_JOB
from ..kinds.deployment_spec import DEPLOYMENT
from ..kinds.job_spec import JOB
from ..kinds.leaderworkerset_spec import LEADERWORKERSET
from ..kinds.spec import KindKeys, KindSpec
from ..kinds.statefulset_spec import STATEFULSET

KIND_SPECS: dict[str, KindSpec] = {
    k.name: k for k in (DEPLOYMENT, STATEFULSET, JOB, CRON_JOB, LEADERWORKERSET)
}
EXPOSURE_SPECS: dict[str, ExposureSpec] = {
    e.name: e for e in (LOAD_BALANCER, INTERNAL, CLUSTER_IP, NODE_PORT)
}
__all__ = [
    "EXPOSURE_SPECS",
    "GATEWAY",
    "KIND_SPECS",
    "exposure_of",
    "exposure_spec",
    "kind_spec",
    "kinds_that",
]


def kind_spec(w: KindKeys, workload: str | None = None) -> KindSpec:
    """The kind a workload with these keys runs as; a ValueError naming the kinds there are when
    it is none of them.

    The stack file's `kind` and the keys that refine it pick one: a Job with `schedule` is a
    CronJob's, a Deployment over several nodes (`hosts` > 1) a LeaderWorkerSet group's (the config
    layer refuses `hosts` for a kind that cannot span nodes: components/config/rules/hosts.py)."""
    found = next((k for k in KIND_SPECS.values() if k.stack_kind == w.kind and k.serves(w)), None)
    if found is None:
        who = f"workload {workload!r}: " if workload is not None else ""
        raise ValueError(
            f"{who}kind {w.kind!r} is not one the program can register; the kinds are "
            f"{', '.join(KIND_SPECS)} (CronJob: a Job with `schedule`; components/config/"
            "variants.py KIND_SPECS: add a descriptor beside a module under components/kinds/ "
            "to add one)"
        )
    return found


def kinds_that(capable: Callable[[KindSpec], bool]) -> str:
    """The stack file's kinds some descriptor of which is `capable`, for a message ("Deployment or
    StatefulSet"): the words follow the registry, so a new kind is named where it belongs."""
    names = list(dict.fromkeys(k.stack_kind for k in KIND_SPECS.values() if capable(k)))
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def exposure_spec(type_: str, workload: str | None = None) -> ExposureSpec:
    """How a workload with expose.type `type_` is reached; a ValueError naming the types there
    are when it is none of them."""
    found = EXPOSURE_SPECS.get(type_)
    if found is None:
        who = f"workload {workload!r}: " if workload is not None else ""
        raise ValueError(
            f"{who}expose.type {type_!r} is not one the program can register; the types are "
            f"{', '.join(EXPOSURE_SPECS)} (components/config/variants.py EXPOSURE_SPECS: add a "
            "descriptor beside a module under components/expose/ to add one)"
        )
    return found


def exposure_of(e: ExposureKeys, workload: str | None = None) -> ExposureSpec:
    """How a workload whose expose has these keys is reached: the Gateway when expose.domain is
    set (the stack-file contract: a domain picks it, whatever expose.type says; the config
    layer refuses a type the Gateway is not: rules/endpoints.py), else by expose.type
    (exposure_spec). The one place that reads `domain` to decide (tests/test_variants.py)."""
    if e.domain is not None:
        return GATEWAY
    return exposure_spec(e.type, workload)
