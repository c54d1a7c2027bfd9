"""Which pods of a native DaemonSet to delete for the current batch (pure).

Kruise Rollouts' native DaemonSet controller (``pkg/controller/nativedaemonset``) releases a batch
of a native DaemonSet held with ``OnDelete``: the BatchRelease writes
``rollouts.kruise.io/daemonset-advanced-control`` (``partition``: pods to keep on the old revision,
``batch-revision``: the revision the batch releases, see
:mod:`kruise.rollouts.workloads.nativedaemonset.marks`); this controller deletes old pods and kube's
DaemonSet controller recreates each one from the current template. The rule (:func:`decide`):

- the DaemonSet's live pods (not Succeeded/Failed) count: ``desired = max(0, live - partition)``
  pods must run the batch revision (``controller-revision-hash``); the others are candidates;
- nothing is deleted while the batch is met (``updated >= desired``), while a pod is terminating
  (the proposal's "pods currently being deleted: wait", which also keeps a replacement that has not
  appeared yet from being counted as a pod still to update), or while the batch revision is not
  the revision of the DaemonSet's current template (a continuous release: a pod deleted now would
  come back at another revision than the one the batch counts, and the next round would delete
  again);
- ``need = desired - updated`` candidates are taken in deletion order: Pending first, then not
  Ready, then the lower ``controller.kubernetes.io/pod-deletion-cost`` (an integer, else 0), then
  the newest (``creationTimestamp``), then by name;
- ``maxUnavailable`` (``spec.updateStrategy.rollingUpdate.maxUnavailable``, int or percentage of
  ``status.desiredNumberScheduled`` rounded down; 1 when unset, unreadable or not positive) bounds
  the unavailable pods: the updated pods not Ready count against it, a candidate that is not Ready
  is deleted without using it, a Ready one only while the count stays below it.

Upstream counts terminating pods among the DaemonSet's pods and so could delete one pod more than
the batch while a deleted pod and its replacement both exist; waiting for deletions to finish
(as its proposal describes) avoids it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.rollouts.release.batchplan import BatchPlanError, scaled
from kruise.rollouts.workloads.nativedaemonset.marks import parse_advanced_control
from kruise.rollouts.workloads.podlabels import at_revision, deleting
from kruise.rollouts.workloads.statefulset import pod_ready

DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"


@dataclass(frozen=True)
class Deletions:
    """One decision: ``delete`` (pod names, in order; empty: nothing now), ``desired`` pods the batch
    wants at ``revision``, ``updated`` pods there now, the ``max_unavailable`` bound; ``waiting``
    says why nothing is deleted when pods are still to update ("" otherwise)."""

    revision: str
    desired: int
    updated: int
    max_unavailable: int
    delete: tuple[str, ...] = ()
    waiting: str = ""


def _name(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("name"))


def _completed(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _pending(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Pending"


def deletion_cost(pod: Mapping[str, Any]) -> int:
    """``controller.kubernetes.io/pod-deletion-cost`` (0 when absent or not an integer)."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(DELETION_COST_ANNOTATION)
    try:
        return int(str(raw)) if raw is not None else 0
    except ValueError:
        return 0


def deletion_order(pods: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``pods`` first-to-delete first (see the module docstring)."""
    ordered = sorted(pods, key=_name)
    ordered.sort(key=lambda p: str((p.get("metadata") or {}).get("creationTimestamp") or ""), reverse=True)
    ordered.sort(key=lambda p: (not _pending(p), pod_ready(p), deletion_cost(p)))
    return ordered


def max_unavailable(daemonset: Mapping[str, Any]) -> int:
    """The DaemonSet's ``maxUnavailable`` as a pod count (>= 1)."""
    rolling = (((daemonset.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate")) or {}
    desired = int((daemonset.get("status") or {}).get("desiredNumberScheduled") or 0)
    try:
        value = scaled(rolling.get("maxUnavailable"), desired, round_up=False)
    except BatchPlanError:
        return 1
    return value if value > 0 else 1


def decide(
    daemonset: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], current_revision: str
) -> Deletions | None:
    """The deletions for ``daemonset``'s batch over its ``pods``; ``current_revision``: the
    ``controller-revision-hash`` of its current template ("" when not known yet). None when no
    batch is written on it (nothing to do)."""
    control = parse_advanced_control(daemonset)
    if control is None or not control[1]:
        return None
    partition, revision = control
    live = [p for p in pods if not _completed(p)]
    desired = max(0, len(live) - partition)
    updated = [p for p in live if at_revision(p, revision)]
    bound = max_unavailable(daemonset)
    decision = Deletions(revision, desired, len(updated), bound)
    if len(updated) >= desired:
        return decision
    if any(deleting(p) for p in live):
        return Deletions(revision, desired, len(updated), bound, waiting="pods are being deleted")
    if revision != current_revision:
        return Deletions(
            revision, desired, len(updated), bound, waiting="the batch revision is not the template's"
        )
    need = desired - len(updated)
    unavailable = sum(1 for p in updated if not pod_ready(p))
    chosen: list[str] = []
    for pod in deletion_order([p for p in live if not at_revision(p, revision)]):
        if len(chosen) >= need:
            break
        if pod_ready(pod):
            if unavailable >= bound:
                break
            unavailable += 1
        chosen.append(_name(pod))
    waiting = "" if chosen else f"maxUnavailable {bound} reached"
    return Deletions(revision, desired, len(updated), bound, tuple(chosen), waiting)
