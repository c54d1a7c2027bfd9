"""WorkloadSpread's custom-workload white list, after upstream's ``pkg/util/configuration`` (v1.8).

The ConfigMap ``kruise-configuration`` in the manager's namespace (``kruise-system``), key
``WorkloadSpread_Watch_Custom_Workload_WhiteList``, holds JSON
``{"workloads": [{"Group", "Version", "Kind", "subResources": [{"Group", "Version", "Kind"}],
"replicasPath"}]}`` (keys matched case-insensitively, as Go's ``encoding/json``). An absent
ConfigMap or key is an empty list.

- **Validation** (:func:`permits`): a ``targetRef`` of a kind other than the built-in ones is
  admitted when a listed workload has its group and kind.
- **Owners** (:func:`chain_kinds`): the pod webhook accepts a pod whose controller is a listed
  workload or one of its ``subResources``, and walks up the controllers (each read from the API
  server) until it meets the WorkloadSpread's target (upstream's ``isReferenceEqual``).
- **Replicas** (:func:`replicas_path`, :func:`replicas_of`): a listed workload's replicas are the
  integer at its dot-separated ``replicasPath`` (0 when the path is empty or missing; a
  non-integer is an error); a ``targetFilter.replicasPathList`` takes precedence.

The reads (the ConfigMap, discovery, the owners) are in :mod:`.customtargets`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.workloads.objects import KubeObject
from kruise.workloads.workloadspread.targetfilter import filtered_replicas

__all__ = [
    "CONFIGURATION_NAME",
    "DEFAULT_NAMESPACE",
    "WHITELIST_KEY",
    "CustomWorkload",
    "GroupKind",
    "WhitelistError",
    "chain_kinds",
    "group_of",
    "parse_whitelist",
    "permits",
    "replicas_of",
    "replicas_path",
    "split_api_version",
]

CONFIGURATION_NAME = "kruise-configuration"
WHITELIST_KEY = "WorkloadSpread_Watch_Custom_Workload_WhiteList"
DEFAULT_NAMESPACE = "kruise-system"
"""Upstream's ``GetKruiseNamespace()`` default: where ``kruise-configuration`` lives."""


class WhitelistError(ValueError):
    """The white list is not valid JSON of the expected shape."""


@dataclass(frozen=True)
class GroupKind:
    """An API group (``""`` for core), version and kind."""

    group: str
    kind: str
    version: str = ""


@dataclass(frozen=True)
class CustomWorkload:
    """One listed workload: its kind, the kinds between it and its pods, its replicas path."""

    kind: GroupKind
    sub_resources: tuple[GroupKind, ...] = ()
    replicas_path: str = ""


def _lower(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise WhitelistError(f"expected an object, got {value!r}")
    return {str(k).lower(): v for k, v in value.items()}


def _gvk(value: Any) -> GroupKind:
    fields = _lower(value)
    return GroupKind(
        str(fields.get("group") or ""), str(fields.get("kind") or ""), str(fields.get("version") or "")
    )


def parse_whitelist(text: str) -> tuple[CustomWorkload, ...]:
    """The listed workloads of the key's JSON ``text``.

    Raises:
        WhitelistError: not JSON, or not of the documented shape.
    """
    try:
        doc = json.loads(text)
    except ValueError as err:
        raise WhitelistError(str(err)) from err
    out: list[CustomWorkload] = []
    items = _lower(doc).get("workloads")
    items = [] if items is None else items
    if not isinstance(items, list):
        raise WhitelistError(f"workloads: expected a list, got {items!r}")
    for item in items:
        fields = _lower(item)
        subs = fields.get("subresources")
        subs = [] if subs is None else subs
        if not isinstance(subs, list):
            raise WhitelistError(f"subResources: expected a list, got {subs!r}")
        out.append(
            CustomWorkload(_gvk(item), tuple(_gvk(s) for s in subs), str(fields.get("replicaspath") or ""))
        )
    return tuple(out)


def split_api_version(api_version: str) -> tuple[str, str]:
    """``(group, version)`` of ``api_version`` (group ``""`` for core ``v1``)."""
    group, _, version = api_version.rpartition("/")
    return group, version


def group_of(api_version: str) -> str:
    """The API group of ``api_version`` (``""`` for core ``v1``)."""
    return split_api_version(api_version)[0]


def permits(workloads: Iterable[CustomWorkload], api_version: str, kind: str) -> bool:
    """A listed workload has the group of ``api_version`` and ``kind`` (upstream's validation)."""
    group = split_api_version(api_version)[0]
    return any(w.kind.group == group and w.kind.kind == kind for w in workloads)


def chain_kinds(workloads: Iterable[CustomWorkload]) -> frozenset[tuple[str, str]]:
    """(group, kind) of every listed workload and sub-resource: the owners the pod webhook may
    walk through."""
    out: set[tuple[str, str]] = set()
    for workload in workloads:
        out.add((workload.kind.group, workload.kind.kind))
        out.update((s.group, s.kind) for s in workload.sub_resources)
    return frozenset(out)


def replicas_path(workloads: Iterable[CustomWorkload], api_version: str, kind: str) -> str:
    """The ``replicasPath`` of the listed workload of this group, version and kind (``""``: none;
    upstream's controller matches the version too)."""
    group, version = split_api_version(api_version)
    for workload in workloads:
        if (workload.kind.group, workload.kind.version, workload.kind.kind) == (group, version, kind):
            return workload.replicas_path
    return ""


def replicas_of(workload: KubeObject, path: str) -> int:
    """The integer at ``path`` of ``workload`` (0 when ``path`` is empty or missing).

    Raises:
        kruise.workloads.workloadspread.targetfilter.TargetFilterError: not an integer.
    """
    return filtered_replicas(workload, {"replicasPathList": [path]}, 0) if path else 0
