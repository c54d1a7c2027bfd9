"""Blue-green Rollouts through the state machine, against a simulated world (pure).

The world plays a workload whose new pods surge next to the old ones (the BatchRelease's
blue-green control), the traffic objects and the workload hold; it records the order of the
actions the machine asks for.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from kruise.rollouts.api.common import CanaryStepState, RolloutPhase
from kruise.rollouts.release.hashing import release_plan_hash
from kruise.rollouts.rollout.bluegreen import (
    CONTINUOUS_RELEASE_MESSAGE,
    blue_green_status,
    canary_view,
    decide,
)
from kruise.rollouts.rollout.model import Action, ActionKind, BatchView, Observed, Outcomes
from kruise.rollouts.workloads.bluegreen import new_rs_replicas_limit
from kruise.rollouts.workloads.info import WorkloadInfo

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
STEPS = [
    {"replicas": "50%", "traffic": "0%", "pause": {}},
    {"replicas": "100%", "traffic": "50%", "pause": {}},
    {"replicas": "100%", "traffic": "100%", "pause": {}},
]


def rollout(steps: list[dict[str, Any]] = STEPS) -> dict[str, Any]:
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "shop", "generation": 1},
        "spec": {
            "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "strategy": {
                "blueGreen": {
                    "steps": steps,
                    "trafficRoutings": [
                        {"service": "web", "gracePeriodSeconds": 0, "ingress": {"name": "web"}}
                    ],
                }
            },
        },
        "status": {},
    }


@dataclass
class World:
    """A Deployment of ``replicas`` pods at ``stable``; ``updated`` new pods surge at ``update``."""

    replicas: int = 10
    stable: str = "v1"
    update: str = "v1"
    updated: int = 0
    surge: Any = 0
    in_progressing: bool = False
    batch: dict[str, Any] | None = None
    batch_phase: str = ""
    weight: int | None = None
    stable_pinned: bool = False
    canary_service: bool = False
    now: datetime.datetime = T0
    log: list[str] = field(default_factory=list)

    def release(self, new: str) -> None:
        self.update = new
        self.in_progressing = True

    def info(self) -> WorkloadInfo:
        return WorkloadInfo(
            kind="Deployment",
            api_version="apps/v1",
            name="web",
            namespace="shop",
            uid="u",
            replicas=self.replicas,
            stable_revision=self.stable,
            canary_revision=self.update,
            pod_template_hash=self.update if self.updated else "",
            in_progressing=self.in_progressing,
            in_rollback=self.in_progressing and self.update == self.stable,
            style="BlueGreen",  # what the port reports for a blue-green Rollout
        )

    def batch_view(self) -> BatchView:
        if self.batch is None:
            return BatchView.absent()
        plan = self.batch["releasePlan"]
        idx = plan.get("batchPartition")
        goal = (
            self.replicas
            if idx is None
            else new_rs_replicas_limit(plan["batches"][idx]["canaryReplicas"], self.replicas)
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
            assert spec["releasePlan"]["rollingStyle"] == "BlueGreen"
            changed = self.batch != spec
            self.batch, self.batch_phase = spec, "Progressing"
            idx = spec["releasePlan"]["batchPartition"]
            self.updated = max(
                self.updated,
                new_rs_replicas_limit(spec["releasePlan"]["batches"][idx]["canaryReplicas"], self.replicas),
            )
            return changed
        if kind == ActionKind.FINALIZE_BATCH_RELEASE:
            changed = self.batch_phase != "Completed"
            self.batch_phase = "Completed"
            if self.update == self.stable:  # rollback: the surge goes away
                self.updated = 0
            else:
                self.stable, self.updated = self.update, 0
            return changed
        if kind == ActionKind.DELETE_BATCH_RELEASE:
            changed = self.batch is not None
            self.batch = None
            return changed
        if kind == ActionKind.RELEASE_WORKLOAD:
            changed = self.in_progressing
            self.in_progressing = False
            return changed
        if kind == ActionKind.ENSURE_ROUTES:
            weight = action.payload["intent"]["weight"]
            changed = self.weight != weight
            self.weight = weight
            self.log.append(f"weight={weight}")
            return changed
        if kind == ActionKind.RESTORE_ROUTES:
            changed = self.weight is not None
            self.weight = None
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
    first = decide(ro, Observed(now=world.now, workload=world.info(), batch=world.batch_view()))
    changed = [world.apply(a) for a in first.actions]
    outcomes = Outcomes.of(first.actions, changed)
    second = decide(ro, Observed(now=world.now, workload=world.info(), batch=world.batch_view()), outcomes)
    world.now += datetime.timedelta(seconds=1)
    return {**ro, "status": second.status}


def run_until(ro: dict[str, Any], world: World, predicate: Any, limit: int = 200) -> dict[str, Any]:
    for _ in range(limit):
        ro = reconcile(ro, world)
        if predicate(ro):
            return ro
    raise AssertionError(f"not reached; status={ro['status']}")


def state(ro: dict[str, Any]) -> tuple[int, str]:
    bg = ro["status"].get("blueGreenStatus") or {}
    return bg.get("currentStepIndex", 0), bg.get("currentStepState", "")


def approve(ro: dict[str, Any]) -> dict[str, Any]:
    bg = {**ro["status"]["blueGreenStatus"], "currentStepState": CanaryStepState.STEP_READY}
    return {**ro, "status": {**ro["status"], "blueGreenStatus": bg}}


def cond(ro: dict[str, Any], ctype: str) -> dict[str, Any]:
    return next(x for x in ro["status"]["conditions"] if x["type"] == ctype)


def test_status_views_rename_the_updated_fields_both_ways() -> None:
    status = {
        "phase": "Progressing",
        "blueGreenStatus": {"updatedRevision": "b", "updatedReplicas": 3, "podTemplateHash": "b"},
    }
    view = canary_view(status)
    assert view["canaryStatus"] == {"canaryRevision": "b", "canaryReplicas": 3, "podTemplateHash": "b"}
    assert "blueGreenStatus" not in view
    assert blue_green_status(view) == status


def test_blue_green_release_surges_steps_waits_at_last_step_and_finalises_in_upstream_order() -> None:
    world = World()
    ro = run_until(rollout(), world, lambda r: state(r) == (3, CanaryStepState.COMPLETED))
    assert "canaryStatus" not in ro["status"]
    world.release("v2")
    ro = run_until(ro, world, lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    bg = ro["status"]["blueGreenStatus"]
    assert "canaryStatus" not in ro["status"]
    assert (bg["updatedRevision"], bg["updatedReplicas"], bg["updatedReadyReplicas"]) == ("v2", 5, 5)
    assert world.stable_pinned and world.canary_service and world.weight == 0
    ro = run_until(approve(ro), world, lambda r: state(r) == (2, CanaryStepState.STEP_PAUSED))
    assert (world.updated, world.weight) == (10, 50)
    ro = run_until(approve(ro), world, lambda r: state(r) == (3, CanaryStepState.STEP_PAUSED))
    # the last 100% step does not continue by itself in blue-green
    for _ in range(5):
        ro = reconcile(ro, world)
    assert state(ro) == (3, CanaryStepState.STEP_PAUSED) and world.weight == 100
    world.log.clear()
    ro = run_until(approve(ro), world, lambda r: r["status"]["phase"] == RolloutPhase.HEALTHY)
    assert cond(ro, "Succeeded")["status"] == "True"
    order = [
        k
        for k in world.log
        if k
        in (
            "weight=100",
            ActionKind.RESTORE_STABLE_SERVICE,
            ActionKind.FINALIZE_BATCH_RELEASE,
            ActionKind.RESTORE_ROUTES,
            ActionKind.DELETE_CANARY_SERVICE,
            ActionKind.DELETE_BATCH_RELEASE,
        )
    ]
    firsts = list(dict.fromkeys(order))
    assert firsts == [
        "weight=100",  # RouteTrafficToNew
        ActionKind.RESTORE_STABLE_SERVICE,
        ActionKind.FINALIZE_BATCH_RELEASE,  # ResumeWorkload
        ActionKind.RESTORE_ROUTES,  # RouteTrafficToStable
        ActionKind.DELETE_CANARY_SERVICE,
        ActionKind.DELETE_BATCH_RELEASE,  # ReleaseWorkloadControl
    ]
    assert world.stable == "v2" and world.batch is None and not world.in_progressing
    assert world.weight is None and not world.canary_service and not world.stable_pinned


def test_rollback_routes_traffic_to_stable_first_then_resumes_the_workload() -> None:
    world = World()
    ro = run_until(rollout(), world, lambda r: r["status"].get("phase") == RolloutPhase.HEALTHY)
    world.release("v2")
    ro = run_until(ro, world, lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    ro = run_until(approve(ro), world, lambda r: state(r) == (2, CanaryStepState.STEP_PAUSED))
    world.log.clear()
    world.release("v1")  # the user reverts the template
    ro = run_until(ro, world, lambda r: r["status"]["phase"] == RolloutPhase.HEALTHY)
    firsts = list(
        dict.fromkeys(
            k
            for k in world.log
            if k
            in (
                ActionKind.RESTORE_ROUTES,
                ActionKind.FINALIZE_BATCH_RELEASE,
                ActionKind.RESTORE_STABLE_SERVICE,
                ActionKind.DELETE_CANARY_SERVICE,
                ActionKind.DELETE_BATCH_RELEASE,
            )
        )
    )
    assert firsts == [
        ActionKind.RESTORE_ROUTES,
        ActionKind.FINALIZE_BATCH_RELEASE,
        ActionKind.RESTORE_STABLE_SERVICE,
        ActionKind.DELETE_CANARY_SERVICE,
        ActionKind.DELETE_BATCH_RELEASE,
    ]
    assert cond(ro, "Succeeded")["status"] == "False"
    assert world.stable == "v1" and world.updated == 0


def test_continuous_release_is_refused_with_upstreams_message_until_rolled_back() -> None:
    world = World()
    ro = run_until(rollout(), world, lambda r: r["status"].get("phase") == RolloutPhase.HEALTHY)
    world.release("v2")
    ro = run_until(ro, world, lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    world.release("v3")
    for _ in range(3):
        ro = reconcile(ro, world)
    assert ro["status"]["message"] == CONTINUOUS_RELEASE_MESSAGE
    assert cond(ro, "Progressing")["message"] == CONTINUOUS_RELEASE_MESSAGE
    assert state(ro) == (1, CanaryStepState.STEP_PAUSED) and world.batch is not None  # nothing torn down
    world.release("v2")  # back to the version being released: the release goes on
    ro = reconcile(ro, world)
    assert "manually confirm" in ro["status"]["message"]
