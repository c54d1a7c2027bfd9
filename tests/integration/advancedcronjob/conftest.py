"""Fixtures for the AdvancedCronJob scenarios: the BroadcastJob scenarios' KWOK node pool."""

from tests.integration.broadcastjob.conftest import nodes

__all__ = ["nodes"]
