"""expose.domain (issue 35): the workload on a name through a GKE Gateway with a Google-managed
certificate, the gate behind it. What the engine is asked to register, checked against the
vendored CRD schemas (tools/crds: Gateway API v1.1.0, GKE's policy CRDs) and pulumi-gcp's own
resource inputs; and the gate's health port the HealthCheckPolicy names, on the real HAProxy.
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pulumi_gcp as gcp
import pytest
import yaml

from components.expose.gateway import GATEWAY_API, GATEWAY_CLASS, PROXY_RANGES
from components.service import haproxy
from components.service import haproxy_limits as limits
from components.service.gate import gate_selector
from tests.conftest import MINIMAL, STANDARD, vllm_workload_problems
from tests.test_gate import HAPROXY, _wait_for_port, free_port, on_ports
from tools.engine import Recording
from tools.mocks import GLOBAL_IP
from tools.render import crd_schema_path, render, summary

DOMAIN = "llm.acme.example"


def domain_stack(domain: str = DOMAIN, **workload: Any) -> dict[str, Any]:
    return {
        **MINIMAL,
        "gke-gpu:workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "args": ["Qwen/Qwen2.5-0.5B-Instruct"],
                "gpu": {"type": "nvidia-l4", "count": 1},
                "cache": {"size": "30Gi"},
                "expose": {"port": 443, "domain": domain},
                **workload,
            }
        ],
    }


def _custom(recording: Recording, kind: str) -> list[dict[str, Any]]:
    return [
        {"apiVersion": r.inputs["apiVersion"], "kind": kind, **r.inputs}
        for r in recording.resources
        if r.type.endswith(f":{kind}") and r.type.startswith("kubernetes:")
    ]


def _one(recording: Recording, kind: str) -> dict[str, Any]:
    (found,) = _custom(recording, kind)
    return found


def test_a_domain_gets_a_gateway_routes_and_policies_that_validate_against_the_vendored_crds(
    run: Callable[..., Recording],
) -> None:
    recording = run(domain_stack())
    kinds = ("Gateway", "HTTPRoute", "GCPBackendPolicy", "HealthCheckPolicy")
    objects = [o for kind in kinds for o in _custom(recording, kind)]
    assert sorted(o["kind"] for o in objects) == sorted([*kinds, "HTTPRoute"]), objects
    for obj in objects:
        path = crd_schema_path(obj)
        assert path is not None and path.exists(), f"{obj['kind']}: no vendored schema ({path})"
        schema = json.loads(path.read_text())["schema"]
        errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(obj)]
        assert not errors, f"{obj['kind']} does not validate against {path.name}: {errors}"


def test_the_gateway_listeners_pass_the_gateway_api_rules_jsonschema_cannot_check(
    run: Callable[..., Recording],
) -> None:
    """The listener rules (CEL, x-kubernetes-validations) of Gateway API v1.1.0's Gateway CRD,
    evaluated here as they are written there: HTTP listeners carry no tls; an HTTPS listener with
    tls in Terminate mode needs certificateRefs or options; names unique; port, protocol and
    hostname unique together."""
    spec = _one(run(domain_stack()), "Gateway")["spec"]
    listeners = spec["listeners"]
    assert spec["gatewayClassName"] == GATEWAY_CLASS == "gke-l7-global-external-managed"
    assert all("tls" not in x for x in listeners if x["protocol"] in ("HTTP", "TCP", "UDP"))
    for listener in listeners:
        tls = listener.get("tls")
        if listener["protocol"] == "HTTPS" and tls and tls.get("mode", "Terminate") == "Terminate":
            assert tls.get("certificateRefs") or tls.get("options"), listener
    assert len({x["name"] for x in listeners}) == len(listeners)
    keys = [(x["port"], x["protocol"], x.get("hostname")) for x in listeners]
    assert len(set(keys)) == len(keys)
    assert {(x["protocol"], x["port"]) for x in listeners} == {("HTTPS", 443), ("HTTP", 80)}


def test_the_certificate_is_google_managed_by_dns_authorization_and_mapped_to_the_gateway(
    run: Callable[..., Recording],
) -> None:
    recording = run(domain_stack())
    pieces = {
        "DnsAuthorization": gcp.certificatemanager.DnsAuthorization,
        "Certificate": gcp.certificatemanager.Certificate,
        "CertificateMap": gcp.certificatemanager.CertificateMap,
        "CertificateMapEntry": gcp.certificatemanager.CertificateMapEntry,
        "GlobalAddress": gcp.compute.GlobalAddress,
    }
    found = {}
    for kind, cls in pieces.items():
        (registration,) = [r for r in recording.resources if r.type.endswith(f":{kind}")]
        accepted = {
            re.sub(r"_([a-z])", lambda m: m.group(1).upper(), p)
            for p in inspect.signature(cls._internal_init).parameters
        }
        unknown = set(registration.inputs) - accepted - {"__defaults"}
        assert not unknown, f"{kind} inputs pulumi-gcp does not take: {unknown}"
        found[kind] = registration
    auth, cert = found["DnsAuthorization"], found["Certificate"]
    entry, cmap = found["CertificateMapEntry"], found["CertificateMap"]
    assert auth.inputs["domain"] == DOMAIN
    assert cert.inputs["managed"]["domains"] == [DOMAIN]
    project = MINIMAL["gcp:project"]
    auth_id = f"projects/{project}/locations/global/dnsAuthorizations/{auth.inputs['name']}"
    assert cert.inputs["managed"]["dnsAuthorizations"] == [auth_id], (
        "the certificate is proven by the name's DNS authorization (its id, as the mock makes it)"
    )
    assert entry.inputs["hostname"] == DOMAIN and entry.inputs["map"] == cmap.inputs["name"]
    gateway = _one(recording, "Gateway")
    assert gateway["metadata"]["annotations"]["networking.gke.io/certmap"] == cmap.inputs["name"]
    assert gateway["spec"]["addresses"] == [
        {"type": "NamedAddress", "value": found["GlobalAddress"].inputs["name"]}
    ], "the Gateway takes the reserved global address the A record points at"


def test_routes_send_https_to_the_gate_and_redirect_http(run: Callable[..., Recording]) -> None:
    recording = run(domain_stack())
    routes = {r["metadata"]["name"]: r["spec"] for r in _custom(recording, "HTTPRoute")}
    service = recording.served("kubernetes:core/v1:Service").inputs
    https, redirect = routes["llm-route"], routes["llm-redirect"]
    assert https["hostnames"] == [DOMAIN] and https["parentRefs"][0]["sectionName"] == "https"
    assert https["rules"] == [
        {"backendRefs": [{"name": service["metadata"]["name"], "port": 443}]}
    ], "HTTPS for the name goes to the gate's Service, never to the model"
    assert redirect["parentRefs"][0]["sectionName"] == "http"
    assert redirect["rules"][0]["filters"] == [
        {"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 301}}
    ]
    assert "backendRefs" not in redirect["rules"][0], "plain HTTP is never forwarded"
    assert service["spec"]["type"] == "ClusterIP", "the gate has no load balancer of its own"
    assert service["spec"]["ports"][0]["appProtocol"] == "HTTPS"


def test_only_the_gateways_proxies_reach_the_gate_and_only_the_gate_reaches_the_model(
    run: Callable[..., Recording],
) -> None:
    recording = run(domain_stack())
    policies = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]
        for r in recording.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
    }
    proxies = [{"ipBlock": {"cidr": c}} for c in PROXY_RANGES]
    assert policies["llm-ingress"]["ingress"] == [
        {"ports": [{"protocol": "TCP", "port": haproxy.TLS_PORT}], "from": proxies},
        {"from": proxies, "ports": [{"protocol": "TCP", "port": haproxy.HEALTH_PORT}]},
    ], "the gate's ports admit the load balancer's proxies and health checks only"
    assert policies["llm-from-gate"]["ingress"][0]["from"] == [
        {"podSelector": {"matchLabels": gate_selector("llm")}}
    ], "the model admits only its gate: the Gateway reaches the gate, never the model"


def _timeout_server(config: str) -> int:
    match = re.search(r"timeout server (\d+)s", config)
    assert match, config
    return int(match.group(1))


@pytest.mark.parametrize("sleeping", [False, True])
def test_the_backend_timeout_outlasts_the_gates_longest_wait(
    run: Callable[..., Recording], sleeping: bool
) -> None:
    extra = {"autoscale": {"minReplicas": 0, "maxReplicas": 2}} if sleeping else {}
    recording = run(domain_stack(**extra))
    gate_wait = _timeout_server(recording.named("gate-llm-config").inputs["data"]["haproxy.cfg"])
    timeout = _one(recording, "GCPBackendPolicy")["spec"]["default"]["timeoutSec"]
    assert timeout > gate_wait, (
        f"the load balancer would cut a request after {timeout} s that the gate waits "
        f"{gate_wait} s for (a model waking from zero)"
    )


def test_outputs_give_the_https_name_and_the_dns_records(run: Callable[..., Recording]) -> None:
    outputs = run(domain_stack()).stack_outputs
    assert outputs["url"] == f"https://{DOMAIN}" and outputs["endpoints"]["llm"] == outputs["url"]
    records = outputs["dnsRecords"]["llm"]
    assert {"name": DOMAIN, "type": "A", "data": GLOBAL_IP} in records
    assert any(r["type"] == "CNAME" and r["name"] == f"_acme-challenge.{DOMAIN}." for r in records)


def test_the_health_check_policy_names_a_port_the_real_gate_answers_without_a_key(
    run: Callable[..., Recording], tmp_path: Path
) -> None:
    if HAPROXY is None:
        pytest.skip("haproxy not installed")
    recording = run(domain_stack())
    check = _one(recording, "HealthCheckPolicy")["spec"]["default"]["config"]["httpHealthCheck"]
    config = recording.named("gate-llm-config").inputs["data"]["haproxy.cfg"]
    health = free_port()
    assert check["port"] == haproxy.HEALTH_PORT
    (tmp_path / "haproxy.cfg").write_text(
        on_ports(config, free_port(), health).replace('ssl crt "${GATE_CERT}" alpn h2,http/1.1', "")
    )
    env = {haproxy.UPSTREAM_ENV: "127.0.0.1:9", haproxy.KEY_ENV: "k" * 48, "PATH": "/usr/bin"}
    process = subprocess.Popen(
        [HAPROXY, "-db", "-dR", "-f", str(tmp_path / "haproxy.cfg")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for_port(health, process)
        with urllib.request.urlopen(f"http://127.0.0.1:{health}{check['requestPath']}") as answer:
            assert answer.status == 200, "the load balancer's health check gets 200 from the gate"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize(
    ("expose", "where", "words"),
    [
        ({"type": "Internal"}, "expose.domain", "gke-l7-rilb) is not built yet"),
        ({"staticIp": True}, "expose.staticIp", "reserved global address"),
    ],
)
def test_what_the_gateway_path_does_not_do_is_refused_with_its_key_path(
    expose: dict[str, Any], where: str, words: str
) -> None:
    problems = vllm_workload_problems(
        cache={"size": "30Gi"}, expose={"port": 443, "domain": DOMAIN, **expose}
    )
    assert any(p.startswith(f"workloads[0].{where}:") and words in p for p in problems), problems


# `auto` names carry the cluster's name (the stack's default, gke-gpu-<stack>) and the workload's.
AUTO = f"gke-gpu-test-llm.endpoints.{MINIMAL['gcp:project']}.cloud.goog"
ENDPOINTS = "gcp:endpoints/service:Service"


def test_domain_auto_names_the_endpoint_under_cloud_goog_with_a_load_balancer_authorized_cert(
    run: Callable[..., Recording],
) -> None:
    recording = run(domain_stack("auto"))
    service = recording.one(ENDPOINTS).inputs
    assert service["serviceName"] == AUTO, (
        "the free name is <cluster>-<workload>.endpoints.<project>.cloud.goog: another stack or "
        "cluster of the project with a workload of the same name never takes it (issue 43)"
    )
    document = yaml.safe_load(service["openapiConfig"])
    assert document["x-google-endpoints"] == [{"name": AUTO, "target": GLOBAL_IP}], (
        "Cloud Endpoints points the name at the Gateway's reserved global address"
    )
    assert not recording.of_type("gcp:certificatemanager/dnsAuthorization:DnsAuthorization"), (
        "nobody can add a CNAME under cloud.goog: no DNS authorization"
    )
    cert = recording.one("gcp:certificatemanager/certificate:Certificate").inputs["managed"]
    assert cert["domains"] == [AUTO] and not cert.get("dnsAuthorizations")
    assert recording.stack_outputs["url"] == f"https://{AUTO}"
    routes = [r["spec"]["hostnames"] for r in _custom(recording, "HTTPRoute")]
    assert routes == [[AUTO], [AUTO]]


def test_two_stacks_of_one_project_name_their_auto_domains_apart(
    run: Callable[..., Recording],
) -> None:
    """Issue 43's collision: two stacks (two clusters) of one project, each with the default
    workload name, used to ask for the same Endpoints name and certificate."""
    names = {
        stack: run(domain_stack("auto"), stack=stack).one(ENDPOINTS).inputs["serviceName"]
        for stack in ("team-a", "team-b")
    }
    assert names["team-a"] != names["team-b"], (
        f"a second stack would take the first one's name and its certificate: {names}"
    )


def test_destroy_deletes_the_endpoints_name_with_its_address(run: Callable[..., Recording]) -> None:
    """`pulumi destroy` deletes the Endpoints service (deletionPolicy DELETE): a service left in
    place kept the name pointing at the address the stack released, which someone else may be
    given (issue 43). The next `pulumi up` asks for the same service by the same name (after
    `gcloud endpoints services undelete` within 30 days, which the plan says)."""
    first, again = run(domain_stack("auto")), run(domain_stack("auto"))
    before, after = first.one(ENDPOINTS), again.one(ENDPOINTS)
    assert before.inputs["deletionPolicy"] == "DELETE", (
        "destroy must not leave the name pointing at a released address"
    )
    assert (after.urn, after.inputs) == (before.urn, before.inputs), (
        "up after destroy asks for the same service by the same name"
    )


def test_the_plan_warns_of_the_30_day_reservation_and_says_how_to_undelete(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.test.yaml"
    stack.write_text(yaml.safe_dump({"config": domain_stack("auto")}))
    text = summary(render("test", stack))
    assert "stays reserved to this project 30 days" in text and (
        f"gcloud endpoints services undelete {AUTO}"
    ) in (text), "the plan says the name is reserved after deletion and how to get it back"
    assert "DNS records to create: none" in text


CLUSTER = "gcp:container/cluster:Cluster"


def test_a_standard_cluster_turns_on_gkes_gateway_api_only_for_a_domain(
    run: Callable[..., Recording],
) -> None:
    workload = {**domain_stack()["gke-gpu:workloads"][0], "spot": True}  # STANDARD's pool is Spot
    standard = {**STANDARD, "gke-gpu:workloads": [workload]}
    with_domain = run(standard)
    assert with_domain.one(CLUSTER).inputs.get("gatewayApiConfig") == {
        "channel": "CHANNEL_STANDARD"
    }, "a Standard cluster has no Gateway controller until its gatewayApiConfig asks for one"
    assert with_domain.of_type(f"kubernetes:{GATEWAY_API}:Gateway"), (
        "the Gateway itself is registered on Standard, as on Autopilot"
    )
    assert "gatewayApiConfig" not in run(STANDARD).one(CLUSTER).inputs, (
        "without a domain the cluster's inputs must not change (no diff for existing stacks)"
    )
    assert "gatewayApiConfig" not in run(domain_stack()).one(CLUSTER).inputs, (
        "Autopilot runs the Gateway controller already: nothing to set"
    )


def test_a_domain_on_an_existing_cluster_is_refused_with_the_reason() -> None:
    from components.config import ConfigError, load

    workload = domain_stack()["gke-gpu:workloads"][0]
    raw = {"cluster": {"mode": "existing", "context": "lab"}, "workloads": [workload]}
    with pytest.raises(ConfigError) as error:
        load(raw, project=MINIMAL["gcp:project"], region="us-central1", stack="t")
    assert any(
        p.startswith("workloads[0].expose.domain:") and "existing cluster" in p
        for p in error.value.problems
    ), error.value.problems


def test_the_gateway_admits_tls_1_2_and_up_only(run: Callable[..., Recording]) -> None:
    """Issue 43's edge: Google's default SSL policy admits TLS 1.0; the Gateway gets one of its
    own, which its GCPGatewayPolicy names."""
    recording = run(domain_stack())
    policy = recording.one("gcp:compute/sSLPolicy:SSLPolicy").inputs
    assert (policy["minTlsVersion"], policy["profile"]) == ("TLS_1_2", "MODERN"), policy
    (gateway_policy,) = _custom(recording, "GCPGatewayPolicy")
    assert gateway_policy["spec"]["default"]["sslPolicy"] == policy["name"], gateway_policy
    assert gateway_policy["spec"]["targetRef"]["kind"] == "Gateway"
    (gateway,) = _custom(recording, "Gateway")
    assert gateway_policy["spec"]["targetRef"]["name"] == gateway["metadata"]["name"], (
        "the policy must name the Gateway the stack makes, or the default policy applies"
    )


def test_streams_and_websockets_last_an_hour_and_a_rollout_drains(
    run: Callable[..., Recording],
) -> None:
    """Issue 43: the backend timeout is a request's whole life for Google's load balancer, so it
    is the longest stream the gate allows (its tunnel limit), not the gate's longest silence; a
    gate leaving the backends drains what it serves."""
    (policy,) = _custom(run(domain_stack()), "GCPBackendPolicy")
    default = policy["spec"]["default"]
    assert default["timeoutSec"] >= limits.TUNNEL_SECONDS, (
        f"a streamed answer or WebSocket would be cut after {default['timeoutSec']} s while the "
        f"gate keeps a tunnel {limits.TUNNEL_SECONDS} s"
    )
    assert 0 < default["connectionDraining"]["drainingTimeoutSec"] <= 3600, default


def test_the_plan_says_the_load_balancers_limits_and_edge(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.test.yaml"
    stack.write_text(yaml.safe_dump({"config": domain_stack()}))
    text = summary(render("test", stack))
    for words in ("TLS 1.2 and up", "HSTS", "ends 1 h after it began", "connection draining"):
        assert words in text, f"the plan must say {words!r} of the Gateway: {text}"
