"""Advanced StatefulSet state gauges: kruise-state-metrics' ``statefulsets`` store, at scrape time.

:class:`StatefulSetStateCollector` exports the families of openkruise/kruise-state-metrics
(``internal/store/statefulset.go``) with its names, help texts and labels (``namespace``,
``statefulset``), read from the ``apps.kruise.io`` StatefulSet cache:

- status numbers (``kruise_statefulset_status_replicas``, ``..._available``, ``..._current``,
  ``..._ready``, ``..._updated``, ``..._observed_generation``), ``kruise_statefulset_created``,
  ``..._metadata_generation``, ``..._spec_replicas`` (default 1) and ``..._replicas`` (only
  when ``spec.replicas`` is written);
- ``..._spec_strategy_rollingupdate_max_unavailable``: ``maxUnavailable`` scaled against
  ``spec.replicas`` rounded down with the deprecated ``GetValueFromIntOrPercent``, as upstream
  (left out when there is no ``maxUnavailable``: upstream's store panics there);
- ``..._status_current_revision{revision}`` / ``..._status_update_revision{revision}``: 1;
- ``..._status_condition{condition,status}``: three series per condition, 1 for its status;
- ``..._labels`` / ``..._annotations``: 1 (nothing allow-listed).

Two deliberate differences: ``..._spec_strategy_type{strategy_type}`` is 1 for the type in use
(upstream's sample carries no value, so it reads 0), and
``..._spec_reserveordinals{ordinal}`` is one series per reserved ordinal (ranges expanded) with
the ordinal as label and value (upstream's series all have the same labels, which Prometheus
rejects as duplicates). Our update counters are in :mod:`kruise.core.metrics`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from kruise.core.metrics import StateCollector
from kruise.workloads.admission.intstr import IntOrStringError, get_value
from kruise.workloads.objects import mapping
from kruise.workloads.statefulset.identity import reserved_ordinals
from kruise.workloads.statemetrics import Number, WorkloadFamilies, rows
from kruise.workloads.statemetrics import status_number as _status

STRATEGY_TYPES = ("RollingUpdate", "OnDelete")


def _max_unavailable(spec: Mapping[str, Any], _: Mapping[str, Any], replicas: int) -> float | None:
    value = mapping(mapping(spec.get("updateStrategy")).get("rollingUpdate")).get("maxUnavailable")
    try:
        return float(get_value(value, replicas, False))
    except IntOrStringError:
        return None  # absent (upstream panics) or malformed (the webhook refuses it)


NUMBERS: tuple[tuple[str, str, Number], ...] = (
    ("kruise_statefulset_status_replicas", "The number of replicas per statefulset.", _status("replicas")),
    (
        "kruise_statefulset_status_replicas_available",
        "The number of available replicas per statefulset.",
        _status("availableReplicas"),
    ),
    (
        "kruise_statefulset_status_replicas_current",
        "The number of current replicas per statefulset.",
        _status("currentReplicas"),
    ),
    (
        "kruise_statefulset_status_replicas_ready",
        "The number of ready replicas per statefulset.",
        _status("readyReplicas"),
    ),
    (
        "kruise_statefulset_status_replicas_updated",
        "The number of updated replicas per statefulset.",
        _status("updatedReplicas"),
    ),
    (
        "kruise_statefulset_status_observed_generation",
        "The generation observed by the statefulset controller.",
        _status("observedGeneration"),
    ),
    (
        "kruise_statefulset_replicas",
        "Number of desired pods for a statefulset.",
        lambda spec, _, replicas: None if spec.get("replicas") is None else float(replicas),
    ),
    (
        "kruise_statefulset_spec_replicas",
        "Number of desired pods for a statefulset.",
        lambda _, __, replicas: float(replicas),
    ),
    (
        "kruise_statefulset_spec_strategy_rollingupdate_max_unavailable",
        "Maximum number of unavailable replicas during a rolling update of a statefulset.",
        _max_unavailable,
    ),
)


class StatefulSetStateCollector(StateCollector):
    """kruise-state-metrics' StatefulSet gauges over the Advanced StatefulSets (read at every scrape)."""

    kind = "StatefulSets"

    def families(self, statefulsets: list[Mapping[str, Any]]) -> list[Metric]:
        common = WorkloadFamilies(
            "statefulset",
            NUMBERS,
            "Sequence number representing a specific generation of the desired state for the statefulset.",
        )
        reserved = GaugeMetricFamily(
            "kruise_statefulset_spec_reserveordinals",
            "Maximum number of replicas that can be scheduled above the desired number of replicas "
            "during a rolling update of a statefulset.",  # sic, upstream's help text
            labels=(*common.labels, "ordinal"),
        )
        revisions = [
            GaugeMetricFamily(
                "kruise_statefulset_status_current_revision",
                "Indicates the version of the statefulset used to generate Pods in the sequence "
                "[0,currentReplicas).",
                labels=(*common.labels, "revision"),
            ),
            GaugeMetricFamily(
                "kruise_statefulset_status_update_revision",
                "Indicates the version of the statefulset used to generate Pods in the sequence "
                "[replicas-updatedReplicas,replicas)",
                labels=(*common.labels, "revision"),
            ),
        ]
        strategy = GaugeMetricFamily(
            "kruise_statefulset_spec_strategy_type",
            "The type of updateStrategy.",
            labels=(*common.labels, "strategy_type"),
        )
        for row in rows(statefulsets):
            common.add(row)
            for ordinal in sorted(reserved_ordinals(row.obj)):
                reserved.add_metric([*row.key, str(ordinal)], float(ordinal))
            for family, field in zip(revisions, ("currentRevision", "updateRevision"), strict=True):
                family.add_metric([*row.key, str(row.status.get(field) or "")], 1.0)
            kind = mapping(row.spec.get("updateStrategy")).get("type") or "RollingUpdate"
            for candidate in STRATEGY_TYPES:
                strategy.add_metric([*row.key, candidate], float(kind == candidate))
        return common.families(reserved, *revisions, strategy)
