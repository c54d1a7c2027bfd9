"""A DaemonSet's status counters (pure), and when a ready pod turns available.

Mirrors ``updateDaemonSetStatus`` / ``storeDaemonSetStatus`` of OpenKruise's Advanced DaemonSet
(v1.8). For every node: if it should run the daemon it counts in ``desiredNumberScheduled``, and
if it has any pod (terminating and failed ones included) in ``currentNumberScheduled``; the
node's first pod (:func:`~.daemonpods.pod_order`) then counts in ``numberReady`` when Ready, in
``numberAvailable`` when also available for ``minReadySeconds`` with ``InPlaceUpdateReady`` not
False, and in ``updatedNumberScheduled`` when at the DaemonSet's hash. A node that should not run
it but has a pod counts in ``numberMisscheduled``. ``numberUnavailable`` is desired minus
available. Pods of nodes that no longer exist count nowhere.

The status is written only when a counter, the hash or the observed generation differs; the
generation is recorded only by a reconcile that got past its expectations
(``updateObservedGen``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kruise.workloads.daemonset.daemonpods import is_daemon_pod_available, is_pod_updated
from kruise.workloads.daemonset.nodes import NodeFit
from kruise.workloads.objects import KubeObject, as_utc, metadata, status
from kruise.workloads.pods import is_ready, ready_time


@dataclass(frozen=True)
class DaemonSetCounts:
    """The status counters (see the module docstring)."""

    desired: int = 0
    current: int = 0
    misscheduled: int = 0
    ready: int = 0
    updated: int = 0
    available: int = 0
    unavailable: int = 0

    def as_status(self) -> dict[str, int]:
        """The counters under their ``status`` field names."""
        return {
            "desiredNumberScheduled": self.desired,
            "currentNumberScheduled": self.current,
            "numberMisscheduled": self.misscheduled,
            "numberReady": self.ready,
            "updatedNumberScheduled": self.updated,
            "numberAvailable": self.available,
            "numberUnavailable": self.unavailable,
        }


def count_status(
    fits: Mapping[str, NodeFit],
    pods_by_node: Mapping[str, Sequence[KubeObject]],
    hash_value: str,
    generation: str | None,
    min_ready_seconds: int,
    now: datetime,
) -> DaemonSetCounts:
    """The counters over ``fits`` (every node: its fit) and the pods per node (in pod order)."""
    desired = current = misscheduled = ready = updated = available = 0
    for node, fit in fits.items():
        node_pods = pods_by_node.get(node) or ()
        if not fit.should_run:
            misscheduled += 1 if node_pods else 0
            continue
        desired += 1
        if not node_pods:
            continue
        current += 1
        first = node_pods[0]
        if is_ready(first):
            ready += 1
            available += 1 if is_daemon_pod_available(first, min_ready_seconds, now) else 0
        updated += 1 if is_pod_updated(first, hash_value, generation) else 0
    return DaemonSetCounts(desired, current, misscheduled, ready, updated, available, desired - available)


def status_patch(
    ds: KubeObject, counts: DaemonSetCounts, hash_value: str, *, observe_generation: bool
) -> dict[str, Any] | None:
    """The ``status`` merge patch to write, or ``None`` when nothing would change
    (``storeDaemonSetStatus``); ``observedGeneration`` only with ``observe_generation``."""
    current = status(ds)
    wanted: dict[str, Any] = {**counts.as_status(), "daemonSetHash": hash_value}
    changed = (
        any(int(current.get(k) or 0) != v for k, v in counts.as_status().items())
        or current.get("daemonSetHash") != hash_value
    )
    generation = int(metadata(ds).get("generation") or 0)
    if observe_generation and int(current.get("observedGeneration") or 0) < generation:
        wanted["observedGeneration"] = generation
        changed = True
    return wanted if changed else None


def seconds_until_available(
    pods: Sequence[KubeObject], min_ready_seconds: int, now: datetime
) -> float | None:
    """Seconds until the first Ready-but-not-yet-available pod passes ``min_ready_seconds`` (a pod
    turning available causes no event, so the controller looks again then); ``None`` if none."""
    if min_ready_seconds <= 0:
        return None
    waits: list[float] = []
    for pod in pods:
        since = ready_time(pod)
        if since is None:
            continue
        left = since + timedelta(seconds=min_ready_seconds) - as_utc(now)
        if left >= timedelta(0):
            waits.append(left.total_seconds() + 0.05)
    return min(waits) if waits else None
