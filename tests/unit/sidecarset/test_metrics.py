"""SidecarSet state gauges (kruise-state-metrics' names and labels)."""

from __future__ import annotations

from kruise.workloads.sidecarset.metrics import SidecarSetStateCollector
from tests.unit.sidecarset.builders import sidecarset


def samples() -> dict[tuple[str, tuple[str, ...]], float]:
    obj = sidecarset(updateStrategy={"partition": "20%", "maxUnavailable": "50%"})
    obj["metadata"]["creationTimestamp"] = "2025-01-01T00:00:00Z"
    obj["status"] = {
        "matchedPods": 5,
        "updatedPods": 3,
        "readyPods": 4,
        "updatedReadyPods": 2,
        "observedGeneration": 1,
    }
    out = {}
    for family in SidecarSetStateCollector(lambda: [obj]).collect():
        for sample in family.samples:
            out[(sample.name, tuple(sample.labels.values()))] = sample.value
    return out


def test_status_counters_and_strategy() -> None:
    got = samples()
    key = ("", "log")
    assert got[("kruise_sidecarset_status_replicas_matched", key)] == 5
    assert got[("kruise_sidecarset_status_replicas_updated", key)] == 3
    assert got[("kruise_sidecarset_status_replicas_ready", key)] == 4
    assert got[("kruise_sidecarset_status_replicas_updated_ready", key)] == 2
    assert got[("kruise_sidecarset_spec_strategy_rollingupdate_max_unavailable", key)] == 2  # 50% of 5, down
    assert got[("kruise_sidecarset_spec_strategy_partition", (*key, "20%"))] == 0
    assert got[("kruise_sidecarset_spec_strategy_type", (*key, "RollingUpdate"))] == 0
    assert got[("kruise_sidecarset_created", key)] == 1735689600


def test_no_sidecarsets_no_samples() -> None:
    assert all(not f.samples for f in SidecarSetStateCollector(lambda: []).collect())
