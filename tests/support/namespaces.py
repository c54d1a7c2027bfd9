"""Namespaces for integration tests."""

from __future__ import annotations

import uuid

from kruise.core.errors import AlreadyExistsError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NAMESPACES


async def create_namespace(kube: KubeClient, base: str) -> str:
    """A new namespace named after ``base`` (a test's name) with a random suffix; returns its name."""
    name = "".join(c for c in base.lower().replace("_", "-") if c.isalnum() or c == "-")[:40].strip("-")
    # parametrized tests share the 40-character prefix, so the suffix alone tells them apart; a
    # name still terminating from an earlier test is not reused
    for _ in range(5):
        candidate = f"{name}-{uuid.uuid4().hex[:8]}"
        try:
            await kube.create(
                NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": candidate}}
            )
            return candidate
        except AlreadyExistsError:
            continue
    raise AssertionError(f"no free namespace name for {name}")
