"""Small readers of workload objects (JSON dicts) shared by the Rollout, BatchRelease and
advanced Deployment code.

- :func:`meta`: ``metadata`` (``{}`` for a missing object or metadata);
- :func:`spec_replicas`: ``spec.replicas`` with the API default 1 when unset;
- :func:`observed_current`: the workload controller has observed the current generation
  (``status.observedGeneration == metadata.generation``; a missing observedGeneration never
  matches), i.e. its status describes the current spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def meta(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (obj or {}).get("metadata") or {}


def spec_replicas(obj: Mapping[str, Any]) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def observed_current(obj: Mapping[str, Any]) -> bool:
    return int(meta(obj).get("generation") or 0) == int(
        (obj.get("status") or {}).get("observedGeneration") or -1
    )
