"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection.

Of several manager replicas exactly one runs the controllers; every replica keeps
serving webhooks. Timings default to controller-runtime's: lease duration 15 s,
renew deadline 10 s, retry period 2 s. A leader that cannot renew within the
renew deadline gives up (the manager then exits, as kruise-manager does, so that
it never acts on a lease another replica may already hold).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from dataclasses import dataclass
from typing import Any

from kruise.core.errors import AlreadyExistsError, ConflictError, KruiseError, NotFoundError
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


class LeaderElector:
    """Acquire, then keep renewing, one Lease."""

    def __init__(self, kube: KubeClient, config: LeaderElectionConfig) -> None:
        self.kube = kube
        self.config = config
        self.is_leader = False

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
            await self.kube.replace(LEASES, lease)
        except ConflictError:
            return False
        return True

    async def acquire(self) -> None:
        """Block until this replica is the leader."""
        while True:
            try:
                if await self.try_acquire_or_renew():
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
        """Renew every retry period; returns (leadership lost) when a renew deadline passes."""
        loop = asyncio.get_running_loop()
        last_renew = loop.time()
        while True:
            await asyncio.sleep(self.config.retry_period)
            try:
                if await self.try_acquire_or_renew():
                    last_renew = loop.time()
                    continue
                log.error("lease %s taken by another replica", self.config.name)
                break
            except KruiseError as err:
                log.warning("lease renew failed: %s", err)
            if loop.time() - last_renew > self.config.renew_deadline:
                log.error(
                    "could not renew lease %s within %.0fs", self.config.name, self.config.renew_deadline
                )
                break
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
