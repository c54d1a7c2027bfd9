"""The manager's own Prometheus metrics, named, labelled and bucketed as upstream exports them.

Dashboards and alerts written for kruise-manager (controller-runtime + client-go) read these
unchanged:

- ``controller_runtime_*`` (reconciles, workers, webhooks): controller-runtime v0.20, the version
  OpenKruise's master builds with. Its work-queue metrics carry ``name`` and ``controller`` (both
  the queue's name); v0.18, which kruise v1.8 used, had ``name`` only, so queries filtering on
  ``name`` work against either.
- ``workqueue_*``: client-go's work queue as controller-runtime registers it (queue and work
  durations in exponential buckets from 10 ns to 1000 s).
- ``rest_client_*``: client-go's REST client metrics as controller-runtime registers them
  (``rest_client_requests_total`` is always on upstream, ``rest_client_request_duration_seconds`` is
  one of its opt-in histograms, on here).
- ``leader_election_master_status{name}``: client-go's leader-election gauge (1 on the replica
  holding the Lease ``name``, 0 on the standbys), as controller-runtime registers it.
- ``kruise_cloneset_*``, ``kruise_statefulset_*`` and ``kruise_daemonset_*`` counters and histograms:
  ours (pods updated in place vs recreated, in-place update durations).

Everything lives in prometheus_client's default registry, which ``kruise manager`` serves on
``--metrics-addr``; no ``*_created`` series are exported (the Go client has none). Per-object
state gauges (kruise-state-metrics' CloneSet families, Argo Rollouts' rollout and analysis-run
families) are collectors that read a cache at scrape time, next to their kinds.

:class:`QueueMetrics` and :class:`RestClientMetrics` pre-bind the label values of one queue or
one API server, so the hot paths (a work-queue add per pod event, one request) only increment.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

import prometheus_client
from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
log = logging.getLogger(__name__)


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Go's ``prometheus.ExponentialBuckets``, multiplied step by step as Go does, so the ``le``
    labels print identically (``9.999999999999999e-06``)."""
    buckets: list[float] = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return tuple(buckets)


RECONCILE_BUCKETS = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    *(1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60),
)
"""controller-runtime's ``controller_runtime_reconcile_time_seconds`` buckets (seconds)."""
WORKQUEUE_BUCKETS = exponential_buckets(10e-9, 10, 12)
"""client-go's work-queue duration buckets: 10 ns .. 1000 s."""
GO_DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
"""``prometheus.DefBuckets`` of the Go client (prometheus_client's defaults differ)."""
REST_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
"""client-go's ``rest_client_request_duration_seconds`` buckets (seconds)."""
IN_PLACE_BUCKETS = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800)
"""Ours: in-place update durations are whole seconds (the state annotation's timestamps)."""

# ----------------------------------------------------------------- controller-runtime: reconciles
RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile_total",
    "Total number of reconciliations per controller",
    ["controller", "result"],
)
RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors_total",
    "Total number of reconciliation errors per controller",
    ["controller"],
)
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconciliation per controller",
    ["controller"],
    buckets=RECONCILE_BUCKETS,
)
MAX_CONCURRENT_RECONCILES = Gauge(
    "controller_runtime_max_concurrent_reconciles",
    "Maximum number of concurrent reconciles per controller",
    ["controller"],
)
ACTIVE_WORKERS = Gauge(
    "controller_runtime_active_workers",
    "Number of currently used workers per controller",
    ["controller"],
)
RESULT_SUCCESS, RESULT_ERROR, RESULT_REQUEUE, RESULT_REQUEUE_AFTER = (
    "success",
    "error",
    "requeue",
    "requeue_after",
)

# ----------------------------------------------------------------- client-go: work queues
_QUEUE_LABELS = ["name", "controller"]
WORKQUEUE_DEPTH = Gauge("workqueue_depth", "Current depth of workqueue", _QUEUE_LABELS)
WORKQUEUE_ADDS = Counter("workqueue_adds_total", "Total number of adds handled by workqueue", _QUEUE_LABELS)
WORKQUEUE_QUEUE_DURATION = Histogram(
    "workqueue_queue_duration_seconds",
    "How long in seconds an item stays in workqueue before being requested",
    _QUEUE_LABELS,
    buckets=WORKQUEUE_BUCKETS,
)
WORKQUEUE_WORK_DURATION = Histogram(
    "workqueue_work_duration_seconds",
    "How long in seconds processing an item from workqueue takes.",
    _QUEUE_LABELS,
    buckets=WORKQUEUE_BUCKETS,
)
WORKQUEUE_UNFINISHED_WORK = Gauge(
    "workqueue_unfinished_work_seconds",
    "How many seconds of work has been done that is in progress and hasn't been observed by "
    "work_duration. Large values indicate stuck threads. One can deduce the number of stuck "
    "threads by observing the rate at which this increases.",
    _QUEUE_LABELS,
)
WORKQUEUE_LONGEST_RUNNING = Gauge(
    "workqueue_longest_running_processor_seconds",
    "How many seconds has the longest running processor for workqueue been running.",
    _QUEUE_LABELS,
)
WORKQUEUE_RETRIES = Counter(
    "workqueue_retries_total", "Total number of retries handled by workqueue", _QUEUE_LABELS
)

# ----------------------------------------------------------------- client-go: REST client
REST_REQUESTS = Counter(
    "rest_client_requests_total",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"],
)
REST_REQUEST_DURATION = Histogram(
    "rest_client_request_duration_seconds",
    "Request latency in seconds. Broken down by verb and host.",
    ["verb", "host"],
    buckets=REST_BUCKETS,
)
REST_ERROR_CODE = "<error>"
"""The ``code`` of a request that got no HTTP answer (client-go's placeholder)."""

# ----------------------------------------------------------------- controller-runtime: webhooks
WEBHOOK_REQUESTS = Counter(
    "controller_runtime_webhook_requests_total",
    "Total number of admission requests by HTTP status code.",
    ["webhook", "code"],
)
WEBHOOK_LATENCY = Histogram(
    "controller_runtime_webhook_latency_seconds",
    "Histogram of the latency of processing admission requests",
    ["webhook"],
    buckets=GO_DEFAULT_BUCKETS,
)
WEBHOOK_IN_FLIGHT = Gauge(
    "controller_runtime_webhook_requests_in_flight",
    "Current number of admission requests being served.",
    ["webhook"],
)

# ----------------------------------------------------------------- controller-runtime: leader election
LEADER_ELECTION_STATUS = Gauge(
    "leader_election_master_status",
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
    "indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    ["name"],
)

# ----------------------------------------------------------------- ours: CloneSet updates
CLONESET_PODS_UPDATED_IN_PLACE = Counter(
    "kruise_cloneset_pods_updated_in_place_total",
    "Pods a CloneSet moved to its update revision by updating them in place.",
    ["namespace", "cloneset"],
)
CLONESET_PODS_RECREATED = Counter(
    "kruise_cloneset_pods_recreated_total",
    "Pods a CloneSet marked for deletion to recreate them at its update revision.",
    ["namespace", "cloneset"],
)
CLONESET_IN_PLACE_UPDATE_DURATION = Histogram(
    "kruise_cloneset_in_place_update_duration_seconds",
    "Seconds from the start of a pod's in-place update to its InPlaceUpdateReady condition turning True.",
    buckets=IN_PLACE_BUCKETS,
)


# ----------------------------------------------------------------- ours: Advanced StatefulSet updates
STATEFULSET_PODS_UPDATED_IN_PLACE = Counter(
    "kruise_statefulset_pods_updated_in_place_total",
    "Pods an Advanced StatefulSet moved to its update revision by updating them in place.",
    ["namespace", "statefulset"],
)
STATEFULSET_PODS_RECREATED = Counter(
    "kruise_statefulset_pods_recreated_total",
    "Pods an Advanced StatefulSet deleted to recreate them at its update revision.",
    ["namespace", "statefulset"],
)
STATEFULSET_IN_PLACE_UPDATE_DURATION = Histogram(
    "kruise_statefulset_in_place_update_duration_seconds",
    "Seconds from the start of a pod's in-place update to its InPlaceUpdateReady condition turning True.",
    buckets=IN_PLACE_BUCKETS,
)


# ----------------------------------------------------------------- ours: Advanced DaemonSet updates
DAEMONSET_PODS_UPDATED_IN_PLACE = Counter(
    "kruise_daemonset_pods_updated_in_place_total",
    "Pods an Advanced DaemonSet moved to its update revision by updating them in place.",
    ["namespace", "daemonset"],
)
DAEMONSET_PODS_RECREATED = Counter(
    "kruise_daemonset_pods_recreated_total",
    "Pods an Advanced DaemonSet deleted to replace them with pods of its update revision.",
    ["namespace", "daemonset"],
)
DAEMONSET_IN_PLACE_UPDATE_DURATION = Histogram(
    "kruise_daemonset_in_place_update_duration_seconds",
    "Seconds from the start of a pod's in-place update to its InPlaceUpdateReady condition turning True.",
    buckets=IN_PLACE_BUCKETS,
)


def forget_daemonset(namespace: str, name: str) -> None:
    """Drop a deleted Advanced DaemonSet's counter series (no-op for one never counted)."""
    for counter in (DAEMONSET_PODS_UPDATED_IN_PLACE, DAEMONSET_PODS_RECREATED):
        with contextlib.suppress(KeyError):
            counter.remove(namespace, name)


def forget_statefulset(namespace: str, name: str) -> None:
    """Drop a deleted Advanced StatefulSet's counter series (no-op for one never counted)."""
    for counter in (STATEFULSET_PODS_UPDATED_IN_PLACE, STATEFULSET_PODS_RECREATED):
        with contextlib.suppress(KeyError):
            counter.remove(namespace, name)


def forget_cloneset(namespace: str, name: str) -> None:
    """Drop a deleted CloneSet's counter series (no-op for one never counted)."""
    for counter in (CLONESET_PODS_UPDATED_IN_PLACE, CLONESET_PODS_RECREATED):
        with contextlib.suppress(KeyError):
            counter.remove(namespace, name)


# ----------------------------------------------------------------- bound helpers
class QueueProbe(Protocol):
    """What a work queue reports at scrape time (all cheap reads of its own state)."""

    def depth(self) -> int: ...

    def active_workers(self) -> int: ...

    def unfinished_work_seconds(self) -> float: ...

    def longest_running_processor_seconds(self) -> float: ...


def _probe_reader(
    ref: weakref.ReferenceType[QueueProbe], read: Callable[[QueueProbe], float]
) -> Callable[[], float]:
    def value() -> float:
        probe = ref()
        return 0.0 if probe is None else float(read(probe))

    return value


class QueueMetrics:
    """The work-queue and reconcile series of one named queue (``name`` = controller name).

    Counters and histograms are bound once here; depth, active workers, unfinished work and
    the longest running processor are read from ``probe`` at scrape time (held weakly, so a
    dropped queue reads 0; the newest queue of a name wins). As client-go, a queue without a
    name exports nothing (the queue then holds no ``QueueMetrics`` at all).
    """

    __slots__ = (
        "adds",
        "errors",
        "name",
        "queue_duration",
        "reconcile_time",
        "results",
        "retries",
        "work_duration",
    )

    def __init__(self, name: str, probe: QueueProbe) -> None:
        self.name = name
        self.adds = WORKQUEUE_ADDS.labels(name, name)
        self.retries = WORKQUEUE_RETRIES.labels(name, name)
        self.queue_duration = WORKQUEUE_QUEUE_DURATION.labels(name, name)
        self.work_duration = WORKQUEUE_WORK_DURATION.labels(name, name)
        self.reconcile_time = RECONCILE_TIME.labels(name)
        self.errors = RECONCILE_ERRORS.labels(name)
        self.results = {
            result: RECONCILE_TOTAL.labels(name, result)
            for result in (RESULT_SUCCESS, RESULT_ERROR, RESULT_REQUEUE, RESULT_REQUEUE_AFTER)
        }
        ref: weakref.ReferenceType[QueueProbe] = weakref.ref(probe)
        WORKQUEUE_DEPTH.labels(name, name).set_function(_probe_reader(ref, lambda p: p.depth()))
        ACTIVE_WORKERS.labels(name).set_function(_probe_reader(ref, lambda p: p.active_workers()))
        WORKQUEUE_UNFINISHED_WORK.labels(name, name).set_function(
            _probe_reader(ref, lambda p: p.unfinished_work_seconds())
        )
        WORKQUEUE_LONGEST_RUNNING.labels(name, name).set_function(
            _probe_reader(ref, lambda p: p.longest_running_processor_seconds())
        )

    def set_workers(self, workers: int) -> None:
        """``controller_runtime_max_concurrent_reconciles`` (set when the workers start)."""
        MAX_CONCURRENT_RECONCILES.labels(self.name).set(workers)

    def reconciled(self, result: str, seconds: float) -> None:
        """One reconcile ended with ``result`` (``success``/``error``/``requeue``/``requeue_after``)."""
        self.results[result].inc()
        if result == RESULT_ERROR:
            self.errors.inc()
        self.reconcile_time.observe(seconds)


class RestClientMetrics:
    """client-go's REST client series for one API server ``host`` (``host:port``)."""

    __slots__ = ("_durations", "_requests", "host")

    def __init__(self, host: str) -> None:
        self.host = host
        self._requests: dict[tuple[str, str], Counter] = {}
        self._durations: dict[str, Histogram] = {}

    def count(self, method: str, code: str) -> None:
        """One answered (or failed, ``code`` = ``<error>``) HTTP request, watches included."""
        child = self._requests.get((method, code))
        if child is None:
            child = self._requests[(method, code)] = REST_REQUESTS.labels(code, method, self.host)
        child.inc()

    def observe(self, method: str, code: str, seconds: float) -> None:
        """A finished non-watch request: counted and its latency (rate limiting included) observed."""
        self.count(method, code)
        histogram = self._durations.get(method)
        if histogram is None:
            histogram = self._durations[method] = REST_REQUEST_DURATION.labels(method, self.host)
        histogram.observe(seconds)


# ----------------------------------------------------------------- scrape-time collectors
ObjectProvider = Callable[[], Iterable[Mapping[str, Any]]]
"""What a state collector reads at scrape time: the objects of one kind, as JSON dicts (a cache
listing; the objects are shared, never mutated)."""


def read_objects(provider: ObjectProvider, kind: str) -> list[Mapping[str, Any]]:
    """``provider()`` as a list; a failing provider is logged and reads as no objects, so one
    broken source never fails the whole scrape (Argo Rollouts' collectors do the same)."""
    try:
        return list(provider())
    except Exception:
        log.warning("metrics: listing %s for a scrape failed", kind, exc_info=True)
        return []


class StateCollector(Collector):
    """Gauge families computed from objects read at scrape time (kube-state-metrics' way).

    Subclasses name the ``kind`` (for the log line of a failing source) and build their
    families in :meth:`families`; registering calls :meth:`describe`, which reads nothing.
    """

    kind = "objects"

    def __init__(self, objects: ObjectProvider) -> None:
        self.objects = objects

    def describe(self) -> list[Metric]:
        return self.families([])

    def collect(self) -> Iterator[Metric]:
        return iter(self.families(read_objects(self.objects, self.kind)))

    def families(self, objects: list[Mapping[str, Any]]) -> list[Metric]:
        """The families (with one sample set per object); empty families for no objects."""
        raise NotImplementedError


def object_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    """``(namespace, name)`` of an object dict."""
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def unix_seconds(timestamp: Any) -> float | None:
    """An RFC 3339 timestamp (``metav1.Time``) as Unix seconds; None when absent or unparsable."""
    if not isinstance(timestamp, str) or not timestamp:
        return None
    text = timestamp[:-1] + "+00:00" if timestamp.endswith(("Z", "z")) else timestamp
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


# ----------------------------------------------------------------- ours: Rollouts
ROLLOUT_CONFLICTS = Counter(
    "kruise_rollout_conflicts_total",
    "Times another field manager set back a field a Rollout's release wrote (workload partition/paused, "
    "traffic routes, canary Ingress annotations, Service selectors).",
    ["namespace", "name", "writer"],
)
