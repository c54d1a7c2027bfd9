"""The CRR manager controller's pure core, table by table (``crr_controller.go``, v1.8.4)."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from kruise.daemon.api.containerrecreaterequest import (
    ACTIVE_LABEL,
    POD_UID_LABEL,
    SYNC_CONTAINER_STATUSES_ANNOTATION,
    UNREADY_ACQUIRED_KEY,
)
from kruise.daemon.crr.decide import (
    DAEMON_SILENT,
    DEADLINE_EXCEEDED,
    POD_GONE,
    Action,
    Decision,
    Step,
    decide,
    readiness_key,
    sync_container_statuses,
)

JSON = dict[str, Any]
T0 = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)


def at(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


def stamp(seconds: float) -> str:
    return at(seconds).strftime("%Y-%m-%dT%H:%M:%SZ")


def crr(
    *, phase: str = "Recreating", meta: JSON | None = None, status: JSON | None = None, **spec: Any
) -> JSON:
    return {
        "metadata": {
            "name": "r",
            "namespace": "ns",
            "creationTimestamp": stamp(0),
            "labels": {ACTIVE_LABEL: "true", POD_UID_LABEL: "u-1"},
            **(meta or {}),
        },
        "spec": {
            "podName": "web-0",
            "containers": [{"name": "app"}],
            "strategy": {"failurePolicy": "Fail"},
            **spec,
        },
        "status": {"phase": phase, **(status or {})} if phase else dict(status or {}),
    }


def pod(started: float = 5, **over: Any) -> JSON:
    out: JSON = {
        "metadata": {"name": "web-0", "namespace": "ns", "uid": "u-1"},
        "status": {
            "containerStatuses": [
                {
                    "name": "app",
                    "ready": True,
                    "restartCount": 1,
                    "containerID": "containerd://new",
                    "state": {"running": {"startedAt": stamp(started)}},
                },
                {
                    "name": "other",
                    "ready": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": stamp(9)}},
                },
            ]
        },
    }
    out["metadata"].update(over)
    return out


SYNCED = '[{"name":"app","ready":true,"restartCount":1,"containerID":"containerd://new"}]'


@pytest.mark.parametrize(
    ("target", "the_pod", "now", "expected"),
    [
        pytest.param(crr(), None, at(1), Decision((Action(Step.COMPLETE, POD_GONE),)), id="pod absent"),
        pytest.param(
            crr(),
            pod(deletionTimestamp=stamp(1)),
            at(1),
            Decision((Action(Step.COMPLETE, POD_GONE),)),
            id="pod deleting",
        ),
        pytest.param(
            crr(), pod(uid="u-2"), at(1), Decision((Action(Step.COMPLETE, POD_GONE),)), id="pod replaced"
        ),
        pytest.param(crr(phase=""), pod(), at(10), Decision(requeue_after=50.0), id="daemon has a minute"),
        pytest.param(
            crr(phase=""),
            pod(),
            at(60),
            Decision((Action(Step.COMPLETE, DAEMON_SILENT),)),
            id="daemon silent",
        ),
        pytest.param(
            crr(phase="", activeDeadlineSeconds=30),
            pod(),
            at(10),
            Decision(requeue_after=20.0),
            id="sooner deadline",
        ),
        pytest.param(
            crr(activeDeadlineSeconds=30),
            pod(),
            at(30),
            Decision((Action(Step.COMPLETE, DEADLINE_EXCEEDED),)),
            id="deadline exceeded",
        ),
        pytest.param(crr(phase="Pending"), pod(), at(10), Decision(), id="pending: nothing to sync"),
        pytest.param(
            crr(),
            pod(),
            at(10),
            Decision((Action(Step.SYNC_STATUSES, SYNCED),)),
            id="recreating: sync statuses",
        ),
        pytest.param(
            crr(meta={"annotations": {SYNC_CONTAINER_STATUSES_ANNOTATION: SYNCED}}),
            pod(),
            at(10),
            Decision(),
            id="synced already",
        ),
    ],
)
def test_active_crr(target: JSON, the_pod: JSON | None, now: datetime.datetime, expected: Decision) -> None:
    assert decide(target, the_pod, now, gated=True) == expected


def test_statuses_of_containers_started_before_the_crr_are_history() -> None:
    assert sync_container_statuses(crr(), pod(started=-5)) == "[]"
    waiting = pod()
    waiting["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}
    assert sync_container_statuses(crr(), waiting) == "[]"
    assert json.loads(sync_container_statuses(crr(), pod()))[0]["containerID"] == "containerd://new"


def test_unready_grace_takes_the_pods_readiness_finalizer_first() -> None:
    target = crr(
        strategy={"failurePolicy": "Fail", "unreadyGracePeriodSeconds": 3},
        meta={"annotations": {SYNC_CONTAINER_STATUSES_ANNOTATION: SYNCED}},
    )
    gated = decide(target, pod(), at(10), gated=True)
    assert gated.actions == (
        Action(Step.ADD_FINALIZER),
        Action(Step.ADD_NOT_READY),
        Action(Step.MARK_UNREADY_ACQUIRED, stamp(10)),
    )
    # without the KruisePodReady gate only the annotation is written
    assert decide(target, pod(), at(10), gated=False).actions == (
        Action(Step.MARK_UNREADY_ACQUIRED, stamp(10)),
    )
    target["metadata"]["annotations"][UNREADY_ACQUIRED_KEY] = stamp(10)
    assert decide(target, pod(), at(11), gated=True) == Decision()


DONE = {"completionTime": stamp(20)}


@pytest.mark.parametrize(
    ("target", "now", "expected"),
    [
        pytest.param(
            crr(phase="Completed", status=DONE, meta={"finalizers": [UNREADY_ACQUIRED_KEY]}),
            at(21),
            Decision((Action(Step.RELEASE_NOT_READY), Action(Step.REMOVE_ACTIVE_LABEL))),
            id="completed: readiness back, then inactive",
        ),
        pytest.param(
            crr(
                phase="Recreating",
                meta={"finalizers": [UNREADY_ACQUIRED_KEY], "deletionTimestamp": stamp(21)},
            ),
            at(21),
            Decision((Action(Step.RELEASE_NOT_READY),)),
            id="deleted: readiness back only",
        ),
        pytest.param(
            crr(phase="Completed", status=DONE),
            at(21),
            Decision((Action(Step.REMOVE_ACTIVE_LABEL),)),
            id="inactive",
        ),
        pytest.param(
            crr(phase="Completed", status=DONE, meta={"labels": {}}), at(21), Decision(), id="no ttl: kept"
        ),
        pytest.param(
            crr(phase="Completed", status=DONE, meta={"labels": {}}, ttlSecondsAfterFinished=30),
            at(21),
            Decision(requeue_after=29.0),
            id="ttl pending",
        ),
        pytest.param(
            crr(phase="Completed", status=DONE, meta={"labels": {}}, ttlSecondsAfterFinished=30),
            at(50),
            Decision((Action(Step.DELETE),)),
            id="ttl over",
        ),
    ],
)
def test_finished_crr(target: JSON, now: datetime.datetime, expected: Decision) -> None:
    assert decide(target, pod(), now, gated=True) == expected


def test_the_readiness_entry_names_the_crr() -> None:
    assert readiness_key(crr()) == ("ContainerRecreateRequest", "ns/r")


def test_deciding_twice_on_an_unchanged_world_is_stable() -> None:
    target = crr()
    assert decide(target, pod(), at(10), gated=True) == decide(target, pod(), at(10), gated=True)
