"""SidecarSet metrics: kruise-state-metrics' state gauges, and our upgrade counters.

:class:`SidecarSetStateCollector` exports, at scrape time, the SidecarSet families of
openkruise/kruise-state-metrics (``internal/store/sidecarset.go``) with its names, help texts and
labels (``namespace`` (empty: SidecarSets are cluster-scoped) and ``sidecarset``):

- ``kruise_sidecarset_created``, ``..._spec_metadata_generation``;
- ``kruise_sidecarset_status_replicas_matched`` / ``_updated`` / ``_ready`` / ``_updated_ready``
  and ``..._status_observed_generation``;
- ``kruise_sidecarset_spec_strategy_rollingupdate_max_unavailable``: ``maxUnavailable`` scaled
  against ``status.matchedPods``, rounded down (a malformed value leaves the SidecarSet out);
- ``kruise_sidecarset_spec_strategy_partition{partition}`` (only when set) and
  ``kruise_sidecarset_spec_strategy_type{strategy_type}``, value 0 as upstream;
- ``kruise_sidecarset_labels`` / ``_annotations``: 1 (no key is allow-listed into labels).

Upstream also exports the misspelled ``kruise_sidecarset_spec_namespcace`` and per-container
families; they are not exported here.

The controller counts ``kruise_sidecarset_pods_upgraded_total`` (sidecar images written in
place) and ``kruise_sidecarset_pods_reset_total`` (hot-upgrade idle containers reset to the
empty image) per SidecarSet.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from typing import Any

from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from kruise.core.metrics import StateCollector, unix_seconds
from kruise.workloads.objects import mapping

__all__ = ["PODS_RESET", "PODS_UPGRADED", "SidecarSetStateCollector", "forget_sidecarset"]

LABELS = ("namespace", "sidecarset")

PODS_UPGRADED = Counter(
    "kruise_sidecarset_pods_upgraded_total",
    "Pods whose sidecar containers a SidecarSet upgraded in place (pod patch accepted).",
    ["sidecarset"],
)
PODS_RESET = Counter(
    "kruise_sidecarset_pods_reset_total",
    "Pods whose idle hot-upgrade container a SidecarSet reset to the empty image.",
    ["sidecarset"],
)

_STATUS = (
    (
        "kruise_sidecarset_status_replicas_matched",
        "The number of matched replicas per sidecarset.",
        "matchedPods",
    ),
    (
        "kruise_sidecarset_status_replicas_updated",
        "The number of updated replicas per sidecarset.",
        "updatedPods",
    ),
    ("kruise_sidecarset_status_replicas_ready", "The number of ready  replicas per sidecarset.", "readyPods"),
    (
        "kruise_sidecarset_status_observed_generation",
        "The generation observed by the sidecarset controller.",
        "observedGeneration",
    ),
    (
        "kruise_sidecarset_status_replicas_updated_ready",
        "The number of update and ready replicas per sidecarset.",
        "updatedReadyPods",
    ),
)


def forget_sidecarset(name: str) -> None:
    """Drop a deleted SidecarSet's counter series (no-op for one never counted)."""
    for counter in (PODS_UPGRADED, PODS_RESET):
        with contextlib.suppress(KeyError):
            counter.remove(name)


def _max_unavailable(value: Any, matched: int) -> float | None:
    """``intstr.GetValueFromIntOrPercent(maxUnavailable, matchedPods, false)``; nil reads 0."""
    if value is None:
        return 0.0
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    text = str(value)
    if not text.endswith("%") or not text[:-1].isdigit():
        return None
    return float(math.floor(int(text[:-1]) * matched / 100))


class SidecarSetStateCollector(StateCollector):
    """kruise-state-metrics' SidecarSet gauges over ``sidecarsets()`` (read at every scrape)."""

    kind = "SidecarSets"

    def families(self, sidecarsets: list[Mapping[str, Any]]) -> list[Metric]:
        def family(name: str, help_text: str, *extra: str) -> GaugeMetricFamily:
            return GaugeMetricFamily(name, help_text, labels=(*LABELS, *extra))

        created = family("kruise_sidecarset_created", "Unix creation timestamp")
        generation = family(
            "kruise_sidecarset_spec_metadata_generation",
            "Sequence number representing a specific generation of the desired state.",
        )
        statuses = [(family(n, h), field) for n, h, field in _STATUS]
        unavailable = family(
            "kruise_sidecarset_spec_strategy_rollingupdate_max_unavailable",
            "Maximum number of unavailable replicas during a rolling update of a sidecarset.",
        )
        partition = family(
            "kruise_sidecarset_spec_strategy_partition",
            "Desired number or percent of Pods in old revisions.",
            "partition",
        )
        strategy = family(
            "kruise_sidecarset_spec_strategy_type", "The type of updateStrategy.", "strategy_type"
        )
        infos = [
            family("kruise_sidecarset_labels", "Kruise labels converted to Prometheus labels."),
            family("kruise_sidecarset_annotations", "Kruise annotations converted to Prometheus labels."),
        ]
        for obj in sidecarsets:
            meta, spec, status = (mapping(obj.get(k)) for k in ("metadata", "spec", "status"))
            key = ["", str(meta.get("name") or "")]
            born = unix_seconds(meta.get("creationTimestamp"))
            if born is not None:
                created.add_metric(key, born)
            generation.add_metric(key, float(meta.get("generation") or 0))
            for gauge, field in statuses:
                gauge.add_metric(key, float(status.get(field) or 0))
            update = mapping(spec.get("updateStrategy"))
            value = _max_unavailable(update.get("maxUnavailable"), int(status.get("matchedPods") or 0))
            if value is not None:
                unavailable.add_metric(key, value)
            if update.get("partition") is not None:
                partition.add_metric([*key, str(update["partition"])], 0.0)
            strategy.add_metric([*key, str(update.get("type") or "")], 0.0)
            for info in infos:
                info.add_metric(key, 1.0)
        return [created, generation, *(g for g, _ in statuses), unavailable, partition, strategy, *infos]
