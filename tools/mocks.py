"""The cloud as the recording engine pretends it: what each provider would compute for a resource
(addresses, emails, keys, certificates), made up deterministically, and how secrets are masked."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.runtime import rpc

PROJECT = "gke-gpu"
SECRET_MASK = "[secret]"
# Documentation address ranges (RFC 5737), so no rendered value is ever a real endpoint.
LOAD_BALANCER_IP = "203.0.113.10"
CONTROL_PLANE_IP = "198.51.100.1"
# A reserved external address (gcp.compute.Address, EXTERNAL): documentation range too.
STATIC_EXTERNAL_IP = "203.0.113.20"
# Internal load balancers take an address of the cluster's subnetwork (RFC 1918); the first
# subnetwork of GKE's default network in us-central1 is 10.128.0.0/20.
INTERNAL_LOAD_BALANCER_IP = "10.128.0.100"
STATIC_INTERNAL_IP = "10.128.0.20"
# The DNS-based control-plane endpoint's domain ("Ex: uid.us-central1.gke.goog", GKE API reference
# ControlPlaneEndpointsConfig.DNSEndpointConfig.endpoint).
DNS_ENDPOINT_DOMAIN = "gke.goog"
# A documentation address (RFC 5737) for a Gateway's reserved global address (expose.domain).
GLOBAL_IP = "203.0.113.30"
# The made-up part of the CNAME Certificate Manager asks for (_dns_authorization): its real value
# comes with the DNS authorization.
AUTHORIZE_RECORD = ".1.authorize.certificatemanager.goog."
# Every value the mock makes up for what the cloud computes; the plan marks outputs holding one.
MOCKED_VALUES = (
    LOAD_BALANCER_IP,
    CONTROL_PLANE_IP,
    STATIC_EXTERNAL_IP,
    INTERNAL_LOAD_BALANCER_IP,
    STATIC_INTERNAL_IP,
    DNS_ENDPOINT_DOMAIN,
    GLOBAL_IP,
    AUTHORIZE_RECORD,
    "MOCK-",  # the body of every stand-in PEM block (_pem)
)
# A stand-in CA certificate (base64 of a PEM header): real value comes from GKE at create time.
CLUSTER_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1PQ0stQ0EKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
# A stand-in project number: Google Cloud project numbers are 12 digits (the "123456789012" of
# Google's own examples); Workload Identity principals name the project by number.
PROJECT_NUMBER = "123456789012"


def mask_secrets(value: Any, inside_secret: bool = False) -> Any:
    """Replace every secret value with SECRET_MASK, keeping the shape of secret maps and lists.

    Keys of a secret map (e.g. env var names in a Secret's stringData) are not secret, and
    keeping them lets masked manifests still validate against the Kubernetes schema.
    """
    if rpc.is_rpc_secret(value):
        return mask_secrets(rpc.unwrap_rpc_secret(value), inside_secret=True)
    if isinstance(value, Mapping):
        return {k: mask_secrets(v, inside_secret) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_secrets(v, inside_secret) for v in value]
    if inside_secret:
        return SECRET_MASK
    # The engine's wire format (protobuf Struct) carries every number as a double.
    return int(value) if isinstance(value, float) and value.is_integer() else value


def unwrap_secrets(value: Any) -> Any:
    if rpc.is_rpc_secret(value):
        return unwrap_secrets(rpc.unwrap_rpc_secret(value))
    if isinstance(value, Mapping):
        return {k: unwrap_secrets(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unwrap_secrets(v) for v in value]
    return value


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


class CloudMocks(pulumi.runtime.Mocks):
    """Realistic computed outputs by type token (camelCase keys, as the providers return them)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict]:
        inputs = unwrap_secrets(args.inputs)
        typ, name = args.typ, args.name
        project = inputs.get("project", "mock-project")
        if typ in _GCP_OUTPUTS:
            return _GCP_OUTPUTS[typ](inputs, project)
        if typ == "random:index/randomPassword:RandomPassword":
            # A deterministic stand-in of the requested length and alphabet; secret as the real
            # provider returns it (additional_secret_outputs=["bcryptHash", "result"]).
            result = _password(name, int(inputs.get("length", 16)), bool(inputs.get("special")))
            computed = {
                "result": rpc.wrap_rpc_secret(result),
                "bcryptHash": rpc.wrap_rpc_secret("$2a$10$" + _short_hash(result) * 6),
            }
            return f"{name}-id", {**inputs, **computed}
        if typ.startswith("tls:index/"):
            return f"{name}-id", {**inputs, **_tls_outputs(typ, name)}
        if typ == "kubernetes:core/v1:Service":
            return f"{_namespace(inputs)}/{_k8s_name(inputs, name)}", _service_state(inputs)
        if typ.startswith("kubernetes:") and not typ.startswith("kubernetes:helm"):
            state = dict(inputs)
            metadata = dict(state.get("metadata") or {})
            metadata.setdefault("name", f"{name}-{_short_hash(name)}")
            state["metadata"] = metadata
            return f"{_namespace(inputs)}/{metadata['name']}", state
        return f"{name}-id", dict(inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list[tuple[str, str]]]:
        # The mock monitor iterates the second element as check failures (pulumi
        # runtime/mocks.py MockMonitor.Invoke), so "no failures" is an empty list, never None.
        if args.token == "gcp:organizations/getClientConfig:getClientConfig":
            return {"project": "mock-project", "accessToken": "mock-token"}, []
        if args.token == "gcp:organizations/getProject:getProject":
            project = args.args.get("projectId", "mock-project")
            return {
                "projectId": project,
                "number": PROJECT_NUMBER,
                "name": project,
                "id": f"projects/{project}",
            }, []
        return {}, []


def _account(inputs: dict[str, Any], project: str) -> tuple[str, dict[str, Any]]:
    email = f"{inputs['accountId']}@{project}.iam.gserviceaccount.com"
    computed = {"email": email, "member": f"serviceAccount:{email}"}
    return f"projects/{project}/serviceAccounts/{email}", {**inputs, **computed}


def _cluster(inputs: dict[str, Any], project: str) -> tuple[str, dict[str, Any]]:
    location = inputs.get("location")
    cluster_id = f"projects/{project}/locations/{location}/clusters/{inputs['name']}"
    computed: dict[str, Any] = {
        "endpoint": CONTROL_PLANE_IP,
        "masterAuth": {"clusterCaCertificate": CLUSTER_CA},
        "masterVersion": "1.33.5-gke.1000000",
        "selfLink": f"https://container.googleapis.com/v1/{cluster_id}",
    }
    endpoints = inputs.get("controlPlaneEndpointsConfig") or {}
    if "dnsEndpointConfig" in endpoints:
        dns = {
            **endpoints["dnsEndpointConfig"],
            "endpoint": f"gke-{_short_hash(cluster_id)}.{location}.{DNS_ENDPOINT_DOMAIN}",
        }
        computed["controlPlaneEndpointsConfig"] = {**endpoints, "dnsEndpointConfig": dns}
    return cluster_id, {**inputs, **computed}


def _address(inputs: dict[str, Any], project: str) -> tuple[str, dict[str, Any]]:
    internal = inputs.get("addressType") == "INTERNAL"
    address = STATIC_INTERNAL_IP if internal else STATIC_EXTERNAL_IP
    region = inputs.get("region")
    address_id = f"projects/{project}/regions/{region}/addresses/{inputs.get('name')}"
    return address_id, {**inputs, "address": address}


def _global_address(inputs: dict[str, Any], project: str) -> tuple[str, dict[str, Any]]:
    address_id = f"projects/{project}/global/addresses/{inputs.get('name')}"
    return address_id, {**inputs, "address": GLOBAL_IP}


def _dns_authorization(inputs: dict[str, Any], project: str) -> tuple[str, dict[str, Any]]:
    """The CNAME Certificate Manager asks for, in the shape its docs show (name
    `_acme-challenge.<domain>.`, data `<id>.<n>.authorize.certificatemanager.goog.`; the values
    are made up here)."""
    domain = inputs.get("domain")
    record = {
        "name": f"_acme-challenge.{domain}.",
        "type": "CNAME",
        "data": f"{_short_hash(str(domain))}{AUTHORIZE_RECORD}",
    }
    auth_id = f"projects/{project}/locations/global/dnsAuthorizations/{inputs.get('name')}"
    return auth_id, {**inputs, "dnsResourceRecords": [record]}


def _node_pool(inputs: dict[str, Any], project: str) -> tuple[str, dict[str, Any]]:
    pool_id = f"{inputs.get('location')}/{inputs.get('cluster')}/{inputs.get('name')}"
    return pool_id, {**inputs, "instanceGroupUrls": []}


def _monitoring(collection: str) -> Any:
    """Cloud Monitoring names what it creates projects/P/<collection>/ID, the ID its own."""

    def outputs(inputs: dict[str, Any], project: str) -> tuple[str, dict[str, Any]]:
        key = json.dumps(inputs.get("displayName") or inputs.get("labels"), sort_keys=True)
        name = f"projects/{project}/{collection}/{int(_short_hash(key), 16)}"
        return name, {**inputs, "name": name}

    return outputs


_GCP_OUTPUTS = {
    "gcp:monitoring/notificationChannel:NotificationChannel": _monitoring("notificationChannels"),
    "gcp:monitoring/alertPolicy:AlertPolicy": _monitoring("alertPolicies"),
    "gcp:serviceaccount/account:Account": _account,
    "gcp:container/cluster:Cluster": _cluster,
    "gcp:compute/address:Address": _address,
    "gcp:compute/globalAddress:GlobalAddress": _global_address,
    "gcp:certificatemanager/dnsAuthorization:DnsAuthorization": _dns_authorization,
    "gcp:container/nodePool:NodePool": _node_pool,
}


def _service_state(inputs: dict[str, Any]) -> dict[str, Any]:
    """A LoadBalancer Service gets the address it asked for, else a documentation one."""
    state = dict(inputs)
    spec = inputs.get("spec", {})
    if spec.get("type") == "LoadBalancer":
        annotations = (inputs.get("metadata") or {}).get("annotations") or {}
        internal = annotations.get("networking.gke.io/load-balancer-type") == "Internal"
        ip = spec.get("loadBalancerIP") or (
            INTERNAL_LOAD_BALANCER_IP if internal else LOAD_BALANCER_IP
        )
        state["status"] = {"loadBalancer": {"ingress": [{"ip": ip}]}}
    return state


COMPUTED_KEYS = {
    "gcp:serviceaccount/account:Account": ["email", "member"],
    "gcp:container/cluster:Cluster": [
        "endpoint",
        "masterAuth",
        "masterVersion",
        "selfLink",
        "controlPlaneEndpointsConfig",
    ],
    "gcp:compute/address:Address": ["address"],
    "gcp:compute/globalAddress:GlobalAddress": ["address"],
    "gcp:certificatemanager/dnsAuthorization:DnsAuthorization": ["dnsResourceRecords"],
    "gcp:monitoring/notificationChannel:NotificationChannel": ["name"],
    "gcp:monitoring/alertPolicy:AlertPolicy": ["name"],
    "kubernetes:core/v1:Service": ["status"],
    "random:index/randomPassword:RandomPassword": ["result", "bcryptHash"],
    "tls:index/privateKey:PrivateKey": ["privateKeyPem", "publicKeyPem"],
    "tls:index/certRequest:CertRequest": ["certRequestPem"],
    "tls:index/selfSignedCert:SelfSignedCert": ["certPem"],
    "tls:index/locallySignedCert:LocallySignedCert": ["certPem"],
}


def _pem(kind: str, name: str) -> str:
    """A stand-in PEM block: the tls provider makes the real one at `pulumi up`."""
    return f"-----BEGIN {kind}-----\nMOCK-{_short_hash(name)}\n-----END {kind}-----\n"


def _tls_outputs(typ: str, name: str) -> dict[str, Any]:
    """What pulumi-tls computes; private keys are secret as the provider returns them
    (pulumi_tls 5.6.2 private_key.py: additional_secret_outputs private_key_pem and others)."""
    if typ == "tls:index/privateKey:PrivateKey":
        return {
            "privateKeyPem": rpc.wrap_rpc_secret(_pem("EC PRIVATE KEY", name)),
            "publicKeyPem": _pem("PUBLIC KEY", name),
        }
    if typ == "tls:index/certRequest:CertRequest":
        return {"certRequestPem": _pem("CERTIFICATE REQUEST", name)}
    if typ in (
        "tls:index/selfSignedCert:SelfSignedCert",
        "tls:index/locallySignedCert:LocallySignedCert",
    ):
        return {"certPem": _pem("CERTIFICATE", name)}
    return {}


def _password(name: str, length: int, special: bool) -> str:
    """Characters from the alphabet RandomPassword uses (letters, digits; specials when asked)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    if special:
        alphabet += "!@#$%&*()-_=+[]{}<>:?"
    digest = hashlib.sha256(f"mock-password/{name}".encode()).digest()
    while len(digest) < length:
        digest += hashlib.sha256(digest).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


def _namespace(inputs: Mapping[str, Any]) -> str:
    return str((inputs.get("metadata") or {}).get("namespace") or "default")


def _k8s_name(inputs: Mapping[str, Any], fallback: str) -> str:
    return str((inputs.get("metadata") or {}).get("name") or fallback)
