"""Advanced DaemonSet state gauges: kruise-state-metrics' DaemonSet families, at scrape time.

:class:`DaemonSetStateCollector` exports the families of openkruise/kruise-state-metrics
(``internal/store/daemonset.go``) with its names, help texts and labels (``namespace``,
``daemonset``), computed from the manager's cache:

- ``kruise_daemonset_created`` (Unix seconds), ``kruise_daemonset_metadata_generation``;
- one gauge per status counter (``kruise_daemonset_status_desired_number_scheduled``,
  ``..._current_number_scheduled``, ``..._number_misscheduled``, ``..._number_ready``,
  ``..._number_available``, ``..._number_unavailable``, ``..._updated_number_scheduled``,
  ``..._observed_generation``), absent fields reading 0;
- ``kruise_daemonset_spec_strategy_rollingupdate_max_surge``: ``maxSurge`` scaled against
  ``status.desiredNumberScheduled`` and rounded up, as upstream (its deprecated scaler: any string
  is a percentage); absent counts as 0 where upstream's scrape would fail on the nil value;
- ``kruise_daemonset_spec_strategy_partition{partition}``: value 0, the partition as written,
  only when set;
- ``kruise_daemonset_spec_strategy_type{strategy_type}``: one series, the type as written
  (``RollingUpdate``, ``OnDelete``). Upstream's generator leaves the value unset, so it reads 0;
  ours reads 1, the value of kube-state-metrics' other info series (queries selecting on the label
  work against both);
- ``kruise_daemonset_status_condition{condition,status}``: three series per condition, 1 for the
  condition's status;
- ``kruise_daemonset_labels``: 1 per DaemonSet (no label keys are allow-listed here).

Ours, the CloneSet's counterparts for dashboards and alerts on a stalled node rollout:
``kruise_daemonset_spec_strategy_rollingupdate_max_unavailable`` (``maxUnavailable`` scaled
against ``desiredNumberScheduled``, rounded up as the DaemonSet controller does; absent: 0) and
``kruise_daemonset_spec_strategy_paused`` (1 while ``rollingUpdate.paused``).

The update counters (``kruise_daemonset_pods_*_total``) and the in-place duration histogram live
in :mod:`kruise.core.metrics`; the controller counts them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from kruise.core.metrics import StateCollector, add_condition_samples, object_key, unix_seconds
from kruise.workloads.intorpercent import IntOrPercentError, legacy_scaled_value
from kruise.workloads.objects import mapping

LABELS = ("namespace", "daemonset")

STATUS_GAUGES: tuple[tuple[str, str, str], ...] = (
    (
        "kruise_daemonset_status_current_number_scheduled",
        "The number of nodes running at least one daemon pod and are supposed to.",
        "currentNumberScheduled",
    ),
    (
        "kruise_daemonset_status_desired_number_scheduled",
        "The number of nodes that should be running the daemon pod.",
        "desiredNumberScheduled",
    ),
    (
        "kruise_daemonset_status_number_available",
        "The number of nodes that should be running the daemon pod and have one or more of the "
        "daemon pod running and available",
        "numberAvailable",
    ),
    (
        "kruise_daemonset_status_number_misscheduled",
        "The number of nodes running a daemon pod but are not supposed to.",
        "numberMisscheduled",
    ),
    (
        "kruise_daemonset_status_number_ready",
        "The number of nodes that should be running the daemon pod and have one or more of the "
        "daemon pod running and ready.",
        "numberReady",
    ),
    (
        "kruise_daemonset_status_number_unavailable",
        "The number of nodes that should be running the daemon pod and have none of the daemon pod "
        "running and available",
        "numberUnavailable",
    ),
    (
        "kruise_daemonset_status_observed_generation",
        "The most recent generation observed by the daemon set controller.",
        "observedGeneration",
    ),
    (
        "kruise_daemonset_status_updated_number_scheduled",
        "The total number of nodes that are running updated daemon pod",
        "updatedNumberScheduled",
    ),
)


def _scaled(value: Any, desired: int) -> float | None:
    try:
        return float(legacy_scaled_value(0 if value is None else value, desired, round_up=True))
    except IntOrPercentError:
        return None  # the webhook rejects these; a stray one is left out, not a failed scrape


def _gauge(name: str, help_text: str, *extra: str) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, help_text, labels=(*LABELS, *extra))


class _Families:
    """The DaemonSet families of one scrape, filled one DaemonSet at a time by :meth:`add`."""

    def __init__(self) -> None:
        self.created = _gauge("kruise_daemonset_created", "Unix creation timestamp")
        self.generation = _gauge(
            "kruise_daemonset_metadata_generation",
            "Sequence number representing a specific generation of the desired state.",
        )
        self.statuses = [(_gauge(name, help_text), field) for name, help_text, field in STATUS_GAUGES]
        self.surge = _gauge(
            "kruise_daemonset_spec_strategy_rollingupdate_max_surge",
            "Maximum number of replicas that can be scheduled above the desired number of replicas "
            "during a rolling update of a daemonset.",
        )
        self.unavailable = _gauge(
            "kruise_daemonset_spec_strategy_rollingupdate_max_unavailable",
            "Maximum number of daemon pods that can be unavailable during a rolling update of a daemonset.",
        )
        self.partition = _gauge(
            "kruise_daemonset_spec_strategy_partition",
            "Desired number or percent of Pods in old revisions.",
            "partition",
        )
        self.strategy = _gauge(
            "kruise_daemonset_spec_strategy_type", "The type of updateStrategy.", "strategy_type"
        )
        self.paused = _gauge(
            "kruise_daemonset_spec_strategy_paused",
            "Whether the rolling update of a daemonset is paused (rollingUpdate.paused), 1 or 0.",
        )
        self.condition = _gauge(
            "kruise_daemonset_status_condition",
            "The current status conditions of a daemonset.",
            "condition",
            "status",
        )
        self.labels = _gauge("kruise_daemonset_labels", "Kruise labels converted to Prometheus labels.")

    def add(self, ds: Mapping[str, Any]) -> None:
        key = list(object_key(ds))
        meta, status = mapping(ds.get("metadata")), mapping(ds.get("status"))
        born = unix_seconds(meta.get("creationTimestamp"))
        if born is not None:
            self.created.add_metric(key, born)
        self.generation.add_metric(key, float(meta.get("generation") or 0))
        for family, field in self.statuses:
            family.add_metric(key, float(status.get(field) or 0))
        strategy = mapping(mapping(ds.get("spec")).get("updateStrategy"))
        rolling = mapping(strategy.get("rollingUpdate"))
        desired = int(status.get("desiredNumberScheduled") or 0)
        for family, field in ((self.surge, "maxSurge"), (self.unavailable, "maxUnavailable")):
            value = _scaled(rolling.get(field), desired)
            if value is not None:
                family.add_metric(key, value)
        if rolling.get("partition") is not None:
            self.partition.add_metric([*key, str(rolling["partition"])], 0.0)
        self.strategy.add_metric([*key, str(strategy.get("type") or "")], 1.0)
        self.paused.add_metric(key, float(bool(rolling.get("paused"))))
        add_condition_samples(self.condition, key, status.get("conditions"))
        self.labels.add_metric(key, 1.0)

    def all(self) -> list[Metric]:
        return [
            self.created,
            self.generation,
            self.condition,
            self.surge,
            self.unavailable,
            self.partition,
            self.strategy,
            self.paused,
            *(family for family, _ in self.statuses),
            self.labels,
        ]


class DaemonSetStateCollector(StateCollector):
    """kruise-state-metrics' DaemonSet gauges over ``daemonsets()`` (read at every scrape)."""

    kind = "DaemonSets"

    def families(self, daemonsets: list[Mapping[str, Any]]) -> list[Metric]:
        families = _Families()
        for ds in daemonsets:
            families.add(ds)
        return families.all()
