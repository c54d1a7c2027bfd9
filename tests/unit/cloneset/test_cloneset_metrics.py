"""CloneSet metrics: kruise-state-metrics' gauges at scrape time, the in-place duration rule."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from cloneset_builders import NOW, ts
from prometheus_client import REGISTRY, CollectorRegistry

from kruise.core.metrics import forget_cloneset
from kruise.workloads.cloneset.metrics import (
    CloneSetStateCollector,
    count_in_place_update,
)
from kruise.workloads.inplace import STATE_KEY, in_place_update_seconds

JSON = dict[str, Any]


def web(**update: Any) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {
            "namespace": "shop",
            "name": "web",
            "generation": 4,
            "creationTimestamp": "2024-05-01T12:00:00Z",
        },
        "spec": {"replicas": 10, "updateStrategy": update},
        "status": {
            "replicas": 11,
            "readyReplicas": 9,
            "availableReplicas": 8,
            "updatedReplicas": 3,
            "updatedReadyReplicas": 2,
            "expectedUpdatedReplicas": 4,
            "observedGeneration": 3,
            "conditions": [{"type": "FailedScale", "status": "False"}],
        },
    }


def scrape(*clonesets: JSON) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(CloneSetStateCollector(lambda: list(clonesets)))
    return registry


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, {"namespace": "shop", "cloneset": "web", **labels})


def test_status_and_spec_numbers_are_kruise_state_metrics() -> None:
    reg = scrape(web(type="InPlaceIfPossible", partition=6, maxUnavailable="25%", maxSurge="15%"))
    expected = {
        "kruise_cloneset_created": 1714564800.0,
        "kruise_cloneset_metadata_generation": 4,
        "kruise_cloneset_spec_replicas": 10,
        "kruise_cloneset_status_replicas": 11,
        "kruise_cloneset_status_replicas_ready": 9,
        "kruise_cloneset_status_replicas_available": 8,
        "kruise_cloneset_status_replicas_unavailable": 2,  # spec.replicas - available
        "kruise_cloneset_status_replicas_updated": 3,
        "kruise_cloneset_status_replicas_updated_ready": 2,
        "kruise_cloneset_status_observed_generation": 3,
        "kruise_cloneset_status_expected_updated_replicas": 4,
        "kruise_cloneset_spec_strategy_paused": 0,
        "kruise_cloneset_spec_strategy_rollingupdate_max_unavailable": 2,  # 25% of 10, down
        "kruise_cloneset_spec_strategy_rollingupdate_max_surge": 2,  # 15% of 10, up
        "kruise_cloneset_labels": 1,
        "kruise_cloneset_annotations": 1,
    }
    assert {name: value(reg, name) for name in expected} == expected
    assert value(reg, "kruise_cloneset_spec_strategy_partition", partition="6") == 0
    types = {
        t: value(reg, "kruise_cloneset_spec_strategy_type", strategy_type=t)
        for t in ("ReCreate", "InPlaceIfPossible", "InPlaceOnly")
    }
    assert types == {"ReCreate": 0, "InPlaceIfPossible": 1, "InPlaceOnly": 0}


def test_every_condition_has_one_series_per_status() -> None:
    reg = scrape(web())
    series = {
        s: value(reg, "kruise_cloneset_status_condition", condition="FailedScale", status=s)
        for s in ("true", "false", "unknown")
    }
    assert series == {"true": 0, "false": 1, "unknown": 0}


def test_absent_strategy_fields_follow_upstream() -> None:
    """No partition: no partition series; no maxUnavailable/maxSurge: 0 (upstream's nil -> 0)."""
    reg = scrape(web())
    assert not [
        s for m in reg.collect() if m.name == "kruise_cloneset_spec_strategy_partition" for s in m.samples
    ]
    assert value(reg, "kruise_cloneset_spec_strategy_rollingupdate_max_unavailable") == 0
    assert value(reg, "kruise_cloneset_spec_strategy_rollingupdate_max_surge") == 0


def test_a_malformed_value_drops_that_sample_only() -> None:
    reg = scrape(web(maxSurge="lots"))
    assert value(reg, "kruise_cloneset_spec_strategy_rollingupdate_max_surge") is None
    assert value(reg, "kruise_cloneset_spec_replicas") == 10


def test_a_failing_source_scrapes_as_no_clonesets() -> None:
    def broken() -> list[JSON]:
        raise RuntimeError("cache gone")

    registry = CollectorRegistry()
    registry.register(CloneSetStateCollector(broken))
    families = {m.name: m.samples for m in registry.collect()}
    assert "kruise_cloneset_status_replicas" in families
    assert all(samples == [] for samples in families.values())


def test_registering_does_not_read_the_source() -> None:
    def unreadable() -> list[JSON]:
        raise AssertionError("read at registration")

    CollectorRegistry().register(CloneSetStateCollector(unreadable))


def _updating_pod(started: str | None, ready: str) -> JSON:
    state = {
        "revision": "web-new",
        "updateTimestamp": started,
        "lastContainerStatuses": {"main": {"imageID": "x"}},
    }
    return {
        "metadata": {"annotations": {STATE_KEY: json.dumps(state)}},
        "status": {"conditions": [{"type": "InPlaceUpdateReady", "status": ready}]},
    }


@pytest.mark.parametrize(
    ("pod", "seconds"),
    [
        pytest.param(
            _updating_pod(ts(NOW - timedelta(seconds=7)), "False"),
            7.0,
            id="update under way: since its start",
        ),
        pytest.param(
            _updating_pod(ts(NOW - timedelta(seconds=7)), "True"),
            None,
            id="already Ready: nothing to observe",
        ),
        pytest.param(_updating_pod(None, "False"), None, id="state without a start time"),
        pytest.param(
            {"status": {"conditions": [{"type": "InPlaceUpdateReady", "status": "False"}]}},
            None,
            id="new pod, no state",
        ),
        pytest.param(
            _updating_pod(ts(NOW + timedelta(seconds=3)), "False"), 0.0, id="clock skew clamps to 0"
        ),
    ],
)
def test_in_place_update_duration(pod: JSON, seconds: float | None) -> None:
    assert in_place_update_seconds(pod, NOW) == seconds


def test_a_paused_update_reads_1() -> None:
    assert value(scrape(web(paused=True)), "kruise_cloneset_spec_strategy_paused") == 1


def test_a_deleted_clonesets_counters_are_dropped() -> None:
    gone = {"metadata": {"namespace": "shop", "name": "gone"}}
    labels = {"namespace": "shop", "cloneset": "gone"}
    sample = "kruise_cloneset_pods_updated_in_place_total"
    count_in_place_update(gone)
    assert REGISTRY.get_sample_value(sample, labels) == 1
    forget_cloneset("shop", "gone")
    assert REGISTRY.get_sample_value(sample, labels) is None
    forget_cloneset("shop", "gone")  # twice is harmless
