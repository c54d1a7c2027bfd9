"""The annotations a release of a native DaemonSet writes on it (pure): keys, payloads, parsing.

Names and payloads are Kruise Rollouts' (``pkg/util/constant.go``, ``parse_utils.go``); a payload
is compact JSON with upstream's field names, written in its field order:

- :data:`ADVANCED_CONTROL` ``rollouts.kruise.io/daemonset-advanced-control``:
  ``{"partition":"2","batch-revision":"<hash>"}``: the BatchRelease's current batch, as the number
  of pods to keep on the old revision (a decimal string) and the revision the batch releases (the
  ``controller-revision-hash`` of the DaemonSet's current template). The native DaemonSet
  controller acts on it; a continuous release needs the revision, since the partition alone may be
  the same for the new template;
- :data:`REVISION` ``rollouts.kruise.io/daemonset-revision``:
  ``{"canary-revision":"<hash>","stable-revision":"<hash>"}``: the revisions of the release;
- :data:`ORIGINAL_STRATEGY` ``rollouts.kruise.io/daemonset-original-update-strategy``: the update
  strategy type (``RollingUpdate`` or ``OnDelete``) the DaemonSet had before the hold made it
  ``OnDelete``, restored when the release is handed back.

A payload that is not JSON of that shape reads as absent, as upstream's parsers return empty values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypedDict

ADVANCED_CONTROL = "rollouts.kruise.io/daemonset-advanced-control"
REVISION = "rollouts.kruise.io/daemonset-revision"
ORIGINAL_STRATEGY = "rollouts.kruise.io/daemonset-original-update-strategy"
RELEASE_ANNOTATIONS = (ADVANCED_CONTROL, REVISION, ORIGINAL_STRATEGY)
"""Every annotation the release writes and its hand-back drops."""
ON_DELETE, ROLLING_UPDATE = "OnDelete", "RollingUpdate"

AdvancedControl = TypedDict("AdvancedControl", {"partition": str, "batch-revision": str}, total=False)
"""Payload of :data:`ADVANCED_CONTROL` (upstream's ``DaemonSetAdvancedControlInfo``)."""
RevisionInfo = TypedDict("RevisionInfo", {"canary-revision": str, "stable-revision": str}, total=False)
"""Payload of :data:`REVISION` (upstream's ``DaemonSetRevisionInfo``)."""


def _annotations(daemonset: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((daemonset.get("metadata") or {}).get("annotations")) or {}


def _dump(payload: Mapping[str, object]) -> str:
    return json.dumps({k: v for k, v in payload.items() if v}, separators=(",", ":"))


def advanced_control(partition: int, batch_revision: str) -> str:
    """The :data:`ADVANCED_CONTROL` value for a batch keeping ``partition`` pods (>= 0) old."""
    return _dump(AdvancedControl({"partition": str(partition), "batch-revision": batch_revision}))


def revision_info(canary: str, stable: str) -> str:
    """The :data:`REVISION` value (empty revisions left out, as Go's ``omitempty``)."""
    return _dump(RevisionInfo({"canary-revision": canary, "stable-revision": stable}))


def parse_advanced_control(daemonset: Mapping[str, Any]) -> tuple[int, str] | None:
    """``(partition, batch revision)`` of the DaemonSet's :data:`ADVANCED_CONTROL`; None when it is
    absent or unreadable (not JSON, or a partition that is not a non-negative integer)."""
    raw = _annotations(daemonset).get(ADVANCED_CONTROL)
    try:
        payload = json.loads(str(raw)) if raw else None
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    partition = str(payload.get("partition") or "")
    if not partition.isdigit():
        return None
    return int(partition), str(payload.get("batch-revision") or "")


def original_strategy(daemonset: Mapping[str, Any]) -> str | None:
    """The update strategy type the hold recorded (:data:`ORIGINAL_STRATEGY`), None when none was."""
    value = _annotations(daemonset).get(ORIGINAL_STRATEGY)
    return str(value) if value else None


def strategy_type(daemonset: Mapping[str, Any]) -> str:
    """``spec.updateStrategy.type`` (the API server's default ``RollingUpdate`` when unset)."""
    strategy = ((daemonset.get("spec") or {}).get("updateStrategy")) or {}
    return str(strategy.get("type") or ROLLING_UPDATE)
