"""Failpoints: named places where a fault test makes the process die on the spot (as etcd's gofail).

``KRUISE_FAILPOINTS="after-transition-event=Progressing"`` makes :func:`hit` end the process with
``os._exit(137)`` (what a SIGKILL leaves: no cleanup, no lease release) the first time the point
``after-transition-event`` is reached with detail ``Progressing``; ``name=*`` matches any detail and
several points are separated by ``,``. Without the variable (production) a point is one dict
lookup. Tests use it to kill the manager between two writes that no signal sent from outside
could fall between.
"""

from __future__ import annotations

import logging
import os

__all__ = ["AFTER_TRANSITION_EVENT", "hit", "parse"]

AFTER_TRANSITION_EVENT = "after-transition-event"
"""Reached right after a transition's Event is posted, before the status write that records it."""

log = logging.getLogger(__name__)


def parse(text: str) -> dict[str, str]:
    """``"a=x,b"`` -> ``{"a": "x", "b": "*"}``."""
    points: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, _, detail = item.partition("=")
        points[name.strip()] = detail.strip() or "*"
    return points


_ACTIVE = parse(os.environ.get("KRUISE_FAILPOINTS", ""))


def hit(name: str, detail: str = "") -> None:
    """Die now (exit code 137) when the failpoint ``name`` is armed for ``detail``."""
    want = _ACTIVE.get(name)
    if want is None or want not in ("*", detail):
        return
    log.warning("failpoint %s (%s): exiting", name, detail)
    for handler in logging.getLogger().handlers:
        handler.flush()
    os._exit(137)
