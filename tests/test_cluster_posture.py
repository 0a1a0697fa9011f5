"""The cluster's own posture: who reaches the control plane, Secrets under the stack's KMS key,
Binary Authorization and GKE's security posture, and what `cluster.production` demands of the
config before anything is created (issue 19)."""

from __future__ import annotations

import copy
import importlib
from typing import Any

import pytest
import yaml

from components.config import ClusterConfig, ConfigError, load
from components.config.rules import exposure
from components.facts import pins
from components.platform import cluster_settings
from tests.conftest import CLUSTER, MINIMAL, PROVIDER, Run, stack_config
from tools.engine import CONTROL_PLANE_IP, Recording

KEY = "projects/acme-ml-prod/locations/us-central1/keyRings/gke-gpu/cryptoKeys/gpu-prod-secrets"
PROD_CLUSTER_URN = (
    "urn:pulumi:prod::gke-gpu::gke-gpu:index:GkeCluster$gcp:container/cluster:Cluster::gke-cluster"
)


def _server(recording: Recording) -> dict[str, str]:
    document = yaml.safe_load(recording.stack_outputs["kubeconfig"])
    cluster: dict[str, str] = document["clusters"][0]["cluster"]
    return cluster


def _raw(stack: str) -> dict[str, Any]:
    """A stack file's gke-gpu keys without the namespace, as `load` takes them."""
    return {
        k.split(":", 1)[1]: copy.deepcopy(v)
        for k, v in stack_config(stack).items()
        if k.startswith("gke-gpu:")
    }


def _problems(raw: dict[str, Any], region: str = "us-central1") -> list[str]:
    with pytest.raises(ConfigError) as error:
        load(raw, project="acme-ml-prod", region=region, stack="prod")
    return error.value.problems


def _about(problems: list[str], path: str) -> list[str]:
    return [p for p in problems if p.startswith(f"{path}:") or p.startswith(f"{path}[")]


# --- what the engine receives ------------------------------------------------------------------


def test_prod_encrypts_its_secrets_with_the_configured_kms_key(prod: Recording) -> None:
    assert prod.one(CLUSTER).inputs["databaseEncryption"] == {
        "state": "ENCRYPTED",
        "keyName": KEY,
    }, (
        "without application-layer encryption a copy of the cluster's database holds the API "
        "keys readable by anyone with Google's keys"
    )


def test_prod_authorized_networks_shut_out_every_other_google_cloud_address(
    prod: Recording,
) -> None:
    networks = prod.one(CLUSTER).inputs["masterAuthorizedNetworksConfig"]
    assert networks["gcpPublicCidrsAccessEnabled"] is False, (
        "authorized networks otherwise still admit the public IP of any VM anyone runs on "
        "Google Cloud"
    )
    assert [b["cidrBlock"] for b in networks["cidrBlocks"]] == ["203.0.113.0/24"]


def test_prod_evaluates_the_projects_binary_authorization_policy(prod: Recording) -> None:
    assert prod.one(CLUSTER).inputs["binaryAuthorization"] == {
        "evaluationMode": "PROJECT_SINGLETON_POLICY_ENFORCE"
    }, "a production cluster admits images only as the project's policy (audit or enforce) says"


def test_every_cluster_gets_the_posture_standard_tier_and_no_removed_scanning_tier(
    prod: Recording, dev: Recording
) -> None:
    for recording in (prod, dev):
        posture = recording.one(CLUSTER).inputs["securityPostureConfig"]
        assert posture == {"mode": "BASIC"}, (
            "configuration audit on every cluster; VULNERABILITY_BASIC was shut down on "
            "2025-07-31 and GKE refuses to enable a removed tier"
        )


def test_prod_reaches_its_control_plane_through_the_dns_endpoint_it_asks_for(
    prod: Recording,
) -> None:
    endpoints = prod.one(CLUSTER).inputs["controlPlaneEndpointsConfig"]
    assert endpoints == {"dnsEndpointConfig": {"allowExternalTraffic": True}}, (
        "CI on hosted runners deploys prod through the DNS endpoint (cluster.dnsEndpoint)"
    )
    assert _server(prod)["server"].endswith(".gke.goog")


def test_dev_dns_endpoint_admits_no_user_and_its_kubeconfig_uses_the_ip(dev: Recording) -> None:
    endpoints = dev.one(CLUSTER).inputs["controlPlaneEndpointsConfig"]
    assert endpoints == {"dnsEndpointConfig": {"allowExternalTraffic": False}}, (
        "sent explicitly: the provider keeps a left-out block as it is, so an endpoint once "
        "opened would stay open"
    )
    server = _server(dev)
    assert server["server"] == f"https://{CONTROL_PLANE_IP}"
    assert "certificate-authority-data" in server, "the IP endpoint's certificate is the cluster CA"


def test_authorized_networks_alone_no_longer_open_the_dns_endpoint(run: Run) -> None:
    config = {**MINIMAL, "gke-gpu:cluster": {"masterAuthorizedNetworks": ["203.0.113.0/24"]}}
    recording = run(config)
    inputs = recording.one(CLUSTER).inputs
    assert inputs["controlPlaneEndpointsConfig"]["dnsEndpointConfig"] == {
        "allowExternalTraffic": False
    }, "only cluster.dnsEndpoint: external lets users past the networks, through IAM"
    assert _server(recording)["server"] == f"https://{CONTROL_PLANE_IP}", (
        "`pulumi up` then runs from inside the authorized networks, against the IP endpoint"
    )


def test_dev_sets_no_secrets_key_and_no_binary_authorization(dev: Recording) -> None:
    inputs = dev.one(CLUSTER).inputs
    assert "databaseEncryption" not in inputs and "binaryAuthorization" not in inputs, (
        "outside production nothing asks for them, and dev's project has no key or policy"
    )


def test_a_production_autopilot_cluster_gets_the_same_posture(run: Run) -> None:
    config = {
        **MINIMAL,
        "gke-gpu:cluster": {
            "mode": "autopilot",
            "production": True,
            "privateNodes": True,
            "masterAuthorizedNetworks": ["203.0.113.0/24"],
            "secretsEncryptionKey": KEY,
        },
        "gke-gpu:workloads": [
            {
                "name": "llm",
                "image": pins.VLLM_IMAGE,  # production pins images by digest
                "cache": {"size": "30Gi"},
                "expose": {"port": 443, "sourceRanges": ["198.51.100.0/24"]},
            }
        ],
    }
    inputs = run(config).one(CLUSTER).inputs
    assert inputs["enableAutopilot"] is True
    assert inputs["databaseEncryption"]["state"] == "ENCRYPTED"
    assert inputs["binaryAuthorization"]["evaluationMode"] == "PROJECT_SINGLETON_POLICY_ENFORCE"
    assert inputs["masterAuthorizedNetworksConfig"]["gcpPublicCidrsAccessEnabled"] is False


def test_the_prod_cluster_and_its_provider_keep_their_urns(prod: Recording) -> None:
    assert prod.by_urn(PROD_CLUSTER_URN) is not None, (
        "a renamed cluster is a new cluster: Pulumi would replace the deployed one"
    )
    provider = prod.one(PROVIDER)
    assert provider.name == "gke-k8s" and provider.inputs["clusterIdentifier"], (
        "the provider is replaced only when the cluster is"
    )


def test_no_setting_that_replaces_the_prod_cluster_changed(
    prod: Recording,
) -> None:
    # What the Google provider marks ForceNew on the cluster cannot be read offline; the fields
    # this change sets are the ones cited in-place in components/platform/cluster_settings.py, and
    # none of
    # the settings that do replace a cluster (network, subnetwork, datapathProvider) moved.
    cluster = prod.one(CLUSTER)
    assert cluster.protect and cluster.inputs["deletionProtection"] is True
    assert cluster.inputs["datapathProvider"] == "ADVANCED_DATAPATH"
    assert cluster.inputs["network"] == "default" and "subnetwork" not in cluster.inputs


# --- production, refused by the config layer ---------------------------------------------------


def test_the_prod_stack_file_meets_every_production_rule() -> None:
    config = load(_raw("prod"), project="acme-ml-prod", region="us-central1", stack="prod")
    assert config.cluster.production


def test_production_without_its_cluster_guarantees_lists_every_missing_one() -> None:
    raw = _raw("prod")
    for key in ("privateNodes", "masterAuthorizedNetworks", "secretsEncryptionKey"):
        del raw["cluster"][key]
    problems = _problems(raw)
    assert _about(problems, "cluster.privateNodes"), "a production node has no public IP"
    assert _about(problems, "cluster.masterAuthorizedNetworks"), (
        "a production control plane lists the networks allowed to reach it"
    )
    (key,) = _about(problems, "cluster.secretsEncryptionKey")
    assert "docs/delivery.md" in key, "the message says where the key comes from"


def test_production_refuses_binary_authorization_turned_off() -> None:
    raw = _raw("prod")
    raw["cluster"]["binaryAuthorization"] = False
    (problem,) = _problems(raw)
    assert problem.startswith("cluster.binaryAuthorization: false in a production stack")


def test_binary_authorization_follows_production_unless_set() -> None:
    raw = _raw("dev")
    dev = load(raw, project="acme-ml-dev", region="us-central1", stack="dev").cluster
    assert isinstance(dev, ClusterConfig) and dev.binary_authorization is False
    raw["cluster"]["binaryAuthorization"] = True
    asked = load(raw, project="acme-ml-dev", region="us-central1", stack="dev").cluster
    assert isinstance(asked, ClusterConfig) and asked.binary_authorization, "any stack may ask"


@pytest.mark.parametrize(
    "networks",
    [["0.0.0.0/0"], ["0.0.0.0/1", "128.0.0.0/1"], ["::/0"], ["203.0.113.0/24", "0.0.0.0/0"]],
)
def test_authorized_networks_that_admit_everyone_are_refused_in_every_stack(
    networks: list[str],
) -> None:
    raw = _raw("dev")
    raw["cluster"]["masterAuthorizedNetworks"] = networks
    (problem,) = _problems(raw)
    assert problem.startswith("cluster.masterAuthorizedNetworks: together admit every IPv")
    assert "restrict nothing" in problem and "remove masterAuthorizedNetworks" in problem, (
        "the user learns it is the same as not setting it, and both ways out"
    )


def test_production_refuses_ranges_wider_than_a_16_or_a_48() -> None:
    raw = _raw("prod")
    raw["cluster"]["masterAuthorizedNetworks"] = ["10.0.0.0/8", "172.16.0.0/16"]
    raw["workloads"][0]["expose"]["sourceRanges"] = ["2001:db8::/32", "198.51.100.0/24"]
    problems = {p.split(":", 1)[0]: p for p in _problems(raw)}
    assert sorted(problems) == [
        "cluster.masterAuthorizedNetworks[0]",
        "workloads[0].expose.sourceRanges[0]",
    ], "a /16 and a /24 pass; the /8 and the IPv6 /32 are named by key path"
    wide = problems["cluster.masterAuthorizedNetworks[0]"]
    assert "16,777,216 addresses" in wide and "/16 or narrower" in wide


def test_an_ipv4_mapped_range_counts_as_the_ipv4_range_it_names() -> None:
    raw = _raw("prod")
    raw["workloads"][0]["expose"]["sourceRanges"] = ["::ffff:0.0.0.0/97"]
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].expose.sourceRanges[0]: '::ffff:0.0.0.0/97' admits"), (
        "an IPv6 /97 inside ::ffff:0:0/96 is half of the IPv4 internet"
    )


def test_production_refuses_source_ranges_that_add_up_to_the_internet() -> None:
    raw = _raw("prod")
    raw["workloads"][0]["expose"]["sourceRanges"] = ["0.0.0.0/1", "128.0.0.0/1"]
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].expose.sourceRanges: together admit every IPv4")
    assert "open to the whole internet" in problem


def test_production_refuses_a_public_endpoint_open_to_everyone() -> None:
    raw = _raw("prod")
    del raw["workloads"][0]["expose"]["sourceRanges"]
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].expose.sourceRanges: not set")
    assert "expose.type: Internal" in problem, "the message offers the VPC-only alternative"


def test_production_refuses_plain_http_on_a_public_endpoint() -> None:
    raw = _raw("prod")
    raw["workloads"][0]["expose"]["tls"] = False
    raw["workloads"][0]["expose"]["staticIp"] = True
    (problem,) = _problems(raw)
    assert problem.startswith("workloads[0].expose.tls: false serves the API key")


def test_production_refuses_a_standard_cluster_that_ignores_network_policies() -> None:
    raw = _raw("prod")
    raw["cluster"]["dataplaneV2"] = False
    (problem,) = _problems(raw)
    assert problem.startswith("cluster.dataplaneV2: false in a production stack"), problem
    assert "does not enforce NetworkPolicies" in problem and "without the API key" in problem, (
        "the user learns what it costs: any pod reaches the model server around its gate"
    )
    assert "Remove dataplaneV2: false" in problem and "replaces the cluster" in problem, (
        "and the fix, with what it does to a cluster created without it"
    )
    raw["cluster"]["production"] = False
    for key in ("privateNodes", "secretsEncryptionKey", "masterAuthorizedNetworks"):
        raw["cluster"].pop(key, None)
    raw["workloads"][0]["expose"].pop("sourceRanges", None)
    assert load(raw, project="acme-ml-prod", region="us-central1", stack="prod"), (
        "outside production an older cluster may keep its datapath (changing it replaces it)"
    )


def test_a_production_stack_on_an_existing_cluster_is_told_what_it_cannot_check() -> None:
    raw = {
        "cluster": {"mode": "existing", "context": "lab", "production": True},
        "workloads": [
            {
                "name": "llm",
                "image": pins.VLLM_IMAGE,  # production pins images by digest
                "gpu": {"count": 1},
                "nodeSelector": {"gpu": "true"},
                "expose": {"port": 443, "type": "ClusterIP"},
            }
        ],
    }
    config = load(raw, project=None, region=None, stack="prod")
    (advice,) = [a for a in config.advisories if "NetworkPolic" in a]
    assert advice.startswith("cluster.production on an existing cluster"), advice
    assert "cannot see" in advice, (
        "the program cannot tell whether the cluster's network plugin enforces the policies "
        "the gate relies on: the user must check it"
    )
    raw["cluster"]["production"] = False
    assert not [
        a
        for a in load(raw, project=None, region=None, stack="dev").advisories
        if "NetworkPolic" in a
    ]


def test_a_production_internal_endpoint_needs_no_source_ranges() -> None:
    raw = _raw("prod")
    raw["workloads"][0]["expose"] = {"port": 443, "type": "Internal"}
    config = load(raw, project="acme-ml-prod", region="us-central1", stack="prod")
    assert config.workloads[0].expose is not None, "reachable from the VPC only: nothing to list"


def test_production_rules_are_reported_together_with_every_other_problem() -> None:
    raw = _raw("prod")
    raw["cluster"]["privateNodes"] = False
    raw["workloads"][0]["expose"]["tls"] = False
    raw["nodePools"][0]["minNodes"] = 9
    paths = {p.split(":", 1)[0] for p in _problems(raw)}
    assert {"cluster.privateNodes", "workloads[0].expose.tls", "nodePools[0].minNodes"} <= paths, (
        "one run names every problem, production's included"
    )


# --- cluster.secretsEncryptionKey and cluster.dnsEndpoint ---------------------------------------


@pytest.mark.parametrize(
    ("key", "says"),
    [
        ("gpu-prod-secrets", "is not a Cloud KMS key name"),
        (KEY + "/cryptoKeyVersions/1", "names a key version"),
        ("projects/acme-ml-prod/locations/us-central1/keyRings/gke gpu/cryptoKeys/k", "is not"),
        (KEY.replace("us-central1", "europe-west4"), "is in 'europe-west4'"),
        (KEY.replace("us-central1", "global"), "is in 'global'"),
    ],
)
def test_the_secrets_key_is_a_kms_key_in_the_clusters_region(key: str, says: str) -> None:
    raw = _raw("prod")
    raw["cluster"]["secretsEncryptionKey"] = key
    (problem,) = _problems(raw)
    assert problem.startswith("cluster.secretsEncryptionKey: ") and says in problem


def test_a_zonal_cluster_takes_a_key_of_its_region() -> None:
    raw = _raw("prod")
    raw["cluster"]["location"] = "us-central1-a"
    raw["nodePools"][0]["zones"] = ["us-central1-a"]
    cluster = load(raw, project="acme-ml-prod", region="us-central1", stack="prod").cluster
    assert isinstance(cluster, ClusterConfig)
    assert cluster.secrets_encryption_key == KEY, "Cloud KMS has no zonal locations"


@pytest.mark.parametrize("value", ["off", False, "public"])
def test_dns_endpoint_takes_disabled_or_external_only(value: object) -> None:
    raw = _raw("dev")
    raw["cluster"]["dnsEndpoint"] = value
    (problem,) = _problems(raw)
    assert problem.startswith("cluster.dnsEndpoint: ")
    assert "'disabled'" in problem and "'external'" in problem, "the allowed values are listed"


def test_an_existing_cluster_refuses_the_gke_posture_keys() -> None:
    raw = {
        "cluster": {
            "mode": "existing",
            "context": "kubeadm",
            "dnsEndpoint": "external",
            "secretsEncryptionKey": KEY,
            "binaryAuthorization": True,
        },
        "workloads": [{"name": "llm", "image": "vllm/vllm-openai:v0.29.0"}],
    }
    with pytest.raises(ConfigError) as error:
        load(raw, project=None, region=None, stack="onprem")
    paths = {p.split(":", 1)[0] for p in error.value.problems}
    assert {
        "cluster.dnsEndpoint",
        "cluster.secretsEncryptionKey",
        "cluster.binaryAuthorization",
    } <= paths, "they configure GKE, which an existing cluster is not"


# --- one number, two places ---------------------------------------------------------------------


def test_the_config_and_the_policy_pack_agree_on_the_widest_production_range() -> None:
    rules = importlib.import_module("policy.rules")
    if not hasattr(rules, "MIN_PREFIX_IPV4"):
        pytest.skip("policy/rules/ranges.py does not define MIN_PREFIX_IPV4 yet")
    assert (exposure.MIN_PREFIX_IPV4, exposure.MIN_PREFIX_IPV6) == (
        rules.MIN_PREFIX_IPV4,
        rules.MIN_PREFIX_IPV6,
    ), "the config would accept a range the pack refuses at preview, or the reverse"


def test_the_cluster_asks_for_the_binary_authorization_mode_the_pack_expects() -> None:
    rules = importlib.import_module("policy.rules")
    if not hasattr(rules, "BINAUTHZ_ENFORCE"):
        pytest.skip("policy/rules/production.py has no Binary Authorization rule yet")
    assert cluster_settings.BINAUTHZ_EVALUATION_MODE == rules.BINAUTHZ_ENFORCE
    assert cluster_settings.SECURITY_POSTURE_MODE in rules.SECURITY_POSTURE_ON
