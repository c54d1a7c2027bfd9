"""What this task's writes stored: the API server's answers, collected while a block runs.

A read after a write can already show another writer's change (a GitOps syncer reverting ours a
millisecond later); the answer to the write cannot. :func:`recorded_writes` collects those
answers; :class:`~kruise.core.kube.client.KubeClient` feeds it through :func:`record_answer`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

from kruise.core.kube.resources import object_key

JSON = dict[str, Any]
_STORES = frozenset({"POST", "PUT", "PATCH"})
_recorded: ContextVar[dict[str, JSON] | None] = ContextVar("kruise_recorded_writes", default=None)


@contextlib.contextmanager
def recorded_writes() -> Iterator[dict[str, JSON]]:
    """Collect the objects the API server answered to this task's writes inside the block.

    Yields a dict filled as answers arrive, keyed by :func:`object_key`: for each object created,
    replaced or patched (not a dry run, not a delete), the last answer, i.e. the object exactly
    as *our* write stored it. A read after the write can already show another writer's change
    (a GitOps syncer reverting ours a millisecond later); the answer cannot. Tasks started inside
    the block share it (context variables are copied into them); blocks nest, each collecting
    its own."""
    seen: dict[str, JSON] = {}
    token = _recorded.set(seen)
    try:
        yield seen
    finally:
        _recorded.reset(token)


def record_answer(method: str, params: Mapping[str, str] | None, answer: JSON) -> None:
    """Note the API server's ``answer`` to a ``method`` request for the enclosing
    :func:`recorded_writes` block, if any (``KubeClient.request`` calls it for every answer; a
    fake client calls it for the objects it "stores")."""
    seen = _recorded.get()
    if seen is None or method not in _STORES or (params and "dryRun" in params):
        return
    meta = answer.get("metadata")
    if isinstance(meta, dict) and meta.get("name") and answer.get("kind"):
        seen[object_key(str(answer["kind"]), meta.get("namespace"), str(meta["name"]))] = answer
