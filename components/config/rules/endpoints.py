"""An endpoint's name and clients (issue 35): expose.domain (a GKE Gateway with a Google-managed
certificate) and a key per consumer (expose.keys)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ..context import Context
from ..problems import Problem
from ..schema import WorkloadSpec
from ..variants import GATEWAY, exposure_of, exposure_spec
from .exposure import api_key
from .names import gce_name

# expose.domain: auto names the endpoint under the project's free Cloud Endpoints domain:
# "<name>.endpoints.<project>.cloud.goog" (Cloud Endpoints, "Configuring DNS on the cloud.goog
# domain", cloud.google.com/endpoints/docs/openapi/cloud-goog-dns-configure), as
# GoogleCloudPlatform/accelerated-platforms' gateways do (hostname_suffix
# "endpoints.${project_id}.cloud.goog").
AUTO_DOMAIN = "auto"


def endpoints_name(workload: str, project: str) -> str:
    return f"{workload}.endpoints.{project}.cloud.goog"


def auto_domain(workload: str, ctx: Context) -> str:
    """The name `domain: auto` gives a workload (components/config/build.py): the cluster's and
    the workload's names, as the workload's reserved address is named, so a second stack or
    cluster of the project with a workload of the same name (the default `llm`) never takes this
    one's name and certificate (issue 43); then the project's Endpoints domain."""
    label = gce_name(ctx.cluster_name, workload) if ctx.cluster_name else workload
    return endpoints_name(label, ctx.project)


# Names under cloud.goog (issue 43). Google manages the cloud.goog domain and shares it among its
# customers; a project may use the names `<name>.endpoints.<PROJECT_ID>.cloud.goog`, unique to it
# because project IDs are globally unique, and Service Management writes their A record from the
# Endpoints service's `x-google-endpoints` (name and target address; no other record). Cloud
# Endpoints, "Configuring DNS on the cloud.goog domain",
# https://cloud.google.com/endpoints/docs/openapi/cloud-goog-dns-configure (read in the stored
# documentation, 2026-11-29). Any other name under cloud.goog is another project's or nobody's:
# the stack cannot obtain it. This project's own name, written out rather than `auto`, is served
# as a name of your own (components/expose/, the Gateway's certificate): no Endpoints service,
# and a certificate proven by DNS authorization, whose CNAME (_acme-challenge.<name>) nobody can
# add under cloud.goog.
CLOUD_GOOG = "cloud.goog"
ENDPOINTS_NAME = re.compile(
    r"(?P<label>[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)\.endpoints\.(?P<project>[^.]+)\.cloud\.goog"
)


def _cloud_goog_problem(path: str, domain: str, ctx: Context) -> Problem | None:
    if domain != CLOUD_GOOG and not domain.endswith("." + CLOUD_GOOG):
        return None
    shown = ctx.show(path, domain)
    match = ENDPOINTS_NAME.fullmatch(domain)
    fix = (
        "Use a name in a domain you own."
        if ":" in ctx.project  # auto is refused for a domain-scoped project (domain_problems)
        else "Use domain: auto (the stack then makes the workload's Endpoints name, the Endpoints "
        "service and a certificate the load balancer authorizes), or a name in a domain you own."
    )
    if match is not None and match["project"] == ctx.project:
        return Problem(
            path,
            f"{shown} is this project's Cloud Endpoints name written out, which the stack serves "
            "as a name of your own: no Endpoints service (so no A record), and a certificate "
            "proven by DNS authorization, a CNAME (_acme-challenge.<name>) that nobody can add "
            f"under cloud.goog, so it would never be issued. {fix}",
        )
    if match is not None and not ctx.project:
        return None  # gcp:project is missing (reported), so whose name this is is unknown
    why = (
        "names another project, not this stack's (gcp:project)"
        if match is not None
        else "is not such a name"
    )
    return Problem(
        path,
        f"{shown} is under cloud.goog, a domain Google manages and shares among its customers: "
        "a project obtains only the names <name>.endpoints.<gcp:project>.cloud.goog there, "
        f"through Cloud Endpoints, and this one {why}, so the stack cannot obtain it. {fix}",
    )


def consumer_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """expose.keys: each name once, and the generated key the gate hands the server behind it.
    A name of a secret key (the whole `workloads` from an ESC environment) is not shown."""
    e = w.expose
    if e is None or not e.keys:
        return
    path = f"workloads[{i}].expose.keys"
    seen: set[str] = set()
    for j, name in enumerate(e.keys):
        if name in seen:
            yield Problem(
                f"{path}[{j}]",
                f"{ctx.show(f'{path}[{j}]', name)} is listed twice; each consumer gets one key, "
                "named once. Remove the second entry.",
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
    if e is None or not exposure_of(e).managed_certificate:
        return
    path = f"workloads[{i}].expose"
    if not exposure_spec(e.type).public:
        yield Problem(
            f"{path}.domain",
            f"is served through GKE's global external Gateway, which type {e.type} is not; the "
            "regional internal Gateway (gke-l7-rilb) is not built yet. Use type: LoadBalancer "
            "(the default) with domain, or remove domain.",
        )
    if ctx.mode == "existing" and GATEWAY.refused_on_existing is not None:
        yield Problem(f"{path}.domain", GATEWAY.refused_on_existing)
    cloud_goog = _cloud_goog_problem(f"{path}.domain", _name(w), ctx)
    if cloud_goog is not None:
        yield cloud_goog
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


def shared_domain_problems(
    workloads: Sequence[tuple[int, WorkloadSpec]], ctx: Context
) -> list[Problem]:
    """One name, one workload: each expose.domain gets its own Gateway, reserved address and
    certificate, and the name's A record points at one address. Two explicit names clash at the
    later one; a name written out that is another workload's auto name, at the written one (two
    autos never clash: workload names are unique in a stack)."""
    found: list[Problem] = []
    seen: dict[str, tuple[int, bool]] = {}
    named = [(i, _name(w)) for i, w in workloads if _name(w)]
    autos = [(i, auto_domain(w.name, ctx), True) for i, w in workloads if _auto(w)]
    given = [(i, d, False) for i, d in named if d != AUTO_DOMAIN]
    for i, domain, auto in [*autos, *given]:
        first = seen.setdefault(domain, (i, auto))
        if first == (i, auto):
            continue
        path = f"workloads[{i}].expose.domain"
        other = f"workloads[{first[0]}].expose.domain{' (auto)' if first[1] else ''}"
        found.append(
            Problem(
                path,
                f"{ctx.show(path, domain)} is also the name of {other}: each would get a "
                "Gateway, an address and a certificate of its own for the one name, whose DNS "
                "record points at one address only. Give each workload its own name, or remove "
                "domain from one.",
            )
        )
    return found


def _name(w: WorkloadSpec) -> str:
    """The name the workload is served on, as written; empty when its exposure has none of its
    own (not one with a managed certificate)."""
    e = w.expose
    return (e.domain or "") if e is not None and exposure_of(e).managed_certificate else ""


def _auto(w: WorkloadSpec) -> bool:
    return w.expose is not None and w.expose.domain == AUTO_DOMAIN
