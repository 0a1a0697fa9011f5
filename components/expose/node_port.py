"""NodePort: served on a port of every node (existing clusters)."""

from __future__ import annotations

from typing import Any

import pulumi

from ..config import Expose
from .base import Exposure, Served
from .node_port_spec import NODE_PORT


def node_port_endpoint(namespace: str, service: str, node_port: int | None = None) -> str:
    """How to reach a NodePort Service: no address is known, any node's address serves it."""
    if node_port is not None:
        return f"NodePort {node_port} on any node's address"
    return (
        "the NodePort assigned by the cluster, on any node's address "
        f"(`kubectl -n {namespace} get service {service}` shows it)"
    )


class NodePort(Exposure):
    """A NodePort Service: any node's address, on the port Kubernetes chooses."""

    spec = NODE_PORT
    service_type = "NodePort"

    def where_words(self, e: Expose, namespace: str) -> str:
        del e, namespace
        return "on every node (NodePort chosen by Kubernetes), from anything reaching the nodes"

    def addresses(
        self,
        served: Served,
        status: pulumi.Output[Any],
        node_port: pulumi.Output[int | None],
    ) -> tuple[pulumi.Output[str | None], pulumi.Output[str | None]]:
        """No external IP; which node port to use, once assigned."""
        del status
        url = pulumi.Output.all(served.namespace, node_port).apply(
            lambda v: node_port_endpoint(v[0], served.service, v[1])
        )
        return pulumi.Output.from_input(None), url
