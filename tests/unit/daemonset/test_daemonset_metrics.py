"""Advanced DaemonSet metrics: kruise-state-metrics' DaemonSet gauges at scrape time."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kruise.rollouts.manager.metrics import StateSources
from kruise.workloads.daemonset.metrics import DaemonSetStateCollector

JSON = dict[str, Any]


def fluentd(rolling: JSON | None = None, strategy_type: str = "RollingUpdate") -> JSON:
    strategy: JSON = {"type": strategy_type}
    if rolling is not None:
        strategy["rollingUpdate"] = rolling
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {
            "namespace": "logging",
            "name": "fluentd",
            "generation": 7,
            "creationTimestamp": "2024-05-01T12:00:00Z",
        },
        "spec": {"updateStrategy": strategy},
        "status": {
            "desiredNumberScheduled": 10,
            "currentNumberScheduled": 9,
            "numberMisscheduled": 1,
            "numberReady": 8,
            "numberAvailable": 7,
            "numberUnavailable": 3,
            "updatedNumberScheduled": 4,
            "observedGeneration": 6,
            "conditions": [{"type": "Progressing", "status": "Unknown"}],
        },
    }


def scrape(*daemonsets: JSON) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(DaemonSetStateCollector(lambda: list(daemonsets)))
    return registry


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, {"namespace": "logging", "daemonset": "fluentd", **labels})


def test_status_and_spec_numbers_are_kruise_state_metrics() -> None:
    reg = scrape(fluentd({"maxSurge": "15%", "maxUnavailable": "25%", "partition": 3, "paused": True}))
    expected = {
        "kruise_daemonset_created": 1714564800.0,
        "kruise_daemonset_metadata_generation": 7,
        "kruise_daemonset_status_desired_number_scheduled": 10,
        "kruise_daemonset_status_current_number_scheduled": 9,
        "kruise_daemonset_status_number_misscheduled": 1,
        "kruise_daemonset_status_number_ready": 8,
        "kruise_daemonset_status_number_available": 7,
        "kruise_daemonset_status_number_unavailable": 3,
        "kruise_daemonset_status_updated_number_scheduled": 4,
        "kruise_daemonset_status_observed_generation": 6,
        "kruise_daemonset_spec_strategy_rollingupdate_max_surge": 2,  # 15% of 10 desired, up
        "kruise_daemonset_spec_strategy_rollingupdate_max_unavailable": 3,  # 25% of 10, up
        "kruise_daemonset_spec_strategy_paused": 1,
        "kruise_daemonset_labels": 1,
        "kruise_daemonset_annotations": 1,
    }
    assert {name: value(reg, name) for name in expected} == expected
    assert value(reg, "kruise_daemonset_spec_strategy_partition", partition="3") == 0
    types = {
        t: value(reg, "kruise_daemonset_spec_strategy_type", strategy_type=t)
        for t in ("RollingUpdate", "OnDelete")
    }
    assert types == {"RollingUpdate": 1, "OnDelete": 0}
    series = {
        s: value(reg, "kruise_daemonset_status_condition", condition="Progressing", status=s)
        for s in ("true", "false", "unknown")
    }
    assert series == {"true": 0, "false": 0, "unknown": 1}


def _samples(registry: CollectorRegistry, name: str) -> list[Any]:
    return [s for m in registry.collect() if m.name == name for s in m.samples]


def test_on_delete_without_rolling_update_reads_zero_and_no_partition() -> None:
    """No rollingUpdate block (OnDelete): surge and unavailability 0, not paused, no partition series."""
    reg = scrape(fluentd(None, strategy_type="OnDelete"))
    assert value(reg, "kruise_daemonset_spec_strategy_rollingupdate_max_surge") == 0
    assert value(reg, "kruise_daemonset_spec_strategy_rollingupdate_max_unavailable") == 0
    assert value(reg, "kruise_daemonset_spec_strategy_paused") == 0
    assert value(reg, "kruise_daemonset_spec_strategy_type", strategy_type="OnDelete") == 1
    assert value(reg, "kruise_daemonset_spec_strategy_type", strategy_type="RollingUpdate") == 0
    assert not _samples(reg, "kruise_daemonset_spec_strategy_partition")


@pytest.mark.parametrize(("partition", "label"), [("40%", "40%"), (0, "0")])
def test_the_partition_label_is_the_partition_as_written(partition: int | str, label: str) -> None:
    reg = scrape(fluentd({"partition": partition}))
    assert value(reg, "kruise_daemonset_spec_strategy_partition", partition=label) == 0


def test_a_malformed_value_drops_that_sample_only() -> None:
    reg = scrape(fluentd({"maxSurge": "lots", "maxUnavailable": 1}))
    assert value(reg, "kruise_daemonset_spec_strategy_rollingupdate_max_surge") is None
    assert value(reg, "kruise_daemonset_spec_strategy_rollingupdate_max_unavailable") == 1
    assert value(reg, "kruise_daemonset_status_number_ready") == 8


def test_a_daemonset_without_status_reads_zeros() -> None:
    fresh = fluentd({"maxSurge": "50%"})
    del fresh["status"]
    reg = scrape(fresh)
    assert value(reg, "kruise_daemonset_status_desired_number_scheduled") == 0
    assert value(reg, "kruise_daemonset_spec_strategy_rollingupdate_max_surge") == 0  # 50% of 0
    assert not _samples(reg, "kruise_daemonset_status_condition")


def test_the_manager_exports_the_daemonsets_of_its_sources() -> None:
    """StateSources carries a DaemonSet provider next to the CloneSets' (the manager points it at
    the DaemonSet informer); the frozen snapshot serves the scrape."""
    sources = StateSources(daemonsets=lambda: [fluentd({"partition": 1})])
    registry = CollectorRegistry()
    for collector in sources.collectors():
        registry.register(collector)
    sources.freeze()
    sources.daemonsets = lambda: []  # the snapshot, not the live source, is read
    try:
        assert value(registry, "kruise_daemonset_status_number_ready") == 8
    finally:
        sources.thaw()
    assert value(registry, "kruise_daemonset_status_number_ready") is None
