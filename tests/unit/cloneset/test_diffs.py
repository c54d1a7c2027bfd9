from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from cloneset_builders import NEW, NOW, OLD, cloneset, pod
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.workloads.cloneset.arith import strategy_numbers
from kruise.workloads.cloneset.diffs import Diffs, calculate_diffs


def many(count: int, revision: str = NEW, **kwargs: Any) -> list[dict[str, Any]]:
    return [pod(revision, **kwargs) for _ in range(count)]


def cs(
    replicas: int, partition: int | str, max_unavailable: int | str, max_surge: int | str
) -> dict[str, Any]:
    return cloneset(replicas, partition=partition, max_unavailable=max_unavailable, max_surge=max_surge)


# Scenarios from upstream TestCalculateDiffsWithExpectation, expectations recomputed for the
# v1.8 fields (scaleUpNum/scaleDownNum instead of the older signed scaleNum).
CASES = [
    pytest.param(cs(0, 0, 1, 0), [], Diffs(), id="an empty cloneset wants nothing"),
    pytest.param(
        cs(5, 0, 1, 0), [], Diffs(scale_up_num=5, scale_up_limit=5), id="increase replicas to 5 creates 5"
    ),
    pytest.param(cs(5, 0, 1, 0), many(5), Diffs(), id="five ready pods at the update revision are converged"),
    pytest.param(
        cs(5, 0, 1, 0),
        [pod(specified_delete=True), *many(4)],
        Diffs(delete_ready_limit=1),
        id="specified delete of one ready pod may delete one ready pod",
    ),
    pytest.param(
        cs(5, 0, 1, 0),
        many(4),
        Diffs(scale_up_num=1, scale_up_limit=1),
        id="after the delete one pod is recreated",
    ),
    pytest.param(
        cs(4, 0, 1, 0),
        [pod(ready=False, specified_delete=True), pod(ready=False, specified_delete=True), *many(3)],
        Diffs(delete_ready_limit=2),
        id="specified delete of two while scaling to 4 needs no extra scale-in",
    ),
    pytest.param(
        cs(5, 3, 1, 0),
        many(5, OLD),
        Diffs(update_num=2, update_max_unavailable=1),
        id="partition 3 of 5 updates two pods",
    ),
    pytest.param(
        cs(5, 3, 1, 0),
        [*many(2, NEW), *many(3, OLD)],
        Diffs(),
        id="partition 3 reached wants nothing",
    ),
    pytest.param(
        cs(5, 0, 0, 1),
        [pod(specified_delete=True), *many(4)],
        Diffs(scale_surge=1, scale_up_num=1, scale_up_limit=1, use_surge=1),
        id="specified delete with maxSurge creates the replacement first",
    ),
    pytest.param(
        cs(5, 0, 0, 1),
        [pod(specified_delete=True), *many(4), pod()],
        Diffs(scale_surge=1, delete_ready_limit=1, use_surge=1),
        id="specified delete with maxSurge deletes once the replacement is ready",
    ),
    pytest.param(
        cs(5, 3, 1, 1),
        many(5, OLD),
        Diffs(scale_up_num=1, scale_up_limit=1, use_surge=1, update_num=2, update_max_unavailable=1),
        id="partition 3 with maxSurge surges one new pod",
    ),
    pytest.param(
        cs(5, 3, 1, 1),
        [*many(4, OLD), pod(OLD, specified_delete=True), pod(ready=False)],
        Diffs(
            scale_surge=1,
            scale_surge_old_revision=1,
            delete_ready_limit=1,
            use_surge=1,
            use_surge_old_revision=1,
            update_num=1,
            update_max_unavailable=2,
        ),
        id="recreate update with maxSurge keeps the surge on the old revision",
    ),
    pytest.param(
        cs(5, 3, 1, 1),
        [*many(4, OLD), pod(state="Updating", ready=False), pod(ready=False)],
        Diffs(scale_down_num=1, scale_down_num_old_revision=1),
        id="in-place update with maxSurge gives the surge back from the old revision",
    ),
    pytest.param(
        cs(5, "99%", 3, 2),
        many(5, OLD),
        Diffs(scale_up_num=1, scale_up_limit=1, use_surge=1, update_num=1, update_max_unavailable=3),
        id="partition 99% of 5 with surge creates one new pod",
    ),
    pytest.param(
        cs(5, "99%", 3, 2),
        [*many(5, OLD), pod(ready=False)],
        Diffs(scale_down_num=1, scale_down_num_old_revision=1, delete_ready_limit=3),
        id="partition 99% of 5 then scales one old pod in",
    ),
    pytest.param(
        cs(5, "99%", "40%", "30%"),
        many(5, OLD),
        Diffs(scale_up_num=1, scale_up_limit=1, use_surge=1, update_num=1, update_max_unavailable=2),
        id="percent surge and unavailable: 30% of 5 surges 2, 40% of 5 rounds down to 2",
    ),
    pytest.param(
        cloneset(5, scale_max_unavailable=1),
        many(2, ready=False),
        Diffs(scale_up_num=3, scale_up_limit=0),
        id="scaleStrategy.maxUnavailable blocks creation while pods are unavailable",
    ),
    pytest.param(
        cloneset(5, pods_to_delete=["victim"]),
        [pod(name="victim"), *many(4)],
        Diffs(delete_ready_limit=1),
        id="podsToDelete counts like the specified-delete label",
    ),
    pytest.param(
        cloneset(4, partition=2),
        [*many(1, OLD), *many(2, NEW)],
        Diffs(scale_up_num=1, scale_up_num_old_revision=1, scale_up_limit=1),
        id="scale-out keeps the partition by creating an old-revision pod",
    ),
]


@pytest.mark.parametrize(("cloneset_obj", "pods", "expected"), CASES)
def test_calculate_diffs(cloneset_obj: dict[str, Any], pods: list[dict[str, Any]], expected: Diffs) -> None:
    assert calculate_diffs(cloneset_obj, pods, OLD, NEW, NOW) == expected


def test_partition_rollback_only_with_the_gate_and_different_revisions() -> None:
    obj = cs(5, 4, 2, 0)
    pods = [*many(4, NEW), pod(OLD)]
    assert calculate_diffs(obj, pods, OLD, NEW, NOW) == Diffs()
    rollback = calculate_diffs(obj, pods, OLD, NEW, NOW, partition_rollback=True)
    assert rollback == Diffs(update_num=-3, update_max_unavailable=2)
    assert calculate_diffs(obj, pods, NEW, NEW, NOW, partition_rollback=True) == Diffs()


def test_preparing_delete_counts_unless_excluded() -> None:
    pods = [*many(3), pod(state="PreparingDelete")]
    counted = calculate_diffs(cloneset(3), pods, NEW, NEW, NOW)
    assert counted == Diffs(scale_down_num=1, delete_ready_limit=1)
    assert calculate_diffs(cloneset(3), pods, NEW, NEW, NOW, exclude_preparing_delete=True) == Diffs()
    labelled = cloneset(3, labels={"apps.kruise.io/cloneset-scaling-exclude-preparing-delete": "true"})
    assert calculate_diffs(labelled, pods, NEW, NEW, NOW) == Diffs()


def test_excluding_preparing_delete_recreates_the_pod_being_deleted() -> None:
    pods = [*many(2), pod(state="PreparingDelete")]
    diffs = calculate_diffs(cloneset(3), pods, NEW, NEW, NOW, exclude_preparing_delete=True)
    assert diffs.scale_up_num == 1


def test_preparing_update_as_update_only_for_scaling() -> None:
    obj = cloneset(3, partition=1)
    pods = [pod(OLD, state="PreparingUpdate"), pod(OLD), pod(NEW)]
    assert calculate_diffs(obj, pods, OLD, NEW, NOW).update_num == 1
    assert calculate_diffs(obj, pods, OLD, NEW, NOW, preparing_update_as_update=True).update_num == 0


def test_min_ready_seconds_makes_fresh_pods_unavailable() -> None:
    obj = cloneset(3, min_ready_seconds=60, scale_max_unavailable=1)
    pods = [pod(ready_since=NOW - timedelta(seconds=10)), *many(1)]
    assert calculate_diffs(obj, pods, NEW, NEW, NOW).scale_up_limit == 0
    assert calculate_diffs(obj, pods, NEW, NEW, NOW + timedelta(minutes=2)).scale_up_limit == 1


def test_empty_diffs_report_empty() -> None:
    assert Diffs().is_empty
    assert not Diffs(update_num=-1).is_empty


# -- properties --------------------------------------------------------------------------------

int_or_percent = st.one_of(st.integers(min_value=0, max_value=6), st.integers(0, 100).map(lambda p: f"{p}%"))
pod_shape = st.tuples(
    st.booleans(),  # at the update revision
    st.booleans(),  # ready
    st.sampled_from([None, "Normal", "PreparingNormal", "Updating", "PreparingDelete", "PreparingUpdate"]),
    st.booleans(),  # specified delete
)


def build(shapes: list[tuple[bool, bool, str | None, bool]]) -> list[dict[str, Any]]:
    return [
        pod(NEW if new else OLD, ready=ready, state=state, specified_delete=sd)
        for new, ready, state, sd in shapes
    ]


@settings(max_examples=200, deadline=None)
@given(
    replicas=st.integers(min_value=0, max_value=12),
    partition=st.one_of(st.integers(0, 14), st.integers(0, 100).map(lambda p: f"{p}%")),
    max_unavailable=int_or_percent,
    max_surge=int_or_percent,
    shapes=st.lists(pod_shape, max_size=16),
    rollback=st.booleans(),
)
def test_diffs_invariants(
    replicas: int,
    partition: int | str,
    max_unavailable: int | str,
    max_surge: int | str,
    shapes: list[tuple[bool, bool, str | None, bool]],
    rollback: bool,
) -> None:
    obj = cs(replicas, partition, max_unavailable, max_surge)
    pods = build(shapes)
    diffs = calculate_diffs(obj, pods, OLD, NEW, NOW, partition_rollback=rollback)
    numbers = strategy_numbers(obj)
    # never ask for more than replicas + maxSurge pods in total
    assert len(pods) + diffs.scale_up_num <= replicas + numbers.max_surge or diffs.scale_up_num == 0
    assert 0 <= diffs.use_surge_old_revision <= diffs.use_surge <= numbers.max_surge
    assert 0 <= diffs.scale_up_limit <= diffs.scale_up_num
    assert diffs.scale_up_num == 0 or diffs.scale_down_num == 0
    assert min(diffs.scale_down_num, diffs.delete_ready_limit, diffs.scale_up_num_old_revision) >= 0
    assert (diffs.update_num == 0) <= (diffs.update_max_unavailable == 0)
    assert rollback or diffs.update_num >= 0
    # a pure function: the same world gives the same answer
    assert calculate_diffs(obj, pods, OLD, NEW, NOW, partition_rollback=rollback) == diffs


@given(
    replicas=st.integers(min_value=0, max_value=12), max_surge=int_or_percent, max_unavailable=int_or_percent
)
def test_converged_world_wants_nothing(
    replicas: int, max_surge: int | str, max_unavailable: int | str
) -> None:
    obj = cs(replicas, 0, max_unavailable, max_surge)
    assert calculate_diffs(obj, many(replicas), NEW, NEW, NOW).is_empty


def test_cloneset_regard_preparing_update_pod_as_update_when_scaling() -> None:
    """Upstream e2e "CloneSet regard preparing-update pod as update when scaling"
    (``K:test/e2e/apps/v1alpha1/cloneset.go:1526``; upstream's e2e manager runs with
    ``--feature-gates=AllAlpha=true,AllBeta=true``, so gate ``PreparingUpdateAsUpdate`` is on).

    Upstream rule (``K:pkg/controller/cloneset/sync/cloneset_scale.go`` ``Scale`` passes
    ``revision.IsPodUpdate`` to ``calculateDiffsWithExpectation``): with the gate, a pod waiting
    in ``PreparingUpdate`` counts as updated, so the current-revision share (the partition) lacks
    one pod and a pod created while it waits (a deleted pod rebuilt, or a scale-up) is created at
    the *current* revision; ``Update`` does not count it, so releasing the hook updates only the
    held pod. Without the gate (upstream's default) the held pod counts as old and the new pod is
    created at the update revision.
    """
    obj = cloneset(2, partition="99%", max_unavailable="50%", update_type="InPlaceIfPossible")
    held = pod(OLD, state="PreparingUpdate")
    rebuilt = calculate_diffs(obj, [held], OLD, NEW, NOW, preparing_update_as_update=True)
    assert (rebuilt.scale_up_num, rebuilt.scale_up_num_old_revision) == (1, 1)
    assert calculate_diffs(obj, [held], OLD, NEW, NOW).scale_up_num_old_revision == 0

    scaled = cloneset(3, partition="99%", max_unavailable="50%", update_type="InPlaceIfPossible")
    scale_up = calculate_diffs(scaled, [held, pod(OLD)], OLD, NEW, NOW, preparing_update_as_update=True)
    assert (scale_up.scale_up_num, scale_up.scale_up_num_old_revision) == (1, 1)

    released = [pod(OLD), pod(OLD), pod(OLD)]  # the hook label removed: Normal again
    assert calculate_diffs(scaled, released, OLD, NEW, NOW, preparing_update_as_update=True).update_num == 1
