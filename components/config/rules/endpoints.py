"""An endpoint's name and clients (issue 35): expose.domain (a GKE Gateway with a Google-managed
certificate) and a key per consumer (expose.keys)."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import Context
from ..problems import Problem
from ..schema import WorkloadSpec
from .exposure import api_key

# expose.domain: auto names the endpoint under the project's free Cloud Endpoints domain:
# "<name>.endpoints.<project>.cloud.goog" (Cloud Endpoints, "Configuring DNS on the cloud.goog
# domain", cloud.google.com/endpoints/docs/openapi/cloud-goog-dns-configure), as
# GoogleCloudPlatform/accelerated-platforms' gateways do (hostname_suffix
# "endpoints.${project_id}.cloud.goog").
AUTO_DOMAIN = "auto"


def endpoints_name(workload: str, project: str) -> str:
    return f"{workload}.endpoints.{project}.cloud.goog"


def consumer_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """expose.keys: each name once, and the generated key the gate hands the server behind it."""
    del ctx
    e = w.expose
    if e is None or not e.keys:
        return
    path = f"workloads[{i}].expose.keys"
    seen: set[str] = set()
    for j, name in enumerate(e.keys):
        if name in seen:
            yield Problem(
                f"{path}[{j}]",
                f"{name!r} is listed twice; each consumer gets one key, named once. Remove the "
                "second entry.",
            )
        seen.add(name)
    if not api_key(w):
        yield Problem(
            path,
            "gives each consumer a key the gate checks, in place of the workload's generated key, "
            "which the gate then sends the server; but this workload has no generated key "
            "(apiKey is false, or it sets its own VLLM_API_KEY). Remove keys, or let the stack "
            "generate the key (remove apiKey: false and the workload's own key).",
        )


def domain_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """expose.domain: what the Gateway path is built for (components/expose/gateway.py). With
    sourceRanges, a Cloud Armor policy admits only those (components/platform/cloud_armor.py)."""
    e = w.expose
    if e is None or e.domain is None:
        return
    path = f"workloads[{i}].expose"
    if e.type != "LoadBalancer":
        yield Problem(
            f"{path}.domain",
            f"is served through GKE's global external Gateway, which type {e.type} is not; the "
            "regional internal Gateway (gke-l7-rilb) is not built yet. Use type: LoadBalancer "
            "(the default) with domain, or remove domain.",
        )
    if ctx.mode == "existing":
        yield Problem(
            f"{path}.domain",
            "needs GKE's Gateway API, which the stack turns on for the clusters it builds "
            "(Standard: the standard channel; Autopilot has it) but cannot on an existing "
            "cluster. Remove domain, or build the cluster with the stack.",
        )
    if e.domain == AUTO_DOMAIN and ":" in ctx.project:
        yield Problem(
            f"{path}.domain",
            f"auto names the endpoint <workload>.endpoints.<project>.cloud.goog, and project "
            f"{ctx.project!r} is domain-scoped (its ':' cannot be in a DNS name). Set your own "
            "domain instead of auto.",
        )
    if e.static_ip:
        yield Problem(
            f"{path}.staticIp",
            "the Gateway always gets a reserved global address of its own (the name's DNS "
            "record points at it). Remove staticIp.",
        )
