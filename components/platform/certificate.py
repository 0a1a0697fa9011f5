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
# Lifetimes (issue 30 L9). A certificate in its early-renewal window is replaced by the next
# `pulumi up` (`pulumi preview` shows the replacement): the provider marks it ready_for_renewal
# and requires replacement when now >= expiry - early_renewal_hours (hashicorp/
# terraform-provider-tls@d72d90e1 internal/provider/common_cert.go
# modifyPlanIfCertificateReadyForRenewal, lines 268-311, run by both resources' ModifyPlan). The
# old certificate stays valid until it expires: nothing revokes it.
# The CA: three years, replaced in its last 90 days. Its replacement changes what clients must
# trust (the caCertificate output), so it is rare and announced by the preview; a leaked key
# (it lives in the stack's state) is good for three years at most instead of ten.
CA_VALIDITY_HOURS = 3 * 365 * 24
CA_EARLY_RENEWAL_HOURS = 90 * 24
# A server certificate: 180 days, replaced by any `pulumi up` in its last 60 (clients do not
# notice: they trust the CA). A stack left without an `up` for four months keeps serving until
# the certificate expires, and `up` then issues the next.
SERVER_VALIDITY_HOURS = 180 * 24
SERVER_EARLY_RENEWAL_HOURS = 60 * 24
# No pathLen and no name constraints on the CA, because the provider cannot write them:
# - pulumi-tls 5.6.2 has max_path_length, but terraform-provider-tls copies it into Go's
#   x509.Certificate.MaxPathLen without MaxPathLenZero (common_cert.go lines 181-190; no
#   MaxPathLenZero anywhere in the provider), and Go writes MaxPathLen 0 without MaxPathLenZero
#   as "no constraint" (crypto/x509 Certificate docs): pathLen 0 cannot be had, and the input
#   forces a new CA.
# - name constraints: none in pulumi-tls 5.6.2 (SelfSignedCert's inputs); a later
#   terraform-provider-tls adds DNS-name constraints only (name_constraint_permitted_dns_names,
#   common_cert.go at 0472434e), and the gate's certificate names an IP address.
# What holds instead: the program signs only server certificates, which are not CAs
# (is_ca_certificate false, no cert_signing), and clients should trust the CA for this endpoint
# only (--cacert), not install it system-wide (docs/security.md).
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
        # Every input of a tls certificate forces a new one: a CA deployed before these lifetimes
        # would be replaced by the upgrade, and every client trusting it would break at once.
        # It keeps its lifetime until its owner rotates it (`pulumi up --replace`, docs/day-2.md);
        # a new CA, or a replaced one, gets the lifetimes above.
        kept = pulumi.ResourceOptions(
            parent=self, ignore_changes=["validityPeriodHours", "earlyRenewalHours"]
        )
        cert = tls.SelfSignedCert(
            f"{name}-cert",
            private_key_pem=key.private_key_pem,
            is_ca_certificate=True,
            subject=tls.SelfSignedCertSubjectArgs(
                common_name=f"gke-gpu {args.stack} CA", organization="gke-gpu"
            ),
            validity_period_hours=CA_VALIDITY_HOURS,
            early_renewal_hours=CA_EARLY_RENEWAL_HOURS,
            allowed_uses=list(CA_USES),
            set_subject_key_id=True,
            opts=kept,
        )
        self.cert_pem = cert.cert_pem
        self.private_key_pem = pulumi.Output.secret(key.private_key_pem)
        self.register_outputs({"cert_pem": self.cert_pem, "private_key_pem": self.private_key_pem})


@dataclass(frozen=True)
class ServerCertificateArgs:
    ca_cert_pem: pulumi.Input[str]
    """The signing CA's certificate (CertificateAuthority.cert_pem)."""
    ca_private_key_pem: pulumi.Input[str]
    """The signing CA's key (CertificateAuthority.private_key_pem, secret)."""
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
            ca_cert_pem=args.ca_cert_pem,
            ca_private_key_pem=args.ca_private_key_pem,
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
