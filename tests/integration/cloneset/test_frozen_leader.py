"""A leader frozen past its lease and then resumed makes no write (issue: reliability, leader
fencing).

Two fresh replicas A and B (the session manager is stopped meanwhile and restarted after) run
at DEBUG, so each logs every write it sends (``kruise.core.kube.writes``). A leads; B waits and
serves the webhooks. While a CloneSet churns (its replicas changed every few hundred
milliseconds, so the leader is always creating or deleting pods), A is frozen with SIGSTOP at a
random moment, B takes the Lease after it expires and starts writing, then A is resumed with
SIGCONT. A must send nothing after it resumes (its fence lapsed while it was frozen), stop its
controllers, report the loss and exit 1.
"""

from __future__ import annotations

import asyncio
import datetime
import random
import re
import signal
from pathlib import Path
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, LEASES
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.cloneset.helpers import create, new_cloneset, patch_spec, wait_status
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

LEASE_NAMESPACE, LEASE_NAME = "kruise-system", "kruise-manager"
WRITE = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) DEBUG kruise\.core\.kube\.writes: sent (\S+) (\S+)"
)
ATTEMPTS = 2


def writes(proc: ManagerProcess) -> list[tuple[datetime.datetime, str, str]]:
    """(local time, method, path) of every write ``proc`` logged as sent."""
    found = []
    for line in proc.log_path.read_text(errors="replace").splitlines():
        m = WRITE.match(line)
        if m:
            found.append((datetime.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f"), m[2], m[3]))
    return found


async def holder(kube: KubeClient) -> str | None:
    spec: dict[str, Any] = (await kube.get(LEASES, LEASE_NAME, LEASE_NAMESPACE)).get("spec") or {}
    return spec.get("holderIdentity")


async def churn(kube: KubeClient, namespace: str, stop: asyncio.Event) -> None:
    rng = random.Random(7)
    while not stop.is_set():
        await patch_spec(kube, namespace, "churn", {"replicas": rng.randint(2, 8)})
        await asyncio.sleep(0.3)


async def freeze_and_resume(
    kube: KubeClient, cluster: TestCluster, namespace: str, workdir: Path, delay: float
) -> tuple[float, int]:
    """One try: A leads, is frozen ``delay`` seconds into a churn, B takes over and writes, A is
    resumed. Returns (seconds from freeze to takeover, A's writes after resuming)."""
    a = ManagerProcess(cluster.kubeconfig, workdir / "a", name="a", log_level="DEBUG")
    b = ManagerProcess(cluster.kubeconfig, workdir / "b", name="b", log_level="DEBUG")
    await asyncio.to_thread(a.start)

    async def a_leads() -> bool:
        return _logged(a, "leads; starting controllers")

    await eventually(a_leads, timeout=30, what="A leads")
    await asyncio.to_thread(b.start)  # the webhooks now point at B, which is never frozen
    if await get_or_none(kube, namespace, "churn") is None:
        await create(kube, namespace, new_cloneset("churn", 4))
    stop = asyncio.Event()
    churner = asyncio.create_task(churn(kube, namespace, stop))
    try:
        await asyncio.sleep(delay)
        a_holder = await holder(kube)
        assert a.proc is not None
        a.proc.send_signal(signal.SIGSTOP)
        frozen_at = datetime.datetime.now()

        async def b_leads() -> str | None:
            current = await holder(kube)
            return current if current and current != a_holder else None

        async def b_writes() -> bool:
            return bool(_writes_after(b, frozen_at))

        await eventually(b_leads, timeout=40, what="B takes the lease")
        took_over = (datetime.datetime.now() - frozen_at).total_seconds()
        await eventually(b_writes, timeout=20, what="B writes")
        a.proc.send_signal(signal.SIGCONT)
        resumed_at = datetime.datetime.now()
        code = await asyncio.to_thread(a.proc.wait, 30)
        late = [w for w in writes(a) if w[0] >= resumed_at - datetime.timedelta(milliseconds=5)]
        assert late == [], f"A wrote after it was resumed: {late[:5]}"
        assert code == 1, f"A exited {code}"
        assert "leader election lost; controllers stopped" in a.log_tail(400)
        return took_over, len(late)
    finally:
        stop.set()
        await churner
        await asyncio.to_thread(b.stop)
        await asyncio.to_thread(a.stop)


async def test_a_frozen_and_resumed_leader_sends_no_write_after_losing_its_lease(
    kube: KubeClient, cluster: TestCluster, manager: ManagerProcess, namespace: str, tmp_path: Path
) -> None:
    await asyncio.to_thread(manager.stop)  # releases the Lease
    rng = random.Random(2026)
    try:
        for attempt in range(ATTEMPTS):
            delay = rng.uniform(1.0, 3.0)  # freeze at a random moment of the churn
            took_over, late = await freeze_and_resume(
                kube, cluster, namespace, tmp_path / str(attempt), delay
            )
            print(
                f"\n[frozen leader] try {attempt}: takeover {took_over:.1f}s after the freeze, "
                f"A's writes after resume: {late}"
            )
    finally:
        await asyncio.to_thread(manager.start)

        async def session_leads() -> bool:
            return bool(await holder(kube)) and _logged(manager, "leads; starting controllers")

        await eventually(session_leads, timeout=30, what="the session manager leads again")
    await patch_spec(kube, namespace, "churn", {"replicas": 3})
    await wait_status(kube, namespace, "churn", replicas=3, readyReplicas=3)


async def get_or_none(kube: KubeClient, namespace: str, name: str) -> dict[str, Any] | None:
    return await kube.get_or_none(CLONESETS, name, namespace)


def _logged(proc: ManagerProcess, text: str) -> bool:
    return proc.log_path.exists() and text in proc.log_path.read_text(errors="replace")


def _writes_after(proc: ManagerProcess, since: datetime.datetime) -> list[tuple[datetime.datetime, str, str]]:
    return [w for w in writes(proc) if w[0] > since and "/leases/" not in w[2]]
