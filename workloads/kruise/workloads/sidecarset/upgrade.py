"""The upgrade controller's decisions (pure; upstream ``sidecarset_strategy.go``/``_processor.go``).

:func:`next_upgrades` picks, from the pods a SidecarSet injected (active, still selected, with all
its sidecars), the ones to upgrade in place this round and the ones that cannot be:

1. candidates: not yet at the SidecarSet's hash and selected by ``updateStrategy.selector``
   (when set); a candidate whose sidecars changed beyond their images is *not upgradable*
   (condition ``SidecarSetUpgradable=False``), one with a sidecar still being upgraded waits;
2. order: ``kubecontroller.ActivePods`` (unscheduled, pending, not ready first), then
   ``priorityStrategy``, then ``scatterStrategy`` (a term ``value: "*"`` stands for each value
   the pods carry for that key);
3. ``partition`` (int, or a percentage of the matched pods rounded up; a percentage below 100%
   still upgrades one pod of two or more) candidates stay behind, the last in that order;
4. ``maxUnavailable`` (default 1; a percentage of the matched pods rounded up): upgraded pods
   not yet consistent or not ready count against it; a candidate that is not ready is upgraded
   without counting (it cannot become less available).

There is no unready phase before an upgrade, as upstream's SidecarSet (unlike a CloneSet).
:func:`calculate_status` counts ``matchedPods``, ``updatedPods``, ``readyPods`` (consistent and
ready) and ``updatedReadyPods``. :func:`hot_upgrade_flips` lists the pods whose new hot-upgrade
container is running, so that the old one goes back to the empty image.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from kruise.workloads.objects import KubeObject, labels, mapping, metadata, sequence, spec, status
from kruise.workloads.pods import compare_active_pods, is_ready, is_running
from kruise.workloads.sidecarset.hotupgrade import empty_image, is_hot_upgrade, working_and_idle
from kruise.workloads.sidecarset.matching import matches_labels
from kruise.workloads.sidecarset.podstate import (
    container_images,
    is_ready_for,
    is_state_consistent,
    is_updated,
    sidecar_containers_in_pod,
    upgradability,
)
from kruise.workloads.updatesort import priority_sort, scatter_sort

__all__ = [
    "UpgradePlan",
    "calculate_status",
    "hot_upgrade_flips",
    "next_upgrades",
    "partition_count",
    "scatter_terms",
    "status_changed",
    "upgrade_count",
]


@dataclass(frozen=True)
class UpgradePlan:
    """This round: ``upgrade`` (in order) and ``not_upgradable`` (more than images changed)."""

    upgrade: tuple[KubeObject, ...]
    not_upgradable: tuple[KubeObject, ...]


def _strategy(sidecarset: KubeObject) -> Mapping[str, Any]:
    return mapping(spec(sidecarset).get("updateStrategy"))


def _percent(value: str) -> Decimal | None:
    if not value.endswith("%"):
        return None
    try:
        share = Decimal(value[:-1])
    except InvalidOperation:
        return None
    return share if share.is_finite() and share >= 0 else None


def partition_count(partition: Any, total: int) -> int:
    """``util.CalculatePartitionReplicas``: pods to keep on old versions, in ``[0, total]``.

    A percentage rounds up (so a partition above 0% keeps at least one pod), but one below 100%
    of two or more pods keeps at most ``total - 1``. Malformed values keep none.
    """
    if partition is None or isinstance(partition, bool):
        return 0
    if isinstance(partition, int):
        return max(min(partition, total), 0)
    share = _percent(str(partition))
    if share is None:
        return 0
    value = math.ceil(share * total / 100)
    if total > 1 and value == total and partition != "100%":
        value = total - 1
    return max(min(value, total), 0)


def _max_unavailable(value: Any, total: int) -> int:
    """``intstr.GetValueFromIntOrPercent(maxUnavailable, total, roundUp=true)``; default 1, a
    malformed value 0 (upstream ignores the error)."""
    if value is None:
        return 1
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value)
    if not text.endswith("%") or not text[:-1].isdigit():
        return 0
    return math.ceil(int(text[:-1]) * total / 100)


def scatter_terms(terms: Sequence[Any], pods: Sequence[KubeObject]) -> list[dict[str, str]]:
    """``parseUpdateScatterTerms``: a ``value: "*"`` term becomes one term per value pods carry
    for its key (in pod order); duplicates dropped."""
    out: list[dict[str, str]] = []

    def add(key: str, value: str) -> None:
        if not any(t["key"] == key and t["value"] == value for t in out):
            out.append({"key": key, "value": value})

    for term in terms:
        key, value = str(mapping(term).get("key") or ""), str(mapping(term).get("value") or "")
        if value != "*":
            add(key, value)
            continue
        for pod in pods:
            if key in labels(pod):
                add(key, str(labels(pod)[key]))
    return out


def _sorted_candidates(
    strategy: Mapping[str, Any], pods: Sequence[KubeObject], indexes: list[int]
) -> list[int]:
    """``SortUpdateIndexes``: ActivePods, then priority, then scatter."""

    def compare(i: int, j: int) -> int:
        return compare_active_pods(pods[i], pods[j])

    ordered = sorted(indexes, key=functools.cmp_to_key(compare))
    if strategy.get("priorityStrategy") is not None:
        ordered = priority_sort(pods, ordered, mapping(strategy.get("priorityStrategy")))
    if strategy.get("scatterStrategy") is not None:
        terms = scatter_terms(sequence(strategy.get("scatterStrategy")), pods)
        ordered = scatter_sort(pods, ordered, terms)
    return ordered


def upgrade_count(sidecarset: KubeObject, pods: Sequence[KubeObject], candidates: Sequence[int]) -> int:
    """``calculateUpgradeCount``: how many of the ordered ``candidates`` to upgrade now."""
    strategy = _strategy(sidecarset)
    total = len(pods)
    keep = partition_count(strategy.get("partition"), total)
    if len(candidates) - keep <= 0:
        return 0
    allowed = list(candidates)[: len(candidates) - keep]
    max_unavailable = _max_unavailable(strategy.get("maxUnavailable"), total)
    unavailable = sum(
        1
        for pod in pods
        if is_updated(sidecarset, pod)
        and (not is_state_consistent(sidecarset, pod) or not is_ready_for(sidecarset, pod))
    )
    count = 0
    for i in allowed:
        if not is_ready_for(sidecarset, pods[i]):
            count += 1
            continue
        if unavailable >= max_unavailable:
            break
        unavailable += 1
        count += 1
    return count


def next_upgrades(
    sidecarset: KubeObject, pods: Sequence[KubeObject], now: datetime | None = None
) -> UpgradePlan:
    """The pods to upgrade this round and those that cannot be (see the module docstring).

    ``pods`` are the SidecarSet's matched pods (``getMatchingPods``); ``now`` is accepted for
    symmetry with the other workloads' cores (SidecarSet has no time-based rule).
    """
    del now
    strategy = _strategy(sidecarset)
    selector = strategy.get("selector")
    candidates: list[int] = []
    not_upgradable: list[int] = []
    for index, pod in enumerate(pods):
        if is_updated(sidecarset, pod):
            continue
        if selector is not None and not matches_labels(selector, labels(pod)):
            continue
        verdict = upgradability(sidecarset, pod)
        if verdict.can_upgrade and verdict.consistent:
            candidates.append(index)
        elif not verdict.can_upgrade:
            not_upgradable.append(index)
    ordered = _sorted_candidates(strategy, pods, candidates)
    chosen = ordered[: upgrade_count(sidecarset, pods, ordered)]
    return UpgradePlan(tuple(pods[i] for i in chosen), tuple(pods[i] for i in not_upgradable))


def calculate_status(
    sidecarset: KubeObject, pods: Sequence[KubeObject], latest_revision: str, collision_count: int
) -> dict[str, Any]:
    """``calculateStatus``: the status the controller writes (``observedGeneration`` included)."""
    updated = ready = updated_ready = 0
    for pod in pods:
        is_new = is_updated(sidecarset, pod)
        updated += is_new
        if is_state_consistent(sidecarset, pod) and is_ready_for(sidecarset, pod):
            ready += 1
            updated_ready += is_new
    return {
        "observedGeneration": int(metadata(sidecarset).get("generation") or 0),
        "matchedPods": len(pods),
        "updatedPods": updated,
        "readyPods": ready,
        "updatedReadyPods": updated_ready,
        "latestRevision": latest_revision,
        "collisionCount": collision_count,
    }


def status_changed(current: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """``inconsistentStatus``: a newer generation or any counter, revision or collision count differs."""
    if int(new.get("observedGeneration") or 0) > int(current.get("observedGeneration") or 0):
        return True
    keys = ("matchedPods", "updatedPods", "readyPods", "updatedReadyPods", "latestRevision", "collisionCount")
    return any((current.get(k) or 0) != (new.get(k) or 0) for k in keys)


def _hot_upgrading(sidecarset: KubeObject, pod: KubeObject) -> bool:
    """An idle hot-upgrade container is not on the empty image (``isPodSidecarInHotUpgrading``)."""
    images = container_images(pod)
    for sidecar in sequence(spec(sidecarset).get("containers")):
        if is_hot_upgrade(mapping(sidecar)):
            _, idle = working_and_idle(str(mapping(sidecar).get("name") or ""), pod)
            if images.get(idle) != empty_image(mapping(sidecar)):
                return True
    return False


def _idle_containers(sidecarset: KubeObject, pod: KubeObject) -> set[str]:
    return {
        working_and_idle(str(mapping(s).get("name") or ""), pod)[1]
        for s in sequence(spec(sidecarset).get("containers"))
        if is_hot_upgrade(mapping(s))
    }


def _hot_upgrading_ready(sidecarset: KubeObject, pod: KubeObject) -> bool:
    """Running and Ready, or every container but the idle ones ready (``isHotUpgradingReady``)."""
    if is_running(pod) and is_ready(pod) and not metadata(pod).get("deletionTimestamp"):
        return True
    idle = _idle_containers(sidecarset, pod)
    return all(
        bool(mapping(s).get("ready"))
        for s in sequence(status(pod).get("containerStatuses"))
        if mapping(s).get("name") not in idle
    )


def hot_upgrade_flips(sidecarset: KubeObject, pods: Sequence[KubeObject]) -> list[KubeObject]:
    """Pods whose idle hot-upgrade container is to be reset to the empty image: hot upgrading,
    the other sidecars consistent, and ready apart from the idle containers."""
    if not any(is_hot_upgrade(mapping(s)) for s in sequence(spec(sidecarset).get("containers"))):
        return []
    out = []
    for pod in pods:
        wanted = sidecar_containers_in_pod(sidecarset) - _idle_containers(sidecarset, pod)
        if (
            _hot_upgrading(sidecarset, pod)
            and is_state_consistent(sidecarset, pod, wanted)
            and _hot_upgrading_ready(sidecarset, pod)
        ):
            out.append(pod)
    return out
