"""Keeping one webhook's ``matchConditions`` in our configuration equal to what is wanted.

A :class:`ConditionKeeper` is shared by the controllers that narrow a webhook's scope (the pod
webhook's SidecarSet condition, the eviction webhook's namespaces). It compares against the
informer's copy of the configuration (:meth:`ConditionKeeper.watch` declares it and wakes the
controller's one key when the configuration changes), so at rest it makes no request at all:
a foreign rewrite (a starting replica, a ``helm upgrade``) arrives as a watch event and is
repaired then, instead of by polling the live object. Kruise-manager itself keeps its
configurations by watching them too (``pkg/webhook/util/controller``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from kruise.core.informer.store import JSON
from kruise.core.kube.client import KubeClient
from kruise.core.runtime import Watch
from kruise.core.webhook.conditions import MatchCondition
from kruise.core.webhook.configuration import conditions_differ, configuration_of, set_match_conditions

__all__ = ["FRESH_SECONDS", "ConditionKeeper", "cache_decides"]

FRESH_SECONDS = 10.0
"""How long a write (or a check) of ours answers an :meth:`ConditionKeeper.ensure` with the same
wanted conditions without looking again."""


def cache_decides(
    last_written: tuple[MatchCondition, ...] | None, wanted: tuple[MatchCondition, ...]
) -> bool:
    """Whether the informer's copy can be trusted to say the live conditions equal ``wanted``.

    Not when we last wrote something else: our write may not have reached the cache yet, so a
    copy still showing ``wanted`` may be older than the live object (then the live object is read).
    """
    return last_written is None or last_written == wanted


class ConditionKeeper:
    """``webhook``'s ``matchConditions`` in our mutating (``mutating``) or validating configuration.

    ``cached`` returns the informer's copy of that configuration (``None``: not in the cache; a
    keeper without ``cached`` reads the live object each time). ``key`` is what :meth:`watch`
    enqueues.
    """

    def __init__(
        self,
        kube: KubeClient,
        webhook: str,
        key: str,
        *,
        mutating: bool,
        cached: Callable[[], JSON | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube = kube
        self.webhook = webhook
        self.key = key
        self.mutating = mutating
        self.cached = cached
        self.clock = clock
        self.resource, self.config_name = configuration_of(mutating)
        self._lock = asyncio.Lock()
        self._verified: tuple[tuple[MatchCondition, ...], float] | None = None

    def watch(self) -> Watch:
        """Our configuration's events wake :attr:`key` (other configurations are ignored)."""
        name = self.config_name
        key = self.key
        return Watch(
            self.resource, lambda obj: (key,) if (obj.get("metadata") or {}).get("name") == name else ()
        )

    async def ensure(self, wanted: tuple[MatchCondition, ...], *, reread: bool = False) -> bool:
        """Bring the live conditions in line with ``wanted``; True when they were rewritten.

        Without ``reread`` a check or write of the same ``wanted`` less than
        :data:`FRESH_SECONDS` ago is enough. Otherwise the cached copy decides when
        :func:`cache_decides` (equal: no request; absent, or without our webhook: nothing to do,
        its creation will wake us; different: replaced from that copy, read again on conflict);
        else the live object is read.
        """
        async with self._lock:
            verified = self._verified
            last = None if verified is None else verified[0]
            if (
                not reread
                and verified is not None
                and last == wanted
                and self.clock() - verified[1] < FRESH_SECONDS
            ):
                return False
            current: JSON | None = None
            if self.cached is not None and cache_decides(last, wanted):
                current = self.cached()
                if not conditions_differ(current, self.webhook, wanted):
                    if current is not None:
                        self._verified = (wanted, self.clock())
                    return False
            written = await set_match_conditions(
                self.kube, self.webhook, wanted, mutating=self.mutating, current=current
            )
            self._verified = (wanted, self.clock())
            return bool(written)
