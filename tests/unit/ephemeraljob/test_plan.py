"""``plan()`` and its parts table by table: target selection (``filterPods``), container and pod
states (``parseEphemeralContainerStatus``/``parseEphemeralPodStatus``), the phase and conditions
(``calculateStatus``), injection under ``parallelism``, finalizer, deadline and TTL."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from kruise.core.api.base import format_time
from kruise.workloads.api.ephemeraljob import EJOB_ENV_KEY, EphemeralJobPhase
from kruise.workloads.ephemeraljob.containers import (
    ContainerState,
    Settings,
    container_state,
    injection_patch,
    pod_state,
    target_pods,
)
from kruise.workloads.ephemeraljob.plan import Plan, plan
from tests.unit.ephemeraljob.builders import (
    EXIT_0,
    EXIT_1,
    NOW,
    RUN_ERROR,
    RUNNING,
    UID,
    WAITING,
    container,
    injected,
    job,
    pod,
)

JSON = dict[str, Any]


def counters(p: Plan) -> tuple[int, int, int, int, int]:
    assert p.status is not None
    st = p.status
    return st.match, st.succeeded, st.failed, st.running, st.waiting


def conditions(p: Plan) -> dict[str, tuple[str, str]]:
    assert p.status is not None
    return {c.type: (c.reason or "", c.message or "") for c in p.status.conditions or ()}


def started(seconds_ago: float) -> JSON:
    return {"startTime": format_time(NOW - datetime.timedelta(seconds=seconds_ago)), "conditions": []}


# --- targets ---------------------------------------------------------------------------------


def test_targets_are_active_matching_pods_of_the_namespace_oldest_first_at_most_replicas() -> None:
    j = job(replicas=2)
    pods = [
        pod("young"),
        pod("old", age=30),
        pod("other-label", age=90, labels={"run": "redis"}),
        pod("elsewhere", age=80, namespace="other"),
        pod("done", age=70, phase="Succeeded"),
        pod("going", age=60, deleting=True),
        pod("b-same-age", age=10),
        pod("a-same-age", age=10),
    ]
    chosen = target_pods(j, Settings.of(j), pods)
    assert [p["metadata"]["name"] for p in chosen] == ["old", "a-same-age"]


def test_pending_pods_are_targets_like_upstreams_active_pods() -> None:
    j = job()
    assert [p["metadata"]["name"] for p in target_pods(j, Settings.of(j), [pod("p", phase="Pending")])] == [
        "p"
    ]


def test_a_pod_holding_another_jobs_container_of_the_same_name_is_no_target() -> None:
    """e2e "create ephemeral running two job, but to one target": the second job matches nothing."""
    j = job()
    theirs = pod("p", ephemeral=[injected("debugger", uid="other-job")], states={"debugger": RUNNING})
    p = plan(j, [theirs], NOW)
    assert counters(p) == (0, 0, 0, 0, 0)
    assert p.inject == ()
    assert p.status is not None and p.status.phase == EphemeralJobPhase.WAITING
    assert conditions(p)["MatchedEmpty"] == ("MatchEmpty", "job match no pods")


def test_a_pod_with_this_jobs_container_stays_a_target_and_is_not_injected_again() -> None:
    j = job()
    mine = pod("p", ephemeral=[injected()], states={"debugger": RUNNING})
    p = plan(j, [mine], NOW)
    assert counters(p) == (1, 0, 0, 1, 0)
    assert p.inject == ()


def test_another_containers_name_is_no_conflict() -> None:
    """e2e "create two ephemeral running job": debugger2 goes next to another job's debugger."""
    j = job(containers=[container("debugger2")])
    p = plan(j, [pod("p", ephemeral=[injected("debugger", uid="other")])], NOW)
    assert p.inject == ("p",)


# --- states ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        pytest.param(EXIT_0, ContainerState.SUCCEEDED, id="exit 0 with finishedAt succeeded"),
        pytest.param({"terminated": {"exitCode": 0}}, ContainerState.UNKNOWN, id="exit 0 without finishedAt"),
        pytest.param(EXIT_1, ContainerState.FAILED, id="non-zero exit failed"),
        pytest.param({"terminated": {"exitCode": 128}}, ContainerState.FAILED, id="exit 128 failed"),
        pytest.param(RUNNING, ContainerState.RUNNING, id="running"),
        pytest.param(WAITING, ContainerState.WAITING, id="creating waits"),
        pytest.param(RUN_ERROR, ContainerState.FAILED, id="RunContainerError failed"),
        pytest.param({}, ContainerState.UNKNOWN, id="no state"),
    ],
)
def test_container_state(state: JSON, expected: ContainerState) -> None:
    assert container_state({"name": "debugger", "state": state}) is expected


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        pytest.param({"a": EXIT_0, "b": EXIT_0}, ContainerState.SUCCEEDED, id="all succeeded"),
        pytest.param({"a": EXIT_0, "b": RUNNING}, ContainerState.RUNNING, id="one still running"),
        pytest.param({"a": EXIT_0}, ContainerState.UNKNOWN, id="one of two reported"),
        pytest.param({"a": RUNNING, "b": EXIT_1}, ContainerState.FAILED, id="any failure fails"),
        pytest.param({"a": WAITING, "b": EXIT_0}, ContainerState.WAITING, id="waiting"),
        pytest.param({"x": EXIT_1, "a": EXIT_0, "b": EXIT_0}, ContainerState.SUCCEEDED, id="foreign ignored"),
        pytest.param({}, ContainerState.UNKNOWN, id="nothing reported"),
    ],
)
def test_pod_state_over_the_templates_containers(states: dict[str, JSON], expected: ContainerState) -> None:
    settings = Settings.of(job(containers=[container("a"), container("b")]))
    assert pod_state(settings, pod("p", states=states)) is expected


# --- phase and conditions --------------------------------------------------------------------


def test_first_round_sets_start_time_initialized_and_injects_one_pod_by_default() -> None:
    j = job()
    p = plan(j, [pod("a", age=2), pod("b", age=1), pod("c")], NOW)
    assert p.status is not None and p.status.start_time == NOW
    assert conditions(p)["Initialized"] == ("Initialized", "")
    assert p.inject == ("a",)
    assert p.targets == ("a", "b", "c")
    assert p.status.phase == EphemeralJobPhase.UNKNOWN  # nothing reported yet, as upstream


def test_all_replicas_succeeded_completes_the_job() -> None:
    j = job(replicas=2, status=started(5))
    pods = [pod(n, ephemeral=[injected()], states={"debugger": EXIT_0}) for n in ("a", "b")] + [pod("c")]
    p = plan(j, pods, NOW)
    assert counters(p) == (2, 2, 0, 0, 0)
    assert p.status is not None and p.status.phase == EphemeralJobPhase.SUCCEEDED
    assert p.status.completion_time == NOW
    assert conditions(p)["JobSucceeded"] == ("JobSucceeded", "job success to run all tasks")
    assert p.inject == ()
    assert p.requeue_after == 1800


def test_all_failed_fails_the_job_with_both_failure_conditions_in_upstreams_order() -> None:
    j = job(status=started(5))
    pods = [pod("a", ephemeral=[injected()], states={"debugger": EXIT_1})]
    p = plan(j, pods, NOW)
    assert counters(p) == (1, 0, 1, 0, 0)
    assert p.status is not None and p.status.phase == EphemeralJobPhase.FAILED
    assert p.status.completion_time == NOW
    # JobFailed/JobFailed is replaced by the failed-pod condition of the same type, as upstream
    assert conditions(p)["JobFailed"] == (
        "CreateFailed",
        "EphemeralJob ns/ejob failed to create ephemeral container",
    )


def test_a_failure_among_others_keeps_running_and_records_it() -> None:
    j = job(parallelism=2, status=started(5))
    pods = [
        pod("a", age=1, ephemeral=[injected()], states={"debugger": EXIT_1}),
        pod("b", ephemeral=[injected()], states={"debugger": RUNNING}),
    ]
    p = plan(j, pods, NOW)
    assert p.status is not None and p.status.phase == EphemeralJobPhase.RUNNING
    assert p.status.completion_time is None
    assert conditions(p)["JobFailed"][0] == "CreateFailed"


def test_every_pod_waiting_is_waiting() -> None:
    j = job(status=started(5))
    p = plan(j, [pod("a", ephemeral=[injected()], states={"debugger": WAITING})], NOW)
    assert p.status is not None and p.status.phase == EphemeralJobPhase.WAITING
    assert counters(p) == (1, 0, 0, 0, 1)


def test_paused_reports_paused_and_injects_nothing() -> None:
    j = job(paused=True, status=started(5))
    p = plan(j, [pod("a")], NOW)
    assert p.status is not None and p.status.phase == EphemeralJobPhase.PAUSED
    assert p.inject == ()


def test_past_the_deadline_an_unfinished_job_fails() -> None:
    """e2e "create ephemeral running activeDeadlineSeconds"."""
    j = job(activeDeadlineSeconds=20, status=started(21))
    p = plan(j, [pod("a", ephemeral=[injected()], states={"debugger": RUNNING})], NOW)
    assert p.status is not None and p.status.phase == EphemeralJobPhase.FAILED
    assert p.status.completion_time == NOW
    assert conditions(p)["JobFailed"] == (
        "DeadlineExceeded",
        "EphemeralJob ns/ejob was active longer than specified deadline",
    )
    assert p.inject == ()


def test_before_the_deadline_the_round_requeues_at_it() -> None:
    j = job(activeDeadlineSeconds=20, status=started(5))
    p = plan(j, [pod("a", ephemeral=[injected()], states={"debugger": RUNNING})], NOW)
    assert p.status is not None and p.status.phase == EphemeralJobPhase.RUNNING
    assert p.requeue_after == pytest.approx(15)


def test_a_template_without_containers_is_an_error() -> None:
    p = plan(job(containers=[]), [pod("a")], NOW)
    assert p.status is not None and p.status.phase == EphemeralJobPhase.ERROR
    assert conditions(p)["JobError"] == ("Error", "job spec invalid fields.")
    assert p.inject == ()


def test_deciding_twice_on_an_unchanged_world_changes_nothing() -> None:
    """Condition times stay while a condition is unchanged, so a steady status is not rewritten."""
    j = job()
    first = plan(j, [], NOW)
    assert first.status is not None
    again = plan({**j, "status": first.status.to_dict()}, [], NOW + datetime.timedelta(seconds=30))
    assert again.status is not None and again.status.to_dict() == first.status.to_dict()


# --- parallelism -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parallelism", "states", "expected"),
    [
        pytest.param(2, {}, ("c", "d"), id="two at once, none in flight"),
        pytest.param(2, {"a": RUNNING}, ("c",), id="one running takes a slot"),
        pytest.param(2, {"a": None}, ("c",), id="injected but unreported takes a slot"),
        pytest.param(2, {"a": WAITING, "b": RUNNING}, (), id="both slots taken"),
        pytest.param(2, {"a": EXIT_0, "b": EXIT_1}, ("c", "d"), id="finished pods free their slots"),
        pytest.param(5, {"a": RUNNING}, ("c", "d"), id="capped by pods left"),
    ],
)
def test_injections_keep_at_most_parallelism_pods_in_flight(
    parallelism: int, states: dict[str, JSON | None], expected: tuple[str, ...]
) -> None:
    j = job(parallelism=parallelism, status=started(1))
    pods = []
    for age, n in zip((4, 3, 2, 1), "abcd", strict=True):
        if n in states:
            state = states[n]
            pods.append(
                pod(n, age=age, ephemeral=[injected()], states={} if state is None else {"debugger": state})
            )
        elif n in "ab":
            pods.append(pod(n, age=age, ephemeral=[injected()], states={"debugger": EXIT_0}))
        else:
            pods.append(pod(n, age=age))
    assert plan(j, pods, NOW).inject == expected


def test_replicas_bound_the_pods_ever_injected() -> None:
    j = job(replicas=1, parallelism=3, status=started(1))
    p = plan(j, [pod("a", age=2), pod("b", age=1)], NOW)
    assert p.inject == ("a",)
    assert counters(p)[0] == 1


def test_injection_patch_adds_the_jobs_env_and_keeps_the_templates() -> None:
    j = job(
        containers=[container("debugger", env=[{"name": "X", "value": "1"}], command=["sh", "-c", "exit 0"])]
    )
    patch = injection_patch(Settings.of(j))
    (c,) = patch["spec"]["ephemeralContainers"]
    assert c["name"] == "debugger" and c["command"] == ["sh", "-c", "exit 0"]
    assert c["env"] == [{"name": "X", "value": "1"}, {"name": EJOB_ENV_KEY, "value": UID}]
    assert j["spec"]["template"]["ephemeralContainers"][0]["env"] == [
        {"name": "X", "value": "1"}
    ]  # untouched


# --- finalizer, TTL ---------------------------------------------------------------------------


def test_a_live_job_without_the_finalizer_gets_it() -> None:
    assert plan(job(finalizers=()), [], NOW).add_finalizer
    assert not plan(job(), [], NOW).add_finalizer


def test_a_deleted_job_only_loses_its_finalizer() -> None:
    p = plan(job(deleting=True), [pod("a")], NOW)
    assert p.remove_finalizer and p.status is None and p.inject == ()
    assert not plan(job(deleting=True, finalizers=("other",)), [], NOW).remove_finalizer


@pytest.mark.parametrize(
    ("ttl", "finished_ago", "delete", "requeue"),
    [
        pytest.param(None, 10, False, 1790, id="default 1800 s"),
        pytest.param(5, 3, False, 2, id="before the TTL"),
        pytest.param(5, 5, True, None, id="at the TTL"),
        pytest.param(0, 0, True, None, id="zero deletes at once"),
    ],
)
def test_a_finished_job_is_deleted_past_its_ttl(
    ttl: int | None, finished_ago: int, delete: bool, requeue: float | None
) -> None:
    finished = {
        "startTime": format_time(NOW - datetime.timedelta(seconds=60)),
        "completionTime": format_time(NOW - datetime.timedelta(seconds=finished_ago)),
        "phase": "Succeeded",
    }
    extra: dict[str, Any] = {} if ttl is None else {"ttlSecondsAfterFinished": ttl}
    p = plan(job(status=finished, **extra), [pod("a")], NOW)
    assert p.status is None and p.inject == ()
    assert p.delete_job is delete
    assert p.requeue_after == (pytest.approx(requeue) if requeue is not None else None)
