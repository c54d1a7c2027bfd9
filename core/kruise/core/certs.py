"""Certificates: the local control plane's PKI and webhook serving certificates.

One throw-away CA signs the apiserver's serving certificate, the admin client
certificate (``O=system:masters``) and webhook serving certificates. Mirrors what
controller-runtime's envtest and kwokctl generate (see
``shared/reference/control-plane-harness.md`` §3).
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = datetime.timedelta(days=30)
PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attrs = []
    if organization:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attrs)


def key_pem(key: PrivateKey) -> bytes:
    """PEM (PKCS8, unencrypted) bytes of a private key."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def cert_pem(cert: x509.Certificate) -> bytes:
    """PEM bytes of a certificate."""
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass(frozen=True)
class CertificateAuthority:
    """A self-signed CA able to issue server and client certificates."""

    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @classmethod
    def create(
        cls, common_name: str = "kruise-ca", *, validity: datetime.timedelta = _VALIDITY
    ) -> CertificateAuthority:
        """A new CA valid for ``validity`` (30 days by default: the local control plane's)."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        subject = _name(common_name)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + validity)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(key, hashes.SHA256())
        )
        return cls(key=key, cert=cert)

    @classmethod
    def load(cls, cert_file: Path, key_file: Path) -> CertificateAuthority:
        cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise TypeError(f"{key_file}: expected an EC private key")
        return cls(key=key, cert=cert)

    def issue(
        self,
        common_name: str,
        *,
        organization: str | None = None,
        server: bool = False,
        client: bool = False,
        dns_names: tuple[str, ...] = (),
        ip_addresses: tuple[str, ...] = (),
        validity: datetime.timedelta = _VALIDITY,
    ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        """Issue a leaf certificate valid for ``validity``; returns ``(key, cert)``."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        usages = []
        if server:
            usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
        if client:
            usages.append(ExtendedKeyUsageOID.CLIENT_AUTH)
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name, organization))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + validity)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        )
        if usages:
            builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        if dns_names or ip_addresses:
            sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns_names]
            sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ip_addresses]
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return key, builder.sign(self.key, hashes.SHA256())

    def write_leaf(
        self,
        directory: Path,
        stem: str,
        *,
        common_name: str,
        organization: str | None = None,
        server: bool = False,
        client: bool = False,
        dns_names: tuple[str, ...] = (),
        ip_addresses: tuple[str, ...] = (),
    ) -> tuple[Path, Path]:
        """Issue a leaf (see :meth:`issue`) and write ``<stem>.crt``/``<stem>.key``."""
        key, cert = self.issue(
            common_name,
            organization=organization,
            server=server,
            client=client,
            dns_names=dns_names,
            ip_addresses=ip_addresses,
        )
        crt_path, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
        crt_path.write_bytes(cert_pem(cert))
        key_path.write_bytes(key_pem(key))
        key_path.chmod(0o600)
        return crt_path, key_path


def write_service_account_key(path: Path) -> None:
    """RSA 2048 key used to sign and verify service-account tokens."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path.write_bytes(key_pem(key))
    path.chmod(0o600)
