"""The Rollout state machine driven against a simulated world (pure; no API server).

The ``World`` fake plays the workload (a CloneSet with a partition), the
BatchRelease controller and the traffic objects, applying the machine's actions
the way the real shell does and reporting whether each changed anything.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.rollouts.api.common import CanaryStepState, ProgressingReason, RolloutPhase
from kruise.rollouts.release.batchplan import cloneset_partition, cloneset_partition_pods
from kruise.rollouts.release.hashing import release_plan_hash
from kruise.rollouts.rollout.machine import decide
from kruise.rollouts.rollout.model import Action, ActionKind, BatchView, Observed, Outcomes
from kruise.rollouts.workloads.info import WorkloadInfo

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def rollout(steps: list[dict[str, Any]], *, routing: bool = True, paused: bool = False) -> dict[str, Any]:
    canary: dict[str, Any] = {"steps": steps}
    if routing:
        canary["trafficRoutings"] = [
            {"service": "web", "gracePeriodSeconds": 0, "gateway": {"httpRouteName": "web"}}
        ]
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "shop", "generation": 1},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "strategy": {"canary": canary, "paused": paused},
        },
        "status": {},
    }


@dataclass
class World:
    """A CloneSet of ``replicas`` pods; ``updated`` of them at the new revision."""

    replicas: int = 10
    stable: str = "v1"
    update: str = "v1"
    updated: int = 10
    partition: Any = None
    in_progressing: bool = False
    batch: dict[str, Any] | None = None
    batch_phase: str = ""
    weight: int = 0
    stable_pinned: bool = False
    canary_service: bool = False
    now: datetime.datetime = T0
    log: list[str] = field(default_factory=list)

    def release(self, new: str) -> None:
        """The user changes the template; the workload webhook holds it at partition 100%."""
        self.update = new
        self.partition = "100%"
        self.in_progressing = True
        if new == self.stable:
            self.updated = self.replicas - self.updated  # the old pods are now the "updated" ones
        else:
            self.updated = 0

    def info(self) -> WorkloadInfo:
        return WorkloadInfo(
            kind="CloneSet",
            api_version="apps.kruise.io/v1alpha1",
            name="web",
            namespace="shop",
            uid="u",
            replicas=self.replicas,
            stable_revision=self.stable,
            canary_revision=self.update,
            pod_template_hash=self.update,
            in_progressing=self.in_progressing,
            in_rollback=self.in_progressing and self.update == self.stable and self.updated != self.replicas,
            updated_replicas=self.updated,
            updated_ready_replicas=self.updated,
            rollback_in_batches=True,  # what the CloneSet port reports
        )

    def converge_pods(self) -> None:
        target = self.replicas - cloneset_partition_pods(self.partition, self.replicas)
        self.updated = max(self.updated, target) if self.update != self.stable else self.replicas
        if self.partition is None:
            self.updated = self.replicas
            if self.update != self.stable and not self.in_progressing:
                self.stable = self.update

    def batch_view(self) -> BatchView:
        if self.batch is None:
            return BatchView.absent()
        plan = self.batch["releasePlan"]
        idx = plan.get("batchPartition")
        goal = (
            self.replicas
            if idx is None
            else self.replicas
            - cloneset_partition_pods(
                cloneset_partition(plan["batches"][idx]["canaryReplicas"], self.replicas), self.replicas
            )
        )
        return BatchView(
            exists=True,
            generation=1,
            observed_generation=1,
            observed_plan_hash=release_plan_hash(plan),
            phase=self.batch_phase,
            current_batch=idx or 0,
            batch_state="Ready" if self.updated >= goal else "Upgrading",
            updated_replicas=self.updated,
            updated_ready_replicas=self.updated,
        )

    def apply(self, action: Action) -> bool:
        self.log.append(action.kind)
        kind = action.kind
        if kind == ActionKind.ENSURE_BATCH_RELEASE:
            spec = action.payload["spec"]
            changed = self.batch != spec
            self.batch = spec
            self.batch_phase = "Progressing"
            idx = spec["releasePlan"]["batchPartition"]
            want = cloneset_partition(spec["releasePlan"]["batches"][idx]["canaryReplicas"], self.replicas)
            if cloneset_partition_pods(want, self.replicas) < cloneset_partition_pods(
                self.partition, self.replicas
            ):
                self.partition = want
            self.converge_pods()
            return changed
        if kind == ActionKind.FINALIZE_BATCH_RELEASE:
            changed = self.partition is not None
            self.partition = None
            self.batch_phase = "Completed"
            self.converge_pods()
            return changed
        if kind == ActionKind.DELETE_BATCH_RELEASE:
            changed = self.batch is not None
            self.batch = None
            return changed
        if kind == ActionKind.RELEASE_WORKLOAD:
            changed = self.in_progressing
            self.in_progressing = False
            self.converge_pods()
            return changed
        if kind == ActionKind.ENSURE_ROUTES:
            weight = action.payload["intent"]["weight"] or 0
            changed = self.weight != weight
            self.weight = weight
            return changed
        if kind == ActionKind.RESTORE_ROUTES:
            changed = self.weight != 0
            self.weight = 0
            return changed
        if kind == ActionKind.PIN_STABLE_SERVICE:
            changed = not self.stable_pinned
            self.stable_pinned = True
            return changed
        if kind == ActionKind.RESTORE_STABLE_SERVICE:
            changed = self.stable_pinned
            self.stable_pinned = False
            return changed
        if kind == ActionKind.ENSURE_CANARY_SERVICE:
            changed = not self.canary_service
            self.canary_service = True
            return changed
        if kind == ActionKind.DELETE_CANARY_SERVICE:
            changed = self.canary_service
            self.canary_service = False
            return changed
        raise AssertionError(kind)


def reconcile(ro: dict[str, Any], world: World) -> dict[str, Any]:
    obs = Observed(now=world.now, workload=world.info(), batch=world.batch_view())
    first = decide(ro, obs)
    changed = [world.apply(a) for a in first.actions]
    outcomes = Outcomes.of(first.actions, changed)
    second = decide(ro, Observed(now=world.now, workload=world.info(), batch=world.batch_view()), outcomes)
    ro = {**ro, "status": second.status}
    world.now += datetime.timedelta(seconds=1)
    return ro


def run_until(ro: dict[str, Any], world: World, predicate: Any, limit: int = 200) -> dict[str, Any]:
    for _ in range(limit):
        ro = reconcile(ro, world)
        if predicate(ro):
            return ro
    raise AssertionError(f"not reached; status={ro['status']}")


def state(ro: dict[str, Any]) -> tuple[int, str]:
    cs = ro["status"].get("canaryStatus") or {}
    return cs.get("currentStepIndex", 0), cs.get("currentStepState", "")


def reason(ro: dict[str, Any]) -> str:
    return next((x["reason"] for x in ro["status"].get("conditions", []) if x["type"] == "Progressing"), "")


def approve(ro: dict[str, Any]) -> dict[str, Any]:
    status = dict(ro["status"])
    status["canaryStatus"] = {**status["canaryStatus"], "currentStepState": CanaryStepState.STEP_READY}
    return {**ro, "status": status}


STEPS = [
    {"replicas": "20%", "traffic": "5%"},
    {"replicas": "50%", "traffic": "50%"},
    {"replicas": "100%", "traffic": "100%"},
]


def test_rollout_created_on_settled_workload_is_healthy_and_completed_at_last_step() -> None:
    world = World()
    ro = reconcile(rollout(STEPS), world)  # Initial -> Healthy
    ro = reconcile(ro, world)  # Healthy without a sub-status: synthesised, as upstream
    assert ro["status"]["phase"] == RolloutPhase.HEALTHY
    assert state(ro) == (3, CanaryStepState.COMPLETED)


def test_canary_with_approvals_moves_pods_and_weights_per_step_then_finalises() -> None:
    world = World()
    ro = reconcile(rollout(STEPS), world)
    world.release("v2")
    ro = run_until(ro, world, lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    assert reason(ro) == ProgressingReason.IN_ROLLING
    assert (world.updated, world.weight, world.partition) == (2, 5, "80%")
    assert world.stable_pinned and world.canary_service
    assert "manually confirm" in ro["status"]["message"]
    # nothing moves without approval
    for _ in range(5):
        ro = reconcile(ro, world)
    assert state(ro) == (1, CanaryStepState.STEP_PAUSED)

    ro = run_until(approve(ro), world, lambda r: state(r) == (2, CanaryStepState.STEP_PAUSED))
    assert (world.updated, world.weight) == (5, 50)

    ro = run_until(approve(ro), world, lambda r: r["status"]["phase"] == RolloutPhase.HEALTHY)
    assert world.updated == 10 and world.partition is None
    assert world.weight == 0 and not world.stable_pinned and not world.canary_service
    assert world.batch is None and not world.in_progressing
    assert any(x["type"] == "Succeeded" and x["status"] == "True" for x in ro["status"]["conditions"])


def test_rollback_mid_canary_routes_traffic_to_stable_before_resuming_the_workload() -> None:
    world = World()
    ro = reconcile(rollout(STEPS), world)
    world.release("v2")
    ro = run_until(ro, world, lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    world.log.clear()
    world.release("v1")  # the user reverts the template
    ro = run_until(ro, world, lambda r: r["status"]["phase"] == RolloutPhase.HEALTHY)
    order = [k for k in world.log if k in (ActionKind.RESTORE_ROUTES, ActionKind.FINALIZE_BATCH_RELEASE)]
    assert order[0] == ActionKind.RESTORE_ROUTES
    assert any(x["type"] == "Succeeded" and x["status"] == "False" for x in ro["status"]["conditions"])
    assert world.weight == 0 and world.partition is None


def conditions(ro: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {x["type"]: x for x in ro["status"].get("conditions") or []}


@pytest.mark.parametrize(
    ("revert", "progressing_message", "succeeded", "step_state"),
    [
        pytest.param(
            False, "Rollout progressing has been completed", "True", CanaryStepState.COMPLETED, id="success"
        ),
        pytest.param(
            True,
            "Rollout progressing has been canceled",
            "False",
            CanaryStepState.STEP_PAUSED,
            id="cancelled",
        ),
    ],
)
def test_a_cancelled_release_reads_as_cancelled_and_a_successful_one_as_completed(
    revert: bool, progressing_message: str, succeeded: str, step_state: str
) -> None:
    """``reconcileRolloutProgressing``: both end with Progressing False/Completed; the message (also
    ``status.message``) tells them apart; Succeeded carries only its status (no reason, no message);
    a cancelled release keeps the step state it was cancelled in."""
    world = World()
    ro = reconcile(rollout(STEPS), world)
    world.release("v2")
    ro = run_until(ro, world, lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    if revert:
        world.release("v1")
        ro = run_until(ro, world, lambda r: reason(r) == ProgressingReason.CANCELLING)
        cancelling = conditions(ro)["Progressing"]
        assert cancelling["message"] == (
            "The workload has been rolled back and the rollout process will be canceled"
        )
        assert ro["status"]["message"] == cancelling["message"]
    else:
        for _ in range(len(STEPS)):
            ro = run_until(
                approve(ro),
                world,
                lambda r: state(r)[1] in (CanaryStepState.STEP_PAUSED, CanaryStepState.COMPLETED),
            )
    ro = run_until(ro, world, lambda r: r["status"]["phase"] == RolloutPhase.HEALTHY)
    conds = conditions(ro)
    assert (conds["Progressing"]["status"], conds["Progressing"]["reason"]) == ("False", "Completed")
    assert conds["Progressing"]["message"] == progressing_message == ro["status"]["message"]
    assert (conds["Succeeded"]["status"], conds["Succeeded"]["reason"], conds["Succeeded"]["message"]) == (
        succeeded,
        "",
        "",
    )
    assert state(ro)[1] == step_state == ro["status"]["currentStepState"]


def test_timed_pause_continues_after_its_duration() -> None:
    steps = [{"replicas": 1, "pause": {"duration": 5}}, {"replicas": "100%"}]
    world = World()
    ro = reconcile(rollout(steps, routing=False), world)
    world.release("v2")
    ro = run_until(ro, world, lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    entered = world.now
    ro = run_until(ro, world, lambda r: state(r)[0] == 2)
    assert (world.now - entered).total_seconds() >= 5


def test_global_pause_holds_the_release() -> None:
    world = World()
    ro = reconcile(rollout(STEPS, paused=True), world)
    world.release("v2")
    ro = run_until(ro, world, lambda r: reason(r) == ProgressingReason.PAUSED)
    before = (world.updated, world.weight)
    for _ in range(5):
        ro = reconcile(ro, world)
    assert (world.updated, world.weight) == before


def test_continuous_release_restarts_from_step_one() -> None:
    world = World()
    ro = reconcile(rollout(STEPS), world)
    world.release("v2")
    ro = run_until(ro, world, lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    ro = run_until(approve(ro), world, lambda r: state(r) == (2, CanaryStepState.STEP_PAUSED))
    world.release("v3")
    world.updated = 0
    ro = run_until(
        ro,
        world,
        lambda r: (
            state(r) == (1, CanaryStepState.STEP_PAUSED)
            and r["status"]["canaryStatus"]["canaryRevision"] == "v3"
        ),
    )
    assert world.weight == 5


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 100), min_size=1, max_size=5), st.integers(1, 50))
def test_partition_never_releases_fewer_pods_as_steps_grow(percents: list[int], replicas: int) -> None:
    """Property: the canary pods a step asks for are monotone in the step's share."""
    shares = sorted(percents)
    pods = [
        replicas - cloneset_partition_pods(cloneset_partition(f"{p}%", replicas), replicas) for p in shares
    ]
    assert pods == sorted(pods)
    assert all(0 <= n <= replicas for n in pods)


@pytest.mark.parametrize(
    ("stable", "replicas", "batch", "want"),
    [
        pytest.param(1, 3, "67%", "33%", id="1 of 3 stays"),
        pytest.param(0, 10, "100%", "0%", id="all released"),
        pytest.param(10, 10, "0%", "100%", id="nothing released"),
        pytest.param(1, 101, "99%", "1%", id="never rounds to zero stable"),
    ],
)
def test_stable_partition_percent(stable: int, replicas: int, batch: str, want: str) -> None:
    from kruise.rollouts.release.batchplan import stable_partition_percent

    assert stable_partition_percent(stable, replicas, batch) == want


def test_a_first_status_while_the_workload_settles_carries_the_schema_required_fields() -> None:
    # the v1beta1 CRD requires status.currentStepIndex and currentStepState; the shell adds the
    # kstatus conditions to whatever status is decided, so even "wait" must bring them (a new
    # Rollout over a workload whose status lags its spec got a 422 on its first status write)
    info = WorkloadInfo(**{**World().info().__dict__, "status_consistent": False})
    decision = decide(rollout([{"replicas": 1}]), Observed(now=T0, workload=info, batch=BatchView.absent()))
    assert decision.status["currentStepIndex"] == 0 and decision.status["currentStepState"] == ""
    assert decision.requeue_after == 1.0 and not decision.actions


def test_a_completed_release_follows_the_workload_generation() -> None:
    """Upstream "Deployment canary rollout with Ingress > Deployment V1->V2: Percentage
    20%,40%,60%,80%,90%, and replicas=3" (``rollout_test.go:527``, failing at ``:290``
    ``WaitRolloutWorkloadGeneration``): after completion ``canaryStatus.observedWorkloadGeneration``
    is the Deployment's generation. Upstream refreshes it on every pass while the recorded canary
    revision is the workload's (``calculateRolloutStatus``)."""
    healthy = rollout(STEPS)
    healthy["status"] = {
        "observedGeneration": 1,
        "phase": RolloutPhase.HEALTHY,
        "currentStepIndex": 3,
        "currentStepState": CanaryStepState.COMPLETED,
        "canaryStatus": {
            "canaryRevision": "real",
            "podTemplateHash": "",
            "observedWorkloadGeneration": 4,
            "currentStepIndex": 3,
            "currentStepState": CanaryStepState.COMPLETED,
        },
    }
    base = World(stable="real", update="real", updated=10).info().__dict__
    same = WorkloadInfo(**{**base, "generation": 6})
    cs = decide(healthy, Observed(now=T0, workload=same, batch=BatchView.absent())).status["canaryStatus"]
    assert (cs["canaryRevision"], cs["observedWorkloadGeneration"]) == ("real", 6)

    healthy["status"]["canaryStatus"]["canaryRevision"] = "elsewhere"
    cs = decide(healthy, Observed(now=T0, workload=same, batch=BatchView.absent())).status["canaryStatus"]
    assert cs["observedWorkloadGeneration"] == 4, "another template's revision is not this release's"


def test_a_batch_not_ready_leaves_the_rollout_waiting_for_events_with_no_timer() -> None:
    """Upstream's runBatchRelease sets no RecheckTime while the batch is not ready: the
    BatchRelease's and workload's watch events wake the Rollout."""
    world = World()
    world.converge_pods = lambda: None  # type: ignore[method-assign]  # the new pods never get ready
    ro = reconcile(rollout(STEPS, routing=False), world)
    world.release("v2")
    ro = run_until(ro, world, lambda r: state(r) == (1, CanaryStepState.STEP_UPGRADE))
    obs = Observed(now=world.now, workload=world.info(), batch=world.batch_view())
    first = decide(ro, obs)
    assert [a.kind for a in first.actions] == [ActionKind.ENSURE_BATCH_RELEASE]
    changed = [world.apply(a) for a in first.actions]
    second = decide(ro, obs, Outcomes.of(first.actions, changed))
    assert state({"status": second.status}) == (1, CanaryStepState.STEP_UPGRADE)
    assert first.requeue_after is None and second.requeue_after is None
