"""The gauge families every kruise-state-metrics workload store shares.

openkruise/kruise-state-metrics gives each workload kind (``internal/store/cloneset.go``,
``statefulset.go``, ...) the same skeleton, named ``kruise_<kind>_*`` with the labels
``namespace`` and ``<kind>``:

- ``..._created`` (creation time, Unix seconds; left out when unparsable) and
  ``..._metadata_generation``;
- one family per kind-specific number, a :data:`Number` of ``(spec, status, spec.replicas)``
  (``spec.replicas`` defaults to 1); ``None`` leaves the object out of that family;
- ``..._status_condition{condition,status}``: three series per condition (``true``,
  ``false``, ``unknown``), 1 for the condition's status;
- ``..._labels`` / ``..._annotations``: 1 per object (nothing is allow-listed here).

:class:`WorkloadFamilies` builds them; a kind's collector adds its own families between the
conditions and the label infos.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from kruise.core.metrics import object_key, unix_seconds
from kruise.workloads.objects import mapping, sequence

__all__ = ["CONDITION_STATUSES", "Number", "Row", "WorkloadFamilies", "rows", "status_number"]

CONDITION_STATUSES = ("True", "False", "Unknown")

Number = Callable[[Mapping[str, Any], Mapping[str, Any], int], float | None]
"""(spec, status, spec.replicas) -> value; None leaves the object out of the family."""


def status_number(field: str) -> Number:
    """``status.<field>`` as a number (absent reads 0)."""
    return lambda _, status, __: float(status.get(field) or 0)


@dataclass(frozen=True)
class Row:
    """One workload object as the families read it."""

    obj: Mapping[str, Any]
    key: list[str]
    """``[namespace, name]``, the label values every family starts with."""
    meta: Mapping[str, Any]
    spec: Mapping[str, Any]
    status: Mapping[str, Any]
    replicas: int
    """``spec.replicas``, 1 when absent (the API default)."""


def rows(objects: Sequence[Mapping[str, Any]]) -> Iterator[Row]:
    """The objects as :class:`Row` s."""
    for obj in objects:
        spec = mapping(obj.get("spec"))
        replicas = int(spec["replicas"]) if spec.get("replicas") is not None else 1
        meta, status = mapping(obj.get("metadata")), mapping(obj.get("status"))
        yield Row(obj, list(object_key(obj)), meta, spec, status, replicas)


class WorkloadFamilies:
    """The shared families of one kind (``kind`` is the lower-case label name, e.g. ``cloneset``).

    ``numbers`` are ``(metric name, help, Number)``; ``generation_help`` is the kind's help text
    of ``..._metadata_generation`` (upstream's differ per kind).
    """

    def __init__(self, kind: str, numbers: Sequence[tuple[str, str, Number]], generation_help: str) -> None:
        self.labels = ("namespace", kind)
        self.created = GaugeMetricFamily(
            f"kruise_{kind}_created", "Unix creation timestamp", labels=self.labels
        )
        self.generation = GaugeMetricFamily(
            f"kruise_{kind}_metadata_generation", generation_help, labels=self.labels
        )
        self.numbers = [(GaugeMetricFamily(n, h, labels=self.labels), f) for n, h, f in numbers]
        self.condition = GaugeMetricFamily(
            f"kruise_{kind}_status_condition",
            f"The current status conditions of a {kind}.",
            labels=(*self.labels, "condition", "status"),
        )
        self.infos = [
            GaugeMetricFamily(
                f"kruise_{kind}_{what}", f"Kruise {what} converted to Prometheus labels.", labels=self.labels
            )
            for what in ("labels", "annotations")
        ]

    def add(self, row: Row) -> None:
        """Add ``row``'s samples to every shared family."""
        born = unix_seconds(row.meta.get("creationTimestamp"))
        if born is not None:
            self.created.add_metric(row.key, born)
        self.generation.add_metric(row.key, float(row.meta.get("generation") or 0))
        for family, number in self.numbers:
            value = number(row.spec, row.status, row.replicas)
            if value is not None:
                family.add_metric(row.key, value)
        for cond in sequence(row.status.get("conditions")):
            kind = str(mapping(cond).get("type"))
            for candidate in CONDITION_STATUSES:
                hit = mapping(cond).get("status") == candidate
                self.condition.add_metric([*row.key, kind, candidate.lower()], float(hit))
        for info in self.infos:
            info.add_metric(row.key, 1.0)

    def families(self, *own: Metric) -> list[Metric]:
        """The shared families with the kind's ``own`` between the conditions and the infos."""
        return [
            self.created,
            self.generation,
            *(f for f, _ in self.numbers),
            self.condition,
            *own,
            *self.infos,
        ]
