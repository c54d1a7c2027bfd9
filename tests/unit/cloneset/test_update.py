from __future__ import annotations

import copy
from typing import Any

from cloneset_builders import NEW, NOW, OLD, cloneset, pod, revision, template
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.workloads.cloneset.diffs import Diffs, calculate_diffs
from kruise.workloads.cloneset.update import (
    PodUpdateAction,
    UpdateKind,
    decide_updates,
    recreate_patch,
    template_hash_label_patch,
)
from kruise.workloads.inplace import GRACE_KEY, InPlaceUpdateSpec
from kruise.workloads.lifecycle import LifecycleTransition
from kruise.workloads.pods import LifecycleState

OLD_TEMPLATE = template("nginx:1")
IMAGE_ONLY = template("nginx:2")
ENV_CHANGE = {
    **template("nginx:1"),
    "spec": {"containers": [{"name": "main", "image": "nginx:1", "env": [{"name": "A"}]}]},
}
HOOK = {"labelsHandler": {"hold": "true"}}


def revisions(new_template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {OLD: revision(OLD, OLD_TEMPLATE, 1), NEW: revision(NEW, new_template, 2)}


def decide(
    cs: dict[str, Any], pods: list[dict[str, Any]], new_template: dict[str, Any] = IMAGE_ONLY, **kw: Any
) -> list[PodUpdateAction]:
    diffs = calculate_diffs(cs, pods, OLD, NEW, NOW, **kw)
    return decide_updates(cs, pods, OLD, NEW, revisions(new_template), diffs, NOW)


def kinds(actions: list[PodUpdateAction]) -> list[tuple[str, UpdateKind]]:
    return [(a.pod_name, a.kind) for a in actions]


def test_recreate_strategy_labels_pods_within_max_unavailable() -> None:
    pods = [pod(OLD, name=f"p{i}") for i in range(5)]
    actions = decide(cloneset(5, max_unavailable=2), pods)
    assert [a.kind for a in actions] == [UpdateKind.RECREATE, UpdateKind.RECREATE]
    assert all(a.target_revision == NEW for a in actions)
    assert recreate_patch() == {"metadata": {"labels": {"apps.kruise.io/specified-delete": "true"}}}


def test_in_place_if_possible_updates_images_in_place() -> None:
    pods = [pod(OLD, name="p0")]
    (action,) = decide(cloneset(1, update_type="InPlaceIfPossible", grace_seconds=10), pods)
    assert action.kind == UpdateKind.IN_PLACE
    assert action.spec == InPlaceUpdateSpec(
        revision=NEW, container_images={"main": "nginx:2"}, grace_seconds=10
    )


def test_in_place_if_possible_falls_back_to_recreate() -> None:
    (action,) = decide(cloneset(1, update_type="InPlaceIfPossible"), [pod(OLD, name="p0")], ENV_CHANGE)
    assert action.kind == UpdateKind.RECREATE


def test_in_place_only_reports_the_upstream_error_and_stops() -> None:
    pods = [pod(OLD, name="p0"), pod(OLD, name="p1")]
    actions = decide(cloneset(2, update_type="InPlaceOnly", max_unavailable=2), pods, ENV_CHANGE)
    assert len(actions) == 1
    assert actions[0].error == "find Pod p0 update strategy is InPlaceOnly but can not update in-place"


def test_unknown_old_revision_cannot_update_in_place() -> None:
    (action,) = decide(cloneset(1, update_type="InPlaceIfPossible"), [pod("cs-unknown", name="p0")])
    assert action.kind == UpdateKind.RECREATE


def test_paused_or_nothing_to_update_decides_nothing() -> None:
    pods = [pod(OLD)]
    assert decide(cloneset(1, paused=True), pods) == []
    assert decide(cloneset(1), [pod(NEW)]) == []
    assert decide_updates(cloneset(1), pods, OLD, NEW, revisions(IMAGE_ONLY), Diffs(), NOW) == []


def test_preparing_delete_and_grace_pending_pods_are_skipped() -> None:
    grace = pod(OLD, name="grace", annotations={GRACE_KEY: "{}"})
    pods = [pod(OLD, name="deleting", state="PreparingDelete"), grace, pod(OLD, name="free")]
    actions = decide(cloneset(3, max_unavailable=3), pods)
    assert kinds(actions) == [("free", UpdateKind.RECREATE)]


def test_in_place_hook_sends_the_pod_to_preparing_update_first() -> None:
    cs = cloneset(
        1, update_type="InPlaceIfPossible", lifecycle={"inPlaceUpdate": {**HOOK, "markPodNotReady": True}}
    )
    (action,) = decide(cs, [pod(OLD, name="held", labels={"hold": "true"})])
    assert action.kind == UpdateKind.LIFECYCLE
    assert action.transition == LifecycleTransition(LifecycleState.PREPARING_UPDATE, mark_pod_not_ready=True)


def test_preparing_update_waits_for_the_hook_then_updates() -> None:
    cs = cloneset(1, update_type="InPlaceIfPossible", lifecycle={"inPlaceUpdate": HOOK})
    assert decide(cs, [pod(OLD, state="PreparingUpdate", labels={"hold": "true"})]) == []
    (action,) = decide(cs, [pod(OLD, state="PreparingUpdate")])
    assert action.kind == UpdateKind.IN_PLACE


def test_updated_pod_behind_a_new_revision_goes_back_with_its_hook() -> None:
    cs = cloneset(1, update_type="InPlaceIfPossible", lifecycle={"inPlaceUpdate": HOOK})
    (action,) = decide(cs, [pod(OLD, state="Updated")])
    assert action.transition == LifecycleTransition(LifecycleState.PREPARING_UPDATE, handler=HOOK)


def test_in_place_update_refused_in_an_unknown_state() -> None:
    (action,) = decide(cloneset(1, update_type="InPlaceIfPossible"), [pod(OLD, name="odd", state="Weird")])
    assert action.error == "not allowed to in-place update pod odd in state Weird"


def test_partition_rollback_moves_pods_back_to_the_current_revision() -> None:
    cs = cloneset(3, partition=2, max_unavailable=3)
    pods = [pod(NEW, name="n0"), pod(NEW, name="n1"), pod(OLD, name="o0")]
    actions = decide(cs, pods, partition_rollback=True)
    assert [(a.pod_name, a.target_revision) for a in actions] == [("n0", OLD)]


# -- properties --------------------------------------------------------------------------------

world = st.lists(
    st.tuples(st.booleans(), st.booleans(), st.sampled_from([None, "Normal", "PreparingDelete", "Updating"])),
    min_size=0,
    max_size=10,
)


def apply(pods: list[dict[str, Any]], actions: list[PodUpdateAction]) -> list[dict[str, Any]]:
    moved = copy.deepcopy(pods)
    for action in actions:
        target = moved[action.index]
        if action.kind == UpdateKind.IN_PLACE:
            target["metadata"]["labels"]["controller-revision-hash"] = action.target_revision
        elif action.kind == UpdateKind.RECREATE:
            target["metadata"]["labels"]["apps.kruise.io/specified-delete"] = "true"
    return moved


@settings(max_examples=150, deadline=None)
@given(
    shapes=world,
    replicas=st.integers(0, 10),
    partition=st.integers(0, 10),
    max_unavailable=st.integers(0, 4),
    in_place=st.booleans(),
)
def test_deciding_is_idempotent_and_never_revisits_moved_pods(
    shapes: list[tuple[bool, bool, str | None]],
    replicas: int,
    partition: int,
    max_unavailable: int,
    in_place: bool,
) -> None:
    cs = cloneset(
        replicas,
        partition=partition,
        max_unavailable=max_unavailable,
        update_type="InPlaceIfPossible" if in_place else None,
    )
    pods = [
        pod(NEW if new else OLD, name=f"p{i}", ready=ready, state=state)
        for i, (new, ready, state) in enumerate(shapes)
    ]
    first = decide(cs, pods)
    assert decide(cs, pods) == first  # same world, same decision
    diffs = calculate_diffs(cs, pods, OLD, NEW, NOW)
    assert len(first) <= abs(diffs.update_num)
    assert all(
        a.target_revision == NEW and pods[a.index]["metadata"]["labels"]["controller-revision-hash"] == OLD
        for a in first
    )

    after = apply(pods, first)
    second = decide(cs, after)
    moved_in_place = {a.index for a in first if a.kind == UpdateKind.IN_PLACE}
    labelled = {a.index for a in first if a.kind == UpdateKind.RECREATE}
    assert not moved_in_place & {a.index for a in second}
    assert all(a.kind == UpdateKind.RECREATE for a in second if a.index in labelled)


def test_old_pods_get_their_pod_template_hash_label_fixed() -> None:
    legacy = pod(NEW)
    assert template_hash_label_patch(legacy) == {"metadata": {"labels": {"pod-template-hash": "newhash"}}}
    legacy["metadata"]["labels"]["pod-template-hash"] = "newhash"
    assert template_hash_label_patch(legacy) is None
