"""The SidecarSet hashes the mutating webhook writes into its annotations (pure).

Upstream (``sidecarcontrol/hash.go``): SHA-256 of the JSON ``{"containers": [...]}`` (plus
``"initContainers"``, all of them, when one is a native sidecar, ``restartPolicy: Always``), hex
encoded and mapped through ``rand.SafeEncodeString``. ``kruise.io/sidecarset-hash`` covers the
containers as they are; ``kruise.io/sidecarset-hash-without-image`` blanks every image first, so
two SidecarSet versions differing only in images share it: that is what makes an in-place
upgrade possible.

Deviation: the JSON is our canonical form (sorted keys, :func:`~kruise.workloads.revisions.go_json`)
rather than Go's struct-ordered marshalling, so the values differ from upstream's for the same
containers. Only equality between our own hashes is ever compared.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.workloads.objects import KubeObject, mapping, sequence, spec
from kruise.workloads.revisions import go_json, safe_encode_string

__all__ = ["is_native_sidecar", "sidecarset_hash", "sidecarset_hash_without_image"]


def is_native_sidecar(container: Mapping[str, Any]) -> bool:
    """An init container with ``restartPolicy: Always`` (Kubernetes native sidecar)."""
    return container.get("restartPolicy") == "Always"


def _encode(containers: Sequence[Any], init_containers: Sequence[Any]) -> bytes:
    body: dict[str, Any] = {"containers": list(containers)}
    if any(is_native_sidecar(mapping(c)) for c in init_containers):
        body["initContainers"] = list(init_containers)
    return go_json(body)


def _hash(data: bytes) -> str:
    return safe_encode_string(hashlib.sha256(data).hexdigest())


def sidecarset_hash(sidecarset: KubeObject) -> str:
    """``SidecarSetHash``: the hash of the (defaulted) containers, images included."""
    body = spec(sidecarset)
    return _hash(_encode(sequence(body.get("containers")), sequence(body.get("initContainers"))))


def sidecarset_hash_without_image(sidecarset: KubeObject) -> str:
    """``SidecarSetHashWithoutImage``: as :func:`sidecarset_hash` with every image blanked."""
    body = spec(sidecarset)

    def blanked(items: Sequence[Any]) -> list[Any]:
        out = [copy.deepcopy(dict(mapping(c))) for c in items]
        for container in out:
            container["image"] = ""
        return out

    containers = blanked(sequence(body.get("containers")))
    inits = blanked(sequence(body.get("initContainers")))
    return _hash(_encode(containers, inits))
