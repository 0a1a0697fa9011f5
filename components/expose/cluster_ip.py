"""ClusterIP: reached from inside the cluster only, by its cluster DNS name."""

from __future__ import annotations

from typing import Any

import pulumi

from ..config import Expose
from .base import Exposure, Served, url_for
from .cluster_ip_spec import CLUSTER_IP


def in_cluster_url(service: str, namespace: str, port: int, tls: bool = True) -> str:
    """How pods reach a ClusterIP Service: its cluster DNS name (Kubernetes "DNS for Services and
    Pods": <service>.<namespace>.svc.cluster.local)."""
    return url_for(f"{service}.{namespace}.svc.cluster.local", port, tls) or ""


class ClusterIP(Exposure):
    """A ClusterIP Service: no address outside the cluster."""

    spec = CLUSTER_IP
    service_type = "ClusterIP"

    def ingress_from(self) -> list[dict[str, Any]] | None:
        """The pods of the workload's own namespace: the Service is in-cluster only."""
        return [{"podSelector": {}}]

    def where_words(self, e: Expose, namespace: str) -> str:
        return f"in-cluster (ClusterIP) port {e.spec.port}, from pods of namespace {namespace}"

    def addresses(
        self,
        served: Served,
        status: pulumi.Output[Any],
        node_port: pulumi.Output[int | None],
    ) -> tuple[pulumi.Output[str | None], pulumi.Output[str | None]]:
        """No external IP; the cluster DNS name."""
        del status, node_port
        url = pulumi.Output.from_input(served.namespace).apply(
            lambda ns: in_cluster_url(served.service, ns, served.port, served.tls)
        )
        return pulumi.Output.from_input(None), url
