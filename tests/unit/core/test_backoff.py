"""retry_transient: a setup step waits out an API server outage instead of crashing."""

from __future__ import annotations

import logging

import pytest

from kruise.core.backoff import Backoff, retry_transient
from kruise.core.errors import InvalidError, TransientError

FAST = Backoff(initial=0.001, cap=0.002)


async def test_retries_transient_errors_until_the_step_gets_through(caplog: pytest.LogCaptureFixture) -> None:
    calls = 0

    async def step() -> str:
        nonlocal calls
        calls += 1
        if calls < 4:
            raise TransientError("connection refused")
        return "done"

    with caplog.at_level(logging.WARNING, logger="kruise.core.backoff"):
        assert await retry_transient(step, "webhook configurations", backoff=FAST) == "done"
    assert calls == 4
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 3
    assert all("webhook configurations failed: connection refused" in r.getMessage() for r in warnings)
    assert all(r.exc_info is None for r in warnings)


async def test_other_errors_propagate_at_once() -> None:
    calls = 0

    async def step() -> None:
        nonlocal calls
        calls += 1
        raise InvalidError(422, "Invalid", "spec.x: Invalid value")

    with pytest.raises(InvalidError):
        await retry_transient(step, "x", backoff=FAST)
    assert calls == 1


def test_backoff_doubles_to_the_cap_with_jitter_and_resets() -> None:
    b = Backoff(initial=1.0, cap=4.0)
    delays = [b.next() for _ in range(5)]
    for got, base in zip(delays, [1.0, 2.0, 4.0, 4.0, 4.0], strict=True):
        assert base <= got < base * 1.2
    b.reset()
    assert 1.0 <= b.next() < 1.2
