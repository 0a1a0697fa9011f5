"""LoadBalancerService: exposes a workload's port outside the cluster and reports its address."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s

from components.manifest import manifest

# A LoadBalancer on GKE takes a few minutes to get an address; Pulumi waits for it.
ADDRESS_TIMEOUT = "20m"


@dataclass(frozen=True)
class LoadBalancerServiceArgs:
    name: str
    namespace: pulumi.Input[str]
    selector: dict[str, str]
    """The workload's pod labels (GpuWorkload.selector), never written twice."""
    port: int
    target_port: int
    source_ranges: tuple[str, ...] = ()
    type: Literal["LoadBalancer", "NodePort"] = "LoadBalancer"


def url_for(address: str | None, port: int) -> str | None:
    if not address:
        return None
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}" if port == 80 else f"http://{host}:{port}"


def first_ingress(status: Any) -> str | None:
    """The LoadBalancer's IP, or its hostname where the implementation gives one instead."""
    ingress = (getattr(getattr(status, "load_balancer", None), "ingress", None) or [None])[0]
    if ingress is None:
        return None
    return getattr(ingress, "ip", None) or getattr(ingress, "hostname", None)


def node_port_endpoint(namespace: str, service: str, node_port: int | None = None) -> str:
    """How to reach a NodePort Service: no address is known, any node's address serves it."""
    if node_port is not None:
        return f"NodePort {node_port} on any node's address"
    return (
        "the NodePort assigned by the cluster, on any node's address "
        f"(`kubectl -n {namespace} get service {service}` shows it)"
    )


class LoadBalancerService(pulumi.ComponentResource):
    """A Service of type LoadBalancer for one workload, restricted to given source ranges."""

    external_ip: pulumi.Output[str | None]
    """The load balancer's IP (or hostname), once the cloud has assigned it."""
    url: pulumi.Output[str | None]
    """http://<address>[:port]."""
    node_port: pulumi.Output[int | None]
    """The port every node serves the Service on (NodePort and LoadBalancer types)."""

    def __init__(
        self, name: str, args: LoadBalancerServiceArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:LoadBalancerService", name, None, opts)
        spec: dict[str, Any] = {
            "type": args.type,
            "selector": args.selector,
            "ports": [
                {
                    "name": "http",
                    "port": args.port,
                    "targetPort": args.target_port,
                    "protocol": "TCP",
                }
            ],
        }
        if args.source_ranges:
            spec["loadBalancerSourceRanges"] = list(args.source_ranges)
        service = k8s.core.v1.Service(
            f"{name}-service",
            metadata=manifest(
                {
                    "name": args.name,
                    "namespace": args.namespace,
                    "labels": {**args.selector, "app.kubernetes.io/managed-by": "pulumi"},
                }
            ),
            spec=manifest(spec),
            opts=pulumi.ResourceOptions(
                parent=self, custom_timeouts=pulumi.CustomTimeouts(create=ADDRESS_TIMEOUT)
            ),
        )
        self.external_ip = service.status.apply(first_ingress)
        port = args.port
        self.url = self.external_ip.apply(lambda address: url_for(address, port))
        self.node_port = service.spec.apply(
            lambda s: s.ports[0].node_port if s is not None and s.ports else None
        )
        self.register_outputs(
            {"external_ip": self.external_ip, "url": self.url, "node_port": self.node_port}
        )
