"""Node pool rules: a GPU pool scales to zero, or says why it stays warm."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .props import (
    MIN_NODES_REASON_LABEL,
    NODE_POOL_TYPE,
    Context,
    _get,
    _known,
    _known_str,
    _mapping,
    _quantity,
    _sequence,
    _show,
    object_label,
)


def gpu_node_pools_scale_to_zero(
    resource_type: str, props: Mapping[str, Any], context: Context
) -> list[str]:
    """A GPU node pool scales to zero, or records why it stays warm. Advisory.

    An idle GPU node bills by the hour. A pool passes when its autoscaling minimum
    (totalMinNodeCount or minNodeCount; unset counts as 0, the API default) is 0, or when it has
    no autoscaling and a node count of 0, or when nodeConfig.resourceLabels carries
    gke-gpu-min-nodes-reason (gke-gpu writes it from nodePools[].minNodesReason). Advisory
    because a warm pool is a legitimate latency choice; the rule asks that it be a stated one.
    """
    if resource_type != NODE_POOL_TYPE:
        return []
    node_config = _mapping(props.get("nodeConfig"))
    accelerators = _sequence(node_config.get("guestAccelerators"))
    if not accelerators:
        return []
    # Read directly, not through _known_str: a reason not known yet must not pass as "no reason".
    reason = _get(node_config, "resourceLabels", MIN_NODES_REASON_LABEL)
    if isinstance(reason, str) and reason:
        return []
    autoscaling = props.get("autoscaling")
    if isinstance(autoscaling, Mapping):
        mins = ("totalMinNodeCount", "minNodeCount")
        key = next((k for k in mins if autoscaling.get(k) is not None), None)
        minimum = autoscaling.get(key) if key else 0
        if _quantity(minimum) == 0:
            return []
        keeps = f"keeps {_show(minimum)} or more GPU nodes running (autoscaling.{key})"
    else:
        sizes = ("nodeCount", "initialNodeCount")
        key = next((k for k in sizes if props.get(k) is not None), None)
        if key is None:
            keeps = "has no autoscaling and no node count of 0"
        elif _quantity(props.get(key)) == 0:
            return []
        else:
            keeps = f"has no autoscaling and a fixed {key} of {_show(props.get(key))}"
    gpus = ", ".join(
        f"{_show(_known(a, 'count') or 1)} x {_known_str(a, 'type') or 'GPU'}" for a in accelerators
    )
    return [
        f"{object_label(resource_type, props)} ({gpus}) {keeps}, so idle GPUs keep billing, and "
        f"no {MIN_NODES_REASON_LABEL} label says why. Set nodePools[].minNodes: 0 or "
        "minNodesReason (e.g. serving-latency-slo)."
    ]
