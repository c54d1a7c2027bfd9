"""``next_action()``: upstream's reconcile rounds (``advancedcronjob_*_controller.go``) as tables:
status, history pruning, paused, missed runs and deadlines, concurrency policies, child shape."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from kruise.workloads.advancedcronjob.plan import (
    SCHEDULED_AT_ANNOTATION,
    TOO_MANY_MISSED,
    child_name,
    next_action,
)
from kruise.workloads.api.advancedcronjob import AdvancedCronJob, TemplateKind

UTC = dt.UTC
CREATED = dt.datetime(2024, 1, 1, 0, 0, 0, tzinfo=UTC)


def acj(**spec: Any) -> AdvancedCronJob:
    body: dict[str, Any] = {
        "schedule": "*/5 * * * *",
        "template": {
            "broadcastJobTemplate": {"metadata": {"labels": {"app": "x"}}, "spec": {"parallelism": 1}}
        },
        "concurrencyPolicy": "Allow",
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1,
    }
    body.update(spec)
    return AdvancedCronJob.model_validate(
        {
            "metadata": {
                "name": "cron",
                "namespace": "ns",
                "uid": "u-1",
                "creationTimestamp": CREATED.isoformat().replace("+00:00", "Z"),
            },
            "spec": body,
        }
    )


def child(
    scheduled: dt.datetime, state: str = "", started: dt.datetime | None = None, kind: str = "BroadcastJob"
) -> dict[str, Any]:
    conditions = [{"type": state, "status": "True"}] if state else []
    st: dict[str, Any] = {"conditions": conditions}
    if started is not None:
        st["startTime"] = started.isoformat().replace("+00:00", "Z")
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": kind,
        "metadata": {
            "name": child_name("cron", scheduled),
            "namespace": "ns",
            "uid": f"c-{int(scheduled.timestamp())}",
            "annotations": {SCHEDULED_AT_ANNOTATION: scheduled.isoformat().replace("+00:00", "Z")},
        },
        "status": st,
    }


def at(minute: int, second: int = 0) -> dt.datetime:
    return CREATED + dt.timedelta(minutes=minute, seconds=second)


def test_first_run_creates_named_child_and_requeues_at_next() -> None:
    a = next_action(acj(), [], at(5, 10))
    assert a.create is not None
    meta = a.create["metadata"]
    assert meta["name"] == f"cron-{int(at(5).timestamp())}" == "cron-1704067500"
    assert meta["annotations"] == {SCHEDULED_AT_ANNOTATION: "2024-01-01T00:05:00Z"}
    assert meta["labels"] == {"app": "x"}
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "AdvancedCronJob",
            "name": "cron",
            "uid": "u-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert a.create["kind"] == "BroadcastJob" and a.create["spec"] == {"parallelism": 1}
    assert a.requeue_after == pytest.approx(290)
    assert a.status.type == TemplateKind.BROADCAST_JOB


def test_before_first_activation_only_requeues() -> None:
    a = next_action(acj(), [], at(2))
    assert a.create is None and a.delete == []
    assert a.requeue_after == pytest.approx(180)


def test_already_created_run_is_not_repeated() -> None:
    """lastScheduleTime comes from the children: the 00:05 run exists, so at 00:07 nothing."""
    a = next_action(acj(), [child(at(5))], at(7))
    assert a.create is None
    assert a.status.last_schedule_time == at(5)
    assert [r.name for r in a.status.active or []] == ["cron-1704067500"]
    assert a.status.active is not None and a.status.active[0].kind == "BroadcastJob"


def test_missed_runs_start_only_the_latest() -> None:
    """Down from 00:05 to 00:31: runs 00:10..00:30 were missed; only 00:30 is created."""
    a = next_action(acj(), [child(at(5), "Complete", at(5))], at(31))
    assert a.create is not None and a.scheduled_time == at(30)


def test_starting_deadline_too_late_skips() -> None:
    a = next_action(acj(startingDeadlineSeconds=30), [child(at(5), "Complete", at(5))], at(10, 45))
    assert a.create is None
    assert a.requeue_after == pytest.approx(255)


def test_starting_deadline_in_time_creates() -> None:
    a = next_action(acj(startingDeadlineSeconds=60), [child(at(5), "Complete", at(5))], at(10, 45))
    assert a.create is not None and a.scheduled_time == at(10)


def test_too_many_missed_starts() -> None:
    """More than 100 missed activations without a deadline: upstream's error, nothing created,
    no requeue; a deadline bounds the search and the latest run starts."""
    far = at(5 * 200)
    a = next_action(acj(), [], far)
    assert a.create is None and a.error == TOO_MANY_MISSED and a.requeue_after is None
    b = next_action(acj(startingDeadlineSeconds=200), [], far)
    assert b.create is not None and b.scheduled_time == far


def test_forbid_skips_while_active() -> None:
    a = next_action(acj(concurrencyPolicy="Forbid"), [child(at(5))], at(10, 1))
    assert a.create is None and a.delete == []
    assert a.requeue_after == pytest.approx(299)
    done = next_action(acj(concurrencyPolicy="Forbid"), [child(at(5), "Complete", at(5))], at(10, 1))
    assert done.create is not None


def test_replace_deletes_active_then_creates() -> None:
    a = next_action(acj(concurrencyPolicy="Replace"), [child(at(5))], at(10, 1))
    assert a.delete == ["cron-1704067500"]
    assert a.create is not None and a.scheduled_time == at(10)


def test_allow_runs_concurrently() -> None:
    a = next_action(acj(), [child(at(5))], at(10, 1))
    assert a.delete == [] and a.create is not None


def test_history_limits_delete_oldest_first() -> None:
    """3 successful and 1 failed kept; the oldest by startTime (unset first) are deleted."""
    ok = [child(at(5 * i), "Complete", at(5 * i)) for i in (4, 1, 3, 2, 5)]
    no_start = child(at(30), "Complete", None)
    bad = [child(at(40), "Failed", at(40)), child(at(35), "Failed", at(35))]
    a = next_action(acj(), [*ok, no_start, *bad], at(41))
    assert a.delete == [
        child_name("cron", at(35)),
        child_name("cron", at(30)),
        child_name("cron", at(5)),
        child_name("cron", at(10)),
    ]
    assert a.status.active is None


def test_unset_limits_keep_everything() -> None:
    a = next_action(
        acj(successfulJobsHistoryLimit=None, failedJobsHistoryLimit=None),
        [child(at(5 * i), "Complete", at(5 * i)) for i in range(1, 6)],
        at(26),
    )
    assert a.delete == []


def test_paused_prunes_but_never_creates_nor_requeues() -> None:
    kids = [child(at(5), "Failed", at(5)), child(at(10), "Failed", at(10))]
    a = next_action(acj(paused=True), kids, at(16))
    assert a.create is None and a.requeue_after is None
    assert a.delete == [child_name("cron", at(5))]


def test_time_zone_and_job_template() -> None:
    """timeZone prefixes TZ= (formatSchedule); a jobTemplate makes batch/v1 Jobs."""
    spec = {"jobTemplate": {"spec": {"template": {"spec": {}}}}}
    j = acj(schedule="0 9 * * *", timeZone="Europe/Berlin", template=spec)
    a = next_action(j, [], dt.datetime(2024, 1, 1, 8, 0, 30, tzinfo=UTC))
    assert a.create is not None
    assert a.create["apiVersion"] == "batch/v1" and a.create["kind"] == "Job"
    assert a.scheduled_time == dt.datetime(2024, 1, 1, 8, 0, tzinfo=UTC)  # 09:00 CET
    assert a.status.type == TemplateKind.JOB


def test_unparseable_schedule_is_an_error_without_requeue() -> None:
    a = next_action(acj(schedule="61 * * * *"), [], at(10))
    assert a.create is None and a.requeue_after is None
    assert a.error is not None and a.error.startswith('Unparseable schedule "61 * * * *"')


def test_every_seconds_schedule() -> None:
    a = next_action(acj(schedule="@every 2s"), [child(at(0, 2), "Complete", at(0, 2))], at(0, 5))
    assert a.scheduled_time == at(0, 4)
    # the next run of the chain, 0:06 (upstream's Next(now) would say 0:07, a second late)
    assert a.requeue_after == pytest.approx(1)


def test_a_late_round_does_not_push_later_every_runs_back() -> None:
    """``@every 10s``: a round 3 s late creates the 0:10 run and comes back for 0:20 (7 s), not
    10 s after it ran (upstream's ``Next(now)``, which would make every later run 3 s late)."""
    a = next_action(acj(schedule="@every 10s"), [child(at(0, 0), "Complete", at(0, 0))], at(0, 13))
    assert a.scheduled_time == at(0, 10)
    assert a.requeue_after == pytest.approx(7)
    on_time = next_action(acj(schedule="@every 10s"), [child(at(0, 10))], at(0, 20))
    assert on_time.scheduled_time == at(0, 20) and on_time.requeue_after == pytest.approx(10)


def test_a_cron_schedule_requeues_at_its_next_activation_after_a_late_round() -> None:
    a = next_action(acj(schedule="*/5 * * * *"), [child(at(5), "Complete", at(5))], at(10, 40))
    assert a.scheduled_time == at(10)
    assert a.requeue_after == pytest.approx(260)  # 0:15:00, as Next(now)


def test_image_list_pull_job_children() -> None:
    """ImageListPullJob template: finished by completionTime, failed unless succeeded == desired."""
    j = acj(template={"imageListPullJobTemplate": {"spec": {"images": ["busybox"]}}})

    def ilpj(minute: int, **st: Any) -> dict[str, Any]:
        c = child(at(minute), kind="ImageListPullJob")
        c["status"] = {"startTime": at(minute).isoformat().replace("+00:00", "Z"), **st}
        return c

    done = {"completionTime": "2024-01-01T01:00:00Z", "desired": 1}
    kids = [
        ilpj(5, **done, succeeded=1),
        ilpj(10, **done, succeeded=0),
        ilpj(15, **done),
        ilpj(20, desired=1),
    ]
    a = next_action(j, kids, at(21))
    assert a.status.type == TemplateKind.IMAGE_LIST_PULL_JOB
    assert [r.name for r in a.status.active or []] == [child_name("cron", at(20))]
    assert a.delete == [child_name("cron", at(10))]  # two failed, one kept
    assert a.create is None
    b = next_action(j, kids, at(25, 1))
    assert b.create is not None and b.create["kind"] == "ImageListPullJob"
    assert b.create["spec"] == {"images": ["busybox"]}
