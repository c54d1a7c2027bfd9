"""Pod probe bookkeeping of kruise-daemon (pure): upstream ``pkg/daemon/podprobe`` (v1.8.4).

- :class:`ProbeKey` — one probe of one pod's container (its NodePodProbe entry).
- :func:`timing` — a probe's timing as the daemon reads it: ``periodSeconds``,
  ``timeoutSeconds``, ``initialDelaySeconds``, ``successThreshold``, ``failureThreshold``, each
  at least 1 (upstream stores no defaults; a zero or missing value counts as 1).
- :class:`Thresholds` — a worker's run counter: a result is reported only once it has come
  ``successThreshold`` (``Succeeded``) or ``failureThreshold`` (``Failed``) times in a row.
- :class:`Results` — the latest result per container; :meth:`Results.set` says whether it changed
  (state or message; or 600 s since the last report: upstream's ``maxSyncProbeTime``), the
  only times the status is rebuilt.
- :func:`next_status` — ``status.podProbeStatuses`` rebuilt from the stored one (entries of probes
  no longer in the spec dropped) and the results: ``lastProbeTime`` from the result,
  ``lastTransitionTime`` kept unless the state changed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.daemon.api.podprobe import PROBE_SUCCEEDED

__all__ = [
    "MAX_MESSAGE",
    "MAX_SYNC_SECONDS",
    "ProbeKey",
    "Result",
    "Results",
    "Thresholds",
    "Timing",
    "next_status",
    "probe_keys",
    "timing",
]

JSON = dict[str, Any]
MAX_SYNC_SECONDS = 600.0
"""A result unchanged for this long is written again (a fresh ``lastProbeTime``)."""
MAX_MESSAGE = 1024
"""Longest probe message kept (upstream ``maxProbeMessageLength``)."""


@dataclass(frozen=True)
class ProbeKey:
    """One probe of a pod's container."""

    namespace: str
    pod: str
    uid: str
    ip: str
    container: str
    probe: str


@dataclass(frozen=True)
class Timing:
    period: int
    timeout: int
    initial_delay: int
    success_threshold: int
    failure_threshold: int


def timing(probe: Mapping[str, Any]) -> Timing:
    """The probe's timing, every value at least 1 (module docstring)."""

    def at_least_one(key: str) -> int:
        value = probe.get(key) or 0
        return value if isinstance(value, int) and value >= 1 else 1

    return Timing(
        at_least_one("periodSeconds"),
        at_least_one("timeoutSeconds"),
        at_least_one("initialDelaySeconds"),
        at_least_one("successThreshold"),
        at_least_one("failureThreshold"),
    )


def probe_keys(npp: Mapping[str, Any]) -> dict[ProbeKey, JSON]:
    """Every probe of the NodePodProbe's spec, by key, with its probe spec."""
    out: dict[ProbeKey, JSON] = {}
    for entry in (npp.get("spec") or {}).get("podProbes") or ():
        for probe in entry.get("probes") or ():
            key = ProbeKey(
                str(entry.get("namespace")),
                str(entry.get("name")),
                str(entry.get("uid")),
                str(entry.get("IP") or ""),
                str(probe.get("containerName")),
                str(probe.get("name")),
            )
            out[key] = dict(probe.get("probe") or {})
    return out


@dataclass
class Thresholds:
    """A worker's consecutive-results counter (module docstring)."""

    last: str = ""
    run: int = 0

    def observe(self, state: str, t: Timing) -> bool:
        """Count ``state``; True when it is to be reported."""
        if state == self.last:
            self.run += 1
        else:
            self.last, self.run = state, 1
        needed = t.success_threshold if state == PROBE_SUCCEEDED else t.failure_threshold
        return self.run >= needed


@dataclass(frozen=True)
class Result:
    key: ProbeKey
    state: str
    message: str
    probed_at: float
    probed_at_text: str


@dataclass
class Results:
    """The latest result per container (by container ID)."""

    by_container: dict[str, Result] = field(default_factory=dict)

    def set(self, container_id: str, result: Result) -> bool:
        """Store ``result``; True when the status must be rebuilt."""
        prev = self.by_container.get(container_id)
        if (
            prev is None
            or prev.state != result.state
            or prev.message != result.message
            or result.probed_at - prev.probed_at >= MAX_SYNC_SECONDS
        ):
            self.by_container[container_id] = result
            return True
        return False

    def remove(self, container_id: str) -> None:
        self.by_container.pop(container_id, None)

    def values(self) -> Iterable[Result]:
        return list(self.by_container.values())


def truncate(message: str) -> str:
    return message[:MAX_MESSAGE]


def next_status(npp: Mapping[str, Any], results: Sequence[Result], now: str) -> JSON:
    """``status`` rebuilt (module docstring); compare with the stored one to decide a write."""
    valid = {(k.uid, k.probe) for k in probe_keys(npp)}
    statuses: list[JSON] = []
    for old in (npp.get("status") or {}).get("podProbeStatuses") or ():
        states = [
            copy.deepcopy(s) for s in old.get("probeStates") or () if (old.get("uid"), s.get("name")) in valid
        ]
        if states:
            statuses.append(
                {
                    "name": old.get("name"),
                    "namespace": old.get("namespace"),
                    "uid": old.get("uid"),
                    "probeStates": states,
                }
            )
    for result in results:
        key = result.key
        if (key.uid, key.probe) not in valid or not result.state:
            continue
        entry = next((s for s in statuses if s["uid"] == key.uid), None)
        if entry is None:
            entry = {"name": key.pod, "namespace": key.namespace, "uid": key.uid, "probeStates": []}
            statuses.append(entry)
        state = next((s for s in entry["probeStates"] if s.get("name") == key.probe), None)
        if state is None:
            state = {"name": key.probe, "lastTransitionTime": now}
            entry["probeStates"].append(state)
        elif state.get("state") != result.state:
            state["lastTransitionTime"] = now
        state["state"] = result.state
        state["lastProbeTime"] = result.probed_at_text
        if result.message:
            state["message"] = result.message
        else:
            state.pop("message", None)
    return {"podProbeStatuses": statuses} if statuses else {}
