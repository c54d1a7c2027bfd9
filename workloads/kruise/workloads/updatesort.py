"""``updateStrategy.priorityStrategy`` and ``scatterStrategy`` orderings (upstream ``pkg/util/updatesort``).

Both work on *indexes* into the full pod list, as upstream does, because their tie-breaks and
densities look at all pods, not only the candidates:

* the priority sort breaks ties by the **higher pod index first** (upstream compares
  ``indexes[i] > indexes[j]``), so with a priority strategy the earlier ActivePods order is not
  kept among equal-priority pods; an ``orderPriority`` key absent from a pod gives level -1,
  which sorts *before* every listed key.
* the scatter sort interleaves pods matching each ``key=value`` term with the others, in
  groups sized by the density of matching pods among all pods.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.workloads.objects import KubeObject, labels, mapping, sequence
from kruise.workloads.selector import SelectorError, selector_matches


def _int_suffix(value: str) -> int:
    digits = len(value) - len(value.rstrip("0123456789"))
    if digits == 0:
        return 0
    number = int(value[-digits:])
    return number if number < 2**63 else 0


def weight_of(pod_labels: Mapping[str, str], weight_priority: Sequence[Any]) -> int:
    """Sum of ``weight`` over ``weightPriority`` terms whose ``matchSelector`` matches.

    Terms with a malformed selector are skipped, as upstream skips selectors it cannot convert.
    """
    total = 0
    for term in weight_priority:
        term_map = mapping(term)
        try:
            if selector_matches(mapping(term_map.get("matchSelector")), pod_labels):
                total += int(term_map.get("weight") or 0)
        except SelectorError:
            continue
    return total


def order_of(pod_labels: Mapping[str, str], order_priority: Sequence[Any]) -> tuple[int, int]:
    """``(level, order)``: index of the first ``orderedKey`` present and the integer suffix of its value.

    ``(-1, 0)`` when no listed key is present.
    """
    for level, term in enumerate(order_priority):
        key = mapping(term).get("orderedKey")
        if isinstance(key, str) and key in pod_labels:
            return level, _int_suffix(str(pod_labels[key]))
    return -1, 0


def priority_sort(
    pods: Sequence[KubeObject], indexes: Sequence[int], strategy: Mapping[str, Any] | None
) -> list[int]:
    """Order ``indexes`` by ``priorityStrategy`` (higher weight first; lower level, then higher order first).

    Returns ``indexes`` unchanged when the strategy is empty.
    """
    weights = sequence(mapping(strategy).get("weightPriority"))
    orders = sequence(mapping(strategy).get("orderPriority"))
    if not weights and not orders:
        return list(indexes)

    def compare(i: int, j: int) -> int:
        li, lj = labels(pods[i]), labels(pods[j])
        if weights:
            wi, wj = weight_of(li, weights), weight_of(lj, weights)
            if wi != wj:
                return -1 if wi > wj else 1
        else:
            (level_i, order_i), (level_j, order_j) = order_of(li, orders), order_of(lj, orders)
            if level_i != level_j:
                return -1 if level_i < level_j else 1
            if order_i != order_j:
                return -1 if order_i > order_j else 1
        return -1 if i > j else (1 if i < j else 0)

    return sorted(indexes, key=functools.cmp_to_key(compare))


def _f32(value: float) -> float:
    result: float = struct.unpack("f", struct.pack("f", value))[0]
    return result


def _go_round(value: float) -> int:
    return math.floor(value + 0.5)


def _group(matched: int, unmatched: int) -> tuple[int, int, int]:
    group_num = min(matched, unmatched)
    return group_num, _go_round(matched / group_num), _go_round(unmatched / group_num)


def _group_by_density(total_m: int, total_u: int, upd_m: int, upd_u: int) -> tuple[int, int, int, int]:
    """``(groups, matched size, unmatched size, unmatched remainder)`` (``calculateGroupByDensity``)."""
    if _f32(_f32(total_u) / _f32(total_m)) >= _f32(_f32(upd_u) / _f32(upd_m)):
        groups, m_size, u_size = _group(upd_m, upd_u)
        return groups, m_size, u_size, 0
    _, m_size, u_size = _group(total_m, total_u)
    groups = min(upd_m // m_size, upd_u // u_size)
    return groups, m_size, u_size, upd_u - groups * u_size


def _scatter_by_term(key: str, value: str, pods: Sequence[KubeObject], indexes: list[int]) -> list[int]:
    matched = [i for i in indexes if labels(pods[i]).get(key, "") == value]
    unmatched = [i for i in indexes if labels(pods[i]).get(key, "") != value]
    if len(matched) <= 1 or len(unmatched) <= 1:
        return indexes
    total_m = sum(1 for p in pods if labels(p).get(key, "") == value)
    total_u = len(pods) - total_m
    last = matched.pop()
    total_m -= 1
    groups, m_size, u_size, remainder = _group_by_density(total_m, total_u, len(matched), len(unmatched))
    result: list[int] = []
    if remainder > 0:
        result += unmatched[:remainder]
        unmatched = unmatched[remainder:]
    for _ in range(groups):
        result += matched[:m_size]
        matched = matched[m_size:]
        result += unmatched[:u_size]
        unmatched = unmatched[u_size:]
    return [*result, *matched, *unmatched, last]


def _scatter_terms(
    strategy: Sequence[Any], pods: Sequence[KubeObject], indexes: Sequence[int]
) -> list[tuple[str, str]]:
    terms = [(str(mapping(t).get("key") or ""), str(mapping(t).get("value") or "")) for t in strategy]
    if len(terms) == 1:
        return terms
    counter: dict[tuple[str, str], int] = {}
    for term in terms:
        for i in indexes:
            pod_labels = labels(pods[i])
            if term[0] in pod_labels and pod_labels[term[0]] == term[1]:
                counter[term] = counter.get(term, 0) + 1
    ordered = list(counter)
    return sorted(ordered, key=lambda t: -counter[t])


def scatter_sort(
    pods: Sequence[KubeObject], indexes: Sequence[int], strategy: Sequence[Any] | None
) -> list[int]:
    """Spread pods matching each ``scatterStrategy`` term across the update order.

    Terms are applied most-matched first (only terms matching some candidate count when there
    are several). Returns ``indexes`` unchanged for an empty strategy or fewer than two pods.
    """
    result = list(indexes)
    if not strategy or len(result) <= 1:
        return result
    for key, value in _scatter_terms(strategy, pods, result):
        result = _scatter_by_term(key, value, pods, result)
    return result
