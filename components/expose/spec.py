"""What an exposure declares of itself, below the config layer: one ExposureSpec per way a
workload is reached, in `<type>_spec.py` beside the module that registers it (`<type>.py`).

The config layer and the plan ask these capabilities (components/config/variants.py
exposure_spec), never the type's name. Every field is required (no defaults): an exposure that
forgets one fails when its module is imported, not in a user's stack. A descriptor module imports
components.facts and this module only (tests/test_layout.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ..facts.controllers import Controller
from ..facts.undecided import refuse_undecided


class ExposureKeys(Protocol):
    """The stack-file keys that pick a workload's exposure (an ExposeSpec has them)."""

    @property
    def type(self) -> str: ...
    @property
    def domain(self) -> str | None: ...


@dataclass(frozen=True, kw_only=True)
class ExposureSpec:
    """One way a workload's gate is reached, as the rest of the program needs to know it."""

    name: str
    """The stack file's `expose.type` (components/slices.py EXPOSURES)."""
    load_balanced: bool
    """A cloud load balancer serves it: it may reserve an address (expose.staticIp), and its
    address is one the certificate can name before the Service exists."""
    public: bool
    """Its address is reached from the internet (the stack output externalIp; cluster.production
    holds it to a key and source ranges)."""
    in_cluster: bool
    """Only pods in the cluster reach it (by its cluster DNS name): no stranger can wake a
    sleeping model through it."""
    address_type: Literal["EXTERNAL", "INTERNAL"] | None
    """The type of the regional address it reserves with expose.staticIp (an INTERNAL one comes
    from a subnetwork); None: it has none to reserve."""
    refused_on_gke: str | None
    """Why a stack that builds its GKE cluster cannot use it, and what to do (None: it can)."""
    refused_on_existing: str | None
    """Why a stack on an existing cluster cannot use it, and what to do (None: it can)."""
    refuses_source_ranges: str | None
    """Why expose.sourceRanges cannot restrict it, and what to do (None: it enforces them)."""
    managed_certificate: bool
    """It serves the workload on a DNS name of its own (expose.domain) with a Google-managed
    certificate for that name: the name is one workload's, and the stack's certificate, which
    names a reserved address, is not for it."""
    terminates_at_edge: bool
    """Google's front end ends the clients' connections and alone connects to the gate: the
    exposure builds the cloud side in front of the Service (a Site: backend timeout, health
    check), and expose.sourceRanges are held by a Cloud Armor policy there, not a firewall."""
    needs: frozenset[Controller]
    """The controllers the platform must run for it (the Gateway: GKE's Gateway API)."""

    def __post_init__(self) -> None:
        refuse_undecided(self)
