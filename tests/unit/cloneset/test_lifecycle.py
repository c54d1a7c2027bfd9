from __future__ import annotations

from typing import Any

import pytest
from cloneset_builders import NEW, NOW, OLD, cloneset, pod

from kruise.workloads.cloneset.lifecycle import (
    preparing_delete_regrets,
)
from kruise.workloads.lifecycle import (
    LifecycleTransition,
    delete_transition,
    is_mark_pod_not_ready,
    is_pod_all_hooked,
    is_pod_hooked,
    lifecycle_patch,
    refresh_transition,
)
from kruise.workloads.pods import LifecycleState

HOOK = {
    "labelsHandler": {"hold": "true", "gate": "on"},
    "finalizersHandler": ["example.com/f1", "example.com/f2"],
}


@pytest.mark.parametrize(
    ("labels", "finalizers", "hooked", "all_hooked"),
    [
        pytest.param({}, [], False, False, id="nothing held is neither hooked nor all-hooked"),
        pytest.param({"hold": "true"}, [], True, False, id="one label makes the pod hooked"),
        pytest.param({}, ["example.com/f2"], True, False, id="one finalizer makes the pod hooked"),
        pytest.param({"hold": "false"}, [], False, False, id="a label with another value does not count"),
        pytest.param(
            {"hold": "true", "gate": "on"},
            ["example.com/f1", "example.com/f2"],
            True,
            True,
            id="everything held",
        ),
    ],
)
def test_hooked_and_all_hooked(
    labels: dict[str, str], finalizers: list[str], hooked: bool, all_hooked: bool
) -> None:
    subject = pod(labels=labels, finalizers=finalizers)
    assert is_pod_hooked(HOOK, subject) is hooked
    assert is_pod_all_hooked(HOOK, subject) is all_hooked


def test_no_hook_is_never_hooked() -> None:
    assert not is_pod_hooked(None, pod())
    assert not is_pod_all_hooked(None, pod())


def test_an_empty_label_value_matches_an_absent_label_like_go_maps() -> None:
    assert is_pod_hooked({"labelsHandler": {"x": ""}}, pod())


def with_lifecycle(**hooks: dict[str, Any]) -> dict[str, Any]:
    return cloneset(3, lifecycle=hooks)


NORMAL = LifecycleTransition(LifecycleState.NORMAL)
UPDATED = LifecycleTransition(LifecycleState.UPDATED)

REFRESH = [
    pytest.param(
        cloneset(3),
        pod(state="PreparingNormal"),
        False,
        NORMAL,
        id="PreparingNormal without preNormal, scheduled -> Normal",
    ),
    pytest.param(
        cloneset(3),
        pod(state="PreparingNormal", node=None, phase="Pending", ready=False),
        False,
        None,
        id="PreparingNormal without preNormal waits until the pod is scheduled (kruise#2087)",
    ),
    pytest.param(
        with_lifecycle(preNormal=HOOK),
        pod(state="PreparingNormal"),
        False,
        None,
        id="preNormal not yet all-hooked waits",
    ),
    pytest.param(
        with_lifecycle(preNormal=HOOK),
        pod(
            state="PreparingNormal",
            labels={"hold": "true", "gate": "on"},
            finalizers=HOOK["finalizersHandler"],
        ),
        False,
        NORMAL,
        id="preNormal all-hooked -> Normal",
    ),
    pytest.param(cloneset(3), pod(state="Updating"), False, None, id="Updating waits for completion"),
    pytest.param(
        cloneset(3), pod(state="Updating"), True, NORMAL, id="Updating done without lifecycle -> Normal"
    ),
    pytest.param(
        with_lifecycle(inPlaceUpdate=HOOK),
        pod(state="Updating"),
        True,
        UPDATED,
        id="Updating done, hook released -> Updated",
    ),
    pytest.param(
        with_lifecycle(inPlaceUpdate=HOOK),
        pod(state="Updating", labels={"hold": "true", "gate": "on"}, finalizers=HOOK["finalizersHandler"]),
        True,
        NORMAL,
        id="Updating done, hook already back -> Normal",
    ),
    pytest.param(
        with_lifecycle(inPlaceUpdate=HOOK), pod(state="Updated"), False, None, id="Updated waits for the hook"
    ),
    pytest.param(cloneset(3), pod(state="Updated"), False, NORMAL, id="Updated without hook -> Normal"),
    pytest.param(
        with_lifecycle(inPlaceUpdate=HOOK),
        pod(NEW, state="PreparingUpdate"),
        False,
        UPDATED,
        id="PreparingUpdate already at the update revision -> Updated (issue 1156)",
    ),
    pytest.param(
        with_lifecycle(inPlaceUpdate=HOOK),
        pod(OLD, state="PreparingUpdate"),
        False,
        None,
        id="PreparingUpdate behind waits",
    ),
    pytest.param(cloneset(3), pod(state="Normal"), True, None, id="Normal stays"),
]


@pytest.mark.parametrize(("cs", "subject", "completed", "expected"), REFRESH)
def test_refresh_transition(
    cs: dict[str, Any], subject: dict[str, Any], completed: bool, expected: LifecycleTransition | None
) -> None:
    assert refresh_transition(cs, subject, NEW, update_completed=completed) == expected


def test_refresh_carries_mark_pod_not_ready_of_the_in_place_hook() -> None:
    cs = with_lifecycle(inPlaceUpdate={**HOOK, "markPodNotReady": True})
    transition = refresh_transition(cs, pod(state="Updating"), NEW, update_completed=True)
    assert transition == LifecycleTransition(LifecycleState.UPDATED, mark_pod_not_ready=True)


def test_pre_delete_hook_turns_delete_into_preparing_delete() -> None:
    cs = with_lifecycle(preDelete={**HOOK, "markPodNotReady": True})
    assert delete_transition(cs, pod(labels={"hold": "true"})) == LifecycleTransition(
        LifecycleState.PREPARING_DELETE, mark_pod_not_ready=True
    )
    assert delete_transition(cs, pod()) is None
    assert delete_transition(cloneset(3), pod(labels={"hold": "true"})) is None


def test_scale_up_regret_returns_preparing_delete_pods() -> None:
    cs = with_lifecycle(preDelete=HOOK)
    waiting = pod(name="waiting", state="PreparingDelete")
    specified = pod(name="specified", state="PreparingDelete", specified_delete=True)
    pods = [pod(), pod(), specified, waiting]
    assert [p["metadata"]["name"] for p in preparing_delete_regrets(cs, pods, num_to_delete=2)] == ["waiting"]


def test_no_regret_when_mark_pod_not_ready() -> None:
    cs = with_lifecycle(preDelete={**HOOK, "markPodNotReady": True})
    assert is_mark_pod_not_ready(cs)
    assert preparing_delete_regrets(cs, [pod(state="PreparingDelete")], num_to_delete=1) == []


def test_lifecycle_patch_is_a_strategic_merge_body() -> None:
    assert lifecycle_patch(NORMAL, NOW) == {
        "metadata": {
            "labels": {"lifecycle.apps.kruise.io/state": "Normal"},
            "annotations": {"lifecycle.apps.kruise.io/timestamp": "2024-05-01T12:00:00Z"},
        }
    }


def test_lifecycle_patch_with_handler_re_adds_the_hook() -> None:
    patch = lifecycle_patch(LifecycleTransition(LifecycleState.PREPARING_UPDATE, handler=HOOK), NOW)
    assert patch["metadata"]["labels"] == {
        "lifecycle.apps.kruise.io/state": "PreparingUpdate",
        "hold": "true",
        "gate": "on",
    }
    assert patch["metadata"]["finalizers"] == ["example.com/f1", "example.com/f2"]
