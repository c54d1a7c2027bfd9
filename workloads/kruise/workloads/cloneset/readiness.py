"""The CloneSet's kstatus conditions (pure): ``Ready``, ``Reconciling``, ``Stalled``.

Upstream's CloneSet has only ``FailedScale``/``FailedUpdate`` conditions, so kstatus (Flux) calls
it Current as soon as ``observedGeneration`` matches, even mid-release while a partition holds
pods on the old revision. These additive conditions say when the change is really done, in the
order kstatus' own rules for a Deployment or StatefulSet check it (messages as kstatus words them):

1. a ``Progressing`` condition with reason ``ProgressDeadlineExceeded`` (master's
   ``progressDeadlineSeconds``): ``Stalled``;
2. fewer pods than ``spec.replicas``: ``Reconciling``, reason ``LessReplicas``;
3. more pods than ``spec.replicas`` (scale-in or surge pending): ``Reconciling``, ``ExtraPods``;
4. fewer updated pods than ``replicas - partition``: ``Reconciling``, ``LessUpdated``, or, while
   ``updateStrategy.paused``, ``Ready=False`` reason ``UpdatePaused`` and no ``Reconciling``;
5. updated pods not yet available, or fewer available pods than ``spec.replicas``:
   ``Reconciling``, ``LessAvailable``;
6. a partition keeping pods on the current revision (a canary step, for instance):
   ``Ready=False`` reason ``Partitioned``, no ``Reconciling`` (the controller is done; the
   release is not);
7. otherwise ``Ready=True``, reason ``Available``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.core.kstatus import Health
from kruise.workloads.cloneset.arith import strategy_numbers
from kruise.workloads.objects import KubeObject, mapping, sequence, spec, status

DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"


def _deadline_exceeded(old_status: Mapping[str, Any]) -> str | None:
    for cond in sequence(old_status.get("conditions")):
        c = mapping(cond)
        if c.get("type") == "Progressing" and c.get("reason") == DEADLINE_EXCEEDED:
            return str(c.get("message") or "progress deadline exceeded")
    return None


def cloneset_health(cloneset: KubeObject, new_status: Mapping[str, Any]) -> Health:
    """kstatus :class:`Health` of ``cloneset`` once ``new_status`` (full counters) is written."""
    numbers = strategy_numbers(cloneset)
    want = numbers.replicas
    expected = max(want - numbers.partition, 0)
    replicas = int(new_status.get("replicas") or 0)
    updated = int(new_status.get("updatedReplicas") or 0)
    updated_available = int(new_status.get("updatedAvailableReplicas") or 0)
    available = int(new_status.get("availableReplicas") or 0)
    deadline = _deadline_exceeded(status(cloneset))
    if deadline is not None:
        return Health(ready=False, reason=DEADLINE_EXCEEDED, message=deadline, stalled=True)
    if replicas < want:
        return Health(False, "LessReplicas", f"Replicas: {replicas}/{want}", reconciling=True)
    if replicas > want:
        return Health(False, "ExtraPods", f"Pending termination: {replicas - want}", reconciling=True)
    if updated < expected:
        if mapping(spec(cloneset).get("updateStrategy")).get("paused"):
            return Health(False, "UpdatePaused", f"Update paused: updated {updated}/{expected}")
        return Health(False, "LessUpdated", f"Updated: {updated}/{expected}", reconciling=True)
    if updated_available < min(updated, expected):
        return Health(
            False, "LessAvailable", f"Updated available: {updated_available}/{expected}", reconciling=True
        )
    if available < want:
        return Health(False, "LessAvailable", f"Available: {available}/{want}", reconciling=True)
    if updated < want:
        return Health(
            False,
            "Partitioned",
            f"Partition keeps {want - updated} of {want} pods on the current revision",
        )
    return Health(True, "Available", f"{want} of {want} pods updated and available")
