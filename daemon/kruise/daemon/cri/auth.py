"""Registry credentials for a pull, from image pull Secrets (pure).

Upstream's daemon (``K:pkg/daemon/criruntime/imageruntime/helpers.go``) builds a kubelet
credential keyring from the pull Secrets and tries every credential whose registry matches the
image, then the pull without credentials. Matching here is by registry host as the keyring
sees it: the Secret's key may carry a scheme (``https://``) and a path (``/v1/``), which are
dropped; ``index.docker.io``, ``registry-1.docker.io`` and ``docker.io`` are one registry, and an
image without a registry host (``nginx:1``) is on it.

Secrets are ``kubernetes.io/dockerconfigjson`` (``data[".dockerconfigjson"]``: ``{"auths": {...}}``)
or ``kubernetes.io/dockercfg`` (``data[".dockercfg"]``: the ``auths`` map itself), base64 as the
API serves them. An entry's ``auth`` (base64 ``user:password``) fills a missing username/password.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from kruise.daemon.cri.port import PullAuth

__all__ = ["DOCKER_HUB", "pull_auths", "registry_host"]

DOCKER_HUB = "docker.io"
_HUB_ALIASES = {"docker.io", "index.docker.io", "registry-1.docker.io"}


def _normalise(host: str) -> str:
    host = host.strip().lower()
    for prefix in ("https://", "http://"):
        if host.startswith(prefix):
            host = host[len(prefix) :]
    host = host.split("/", 1)[0]
    return DOCKER_HUB if host in _HUB_ALIASES else host


def registry_host(image: str) -> str:
    """The registry of an image reference (``kruise.local/busybox:v1`` -> ``kruise.local``;
    ``nginx`` and ``library/nginx`` -> ``docker.io``), as the container runtime reads it."""
    first, sep, _ = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return _normalise(first)
    return DOCKER_HUB


def _entries(secret: Mapping[str, Any]) -> Mapping[str, Any]:
    data = secret.get("data") or {}
    try:
        if ".dockerconfigjson" in data:
            return dict(json.loads(base64.b64decode(data[".dockerconfigjson"])).get("auths") or {})
        if ".dockercfg" in data:
            return dict(json.loads(base64.b64decode(data[".dockercfg"])))
    except (ValueError, binascii.Error, AttributeError):
        return {}
    return {}


def _credential(server: str, entry: Mapping[str, Any]) -> PullAuth:
    username, password = str(entry.get("username") or ""), str(entry.get("password") or "")
    auth = str(entry.get("auth") or "")
    if auth and not (username or password):
        with contextlib.suppress(ValueError, binascii.Error):
            username, _, password = base64.b64decode(auth).decode().partition(":")
    return PullAuth(
        username=username,
        password=password,
        auth=auth,
        server_address=server,
        identity_token=str(entry.get("identitytoken") or ""),
        registry_token=str(entry.get("registrytoken") or ""),
    )


def pull_auths(secrets: Iterable[Mapping[str, Any]], image: str) -> list[PullAuth]:
    """The credentials of ``secrets`` for ``image``'s registry, in Secret order (the caller then
    tries an anonymous pull last). Unreadable Secrets contribute nothing."""
    host = registry_host(image)
    found: list[PullAuth] = []
    for secret in secrets:
        for server, entry in _entries(secret).items():
            if isinstance(entry, Mapping) and _normalise(str(server)) == host:
                found.append(_credential(str(server), entry))
    return found
