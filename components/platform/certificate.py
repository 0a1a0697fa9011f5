"""The stack's own certificate authority and the gates' server certificates (pulumi-tls).

With no domain, nothing public can vouch for an IP address, so the stack issues its own: one CA
per stack (its certificate is the `caCertificate` output clients trust), and per gate a server
certificate for the reserved address and the Service's cluster DNS names. Keys are made by the
tls provider and live only in the stack's state, encrypted as secrets (pulumi-tls PrivateKey
marks private_key_pem secret).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_tls as tls

# ECDSA P-256: what every TLS client accepts, and small handshakes.
KEY_ALGORITHM = "ECDSA"
ECDSA_CURVE = "P256"
CA_VALIDITY_HOURS = 10 * 365 * 24
# A server certificate lives a year; `pulumi up` in its last 30 days issues the next one
# (LocallySignedCert early_renewal_hours marks it for replacement, pulumi-tls docs).
SERVER_VALIDITY_HOURS = 365 * 24
SERVER_EARLY_RENEWAL_HOURS = 30 * 24
CA_USES = ("cert_signing", "crl_signing", "digital_signature")
SERVER_USES = ("digital_signature", "key_encipherment", "server_auth")


def cluster_dns_names(service: str, namespace: str) -> list[str]:
    """The names pods use for a Service (Kubernetes "DNS for Services and Pods")."""
    return [
        f"{service}.{namespace}.svc.cluster.local",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}",
        service,
    ]


def split_hosts(hosts: Sequence[str]) -> tuple[list[str], list[str]]:
    """expose.hosts as (IP addresses, DNS names): a certificate lists them apart."""
    ips, names = [], []
    for host in hosts:
        try:
            ips.append(str(ipaddress.ip_address(host)))
        except ValueError:
            names.append(host)
    return ips, names


@dataclass(frozen=True)
class CertificateAuthorityArgs:
    stack: str
    """Named in the CA's subject, so a client's trust store shows which stack it trusts."""


class CertificateAuthority(pulumi.ComponentResource):
    """A self-signed CA that signs the stack's endpoint certificates."""

    cert_pem: pulumi.Output[str]
    """The CA certificate (public): what clients pass as --cacert."""
    private_key_pem: pulumi.Output[str]
    """The CA's private key (secret)."""

    def __init__(
        self, name: str, args: CertificateAuthorityArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:CertificateAuthority", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        key = tls.PrivateKey(
            f"{name}-key", algorithm=KEY_ALGORITHM, ecdsa_curve=ECDSA_CURVE, opts=child
        )
        cert = tls.SelfSignedCert(
            f"{name}-cert",
            private_key_pem=key.private_key_pem,
            is_ca_certificate=True,
            subject=tls.SelfSignedCertSubjectArgs(
                common_name=f"gke-gpu {args.stack} CA", organization="gke-gpu"
            ),
            validity_period_hours=CA_VALIDITY_HOURS,
            allowed_uses=list(CA_USES),
            set_subject_key_id=True,
            opts=child,
        )
        self.cert_pem = cert.cert_pem
        self.private_key_pem = pulumi.Output.secret(key.private_key_pem)
        self.register_outputs({"cert_pem": self.cert_pem, "private_key_pem": self.private_key_pem})


@dataclass(frozen=True)
class ServerCertificateArgs:
    ca: CertificateAuthority
    common_name: str
    ip_addresses: pulumi.Input[Sequence[str]] = ()
    dns_names: pulumi.Input[Sequence[str]] = ()


class ServerCertificate(pulumi.ComponentResource):
    """A server certificate signed by the stack's CA, and its key, as one PEM for the proxy."""

    cert_pem: pulumi.Output[str]
    """The server certificate (public)."""
    pem: pulumi.Output[str]
    """Certificate, then private key: the file HAProxy's `crt` reads (secret)."""

    def __init__(
        self, name: str, args: ServerCertificateArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gke-gpu:index:ServerCertificate", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        key = tls.PrivateKey(
            f"{name}-key", algorithm=KEY_ALGORITHM, ecdsa_curve=ECDSA_CURVE, opts=child
        )
        request = tls.CertRequest(
            f"{name}-request",
            private_key_pem=key.private_key_pem,
            subject=tls.CertRequestSubjectArgs(
                common_name=args.common_name, organization="gke-gpu"
            ),
            ip_addresses=args.ip_addresses,
            dns_names=args.dns_names,
            opts=child,
        )
        cert = tls.LocallySignedCert(
            f"{name}-cert",
            cert_request_pem=request.cert_request_pem,
            ca_cert_pem=args.ca.cert_pem,
            ca_private_key_pem=args.ca.private_key_pem,
            validity_period_hours=SERVER_VALIDITY_HOURS,
            early_renewal_hours=SERVER_EARLY_RENEWAL_HOURS,
            allowed_uses=list(SERVER_USES),
            opts=child,
        )
        self.cert_pem = cert.cert_pem
        self.pem = pulumi.Output.secret(
            pulumi.Output.concat(cert.cert_pem, "\n", key.private_key_pem)
        )
        self.register_outputs({"cert_pem": self.cert_pem, "pem": self.pem})
