"""The CloneSet-only lifecycle rule: PreparingDelete pods regret when replicas grow back.

The hooks and transitions every workload shares are in :mod:`kruise.workloads.lifecycle`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kruise.workloads.cloneset.diffs import is_specified_delete_in
from kruise.workloads.lifecycle import is_mark_pod_not_ready
from kruise.workloads.objects import KubeObject, spec
from kruise.workloads.pods import LifecycleState, lifecycle_state


def preparing_delete_regrets(
    cloneset: KubeObject,
    pods: Sequence[KubeObject],
    num_to_delete: int,
    *,
    is_specified_delete: Callable[[KubeObject], bool] | None = None,
) -> list[KubeObject]:
    """PreparingDelete pods to return to PreparingNormal as replicas grew back (``managePreparingDelete``).

    ``num_to_delete`` is the number of distinct pods that are specified-delete or PreparingDelete.
    Up to ``replicas - len(pods) + num_to_delete`` non-specified-delete PreparingDelete pods
    regret, in input order; none when either hook sets ``markPodNotReady``.
    ``is_specified_delete`` (pod -> bool) defaults to the label and ``podsToDelete`` check.
    """
    if is_mark_pod_not_ready(cloneset):
        return []
    specified = is_specified_delete or (lambda pod: is_specified_delete_in(cloneset, pod))
    replicas = spec(cloneset).get("replicas")
    budget = (1 if replicas is None else int(replicas)) - len(pods) + num_to_delete
    regrets: list[KubeObject] = []
    for pod in pods:
        if lifecycle_state(pod) != LifecycleState.PREPARING_DELETE:
            continue
        if budget <= 0:
            break
        if specified(pod):
            continue
        regrets.append(pod)
        budget -= 1
    return regrets
