"""Advanced StatefulSet metrics: kruise-state-metrics' gauges at scrape time, the counters' lifetime."""

from __future__ import annotations

from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry

from kruise.core.metrics import STATEFULSET_PODS_RECREATED, forget_statefulset
from kruise.workloads.statefulset.metrics import StatefulSetStateCollector

JSON = dict[str, Any]


def db(*, replicas: int | None = 5, **spec: Any) -> JSON:
    body: JSON = {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%"}}}
    if replicas is not None:
        body["replicas"] = replicas
    body.update(spec)
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {
            "namespace": "shop",
            "name": "db",
            "generation": 7,
            "creationTimestamp": "2024-05-01T12:00:00Z",
        },
        "spec": body,
        "status": {
            "replicas": 5,
            "readyReplicas": 4,
            "availableReplicas": 3,
            "currentReplicas": 2,
            "updatedReplicas": 3,
            "observedGeneration": 6,
            "currentRevision": "db-old",
            "updateRevision": "db-new",
            "conditions": [{"type": "FailedCreatePod", "status": "True"}],
        },
    }


def scrape(*statefulsets: JSON) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(StatefulSetStateCollector(lambda: list(statefulsets)))
    return registry


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, {"namespace": "shop", "statefulset": "db", **labels})


def samples(registry: CollectorRegistry, name: str) -> list[dict[str, str]]:
    return [s.labels for m in registry.collect() if m.name == name for s in m.samples]


def test_status_and_spec_numbers_are_kruise_state_metrics() -> None:
    reg = scrape(db())
    expected = {
        "kruise_statefulset_created": 1714564800.0,
        "kruise_statefulset_metadata_generation": 7,
        "kruise_statefulset_spec_replicas": 5,
        "kruise_statefulset_replicas": 5,
        "kruise_statefulset_status_replicas": 5,
        "kruise_statefulset_status_replicas_ready": 4,
        "kruise_statefulset_status_replicas_available": 3,
        "kruise_statefulset_status_replicas_current": 2,
        "kruise_statefulset_status_replicas_updated": 3,
        "kruise_statefulset_status_observed_generation": 6,
        "kruise_statefulset_spec_strategy_rollingupdate_max_unavailable": 2,  # 50% of 5, down
        "kruise_statefulset_labels": 1,
        "kruise_statefulset_annotations": 1,
    }
    assert {name: value(reg, name) for name in expected} == expected
    assert value(reg, "kruise_statefulset_status_current_revision", revision="db-old") == 1
    assert value(reg, "kruise_statefulset_status_update_revision", revision="db-new") == 1
    types = {
        t: value(reg, "kruise_statefulset_spec_strategy_type", strategy_type=t)
        for t in ("RollingUpdate", "OnDelete")
    }
    assert types == {"RollingUpdate": 1, "OnDelete": 0}
    conditions = {
        s: value(reg, "kruise_statefulset_status_condition", condition="FailedCreatePod", status=s)
        for s in ("true", "false", "unknown")
    }
    assert conditions == {"true": 1, "false": 0, "unknown": 0}


def test_reserved_ordinals_are_one_series_each() -> None:
    reg = scrape(db(reserveOrdinals=[1, "3-4"]))
    series = {
        labels["ordinal"]: value(reg, "kruise_statefulset_spec_reserveordinals", ordinal=labels["ordinal"])
        for labels in samples(reg, "kruise_statefulset_spec_reserveordinals")
    }
    assert series == {"1": 1, "3": 3, "4": 4}


def test_absent_fields_leave_their_series_out() -> None:
    """No spec.replicas: spec_replicas reads the default 1, ``_replicas`` is left out; no
    maxUnavailable (upstream's store panics) or a malformed one: no series."""
    reg = scrape(db(replicas=None, updateStrategy={"type": "OnDelete"}))
    assert value(reg, "kruise_statefulset_spec_replicas") == 1
    assert value(reg, "kruise_statefulset_replicas") is None
    assert value(reg, "kruise_statefulset_spec_strategy_rollingupdate_max_unavailable") is None
    assert value(reg, "kruise_statefulset_spec_strategy_type", strategy_type="OnDelete") == 1
    bad = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "lots"}}
    reg = scrape(db(updateStrategy=bad))
    assert value(reg, "kruise_statefulset_spec_strategy_rollingupdate_max_unavailable") is None
    assert value(reg, "kruise_statefulset_status_replicas") == 5


def test_a_failing_source_scrapes_as_no_statefulsets() -> None:
    def broken() -> list[JSON]:
        raise RuntimeError("cache gone")

    registry = CollectorRegistry()
    registry.register(StatefulSetStateCollector(broken))
    families = {m.name: m.samples for m in registry.collect()}
    assert "kruise_statefulset_status_replicas" in families
    assert all(s == [] for s in families.values())


def test_a_deleted_statefulsets_counters_are_dropped() -> None:
    labels = {"namespace": "shop", "statefulset": "gone"}
    sample = "kruise_statefulset_pods_recreated_total"
    STATEFULSET_PODS_RECREATED.labels("shop", "gone").inc()
    assert REGISTRY.get_sample_value(sample, labels) == 1
    forget_statefulset("shop", "gone")
    assert REGISTRY.get_sample_value(sample, labels) is None
    forget_statefulset("shop", "gone")  # twice is harmless
