"""``KruisePodReady`` not-ready keys (``pkg/util/podreadiness``) and lifecycle ``markPodNotReady``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cloneset_builders import NOW, pod

from kruise.workloads.cloneset.podstate import LifecycleState
from kruise.workloads.podreadiness import (
    PRE_DELETE,
    PRE_UPDATE,
    NotReadyChange,
    NotReadyKey,
    initial_condition,
    lifecycle_not_ready_change,
    not_ready_keys,
    not_ready_patch,
    ready_condition,
)

GATES = [{"conditionType": "InPlaceUpdateReady"}, {"conditionType": "KruisePodReady"}]
OTHER = NotReadyKey("ContainerRecreateRequest", "crr")


def gated(kruise: dict[str, Any] | None = None, *, containers_ready: bool = True) -> dict[str, Any]:
    """A Ready pod with both Kruise gates, ``InPlaceUpdateReady`` True and ``kruise`` as its
    ``KruisePodReady`` condition (absent when None)."""
    subject = pod(in_place_ready=True)
    subject["spec"]["readinessGates"] = list(GATES)
    conditions = subject["status"]["conditions"]
    conditions.append({"type": "ContainersReady", "status": "True" if containers_ready else "False"})
    if kruise is not None:
        conditions.append({"type": "KruisePodReady", **kruise})
    return subject


def message(*keys: NotReadyKey) -> str:
    return json.dumps([k.as_json() for k in keys], separators=(",", ":"))


def conditions_of(patch: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    assert patch is not None
    return {c["type"]: c for c in patch["status"]["conditions"]}


@pytest.mark.parametrize(
    ("state", "change"),
    [
        pytest.param(
            LifecycleState.PREPARING_DELETE, NotReadyChange(True, PRE_DELETE), id="PreparingDelete adds"
        ),
        pytest.param(
            LifecycleState.PREPARING_UPDATE, NotReadyChange(True, PRE_UPDATE), id="PreparingUpdate adds"
        ),
        pytest.param(LifecycleState.UPDATED, NotReadyChange(False, PRE_UPDATE), id="Updated removes"),
        pytest.param(LifecycleState.NORMAL, None, id="Normal leaves the keys"),
        pytest.param(LifecycleState.UPDATING, None, id="Updating leaves the keys"),
        pytest.param(LifecycleState.PREPARING_NORMAL, None, id="PreparingNormal leaves the keys"),
    ],
)
def test_mark_pod_not_ready_policy_per_lifecycle_state(
    state: LifecycleState, change: NotReadyChange | None
) -> None:
    assert lifecycle_not_ready_change(state) == change
    assert PRE_DELETE.as_json() == {"userAgent": "Lifecycle", "key": "preDeleteHook"}
    assert PRE_UPDATE.as_json() == {"userAgent": "Lifecycle", "key": "preUpdateHook"}


def test_adding_a_key_turns_the_condition_false_and_the_pod_not_ready_at_once() -> None:
    conds = conditions_of(not_ready_patch(gated({"status": "True"}), NotReadyChange(True, PRE_DELETE), NOW))
    assert conds["KruisePodReady"]["status"] == "False"
    assert conds["KruisePodReady"]["message"] == '[{"userAgent":"Lifecycle","key":"preDeleteHook"}]'
    assert conds["Ready"]["status"] == "False"
    assert conds["Ready"]["reason"] == "ReadinessGatesNotReady"
    assert (
        conds["Ready"]["message"]
        == 'the status of pod readiness gate "KruisePodReady" is not "True", but False'
    )


@pytest.mark.parametrize(
    ("kruise", "change", "status", "keys"),
    [
        pytest.param(None, NotReadyChange(True, PRE_UPDATE), "False", [PRE_UPDATE], id="no condition yet"),
        pytest.param(
            {"status": "False", "message": message(OTHER)},
            NotReadyChange(True, PRE_DELETE),
            "False",
            [OTHER, PRE_DELETE],
            id="another writer's key is kept, the list sorted by userAgent then key",
        ),
        pytest.param(
            {"status": "False", "message": message(OTHER, PRE_UPDATE)},
            NotReadyChange(False, PRE_UPDATE),
            "False",
            [OTHER],
            id="removing one key of two keeps the pod not ready",
        ),
        pytest.param(
            {"status": "False", "message": message(PRE_UPDATE)},
            NotReadyChange(False, PRE_UPDATE),
            "True",
            [],
            id="removing the last key turns the condition True",
        ),
    ],
)
def test_not_ready_keys_are_shared_by_writers(
    kruise: dict[str, Any] | None, change: NotReadyChange, status: str, keys: list[NotReadyKey]
) -> None:
    patch = not_ready_patch(gated(kruise), change, NOW)
    kruise_ready = conditions_of(patch)["KruisePodReady"]
    assert kruise_ready["status"] == status
    assert not_ready_keys({"status": {"conditions": [kruise_ready]}}) == keys
    assert kruise_ready["message"] == message(*keys)


@pytest.mark.parametrize(
    ("subject", "change"),
    [
        pytest.param(pod(), NotReadyChange(True, PRE_DELETE), id="a pod without the gate is left alone"),
        pytest.param(
            gated({"status": "False", "message": message(PRE_DELETE)}),
            NotReadyChange(True, PRE_DELETE),
            id="the key is already there",
        ),
        pytest.param(
            gated({"status": "True"}), NotReadyChange(False, PRE_UPDATE), id="the key is already gone"
        ),
        pytest.param(gated(None), NotReadyChange(False, PRE_UPDATE), id="nothing to remove from"),
    ],
)
def test_not_ready_patch_is_none_when_nothing_changes(
    subject: dict[str, Any], change: NotReadyChange
) -> None:
    assert not_ready_patch(subject, change, NOW) is None


def test_ready_is_left_to_the_kubelet_while_containers_are_not_ready() -> None:
    subject = gated({"status": "True"}, containers_ready=False)
    conds = conditions_of(not_ready_patch(subject, NotReadyChange(True, PRE_UPDATE), NOW))
    assert set(conds) == {"KruisePodReady"}
    assert ready_condition(subject, [], NOW) is None


def test_initial_condition_is_true_once_for_a_pod_with_the_gate() -> None:
    assert initial_condition(gated(None), NOW) == {
        "type": "KruisePodReady",
        "status": "True",
        "lastTransitionTime": "2024-05-01T12:00:00Z",
    }
    assert initial_condition(gated({"status": "False"}), NOW) is None
    assert initial_condition(pod(), NOW) is None
