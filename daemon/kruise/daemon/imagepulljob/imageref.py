"""Image references as the Docker distribution grammar reads them (pure).

Upstream's ``NormalizeImageRefToNameTag`` (``pkg/daemon/util``) parses a reference with
``reference.ParseNormalizedNamed`` and keys NodeImage entries by its *familiar* name
(``nginx`` for ``docker.io/library/nginx``, ``kruise.local/busybox`` as written) and its tag
(``latest`` when none; the digest, ``sha256:...``, when the reference has one). The error texts
are distribution/reference's.
"""

from __future__ import annotations

import re

__all__ = ["InvalidReferenceError", "name_and_tag"]

_ALNUM = r"[a-z0-9]+"
_SEP = r"(?:[._]|__|[-]+)"
_PATH = rf"{_ALNUM}(?:{_SEP}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])"
_DOMAIN = rf"{_HOST}(?::[0-9]+)?"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH}(?:/{_PATH})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE = re.compile(rf"({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?")
_HEX64 = re.compile(r"[a-f0-9]{64}")
_DIGEST_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}
NAME_TOTAL_LENGTH_MAX = 255


class InvalidReferenceError(ValueError):
    """The reference does not parse; ``str()`` is distribution/reference's message."""


def _split_domain(name: str) -> tuple[str, str]:
    first, sep, rest = name.partition("/")
    if not sep or ("." not in first and ":" not in first and first != "localhost" and first.lower() == first):
        domain, remainder = "docker.io", name
    else:
        domain, remainder = first, rest
    if domain == "index.docker.io":
        domain = "docker.io"
    if domain == "docker.io" and "/" not in remainder:
        remainder = f"library/{remainder}"
    return domain, remainder


def name_and_tag(ref: str) -> tuple[str, str]:
    """``ref`` -> ``(familiar name, tag or digest)``: ``nginx:1.9.1`` -> ``("nginx", "1.9.1")``,
    ``docker.io/library/nginx`` -> ``("nginx", "latest")``, ``reg:5000/a/b@sha256:<64 hex>`` ->
    ``("reg:5000/a/b", "sha256:<64 hex>")``.

    Raises :class:`InvalidReferenceError` (``invalid reference format``, ``repository name must
    be lowercase``, ...) as ``ParseNormalizedNamed`` does.
    """
    if _HEX64.fullmatch(ref):
        raise InvalidReferenceError(
            f"invalid repository name ({ref}), cannot specify 64-byte hexadecimal strings"
        )
    domain, remainder = _split_domain(ref)
    remote = remainder.split("@", 1)[0]
    if ":" in remote:
        remote = remote.rsplit(":", 1)[0]
    if remote.lower() != remote:
        raise InvalidReferenceError(f"invalid reference format: repository name ({remote}) must be lowercase")
    full = f"{domain}/{remainder}"
    match = _REFERENCE.fullmatch(full)
    if match is None:
        if not ref:
            raise InvalidReferenceError("repository name must have at least one component")
        raise InvalidReferenceError("invalid reference format")
    name, tag, digest = match.group(1), match.group(2), match.group(3)
    if len(name) > NAME_TOTAL_LENGTH_MAX:
        raise InvalidReferenceError(
            f"repository name must not be more than {NAME_TOTAL_LENGTH_MAX} characters"
        )
    if digest is not None:
        algorithm, _, hexpart = digest.partition(":")
        want = _DIGEST_LENGTHS.get(algorithm)
        if want is None:
            raise InvalidReferenceError("unsupported digest algorithm")
        if len(hexpart) != want:
            raise InvalidReferenceError("invalid checksum digest length")
    familiar = name
    if domain == "docker.io":
        familiar = name[len("docker.io/") :]
        if familiar.startswith("library/") and familiar.count("/") == 1:
            familiar = familiar[len("library/") :]
    return familiar, digest if digest is not None else (tag or "latest")
