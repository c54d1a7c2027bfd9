"""The manager's webhook rows: every configured webhook path is served and every served path is
configured (but the validating pod webhook's), under the gates that add or remove webhooks; each
kind has one row."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.rollouts.manager.options import ManagerOptions
from kruise.rollouts.manager.webhooks import WEBHOOK_ROWS, webhook_specs
from kruise.workloads.podwebhook import MUTATE_POD_PATH, VALIDATE_POD_PATH


class _Cache:
    def get(self, *args: Any) -> None:
        return None

    def by_index(self, *args: Any) -> list[Any]:
        return []

    def list(self, *args: Any) -> list[Any]:
        return []


@pytest.mark.parametrize(
    "gates",
    [
        pytest.param({}, id="defaults"),
        pytest.param({"PodWebhook": False}, id="no pod webhook"),
        pytest.param({"ImagePullJobGate": True, "ResourcesDeletionProtection": True}, id="more gates on"),
    ],
)
def test_configured_paths_are_exactly_the_served_ones(gates: dict[str, bool]) -> None:
    opts = ManagerOptions(feature_gates=gates)
    configured = {spec.path for spec in webhook_specs(opts)}
    served = {path for row in WEBHOOK_ROWS for path in row.handlers(None, opts, _Cache())}  # type: ignore[arg-type]
    assert configured <= served, "a configured webhook nobody serves"
    # served, not configured: the validating pod webhook waits for its first validator
    assert served - configured <= {VALIDATE_POD_PATH}
    assert (MUTATE_POD_PATH in configured) is gates.get("PodWebhook", True)


def test_one_row_per_kind() -> None:
    names = [row.name for row in WEBHOOK_ROWS]
    assert len(names) == len(set(names))
    assert "broadcastjob" in names
