"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection, with a
write fence.

Of several manager replicas exactly one runs the controllers; every replica keeps
serving webhooks. Timings default to controller-runtime's: lease duration 15 s,
renew deadline 10 s, retry period 2 s. A leader that cannot renew within the
renew deadline gives up (the manager then exits, as kruise-manager does).

**Fencing.** Giving up is not enough: a leader frozen (SIGSTOP, a long GC pause, a VM
migration) past its lease wakes up with reconciles in flight, and they would go on writing
while the elector's next renew finds the Lease taken. :class:`LeaseFence` closes that window:
it holds the monotonic time at which the last *successful* acquire or renew was *sent*, and is
valid for ``renew_deadline`` seconds after it. The controllers' client checks it right before
every write (:attr:`kruise.core.kube.client.KubeClient.write_guard`), so once the deadline has
passed no write leaves the process, whatever the event loop runs first after a freeze. Another
replica can only take the Lease ``lease_duration`` seconds after *it* saw our last renew, which
is later than our renew was sent, and ``renew_deadline < lease_duration``: the two replicas'
write periods never overlap.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kruise.core.errors import AlreadyExistsError, ConflictError, FencedError, KruiseError, NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import LEASES

log = logging.getLogger(__name__)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def micro_time(t: datetime.datetime) -> str:
    """metav1.MicroTime wire format."""
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: str | None) -> datetime.datetime | None:
    if not value:
        return None
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))


@dataclass(frozen=True)
class LeaderElectionConfig:
    namespace: str
    name: str
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


class LeaseFence:
    """Whether this replica can still prove it holds the lease (see the module docstring).

    ``renewed(sent_at)`` records a successful acquire/renew sent at ``sent_at`` (``clock()``
    seconds); :attr:`held` is true until ``sent_at + renew_deadline``; :meth:`check` raises
    :class:`~kruise.core.errors.FencedError` once it is not; :meth:`revoke` ends it at once
    (the Lease was seen taken, or the manager is stopping).
    """

    def __init__(self, renew_deadline: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.renew_deadline = renew_deadline
        self.clock = clock
        self._valid_until = float("-inf")

    def renewed(self, sent_at: float) -> None:
        self._valid_until = max(self._valid_until, sent_at + self.renew_deadline)

    def revoke(self) -> None:
        self._valid_until = float("-inf")

    @property
    def held(self) -> bool:
        return self.clock() < self._valid_until

    def remaining(self) -> float:
        """Seconds the fence stays valid without another renew (<= 0: lapsed)."""
        return self._valid_until - self.clock()

    def check(self) -> None:
        """The write guard: raise :class:`FencedError` unless :attr:`held`."""
        if not self.held:
            raise FencedError("leader lease not held (last renew older than the renew deadline)")

    async def lapsed(self) -> None:
        """Return once the fence is no longer held."""
        while (left := self.remaining()) > 0:
            await asyncio.sleep(left)


class LeaderElector:
    """Acquire, then keep renewing, one Lease; :attr:`fence` proves it to writers."""

    def __init__(self, kube: KubeClient, config: LeaderElectionConfig) -> None:
        self.kube = kube
        self.config = config
        self.is_leader = False
        self.fence = LeaseFence(config.renew_deadline)

    async def _attempt(self) -> bool:
        """One acquire/renew; on success the fence is extended from when it was sent."""
        sent_at = self.fence.clock()
        if await self.try_acquire_or_renew():
            self.fence.renewed(sent_at)
            return True
        return False

    def _spec(self, now: datetime.datetime, transitions: int, acquire: datetime.datetime) -> dict[str, Any]:
        return {
            "holderIdentity": self.config.identity,
            "leaseDurationSeconds": int(self.config.lease_duration),
            "acquireTime": micro_time(acquire),
            "renewTime": micro_time(now),
            "leaseTransitions": transitions,
        }

    async def try_acquire_or_renew(self) -> bool:
        """One attempt; True when we hold the lease afterwards."""
        cfg = self.config
        now = _now()
        try:
            lease = await self.kube.get(LEASES, cfg.name, cfg.namespace)
        except NotFoundError:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": cfg.name, "namespace": cfg.namespace},
                "spec": self._spec(now, 0, now),
            }
            try:
                await self.kube.create(LEASES, body, cfg.namespace)
            except AlreadyExistsError:
                return False
            return True
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity")
        renew = parse_time(spec.get("renewTime"))
        duration = float(spec.get("leaseDurationSeconds") or cfg.lease_duration)
        expired = renew is None or (now - renew).total_seconds() > duration
        if holder and holder != cfg.identity and not expired:
            return False
        transitions = int(spec.get("leaseTransitions") or 0)
        if holder == cfg.identity:
            acquire = parse_time(spec.get("acquireTime")) or now
        else:
            transitions += 1
            acquire = now
        lease["spec"] = self._spec(now, transitions, acquire)
        try:
            await self.kube.replace(LEASES, lease, guard=self._renew_guard)
        except ConflictError:
            return False
        return True

    def _renew_guard(self) -> None:
        """A leader's renew is not sent once its fence lapsed. client-go bounds each renew by
        the renew deadline (the request's context expires); here a leader frozen between reading
        the Lease and writing it back would otherwise send the write after waking, on a read
        taken before the freeze. Raises :class:`FencedError`; ``hold`` then gives up."""
        if self.is_leader:
            self.fence.check()

    async def acquire(self) -> None:
        """Block until this replica is the leader."""
        while True:
            try:
                if await self._attempt():
                    self.is_leader = True
                    log.info(
                        "became leader of %s/%s as %s",
                        self.config.namespace,
                        self.config.name,
                        self.config.identity,
                    )
                    return
            except KruiseError as err:
                log.warning("leader election attempt failed: %s", err)
            await asyncio.sleep(self.config.retry_period)

    async def hold(self) -> None:
        """Renew every retry period; returns (leadership lost, fence revoked) when the Lease is
        seen taken. The fence lapses on its own when renews fail past the renew deadline:
        watch :meth:`LeaseFence.lapsed` for that."""
        while self.fence.held:
            await asyncio.sleep(self.config.retry_period)
            try:
                if await self._attempt():
                    continue
                log.error("lease %s taken by another replica", self.config.name)
                break
            except KruiseError as err:
                log.warning("lease renew failed: %s", err)
        self.fence.revoke()
        self.is_leader = False

    async def release(self) -> None:
        """Give the lease up on clean shutdown so another replica takes over at once."""
        if not self.is_leader:
            return
        try:
            lease = await self.kube.get(LEASES, self.config.name, self.config.namespace)
            if (lease.get("spec") or {}).get("holderIdentity") == self.config.identity:
                lease["spec"]["holderIdentity"] = None
                lease["spec"]["leaseDurationSeconds"] = 1
                await self.kube.replace(LEASES, lease)
        except KruiseError as err:
            log.warning("could not release lease: %s", err)
        self.is_leader = False
