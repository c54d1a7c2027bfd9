"""BroadcastJob state gauges: kruise-state-metrics' BroadcastJob store, at scrape time.

:class:`BroadcastJobStateCollector` exports the families of openkruise/kruise-state-metrics
(``internal/store/broadcastjob.go``) with its names, help texts and labels (``namespace``,
``broadcastjob``), read from the BroadcastJob cache, on the shared skeleton of
:mod:`kruise.workloads.statemetrics` (created, generation, conditions, labels):

- ``kruise_broadcastjob_status_{active,succeeded,failed,desired}``, absent fields reading 0;
- ``..._spec_parallelism``: an integer ``parallelism`` as written (a percentage reads 0, as
  upstream's ``IntVal``; absent reads 0);
- ``..._spec_strategy_activedeadline_seconds``: only when ``completionPolicy.activeDeadlineSeconds``
  is set (upstream's store dereferences it unchecked);
- ``..._spec_strategy_ttl_seconds``: ``completionPolicy.ttlSecondsAfterFinished``, 0 when unset.

As the other workloads' stores here, ``..._spec_strategy_type{strategy_type}`` is 1 for the
completion policy type in use (Always when unset) and 0 for the other, where upstream's single
sample carries no value; and ``..._annotations`` is exported next to ``..._labels``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from kruise.core.metrics import StateCollector
from kruise.workloads.objects import mapping
from kruise.workloads.statemetrics import Number, WorkloadFamilies, rows
from kruise.workloads.statemetrics import status_number as _status

__all__ = ["BroadcastJobStateCollector"]

COMPLETION_TYPES = ("Always", "Never")


def _completion(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(spec.get("completionPolicy"))


def _parallelism(spec: Mapping[str, Any], _: Mapping[str, Any], __: int) -> float:
    value = spec.get("parallelism")
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else 0.0


def _deadline(spec: Mapping[str, Any], _: Mapping[str, Any], __: int) -> float | None:
    value = _completion(spec).get("activeDeadlineSeconds")
    return None if value is None else float(value)


NUMBERS: tuple[tuple[str, str, Number], ...] = (
    ("kruise_broadcastjob_status_active", "The number of actively running pods.", _status("active")),
    (
        "kruise_broadcastjob_status_succeeded",
        "The number of pods which reached phase Succeeded.",
        _status("succeeded"),
    ),
    (
        "kruise_broadcastjob_status_failed",
        "The number of pods which reached phase Failed.",
        _status("failed"),
    ),
    (
        "kruise_broadcastjob_status_desired",
        "The desired number of pods, this is typically equal to the number of nodes satisfied to run pods.",
        _status("desired"),
    ),
    (
        "kruise_broadcastjob_spec_parallelism",
        "The maximum desired number of pods the job should.",
        _parallelism,
    ),
    (
        "kruise_broadcastjob_spec_strategy_activedeadline_seconds",
        "The duration in seconds relative to the startTime that the job may be active.",
        _deadline,
    ),
    (
        "kruise_broadcastjob_spec_strategy_ttl_seconds",
        "The lifetime of a Job that has finished.",
        lambda spec, _, __: float(_completion(spec).get("ttlSecondsAfterFinished") or 0),
    ),
)


class BroadcastJobStateCollector(StateCollector):
    """kruise-state-metrics' BroadcastJob gauges (read at every scrape)."""

    kind = "BroadcastJobs"

    def families(self, jobs: list[Mapping[str, Any]]) -> list[Metric]:
        common = WorkloadFamilies(
            "broadcastjob",
            NUMBERS,
            "Sequence number representing a specific generation of the desired state.",
        )
        strategy = GaugeMetricFamily(
            "kruise_broadcastjob_spec_strategy_type",
            "The type of completionpolicy.",
            labels=(*common.labels, "strategy_type"),
        )
        for row in rows(jobs):
            common.add(row)
            kind = _completion(row.spec).get("type") or "Always"
            for candidate in COMPLETION_TYPES:
                strategy.add_metric([*row.key, candidate], float(kind == candidate))
        return common.families(strategy)
