"""CloneSet metrics: kruise-state-metrics' state gauges, and our update counters.

:class:`CloneSetStateCollector` exports, at scrape time, the CloneSet families of
openkruise/kruise-state-metrics (``internal/store/cloneset.go``) with its names, help texts and
labels (``namespace``, ``cloneset``), so its Grafana dashboards work against ``kruise manager``:

- spec/status numbers (``kruise_cloneset_spec_replicas``, ``..._status_replicas_updated_ready``, ...);
  ``kruise_cloneset_status_replicas_unavailable`` is ``spec.replicas - status.availableReplicas``;
- ``kruise_cloneset_spec_strategy_rollingupdate_max_unavailable`` / ``..._max_surge`` scaled
  against ``spec.replicas`` (rounded down / up; absent counts as 0, as upstream);
- ``kruise_cloneset_spec_strategy_partition{partition}`` (value 0, the partition as written; only
  when set) and ``kruise_cloneset_spec_strategy_type{strategy_type}`` (1 for the type in use);
- ``kruise_cloneset_status_condition{condition,status}``: three series per condition,
  ``status`` ``true``/``false``/``unknown``, 1 for the condition's status;
- ``kruise_cloneset_labels`` / ``kruise_cloneset_annotations``: 1 per CloneSet (upstream turns
  allow-listed keys into labels; nothing is allow-listed here).

Ours, for the partition-stall alert: ``kruise_cloneset_status_expected_updated_replicas``
(``status.expectedUpdatedReplicas`` = replicas - partition) and
``kruise_cloneset_spec_strategy_paused`` (1 while ``spec.updateStrategy.paused``).

The update path calls :func:`count_in_place_update`, :func:`count_recreate` and
:func:`observe_in_place_completed` (counters and histogram in :mod:`kruise.core.metrics`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from kruise.core.metrics import (
    CLONESET_IN_PLACE_UPDATE_DURATION,
    CLONESET_PODS_RECREATED,
    CLONESET_PODS_UPDATED_IN_PLACE,
    StateCollector,
    object_key,
)
from kruise.workloads.cloneset.arith import IntOrPercentError, legacy_scaled_value
from kruise.workloads.inplace.state import in_place_update_seconds
from kruise.workloads.objects import KubeObject, mapping
from kruise.workloads.statemetrics import Number, WorkloadFamilies, rows
from kruise.workloads.statemetrics import status_number as _status

log = logging.getLogger(__name__)

STRATEGY_TYPES = ("ReCreate", "InPlaceIfPossible", "InPlaceOnly")


def _max_unavailable(spec: Mapping[str, Any], _: Mapping[str, Any], replicas: int) -> float | None:
    value = mapping(spec.get("updateStrategy")).get("maxUnavailable")
    return _scaled(0 if value is None else value, replicas, round_up=False)


def _max_surge(spec: Mapping[str, Any], _: Mapping[str, Any], replicas: int) -> float | None:
    value = mapping(spec.get("updateStrategy")).get("maxSurge")
    return _scaled(0 if value is None else value, replicas, round_up=True)


def _scaled(value: Any, replicas: int, *, round_up: bool) -> float | None:
    try:
        return float(legacy_scaled_value(value, replicas, round_up=round_up))
    except IntOrPercentError:
        return None  # the webhook rejects these; a stray one is left out, not a failed scrape


NUMBERS: tuple[tuple[str, str, Number], ...] = (
    ("kruise_cloneset_status_replicas", "The number of replicas per cloneset.", _status("replicas")),
    (
        "kruise_cloneset_status_replicas_available",
        "The number of available replicas per cloneset.",
        _status("availableReplicas"),
    ),
    (
        "kruise_cloneset_status_replicas_unavailable",
        "The number of unavailable replicas per cloneset.",
        lambda _, status, replicas: float(replicas - int(status.get("availableReplicas") or 0)),
    ),
    (
        "kruise_cloneset_status_replicas_updated",
        "The number of updated replicas per cloneset.",
        _status("updatedReplicas"),
    ),
    (
        "kruise_cloneset_status_observed_generation",
        "The generation observed by the cloneset controller.",
        _status("observedGeneration"),
    ),
    (
        "kruise_cloneset_spec_replicas",
        "Number of desired pods for a cloneset.",
        lambda _, __, replicas: float(replicas),
    ),
    (
        "kruise_cloneset_spec_strategy_rollingupdate_max_unavailable",
        "Maximum number of unavailable replicas during a rolling update of a cloneset.",
        _max_unavailable,
    ),
    (
        "kruise_cloneset_spec_strategy_rollingupdate_max_surge",
        "Maximum number of replicas that can be scheduled above the desired number of replicas "
        "during a rolling update of a cloneset.",
        _max_surge,
    ),
    (
        "kruise_cloneset_status_replicas_ready",
        "The number of ready replicas per cloneset.",
        _status("readyReplicas"),
    ),
    (
        "kruise_cloneset_status_replicas_updated_ready",
        "The number of update and ready replicas per cloneset.",
        _status("updatedReadyReplicas"),
    ),
    (
        "kruise_cloneset_status_expected_updated_replicas",
        "The number of pods the update strategy expects at the update revision (replicas - partition).",
        _status("expectedUpdatedReplicas"),
    ),
    (
        "kruise_cloneset_spec_strategy_paused",
        "Whether the update of a cloneset is paused (spec.updateStrategy.paused), 1 or 0.",
        lambda spec, _, __: float(bool(mapping(spec.get("updateStrategy")).get("paused"))),
    ),
)


class CloneSetStateCollector(StateCollector):
    """kruise-state-metrics' CloneSet gauges over ``clonesets()`` (read at every scrape)."""

    kind = "CloneSets"

    def families(self, clonesets: list[Mapping[str, Any]]) -> list[Metric]:
        common = WorkloadFamilies(
            "cloneset", NUMBERS, "Sequence number representing a specific generation of the desired state."
        )
        partition = GaugeMetricFamily(
            "kruise_cloneset_spec_strategy_partition",
            "Desired number or percent of Pods in old revisions.",
            labels=(*common.labels, "partition"),
        )
        strategy = GaugeMetricFamily(
            "kruise_cloneset_spec_strategy_type",
            "The type of updateStrategy.",
            labels=(*common.labels, "strategy_type"),
        )
        for row in rows(clonesets):
            common.add(row)
            update = mapping(row.spec.get("updateStrategy"))
            if update.get("partition") is not None:
                partition.add_metric([*row.key, str(update["partition"])], 0.0)
            for kind in STRATEGY_TYPES:
                strategy.add_metric([*row.key, kind], float(update.get("type") == kind))
        return common.families(partition, strategy)


# ----------------------------------------------------------------- update path
def count_in_place_update(cloneset: KubeObject) -> None:
    """A pod of ``cloneset`` was updated in place (its in-place patch was accepted)."""
    CLONESET_PODS_UPDATED_IN_PLACE.labels(*object_key(cloneset)).inc()


def count_recreate(cloneset: KubeObject) -> None:
    """A pod of ``cloneset`` was marked ``specified-delete`` to be recreated at the new revision."""
    CLONESET_PODS_RECREATED.labels(*object_key(cloneset)).inc()


def observe_in_place_completed(pod: KubeObject, now: datetime) -> None:
    """``pod``'s InPlaceUpdateReady was just set True: observe how long its update took."""
    seconds = in_place_update_seconds(pod, now)
    if seconds is not None:
        CLONESET_IN_PLACE_UPDATE_DURATION.observe(seconds)
