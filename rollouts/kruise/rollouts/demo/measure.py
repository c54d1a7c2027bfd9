"""What the comparison act (:mod:`kruise.rollouts.demo.comparison`) measures, from what it saw (pure).

The act records, with its own monotonic clock, every state of every pod it watched
(:class:`PodSample`: alive, Ready), the kubelet Events of the namespace and its client's requests;
the functions here turn those into the table's numbers:

- :func:`longest_unready`: the longest time, within the update window, that a pod existed (not
  terminating) without being Ready: a new pod from its creation, an updated pod from the moment
  it went unready, until it was Ready again (or the window closed);
- :func:`kubelet_pulls`: the kubelet's ``Pulling`` events of one image (each is a pull the pod
  waited for: the node did not hold the image) and :func:`pulls_by_batch` per batch;
- :func:`ready_endpoints`: the pod IPs a Service's EndpointSlice would list as ready (pod
  selected, Ready, not terminating, with an IP), what the act's client sends to;
- :class:`VariantResult` and :func:`row`: one line of the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

__all__ = [
    "PodSample",
    "Pull",
    "VariantResult",
    "kubelet_pulls",
    "longest_unready",
    "pod_alive",
    "pod_ready",
    "pulls_by_batch",
    "ready_endpoints",
    "row",
]


@dataclass(frozen=True)
class PodSample:
    """Pod ``pod`` seen at ``t`` (seconds, the act's monotonic clock): ``alive`` is False once
    it is terminating or deleted; ``ready`` is its Ready condition."""

    t: float
    pod: str
    alive: bool
    ready: bool


@dataclass(frozen=True)
class Pull:
    """A kubelet ``Pulling`` event: the pod that waited for the image and its node."""

    pod: str
    node: str


def pod_ready(pod: Mapping[str, Any]) -> bool:
    """The pod's Ready condition is True (readiness gates, such as OpenKruise's
    ``InPlaceUpdateReady``, are part of it)."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def pod_alive(pod: Mapping[str, Any]) -> bool:
    """Not terminating (no ``deletionTimestamp``)."""
    return not (pod.get("metadata") or {}).get("deletionTimestamp")


def ready_endpoints(pods: Iterable[Mapping[str, Any]]) -> list[str]:
    """Sorted IPs of the pods an EndpointSlice lists as ready: alive, Ready, with a pod IP."""
    ips = {
        str((p.get("status") or {}).get("podIP"))
        for p in pods
        if pod_alive(p) and pod_ready(p) and (p.get("status") or {}).get("podIP")
    }
    return sorted(ips)


def longest_unready(samples: Sequence[PodSample], start: float, end: float) -> float:
    """Seconds of the longest span, clipped to ``[start, end]``, in which one pod was alive and
    not Ready. ``samples`` may be in any order; a pod's state holds until its next sample; a
    span still open at ``end`` counts until ``end``. ValueError when ``end < start``."""
    if end < start:
        raise ValueError(f"end ({end}) is before start ({start})")
    by_pod: dict[str, list[PodSample]] = {}
    for sample in sorted(samples, key=lambda s: s.t):
        by_pod.setdefault(sample.pod, []).append(sample)
    longest = 0.0
    for history in by_pod.values():
        since: float | None = None
        for sample in history:
            unready = sample.alive and not sample.ready
            if unready and since is None:
                since = sample.t
            elif not unready and since is not None:
                longest = max(longest, _clipped(since, sample.t, start, end))
                since = None
        if since is not None:
            longest = max(longest, _clipped(since, end, start, end))
    return longest


def _clipped(a: float, b: float, start: float, end: float) -> float:
    return max(0.0, min(b, end) - max(a, start))


def kubelet_pulls(events: Iterable[Mapping[str, Any]], image: str) -> list[Pull]:
    """The kubelet's ``Pulling`` events of ``image`` (``Pulling image "<image>"``), one per pull
    (an aggregated event with ``count`` n counts n times), sorted by pod."""
    pulls = []
    for event in events:
        source = event.get("source") or {}
        component = event.get("reportingComponent") or source.get("component")
        if event.get("reason") != "Pulling" or component != "kubelet":
            continue
        if f'"{image}"' not in str(event.get("message") or ""):
            continue
        pod = str((event.get("involvedObject") or {}).get("name") or "")
        node = str(event.get("reportingInstance") or source.get("host") or "")
        pulls += [Pull(pod, node)] * max(1, int(event.get("count") or 1))
    return sorted(pulls, key=lambda p: (p.pod, p.node))


def pulls_by_batch(pulls: Iterable[Pull], batches: Sequence[Iterable[str]]) -> list[int]:
    """How many of ``pulls`` were made for the pods of each batch (pod names per batch)."""
    index = {pod: i for i, batch in enumerate(batches) for pod in batch}
    counts = [0] * len(batches)
    for pull in pulls:
        if pull.pod in index:
            counts[index[pull.pod]] += 1
    return counts


@dataclass
class VariantResult:
    """One variant's measurements (seconds, counts); ``completed`` False when it timed out."""

    name: str
    completed: bool = False
    seconds: float = 0.0
    longest_unready: float = 0.0
    pulls: list[Pull] = field(default_factory=list)
    batches: list[int] | None = None
    sent: int = 0
    failed: int = 0
    before: str = ""
    note: str = ""


def row(result: VariantResult) -> list[str]:
    """The table cells: variant, update time, longest unready, pulls inside the window (and per
    batch), failed/sent requests, what the nodes held before the update."""
    if not result.completed:
        return [result.name, "DID NOT COMPLETE", "-", "-", "-", result.before or result.note]
    pulls = str(len(result.pulls))
    if result.batches is not None:
        pulls += " (per batch " + " / ".join(str(n) for n in result.batches) + ")"
    rate = f"{result.failed} / {result.sent}"
    return [
        result.name,
        f"{result.seconds:.1f}s",
        f"{result.longest_unready:.1f}s",
        pulls,
        rate,
        result.before,
    ]
