"""What a RolloutHistory records (pure): only releases with a rollout-id of their own, the pods
each step released, ``completed`` only for a release that succeeded, and nothing after that."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.rollouts.rollouthistory.record import (
    canary_steps,
    history_name,
    recorded_id,
    released_steps,
    routed_names,
    snapshot_spec,
    wanted_status,
)

JSON = dict[str, Any]
ID, BATCH = "rollouts.kruise.io/rollout-id", "rollouts.kruise.io/rollout-batch-id"
SELECTOR = {"matchLabels": {"app": "web"}}
STEPS = [{"replicas": "20%"}, {"replicas": "60%"}, {"replicas": "100%"}]


def rollout(
    *, observed: str = "2", step: int = 2, state: str = "StepPaused", phase: str = "Progressing", ok: str = ""
) -> JSON:
    conditions = [{"type": "Succeeded", "status": ok}] if ok else []
    return {
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "strategy": {
                "canary": {
                    "steps": STEPS,
                    "trafficRoutings": [{"service": "web", "ingress": {"name": "web-ing"}}],
                }
            },
        },
        "status": {
            "phase": phase,
            "conditions": conditions,
            "canaryStatus": {
                "observedRolloutID": observed,
                "currentStepIndex": step,
                "currentStepState": state,
            },
        },
    }


def workload(label: str | None = "2", annotation: str | None = None) -> JSON:
    meta: JSON = {"name": "web", "namespace": "ns", "labels": {}, "annotations": {}}
    if label:
        meta["labels"][ID] = label
    if annotation:
        meta["annotations"][ID] = annotation
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": meta,
        "spec": {"selector": SELECTOR},
    }


def pod(name: str, batch: str | None, rid: str = "2", app: str = "web", deleting: bool = False) -> JSON:
    labels = {"app": app, ID: rid}
    if batch:
        labels[BATCH] = batch
    meta: JSON = {"name": name, "labels": labels}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "spec": {"nodeName": "kwok-node-0"}, "status": {"podIP": f"10.0.0.{name[-1]}"}}


def history(rid: str = "2", phase: str = "") -> JSON:
    return {
        "spec": {"rollout": {"name": "web", "rolloutID": rid}},
        "status": {"phase": phase} if phase else {},
    }


@pytest.mark.parametrize(
    ("obj", "wl", "expected"),
    [
        pytest.param(rollout(), workload(), "2", id="the workload's label is the release's id"),
        pytest.param(rollout(), workload(None, "2"), "2", id="the annotation when there is no label"),
        pytest.param(rollout(observed="5d8f9c7b6"), workload(None), "", id="revision fallback: not recorded"),
        pytest.param(rollout(observed="1"), workload("2"), "", id="the Rollout has not seen the new id yet"),
        pytest.param(rollout(), None, "", id="no workload"),
    ],
)
def test_only_a_release_with_its_own_rollout_id_is_recorded(
    obj: JSON, wl: JSON | None, expected: str
) -> None:
    assert recorded_id(obj, wl) == expected


def test_history_name_is_one_per_rollout_and_id() -> None:
    assert history_name("web", "2") == history_name("web", "2") != history_name("web", "3")
    assert history_name("web", "2").startswith("web-") and len(history_name("web", "2")) == len("web-") + 6
    assert len(history_name("x" * 253, "2")) == 253


@pytest.mark.parametrize(
    ("step", "state", "expected"),
    [
        pytest.param(1, "StepUpgrade", 0, id="first step upgrading"),
        pytest.param(2, "BeforeStepUpgrade", 1, id="second step about to upgrade"),
        pytest.param(2, "StepTrafficRouting", 2, id="second step's pods upgraded"),
        pytest.param(3, "Completed", 3, id="completed"),
    ],
)
def test_released_steps_count_once_the_pods_are_upgraded(step: int, state: str, expected: int) -> None:
    assert released_steps(rollout(step=step, state=state)) == expected


def test_canary_steps_list_the_pods_of_each_batch() -> None:
    pods = [
        pod("web-b", "2"),
        pod("web-a", "1"),
        pod("web-c", "2"),
        pod("web-d", None),  # stable pod: no batch
        pod("web-e", "2", rid="1"),  # an older release
        pod("web-f", "1", app="other"),  # another workload's pod
        pod("web-g", "1", deleting=True),
    ]
    assert canary_steps("2", 3, SELECTOR, pods) == [
        {"canaryStepIndex": 1, "pods": [{"name": "web-a", "ip": "10.0.0.a", "nodeName": "kwok-node-0"}]},
        {
            "canaryStepIndex": 2,
            "pods": [
                {"name": "web-b", "ip": "10.0.0.b", "nodeName": "kwok-node-0"},
                {"name": "web-c", "ip": "10.0.0.c", "nodeName": "kwok-node-0"},
            ],
        },
        {"canaryStepIndex": 3},
    ]


def test_progressing_history_lists_the_released_steps() -> None:
    wanted = wanted_status(rollout(step=2), history(), SELECTOR, [pod("web-a", "1"), pod("web-b", "2")])
    assert not wanted.completed and wanted.status is not None
    assert [s["canaryStepIndex"] for s in wanted.status["canarySteps"]] == [1, 2]
    assert "phase" not in wanted.status


def test_a_succeeded_release_completes_its_history_with_every_step() -> None:
    done = rollout(step=3, state="Completed", phase="Healthy", ok="True")
    wanted = wanted_status(done, history(), SELECTOR, [pod("web-a", "1")])
    assert wanted.completed and wanted.status is not None
    assert wanted.status["phase"] == "completed"
    assert [s["canaryStepIndex"] for s in wanted.status["canarySteps"]] == [1, 2, 3]


@pytest.mark.parametrize(
    ("obj", "hist"),
    [
        pytest.param(rollout(), history(phase="completed"), id="a completed history is never changed"),
        pytest.param(rollout(observed="3"), history("2"), id="superseded: keeps what it reached"),
    ],
)
def test_histories_left_alone(obj: JSON, hist: JSON) -> None:
    assert wanted_status(obj, hist, SELECTOR, [pod("web-a", "1")]).status is None


def test_a_cancelled_release_does_not_complete() -> None:
    cancelled = rollout(step=1, state="StepPaused", phase="Healthy", ok="False")
    wanted = wanted_status(cancelled, history(), SELECTOR, [])
    assert not wanted.completed and wanted.status is not None and "phase" not in wanted.status


def test_snapshots_are_the_raw_specs_of_what_exists() -> None:
    obj = rollout()
    assert routed_names(obj) == ("web", "web-ing", "")
    service = {"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}}}
    spec = snapshot_spec(obj, "2", workload(), service, None, None)
    assert spec == {
        "rollout": {"name": "web", "data": obj["spec"], "rolloutID": "2"},
        "workload": {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "CloneSet",
            "name": "web",
            "data": {"selector": SELECTOR},
        },
        "service": {"name": "web", "data": {"selector": {"app": "web"}}},
    }
