"""Which pods go first: scale-in victims and the in-place/recreate update order.

Two upstream orderings are mirrored:

* ``kubecontroller.ActivePods`` (update order and the base of the same-node ranker):
  unassigned < assigned, Pending < Unknown < Running, not ready < ready, shorter ready time,
  more restarts, newer creation (a missing timestamp first).
* ``clonesetutils.ActivePodsWithRanks`` (scale-in): the same, plus "not available first"
  before readiness, lower ``pod-deletion-cost`` first and higher rank first before ready time.

Go sorts these with the unstable ``sort.Sort``; Python's sort is stable, so pods that compare
equal keep their input order here (upstream leaves it unspecified).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from kruise.workloads.cloneset.diffs import Diffs
from kruise.workloads.cloneset.podstate import (
    is_cloneset_available,
)
from kruise.workloads.objects import (
    KubeObject,
    mapping,
    name,
    namespace,
    sequence,
    uid,
)
from kruise.workloads.pods import (
    LifecycleState,
    compare_active_pods,
    compare_pods_head,
    compare_pods_tail,
    deletion_cost,
    equal_to_revision_hash,
    is_ready,
    lifecycle_state,
    node_name,
)
from kruise.workloads.updatesort import priority_sort, scatter_sort

Ranker = Callable[[KubeObject], float]


def compare_ranked(
    a: KubeObject,
    b: KubeObject,
    *,
    ranker: Ranker | None = None,
    available: Callable[[KubeObject], bool] | None = None,
) -> int:
    """``cmp``-style ``clonesetutils.ActivePodsWithRanks.Less`` (negative: delete ``a`` first)."""
    head = compare_pods_head(a, b)
    if head:
        return head
    if available is not None and available(a) != available(b):
        return -1 if not available(a) else 1
    if is_ready(a) != is_ready(b):
        return -1 if not is_ready(a) else 1
    cost_a, cost_b = deletion_cost(a), deletion_cost(b)
    if cost_a != cost_b:
        return -1 if cost_a < cost_b else 1
    rank_a = ranker(a) if ranker else 0.0
    rank_b = ranker(b) if ranker else 0.0
    if rank_a != rank_b:
        return -1 if rank_a > rank_b else 1
    return compare_pods_tail(a, b)


def _pod_key(pod: KubeObject) -> str:
    # Upstream keys ranks by UID; fall back to namespace/name for UID-less test fixtures.
    return uid(pod) or f"{namespace(pod)}/{name(pod)}"


def _sorted_ranked(pods: Sequence[KubeObject], ranker: Ranker | None) -> list[KubeObject]:
    def compare(a: KubeObject, b: KubeObject) -> int:
        return compare_ranked(a, b, ranker=ranker)

    return sorted(pods, key=functools.cmp_to_key(compare))


def same_node_ranker(pods: Sequence[KubeObject]) -> Ranker:
    """Rank pods sharing a node (``NewSameNodeRanker``).

    On a node with ``n > 1`` pods, sorted by :func:`compare_ranked`, the first ``n-1`` get ranks
    ``n-1, ..., 1`` and the last gets 0; pods alone on a node (or unscheduled) get 0.
    """
    by_node: dict[str, list[KubeObject]] = {}
    for pod in pods:
        if node_name(pod):
            by_node.setdefault(node_name(pod), []).append(pod)
    ranks: dict[str, float] = {}
    for on_node in by_node.values():
        if len(on_node) <= 1:
            continue
        ordered = _sorted_ranked(on_node, None)[:-1]
        for i, pod in enumerate(ordered):
            ranks[_pod_key(pod)] = float(len(ordered) - i)
    return lambda pod: ranks.get(_pod_key(pod), 0.0)


def spread_constraints_ranker(
    pods: Sequence[KubeObject],
    topology_keys: Sequence[str],
    node_labels: Mapping[str, Mapping[str, str]],
) -> Ranker:
    """Rank pods by crowding in each topology domain (``NewSpreadConstraintsRanker``).

    ``node_labels`` maps node name to its labels (nodes not in it are skipped, as upstream skips
    nodes it cannot read). Per topology key, pods in each domain are sorted (with the same-node
    ranker unless the key is ``kubernetes.io/hostname``) and the ``i``-th of ``n`` adds
    ``(n - i) * ln(domains + 2)`` to its rank.
    """
    on_node: dict[str, list[KubeObject]] = {}
    for pod in pods:
        if node_name(pod) and node_name(pod) in node_labels:
            on_node.setdefault(node_name(pod), []).append(pod)
    same_node = same_node_ranker(pods)
    ranks: dict[str, float] = {}
    for key in topology_keys:
        domains: dict[str, list[KubeObject]] = {}
        for node, node_pods in on_node.items():
            value = node_labels[node].get(key)
            if value is not None:
                domains.setdefault(value, []).extend(node_pods)
        inner = None if key == "kubernetes.io/hostname" else same_node
        weight = math.log(len(domains) + 2)
        for domain_pods in domains.values():
            ordered = _sorted_ranked(domain_pods, inner)
            for i, pod in enumerate(ordered):
                ranks[_pod_key(pod)] = ranks.get(_pod_key(pod), 0.0) + (len(ordered) - i) * weight
    return lambda pod: ranks.get(_pod_key(pod), 0.0)


def topology_keys_of(cloneset: KubeObject) -> list[str]:
    """``topologyKey`` of each ``spec.template.spec.topologySpreadConstraints`` entry."""
    template = mapping(mapping(cloneset.get("spec")).get("template"))
    constraints = sequence(mapping(template.get("spec")).get("topologySpreadConstraints"))
    return [str(mapping(c).get("topologyKey") or "") for c in constraints]


def sort_for_scale_in(
    pods: Sequence[KubeObject],
    now: datetime,
    *,
    min_ready_seconds: int = 0,
    topology_keys: Sequence[str] = (),
    node_labels: Mapping[str, Mapping[str, str]] | None = None,
) -> list[KubeObject]:
    """Order ``pods`` so that the ones to delete first come first (reference §2.3 ranking).

    Uses the spread-constraint ranker when ``topology_keys`` is non-empty (nodes looked up in
    ``node_labels``), else the same-node ranker; availability is the CloneSet's
    (:func:`~kruise.workloads.pods.is_cloneset_available` with ``min_ready_seconds``).
    """
    if topology_keys:
        ranker = spread_constraints_ranker(pods, topology_keys, node_labels or {})
    else:
        ranker = same_node_ranker(pods)

    def available(pod: KubeObject) -> bool:
        return is_cloneset_available(pod, min_ready_seconds, now)

    def compare(a: KubeObject, b: KubeObject) -> int:
        return compare_ranked(a, b, ranker=ranker, available=available)

    return sorted(pods, key=functools.cmp_to_key(compare))


def choose_pods_to_delete(
    total_diff: int,
    current_rev_diff: int,
    not_updated_pods: Sequence[KubeObject],
    updated_pods: Sequence[KubeObject],
    now: datetime,
    *,
    min_ready_seconds: int = 0,
    topology_keys: Sequence[str] = (),
    node_labels: Mapping[str, Mapping[str, str]] | None = None,
) -> list[KubeObject]:
    """Pick ``total_diff`` scale-in victims, old-revision ones first (``choosePodsToDelete``).

    ``total_diff``/``current_rev_diff`` are ``Diffs.scale_down_num`` / ``scale_down_num_old_revision``.
    Each group is only sorted when fewer than all of its pods are taken.
    """

    def choose(group: Sequence[KubeObject], diff: int) -> list[KubeObject]:
        if diff < len(group):
            ordered = sort_for_scale_in(
                group,
                now,
                min_ready_seconds=min_ready_seconds,
                topology_keys=topology_keys,
                node_labels=node_labels,
            )
            return ordered[: max(diff, 0)]
        return list(group)

    if current_rev_diff >= total_diff:
        return choose(not_updated_pods, total_diff)
    if current_rev_diff > 0:
        return choose(not_updated_pods, current_rev_diff) + choose(
            updated_pods, total_diff - current_rev_diff
        )
    return choose(updated_pods, total_diff)


def sort_for_update(
    pods: Sequence[KubeObject], indexes: Sequence[int], update_strategy: Mapping[str, Any] | None
) -> list[int]:
    """Order candidate ``indexes`` (into ``pods``) for update (``SortUpdateIndexes``).

    ActivePods order (ties by pod name), then ``priorityStrategy``, then ``scatterStrategy``, then
    a stable pass that puts ``PreparingUpdate`` pods first.
    """
    strategy = mapping(update_strategy)

    def compare(i: int, j: int) -> int:
        return compare_active_pods(pods[i], pods[j])

    # ties (same ready time, restarts and creation second: common) go by pod name, so the order
    # is a function of the pods alone (upstream's is the informer's list order) and a Rollout can
    # predict it (kruise.rollouts.rollout.prepull)
    by_name = sorted(indexes, key=lambda i: str(mapping(pods[i].get("metadata")).get("name") or ""))
    ordered = sorted(by_name, key=functools.cmp_to_key(compare))
    if strategy.get("priorityStrategy") is not None:
        ordered = priority_sort(pods, ordered, mapping(strategy.get("priorityStrategy")))
    if strategy.get("scatterStrategy") is not None:
        ordered = scatter_sort(pods, ordered, sequence(strategy.get("scatterStrategy")))
    return sorted(ordered, key=lambda i: lifecycle_state(pods[i]) != LifecycleState.PREPARING_UPDATE)


def limit_update_indexes(
    pods: Sequence[KubeObject],
    indexes: Sequence[int],
    diffs: Diffs,
    target_revision: str,
    now: datetime,
    *,
    min_ready_seconds: int = 0,
) -> list[int]:
    """Cut the sorted candidates to what maxUnavailable allows (``limitUpdateIndexes``).

    Keep at most ``|update_num|``; stop once unavailable target-revision pods plus the pods
    chosen so far reach ``update_max_unavailable``; choosing an *available* pod needs the total
    unavailable count below ``update_max_unavailable`` and raises it, an unavailable one is free.
    """
    chosen = list(indexes)[: abs(diffs.update_num)]
    unavailable = target_unavailable = 0
    for pod in pods:
        if not is_cloneset_available(pod, min_ready_seconds, now):
            unavailable += 1
            if equal_to_revision_hash(pod, target_revision):
                target_unavailable += 1
    can_update = 0
    for i in chosen:
        if target_unavailable + can_update >= diffs.update_max_unavailable:
            break
        if is_cloneset_available(pods[i], min_ready_seconds, now):
            if unavailable >= diffs.update_max_unavailable:
                break
            unavailable += 1
        can_update += 1
    return chosen[:can_update]
