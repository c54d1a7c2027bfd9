"""The ``rollouts.kruise.io/workload-type`` label: which workloads the hold webhooks see (pure).

Kruise Rollouts (``pkg/controller/rollout/rollout_status.go``, ``patchWorkloadRolloutWebhookLabel``)
labels the workload a Rollout references, on every reconcile before its status is computed, with
its type: ``cloneset`` (CloneSet), ``deployment`` (Deployment), ``statefulset`` (StatefulSet,
native or Advanced) or ``daemonset`` (DaemonSet, native or Advanced); the kind alone decides.
It writes the label only when it is absent or empty, never overwriting another value. Its chart
registers the workload webhooks with an ``objectSelector`` on the label (``Exists``), so a
workload no Rollout references is never sent to them and an outage of the manager cannot block it.

Upstream never removes the label. Here it is removed when the Rollout that put it there is
deleted (once its finalisation is done, before its finalizer goes), if it still carries the value
the Rollout would set: a workload no Rollout references is no longer held by the webhooks. At most
one Rollout references a workload (the validating webhook's conflict check), so no other Rollout
can still need it. A ``workloadRef`` changed to another workload (allowed while not progressing)
leaves the old one labelled, as upstream; its webhook then admits it unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.rollouts.release.constants import WORKLOAD_TYPE_LABEL

JSON = dict[str, Any]

WORKLOAD_TYPES: Mapping[str, str] = {
    "CloneSet": "cloneset",
    "Deployment": "deployment",
    "StatefulSet": "statefulset",
    "DaemonSet": "daemonset",
}
"""Label value by workload kind (``util.CloneSetType`` ... ``util.DaemonSetType``)."""

MANAGER_DEPLOYMENT_EXCLUSION: JSON = {
    "key": "control-plane",
    "operator": "NotIn",
    "values": ["controller-manager"],
}
"""Upstream's ``mdeployment.kb.io`` also skips the manager's own Deployment (this chart's label)."""


def workload_type(kind: str | None) -> str | None:
    """The label value for a workload ``kind``; ``None`` for a kind upstream does not label."""
    return WORKLOAD_TYPES.get(kind or "")


def held_workload_selector(*extra: JSON) -> JSON:
    """The hold webhooks' ``objectSelector``: the label exists (plus ``extra`` expressions)."""
    return {"matchExpressions": [*extra, {"key": WORKLOAD_TYPE_LABEL, "operator": "Exists"}]}


def _labels(workload: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = (workload.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def label_patch(workload: Mapping[str, Any]) -> JSON | None:
    """The merge patch adding the label to ``workload``, or ``None`` when nothing is to be done.

    Nothing is done when the label has a non-empty value (whatever it is) or the kind has no type.
    """
    want = workload_type(workload.get("kind"))
    if want is None or _labels(workload).get(WORKLOAD_TYPE_LABEL):
        return None
    return {"metadata": {"labels": {WORKLOAD_TYPE_LABEL: want}}}


def unlabel_patch(workload: Mapping[str, Any]) -> JSON | None:
    """The merge patch removing the label when the Rollout is gone, or ``None``.

    Only the value a Rollout sets is removed; a label with another value was put there by
    someone else and stays.
    """
    want = workload_type(workload.get("kind"))
    if want is None or _labels(workload).get(WORKLOAD_TYPE_LABEL) != want:
        return None
    return {"metadata": {"labels": {WORKLOAD_TYPE_LABEL: None}}}
