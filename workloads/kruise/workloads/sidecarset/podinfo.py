"""What a pod records about its SidecarSets, read and written as upstream's JSON (pure).

- ``kruise.io/sidecarset-hash`` / ``-hash-without-image``: a JSON map SidecarSet name ->
  :class:`UpgradeSpec` (``updateTimestamp``, ``hash``, ``sidecarSetName``, ``sidecarList``,
  ``controllerRevision``). Older pods hold a plain map name -> hash; both parse.
- ``kruise.io/sidecarset-injected-list``: the SidecarSet names, sorted, comma-separated.
- ``kruise.io/sidecarset-inplace-update-state``: name -> ``InPlaceUpdateState`` (the shared
  engine's type: ``revision``, ``updateTimestamp``, ``lastContainerStatuses``).
- ``kruise.io/sidecarset-working-hotupgrade-container``: sidecar name -> working container.

Malformed values read as absent, as upstream's getters log and return the zero value.

Parsing is memoised on the annotation's text (an LRU of :data:`PARSE_CACHE_SIZE` entries): the
controller reads the same pods on every reconcile, and the informer keeps each annotation as one
string object, whose hash Python computes once.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

from kruise.workloads.inplace.state import InPlaceUpdateState
from kruise.workloads.objects import KubeObject, annotations_of, format_time, mapping, parse_time, sequence
from kruise.workloads.sidecarset.keys import (
    HASH_ANNOTATION,
    HASH_WITHOUT_IMAGE_ANNOTATION,
    INJECTED_LIST_ANNOTATION,
    INPLACE_UPDATE_STATE_ANNOTATION,
    WORKING_HOT_UPGRADE_ANNOTATION,
)

__all__ = [
    "UpgradeSpec",
    "controller_revision_of",
    "dump_json",
    "dump_specs",
    "dump_states",
    "hash_of",
    "hash_without_image_of",
    "injected_list_value",
    "injected_names",
    "parse_states",
    "specs_of",
    "states_of",
    "working_containers",
]


@dataclass(frozen=True)
class UpgradeSpec:
    """One SidecarSet's entry in a pod's hash annotation (``SidecarSetUpgradeSpec``)."""

    hash: str
    sidecarset: str
    update_timestamp: datetime | None = None
    sidecar_list: tuple[str, ...] | None = None
    controller_revision: str = ""

    def to_json(self) -> dict[str, Any]:
        """Go's field order; ``sidecarList`` prints ``null`` when unset, ``controllerRevision``
        is omitted when empty."""
        out: dict[str, Any] = {
            "updateTimestamp": format_time(self.update_timestamp) if self.update_timestamp else None,
            "hash": self.hash,
            "sidecarSetName": self.sidecarset,
            "sidecarList": None if self.sidecar_list is None else list(self.sidecar_list),
        }
        if self.controller_revision:
            out["controllerRevision"] = self.controller_revision
        return out

    @classmethod
    def from_json(cls, name: str, value: Any) -> UpgradeSpec:
        if isinstance(value, str):  # the older map[string]string form
            return cls(hash=value, sidecarset=name)
        body = mapping(value)
        names = body.get("sidecarList")
        return cls(
            hash=str(body.get("hash") or ""),
            sidecarset=str(body.get("sidecarSetName") or ""),
            update_timestamp=parse_time(body.get("updateTimestamp")),
            sidecar_list=None if names is None else tuple(str(n) for n in sequence(names)),
            controller_revision=str(body.get("controllerRevision") or ""),
        )


def dump_json(value: Any) -> str:
    """Compact JSON with sorted map keys at the top level, as Go marshals a map."""
    return json.dumps(value, separators=(",", ":"))


PARSE_CACHE_SIZE = 16384


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _parse_specs(text: str) -> Mapping[str, UpgradeSpec]:
    try:
        body = mapping(json.loads(text))
    except ValueError:
        return MappingProxyType({})
    return MappingProxyType({str(k): UpgradeSpec.from_json(str(k), v) for k, v in body.items()})


def _specs(pod: KubeObject, key: str) -> Mapping[str, UpgradeSpec]:
    text = annotations_of(pod).get(key)
    return _parse_specs(text) if isinstance(text, str) and text else MappingProxyType({})


def specs_of(pod: KubeObject, key: str = HASH_ANNOTATION) -> dict[str, UpgradeSpec]:
    """The pod's hash annotation ``key`` as name -> :class:`UpgradeSpec` (a new dict)."""
    return dict(_specs(pod, key))


def dump_specs(specs: Mapping[str, UpgradeSpec]) -> str:
    """The hash annotation value for ``specs`` (keys sorted)."""
    return dump_json({k: specs[k].to_json() for k in sorted(specs)})


def hash_of(pod: KubeObject, sidecarset: str) -> str:
    """The SidecarSet hash the pod was last injected or upgraded with ("" if none)."""
    spec = _specs(pod, HASH_ANNOTATION).get(sidecarset)
    return spec.hash if spec else ""


def hash_without_image_of(pod: KubeObject, sidecarset: str) -> str:
    """As :func:`hash_of`, from the ``-without-image`` annotation."""
    spec = _specs(pod, HASH_WITHOUT_IMAGE_ANNOTATION).get(sidecarset)
    return spec.hash if spec else ""


def controller_revision_of(pod: KubeObject, sidecarset: str) -> str:
    """The ControllerRevision name recorded for ``sidecarset`` ("" if none)."""
    spec = _specs(pod, HASH_ANNOTATION).get(sidecarset)
    return spec.controller_revision if spec else ""


def injected_names(pod: KubeObject) -> list[str]:
    """The names in ``kruise.io/sidecarset-injected-list`` (empty entries dropped)."""
    text = annotations_of(pod).get(INJECTED_LIST_ANNOTATION)
    return [n for n in text.split(",") if n] if isinstance(text, str) else []


def injected_list_value(names: set[str] | list[str]) -> str:
    """The injected-list annotation value: sorted, comma-separated."""
    return ",".join(sorted(set(names)))


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _parse_states(text: str) -> Mapping[str, InPlaceUpdateState] | None:
    try:
        body = json.loads(text)
        if not isinstance(body, Mapping):
            return None
        return MappingProxyType(
            {str(k): InPlaceUpdateState.from_json(json.dumps(v)) for k, v in body.items()}
        )
    except (ValueError, TypeError, AttributeError):
        return None


def parse_states(pod: KubeObject) -> dict[str, InPlaceUpdateState] | None:
    """``kruise.io/sidecarset-inplace-update-state`` as name -> state (a new dict); ``{}``
    without the annotation, ``None`` when it is not a JSON object of states."""
    text = annotations_of(pod).get(INPLACE_UPDATE_STATE_ANNOTATION)
    if not isinstance(text, str):
        return {}
    parsed = _parse_states(text)
    return None if parsed is None else dict(parsed)


def states_of(pod: KubeObject) -> dict[str, InPlaceUpdateState]:
    """:func:`parse_states`, malformed reading as empty."""
    return parse_states(pod) or {}


def dump_states(states: Mapping[str, InPlaceUpdateState]) -> str:
    """The in-place update state annotation value (keys sorted)."""
    return dump_json({k: json.loads(states[k].to_json()) for k in sorted(states)})


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _parse_working(text: str) -> Mapping[str, str]:
    try:
        body = mapping(json.loads(text))
    except ValueError:
        return MappingProxyType({})
    return MappingProxyType({str(k): str(v) for k, v in body.items()})


def working_containers(pod: KubeObject) -> dict[str, str]:
    """``kruise.io/sidecarset-working-hotupgrade-container``: sidecar -> working container (a new dict)."""
    text = annotations_of(pod).get(WORKING_HOT_UPGRADE_ANNOTATION)
    return dict(_parse_working(text)) if isinstance(text, str) and text else {}
