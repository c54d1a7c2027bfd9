"""``spec.targetFilter``: the pods the webhook spreads and the controller counts, and the replicas
read from ``replicasPathList``."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.selector import SelectorError
from kruise.workloads.workloadspread.targetfilter import TargetFilterError, admits, counts, filtered_replicas

WEB = {"app": "web", "tier": "canary"}


def test_selector_decides_for_both_and_no_filter_takes_every_pod() -> None:
    canary: Any = {"selector": {"matchLabels": {"tier": "canary"}}}
    stable: Any = {
        "selector": {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["canary"]}]}
    }
    assert admits(canary, WEB) and counts(canary, WEB)
    assert not admits(stable, WEB) and not counts(stable, WEB)
    assert admits(None, WEB) and counts(None, WEB)
    empty: Any = {"selector": {}}
    assert admits(empty, {}) and counts(empty, {})


def test_a_filter_without_selector_admits_nothing_but_counts_everything_as_upstream() -> None:
    paths_only: Any = {"replicasPathList": ["spec.replicas"]}
    assert not admits(paths_only, WEB)
    assert counts(paths_only, WEB)


def test_a_malformed_selector_raises() -> None:
    bad: Any = {"selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": []}]}}
    with pytest.raises(SelectorError):
        admits(bad, WEB)
    with pytest.raises(SelectorError):
        counts(bad, WEB)


def test_replicas_sum_the_paths_missing_counts_zero_non_integer_raises() -> None:
    workload: Any = {"spec": {"replicas": 6, "minReadySeconds": 2, "paused": True, "template": {}}}
    assert filtered_replicas(workload, None, 6) == 6
    assert filtered_replicas(workload, {"replicasPathList": []}, 6) == 6
    assert filtered_replicas(workload, {"replicasPathList": ["spec.minReadySeconds"]}, 6) == 2
    both: Any = {"replicasPathList": ["spec.replicas", "spec.minReadySeconds", "status.absent", ""]}
    assert filtered_replicas(workload, both, 6) == 8
    for path in ("spec.paused", "spec.template"):
        with pytest.raises(TargetFilterError):
            filtered_replicas(workload, {"replicasPathList": [path]}, 6)
