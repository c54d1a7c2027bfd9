"""Which API write, if any, records an event: client-go's EventCorrelator rules, as a pure core.

Upstream controllers (kruise-manager, kruise-rollouts, kube-controller-manager) record events with
client-go's ``record.EventRecorder``, whose broadcaster passes every event through an
``EventCorrelator`` (``k8s.io/client-go/tools/record/events_cache.go``) before writing it. In order:

1. **Aggregation.** Events that differ only by message are *similar*: same source component,
   involved object (kind, namespace, name, uid, apiVersion), type and reason. Each group remembers
   the distinct messages it saw; a similar event more than :data:`AGGREGATE_INTERVAL` seconds after
   the group's previous one starts the group afresh. When a message makes the group's distinct count
   reach :data:`AGGREGATE_MAX_EVENTS` (the 10th distinct message within the window, as upstream's
   ``< maxEvents`` test and its "similar-events-should-aggregate-event" case show), the event is
   replaced by one per group whose message is :data:`AGGREGATE_PREFIX` + the message. Upstream then
   forgets an arbitrary message of the group so it stays below the threshold; we forget the one just
   folded, deterministically: the first nine distinct messages of a window keep their own Events,
   every later one goes to the group's single aggregate Event.
2. **Deduplication.** An event identical to one already recorded (same group and message, or the
   same aggregate group) does not create a new Event: the existing one is PATCHed with the
   occurrence count, ``lastTimestamp`` and message. The writer falls back to creating it (same name,
   same count) when the PATCH finds it gone (expired by the API server's event TTL, or its create
   was dropped below). The count counts every occurrence, written or dropped.
3. **Spam filter.** Each source + involved object + type has a token bucket of
   :data:`SPAM_BURST` tokens refilled at :data:`SPAM_QPS` (one per 300 s); every write (create or
   patch) takes one token and an event finding the bucket empty is dropped. The deduplication
   state is updated first, so the next permitted PATCH carries the full count.

Each of the three keeps its state in an LRU cache of :data:`LRU_ENTRIES` keys; an evicted key is
simply seen afresh. Upstream also refreshes the deduplication cache from the server's answer
(``UpdateState``); ours is authoritative instead, since the count the server holds is the one we
wrote. Not mirrored: the source ``host`` and ``fieldPath`` (we set neither).

Times are seconds on the injectable ``clock`` (wall clock by default); :class:`EventCorrelator` is
not thread-safe and is meant for one event loop.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

LRU_ENTRIES = 4096
"""Keys kept by each of the three caches (client-go ``maxLruCacheEntries``)."""
AGGREGATE_MAX_EVENTS = 10
"""Distinct messages of a similar-event group, within the interval, at which events aggregate."""
AGGREGATE_INTERVAL = 600.0
"""Seconds of silence after which a similar-event group starts afresh."""
AGGREGATE_PREFIX = "(combined from similar events): "
"""Prefix of an aggregate Event's message (client-go ``EventAggregatorByReasonMessageFunc``)."""
SPAM_BURST = 25
"""Writes a source may make about one object (and type) at once."""
SPAM_QPS = 1.0 / 300.0
"""Refill rate of the spam filter's bucket, in writes per second (one per five minutes)."""

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A mapping of at most ``size`` keys that forgets the least recently used one first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.size:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


@dataclass(frozen=True)
class Occurrence:
    """One call to record an event: who reports it, about what, and what."""

    component: str
    kind: str
    namespace: str
    name: str
    uid: str
    api_version: str
    type: str
    reason: str
    message: str

    @property
    def similar_key(self) -> tuple[str, ...]:
        """Events with this key differ at most by message (the aggregation group)."""
        return (*self.spam_key, self.reason)

    @property
    def spam_key(self) -> tuple[str, ...]:
        """The spam filter's bucket: source, involved object and type."""
        return (self.component, self.kind, self.namespace, self.name, self.uid, self.api_version, self.type)


@dataclass(frozen=True)
class Drop:
    """Write nothing: the object's spam-filter bucket is empty."""


@dataclass(frozen=True)
class Create:
    """POST a new Event ``name`` with ``message``, ``count`` and both timestamps (seconds)."""

    name: str
    message: str
    count: int
    first_timestamp: float
    last_timestamp: float


@dataclass(frozen=True)
class Patch:
    """PATCH Event ``name``'s ``count``, ``lastTimestamp`` and ``message``; if it is gone, create it
    as :meth:`as_create` says (same name, the Event's first timestamp)."""

    name: str
    message: str
    count: int
    first_timestamp: float
    last_timestamp: float

    def as_create(self) -> Create:
        return Create(self.name, self.message, self.count, self.first_timestamp, self.last_timestamp)


Decision = Drop | Create | Patch


@dataclass
class _Group:
    messages: dict[str, None]  # insertion-ordered set of the distinct messages seen in the window
    last_seen: float


@dataclass(frozen=True)
class _Recorded:
    name: str
    count: int
    first_timestamp: float


@dataclass
class _Bucket:
    tokens: float
    at: float


class EventCorrelator:
    """Decides, per :class:`Occurrence`, whether to drop it, create an Event or patch one.

    ``clock`` returns seconds (``time.time`` by default); the other parameters default to
    client-go's constants and exist for tests.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        *,
        cache_size: int = LRU_ENTRIES,
        max_events: int = AGGREGATE_MAX_EVENTS,
        interval: float = AGGREGATE_INTERVAL,
        burst: int = SPAM_BURST,
        qps: float = SPAM_QPS,
    ) -> None:
        self.clock = clock
        self.max_events = max_events
        self.interval = interval
        self.burst = burst
        self.qps = qps
        self._groups: LRU[tuple[str, ...], _Group] = LRU(cache_size)
        self._recorded: LRU[tuple[str, ...], _Recorded] = LRU(cache_size)
        self._buckets: LRU[tuple[str, ...], _Bucket] = LRU(cache_size)

    def correlate(self, event: Occurrence, fresh_name: str) -> Decision:
        """The write that records ``event``; ``fresh_name`` names the Event if a new one is created
        (client-go uses ``<object name>.<hex nanoseconds>``)."""
        now = self.clock()
        key, message = self._aggregate(event, now)
        previous = self._recorded.get(key)
        decision: Create | Patch
        if previous is None:
            decision = Create(fresh_name, message, 1, now, now)
        else:
            decision = Patch(previous.name, message, previous.count + 1, previous.first_timestamp, now)
        self._recorded.put(key, _Recorded(decision.name, decision.count, decision.first_timestamp))
        return decision if self.spend(event) else Drop()

    def spend(self, event: Occurrence) -> bool:
        """Take a token from ``event``'s spam-filter bucket; False when it is empty."""
        now = self.clock()
        bucket = self._buckets.get(event.spam_key) or _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + max(0.0, now - bucket.at) * self.qps)
        bucket.at = now
        self._buckets.put(event.spam_key, bucket)
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True

    def _aggregate(self, event: Occurrence, now: float) -> tuple[tuple[str, ...], str]:
        """The deduplication key and message of ``event`` after aggregation."""
        group = self._groups.get(event.similar_key)
        if group is None or now - group.last_seen > self.interval:
            group = _Group({}, now)
        group.messages[event.message] = None
        group.last_seen = now
        self._groups.put(event.similar_key, group)
        if len(group.messages) < self.max_events:
            return (*event.similar_key, "", event.message), event.message
        del group.messages[event.message]  # the newest: earlier messages keep their own Events
        return (*event.similar_key, AGGREGATE_PREFIX), AGGREGATE_PREFIX + event.message
