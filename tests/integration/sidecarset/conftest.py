"""SidecarSet scenarios: the session's manager serves the pod webhook; SidecarSets are
cluster-scoped, so each test's are deleted after it (by their name prefix, see helpers)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import SIDECARSETS
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.sidecarset.helpers import sidecarset_name


@pytest.fixture
async def sidecarsets(kube: KubeClient, namespace: str, manager: ManagerProcess) -> AsyncIterator[str]:
    """The test's namespace, with the manager running; its SidecarSets removed afterwards."""
    yield namespace
    for item in (await kube.list(SIDECARSETS))["items"]:
        if item["metadata"]["name"].startswith(sidecarset_name(namespace)):
            await kube.delete(SIDECARSETS, item["metadata"]["name"], missing_ok=True)
