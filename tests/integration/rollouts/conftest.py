"""Fixtures of the Rollout integration modules."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kruise.rollouts.manager.process import ManagerProcess
from tests.support.cluster import TestCluster
from tests.support.managers import own_replica


@pytest.fixture
async def replica(
    manager: ManagerProcess, cluster: TestCluster, tmp_path: Path
) -> AsyncIterator[ManagerProcess]:
    """The test's own manager, leading in place of the session one (restored afterwards): a test
    may kill it (``kill_and_restart``)."""
    async with own_replica(manager, cluster, tmp_path / "replica") as own:
        yield own
