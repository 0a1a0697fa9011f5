"""The one list of variants everything iterates (issue 32): how a workload runs (KINDS) and how
it is reached (EXPOSURES).

Code that differs by kind or expose type asks the variant (`kind_of(w).awaited(w)`,
`exposure_named(e.type, ...).load_balanced`), never compares its name; a variant the registry
does not hold is refused here rather than handled as another.
"""

from __future__ import annotations

from .config import Expose, WorkloadConfig
from .expose.base import Exposure
from .expose.cluster_ip import ClusterIP
from .expose.gateway import Gateway
from .expose.internal import Internal
from .expose.load_balancer import LoadBalancer
from .expose.node_port import NodePort
from .kinds.base import Kind
from .kinds.cron_job import CronJob
from .kinds.deployment import Deployment
from .kinds.job import Job
from .kinds.leaderworkerset import LeaderWorkerSet
from .kinds.statefulset import StatefulSet

KINDS: dict[str, Kind] = {
    k.name: k for k in (Deployment(), StatefulSet(), Job(), CronJob(), LeaderWorkerSet())
}
EXPOSURES: dict[str, Exposure] = {
    e.name: e for e in (LoadBalancer(), Internal(), ClusterIP(), NodePort())
}


def kind_of(w: WorkloadConfig) -> Kind:
    """The kind `w` runs as; a ValueError naming the kinds there are when it is none of them.

    The stack file's `kind` and the keys that refine it pick one: a Job with `schedule` is a
    CronJob's, a Deployment over several nodes (`hosts` > 1) a LeaderWorkerSet group's (the config
    layer refuses `hosts` for any other kind: components/config/rules/hosts.py)."""
    kind = next(
        (k for k in KINDS.values() if (k.stack_kind or k.name) == w.spec.kind and k.serves(w)), None
    )
    if kind is None:
        raise ValueError(
            f"workload {w.spec.name!r}: kind {w.spec.kind!r} is not one the program can register; "
            f"the kinds are {', '.join(KINDS)} (CronJob: a Job with `schedule`; "
            "components/slices.py KINDS: add a module under components/kinds/ to add one)"
        )
    return kind


def exposure_named(type_: str, workload: str) -> Exposure:
    """How workload `workload` is reached (its expose.type); a ValueError naming the types there
    are when it is none of them."""
    exposure = EXPOSURES.get(type_)
    if exposure is None:
        raise ValueError(
            f"workload {workload!r}: expose.type {type_!r} is not one the program can register; "
            f"the types are {', '.join(EXPOSURES)} (components/slices.py EXPOSURES: add a module "
            "under components/expose/ to add one)"
        )
    return exposure


def exposure_of(e: Expose, workload: str) -> Exposure:
    """How workload `workload` is reached (exposure_for its expose.type and domain)."""
    return exposure_for(e.spec.type, e.domain, workload, e.endpoints)


def exposure_for(
    type_: str, domain: str | None, workload: str, endpoints: bool = False
) -> Exposure:
    """Through a Gateway on expose.domain (issue 35; `endpoints`: a Cloud Endpoints name the
    stack makes), else by expose.type (exposure_named)."""
    if domain is not None:
        return Gateway(domain, endpoints)
    return exposure_named(type_, workload)
