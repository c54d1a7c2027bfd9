"""BroadcastJob metrics: kruise-state-metrics' BroadcastJob gauges at scrape time."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from kruise.rollouts.manager.metrics import StateSources
from kruise.workloads.broadcastjob.metrics import BroadcastJobStateCollector

JSON = dict[str, Any]


def bcj(completion: JSON, parallelism: int | str | None = 3) -> JSON:
    spec: JSON = {"completionPolicy": completion}
    if parallelism is not None:
        spec["parallelism"] = parallelism
    return {
        "metadata": {
            "namespace": "ops",
            "name": "pull",
            "generation": 2,
            "creationTimestamp": "2024-05-01T12:00:00Z",
        },
        "spec": spec,
        "status": {
            "desired": 5,
            "active": 2,
            "succeeded": 2,
            "failed": 1,
            "phase": "failed",
            "conditions": [{"type": "Failed", "status": "True"}],
        },
    }


def scrape(*jobs: JSON) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(BroadcastJobStateCollector(lambda: list(jobs)))
    return registry


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, {"namespace": "ops", "broadcastjob": "pull", **labels})


def test_status_and_spec_numbers_are_kruise_state_metrics() -> None:
    reg = scrape(bcj({"type": "Always", "activeDeadlineSeconds": 60, "ttlSecondsAfterFinished": 30}))
    expected = {
        "kruise_broadcastjob_created": 1714564800.0,
        "kruise_broadcastjob_metadata_generation": 2,
        "kruise_broadcastjob_status_desired": 5,
        "kruise_broadcastjob_status_active": 2,
        "kruise_broadcastjob_status_succeeded": 2,
        "kruise_broadcastjob_status_failed": 1,
        "kruise_broadcastjob_spec_parallelism": 3,
        "kruise_broadcastjob_spec_strategy_activedeadline_seconds": 60,
        "kruise_broadcastjob_spec_strategy_ttl_seconds": 30,
        "kruise_broadcastjob_labels": 1,
    }
    assert {name: value(reg, name) for name in expected} == expected
    assert value(reg, "kruise_broadcastjob_spec_strategy_type", strategy_type="Always") == 1
    assert value(reg, "kruise_broadcastjob_spec_strategy_type", strategy_type="Never") == 0
    assert value(reg, "kruise_broadcastjob_status_condition", condition="Failed", status="true") == 1
    assert value(reg, "kruise_broadcastjob_status_condition", condition="Failed", status="false") == 0


def test_unset_fields_read_as_upstreams() -> None:
    reg = scrape(bcj({"type": "Never"}, parallelism="50%"))
    assert value(reg, "kruise_broadcastjob_spec_parallelism") == 0  # a percentage: IntVal is 0
    assert value(reg, "kruise_broadcastjob_spec_strategy_activedeadline_seconds") is None
    assert value(reg, "kruise_broadcastjob_spec_strategy_ttl_seconds") == 0
    assert value(reg, "kruise_broadcastjob_spec_strategy_type", strategy_type="Never") == 1


def test_the_manager_sources_carry_broadcastjobs() -> None:
    sources = StateSources(broadcastjobs=lambda: [bcj({"type": "Always"})])
    collector = next(c for c in sources.collectors() if isinstance(c, BroadcastJobStateCollector))
    names = {m.name for m in collector.collect() if m.samples}
    assert "kruise_broadcastjob_status_desired" in names
    sources.freeze()
    sources.broadcastjobs = lambda: []  # the snapshot, not the live source, is read
    assert any(m.samples for m in collector.collect())
    sources.thaw()
