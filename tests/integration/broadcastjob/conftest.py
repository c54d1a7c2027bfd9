"""Fixtures for the BroadcastJob scenarios: a pool of KWOK nodes of the test's own."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kruise.core.kube import KubeClient
from tests.support.nodes import NodePool


@pytest.fixture
async def nodes(kube: KubeClient) -> AsyncIterator[NodePool]:
    """Nodes the test adds (``nodes.add_nodes(n, labels, taints)``), deleted with their pods after."""
    pool = NodePool(kube)
    try:
        yield pool
    finally:
        await pool.close()
