"""Kubeconfigs for a GKE cluster: they authenticate through gke-gcloud-auth-plugin, so no
credential is ever stored in one."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp
import yaml

AUTH_PLUGIN_HINT = (
    "Install gke-gcloud-auth-plugin: `gcloud components install gke-gcloud-auth-plugin` "
    "(https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl)"
)


def kubeconfig_yaml(context: str, endpoint: str, ca_certificate: str | None) -> str:
    """A kubeconfig that authenticates through gke-gcloud-auth-plugin: no token is stored in it.

    `ca_certificate` None: the DNS-based endpoint, whose certificate the system's roots verify;
    gcloud writes no certificate-authority-data for it either (googlecloudsdk api_lib/container/
    kubeconfig.py Cluster(), `has_dns_endpoint`, google-cloud-sdk 578.0.0, checked 2026-11-22).
    """
    cluster: dict[str, str] = {"server": f"https://{endpoint}"}
    if ca_certificate is not None:
        cluster["certificate-authority-data"] = ca_certificate
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": cluster}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
        "users": [
            {
                "name": context,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "gke-gcloud-auth-plugin",
                        "installHint": AUTH_PLUGIN_HINT,
                        "provideClusterInfo": True,
                    }
                },
            }
        ],
    }
    return yaml.safe_dump(document, sort_keys=False)


def dns_endpoint_of(endpoints: Any) -> str | None:
    """The DNS-based control-plane endpoint GKE assigned (uid.<location>.gke.goog), if any."""

    # Output.all hands nested provider types over as dicts (snake_case keys), .apply as objects.
    def field(value: Any, name: str) -> Any:
        return value.get(name) if isinstance(value, dict) else getattr(value, name, None)

    return field(field(endpoints, "dns_endpoint_config"), "endpoint") or None


def endpoint_kubeconfig(context: str, ip: str, ca: str | None, endpoints: Any) -> str:
    """The kubeconfig for the DNS endpoint when GKE reports one (no CA: its certificate is
    publicly trusted), else for the IP endpoint with the cluster's CA."""
    dns = dns_endpoint_of(endpoints)
    return kubeconfig_yaml(context, dns, None) if dns else kubeconfig_yaml(context, ip, ca or "")


def gke_kubeconfig(
    cluster: gcp.container.Cluster, context: str, dns_endpoint: bool
) -> pulumi.Output[str]:
    """The cluster's kubeconfig (secret): for the DNS endpoint when the stack opened it, else for
    the IP endpoint with the cluster's CA."""
    if dns_endpoint:
        # Asked for: `pulumi up` from outside the authorized networks (CI's hosted runners)
        # reaches the control plane through its DNS-based endpoint, where IAM decides.
        return pulumi.Output.secret(
            pulumi.Output.all(
                cluster.endpoint,
                cluster.master_auth.cluster_ca_certificate,
                cluster.control_plane_endpoints_config,
            ).apply(lambda v: endpoint_kubeconfig(context, v[0], v[1], v[2]))
        )
    return pulumi.Output.secret(
        pulumi.Output.all(cluster.endpoint, cluster.master_auth.cluster_ca_certificate).apply(
            lambda v: kubeconfig_yaml(context, v[0], v[1] or "")
        )
    )
