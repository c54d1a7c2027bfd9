"""Polling helpers: the API server and its controllers are eventually consistent."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import Resource

T = TypeVar("T")


async def eventually(
    probe: Callable[[], Awaitable[T]],
    *,
    timeout: float = 30.0,
    interval: float = 0.2,
    what: str = "condition",
) -> T:
    """Await ``probe()`` until it returns a truthy value; AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    last_err: Exception | None = None
    while time.monotonic() < deadline:
        try:
            last = await probe()
            if last:
                return last
        except AssertionError as err:
            last_err = err
        await asyncio.sleep(interval)
    raise AssertionError(
        f"timed out after {timeout}s waiting for {what}; last value {last!r}; last error {last_err}"
    )


async def wait_observed(
    get: Callable[[], Awaitable[dict[str, Any]]], *, timeout: float = 30.0, what: str = "object", **want: Any
) -> dict[str, Any]:
    """Await ``get()`` until its status observed its generation and has every ``want`` field
    (``status.<field> == value``); returns the object."""

    async def probe() -> dict[str, Any] | None:
        obj = await get()
        status = obj.get("status") or {}
        if obj["metadata"].get("generation") != status.get("observedGeneration"):
            return None
        return obj if all(status.get(k) == v for k, v in want.items()) else None

    return await eventually(probe, timeout=timeout, what=f"{what} status {want}")


async def wait_status(
    kube: KubeClient, resource: Resource, name: str, namespace: str, *, timeout: float = 60, **want: Any
) -> dict[str, Any]:
    """Await the object until its ``status`` has every ``want`` field (``status.<field> ==
    value``, generation not checked); returns the object."""

    async def probe() -> dict[str, Any] | None:
        obj = await kube.get(resource, name, namespace)
        status = obj.get("status") or {}
        return obj if all(status.get(k) == v for k, v in want.items()) else None

    return await eventually(probe, timeout=timeout, what=f"{resource.kind} {name} status {want}")
