"""The failed-pod backoff of the DaemonSet controller (``flowcontrol.NewBackOff(1s, 15min)``).

A node whose daemon pod failed gets it deleted (and so recreated) at once; if it fails again the
next deletion waits 2 s, then 4 s, ... up to 15 minutes. An entry not stepped for twice the
maximum starts over at 1 s. Entries are keyed by the DaemonSet's UID, its
``status.observedGeneration`` and the node (``failedPodsBackoffKey``), so a spec change resets
them. Held by one controller instance; time is passed in.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from kruise.workloads.daemonset.plan import FailedBackoff
from kruise.workloads.objects import KubeObject, as_utc, status, uid

INITIAL = 1.0
MAXIMUM = 15 * 60.0


def _prefix(ds: KubeObject) -> str:
    return f"{uid(ds)}/{int(status(ds).get('observedGeneration') or 0)}/"


class FailedPodBackoff:
    """Per (DaemonSet, generation, node) backoff entries."""

    def __init__(self, *, initial: float = INITIAL, maximum: float = MAXIMUM) -> None:
        self.initial = initial
        self.maximum = maximum
        self._entries: dict[str, FailedBackoff] = {}

    def entries(self, ds: KubeObject) -> dict[str, FailedBackoff]:
        """The entries of ``ds``'s current generation, by node."""
        prefix = _prefix(ds)
        return {k[len(prefix) :]: v for k, v in self._entries.items() if k.startswith(prefix)}

    def step(self, ds: KubeObject, node: str, now: datetime) -> None:
        """``Backoff.Next``: start at ``initial`` (or again after ``2 * maximum`` idle), else double."""
        key = _prefix(ds) + node
        found = self._entries.get(key)
        expired = found is None or as_utc(now) - as_utc(found.since) > timedelta(seconds=2 * self.maximum)
        delay = self.initial if expired or found is None else min(found.delay * 2, self.maximum)
        self._entries[key] = FailedBackoff(since=as_utc(now), delay=delay)

    def forget(self, ds_uid: str) -> None:
        """Drop every entry of a deleted DaemonSet."""
        for key in [k for k in self._entries if k.startswith(f"{ds_uid}/")]:
            del self._entries[key]

    def gc(self, now: datetime) -> None:
        """``Backoff.GC``: drop entries idle for more than ``2 * maximum``."""
        horizon = timedelta(seconds=2 * self.maximum)
        for key in [k for k, v in self._entries.items() if as_utc(now) - as_utc(v.since) > horizon]:
            del self._entries[key]
