"""The scale phase of a StatefulSet round (``processReplica`` / ``processCondemned``), pure.

Replica slots are visited in ascending ordinal order:

- a Failed/Succeeded pod (evicted...) is deleted and the round ends (it is recreated next round);
- a draft is created (its missing claims first), unless a stale claim blocks it; with
  ``OrderedReady`` the round then ends (one pod at a time);
- a Pending pod gets its missing claims re-created (``createMissingPersistentVolumeClaims``);
- a terminating pod ends an ``OrderedReady`` round (wait for it to go);
- with ``OrderedReady`` a pod that is not available (Running, Ready ``minReadySeconds``,
  lifecycle Normal) ends the round: scaling *halts* at an unhealthy pod;
- identity labels and claim owners (retention policy) are repaired.

``Parallel`` creates all missing pods in one round, unless ``scaleStrategy.maxUnavailable`` is
set: then every pod created, terminating or unavailable counts against it, and when it is used
up the scale phase stops and the update phase runs (``decreaseAndCheckMaxUnavailable``).

Then the condemned pods (descending ordinal): their claims get the scaled-down owners, and they
are deleted (PreparingDelete while a preDelete hook holds them). ``OrderedReady`` deletes one at
a time and only once every other pod is Running and Ready (the first unhealthy pod excepted).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kruise.workloads.admission.intstr import IntOrStringError, get_value
from kruise.workloads.lifecycle import delete_transition
from kruise.workloads.objects import KubeObject, is_being_deleted, labels, mapping, metadata, name, spec
from kruise.workloads.pods import lifecycle_state
from kruise.workloads.statefulset.actions import (
    Action,
    CreateClaims,
    CreatePod,
    DeletePod,
    DeleteReason,
    FixIdentity,
    LifecycleChange,
    SetClaimOwners,
)
from kruise.workloads.statefulset.health import (
    is_failed_or_succeeded,
    is_pending,
    is_running_and_ready,
    running_and_available,
)
from kruise.workloads.statefulset.identity import (
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    claims_for,
    identity_matches,
    ordinal_of,
)
from kruise.workloads.statefulset.retention import (
    DELETE,
    claim_owner_references,
    has_stale_owner_ref,
    retention_policy,
)
from kruise.workloads.statefulset.round import Round

__all__ = ["PhaseResult", "delete_or_hook", "plan_scale", "scale_max_unavailable"]


@dataclass
class PhaseResult:
    """Actions of one phase, whether the round ends there, the soonest time to look again."""

    actions: list[Action] = field(default_factory=list)
    exit: bool = False
    requeue_after: float | None = None
    errors: list[str] = field(default_factory=list)

    def wake(self, seconds: float) -> None:
        if seconds > 0:
            self.requeue_after = seconds if self.requeue_after is None else min(self.requeue_after, seconds)


class _Budget:
    """``scaleStrategy.maxUnavailable`` as upstream counts it down (``None``: unlimited)."""

    def __init__(self, limit: int | None) -> None:
        self.left = limit

    def spend(self) -> bool:
        """Count one more unavailable pod; True once the budget is used up."""
        if self.left is None:
            return False
        self.left -= 1
        return self.left <= 0


def scale_max_unavailable(statefulset: KubeObject) -> int | None:
    """``getScaleMaxUnavailable``: scaled against ``replicas`` (rounded down), at least 1.

    Raises:
        IntOrStringError: a malformed value (the webhook refuses those).
    """
    value = mapping(spec(statefulset).get("scaleStrategy")).get("maxUnavailable")
    if value is None:
        return None
    replicas = spec(statefulset).get("replicas")
    return max(1, get_value(value, 1 if replicas is None else int(replicas), False))


def delete_or_hook(r: Round, pod: KubeObject, reason: DeleteReason) -> tuple[Action | None, bool]:
    """``deletePod``: ``(action, actually deleting)``; a pod the preDelete hook holds goes to
    PreparingDelete instead (no action when it already is there)."""
    transition = delete_transition(r.statefulset, pod)
    if transition is None:
        return DeletePod(pod, reason), True
    if lifecycle_state(pod) == transition.state:
        return None, False
    return LifecycleChange(pod, transition), False


def _missing_claims(r: Round, pod: KubeObject) -> tuple[list[dict[str, object]], bool]:
    """The pod's claims that do not exist, and whether one is being deleted (upstream errors)."""
    missing, terminating = [], False
    for claim in claims_for(r.statefulset, ordinal_of(pod)):
        found = r.world.claims.get(str(claim["metadata"]["name"]))
        if found is None:
            missing.append(claim)
        elif is_being_deleted(found):
            terminating = True
    return missing, terminating


def _claim_is_stale(r: Round, pod: KubeObject) -> bool:
    """``PodClaimIsStale``: with ``whenScaled: Delete`` a claim still owned by an older pod."""
    if retention_policy(r.statefulset)[0] != DELETE:
        return False
    for claim in claims_for(r.statefulset, ordinal_of(pod)):
        found = r.world.claims.get(str(claim["metadata"]["name"]))
        if found is not None and has_stale_owner_ref(found, pod):
            return True
    return False


def _retention_actions(r: Round, pod: KubeObject, *, scaled_down: bool) -> list[Action]:
    if not r.options.auto_delete_pvc or not metadata(pod).get("uid"):
        return []
    out: list[Action] = []
    for claim in claims_for(r.statefulset, ordinal_of(pod)):
        found = r.world.claims.get(str(claim["metadata"]["name"]))
        if found is None:
            continue
        refs = claim_owner_references(r.statefulset, found, pod, scaled_down=scaled_down)
        if refs is not None:
            out.append(SetClaimOwners(found, refs))
    return out


_NEXT, _BREAK, _EXIT = "next", "break", "exit"


def _replica(r: Round, pod: KubeObject, budget: _Budget, out: PhaseResult) -> str:
    """``processReplica`` for one slot."""
    if r.is_draft(pod):
        if r.options.auto_delete_pvc and _claim_is_stale(r, pod):
            return _EXIT
        missing, _ = _missing_claims(r, pod)
        out.actions.append(CreatePod(dict(pod), tuple(missing)))
        if r.monotonic:
            return _EXIT
        return _BREAK if budget.spend() else _NEXT
    if is_failed_or_succeeded(pod):
        if not is_being_deleted(pod):
            out.actions.append(DeletePod(pod, DeleteReason.FINISHED))
        return _EXIT
    if is_pending(pod):
        missing, terminating = _missing_claims(r, pod)
        if terminating:
            out.errors.append(f"a claim of pod {name(pod)} is being deleted")
            return _EXIT
        if missing:
            out.actions.append(CreateClaims(pod, tuple(missing)))
    if is_being_deleted(pod):
        if r.monotonic:
            return _EXIT
        if budget.spend():
            return _BREAK
    if r.monotonic or budget.left is not None:
        available, wait = running_and_available(pod, r.min_ready_seconds, r.world.now)
        if not available:
            out.wake(wait)
            if r.monotonic:
                return _EXIT
            if budget.spend():
                return _BREAK
    if not identity_matches(r.statefulset, pod, pod_index_label=r.options.pod_index_label):
        wanted = {POD_NAME_LABEL: name(pod)}
        if r.options.pod_index_label:
            wanted[POD_INDEX_LABEL] = str(ordinal_of(pod))
        if any(labels(pod).get(k) != v for k, v in wanted.items()):
            out.actions.append(FixIdentity(pod, wanted))
    out.actions.extend(_retention_actions(r, pod, scaled_down=False))
    return _NEXT


def _condemned(r: Round, pod: KubeObject, out: PhaseResult) -> bool:
    """``processCondemned`` for one pod; True when the round ends here."""
    if is_being_deleted(pod):
        return r.monotonic
    exempt = r.first_unhealthy is not None and name(pod) == name(r.first_unhealthy)
    if r.monotonic and not exempt:
        if not is_running_and_ready(pod):
            return True
        available, wait = running_and_available(pod, r.min_ready_seconds, r.world.now)
        if not available:
            out.wake(wait)
            return True
    action, _ = delete_or_hook(r, pod, DeleteReason.CONDEMNED)
    if action is not None:
        out.actions.append(action)
    return r.monotonic and action is not None


def plan_scale(r: Round) -> PhaseResult:
    """The scale phase; ``exit`` when upstream returns before the update phase."""
    out = PhaseResult()
    if metadata(r.statefulset).get("deletionTimestamp"):
        out.exit = True
        return out
    try:
        budget = _Budget(scale_max_unavailable(r.statefulset))
    except IntOrStringError as err:
        out.errors.append(str(err))
        out.exit = True
        return out
    for pod in r.slots:
        if pod is None:
            continue
        step = _replica(r, pod, budget, out)
        if step == _EXIT:
            out.exit = True
            return out
        if step == _BREAK:
            break
    for pod in r.condemned:
        out.actions.extend(_retention_actions(r, pod, scaled_down=True))
    for pod in r.condemned:
        if _condemned(r, pod, out):
            out.exit = True
            return out
    return out
