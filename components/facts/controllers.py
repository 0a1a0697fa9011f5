"""The controllers a variant may need the platform to run (issue 42): a kind or an exposure names
them in its descriptor's `needs`, and components/platform installs what the stack's variants need
(components/config/model.py StackConfig.needs)."""

from __future__ import annotations

from enum import StrEnum


class Controller(StrEnum):
    """A controller or add-on the platform runs only when a variant in the stack needs it."""

    LWS = "lws"
    """The LeaderWorkerSet controller (components/platform/lws.py): a group of pods over nodes."""
    KUEUE = "kueue"
    """Kueue and the stack's queue (components/platform/kueue.py): a Job that waits for
    queued-provisioning nodes (the `queue` key, not a kind)."""
    GATEWAY_API = "gateway-api"
    """GKE's Gateway API controller (components/platform/cluster.py gateway_api_config)."""
