"""Advanced DaemonSet state gauges: kruise-state-metrics' DaemonSet store, at scrape time.

:class:`DaemonSetStateCollector` exports the families of openkruise/kruise-state-metrics
(``internal/store/daemonset.go``) with its names, help texts and labels (``namespace``,
``daemonset``), read from the DaemonSet cache, on the shared skeleton of
:mod:`kruise.workloads.statemetrics` (created, generation, conditions, labels):

- one gauge per status counter (``kruise_daemonset_status_desired_number_scheduled``,
  ``..._current_number_scheduled``, ``..._number_misscheduled``, ``..._number_ready``,
  ``..._number_available``, ``..._number_unavailable``, ``..._updated_number_scheduled``,
  ``..._observed_generation``), absent fields reading 0;
- ``..._spec_strategy_rollingupdate_max_surge``: ``rollingUpdate.maxSurge`` scaled against
  ``status.desiredNumberScheduled`` and rounded up with the deprecated
  ``GetValueFromIntOrPercent``, as upstream (absent counts as 0, where upstream's store panics;
  a malformed value leaves the DaemonSet out of the family);
- ``..._spec_strategy_partition{partition}``: value 0, the partition as written, only when set.

Deliberate differences, as the other workloads' stores here: ``..._spec_strategy_type
{strategy_type}`` is 1 for the type in use and 0 for the other (upstream's single sample carries
no value, so it reads 0); ``..._annotations`` is exported next to ``..._labels``. Ours, the
CloneSet's counterparts for a stalled node rollout: ``..._spec_strategy_rollingupdate_max_unavailable``
(scaled like maxSurge, rounded up as the DaemonSet controller does) and
``..._spec_strategy_paused`` (1 while ``rollingUpdate.paused``). The update counters are in
:mod:`kruise.core.metrics`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from kruise.core.metrics import StateCollector
from kruise.workloads.intorpercent import IntOrPercentError, legacy_scaled_value
from kruise.workloads.objects import mapping
from kruise.workloads.statemetrics import Number, WorkloadFamilies, rows
from kruise.workloads.statemetrics import status_number as _status

STRATEGY_TYPES = ("RollingUpdate", "OnDelete")


def _rolling(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(mapping(spec.get("updateStrategy")).get("rollingUpdate"))


def _scaled_to_desired(field: str) -> Number:
    def number(spec: Mapping[str, Any], status: Mapping[str, Any], _: int) -> float | None:
        value = _rolling(spec).get(field)
        desired = int(status.get("desiredNumberScheduled") or 0)
        try:
            return float(legacy_scaled_value(0 if value is None else value, desired, round_up=True))
        except IntOrPercentError:
            return None  # the webhook refuses these; a stray one is left out, not a failed scrape

    return number


NUMBERS: tuple[tuple[str, str, Number], ...] = (
    (
        "kruise_daemonset_spec_strategy_rollingupdate_max_surge",
        "Maximum number of replicas that can be scheduled above the desired number of replicas "
        "during a rolling update of a daemonset.",
        _scaled_to_desired("maxSurge"),
    ),
    (
        "kruise_daemonset_status_current_number_scheduled",
        "The number of nodes running at least one daemon pod and are supposed to.",
        _status("currentNumberScheduled"),
    ),
    (
        "kruise_daemonset_status_desired_number_scheduled",
        "The number of nodes that should be running the daemon pod.",
        _status("desiredNumberScheduled"),
    ),
    (
        "kruise_daemonset_status_number_available",
        "The number of nodes that should be running the daemon pod and have one or more of the "
        "daemon pod running and available",
        _status("numberAvailable"),
    ),
    (
        "kruise_daemonset_status_number_misscheduled",
        "The number of nodes running a daemon pod but are not supposed to.",
        _status("numberMisscheduled"),
    ),
    (
        "kruise_daemonset_status_number_ready",
        "The number of nodes that should be running the daemon pod and have one or more of the "
        "daemon pod running and ready.",
        _status("numberReady"),
    ),
    (
        "kruise_daemonset_status_number_unavailable",
        "The number of nodes that should be running the daemon pod and have none of the daemon pod "
        "running and available",
        _status("numberUnavailable"),
    ),
    (
        "kruise_daemonset_status_observed_generation",
        "The most recent generation observed by the daemon set controller.",
        _status("observedGeneration"),
    ),
    (
        "kruise_daemonset_status_updated_number_scheduled",
        "The total number of nodes that are running updated daemon pod",
        _status("updatedNumberScheduled"),
    ),
    (
        "kruise_daemonset_spec_strategy_rollingupdate_max_unavailable",
        "Maximum number of daemon pods that can be unavailable during a rolling update of a daemonset.",
        _scaled_to_desired("maxUnavailable"),
    ),
    (
        "kruise_daemonset_spec_strategy_paused",
        "Whether the rolling update of a daemonset is paused (rollingUpdate.paused), 1 or 0.",
        lambda spec, _, __: float(bool(_rolling(spec).get("paused"))),
    ),
)


class DaemonSetStateCollector(StateCollector):
    """kruise-state-metrics' DaemonSet gauges over the Advanced DaemonSets (read at every scrape)."""

    kind = "DaemonSets"

    def families(self, daemonsets: list[Mapping[str, Any]]) -> list[Metric]:
        common = WorkloadFamilies(
            "daemonset", NUMBERS, "Sequence number representing a specific generation of the desired state."
        )
        partition = GaugeMetricFamily(
            "kruise_daemonset_spec_strategy_partition",
            "Desired number or percent of Pods in old revisions.",
            labels=(*common.labels, "partition"),
        )
        strategy = GaugeMetricFamily(
            "kruise_daemonset_spec_strategy_type",
            "The type of updateStrategy.",
            labels=(*common.labels, "strategy_type"),
        )
        for row in rows(daemonsets):
            common.add(row)
            rolling = _rolling(row.spec)
            if rolling.get("partition") is not None:
                partition.add_metric([*row.key, str(rolling["partition"])], 0.0)
            kind = mapping(row.spec.get("updateStrategy")).get("type") or "RollingUpdate"
            for candidate in STRATEGY_TYPES:
                strategy.add_metric([*row.key, candidate], float(kind == candidate))
        return common.families(partition, strategy)
