"""Pod predicates of the StatefulSet controller (``stateful_set_utils.go``), time passed in.

- *created*: the API server has it (``status.phase`` set); the controller's own draft of a pod
  it is about to create has no phase;
- *healthy*: lifecycle state ``""``/``Normal``, Running, Ready, not terminating;
- *available*: lifecycle ``""``/``Normal``, Running and Ready for ``minReadySeconds``
  (``isRunningAndAvailable``), with the seconds left to wait when it is Ready but not yet
  available (``minReadySeconds`` from a missing transition time).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from kruise.workloads.objects import KubeObject, as_utc, is_being_deleted
from kruise.workloads.pods import (
    PHASE_FAILED,
    PHASE_PENDING,
    PHASE_RUNNING,
    PHASE_SUCCEEDED,
    LifecycleState,
    is_ready,
    lifecycle_state,
    phase,
    ready_time,
)

__all__ = [
    "is_created",
    "is_failed_or_succeeded",
    "is_healthy",
    "is_pending",
    "is_running_and_ready",
    "running_and_available",
]


def is_created(pod: KubeObject) -> bool:
    return phase(pod) != ""


def is_pending(pod: KubeObject) -> bool:
    return phase(pod) == PHASE_PENDING


def is_failed_or_succeeded(pod: KubeObject) -> bool:
    return phase(pod) in (PHASE_FAILED, PHASE_SUCCEEDED)


def is_running_and_ready(pod: KubeObject) -> bool:
    return phase(pod) == PHASE_RUNNING and is_ready(pod)


def _normal(pod: KubeObject) -> bool:
    return lifecycle_state(pod) in ("", LifecycleState.NORMAL)


def is_healthy(pod: KubeObject) -> bool:
    """``isHealthy``: lifecycle ``""``/``Normal``, Running and Ready, not terminating."""
    return _normal(pod) and is_running_and_ready(pod) and not is_being_deleted(pod)


def running_and_available(pod: KubeObject, min_ready_seconds: int, now: datetime) -> tuple[bool, float]:
    """``isRunningAndAvailable``: ``(available, seconds to wait)``; the wait is 0 unless the pod is
    Ready but has not been for ``min_ready_seconds`` yet."""
    if not _normal(pod) or not is_running_and_ready(pod):
        return False, 0.0
    if min_ready_seconds <= 0:
        return True, 0.0
    since = ready_time(pod)
    if since is None:
        return False, float(min_ready_seconds)
    wait = (since + timedelta(seconds=min_ready_seconds) - as_utc(now)).total_seconds()
    return (False, wait) if wait > 0 else (True, 0.0)
