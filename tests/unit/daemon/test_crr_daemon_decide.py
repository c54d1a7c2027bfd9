"""kruise-daemon's CRR core, table by table (``crr_daemon_controller.go``/``crr_daemon_util.go``, v1.8.4)."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from kruise.daemon.api.containerrecreaterequest import (
    SYNC_CONTAINER_STATUSES_ANNOTATION,
    UNREADY_ACQUIRED_KEY,
)
from kruise.daemon.containerrecreate.decide import (
    Decision,
    KillOrder,
    container_states,
    decide,
    killed_states,
    pick,
    stop_grace,
)
from kruise.daemon.cri.port import ContainerState, CriContainer

JSON = dict[str, Any]
T0 = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)


def at(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


def stamp(seconds: float) -> str:
    return at(seconds).strftime("%Y-%m-%dT%H:%M:%SZ")


def ns(seconds: float) -> int:
    return int(at(seconds).timestamp() * 1e9)


def container(
    cid: str,
    name: str = "app",
    *,
    state: ContainerState = ContainerState.RUNNING,
    started: float = -100,
    restarts: int = 0,
) -> CriContainer:
    return CriContainer(
        id=cid,
        pod_sandbox_id="sb",
        name=name,
        attempt=restarts,
        state=state,
        image="busybox",
        image_ref="sha256:1",
        created_at=ns(started),
        started_at=ns(started),
        annotations={"io.kubernetes.container.restartCount": str(restarts)},
    )


def crr(
    *,
    phase: str = "Recreating",
    states: list[JSON] | None = None,
    annotations: JSON | None = None,
    names: tuple[str, ...] = ("app",),
    **strategy: Any,
) -> JSON:
    return {
        "metadata": {
            "name": "r",
            "namespace": "ns",
            "uid": "crr-uid",
            "creationTimestamp": stamp(0),
            "annotations": dict(annotations or {}),
        },
        "spec": {
            "podName": "web-0",
            "containers": [
                {"name": n, "statusContext": {"containerID": f"containerd://{n}-old", "restartCount": 0}}
                for n in names
            ],
            "strategy": {"failurePolicy": "Fail", "terminationGracePeriodSeconds": 30, **strategy},
        },
        "status": {"phase": phase, **({"containerRecreateStates": states} if states is not None else {})},
    }


def synced(*entries: tuple[str, str, bool]) -> JSON:
    value = [
        {"name": n, "ready": r, "restartCount": 1, "containerID": f"containerd://{cid}"}
        for n, cid, r in entries
    ]
    return {SYNC_CONTAINER_STATUSES_ANNOTATION: json.dumps(value)}


# --------------------------------------------------------------------------- pick


def named(name: str, phase: str = "", created: float = 0, **status: Any) -> JSON:
    return {
        "metadata": {"name": name, "creationTimestamp": stamp(created)},
        "status": {"phase": phase, **status},
    }


def test_one_crr_per_pod_the_recreating_one_first_the_others_pending() -> None:
    chosen = pick([named("late", created=5), named("running", "Recreating", 9), named("early", created=1)])
    assert chosen.picked is not None and chosen.picked["metadata"]["name"] == "running"
    assert [c["metadata"]["name"] for c in chosen.to_pending] == ["early", "late"]


def test_finished_crrs_are_skipped_and_pending_ones_are_not_rewritten() -> None:
    chosen = pick(
        [
            named("done", "Completed", 0, completionTime=stamp(1)),
            named("waiting", "Pending", 2),
            named("new", created=3),
        ]
    )
    assert chosen.picked is not None and chosen.picked["metadata"]["name"] == "waiting"
    assert [c["metadata"]["name"] for c in chosen.to_pending] == ["new"]
    assert pick([named("done", "Completed", completionTime=stamp(1))]).picked is None


# --------------------------------------------------------------------------- phase and grace


@pytest.mark.parametrize(
    ("target", "now", "expected"),
    [
        pytest.param(crr(phase=""), at(1), Decision(phase="Recreating"), id="new: Recreating first"),
        pytest.param(crr(phase="Pending"), at(1), Decision(phase="Recreating"), id="its turn: Recreating"),
        pytest.param(
            crr(unreadyGracePeriodSeconds=5),
            at(1),
            Decision(waiting="unready acquirement"),
            id="manager not yet",
        ),
        pytest.param(
            crr(unreadyGracePeriodSeconds=5, annotations={UNREADY_ACQUIRED_KEY: stamp(2)}),
            at(4),
            Decision(requeue_after=3.1, waiting="unready grace period"),
            id="grace running",
        ),
        pytest.param(
            crr(unreadyGracePeriodSeconds=5, annotations={UNREADY_ACQUIRED_KEY: "soon"}),
            at(4),
            Decision(complete="failed to parse unready time soon"),
            id="bad unready time",
        ),
    ],
)
def test_before_the_runtime_is_asked(target: JSON, now: datetime.datetime, expected: Decision) -> None:
    assert decide(target, [], now) == expected


def test_a_crr_without_status_context_completes_with_upstreams_message() -> None:
    target = crr()
    del target["spec"]["containers"][0]["statusContext"]
    assert decide(target, [], at(1)) == Decision(
        complete="failed to find runtime service: no statusContext or empty containerID in app container"
    )


# --------------------------------------------------------------------------- container states


@pytest.mark.parametrize(
    ("containers", "strategy", "previous", "annotations", "now", "expected"),
    [
        pytest.param(
            [],
            {},
            None,
            {},
            at(1),
            {"phase": "Pending", "message": "not found container on Node"},
            id="absent",
        ),
        pytest.param(
            [container("app-old")], {}, None, {}, at(1), {"phase": "Pending"}, id="unchanged: Pending"
        ),
        pytest.param(
            [container("app-old", state=ContainerState.EXITED)],
            {},
            None,
            {},
            at(1),
            {"phase": "Recreating"},
            id="exited",
        ),
        pytest.param(
            [container("app-old"), container("app-new", started=3, restarts=1)],
            {},
            {"name": "app", "phase": "Recreating", "isKilled": True},
            {},
            at(4),
            {"phase": "Recreating", "isKilled": True},
            id="new container, not ready yet",
        ),
        pytest.param(
            [container("app-new", started=3, restarts=1)],
            {},
            {"name": "app", "phase": "Recreating", "isKilled": True},
            synced(("app", "app-new", True)),
            at(4),
            {"phase": "Succeeded", "isKilled": True},
            id="new container ready: Succeeded",
        ),
        pytest.param(
            [container("app-new", started=3, restarts=1)],
            {"minStartedSeconds": 10},
            {"name": "app", "phase": "Recreating", "isKilled": True},
            synced(("app", "app-new", True)),
            at(4),
            {"phase": "Recreating", "isKilled": True},
            id="ready but not started minStartedSeconds ago",
        ),
        pytest.param(
            [container("app-new", started=3, restarts=1)],
            {},
            None,
            synced(("app", "app-other", True)),
            at(4),
            {"phase": "Recreating"},
            id="synced status of another container",
        ),
        pytest.param(
            [container("app-old")],
            {"forceRecreate": True},
            None,
            {},
            at(1),
            {"phase": "Pending"},
            id="force: Pending",
        ),
        pytest.param(
            [container("app-new", started=3, restarts=1)],
            {"forceRecreate": True},
            {"name": "app", "phase": "Recreating", "isKilled": True},
            {},
            at(4),
            {"phase": "Recreating", "isKilled": True},
            id="force, once killed: followed",
        ),
        pytest.param(
            [container("app-old")],
            {},
            {"name": "app", "phase": "Failed", "message": "kill container error: x"},
            {},
            at(4),
            {"phase": "Failed", "message": "kill container error: x"},
            id="Failed is kept",
        ),
    ],
)
def test_container_state(
    containers: list[CriContainer],
    strategy: JSON,
    previous: JSON | None,
    annotations: JSON,
    now: datetime.datetime,
    expected: JSON,
) -> None:
    target = crr(states=[previous] if previous else None, annotations=annotations, **strategy)
    assert container_states(target, containers, now) == [{"name": "app", **expected}]


# --------------------------------------------------------------------------- kills


def test_states_are_written_before_anything_is_killed() -> None:
    assert decide(crr(), [container("app-old")], at(1)) == Decision(
        states=[{"name": "app", "phase": "Pending"}]
    )


def test_the_first_pending_container_is_killed_with_the_crrs_grace_and_prestop() -> None:
    target = crr(states=[{"name": "app", "phase": "Pending"}])
    target["spec"]["containers"][0]["preStop"] = {"exec": {"command": ["sleep", "1"]}}
    decision = decide(target, [container("app-old")], at(1))
    assert decision.kill == KillOrder(
        index=0,
        name="app",
        container_id="app-old",
        grace_seconds=30,
        pre_stop={"exec": {"command": ["sleep", "1"]}},
    )
    assert killed_states(decision, None) == [{"name": "app", "phase": "Recreating", "isKilled": True}]
    assert killed_states(decision, "rpc error") == [
        {"name": "app", "phase": "Failed", "message": "kill container error: rpc error"}
    ]


BOTH = ("app", "sidecar")


def test_unordered_recreate_kills_the_next_while_the_first_restarts() -> None:
    states = [
        {"name": "app", "phase": "Recreating", "isKilled": True},
        {"name": "sidecar", "phase": "Pending"},
    ]
    node = [container("app-new", started=3, restarts=1), container("sidecar-old", "sidecar")]
    decision = decide(crr(states=states, names=BOTH), node, at(4))
    assert decision.kill is not None and decision.kill.name == "sidecar"


def test_ordered_recreate_waits_for_the_first_to_succeed() -> None:
    states = [
        {"name": "app", "phase": "Recreating", "isKilled": True},
        {"name": "sidecar", "phase": "Pending"},
    ]
    node = [container("app-new", started=3, restarts=1), container("sidecar-old", "sidecar")]
    assert decide(crr(states=states, names=BOTH, orderedRecreate=True), node, at(4)) == Decision()
    done = crr(
        states=[{"name": "app", "phase": "Succeeded", "isKilled": True}, states[1]],
        names=BOTH,
        orderedRecreate=True,
    )
    decision = decide(done, node, at(4))
    assert decision.kill is not None and decision.kill.name == "sidecar"


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        pytest.param("Fail", Decision(complete=""), id="Fail: the CRR completes"),
        pytest.param("Ignore", "kill", id="Ignore: the next container goes on"),
    ],
)
def test_failure_policy(policy: str, expected: Any) -> None:
    states = [
        {"name": "app", "phase": "Failed", "message": "kill container error: x"},
        {"name": "sidecar", "phase": "Pending"},
    ]
    node = [container("app-old"), container("sidecar-old", "sidecar")]
    decision = decide(crr(states=states, names=BOTH, failurePolicy=policy), node, at(4))
    if expected == "kill":
        assert decision.kill is not None and decision.kill.name == "sidecar"
    else:
        assert decision == expected


def test_all_succeeded_completes_and_min_started_requeues_meanwhile() -> None:
    done = [{"name": "app", "phase": "Succeeded", "isKilled": True}]
    node = [container("app-new", started=3, restarts=1)]
    assert decide(crr(states=done), node, at(10)) == Decision(complete="")
    running = [{"name": "app", "phase": "Recreating", "isKilled": True}]
    assert decide(crr(states=running, minStartedSeconds=5), node, at(4)) == Decision(requeue_after=5.0)


def test_an_exited_container_the_daemon_did_not_kill_is_marked_killed() -> None:
    """Upstream sets ``isKilled`` on every Recreating state before choosing a kill."""
    states = [{"name": "app", "phase": "Recreating"}]
    node = [container("app-old", state=ContainerState.EXITED)]
    assert decide(crr(states=states), node, at(4)) == Decision(
        states=[{"name": "app", "phase": "Recreating", "isKilled": True}]
    )


@pytest.mark.parametrize(
    ("grace", "spent", "expected"),
    [(30, 0, 30), (30, 12.7, 18), (30, 29, 2), (0, 0, 2), (1, 0, 2)],
)
def test_stop_grace_is_what_the_prestop_left_at_least_two_seconds(
    grace: int, spent: float, expected: int
) -> None:
    assert stop_grace(grace, spent) == expected


def test_deciding_twice_on_an_unchanged_world_yields_the_same_kill() -> None:
    target = crr(states=[{"name": "app", "phase": "Pending"}])
    node = [container("app-old")]
    assert decide(target, node, at(1)) == decide(target, node, at(1))


def test_a_container_started_in_the_second_the_crr_was_created_is_not_taken_as_recreated() -> None:
    """Creation times have second precision, CRI's nanoseconds: 0.5 s after the creation second
    began is still that second."""
    node = [container("app-old", started=0.5)]
    assert container_states(crr(), node, at(1)) == [{"name": "app", "phase": "Pending"}]
    later = [container("app-old", started=1.5)]
    assert container_states(crr(), later, at(2)) == [{"name": "app", "phase": "Recreating"}]
