"""Where the webhook serving certificate comes from: a directory, the certs Secret, or outside.

kruise-manager's rules (``pkg/webhook/util/controller``, ``util/writer``), chosen by
``--webhook-cert-writer`` (``$WEBHOOK_CERT_WRITER``):

- ``secret`` (in a cluster, the default): the Secret ``kruise-webhook-certs`` (``$SECRET_NAME``)
  in the manager's namespace (``$POD_NAMESPACE``) holds the CA and the serving certificate. The
  chart renders it **empty** (so ``helm template`` is the same every time and Argo CD does not
  see it drift); the first replica to start finds no valid certificate, generates a CA (10
  years) and a certificate for the webhook Service's DNS names, and writes them with a
  ``resourceVersion`` precondition. A replica that loses that race reads the winner's, so every
  replica serves with one CA. Keys as upstream's: ``ca-cert.pem``, ``ca-key.pem``,
  ``cert.pem``/``tls.crt``, ``key.pem``/``tls.key``;
- ``external`` (feature gate ``EnableExternalCerts``): the Secret is someone else's
  (cert-manager's ``ca.crt``, ``tls.crt``, ``tls.key``); it is read, never written, and waited
  for until it is complete;
- ``fs`` (out of a cluster, or with ``--webhook-url-base``): generated once into
  ``--webhook-cert-dir`` and kept there.

Either way the files land in ``--webhook-cert-dir`` (``tls.crt``, ``tls.key``, ``ca.crt``), the
server serves them and the CA goes into the webhook configurations' and CRDs' ``caBundle``.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import logging
import os
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from kruise.core.certs import CertificateAuthority, cert_pem, key_pem
from kruise.core.errors import ConflictError, KruiseError, NotFoundError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import SECRETS
from kruise.rollouts.manager.options import ManagerOptions

log = logging.getLogger("kruise.manager.certs")

VALIDITY = datetime.timedelta(days=3650)
RENEW_BEFORE = datetime.timedelta(days=30)
EXTERNAL_WAIT_SECONDS = 2.0
Certs = tuple[Path, Path, bytes]


class CertWriter(StrEnum):
    SECRET = "secret"
    EXTERNAL = "external"
    FS = "fs"


def choose_writer(opts: ManagerOptions) -> CertWriter:
    """The writer in use: the explicit one, else external with ``EnableExternalCerts``, else fs
    out of a cluster or with ``--webhook-url-base``, else the Secret."""
    if opts.webhook_cert_writer:
        return CertWriter(opts.webhook_cert_writer)
    if opts.feature_gates.get("EnableExternalCerts"):
        return CertWriter.EXTERNAL
    if opts.webhook_url_base or not os.environ.get("KUBERNETES_SERVICE_HOST"):
        return CertWriter.FS
    return CertWriter.SECRET


def dns_names(service: str, namespace: str) -> tuple[str, ...]:
    return (
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
    )


def _decoded(secret: Mapping[str, object]) -> dict[str, bytes]:
    data = secret.get("data") or {}
    assert isinstance(data, Mapping)
    return {str(k): base64.b64decode(str(v)) for k, v in data.items()}


def usable(
    ca_pem: bytes, cert_pem_: bytes, key_pem_: bytes, names: tuple[str, ...], now: datetime.datetime
) -> bool:
    """The certificate is signed by the CA, serves ``names[-2]`` (``<svc>.<ns>.svc``), matches the
    key and is valid for more than :data:`RENEW_BEFORE`."""
    try:
        ca = x509.load_pem_x509_certificate(ca_pem)
        cert = x509.load_pem_x509_certificate(cert_pem_)
        key = serialization.load_pem_private_key(key_pem_, password=None)
        cert.verify_directly_issued_by(ca)
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except Exception:  # any defect (unparsable, wrong issuer, no SANs): generate a new one
        return False
    same_key = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ) == cert.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    fresh = cert.not_valid_after_utc - now > RENEW_BEFORE and ca.not_valid_after_utc - now > RENEW_BEFORE
    return same_key and fresh and names[-2] in sans.get_values_for_type(x509.DNSName)


def generate(service: str, namespace: str) -> dict[str, bytes]:
    """A new CA and serving certificate, under upstream's Secret keys (and ``tls.*``)."""
    ca = CertificateAuthority.create("kruise-webhook-ca", validity=VALIDITY)
    key, cert = ca.issue(
        f"{service}.{namespace}.svc",
        server=True,
        dns_names=("localhost", *dns_names(service, namespace)),
        ip_addresses=("127.0.0.1",),
        validity=VALIDITY,
    )
    pem_cert, pem_key = cert_pem(cert), key_pem(key)
    return {
        "ca-cert.pem": cert_pem(ca.cert),
        "ca-key.pem": key_pem(ca.key),
        "cert.pem": pem_cert,
        "key.pem": pem_key,
        "tls.crt": pem_cert,
        "tls.key": pem_key,
    }


def _write_dir(directory: Path, ca: bytes, cert: bytes, key: bytes) -> Certs:
    directory.mkdir(parents=True, exist_ok=True)
    paths = {name: directory / name for name in ("ca.crt", "tls.crt", "tls.key")}
    for name, content in (("ca.crt", ca), ("tls.crt", cert), ("tls.key", key)):
        if not paths[name].exists() or paths[name].read_bytes() != content:
            paths[name].write_bytes(content)
    paths["tls.key"].chmod(0o600)
    return paths["tls.crt"], paths["tls.key"], ca


async def from_secret(kube: KubeClient, opts: ManagerOptions, *, writer: CertWriter) -> Certs:
    """The certificate of the Secret (``secret``: filled or renewed first when needed)."""
    namespace, name = opts.webhook_service_namespace, opts.webhook_secret_name
    names = dns_names(opts.webhook_service_name, namespace)
    while True:
        now = datetime.datetime.now(datetime.UTC)
        try:
            secret = await kube.get(SECRETS, name, namespace)
        except NotFoundError:
            if writer is CertWriter.EXTERNAL:
                log.warning("waiting for the external certificate Secret %s/%s", namespace, name)
                await asyncio.sleep(EXTERNAL_WAIT_SECONDS)
                continue
            body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace}}
            secret = await kube.create(SECRETS, body, namespace)
        data = _decoded(secret)
        if writer is CertWriter.EXTERNAL:
            ca, cert, key = data.get("ca.crt", b""), data.get("tls.crt", b""), data.get("tls.key", b"")
            if ca and cert and key:  # cert-manager's; its names are its business
                return _write_dir(opts.webhook_cert_dir, ca, cert, key)
            log.warning(
                "the external certificate Secret %s/%s lacks ca.crt, tls.crt or tls.key", namespace, name
            )
            await asyncio.sleep(EXTERNAL_WAIT_SECONDS)
            continue
        ca, cert, key = data.get("ca-cert.pem", b""), data.get("cert.pem", b""), data.get("key.pem", b"")
        if usable(ca, cert, key, names, now):
            return _write_dir(opts.webhook_cert_dir, ca, cert, key)
        fresh = generate(opts.webhook_service_name, namespace)
        secret["data"] = {k: base64.b64encode(v).decode() for k, v in fresh.items()}
        try:
            await kube.replace(SECRETS, secret)  # resourceVersion precondition: one replica wins
        except ConflictError:
            continue  # another replica wrote it first: use theirs
        log.info("wrote a new webhook CA and certificate into Secret %s/%s", namespace, name)
        return _write_dir(opts.webhook_cert_dir, fresh["ca-cert.pem"], fresh["cert.pem"], fresh["key.pem"])


async def webhook_certificates(
    kube: KubeClient, opts: ManagerOptions, in_dir: Callable[[Path, str, str], Certs]
) -> Certs:
    """``(cert file, key file, CA PEM)`` of the webhook server, per :func:`choose_writer`;
    ``in_dir`` generates into ``--webhook-cert-dir`` (the ``fs`` writer)."""
    writer = choose_writer(opts)
    if writer is CertWriter.FS:
        return in_dir(opts.webhook_cert_dir, opts.webhook_service_name, opts.webhook_service_namespace)
    try:
        return await from_secret(kube, opts, writer=writer)
    except KruiseError as err:
        raise KruiseError(
            f"webhook certificates from Secret {opts.webhook_service_namespace}/"
            f"{opts.webhook_secret_name}: {err}"
        ) from err
