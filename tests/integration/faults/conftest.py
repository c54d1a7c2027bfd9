"""The fault suite (issue 11, deliverable 5): each test runs its own manager replica in place of
the session one, so it can stop, freeze and kill it; the session manager is restored afterwards.

Every test here ends with the replica's log free of tracebacks: a fault is survived, not logged
as a crash.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kruise.rollouts.manager.process import ManagerProcess
from tests.support.cluster import TestCluster
from tests.support.managers import own_replica

WEBHOOK_TIMEOUT_SECONDS = 10
"""``--webhook-timeout-seconds`` of the replicas here: a frozen manager holds a request this long."""


@pytest.fixture
async def replica(
    manager: ManagerProcess, cluster: TestCluster, tmp_path: Path
) -> AsyncIterator[ManagerProcess]:
    extra = (f"--webhook-timeout-seconds={WEBHOOK_TIMEOUT_SECONDS}",)
    async with own_replica(manager, cluster, tmp_path / "replica", extra_args=extra) as own:
        yield own
    assert_no_traceback(own)


def assert_no_traceback(proc: ManagerProcess) -> None:
    log = proc.log_path.read_text(errors="replace") if proc.log_path.exists() else ""
    assert "Traceback" not in log, log[log.index("Traceback") - 2000 : log.index("Traceback") + 3000]
