"""Your own VPC: cluster.network, subnetwork, secondary ranges and node service account, and the
subnetwork an internal load balancer's address comes from."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .. import formats
from ..context import Context
from ..problems import Problem
from ..schema import ClusterSpec, WorkloadSpec
from ..variants import exposure_spec
from .cluster import gke_only_problems
from .exposure import GKE_NETWORK_KEYS, reserves_address

# GCE resource names (networks, subnetworks, secondary ranges): RFC 1035, 1-63 characters
# (https://cloud.google.com/compute/docs/naming-resources).
GCE_NAME = r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"
# Self-links as GKE's API and the Google provider accept them for network/subnetwork: full URLs
# or the `projects/...` form (pulumi-gcp 10.2.0 Cluster.network: "The name or self_link").
_API = r"(?:https://www\.googleapis\.com/compute/v1/)?"
NETWORK_LINK = rf"{_API}projects/(?P<project>{formats.PROJECT_ID})/global/networks/{GCE_NAME}"
SUBNETWORK_LINK = (
    rf"{_API}projects/(?P<project>{formats.PROJECT_ID})/regions/(?P<region>{formats.REGION})"
    rf"/subnetworks/{GCE_NAME}"
)
# A service account email: account ids are 6-30 characters
# (https://cloud.google.com/iam/docs/service-accounts-create).
SERVICE_ACCOUNT_EMAIL = r"[a-z][-a-z0-9]{4,28}[a-z0-9]@[-a-z0-9.:]+\.gserviceaccount\.com"
# The auto-mode `default` network has one subnetwork per region, itself named `default`.
DEFAULT_NETWORK = "default"


def _reference_problems(
    key: str, value: str | None, link: str, region: str, ctx: Context
) -> list[Problem]:
    if value is None:
        return []
    path = f"cluster.{key}"
    shown = ctx.show(path, value)
    if formats.matches(GCE_NAME, value):
        return []
    match = re.fullmatch(link, value, flags=re.ASCII)
    if match is None:
        kind = "network" if key == "network" else "subnetwork"
        where = (
            "global/networks/NAME" if kind == "network" else f"regions/{region}/subnetworks/NAME"
        )
        return [
            Problem(
                f"{path}",
                f"{shown} is neither a {kind} name (1-63 lowercase letters, digits and "
                f"hyphens, starting with a letter) nor a self-link (projects/PROJECT/{where}). "
                f"Use e.g. {'acme-vpc' if kind == 'network' else 'gpu-subnet'}.",
            )
        ]
    found = match.groupdict().get("region")
    if found is not None and region and found != region:
        return [
            Problem(
                f"{path}",
                f"{shown} is in region {found!r}, but the cluster is in {region!r}; a cluster's "
                f"nodes use a subnetwork of its own region. Name a subnetwork of {region!r}.",
            )
        ]
    return []


def cluster_problems(cluster: ClusterSpec, ctx: Context) -> Iterator[Problem]:
    """cluster.network/subnetwork/podRange/serviceRange/nodeServiceAccount."""
    mode, region = ctx.mode, ctx.region
    if mode == "existing":
        yield from gke_only_problems(cluster, GKE_NETWORK_KEYS)
        return
    yield from _reference_problems("network", cluster.network, NETWORK_LINK, region, ctx)
    yield from _reference_problems("subnetwork", cluster.subnetwork, SUBNETWORK_LINK, region, ctx)
    if cluster.subnetwork is not None and cluster.network is None:
        yield Problem(
            "cluster.subnetwork",
            "set without cluster.network, so the cluster would look for it in "
            "the project's `default` network. Set cluster.network to the subnetwork's network.",
        )
    for key, value in (("podRange", cluster.pod_range), ("serviceRange", cluster.service_range)):
        if value is None:
            continue
        if not formats.matches(GCE_NAME, value):
            yield Problem(
                f"cluster.{key}",
                f"{ctx.show(f'cluster.{key}', value)} is not a secondary range "
                "name (1-63 lowercase letters, digits and hyphens, starting with a letter). "
                "Use the range's name as `gcloud compute networks subnets describe` lists it.",
            )
        if cluster.subnetwork is None:
            yield Problem(
                f"cluster.{key}",
                "names a secondary range of the cluster's subnetwork, but "
                "cluster.subnetwork is not set. Set cluster.network and cluster.subnetwork.",
            )
    if mode == "autopilot" and not cluster.dataplane_v2:
        yield Problem(
            "cluster.dataplaneV2",
            "Autopilot clusters always run GKE Dataplane V2 (it enforces "
            "the workloads' NetworkPolicies). Remove dataplaneV2: false.",
        )
    account = cluster.node_service_account
    if account is not None and not formats.matches(SERVICE_ACCOUNT_EMAIL, account):
        yield Problem(
            "cluster.nodeServiceAccount",
            f"{ctx.show('cluster.nodeServiceAccount', account)} is not a service account email. "
            "Use e.g. 'gpu-prod-nodes@acme-ml-prod.iam.gserviceaccount.com'.",
        )


def static_ip_problems(i: int, w: WorkloadSpec, ctx: Context) -> list[Problem]:
    """An internal address comes from a subnetwork: with your own network, name it."""
    cluster = ctx.cluster
    if (
        w.expose is None
        or cluster is None
        or not reserves_address(w, cluster.mode)
        or exposure_spec(w.expose.type).address_type != "INTERNAL"
        or cluster.network in (None, DEFAULT_NETWORK)
        or cluster.subnetwork is not None
    ):
        return []
    return [
        Problem(
            f"workloads[{i}].expose.staticIp",
            f"an internal address is reserved in a subnetwork, and "
            f"cluster.network is {cluster.network!r} without cluster.subnetwork. Set "
            "cluster.subnetwork (the cluster's subnetwork).",
        )
    ]
