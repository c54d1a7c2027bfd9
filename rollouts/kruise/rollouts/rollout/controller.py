"""The Rollout controller shell: observe, decide (pure machine), act, persist status once.

Per reconcile: read the Rollout, its workload and BatchRelease from the cache; keep
the ``rollouts.kruise.io/rollout`` finalizer while the Rollout lives and the workload labelled
``rollouts.kruise.io/workload-type`` (:mod:`~kruise.rollouts.workloads.label`: the hold
webhooks see only labelled workloads; the label is written in the first pass that finds the
workload, the finalizer in the same pass); call
:func:`~kruise.rollouts.rollout.machine.decide` for the actions of the current state,
run them (:class:`~kruise.rollouts.rollout.effects.Effects`), call it again with what
each action changed (and again, on the decided status, while a round only passes through a
state with nothing to wait for: :meth:`RolloutController._decide_chain`), then post the
decision's transition events
(:meth:`~kruise.core.events.EventRecorder.transition`: before the status write, named after the
transition, so a crash in between neither loses nor doubles one) and write the status with a
resourceVersion precondition (so a
concurrent ``kubectl kruise rollout approve`` is never overwritten: the write
conflicts and the next round decides on the approved status).

An analysis gate that cannot start (:class:`~kruise.rollouts.rollout.analysis_effects.AnalysisGateError`,
e.g. a missing AnalysisTemplate) does not fail the reconcile: the step keeps waiting, the cause
becomes ``status.message`` and a Warning event ``AnalysisError``, and the Rollout looks again
every few seconds.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Mapping
from typing import Any

from kruise.analysis.resources import ANALYSIS_RUNS
from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.events import EventRecorder
from kruise.core.expectations import ResourceVersionExpectations
from kruise.core.informer import object_key
from kruise.core.kube.client import KubeClient
from kruise.core.patches import merge_patch
from kruise.core.runtime import ControllerSpec, Watch, primary
from kruise.core.workqueue import Result
from kruise.rollouts.api.common import RolloutPhase
from kruise.rollouts.cache import ROLLOUTS_BY_WORKLOAD, RUNS_READ, RolloutsCache, index_run_rollout
from kruise.rollouts.release.constants import RECHECK_SECONDS, ROLLOUT_FINALIZER, ROLLOUT_HASH_ANNOTATION
from kruise.rollouts.release.hashing import rollout_hash
from kruise.rollouts.release.timefmt import fmt_time
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from kruise.rollouts.rollout import analysis_effects
from kruise.rollouts.rollout.analysis_effects import AnalysisGateError
from kruise.rollouts.rollout.analysis_gate import has_analysis
from kruise.rollouts.rollout.bluegreen import decide
from kruise.rollouts.rollout.effects import Effects, TrafficPort
from kruise.rollouts.rollout.model import Action, BatchView, Decision, Event, Observed, Outcomes
from kruise.rollouts.rollout.prepull_effects import PrePuller
from kruise.rollouts.rollout.readiness import with_rollout_kstatus
from kruise.rollouts.rollout.steps import traffic_routings_of
from kruise.rollouts.workloads.fight import CONDITION_TYPE, conflict_conditions, conflict_kind
from kruise.rollouts.workloads.label import label_patch, unlabel_patch
from kruise.rollouts.workloads.registry import Found, find, resources

JSON = dict[str, Any]
ANALYSIS_ERROR_REASON = "AnalysisError"
"""Warning event reason when an analysis gate cannot start (its message is also ``status.message``)."""
WORKLOAD_RESOURCES = resources()
"""What the workload-type label is written on (every registered kind's resource)."""
STALE_RECHECK_SECONDS = 1.0
"""How soon a Rollout whose cached copy is older than this controller's last write looks again (its
watch event usually comes first)."""
BLOCKED_RECHECK_SECONDS = 5.0
"""How soon a Rollout blocked by an analysis gate looks again (the missing template may appear)."""
WORKLOAD_KINDS = frozenset(r.kind for r in WORKLOAD_RESOURCES)
CHAIN_ROUNDS = 8
"""Most rounds of the machine one reconcile runs before it writes (:meth:`RolloutController._decide_chain`):
a canary step passes at most four states at once (``StepReady`` -> ``BeforeStepUpgrade`` ->
``StepUpgrade``; ``StepUpgrade`` done -> ``StepTrafficRouting`` -> ``StepMetricsAnalysis`` ->
``StepPaused``), finalising at most its six steps."""


def traffic_conflict(condition: Mapping[str, Any]) -> bool:
    """A ``Conflict`` condition naming a network object (the workload's is the BatchRelease's)."""
    kind = conflict_kind(condition)
    return bool(kind) and kind not in WORKLOAD_KINDS


def batch_view(br: JSON | None) -> BatchView:
    if br is None:
        return BatchView.absent()
    status = br.get("status") or {}
    canary = status.get("canaryStatus") or {}
    meta = br.get("metadata") or {}
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    batches = plan.get("batches") or []
    index = plan.get("batchPartition")
    partition_replicas = None
    if isinstance(index, int) and 0 <= index < len(batches):
        partition_replicas = batches[index].get("canaryReplicas")
    return BatchView(
        exists=True,
        generation=int(meta.get("generation") or 0),
        observed_generation=int(status.get("observedGeneration") or 0),
        observed_plan_hash=str(status.get("observedReleasePlanHash") or ""),
        phase=str(status.get("phase") or ""),
        current_batch=int(canary.get("currentBatch") or 0),
        batch_state=str(canary.get("batchState") or ""),
        updated_replicas=int(canary.get("updatedReplicas") or 0),
        updated_ready_replicas=int(canary.get("updatedReadyReplicas") or 0),
        deleting=bool(meta.get("deletionTimestamp")),
        partition_replicas=partition_replicas,
        rollout_id=str(plan.get("rolloutID") or ""),
    )


def requeue_for(
    rollout: Mapping[str, Any], decided: float | None, blocked: AnalysisGateError | None, wake: float | None
) -> float | None:
    """Seconds until the Rollout is looked at again (None: only when an event wakes it): the
    decision's time, sooner while an analysis gate blocks, the recheck of a progressing
    Rollout's traffic objects, and ``wake`` (a traffic fight's next re-assert or hold check,
    ``TrafficFights.wake_in``).

    A progressing Rollout without traffic routing that waits for its BatchRelease, workload or
    AnalysisRun is woken by their watch events only, as upstream's (whose reconcile requeues only
    for a ``RecheckTime``); one with traffic routing also looks every ``RECHECK_SECONDS`` (3 s),
    since its routes, Ingresses and custom objects are not watched and a revert of one (a GitOps
    fight, ours) is seen only by looking."""
    requeue = decided
    if blocked is not None:
        requeue = min(requeue or BLOCKED_RECHECK_SECONDS, BLOCKED_RECHECK_SECONDS)
    if (
        requeue is None
        and (rollout.get("status") or {}).get("phase") == RolloutPhase.PROGRESSING
        and traffic_routings_of(rollout)
    ):
        requeue = RECHECK_SECONDS
    if wake is not None:
        requeue = wake if requeue is None else min(requeue, wake)
    return requeue


class RolloutController:
    name = "rollout-controller"

    def __init__(
        self,
        kube: KubeClient,
        recorder: EventRecorder,
        cache: RolloutsCache,
        traffic: TrafficPort,
        *,
        workers: int = 3,
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.effects = Effects(kube, traffic, cache.batch_release)
        self.traffic = traffic
        self.workers = workers
        self.prepull = PrePuller(kube)
        self.written = ResourceVersionExpectations()

    def spec(self) -> ControllerSpec:
        """Woken by its Rollouts, their BatchReleases (same name), their workloads (every
        registered kind's routes) and their AnalysisRuns."""
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(ROLLOUTS, indexers=ROLLOUTS_BY_WORKLOAD.indexers),
                Watch(BATCH_RELEASES, lambda br: (object_key(br),)),
                *self.cache.workload_watches(),
                Watch(ANALYSIS_RUNS, index_run_rollout, RUNS_READ.indexers),
            ),
            workers=self.workers,
        )

    async def reconcile(self, key: str) -> Result:
        rollout = self.cache.rollout(key)
        if rollout is None:
            return Result()
        meta = rollout["metadata"]
        if not self.written.caught_up(rollout):
            # the cache does not show our last write yet: deciding on the older copy would
            # redo the transition it recorded (and lose the write to a conflict); its watch event
            # wakes this key again
            return Result(requeue_after=STALE_RECHECK_SECONDS)
        deleting = bool(meta.get("deletionTimestamp"))
        found = find(rollout, self.cache.reader)
        if found is not None and not deleting:
            # first of all, in the pass that sees the workload: until it carries the label the hold
            # webhooks do not see it, and an update arriving then (a workload created with its
            # Rollout and changed at once) would roll natively; the finalizer follows in this pass
            await self._patch_workload(found, label_patch(found.workload))
        if not deleting and ROLLOUT_FINALIZER not in (meta.get("finalizers") or []):
            await self._set_finalizers(rollout, [*(meta.get("finalizers") or []), ROLLOUT_FINALIZER])
            return Result(requeue_after=0.1)
        if deleting and ROLLOUT_FINALIZER not in (meta.get("finalizers") or []):
            return Result()
        if not deleting and await self._annotate_hash(rollout):
            return Result(requeue_after=0.1)
        obs = Observed(
            now=datetime.datetime.now(datetime.UTC),
            workload=None if found is None else found.info(rollout),
            batch=batch_view(self.cache.batch_release(key)),
            deleting=deleting,
            analysis=analysis_effects.phases(self.cache.analysis_runs(key)) if has_analysis(rollout) else {},
        )
        decision, blocked, transitions = await self._decide_chain(rollout, found, obs)
        leaving = rollout.get("status") or {}
        for event, left in transitions:  # before the status write that records the transition
            if not await self.recorder.transition(
                rollout, event.type, event.reason, event.message, leaving=left
            ):
                return Result(requeue_after=BLOCKED_RECHECK_SECONDS)
        new_status: JSON = dict(decision.status)
        if blocked is not None:
            new_status["message"] = str(blocked)
            if leaving.get("message") != str(blocked) and not await self.recorder.transition(
                rollout, "Warning", ANALYSIS_ERROR_REASON, str(blocked), leaving=leaving
            ):
                return Result(requeue_after=BLOCKED_RECHECK_SECONDS)
        new_status = with_rollout_kstatus(rollout, new_status, fmt_time(obs.now))  # Ready/Reconciling/Stalled
        await self._traffic_conflict(rollout, new_status, fmt_time(obs.now))
        # ours: rollouts.kruise.io/prepull-next-batch (jobs and the PrePullNextBatch condition)
        await self.prepull.sync(
            rollout, None if found is None else found.workload, new_status, fmt_time(obs.now)
        )
        status_patch = merge_patch(rollout.get("status") or {}, new_status)
        if status_patch:
            try:
                self.written.expect_written(
                    await self.kube.patch(
                        ROLLOUTS,
                        meta["name"],
                        {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": status_patch},
                        meta["namespace"],
                        patch_type="merge",
                        subresource="status",
                    )
                )
            except ConflictError:
                return Result(requeue_after=0.1)
            except NotFoundError:
                return Result()
        if has_analysis(rollout) and decision.status.get("phase") == RolloutPhase.HEALTHY:
            await analysis_effects.gc_runs(self.kube, rollout)
        if decision.remove_finalizer:
            if found is not None:
                await self._patch_workload(found, unlabel_patch(found.workload))
            await self._set_finalizers(
                rollout, [f for f in meta.get("finalizers") or [] if f != ROLLOUT_FINALIZER]
            )
            return Result()
        return Result(
            requeue_after=requeue_for(rollout, decision.requeue_after, blocked, self.traffic.wake_in(rollout))
        )

    async def _round(
        self, rollout: JSON, found: Found | None, obs: Observed
    ) -> tuple[Decision, AnalysisGateError | None, bool]:
        """One round of the machine: the current state's actions run, then the decision on their
        outcomes; also whether an action changed the world and the gate error that blocked one."""
        first = decide(rollout, obs)
        reports: list[tuple[Action, bool]] = []
        blocked: AnalysisGateError | None = None
        for action in first.actions:
            try:
                changed = await self.effects.run(rollout, found, action)
            except AnalysisGateError as err:
                blocked, changed = err, False
            reports.append((action, changed))
            if first.sequential and changed:
                break  # the rest waits for the next round (and the grace period)
        return decide(rollout, obs, Outcomes(reports)), blocked, any(changed for _, changed in reports)

    async def _decide_chain(
        self, rollout: JSON, found: Found | None, obs: Observed
    ) -> tuple[Decision, AnalysisGateError | None, list[tuple[Event, Mapping[str, Any]]]]:
        """Rounds of the machine until one has to wait, written as one status.

        Upstream's ``runCanary`` moves one step state per reconcile, writes the status and is
        woken by its own write. A state whose actions found the world already as wanted and
        that asks to be looked at again at once (``requeue_after == 0``: a step without traffic
        passing ``StepTrafficRouting``, one without analysis passing ``StepMetricsAnalysis``,
        ``StepReady`` entering the next step, the finalising steps with nothing to undo) has
        nothing to wait for, so the next round runs here on the decided status, with the same
        observations: the world did not change, since no action changed it. The chain stops at
        a round that changed something (the world must answer first), waits (a pause, a grace
        period, a batch not ready), is blocked, drops the finalizer, or decides the status it
        was given; and after :data:`CHAIN_ROUNDS` rounds. The states in between are never
        written; the status written, its events and their order are those of the last round
        after the same transitions one by one (each event is named after the status it left,
        so a crash before the write re-posts none).

        Returns the last decision, the gate error that blocked it, and each transition's events
        with the status it left."""
        transitions: list[tuple[Event, Mapping[str, Any]]] = []
        current = rollout
        for _ in range(CHAIN_ROUNDS):
            decision, blocked, changed = await self._round(current, found, obs)
            left = current.get("status") or {}
            transitions += [(event, left) for event in decision.events]
            if (
                changed
                or blocked is not None
                or decision.remove_finalizer
                or decision.requeue_after != 0.0
                or dict(decision.status) == dict(left)
            ):
                break
            current = {**current, "status": dict(decision.status)}
        return decision, blocked, transitions

    async def _traffic_conflict(self, rollout: JSON, new_status: JSON, now: str) -> None:
        """The ``Conflict`` condition for a fight over the network objects (:mod:`.trafficfights`);
        one the BatchRelease controller set for the workload stays as it is."""
        found = await self.traffic.conflict(rollout)
        conditions = list(new_status.get("conditions") or [])
        if found is None and not any(c.get("type") == CONDITION_TYPE for c in conditions):
            return
        revert, message = (found.revert, found.message) if found is not None else (None, "")
        wanted = conflict_conditions(conditions, revert, message, now, traffic_conflict)
        new_status["conditions"] = [dict(c) for c in wanted]

    async def _annotate_hash(self, rollout: JSON) -> bool:
        """``calculateRolloutHash``: keep ``rollouts.kruise.io/hash`` (the plan's hash, the one
        ``status.*.rolloutHash`` records) on the Rollout; True when it had to be written."""
        meta = rollout["metadata"]
        want = rollout_hash(rollout)
        if (meta.get("annotations") or {}).get(ROLLOUT_HASH_ANNOTATION) == want:
            return False
        patch = {"metadata": {"annotations": {ROLLOUT_HASH_ANNOTATION: want}}}
        with contextlib.suppress(NotFoundError):
            self.written.expect_written(
                await self.kube.patch(ROLLOUTS, meta["name"], patch, meta["namespace"], patch_type="merge")
            )
        return True

    async def _patch_workload(self, found: Found, patch: JSON | None) -> None:
        """Merge-patch the workload's metadata (the workload-type label); gone is fine."""
        if patch is None:
            return
        meta = found.workload.get("metadata") or {}
        resource = found.kind.resource
        with contextlib.suppress(NotFoundError):
            await self.kube.patch(resource, meta["name"], patch, meta["namespace"], patch_type="merge")

    async def _set_finalizers(self, rollout: JSON, finalizers: list[str]) -> None:
        meta = rollout["metadata"]
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"], "finalizers": finalizers or None}}
        with contextlib.suppress(ConflictError, NotFoundError):
            self.written.expect_written(
                await self.kube.patch(ROLLOUTS, meta["name"], patch, meta["namespace"], patch_type="merge")
            )
