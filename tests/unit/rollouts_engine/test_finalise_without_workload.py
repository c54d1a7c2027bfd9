"""Finalising a Rollout whose workload is gone (its namespace being deleted, say) while its
BatchRelease still exists: the resume step has nothing to do and returns no action (it used to
hand the effects an empty BatchRelease spec, which failed with ``KeyError: 'releasePlan'`` on every
retry); the BatchRelease is then deleted by the release-control step."""

from __future__ import annotations

import datetime
from typing import Any, cast

from kruise.rollouts.rollout.finalise import FinalisingStepType, _actions
from kruise.rollouts.rollout.model import ActionKind, BatchView, Observed, Round

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
ROLLOUT: dict[str, Any] = {
    "apiVersion": "rollouts.kruise.io/v1beta1",
    "kind": "Rollout",
    "metadata": {"name": "web", "namespace": "shop", "generation": 1, "uid": "u"},
    "spec": {
        "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
        "strategy": {"canary": {"steps": [{"replicas": 1}]}},
    },
    "status": {},
}


def round_(workload: Any) -> Round:
    obs = Observed(now=T0, workload=workload, batch=BatchView(exists=True))
    return Round(ROLLOUT, cast(Any, {"currentStepIndex": 1, "currentStepState": ""}), obs)


def test_resume_step_without_a_workload_has_nothing_to_do() -> None:
    assert _actions(round_(None), FinalisingStepType.RESUME_WORKLOAD) == []


def test_release_control_still_deletes_the_batch_release_without_a_workload() -> None:
    kinds = [a.kind for a in _actions(round_(None), FinalisingStepType.RELEASE_WORKLOAD_CONTROL)]
    assert ActionKind.DELETE_BATCH_RELEASE in kinds
