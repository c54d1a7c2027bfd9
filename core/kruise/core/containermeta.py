"""The runtime-containers-meta annotation and the env-from-metadata hash (pure).

OpenKruise's in-place update of env from metadata (v1.0): a container whose env takes a value
from the pod's labels or annotations (``valueFrom.fieldRef`` ``metadata.labels['k']`` /
``metadata.annotations['k']``) is restarted in place when that label or annotation changes,
and the kubelet resolves the new value when it starts the container again. Two processes meet
on one pod annotation, ``apps.kruise.io/runtime-containers-meta``
(``K:apis/apps/pub/inplace_update.go`` ``RuntimeContainerMetaSet``)::

    {"containers": [{"name": "main", "containerID": "containerd://...", "restartCount": 1,
                     "hashes": {"plainHash": 0, "extractedEnvFromMetadataHash": 2166136261}}]}

- the daemon (``K:pkg/daemon/containermeta``) writes it: per running container, the hash of the
  env values the container really has (``env`` run in it through CRI ``ExecSync``);
- the workload controllers read it: an in-place update that changed such metadata is complete
  when every container's entry has the pod's current ``containerID`` and the hash of the values
  the pod's metadata asks for (``checkAllContainersHashConsistent``).

Both hashes come from :func:`hash_envs` over the same ``[(name, value)]`` list, sorted by name,
of the metadata-sourced env vars (``SIDECARSET_VERSION`` and ``SIDECARSET_VERSION_ALT`` are
left out, as upstream). Upstream feeds the JSON of that list through ``DeepHashObject`` (a spew
dump) into FNV-32a; here the JSON itself is hashed with FNV-32a: the value is only compared
between this daemon and these controllers, never with upstream's processes. ``plainHash`` (the
kubelet's own container hash) is reported from the container's ``io.kubernetes.container.hash``
annotation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

__all__ = [
    "EXCLUDED_ENVS",
    "RUNTIME_CONTAINERS_META_KEY",
    "ContainerHashes",
    "RuntimeContainerMeta",
    "RuntimeContainerMetaSet",
    "current_hash",
    "env_from_metadata",
    "env_hashes_consistent",
    "expected_hash",
    "fnv32a",
    "hash_envs",
    "parse_env_output",
    "parse_meta_set",
]

RUNTIME_CONTAINERS_META_KEY = "apps.kruise.io/runtime-containers-meta"
EXCLUDED_ENVS = frozenset({"SIDECARSET_VERSION", "SIDECARSET_VERSION_ALT"})
_SUBSCRIPTED = re.compile(r"^(metadata\.(?:labels|annotations))\['(.*)'\]$")


class ContainerHashes(TypedDict):
    plainHash: int
    extractedEnvFromMetadataHash: NotRequired[int]


class RuntimeContainerMeta(TypedDict):
    name: str
    containerID: str
    restartCount: int
    hashes: ContainerHashes


class RuntimeContainerMetaSet(TypedDict):
    containers: list[RuntimeContainerMeta]


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bits."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def env_from_metadata(container: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(env name, "metadata.labels" | "metadata.annotations", key)`` of each env var of
    ``container`` whose value comes from a pod label or annotation (no literal ``value``)."""
    out: list[tuple[str, str, str]] = []
    for env in container.get("env") or ():
        name = str(env.get("name") or "")
        field_ref = (env.get("valueFrom") or {}).get("fieldRef")
        if env.get("value") or not field_ref or name in EXCLUDED_ENVS:
            continue
        match = _SUBSCRIPTED.match(str(field_ref.get("fieldPath") or ""))
        if match:
            out.append((name, match.group(1), match.group(2)))
    return out


def hash_envs(envs: Iterable[tuple[str, str]]) -> int:
    """FNV-32a of the JSON of ``[{"name", "value"}]`` sorted by name (``value`` omitted when empty,
    as Go's ``omitempty``)."""
    items = [{"name": n, **({"value": v} if v else {})} for n, v in sorted(envs, key=lambda e: e[0])]
    return fnv32a(json.dumps(items, separators=(",", ":")).encode())


def expected_hash(
    container: Mapping[str, Any], labels: Mapping[str, str], annotations: Mapping[str, str]
) -> int:
    """The hash of the values ``container``'s metadata env vars should have, from the pod's
    current ``labels`` and ``annotations`` (upstream ``GetExpectHash``)."""
    source = {"metadata.labels": labels, "metadata.annotations": annotations}
    return hash_envs(
        (name, str(source[path].get(key, ""))) for name, path, key in env_from_metadata(container)
    )


def current_hash(container: Mapping[str, Any], env: Mapping[str, str]) -> int:
    """The hash of the values the running container has (``env``, parsed from ``env``'s output),
    upstream ``GetCurrentHash``."""
    return hash_envs((name, env.get(name, "")) for name, _, _ in env_from_metadata(container))


def parse_env_output(stdout: bytes) -> dict[str, str]:
    """``K=V`` lines (``env``'s output) as a mapping; lines without ``=`` are skipped."""
    out: dict[str, str] = {}
    for line in stdout.decode(errors="replace").strip().splitlines():
        key, sep, value = line.strip().partition("=")
        if sep:
            out[key] = value
    return out


def parse_meta_set(raw: object) -> RuntimeContainerMetaSet | None:
    """The annotation's value decoded, or None when absent or not the expected shape."""
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("containers"), list):
        return None
    return value  # type: ignore[return-value]


def env_hashes_consistent(pod: Mapping[str, Any], meta: RuntimeContainerMetaSet | Mapping[str, Any]) -> bool:
    """Upstream ``checkAllContainersHashConsistent`` for ``extractedEnvFromMetadataHash``: every
    spec container has a status, a meta entry with the status's ``containerID``, and the hash
    the pod's current metadata asks for."""
    metadata = pod.get("metadata") or {}
    labels, annotations = metadata.get("labels") or {}, metadata.get("annotations") or {}
    statuses = {s.get("name"): s for s in (pod.get("status") or {}).get("containerStatuses") or ()}
    entries: Sequence[Mapping[str, Any]] = meta.get("containers") or ()
    metas = {m.get("name"): m for m in entries}
    for container in (pod.get("spec") or {}).get("containers") or ():
        status, entry = statuses.get(container.get("name")), metas.get(container.get("name"))
        if status is None or entry is None or entry.get("containerID") != status.get("containerID"):
            return False
        got = (entry.get("hashes") or {}).get("extractedEnvFromMetadataHash") or 0
        if got != expected_hash(container, labels, annotations):
            return False
    return True
