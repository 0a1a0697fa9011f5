"""The one list of variants everything iterates (issue 32): how a workload runs (KINDS) and how
it is reached (EXPOSURES; ON_A_NAME for the Gateway, made per workload on its expose.domain).

Code that differs by kind or expose type asks the variant (`kind_of(w).awaited(w)`,
`exposure_named(e.type, ...).load_balanced`), never compares its name; a variant the registry
does not hold is refused rather than handled as another. Each registrar here is keyed by its
descriptor's name (components/config/variants.py lists the descriptors the config layer asks;
tests/test_variants.py holds the two lists to one another).
"""

from __future__ import annotations

from collections.abc import Callable

from .config import Expose, WorkloadConfig, variants
from .expose.base import Exposure
from .expose.cluster_ip import ClusterIP
from .expose.gateway import Gateway
from .expose.internal import Internal
from .expose.load_balancer import LoadBalancer
from .expose.node_port import NodePort
from .expose.spec import ExposureKeys
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
# The exposures served on a name the stack file gives (expose.domain), made per workload.
ON_A_NAME: dict[str, Callable[[ExposureKeys, bool], Exposure]] = {
    Gateway.spec.name: Gateway.on_name
}


def kind_of(w: WorkloadConfig) -> Kind:
    """The kind `w` runs as (components/config/variants.py kind_spec picks its descriptor, the
    same function the config layer asks); a ValueError naming the kinds there are when it is none
    of them."""
    return KINDS[variants.kind_spec(w.spec, w.spec.name).name]


def exposure_named(type_: str, workload: str) -> Exposure:
    """How workload `workload` is reached (its expose.type); a ValueError naming the types there
    are when it is none of them."""
    return EXPOSURES[variants.exposure_spec(type_, workload).name]


def exposure_of(e: Expose, workload: str) -> Exposure:
    """How workload `workload` is reached (exposure_for its decided expose)."""
    return exposure_for(e, workload, e.endpoints)


def exposure_for(e: ExposureKeys, workload: str, endpoints: bool = False) -> Exposure:
    """The registrar of the exposure components/config/variants.py exposure_of picks for these
    keys (`endpoints`: the Gateway's name is a Cloud Endpoints name the stack makes); a
    ValueError naming the types there are when it is none of them."""
    spec = variants.exposure_of(e, workload)
    on_name = ON_A_NAME.get(spec.name)
    return on_name(e, endpoints) if on_name is not None else EXPOSURES[spec.name]
