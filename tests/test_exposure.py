"""Safe by default: exposure types, static addresses, API keys, NetworkPolicies, your own VPC, the
DNS control-plane endpoint and the production marker, on the requests the engine would receive."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
import yaml

from components.config import ConfigError, load
from components.config.rules.exposure import API_KEY_ENV
from components.service import haproxy
from policy.rules import evaluate as evaluate_rules
from tests.conftest import (
    CLUSTER,
    DEPLOYMENT,
    MINIMAL,
    NAMESPACE,
    PROVIDER,
    SERVICE,
    Run,
    stack_config,
)
from tools import summary
from tools.engine import SECRET_MASK, CloudMocks, Recording

NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
SECRET = "kubernetes:core/v1:Secret"
PASSWORD = "random:index/randomPassword:RandomPassword"
ADDRESS = "gcp:compute/address:Address"
ROUTER = "gcp:compute/router:Router"
ACCOUNT = "gcp:serviceaccount/account:Account"
IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
INTERNAL = {"networking.gke.io/load-balancer-type": "Internal"}


def _exposed(standard: dict[str, Any], **expose: Any) -> dict[str, Any]:
    config = copy.deepcopy(standard)
    config["gke-gpu:workloads"][0]["expose"] = {"port": 443, **expose}
    return config


def _problems(config: dict[str, Any], run: Run) -> str:
    with pytest.raises(ConfigError) as info:
        run(config)
    return "\n".join(info.value.problems)


def _container(recording: Recording) -> dict[str, Any]:
    pod = recording.served(DEPLOYMENT).inputs["spec"]["template"]["spec"]
    container: dict[str, Any] = pod["containers"][0]
    return container


def _workload_policy(recording: Recording) -> dict[str, Any]:
    (policy,) = [r for r in recording.of_type(NETWORK_POLICY) if r.name.startswith("service-")]
    return policy.inputs


# --- expose.type -------------------------------------------------------------------------------


def test_internal_expose_renders_an_internal_load_balancer(standard: dict, run: Run) -> None:
    recording = run(_exposed(standard, type="Internal", sourceRanges=["10.0.0.0/8"]))
    service = recording.served(SERVICE).inputs
    assert service["spec"]["type"] == "LoadBalancer", "GKE makes internal LBs from LoadBalancers"
    assert service["metadata"]["annotations"] == INTERNAL, (
        "without GKE's annotation the Service would get a public IP"
    )
    assert service["spec"]["loadBalancerSourceRanges"] == ["10.0.0.0/8"]
    outputs = recording.stack_outputs
    assert outputs["url"] == "https://10.128.0.20", (
        "the URL is the reserved internal address, over HTTPS (the certificate names it)"
    )
    assert "externalIp" not in outputs, "an internal address is not an external IP"


@pytest.mark.parametrize("type_", ["LoadBalancer", "Internal"])
def test_a_load_balancer_keeps_the_clients_address_for_the_gate(
    standard: dict, run: Run, type_: str
) -> None:
    service = run(_exposed(standard, type=type_)).served(SERVICE).inputs
    assert service["spec"].get("externalTrafficPolicy") == "Local", (
        "with the default policy (Cluster) a node forwards to another node's gate pod and "
        "replaces the client's address with its own: the gate could not tell clients apart, and "
        "its per-source limit on wrong keys would count every client as one"
    )


def test_cluster_ip_expose_creates_no_load_balancer_at_all(standard: dict, run: Run) -> None:
    recording = run(_exposed(standard, type="ClusterIP", port=8080))
    service = recording.served(SERVICE).inputs
    assert service["spec"]["type"] == "ClusterIP", "in-cluster only: no load balancer"
    assert "annotations" not in service["metadata"]
    assert not {"loadBalancerSourceRanges", "loadBalancerIP", "externalTrafficPolicy"} & set(
        service["spec"]
    )
    assert recording.of_type(ADDRESS) == []
    outputs = recording.stack_outputs
    assert outputs["endpoints"] == {"llm": "https://llm.gke-gpu.svc.cluster.local:8080"}, (
        "pods reach a ClusterIP Service by its cluster DNS name, over HTTPS through the gate"
    )
    assert "url" not in outputs and "externalIp" not in outputs, "nothing outside can reach it"


def test_default_expose_is_a_public_load_balancer_without_annotation(
    standard: dict, run: Run
) -> None:
    service = run(standard).served(SERVICE).inputs
    assert service["spec"]["type"] == "LoadBalancer"
    assert "annotations" not in service["metadata"], "LoadBalancer is the external one"


@pytest.mark.parametrize(
    ("expose", "message"),
    [
        (
            {"type": "ClusterIP", "sourceRanges": ["10.0.0.0/8"]},
            "workloads[0].expose.sourceRanges: a ClusterIP Service",
        ),
        ({"type": "ClusterIP", "staticIp": True}, "workloads[0].expose.staticIp: only a load"),
        ({"type": "NodePort"}, "workloads[0].expose.type: NodePort is for existing clusters"),
        ({"type": "Public"}, "workloads[0].expose.type"),
    ],
    ids=["cluster-ip-ranges", "cluster-ip-static", "node-port-on-gke", "unknown-type"],
)
def test_expose_settings_that_cannot_work_are_refused(
    expose: dict[str, Any], message: str, standard: dict, run: Run
) -> None:
    problems = _problems(_exposed(standard, **expose), run)
    assert message in problems, problems


# --- static addresses --------------------------------------------------------------------------


def test_a_static_ip_reserves_an_external_address_the_service_asks_for(
    standard: dict, run: Run
) -> None:
    recording = run(_exposed(standard, staticIp=True, sourceRanges=["203.0.113.0/24"]))
    address = recording.one(ADDRESS)
    assert address.inputs["addressType"] == "EXTERNAL" and address.inputs["region"] == (
        "us-central1"
    ), "a regional external address, where the passthrough load balancer lives"
    assert address.inputs["name"] == "gke-gpu-test-llm", "named after cluster and workload"
    service = recording.served(SERVICE)
    assert service.inputs["spec"]["loadBalancerIP"] == "203.0.113.20", (
        "the reserved address must be the one the load balancer gets"
    )
    assert address.urn in service.dependencies, "the Service waits for its address"
    assert recording.stack_outputs["url"] == "https://203.0.113.20"


def test_an_internal_static_ip_comes_from_the_clusters_subnetwork(standard: dict, run: Run) -> None:
    config = _exposed(standard, type="Internal", staticIp=True)
    config["gke-gpu:cluster"].update(network="acme-vpc", subnetwork="gpu-subnet")
    address = run(config).one(ADDRESS).inputs
    assert address["addressType"] == "INTERNAL" and address["subnetwork"] == "gpu-subnet", (
        "an internal load balancer's address belongs to the cluster's subnetwork"
    )


def test_a_protected_stack_protects_its_published_address(standard: dict, run: Run) -> None:
    config = _exposed(standard, staticIp=True)
    config["gke-gpu:cluster"]["deletionProtection"] = True
    assert run(config).one(ADDRESS).protect, "a protected stack keeps the address its URL uses"


def test_an_internal_static_ip_in_your_own_network_needs_the_subnetwork(
    standard: dict, run: Run
) -> None:
    config = _exposed(standard, type="Internal", staticIp=True)
    config["gke-gpu:cluster"]["network"] = "acme-vpc"
    assert "workloads[0].expose.staticIp: an internal address" in _problems(config, run)


# --- the API key -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minimal() -> Recording:
    from tools.engine import run_program

    return run_program(MINIMAL, stack="dev")


def test_a_minimal_stack_serves_vllm_behind_a_generated_secret_api_key(
    minimal: Recording,
) -> None:
    password = minimal.one(PASSWORD)
    assert password.inputs["length"] >= 32 and password.inputs["special"] is False, (
        "a long key with nothing a shell or an HTTP header needs quoted"
    )
    assert "apiKey" in minimal.secret_outputs and "apiKeys" in minimal.secret_outputs, (
        "the key is a credential: a plain output would print it in every `pulumi up`"
    )
    key = minimal.stack_outputs["apiKey"]
    assert isinstance(key, str) and len(key) == password.inputs["length"] and key.isalnum()
    assert minimal.stack_outputs["apiKeys"] == {"llm": key}


def test_the_key_reaches_vllm_through_a_secret_never_in_plain_text(minimal: Recording) -> None:
    env = {e["name"]: e for e in _container(minimal).get("env", [])}
    ref = env[API_KEY_ENV]["valueFrom"]["secretKeyRef"]
    secret = minimal.named("workload-llm-secret")
    assert ref["key"] == API_KEY_ENV and secret.inputs["stringData"] == {
        API_KEY_ENV: SECRET_MASK
    }, "vLLM reads VLLM_API_KEY; the value travels only inside a Kubernetes Secret"
    key = minimal.stack_outputs["apiKey"]
    assert all(key not in str(r.inputs) for r in minimal.resources), (
        "the key must not appear in any recorded input (the plan and the state)"
    )
    assert minimal.one(PASSWORD).outputs["result"] == SECRET_MASK, (
        "the random provider returns the key as a secret"
    )


def test_the_recording_engine_returns_a_secret_password_of_the_requested_shape() -> None:
    from pulumi.runtime import MockResourceArgs, rpc

    args = MockResourceArgs(PASSWORD, "k", {"length": 40.0, "special": False}, "", "", True)
    _, state = CloudMocks().new_resource(args)
    assert rpc.is_rpc_secret(state["result"]), "RandomPassword's result is secret"
    value = rpc.unwrap_rpc_secret(state["result"])
    assert len(value) == 40 and value.isalnum(), "the mock honours length and special"


def test_the_health_probe_stays_reachable_without_the_key(minimal: Recording) -> None:
    probe = _container(minimal)["readinessProbe"]["httpGet"]
    assert probe["path"] == "/health", (
        "vLLM's key guards /v1 only; the probes must not need it (GUARDED_PREFIX)"
    )


@pytest.mark.parametrize(
    ("change", "generated"),
    [
        ({"apiKey": False}, False),
        ({"image": "ghcr.io/acme/model-server:1.2.3"}, True),
        ({"image": "ghcr.io/acme/model-server:1.2.3", "apiKey": True}, True),
        # Its own key, from its env (a literal key in args is refused: tests/test_hostile.py).
        ({"args": ["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--api-key", "$(OWN_KEY)"]}, False),
        ({"expose": None}, False),
    ],
    ids=["turned-off", "other-server", "other-server-asks", "own-key-in-args", "not-exposed"],
)
def test_who_gets_a_generated_key(
    change: dict[str, Any], generated: bool, standard: dict, run: Run
) -> None:
    config = copy.deepcopy(standard)
    config["gke-gpu:workloads"][0].update(change)
    recording = run(config)
    assert bool(recording.of_type(PASSWORD)) is generated
    assert ("apiKey" in recording.stack_outputs) is generated
    names = {e["name"] for e in _container(recording).get("env", [])}
    assert (API_KEY_ENV in names) is generated


# Servers the image name does not give away: a mirror under another name, `vllm serve` in a team's
# own image, any other HTTP server. (image, command)
OTHER_SERVERS = {
    "renamed-mirror": ("us-docker.pkg.dev/acme/mirror/llm-server:v0.29.0", []),
    "vllm-serve-in-own-image": (
        "ghcr.io/acme/inference:1.4.0",
        ["vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct"],
    ),
}
EXISTING_CONTEXT = {"mode": "existing", "context": "lab"}


def _other_server(standard: dict, image: str, command: list[str], expose: dict) -> dict:
    config = copy.deepcopy(standard)
    workload = config["gke-gpu:workloads"][0]
    workload.update(image=image, command=command, expose={"port": 443, **expose})
    if expose.get("type") == "NodePort":  # existing clusters only
        config = {"gke-gpu:cluster": EXISTING_CONTEXT, "gke-gpu:workloads": [workload]}
        workload.update(gpu={"count": 1}, nodeSelector={"gpu": "true"}, spot=False)
    return config


@pytest.mark.parametrize("server", sorted(OTHER_SERVERS))
@pytest.mark.parametrize(
    "expose",
    [{}, {"type": "Internal", "sourceRanges": ["10.0.0.0/8"]}, {"type": "ClusterIP"}]
    + [{"type": "NodePort", "hosts": ["192.0.2.10"]}],
    ids=["LoadBalancer", "Internal", "ClusterIP", "NodePort"],
)
def test_every_exposed_server_gets_a_key_its_gate_checks_whatever_the_image_is_called(
    server: str, expose: dict, standard: dict, run: Run
) -> None:
    image, command = OTHER_SERVERS[server]
    recording = run(_other_server(standard, image, command, expose))
    assert recording.of_type(PASSWORD), (
        f"{server}: an exposed server the image name does not reveal as vLLM serves /v1/* to "
        "whoever reaches it unless the stack generates a key"
    )
    assert "apiKey" in recording.secret_outputs
    cfg = recording.named("gate-llm-config").inputs["data"]["haproxy.cfg"]
    assert "secure_memcmp" in cfg and "return status 401" in cfg, (
        f"{server}: the gate must check the key: the server itself may not read VLLM_API_KEY"
    )
    (gate,) = [d for d in recording.of_type(DEPLOYMENT) if d.name == "gate-llm-deployment"]
    env = gate.inputs["spec"]["template"]["spec"]["containers"][0]["env"]
    (ref,) = [e["valueFrom"]["secretKeyRef"] for e in env if e["name"] == "GATE_API_KEY"]
    secret = recording.named("workload-llm-secret").inputs
    assert ref == {"name": secret["metadata"]["name"], "key": API_KEY_ENV}, (
        "the gate reads the generated key from the workload's Secret"
    )


def test_a_server_served_without_a_key_says_so_in_plain_words(standard: dict) -> None:
    raw = {k.split(":", 1)[1]: v for k, v in standard.items() if k.startswith("gke-gpu:")}
    raw["workloads"][0].update(image="ghcr.io/acme/inference:1.4.0", apiKey=False)
    config = load(raw, project="acme-ml-test", region="us-central1", stack="test")
    assert config.workloads[0].api_key is False, "an explicit apiKey: false is kept"
    lines = "\n".join(summary.exposure_lines(config, config.workloads[0]))
    assert "NO KEY (apiKey: false): anyone who reaches the endpoint" in lines, (
        f"a reviewer must read that the endpoint is open:\n{lines}"
    )
    raw["workloads"][0].pop("apiKey")
    config = load(raw, project="acme-ml-test", region="us-central1", stack="test")
    lines = "\n".join(summary.exposure_lines(config, config.workloads[0]))
    assert "requires the key on every request" in lines and "may not read" in lines, (
        f"with another image the plan says the gate, not the server, checks the key:\n{lines}"
    )


def test_a_generated_key_next_to_the_workloads_own_key_is_refused(standard: dict, run: Run) -> None:
    config = copy.deepcopy(standard)
    config["gke-gpu:workloads"][0].update(apiKey=True, env={API_KEY_ENV: "mine"})
    assert "workloads[0].apiKey: the workload already sets its own key" in _problems(config, run)


def test_the_api_key_output_belongs_to_the_workload_the_url_points_to(
    standard: dict, run: Run
) -> None:
    config = copy.deepcopy(standard)
    first = config["gke-gpu:workloads"][0]
    config["gke-gpu:workloads"] = [
        {**first, "name": "batch", "expose": {"type": "ClusterIP", "port": 8000}},
        {**first, "name": "chat"},
    ]
    config["gke-gpu:nodePools"][0]["maxNodes"] = 4
    outputs = run(config).stack_outputs
    assert outputs["url"] == "https://203.0.113.20", "the chat LoadBalancer is the url"
    assert outputs["apiKey"] == outputs["apiKeys"]["chat"] != outputs["apiKeys"]["batch"], (
        "the curl in the README pairs `url` with `apiKey`: both must be the same workload's"
    )


# --- NetworkPolicy -----------------------------------------------------------------------------


def test_the_namespace_denies_all_ingress_by_default(minimal: Recording) -> None:
    (deny,) = [r for r in minimal.of_type(NETWORK_POLICY) if r.name == "namespace-deny-ingress"]
    assert deny.inputs["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}, (
        "every pod of the namespace is isolated unless a policy admits traffic"
    )
    assert minimal.one(NAMESPACE).urn in deny.dependencies, "created once the namespace exists"


def test_an_exposed_workload_admits_only_the_gates_tls_port_from_anywhere(
    minimal: Recording,
) -> None:
    policy = _workload_policy(minimal)
    selector = minimal.served(SERVICE).inputs["spec"]["selector"]
    assert policy["spec"]["podSelector"] == {"matchLabels": selector}, (
        "the policy must select exactly the pods the Service sends traffic to: the gate's"
    )
    assert policy["spec"]["ingress"] == [{"ports": [{"protocol": "TCP", "port": 8443}]}], (
        "the gate's TLS port, from any source: the load balancer enforces sourceRanges"
    )


def test_only_the_gate_reaches_the_model_server(minimal: Recording) -> None:
    deployment = minimal.served(DEPLOYMENT)
    model_labels = deployment.inputs["spec"]["selector"]["matchLabels"]
    (policy,) = [r for r in minimal.of_type(NETWORK_POLICY) if r.name == "gate-llm-netpol"]
    gate = minimal.named("gate-llm-deployment").inputs["spec"]["selector"]
    assert policy.inputs["spec"]["podSelector"] == {"matchLabels": model_labels}
    assert policy.inputs["spec"]["ingress"] == [
        {"from": [{"podSelector": gate}], "ports": [{"protocol": "TCP", "port": 8000}]}
    ], "vLLM serves /invocations without its key: nothing but the gate may reach its port"
    assert minimal.served(SERVICE).inputs["spec"]["selector"] == gate["matchLabels"], (
        "the load balancer must send traffic to the gate, never to the model's pods"
    )
    assert not set(model_labels.items()) <= set(gate["matchLabels"].items()), (
        "the model's selector must not match gate pods (or the Deployment would adopt them)"
    )


def test_a_cluster_ip_workload_admits_its_port_only_from_its_namespace(
    standard: dict, run: Run
) -> None:
    policy = _workload_policy(run(_exposed(standard, type="ClusterIP")))
    (rule,) = policy["spec"]["ingress"]
    assert rule["from"] == [{"podSelector": {}}], "pods of the same namespace only"


def test_an_unexposed_workload_gets_no_admitting_policy(standard: dict, run: Run) -> None:
    config = copy.deepcopy(standard)
    config["gke-gpu:workloads"][0]["expose"] = None
    recording = run(config)
    admitting = [
        r.name
        for r in recording.of_type(NETWORK_POLICY)
        if "Ingress" in r.inputs["spec"]["policyTypes"]
    ]
    assert admitting == ["namespace-deny-ingress"], (
        "nothing serves it from outside, so default deny is all it gets"
    )


def test_standard_clusters_enforce_policies_with_dataplane_v2(standard: dict, run: Run) -> None:
    assert run(standard).one(CLUSTER).inputs["datapathProvider"] == "ADVANCED_DATAPATH", (
        "without Dataplane V2 a Standard cluster ignores NetworkPolicy objects"
    )
    config = copy.deepcopy(standard)
    config["gke-gpu:cluster"]["dataplaneV2"] = False
    assert "datapathProvider" not in run(config).one(CLUSTER).inputs, (
        "an older cluster keeps its datapath: changing it would replace the cluster"
    )


def test_autopilot_has_dataplane_v2_already(minimal: Recording, run: Run) -> None:
    assert "datapathProvider" not in minimal.one(CLUSTER).inputs, "Autopilot manages it"
    config = {**MINIMAL, "gke-gpu:cluster": {"dataplaneV2": False}}
    assert "cluster.dataplaneV2: Autopilot clusters always run" in _problems(config, run)


# --- your own VPC ------------------------------------------------------------------------------


def test_network_subnetwork_and_ranges_reach_the_cluster_and_nat(standard: dict, run: Run) -> None:
    config = copy.deepcopy(standard)
    config["gke-gpu:cluster"].update(
        network="acme-vpc",
        subnetwork="projects/acme-ml-test/regions/us-central1/subnetworks/gpu-subnet",
        podRange="gpu-pods",
        serviceRange="gpu-services",
        privateNodes=True,
    )
    recording = run(config)
    cluster = recording.one(CLUSTER).inputs
    assert cluster["network"] == "acme-vpc"
    assert cluster["subnetwork"].endswith("/subnetworks/gpu-subnet")
    assert cluster["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "gpu-pods",
        "servicesSecondaryRangeName": "gpu-services",
    }
    assert recording.one(ROUTER).inputs["network"] == "acme-vpc", (
        "Cloud NAT must serve the network the nodes are in"
    )


def test_the_default_network_stays_the_default(minimal: Recording) -> None:
    cluster = minimal.one(CLUSTER).inputs
    assert cluster["network"] == "default" and "ipAllocationPolicy" not in cluster


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        ({"subnetwork": "gpu-subnet"}, "cluster.subnetwork: set without cluster.network"),
        ({"network": "Acme_VPC"}, "cluster.network: 'Acme_VPC' is neither a network name"),
        (
            {
                "network": "acme-vpc",
                "subnetwork": "projects/acme-ml-test/regions/europe-west4/subnetworks/s",
            },
            "is in region 'europe-west4', but the cluster is in 'us-central1'",
        ),
        ({"podRange": "gpu-pods"}, "cluster.podRange: names a secondary range"),
        ({"nodeServiceAccount": "nodes@acme"}, "cluster.nodeServiceAccount: 'nodes@acme' is not"),
    ],
    ids=["subnet-without-network", "bad-name", "other-region", "range-without-subnet", "bad-sa"],
)
def test_network_settings_are_validated(
    cluster: dict[str, Any], message: str, standard: dict, run: Run
) -> None:
    config = copy.deepcopy(standard)
    config["gke-gpu:cluster"].update(cluster)
    problems = _problems(config, run)
    assert message in problems, problems


def test_network_keys_are_refused_on_an_existing_cluster() -> None:
    raw = {"cluster": {"mode": "existing", "context": "kind-gpu", "network": "acme-vpc"}}
    with pytest.raises(ConfigError) as info:
        load(raw, project=None, region=None, stack="test")
    assert any(
        p.startswith("cluster.network: configures a GKE cluster") for p in info.value.problems
    )


def test_a_given_node_service_account_is_used_and_none_is_created(standard: dict, run: Run) -> None:
    config = copy.deepcopy(standard)
    email = "gpu-nodes@acme-ml-test.iam.gserviceaccount.com"
    config["gke-gpu:cluster"]["nodeServiceAccount"] = email
    recording = run(config)
    assert recording.of_type(ACCOUNT) == [] and recording.of_type(IAM_MEMBER) == [], (
        "the deploy identity needs no right to create accounts or grant roles"
    )
    pools = recording.of_type("gcp:container/nodePool:NodePool")
    assert pools and all(p.inputs["nodeConfig"]["serviceAccount"] == email for p in pools)


# --- the control plane -------------------------------------------------------------------------


def test_prod_asks_for_the_external_dns_endpoint_and_the_kubeconfig_uses_it(
    prod: Recording,
) -> None:
    cluster = prod.one(CLUSTER).inputs
    assert cluster["masterAuthorizedNetworksConfig"]["cidrBlocks"], "the IP endpoint stays limited"
    assert cluster["controlPlaneEndpointsConfig"] == {
        "dnsEndpointConfig": {"allowExternalTraffic": True}
    }, "CI's hosted runners reach the control plane only through the DNS endpoint (dnsEndpoint)"
    kubeconfig = yaml.safe_load(prod.stack_outputs["kubeconfig"])
    server = kubeconfig["clusters"][0]["cluster"]
    assert server["server"].startswith("https://gke-") and server["server"].endswith(".gke.goog")
    assert "certificate-authority-data" not in server, (
        "the DNS endpoint's certificate is publicly trusted; gcloud writes no CA for it either"
    )
    provider = prod.one(PROVIDER)
    assert provider.inputs["kubeconfig"] == SECRET_MASK, "the provider's kubeconfig is secret"


def test_without_authorized_networks_the_ip_endpoint_is_used(minimal: Recording) -> None:
    assert minimal.one(CLUSTER).inputs["controlPlaneEndpointsConfig"] == {
        "dnsEndpointConfig": {"allowExternalTraffic": False}
    }, "the DNS endpoint admits users only when cluster.dnsEndpoint asks"
    server = yaml.safe_load(minimal.stack_outputs["kubeconfig"])["clusters"][0]["cluster"]
    assert server["server"] == "https://198.51.100.1" and "certificate-authority-data" in server


# --- production is the stack's own marker ------------------------------------------------------


def _findings(recording: Recording, stack: str) -> list[str]:
    return [
        f"[{v.rule}] {v.message}"
        for r in recording.resources
        for v in evaluate_rules(r.type, r.inputs, stack)
        if v.enforcement == "mandatory"
    ]


def test_the_prod_stack_under_another_name_still_fails_an_open_load_balancer(run: Run) -> None:
    # The config layer already refuses an open production endpoint (tests/test_cluster_posture.py);
    # the pack is the second line, for a Service changed outside that path: open it by hand.
    recording = run(stack_config("prod"), stack="eu-west")
    service = recording.served(SERVICE)
    spec = {k: v for k, v in service.inputs["spec"].items() if k != "loadBalancerSourceRanges"}
    findings = [
        f"[{v.rule}] {v.message}"
        for v in evaluate_rules(SERVICE, {**service.inputs, "spec": spec}, "eu-west")
        if v.enforcement == "mandatory"
    ]
    assert any("[load-balancers-restricted-in-prod]" in f for f in findings), (
        "production follows cluster.production, not the stack's name"
    )


def test_the_prod_stack_under_another_name_still_needs_deletion_protection(run: Run) -> None:
    config = stack_config("prod")
    config["gke-gpu:cluster"]["deletionProtection"] = False
    findings = _findings(run(config, stack="blue"), "blue")
    assert any("[deletion-protection-in-prod]" in f for f in findings)


def test_a_stack_named_prod_without_the_marker_is_not_production(run: Run) -> None:
    assert _findings(run(MINIMAL, stack="prod"), "prod") == [], (
        "the name alone makes nothing production: a minimal stack serves with its API key"
    )


def test_the_production_marker_reaches_the_cluster_and_the_service(prod: Recording) -> None:
    assert prod.one(CLUSTER).inputs["resourceLabels"] == {"gke-gpu-production": "true"}
    assert prod.served(SERVICE).inputs["metadata"]["labels"]["gke-gpu/production"] == "true"


# --- the review summary ------------------------------------------------------------------------


def test_the_summary_says_who_can_reach_each_workload(standard: dict) -> None:
    raw = {k.split(":", 1)[1]: v for k, v in standard.items() if k.startswith("gke-gpu:")}
    raw["workloads"][0]["expose"] = {"type": "Internal", "sourceRanges": ["10.0.0.0/8"]}
    config = load(raw, project="acme-ml-test", region="us-central1", stack="test")
    internal = "\n".join(summary.exposure_lines(config, config.workloads[0]))
    assert "HTTPS, internal (VPC-only load balancer) port 443" in internal
    assert "10.0.0.0/8" in internal and "/v1/chat/completions" in internal
    assert "requires the key on every request" in internal and "caCertificate" in internal
    assert "reaches the model server directly: nothing" in internal
    assert "Dataplane V2 enforces it" in internal
    raw["workloads"][0]["expose"] = {"port": 80, "type": "ClusterIP"}
    raw["workloads"][0]["apiKey"] = False
    raw["cluster"]["dataplaneV2"] = False
    config = load(raw, project="acme-ml-test", region="us-central1", stack="test")
    in_cluster = "\n".join(summary.exposure_lines(config, config.workloads[0]))
    assert "in-cluster (ClusterIP)" in in_cluster and "NO KEY (apiKey: false)" in in_cluster
    assert "NOT enforced" in in_cluster, "a reviewer must see that the policy does nothing"


def test_the_program_and_the_policy_pack_agree_on_the_production_labels() -> None:
    from components.facts import labels
    from policy import rules

    assert labels.PRODUCTION_LABEL == rules.PRODUCTION_LABEL, (
        "the pack would never see a production Service and let an open one through"
    )
    assert labels.PRODUCTION_CLUSTER_LABEL == rules.PRODUCTION_CLUSTER_LABEL


def test_a_kubeconfig_falls_back_to_the_ip_endpoint_until_gke_reports_the_dns_one() -> None:
    from types import SimpleNamespace

    from components.platform.kubeconfig import endpoint_kubeconfig

    reported = SimpleNamespace(dns_endpoint_config=SimpleNamespace(endpoint="gke-1.x.gke.goog"))
    dns = yaml.safe_load(endpoint_kubeconfig("c", "198.51.100.1", "Q0E=", reported))
    assert dns["clusters"][0]["cluster"] == {"server": "https://gke-1.x.gke.goog"}
    pending = yaml.safe_load(endpoint_kubeconfig("c", "198.51.100.1", "Q0E=", None))
    assert pending["clusters"][0]["cluster"] == {
        "server": "https://198.51.100.1",
        "certificate-authority-data": "Q0E=",
    }, "a cluster being updated keeps a working kubeconfig until the DNS endpoint exists"


def test_the_dns_endpoint_is_read_from_objects_and_from_dicts() -> None:
    from types import SimpleNamespace

    from components.platform.kubeconfig import dns_endpoint_of

    as_object = SimpleNamespace(dns_endpoint_config=SimpleNamespace(endpoint="a.gke.goog"))
    as_dict = {"dns_endpoint_config": {"endpoint": "a.gke.goog"}}
    assert dns_endpoint_of(as_object) == dns_endpoint_of(as_dict) == "a.gke.goog", (
        "Output.all passes nested provider types as dicts, .apply as objects"
    )


def test_an_autoscaled_workload_lets_the_prometheus_collectors_scrape_its_port(run: Run) -> None:
    config = {
        **MINIMAL,
        "gke-gpu:workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "cache": {"size": "30Gi"},
                "autoscale": {"minReplicas": 1, "maxReplicas": 3},
                "expose": {"type": "ClusterIP", "port": 8000},
            }
        ],
    }
    recording = run(config)
    scrape = recording.named("namespace-scrape-llm")
    (rule,) = scrape.inputs["spec"]["ingress"]
    assert rule["from"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gmp-system"}},
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "collector"}},
        },
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gke-gmp-system"}}},
    ], (
        "the HPA's metric comes from Managed Service for Prometheus' collector pods in gmp-system "
        "(Standard) or GKE's managed gke-gmp-system (Autopilot, issue 45); the port also serves "
        "the API, so nothing else in gmp-system (the rule evaluator, the operator) may reach it"
    )
    assert rule["ports"] == [{"protocol": "TCP", "port": 8000}]
    selector = recording.named("workload-llm-deployment").inputs["spec"]["selector"]
    assert scrape.inputs["spec"]["podSelector"] == selector, (
        "the collectors scrape the model's pods, not the gate's"
    )
    quiet = {**MINIMAL, "gke-gpu:monitoring": {"dashboard": False, "alerts": False}}
    assert [r for r in run(quiet).of_type(NETWORK_POLICY) if "scrape" in r.name] == [], (
        "without autoscale or the stack's dashboard nothing needs to scrape the pods"
    )


def test_the_plan_says_the_collectors_reach_the_whole_port_not_only_metrics() -> None:
    raw = {
        "workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "cache": {"size": "30Gi"},
                "autoscale": {"minReplicas": 1, "maxReplicas": 3},
                "expose": {"type": "LoadBalancer"},
            }
        ]
    }
    config = load(raw, project="acme-ml-test", region="us-central1", stack="test")
    (line,) = [
        line
        for line in summary.exposure_lines(config, config.workloads[0])
        if "reaches the model server directly" in line
    ]
    assert (
        "collectors (gmp-system; gke-gmp-system on Autopilot), to port 8000, which serves the "
        "API as well as /metrics"
        in (line)
        and "directly: no client;" in line
        and "nothing" not in line
    ), (
        "a NetworkPolicy admits a port, not a path: the plan must not promise that the collectors "
        f"reach /metrics alone: {line}"
    )


def test_a_mirrored_vllm_image_is_protected_by_an_api_key_too(run: Run) -> None:
    config = {
        **MINIMAL,
        "gke-gpu:workloads": [
            {
                "name": "llm",
                "image": "us-docker.pkg.dev/acme/mirror/vllm-openai:v0.29.0",
                "gpu": {"type": "nvidia-l4", "count": 1},
                "cache": {"size": "30Gi"},
                "expose": {"port": 80},
            }
        ],
    }
    recording = run(config)
    assert recording.of_type("random:index/randomPassword:RandomPassword"), (
        "a mirror of vLLM's server is the same open model API: it needs the generated key"
    )
    assert "apiKey" in recording.secret_outputs


# --- the gate's settings -----------------------------------------------------------------------


def test_gate_settings_that_would_open_or_break_the_gate_are_refused_at_once(
    standard: dict, run: Run
) -> None:
    config = _exposed(
        standard,
        paths=["/", "/v1/../invocations", "/v1/%2e", "/v1/chat*", "/v1/models"],
        hosts=["not a host", "gpu.example.com", "192.0.2.10"],
        staticIp=False,
    )
    problems = _problems(config, run)
    assert "workloads[0].expose.paths[0]: '/' is an exact path" in problems
    assert "workloads[0].expose.paths[1]: '/v1/../invocations' holds '.', '..'" in problems
    assert "workloads[0].expose.paths[2]: '/v1/%2e' is not a path the gate can match" in problems
    assert "workloads[0].expose.paths[3]: '/v1/chat*' is not a path the gate can match" in problems
    assert "paths[4]" not in problems and "hosts[1]" not in problems, "valid items pass"
    assert "workloads[0].expose.hosts[0]: 'not a host' is neither an IP address" in problems
    assert "workloads[0].expose.staticIp: the stack's certificate names the load balancer's" in (
        problems
    ), "a certificate for an address known only after the Service exists cannot be issued first"


def test_the_refusal_of_a_root_path_says_what_the_gate_would_match(
    standard: dict, run: Run
) -> None:
    root, everything = (re.compile(haproxy.path_regex([p])) for p in ("/", "/*"))
    assert root.match("/") and not root.match("/v1/models"), "an exact '/' is the root page only"
    assert everything.match("/v1/models") and everything.match("/admin/config")
    problems = _problems(_exposed(standard, paths=["/", "/*"]), run)
    assert "paths[0]: '/' is an exact path: it forwards the root page alone, no path under it" in (
        problems
    ), "the message must say what the gate would really do with '/'"
    assert "'/' would forward every path" not in problems, (
        "telling a user that '/' opens every path is false: the gate matches it exactly"
    )
    assert "paths[1]: '/*' would forward every path, including a server's admin" in problems


def test_an_exposed_workload_may_not_share_its_gate_objects_names(standard: dict, run: Run) -> None:
    config = copy.deepcopy(standard)
    first = config["gke-gpu:workloads"][0]
    config["gke-gpu:workloads"] = [first, {**first, "name": "llm-model"}]
    problems = _problems(config, run)
    assert "workloads[1].name: 'llm-model' makes a Service called 'llm-model', which the " in (
        problems
    ), "the gate of llm forwards to the Service llm-model: a second one would steal its traffic"


def test_plain_http_is_an_explicit_choice_and_the_url_says_so(standard: dict, run: Run) -> None:
    recording = run(_exposed(standard, tls=False, port=80))
    assert recording.stack_outputs["url"] == "http://203.0.113.10", (
        "without TLS nothing needs a reserved address, and the URL says http"
    )
    assert recording.of_type("tls:index/locallySignedCert:LocallySignedCert") == []
    assert "caCertificate" not in recording.stack_outputs
    config = recording.named("gate-llm-config").inputs["data"]["haproxy.cfg"]
    assert "bind :8080\n" in config and "ssl" not in config.split("frontend api")[1]
    assert "secure_memcmp" in config, "the key is still required on every request"


def test_the_certificate_names_the_reserved_address_and_the_cluster_names(
    minimal: Recording,
) -> None:
    request = minimal.named("cert-llm-request").inputs
    address = minimal.one(ADDRESS).outputs.get("address") or "203.0.113.20"
    assert request["ipAddresses"] == [address], "clients verify the URL's address"
    assert "llm.gke-gpu.svc.cluster.local" in request["dnsNames"], "and pods the Service name"
    key = minimal.named("cert-llm-key")
    assert key.outputs["privateKeyPem"] == SECRET_MASK, "the private key is a secret in state"
    secret = minimal.named("gate-llm-tls").inputs
    assert secret["stringData"] == {"gate.pem": SECRET_MASK}, "and in the cluster"


def test_the_stacks_certificates_live_short_and_renew_before_they_expire(
    minimal: Recording,
) -> None:
    """Issue 30 L9: a CA lived ten years and a leaked key (it sits in the stack's state) with it."""
    ca = minimal.one("tls:index/selfSignedCert:SelfSignedCert").inputs
    assert ca["isCaCertificate"] is True and ca["setSubjectKeyId"] is True
    assert ca["validityPeriodHours"] <= 3 * 365 * 24, (
        "the stack's CA lives three years at most: its key in the state is not good for a decade"
    )
    assert 0 < ca.get("earlyRenewalHours", 0) < ca["validityPeriodHours"], (
        "without an early-renewal window the CA just expires, and every client with it; with one, "
        "a `pulumi up` in its last days replaces it (and the preview says so first)"
    )
    (server,) = minimal.of_type("tls:index/locallySignedCert:LocallySignedCert")
    hours = server.inputs["validityPeriodHours"]
    assert hours <= 200 * 24, "a server certificate lives months, not a year (clients trust the CA)"
    assert 0 < server.inputs["earlyRenewalHours"] < hours
    assert (
        not server.inputs.get("isCaCertificate")
        and "cert_signing" not in (server.inputs["allowedUses"])
    ), "the CA signs only server certificates, which cannot sign: the chain stops there"
    assert "maxPathLength" not in ca, (
        "pulumi-tls writes max_path_length 0 as no constraint (Go's MaxPathLenZero is never set) "
        "and the input replaces the CA: it must not be set as if it constrained anything"
    )


def _advisories(workload: dict[str, Any]) -> list[str]:
    raw = {"workloads": [{"name": "app", "port": 8888, **workload}]}
    config = load(raw, project=MINIMAL["gcp:project"], region="us-central1", stack="t")
    return [a for a in config.advisories if "expose.paths" in a]


def test_a_server_not_known_as_vllm_behind_the_default_allowlist_gets_a_warning() -> None:
    jupyter = {"image": "tensorflow/tensorflow:2.17.0-gpu-jupyter", "expose": {"port": 443}}
    (advisory,) = _advisories(jupyter)
    assert advisory.startswith("workloads[0].expose.paths: tensorflow/tensorflow"), advisory
    assert "/v1/*" in advisory and "404" in advisory, (
        "the plan says what the gate would serve (/v1/* only) and what the rest gets"
    )
    assert "workloads[0].expose.paths" in advisory.split(":", 1)[1], "and which key to set"
    listed = {**jupyter, "expose": {"port": 443, "paths": ["/lab", "/api/*"]}}
    assert _advisories(listed) == [], "paths chosen: nothing to warn about"
    vllm = {"image": "vllm/vllm-openai:v0.29.0", "cache": {"size": "30Gi"}, "expose": {"port": 443}}
    assert _advisories(vllm) == [], "a vLLM server's default allowlist is its own API"
